//! Python: classes, functions and methods at any depth, including those
//! under `if`/`try`/`with` blocks and decorators.

use super::{
    first_paragraph, line_span, node_text, squash, Call, EntityBuilder, Import, Kind, ParsedEntity,
    ParsedFile,
};
use tree_sitter::Node;

pub struct Python;

impl super::Language for Python {
    fn lang(&self) -> super::Lang {
        super::Lang::Python
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".py", ".pyi"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        parse(source)
    }
    /// A stub: its body is `...` or `pass`.
    fn declares_without_body(&self, text: &str) -> bool {
        text.ends_with("...") || text.ends_with("pass")
    }
}

fn parse(src: &str) -> ParsedFile {
    let Some(tree) = super::syntax_tree(tree_sitter_python::LANGUAGE.into(), src) else {
        return ParsedFile::default();
    };
    let root = tree.root_node();
    let mut out = ParsedFile {
        doc: block_docstring(root, src),
        ..ParsedFile::of_tree(root, src)
    };
    let overload_names = overload_aliases(root, src);
    let mut entities = EntityBuilder::new();
    let mut stubs = Stubs::default();
    let mut stack: Vec<(Node, Option<usize>, Option<Decorated>)> = vec![(root, None, None)];
    let mut cursor = root.walk();
    let mut buf: Vec<Node> = Vec::new();
    while let Some((node, owner, decor)) = stack.pop() {
        let mut child_owner = owner;
        let mut skip_field: Option<&str> = None;
        match node.kind() {
            "class_definition" | "function_definition" => {
                let name = node
                    .child_by_field_name("name")
                    .map(|n| node_text(n, src).to_string());
                if let (Some((start, true)), Some(name)) = (decor, &name) {
                    // An @overload stub: it folds into the implementation.
                    stubs.add(owner, name, node, start);
                    continue;
                }
                let decor_start = decor.map(|d| d.0);
                if let Some(idx) = define(node, owner, decor_start, src, &mut entities) {
                    if let Some(sigs) = name.and_then(|n| stubs.take(owner, &n)) {
                        let e = entities.get_mut(idx);
                        e.signature = stubs_then(&sigs, &e.signature, src);
                    }
                    child_owner = Some(idx);
                    skip_field = Some("name");
                }
            }
            "call" => {
                if let Some(call) = call_of(node, src) {
                    match owner {
                        Some(i) => entities.get_mut(i).calls.push(call),
                        None => out.file_calls.push(call),
                    }
                }
            }
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                out.imports.extend(imports_of(node, src));
                continue;
            }
            "decorated_definition" => {
                let start = node.start_position().row as u32 + 1;
                let definition = node.child_by_field_name("definition");
                let children: Vec<Node> = node.children(&mut cursor).collect();
                let overload = children.iter().any(|c| {
                    c.kind() == "decorator" && is_overload(node_text(*c, src), &overload_names)
                });
                for child in children.into_iter().rev() {
                    let decor = (Some(child) == definition).then_some((start, overload));
                    stack.push((child, owner, decor));
                }
                continue;
            }
            _ => {}
        }
        let skip = skip_field.and_then(|f| node.child_by_field_name(f));
        buf.clear();
        // Tokens, strings and comments hold no definitions, calls or imports.
        buf.extend(node.children(&mut cursor).filter(|c| {
            c.child_count() > 0 && !matches!(c.kind(), "string" | "comment") && Some(*c) != skip
        }));
        for &child in buf.iter().rev() {
            stack.push((child, child_owner, None));
        }
    }
    // Stubs with no implementation (`.pyi`-style) stay entities.
    for (owner, node, start) in stubs.unclaimed() {
        define(node, owner, Some(start), src, &mut entities);
    }
    out.entities = entities.finish(src);
    out
}

/// A definition's decorators: where they start, and whether one is
/// `@overload`.
type Decorated = (u32, bool);

/// One `@overload` stub: its node and its decorators' first line.
type Stub<'t> = (Node<'t>, u32);

/// `@overload` stubs waiting for the implementation they describe, by
/// (owning entity, name), in source order.
#[derive(Default)]
struct Stubs<'t> {
    waiting: Vec<(Option<usize>, String, Vec<Stub<'t>>)>,
}

impl<'t> Stubs<'t> {
    fn add(&mut self, owner: Option<usize>, name: &str, node: Node<'t>, start: u32) {
        match self
            .waiting
            .iter_mut()
            .find(|(o, n, _)| *o == owner && n == name)
        {
            Some((_, _, list)) => list.push((node, start)),
            None => self
                .waiting
                .push((owner, name.to_string(), vec![(node, start)])),
        }
    }

    fn take(&mut self, owner: Option<usize>, name: &str) -> Option<Vec<Stub<'t>>> {
        let at = self
            .waiting
            .iter()
            .position(|(o, n, _)| *o == owner && n == name)?;
        Some(self.waiting.remove(at).2)
    }

    fn unclaimed(self) -> impl Iterator<Item = (Option<usize>, Node<'t>, u32)> {
        self.waiting
            .into_iter()
            .flat_map(|(owner, _, list)| list.into_iter().map(move |(n, s)| (owner, n, s)))
    }
}

/// The implementation's signature after its overloads' signatures, one a
/// line, so the entity says every way it may be called.
fn stubs_then(stubs: &[Stub], own: &str, src: &str) -> String {
    const SHOWN: usize = 8;
    let mut lines: Vec<String> = stubs
        .iter()
        .take(SHOWN)
        .map(|(n, _)| {
            let header_end = n
                .child_by_field_name("body")
                .map(|b| b.start_byte())
                .unwrap_or(n.end_byte());
            squash(src.get(n.start_byte()..header_end).unwrap_or(""), 200)
        })
        .collect();
    if stubs.len() > SHOWN {
        lines.push(format!("… {} more overloads", stubs.len() - SHOWN));
    }
    lines.push(own.to_string());
    lines.join("\n")
}

/// Names `@overload` may go by here: `overload` and any alias a
/// `from typing import overload as …` (or typing_extensions) binds.
fn overload_aliases(root: Node, src: &str) -> Vec<String> {
    let mut names = vec!["overload".to_string()];
    let mut cursor = root.walk();
    for child in root.children(&mut cursor) {
        if child.kind() != "import_from_statement" {
            continue;
        }
        for import in imports_of(child, src) {
            if let Import::Python {
                module,
                names: bound,
                ..
            } = import
            {
                if matches!(module.as_slice(), [m] if m == "typing" || m == "typing_extensions") {
                    names.extend(
                        bound
                            .into_iter()
                            .filter(|(n, _)| n == "overload")
                            .map(|(_, alias)| alias),
                    );
                }
            }
        }
    }
    names
}

/// `@overload`, `@typing.overload`, `@t.overload`, or an alias of it.
fn is_overload(decorator: &str, names: &[String]) -> bool {
    let d = decorator.trim_start_matches('@').trim();
    let last = d.rsplit('.').next().unwrap_or(d);
    last == "overload" || names.iter().any(|n| n == d)
}

fn define(
    node: Node,
    owner: Option<usize>,
    decor_start: Option<u32>,
    src: &str,
    entities: &mut EntityBuilder,
) -> Option<usize> {
    let name = node_text(node.child_by_field_name("name")?, src).to_string();
    let is_class = node.kind() == "class_definition";
    let parent = owner.map(|i| entities.get(i));
    let kind = match (is_class, parent.map(|p| p.kind)) {
        (true, _) => Kind::Class,
        (false, Some(Kind::Class)) => Kind::Method,
        (false, _) => Kind::Function,
    };
    let prefix = owner.map(|i| entities.prefix_of(i));
    let qualname = match prefix {
        Some(p) => format!("{p}.{name}"),
        None => name.clone(),
    };
    let owner_type = match (kind, prefix) {
        (Kind::Method, Some(p)) => Some(p.to_string()),
        _ => None,
    };
    let body = node.child_by_field_name("body");
    let header_end = body.map(|b| b.start_byte()).unwrap_or(node.end_byte());
    let signature = squash(src.get(node.start_byte()..header_end).unwrap_or(""), 200);
    let flavor = if is_class {
        "class"
    } else if signature.starts_with("async") {
        "async def"
    } else {
        "def"
    };
    let (mut start_line, end_line) = line_span(node);
    if let Some(d) = decor_start {
        start_line = start_line.min(d);
    }
    let bases = if is_class {
        node.child_by_field_name("superclasses")
            .map(|args| base_paths(args, src))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let doc = body.map(|b| block_docstring(b, src)).unwrap_or_default();
    Some(entities.push(ParsedEntity {
        hash: String::new(),
        byte_range: (node.start_byte(), node.end_byte()),
        qualname,
        name,
        kind,
        flavor: flavor.to_string(),
        start_line,
        end_line,
        signature,
        doc,
        parent: owner,
        calls: Vec::new(),
        bases,
        owner_type,
    }))
}

/// The docstring of a module or block: a string as its first statement.
fn block_docstring(block: Node, src: &str) -> String {
    let mut cursor = block.walk();
    let Some(first) = block
        .named_children(&mut cursor)
        .find(|n| n.kind() != "comment")
    else {
        return String::new();
    };
    if first.kind() != "expression_statement" {
        return String::new();
    }
    let Some(string) = first.named_child(0).filter(|n| n.kind() == "string") else {
        return String::new();
    };
    let mut c = string.walk();
    let content: String = string
        .named_children(&mut c)
        .filter(|n| n.kind() == "string_content")
        .map(|n| node_text(n, src))
        .collect();
    first_paragraph(&content)
}

fn dotted(node: Node, src: &str) -> Vec<String> {
    node_text(node, src)
        .split('.')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn base_paths(args: Node, src: &str) -> Vec<Vec<String>> {
    let mut cursor = args.walk();
    args.named_children(&mut cursor)
        .filter(|n| matches!(n.kind(), "identifier" | "attribute"))
        .map(|n| dotted(n, src))
        .collect()
}

fn call_of(node: Node, src: &str) -> Option<Call> {
    let func = node.child_by_field_name("function")?;
    match func.kind() {
        "identifier" => Some(Call::Name(node_text(func, src).to_string())),
        "attribute" => {
            let name = node_text(func.child_by_field_name("attribute")?, src).to_string();
            let object = func.child_by_field_name("object")?;
            let recv = match object.kind() {
                "identifier" => node_text(object, src).to_string(),
                // super().method()
                "call"
                    if object
                        .child_by_field_name("function")
                        .is_some_and(|f| node_text(f, src) == "super") =>
                {
                    "self".to_string()
                }
                _ => String::new(),
            };
            if recv == "self" || recv == "cls" {
                Some(Call::SelfMethod(name))
            } else {
                Some(Call::Attr { recv, name })
            }
        }
        _ => None,
    }
}

fn imports_of(node: Node, src: &str) -> Vec<Import> {
    let mut out = Vec::new();
    let mut cursor = node.walk();
    match node.kind() {
        "import_statement" => {
            for child in node.children_by_field_name("name", &mut cursor) {
                let (path, alias) = match child.kind() {
                    "aliased_import" => (
                        child.child_by_field_name("name").map(|n| dotted(n, src)),
                        child
                            .child_by_field_name("alias")
                            .map(|n| node_text(n, src).to_string()),
                    ),
                    _ => (Some(dotted(child, src)), None),
                };
                if let Some(module) = path.filter(|p| !p.is_empty()) {
                    out.push(Import::Python {
                        level: 0,
                        module,
                        names: Vec::new(),
                        alias,
                    });
                }
            }
        }
        "import_from_statement" => {
            let Some(module_node) = node.child_by_field_name("module_name") else {
                return out;
            };
            let (level, module) = if module_node.kind() == "relative_import" {
                let text = node_text(module_node, src);
                let level = text.chars().take_while(|c| *c == '.').count();
                let rest = &text[level..];
                let module = rest
                    .split('.')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                (level, module)
            } else {
                (0, dotted(module_node, src))
            };
            let mut names = Vec::new();
            for child in node.children_by_field_name("name", &mut cursor) {
                match child.kind() {
                    "aliased_import" => {
                        let name = child.child_by_field_name("name").map(|n| node_text(n, src));
                        let alias = child
                            .child_by_field_name("alias")
                            .map(|n| node_text(n, src));
                        if let (Some(n), Some(a)) = (name, alias) {
                            names.push((n.to_string(), a.to_string()));
                        }
                    }
                    _ => {
                        let n = node_text(child, src).to_string();
                        names.push((n.clone(), n));
                    }
                }
            }
            out.push(Import::Python {
                level,
                module,
                names,
                alias: None,
            });
        }
        _ => {}
    }
    out
}
