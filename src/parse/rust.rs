//! Rust: structs, enums, unions, traits, free functions, and methods named
//! after their impl's self type, inside inline modules at any depth.

use super::{
    first_paragraph, line_span, node_text, squash, Call, EntityBuilder, Import, Kind, ParsedEntity,
    ParsedFile, TraitImpl,
};
use tree_sitter::Node;

/// The naming context a node sits in.
#[derive(Clone, Default)]
struct Scope {
    /// Qualified-name prefix, already joined with `::`.
    prefix: String,
    /// Inline modules enclosing the node.
    mod_path: Vec<String>,
    /// Set directly inside an `impl` or `trait` body.
    impl_type: Option<String>,
}

impl Scope {
    fn qualify(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}::{}", self.prefix, name)
        }
    }
}

pub struct Rust;

impl super::Language for Rust {
    fn lang(&self) -> super::Lang {
        super::Lang::Rust
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".rs"]
    }
    fn separator(&self) -> &'static str {
        "::"
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        parse(source)
    }
}

fn parse(src: &str) -> ParsedFile {
    let Some(tree) = super::syntax_tree(tree_sitter_rust::LANGUAGE.into(), src) else {
        return ParsedFile::default();
    };
    let root = tree.root_node();
    let mut out = ParsedFile {
        doc: inner_doc(root, src),
        ..ParsedFile::of_tree(root, src)
    };
    let mut entities = EntityBuilder::new();
    walk(
        root,
        None,
        Scope::default(),
        src,
        &mut entities,
        &mut out,
        0,
    );
    out.entities = entities.finish(src);
    out
}

/// The flavor of a `#[macro_export]`ed `macro_rules!`, visible crate-wide.
pub const MACRO_EXPORT: &str = "macro_export";

/// The flavor of a required trait method: a declaration with no body,
/// which the types implementing the trait define.
pub const REQUIRED: &str = "required";

/// Macros inside macros are read this deep; deeper token trees stay tokens.
const MACRO_DEPTH: usize = 4;

/// A macro invocation in item position whose tokens may be items
/// (`cfg_rt! { pub fn spawn_blocking… }`), and where it sits.
struct ItemMacro<'t> {
    node: Node<'t>,
    owner: Option<usize>,
    scope: Scope,
}

/// Visit `root`'s subtree, defining entities and collecting calls and
/// imports; then read each item-position macro's tokens as items.
fn walk(
    root: Node,
    owner: Option<usize>,
    scope: Scope,
    src: &str,
    entities: &mut EntityBuilder,
    out: &mut ParsedFile,
    depth: usize,
) {
    let mut scopes: Vec<Scope> = vec![scope];
    // (node, owning entity, scope index)
    let mut stack: Vec<(Node, Option<usize>, usize)> = vec![(root, owner, 0)];
    let mut item_macros: Vec<ItemMacro> = Vec::new();
    let mut cursor = root.walk();
    let mut buf: Vec<Node> = Vec::new();
    while let Some((node, owner, scope_ix)) = stack.pop() {
        let mut child_owner = owner;
        let mut child_scope = scope_ix;
        let mut only_field: Option<&str> = None;
        match node.kind() {
            "function_item" | "struct_item" | "enum_item" | "union_item" | "trait_item"
            | "macro_definition" => {
                let scope = &scopes[scope_ix];
                if let Some(idx) = define(node, owner, scope, src, entities) {
                    if node.kind() == "macro_definition" {
                        continue; // its rules are templates, not items
                    }
                    child_owner = Some(idx);
                    let e = entities.get(idx);
                    let next = Scope {
                        prefix: entities.prefix_of(idx).to_string(),
                        mod_path: scope.mod_path.clone(),
                        impl_type: (node.kind() == "trait_item").then(|| e.name.clone()),
                    };
                    scopes.push(next);
                    child_scope = scopes.len() - 1;
                }
            }
            // A required trait method: no body, but often the best doc.
            "function_signature_item" if scopes[scope_ix].impl_type.is_some() => {
                define(node, owner, &scopes[scope_ix], src, entities);
                continue;
            }
            // Modules nested too deep share their ancestor's scope: each
            // scope holds its whole module path.
            "mod_item" if scopes[scope_ix].mod_path.len() >= crate::parse::MAX_NESTING => {
                only_field = Some("body");
            }
            "mod_item" | "impl_item" => {
                let Some(next) = enter_body(node, &scopes[scope_ix], src, out) else {
                    continue;
                };
                scopes.push(next);
                child_scope = scopes.len() - 1;
                only_field = Some("body");
            }
            "call_expression" => {
                if let Some(call) = call_of(node, src) {
                    push_call(entities, &mut out.file_calls, owner, call);
                }
            }
            "macro_invocation" => {
                if let Some(name) = macro_name(node, src) {
                    push_call(entities, &mut out.file_calls, owner, Call::Macro(name));
                }
                if depth < MACRO_DEPTH && in_item_position(node) {
                    item_macros.push(ItemMacro {
                        node,
                        owner,
                        scope: scopes[scope_ix].clone(),
                    });
                } else {
                    for call in macro_calls(node, src) {
                        push_call(entities, &mut out.file_calls, owner, call);
                    }
                }
                continue;
            }
            "use_declaration" => {
                if let Some(arg) = node.child_by_field_name("argument") {
                    flatten_use(arg, &scopes[scope_ix].mod_path, src, &mut out.imports);
                }
                continue;
            }
            "line_comment" | "block_comment" | "attribute_item" | "inner_attribute_item" => {
                continue
            }
            _ => {}
        }
        buf.clear();
        match only_field {
            Some(f) => buf.extend(node.child_by_field_name(f)),
            // Tokens, literals and comments hold no items, calls or uses.
            None => buf.extend(node.children(&mut cursor).filter(|c| {
                c.child_count() > 0
                    && !matches!(
                        c.kind(),
                        "string_literal" | "raw_string_literal" | "line_comment" | "block_comment"
                    )
            })),
        }
        for &child in buf.iter().rev() {
            stack.push((child, child_owner, child_scope));
        }
    }
    for m in item_macros {
        let groups = item_groups(m.node, src);
        if groups.is_empty() {
            for call in macro_calls(m.node, src) {
                push_call(entities, &mut out.file_calls, m.owner, call);
            }
        }
        for tree in groups {
            walk(
                tree.root_node(),
                m.owner,
                m.scope.clone(),
                src,
                entities,
                out,
                depth + 1,
            );
        }
    }
}

/// The macro's tokens as item trees: the whole token tree when it parses
/// as items, else each `{ … }` group directly inside it that does
/// (`cfg_metrics_variant! { stable: { items }, unstable: { items } }`).
fn item_groups(node: Node, src: &str) -> Vec<tree_sitter::Tree> {
    let mut cursor = node.walk();
    let Some(tokens) = node
        .children(&mut cursor)
        .find(|c| c.kind() == "token_tree")
    else {
        return Vec::new();
    };
    if let Some(tree) = items_in(tokens, src) {
        return vec![tree];
    }
    let mut c = tokens.walk();
    let groups: Vec<Node> = tokens
        .children(&mut c)
        .filter(|g| g.kind() == "token_tree" && node_text(*g, src).starts_with('{'))
        .collect();
    groups
        .into_iter()
        .filter_map(|g| items_in(g, src))
        .collect()
}

/// The scope inside an inline module or an impl, recording the `mod x;`
/// declarations and trait impls met on the way; `None` when there is no
/// body to enter.
fn enter_body(node: Node, scope: &Scope, src: &str, out: &mut ParsedFile) -> Option<Scope> {
    if node.kind() == "mod_item" {
        let name = node_text(node.child_by_field_name("name")?, src);
        if node.child_by_field_name("body").is_none() {
            out.imports.push(Import::RustMod {
                name: name.to_string(),
                mod_scope: scope.mod_path.clone(),
            });
            return None;
        }
        let mut mod_path = scope.mod_path.clone();
        mod_path.push(name.to_string());
        return Some(Scope {
            prefix: scope.qualify(name),
            mod_path,
            impl_type: None,
        });
    }
    let self_type = type_name(node.child_by_field_name("type")?, src);
    if let Some(tr) = node.child_by_field_name("trait") {
        out.impls.push(TraitImpl {
            self_type: self_type.clone(),
            trait_path: type_path(tr, src),
        });
    }
    Some(Scope {
        prefix: scope.qualify(&self_type),
        mod_path: scope.mod_path.clone(),
        impl_type: Some(self_type),
    })
}

/// Directly in a file, module, impl or trait body: where items go.
fn in_item_position(node: Node) -> bool {
    node.parent()
        .is_some_and(|p| matches!(p.kind(), "source_file" | "declaration_list"))
}

/// The invoked macro's last path segment: `select` for `tokio::select!`.
fn macro_name(node: Node, src: &str) -> Option<String> {
    let m = node.child_by_field_name("macro")?;
    let text = node_text(m, src);
    let name = text.rsplit("::").next().unwrap_or(text).trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// A token tree's inside parsed as Rust items, in place (positions are the
/// file's own), when it parses cleanly; `None` for a DSL or an expression.
fn items_in(tokens: Node, src: &str) -> Option<tree_sitter::Tree> {
    let (start, end) = (tokens.start_byte() + 1, tokens.end_byte().checked_sub(1)?);
    if end <= start {
        return None;
    }
    let mut open = tokens.start_position();
    open.column += 1;
    let mut close = tokens.end_position();
    close.column = close.column.checked_sub(1)?;
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_rust::LANGUAGE.into())
        .ok()?;
    parser
        .set_included_ranges(&[tree_sitter::Range {
            start_byte: start,
            end_byte: end,
            start_point: open,
            end_point: close,
        }])
        .ok()?;
    let tree = parser.parse(src, None)?;
    let clean = {
        let root = tree.root_node();
        let mut c = root.walk();
        let has_item = root
            .named_children(&mut c)
            .any(|n| n.kind().ends_with("_item"));
        !root.has_error() && has_item
    };
    clean.then_some(tree)
}

fn push_call(
    entities: &mut EntityBuilder,
    file_calls: &mut Vec<Call>,
    owner: Option<usize>,
    call: Call,
) {
    match owner {
        Some(i) => entities.get_mut(i).calls.push(call),
        None => file_calls.push(call),
    }
}

fn define(
    node: Node,
    owner: Option<usize>,
    scope: &Scope,
    src: &str,
    entities: &mut EntityBuilder,
) -> Option<usize> {
    let name = node_text(node.child_by_field_name("name")?, src).to_string();
    if entities.too_deep(owner) {
        return owner; // what it holds belongs to the ancestor
    }
    let (kind, flavor) = match node.kind() {
        "function_signature_item" => (Kind::Method, REQUIRED),
        "function_item" if scope.impl_type.is_some() => (Kind::Method, "fn"),
        "function_item" => (Kind::Function, "fn"),
        "macro_definition" if has_attribute(node, src, "macro_export") => {
            (Kind::Macro, MACRO_EXPORT)
        }
        "macro_definition" => (Kind::Macro, "macro_rules"),
        "struct_item" => (Kind::Class, "struct"),
        "enum_item" => (Kind::Class, "enum"),
        "union_item" => (Kind::Class, "union"),
        _ => (Kind::Class, "trait"),
    };
    let body = node.child_by_field_name("body");
    let header_end = match body {
        Some(b) if node.kind() != "struct_item" || b.kind() == "field_declaration_list" => {
            b.start_byte()
        }
        _ => node.end_byte(),
    };
    let signature = squash(src.get(node.start_byte()..header_end).unwrap_or(""), 200);
    let (mut start_line, end_line) = line_span(node);
    // Attributes (`#[test]`, `#[cfg(..)]`) belong to the item they annotate.
    let mut prev = node.prev_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => start_line = start_line.min(p.start_position().row as u32 + 1),
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        prev = p.prev_sibling();
    }
    let bases = if node.kind() == "trait_item" {
        node.child_by_field_name("bounds")
            .map(|b| {
                let mut c = b.walk();
                b.named_children(&mut c)
                    .filter(|n| n.kind() != "lifetime")
                    .map(|n| type_path(n, src))
                    .filter(|p| !p.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    Some(entities.push(ParsedEntity {
        hash: String::new(),
        byte_range: (node.start_byte(), node.end_byte()),
        qualname: scope.qualify(&name),
        kind,
        flavor: flavor.to_string(),
        start_line,
        end_line,
        signature,
        doc: outer_doc(node, src),
        parent: owner,
        calls: Vec::new(),
        bases,
        owner_type: if kind == Kind::Method {
            scope.impl_type.clone()
        } else {
            None
        },
        name,
    }))
}

/// Whether an attribute directly above the item names `name`
/// (`#[macro_export]`, `#[macro_export(local_inner_macros)]`).
fn has_attribute(node: Node, src: &str, name: &str) -> bool {
    let mut prev = node.prev_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => {
                let text = node_text(p, src);
                let inner = text.trim_start_matches("#[").trim_start();
                if inner.starts_with(name) {
                    return true;
                }
            }
            "line_comment" | "block_comment" => {}
            _ => return false,
        }
        prev = p.prev_sibling();
    }
    false
}

/// `///` and `/** */` comments directly above an item (attributes may sit between).
fn outer_doc(node: Node, src: &str) -> String {
    let mut lines = Vec::new();
    let mut prev = node.prev_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => {}
            "line_comment" => {
                let t = node_text(p, src);
                match t.strip_prefix("///") {
                    Some(rest) if !rest.starts_with('/') => lines.push(rest.trim().to_string()),
                    _ => break,
                }
            }
            "block_comment" => {
                let t = node_text(p, src);
                match t.strip_prefix("/**") {
                    Some(rest) => lines.push(rest.trim_end_matches("*/").trim().to_string()),
                    None => break,
                }
            }
            _ => break,
        }
        prev = p.prev_sibling();
    }
    lines.reverse();
    first_paragraph(&lines.join("\n"))
}

/// `//!` comments at the top of a file.
fn inner_doc(root: Node, src: &str) -> String {
    let mut lines = Vec::new();
    let mut cursor = root.walk();
    for child in root.children(&mut cursor) {
        if child.kind() != "line_comment" {
            break;
        }
        match node_text(child, src).strip_prefix("//!") {
            Some(rest) => lines.push(rest.trim().to_string()),
            None => break,
        }
    }
    first_paragraph(&lines.join("\n"))
}

/// The bare name of an impl's self type: `Foo` for `Foo<T>`, `&'a Foo`, `a::Foo`.
fn type_name(node: Node, src: &str) -> String {
    let mut node = node;
    loop {
        let next = match node.kind() {
            "generic_type" | "reference_type" | "pointer_type" => node.child_by_field_name("type"),
            "scoped_type_identifier" => node.child_by_field_name("name"),
            _ => None,
        };
        match next {
            Some(n) => node = n,
            None => return squash(node_text(node, src), 80),
        }
    }
}

/// Path segments of a type or trait, generics dropped.
fn type_path(node: Node, src: &str) -> Vec<String> {
    let node = match node.kind() {
        "generic_type" => node.child_by_field_name("type").unwrap_or(node),
        _ => node,
    };
    strip_generics(node_text(node, src))
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn strip_generics(text: &str) -> String {
    let mut depth = 0usize;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 && !c.is_whitespace() => out.push(c),
            _ => {}
        }
    }
    out
}

fn call_of(node: Node, src: &str) -> Option<Call> {
    let mut func = node.child_by_field_name("function")?;
    if func.kind() == "generic_function" {
        func = func.child_by_field_name("function")?;
    }
    match func.kind() {
        "identifier" => Some(Call::Name(node_text(func, src).to_string())),
        "scoped_identifier" => {
            let segs: Vec<String> = strip_generics(node_text(func, src))
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            match segs.as_slice() {
                [first, name] if first == "Self" => Some(Call::SelfMethod(name.clone())),
                [] => None,
                _ => Some(Call::Path(segs)),
            }
        }
        "field_expression" => {
            let name = node_text(func.child_by_field_name("field")?, src).to_string();
            let value = func.child_by_field_name("value")?;
            match value.kind() {
                "self" => Some(Call::SelfMethod(name)),
                "identifier" => Some(Call::Attr {
                    recv: node_text(value, src).to_string(),
                    name,
                }),
                _ => Some(Call::Attr {
                    recv: String::new(),
                    name,
                }),
            }
        }
        _ => None,
    }
}

/// Macro arguments are unparsed token trees; recover `name(…)`,
/// `self.name(…)` and `x.name(…)` call shapes from them.
fn macro_calls(node: Node, src: &str) -> Vec<Call> {
    let mut calls = Vec::new();
    let mut stack: Vec<Node> = Vec::new();
    let mut cursor = node.walk();
    stack.extend(
        node.children(&mut cursor)
            .filter(|c| c.kind() == "token_tree"),
    );
    while let Some(tt) = stack.pop() {
        let children: Vec<Node> = tt.children(&mut cursor).collect();
        for (i, child) in children.iter().enumerate() {
            if child.kind() == "token_tree" {
                stack.push(*child);
                continue;
            }
            if child.kind() != "identifier" {
                continue;
            }
            let opens_call = children
                .get(i + 1)
                .is_some_and(|n| n.kind() == "token_tree" && node_text(*n, src).starts_with('('));
            if !opens_call {
                continue;
            }
            let name = node_text(*child, src).to_string();
            let after_dot = i >= 1 && node_text(children[i - 1], src) == ".";
            if !after_dot {
                calls.push(Call::Name(name));
            } else if i >= 2 && node_text(children[i - 2], src) == "self" {
                calls.push(Call::SelfMethod(name));
            } else {
                calls.push(Call::Attr {
                    recv: String::new(),
                    name,
                });
            }
        }
    }
    calls
}

fn flatten_use(arg: Node, mod_scope: &[String], src: &str, out: &mut Vec<Import>) {
    let split = |n: Node| -> Vec<String> {
        strip_generics(node_text(n, src))
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut stack: Vec<(Node, Vec<String>)> = vec![(arg, Vec::new())];
    let mut cursor = arg.walk();
    while let Some((node, prefix)) = stack.pop() {
        let mut emit = |path: Vec<String>, bound_as: Option<String>, glob: bool| {
            let bound_as = bound_as
                .or_else(|| path.last().cloned())
                .unwrap_or_default();
            if !path.is_empty() {
                out.push(Import::RustUse {
                    path,
                    bound_as,
                    glob,
                    mod_scope: mod_scope.to_vec(),
                });
            }
        };
        match node.kind() {
            "scoped_identifier" | "identifier" | "crate" | "super" | "metavariable" => {
                let mut path = prefix.clone();
                path.extend(split(node));
                emit(path, None, false);
            }
            "self" => {
                // `use a::{self}` binds `a`.
                emit(prefix.clone(), None, false);
            }
            "use_as_clause" => {
                let mut path = prefix.clone();
                if let Some(p) = node.child_by_field_name("path") {
                    path.extend(split(p));
                }
                let alias = node
                    .child_by_field_name("alias")
                    .map(|a| node_text(a, src).to_string());
                emit(path, alias, false);
            }
            "use_wildcard" => {
                let mut path = prefix.clone();
                if let Some(p) = node.named_child(0) {
                    path.extend(split(p));
                }
                emit(path, Some("*".into()), true);
            }
            "scoped_use_list" => {
                let mut path = prefix.clone();
                if let Some(p) = node.child_by_field_name("path") {
                    path.extend(split(p));
                }
                if let Some(list) = node.child_by_field_name("list") {
                    stack.push((list, path));
                }
            }
            "use_list" => {
                for child in node.named_children(&mut cursor) {
                    stack.push((child, prefix.clone()));
                }
            }
            _ => {}
        }
    }
}
