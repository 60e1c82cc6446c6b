//! JavaScript and TypeScript. Functions are named the way code names them:
//! declarations, `const f = () => …`, class members (`A.m`), object-literal
//! members (`obj.a.m`), and assignments (`Foo.prototype.bar = function` is
//! `Foo.bar`, `exports.foo = …` is `foo`). Anonymous functions are
//! transparent; a function nested in a named one belongs to it.

use super::{line_span, node_text, squash, Call, EntityBuilder, Import, Kind, ParsedEntity};
use super::{Lang, Language, ParsedFile};
use tree_sitter::Node;

pub struct JavaScript;
pub struct TypeScript;

impl Language for JavaScript {
    fn lang(&self) -> Lang {
        Lang::JavaScript
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".js", ".jsx", ".mjs", ".cjs"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        parse(tree_sitter_javascript::LANGUAGE.into(), source)
    }
}

impl Language for TypeScript {
    fn lang(&self) -> Lang {
        Lang::TypeScript
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".ts", ".tsx", ".mts", ".cts"]
    }
    fn parse(&self, path: &str, source: &str) -> ParsedFile {
        let grammar = if path.ends_with(".tsx") {
            tree_sitter_typescript::LANGUAGE_TSX
        } else {
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT
        };
        parse(grammar.into(), source)
    }
}

/// Where a node sits.
#[derive(Clone, Copy)]
struct Ctx {
    /// The named function the node is inside: its calls go there, and it
    /// defines nothing of its own.
    owner: Option<usize>,
    /// The class whose body this is.
    class: Option<usize>,
    /// For an object literal whose members are definitions: the index of
    /// their qualname prefix in `Walker::prefixes`.
    members_of: Option<usize>,
}

const TOP: Ctx = Ctx {
    owner: None,
    class: None,
    members_of: None,
};

/// What a definition's value is.
enum Value<'t> {
    Function(Node<'t>),
    Class(Node<'t>),
    Object(Node<'t>),
}

/// Whether a function's body, at its top, defines something: a function
/// or class declaration, or a function, class or object assigned or bound.
fn defines_members(func: Node) -> bool {
    let Some(body) = func.child_by_field_name("body") else {
        return false;
    };
    let mut c = body.walk();
    let statements: Vec<Node> = body.named_children(&mut c).collect();
    statements.iter().any(|st| {
        let mut c = st.walk();
        match st.kind() {
            "function_declaration" | "class_declaration" => true,
            "expression_statement" => st.named_children(&mut c).any(|e| {
                e.kind() == "assignment_expression"
                    && e.child_by_field_name("right").and_then(value_of).is_some()
            }),
            "lexical_declaration" | "variable_declaration" => st.named_children(&mut c).any(|d| {
                d.child_by_field_name("value")
                    .and_then(value_of)
                    .is_some_and(|v| !matches!(v, Value::Object(_)))
            }),
            _ => false,
        }
    })
}

/// The name an anonymous default export (or `module.exports`) gets.
const DEFAULT_EXPORT: &str = "default";

/// What a module exports by default: a value, or the function or class
/// behind a guard (`ok && function () {…}`, `a || class {…}`).
fn exported(node: Node) -> Option<Value> {
    if let Some(v) = value_of(node) {
        return Some(v);
    }
    if node.kind() != "binary_expression" {
        return None;
    }
    ["right", "left"]
        .iter()
        .filter_map(|f| node.child_by_field_name(f))
        .find_map(|n| match value_of(n) {
            Some(Value::Object(_)) | None => None,
            v => v,
        })
}

fn value_of(node: Node) -> Option<Value> {
    let mut node = node;
    while node.kind() == "parenthesized_expression" {
        node = node.named_child(0)?;
    }
    match node.kind() {
        "function_expression" | "function" | "arrow_function" | "generator_function" => {
            Some(Value::Function(node))
        }
        "class" => Some(Value::Class(node)),
        "object" => Some(Value::Object(node)),
        _ => None,
    }
}

struct Walker<'s, 't> {
    src: &'s str,
    entities: EntityBuilder,
    out: ParsedFile,
    stack: Vec<(Node<'t>, Ctx)>,
    prefixes: Vec<String>,
}

fn parse(language: tree_sitter::Language, src: &str) -> ParsedFile {
    let Some(tree) = super::syntax_tree(language, src) else {
        return ParsedFile::default();
    };
    let root = tree.root_node();
    let mut w = Walker {
        src,
        entities: EntityBuilder::new(),
        out: ParsedFile::of_tree(root, src),
        stack: vec![(root, TOP)],
        prefixes: Vec::new(),
    };
    while let Some((node, ctx)) = w.stack.pop() {
        w.visit(node, ctx);
    }
    let mut out = w.out;
    out.entities = w.entities.finish(src);
    out
}

impl<'s, 't> Walker<'s, 't> {
    fn text(&self, n: Node) -> &'s str {
        node_text(n, self.src)
    }

    fn children(&mut self, node: Node<'t>, ctx: Ctx) {
        let ctx = Ctx {
            members_of: None,
            ..ctx
        };
        let mut c = node.walk();
        let before = self.stack.len();
        self.stack.extend(
            node.named_children(&mut c)
                .filter(|n| !matches!(n.kind(), "comment" | "string" | "template_string"))
                .map(|n| (n, ctx)),
        );
        self.stack[before..].reverse();
    }

    fn visit(&mut self, node: Node<'t>, ctx: Ctx) {
        match node.kind() {
            "call_expression" => self.call(node, ctx),
            "new_expression" => {
                let ty = node
                    .child_by_field_name("constructor")
                    .and_then(|c| dotted(c, self.src));
                if let Some(ty) = ty {
                    self.push_call(
                        ctx,
                        Call::Typed {
                            ty,
                            name: "constructor".into(),
                        },
                    );
                }
            }
            "import_statement" => {
                self.import(node);
                return;
            }
            "export_statement" if node.child_by_field_name("source").is_some() => {
                self.reexport(node);
                return;
            }
            _ => {}
        }
        if ctx.owner.is_some() {
            // Inside a named function: calls only.
            return self.children(node, ctx);
        }
        if let Some(p) = ctx.members_of.filter(|_| node.kind() == "object") {
            let prefix = self.prefixes[p].clone();
            return self.object(node, &prefix, ctx);
        }
        match node.kind() {
            "function_declaration" | "generator_function_declaration" => {
                let name = node.child_by_field_name("name").map(|n| self.text(n));
                self.function(node, node, name.map(str::to_string), ctx);
            }
            "class_declaration" | "abstract_class_declaration" => {
                let name = node.child_by_field_name("name").map(|n| self.text(n));
                self.class(node, node, name.map(str::to_string), ctx);
            }
            "interface_declaration" | "type_alias_declaration" | "enum_declaration" => {
                if let Some(n) = node.child_by_field_name("name") {
                    let name = self.text(n).to_string();
                    let bases = heritage(node, self.src);
                    self.define(node, &name, Kind::Class, ctx.class, None, bases);
                }
            }
            "method_definition" | "field_definition" | "public_field_definition"
                if ctx.class.is_some() =>
            {
                self.member(node, ctx);
            }
            "variable_declarator" => self.declarator(node, ctx),
            "assignment_expression" => self.assignment(node, ctx),
            "export_statement" => match node.child_by_field_name("value").and_then(exported) {
                // `export default {…}`: its members are the module's.
                Some(Value::Object(o)) => self.members(o, String::new(), ctx),
                // `export default function (config) {…}`, anonymous, perhaps
                // behind a guard (`supported && function () {…}`): the
                // module's `default`, where a fix to it lands.
                Some(Value::Function(f)) => {
                    let own = f.child_by_field_name("name").map(|n| self.text(n));
                    let name = own.unwrap_or(DEFAULT_EXPORT).to_string();
                    self.function(node, f, Some(name), ctx)
                }
                Some(Value::Class(c)) => {
                    let own = c.child_by_field_name("name").map(|n| self.text(n));
                    let name = own.unwrap_or(DEFAULT_EXPORT).to_string();
                    self.class(node, c, Some(name), ctx)
                }
                None => self.children(node, ctx),
            },
            "function_expression" | "generator_function" => {
                // A named function expression nothing else names.
                let name = node.child_by_field_name("name").map(|n| self.text(n));
                match name {
                    Some(n) => self.function(node, node, Some(n.to_string()), ctx),
                    None => self.children(node, ctx),
                }
            }
            // Bodiless signatures and ambient declarations define nothing.
            "function_signature"
            | "method_signature"
            | "abstract_method_signature"
            | "ambient_declaration" => {}
            _ => self.children(node, ctx),
        }
    }

    fn push_call(&mut self, ctx: Ctx, call: Call) {
        match ctx.owner.or(ctx.class) {
            Some(i) => self.entities.get_mut(i).calls.push(call),
            None => self.out.file_calls.push(call),
        }
    }

    fn call(&mut self, node: Node<'t>, ctx: Ctx) {
        let Some(func) = node.child_by_field_name("function") else {
            return;
        };
        if let Some(source) = required(node, self.src) {
            self.out.imports.push(Import::Js {
                source,
                names: Vec::new(),
                namespace: None,
            });
            return;
        }
        let call = match func.kind() {
            "identifier" => Call::Name(self.text(func).to_string()),
            "member_expression" => {
                let Some(prop) = func.child_by_field_name("property") else {
                    return;
                };
                let name = self.text(prop).to_string();
                let object = func.child_by_field_name("object");
                match object.map(|o| (o.kind(), self.text(o))) {
                    Some(("this", _)) => Call::SelfMethod(name),
                    Some(("identifier", recv)) => Call::Attr {
                        recv: recv.to_string(),
                        name,
                    },
                    _ => Call::Attr {
                        recv: String::new(),
                        name,
                    },
                }
            }
            _ => return,
        };
        self.push_call(ctx, call);
    }

    /// Define a function-valued entity and read its body as its own.
    fn function(&mut self, span: Node<'t>, func: Node<'t>, name: Option<String>, ctx: Ctx) {
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return self.children(func, ctx);
        };
        let (kind, owner_type) = match (ctx.class, name.rsplit_once('.')) {
            (Some(c), _) => (Kind::Method, Some(self.entities.prefix_of(c).to_string())),
            (None, Some((owner, _))) => (Kind::Method, Some(owner.to_string())),
            (None, None) => (Kind::Function, None),
        };
        // An anonymous export whose body defines the module's members (a
        // dayjs plugin: `proto.utc = function …`) is only their wrapper:
        // they are the entities, as if written at the top.
        if name == DEFAULT_EXPORT && ctx.class.is_none() && defines_members(func) {
            return self.children(func, ctx);
        }
        let idx = self.define_at(span, func, &name, kind, ctx.class, owner_type, Vec::new());
        let inner = Ctx {
            owner: Some(idx),
            ..TOP
        };
        self.children(func, inner);
    }

    fn class(&mut self, span: Node<'t>, class: Node<'t>, name: Option<String>, ctx: Ctx) {
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return self.children(class, ctx);
        };
        let bases = heritage(class, self.src);
        let idx = self.define_at(span, class, &name, Kind::Class, ctx.class, None, bases);
        if let Some(body) = class.child_by_field_name("body") {
            self.children(
                body,
                Ctx {
                    class: Some(idx),
                    ..TOP
                },
            );
        }
    }

    /// A class member: a method, or a field holding a function.
    fn member(&mut self, node: Node<'t>, ctx: Ctx) {
        let Some(class) = ctx.class else { return };
        let key = node
            .child_by_field_name("name")
            .or_else(|| node.child_by_field_name("property"))
            .and_then(|k| key_name(k, self.src));
        let owner = self.entities.prefix_of(class).to_string();
        let Some(key) = key else { return };
        let name = format!("{owner}.{key}");
        if node.kind() == "method_definition" {
            return self.function(node, node, Some(name), ctx);
        }
        let value = node.child_by_field_name("value");
        match value.and_then(value_of) {
            Some(Value::Function(f)) => self.function(node, f, Some(name), ctx),
            // A field's initialiser is the class's own code.
            _ if value.is_some() => self.children(node, ctx),
            _ => {}
        }
    }

    fn declarator(&mut self, node: Node<'t>, ctx: Ctx) {
        let (Some(name), Some(value)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("value"),
        ) else {
            return self.children(node, ctx);
        };
        if let Some(source) = required(value, self.src) {
            self.out
                .imports
                .push(require_binding(name, source, self.src));
            return;
        }
        if name.kind() != "identifier" {
            return self.children(node, ctx);
        }
        let n = self.text(name).to_string();
        let span = statement_of(node);
        self.define_value(span, value, n, ctx);
    }

    fn assignment(&mut self, node: Node<'t>, ctx: Ctx) {
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return self.children(node, ctx);
        };
        let Some(path) = dotted(left, self.src) else {
            return self.children(node, ctx);
        };
        if path[0] == "this" {
            return self.children(right, ctx);
        }
        let span = statement_of(node);
        match assigned_name(&path) {
            Some(name) => self.define_value(span, right, name, ctx),
            // `module.exports = {…}`: the members are the module's.
            None => match value_of(right) {
                Some(Value::Object(o)) => self.members(o, String::new(), ctx),
                // `module.exports = function …`: named as written. An
                // anonymous one stays unnamed: it is most often a tool's
                // config (`karma.conf.js`), which names none of the code.
                Some(Value::Function(f)) => {
                    let own = f
                        .child_by_field_name("name")
                        .map(|n| self.text(n).to_string());
                    self.function(span, f, own, ctx)
                }
                Some(Value::Class(c)) => {
                    let own = c
                        .child_by_field_name("name")
                        .map(|n| self.text(n).to_string());
                    self.class(span, c, own, ctx)
                }
                None => self.children(right, ctx),
            },
        }
    }

    /// `name = <value>`: a function, a class, an object of members, or code.
    fn define_value(&mut self, span: Node<'t>, value: Node<'t>, name: String, ctx: Ctx) {
        match value_of(value) {
            Some(Value::Function(f)) => self.function(span, f, Some(name), ctx),
            Some(Value::Class(c)) => self.class(span, c, Some(name), ctx),
            // Members of an object nested too deep are its ancestor's
            // code: each level's prefix holds every level above it.
            Some(Value::Object(o)) if name.matches('.').count() < crate::parse::MAX_NESTING => {
                self.members(o, name, ctx)
            }
            Some(Value::Object(_)) | None => self.children(value, ctx),
        }
    }

    /// Queue an object literal whose members are named `prefix.key`.
    fn members(&mut self, obj: Node<'t>, prefix: String, ctx: Ctx) {
        self.prefixes.push(prefix);
        let members_of = Some(self.prefixes.len() - 1);
        self.stack.push((obj, Ctx { members_of, ..ctx }));
    }

    /// An object literal's members, named `prefix.key` (or `key` at the
    /// module's own level).
    fn object(&mut self, obj: Node<'t>, prefix: &str, ctx: Ctx) {
        let qualify = |k: &str| match prefix {
            "" => k.to_string(),
            p => format!("{p}.{k}"),
        };
        let ctx = Ctx {
            members_of: None,
            ..ctx
        };
        let mut c = obj.walk();
        let members: Vec<Node<'t>> = obj.named_children(&mut c).collect();
        // Members are defined in source order; what they hold is visited
        // after, from the stack.
        let mut rest = Vec::new();
        for m in members {
            match m.kind() {
                "method_definition" => {
                    let key = m
                        .child_by_field_name("name")
                        .and_then(|k| key_name(k, self.src));
                    if let Some(k) = key {
                        self.function(m, m, Some(qualify(&k)), ctx);
                    }
                }
                "pair" => {
                    let key = m
                        .child_by_field_name("key")
                        .and_then(|k| key_name(k, self.src));
                    match (key, m.child_by_field_name("value")) {
                        (Some(k), Some(v)) => self.define_value(m, v, qualify(&k), ctx),
                        (None, Some(v)) => rest.push(v),
                        _ => {}
                    }
                }
                _ => rest.push(m),
            }
        }
        self.stack.extend(rest.into_iter().rev().map(|n| (n, ctx)));
    }

    fn define(
        &mut self,
        node: Node<'t>,
        name: &str,
        kind: Kind,
        parent: Option<usize>,
        owner_type: Option<String>,
        bases: Vec<Vec<String>>,
    ) -> usize {
        self.define_at(node, node, name, kind, parent, owner_type, bases)
    }

    #[allow(clippy::too_many_arguments)]
    fn define_at(
        &mut self,
        span: Node<'t>,
        def: Node<'t>,
        name: &str,
        kind: Kind,
        parent: Option<usize>,
        owner_type: Option<String>,
        bases: Vec<Vec<String>>,
    ) -> usize {
        let qualname = match parent {
            Some(p) if !name.contains('.') => format!("{}.{name}", self.entities.prefix_of(p)),
            _ => name.to_string(),
        };
        let (start_line, end_line) = line_span(span);
        let body = def.child_by_field_name("body");
        let header_end = body.map(|b| b.start_byte()).unwrap_or(span.end_byte());
        let bare = qualname.rsplit('.').next().unwrap_or(&qualname).to_string();
        self.entities.push(ParsedEntity {
            name: bare,
            qualname,
            kind,
            flavor: flavor(def).to_string(),
            start_line,
            end_line,
            signature: squash(
                self.src.get(span.start_byte()..header_end).unwrap_or(""),
                200,
            ),
            doc: jsdoc(span, self.src),
            hash: String::new(),
            parent,
            calls: Vec::new(),
            bases,
            owner_type,
            byte_range: (span.start_byte(), span.end_byte()),
        })
    }

    fn import(&mut self, node: Node) {
        let Some(source) = node
            .child_by_field_name("source")
            .map(|s| string_value(s, self.src))
        else {
            return;
        };
        let mut names = Vec::new();
        let mut namespace = None;
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "import_clause" => {
                    let mut c = n.walk();
                    for part in n.named_children(&mut c) {
                        match part.kind() {
                            // `import x from`: the module's default export.
                            "identifier" => {
                                names.push(("default".to_string(), self.text(part).to_string()))
                            }
                            _ => stack.push(part),
                        }
                    }
                }
                "namespace_import" => {
                    namespace = n.named_child(0).map(|i| self.text(i).to_string());
                }
                "named_imports" => {
                    let mut c = n.walk();
                    let specs: Vec<Node> = n.named_children(&mut c).collect();
                    stack.extend(specs.into_iter().rev());
                }
                "import_specifier" => names.extend(specifier(n, self.src)),
                _ => {
                    let mut c = n.walk();
                    stack.extend(n.named_children(&mut c));
                }
            }
        }
        names.sort_by_key(|(n, _)| n != "default");
        self.out.imports.push(Import::Js {
            source,
            names,
            namespace,
        });
    }

    /// `export { a as b } from "s"` binds `b` for importers of this file;
    /// `export * from "s"` passes every name through.
    fn reexport(&mut self, node: Node) {
        let Some(source) = node
            .child_by_field_name("source")
            .map(|s| string_value(s, self.src))
        else {
            return;
        };
        let mut names = Vec::new();
        let mut all = true;
        let mut c = node.walk();
        for part in node.named_children(&mut c) {
            match part.kind() {
                "export_clause" => {
                    all = false;
                    let mut cc = part.walk();
                    names.extend(
                        part.named_children(&mut cc)
                            .filter_map(|spec| specifier(spec, self.src)),
                    );
                }
                "namespace_export" => all = false,
                _ => {}
            }
        }
        if all {
            names.push(("*".to_string(), "*".to_string()));
        }
        self.out.imports.push(Import::Js {
            source,
            names,
            namespace: None,
        });
    }
}

/// `a.b.c` as segments; `None` for computed or call-valued paths.
fn dotted(node: Node, src: &str) -> Option<Vec<String>> {
    let mut segs = Vec::new();
    let mut n = node;
    // A loop: member chains may be as long as the file.
    loop {
        match n.kind() {
            "member_expression" => {
                segs.push(node_text(n.child_by_field_name("property")?, src).to_string());
                n = n.child_by_field_name("object")?;
            }
            "identifier" | "this" | "type_identifier" => {
                segs.push(node_text(n, src).to_string());
                break;
            }
            "nested_type_identifier" | "nested_identifier" => {
                segs.extend(node_text(n, src).rsplit('.').map(str::to_string));
                break;
            }
            "generic_type" => n = n.named_child(0)?,
            _ => return None,
        }
    }
    segs.reverse();
    Some(segs)
}

/// The qualname an assignment target gives: `prototype` dropped, a leading
/// `exports.`/`module.exports.` dropped; `None` for `module.exports` (or
/// `exports`) itself.
fn assigned_name(path: &[String]) -> Option<String> {
    let mut segs: Vec<&str> = path.iter().map(String::as_str).collect();
    if segs.first() == Some(&"module") && segs.get(1) == Some(&"exports") {
        segs.drain(..2);
    } else if segs.first() == Some(&"exports") {
        segs.remove(0);
    }
    segs.retain(|s| *s != "prototype");
    (!segs.is_empty()).then(|| segs.join("."))
}

/// The statement a declarator or assignment stands in, when it is the
/// statement's only definition, so the span covers `const`/`export`.
fn statement_of(node: Node) -> Node {
    let mut n = node;
    while let Some(p) = n.parent() {
        let only = p.named_child_count() == 1
            || (p.kind() == "export_statement" && p.child_by_field_name("declaration") == Some(n));
        match p.kind() {
            "lexical_declaration"
            | "variable_declaration"
            | "expression_statement"
            | "export_statement"
                if only =>
            {
                n = p
            }
            _ => break,
        }
    }
    n
}

fn flavor(def: Node) -> &'static str {
    match def.kind() {
        "class" | "class_declaration" => "class",
        "abstract_class_declaration" => "abstract class",
        "interface_declaration" => "interface",
        "type_alias_declaration" => "type",
        "enum_declaration" => "enum",
        "arrow_function" => "arrow",
        "method_definition" => "method",
        _ => "function",
    }
}

/// `extends` and `implements` clauses as type paths.
fn heritage(class: Node, src: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut c = class.walk();
    let mut stack: Vec<Node> = class
        .named_children(&mut c)
        .filter(|n| matches!(n.kind(), "class_heritage" | "extends_type_clause"))
        .collect();
    while let Some(n) = stack.pop() {
        match n.kind() {
            "class_heritage" | "extends_clause" | "implements_clause" | "extends_type_clause" => {
                let mut cc = n.walk();
                let before = stack.len();
                stack.extend(n.named_children(&mut cc));
                stack[before..].reverse();
            }
            "type_arguments" | "arguments" => {}
            _ => out.extend(dotted(n, src)),
        }
    }
    out
}

fn key_name(key: Node, src: &str) -> Option<String> {
    match key.kind() {
        "property_identifier" | "private_property_identifier" | "identifier" => {
            Some(node_text(key, src).to_string())
        }
        "string" => Some(string_value(key, src)).filter(|s| !s.is_empty()),
        _ => None,
    }
}

/// An import or export specifier `name [as alias]` as `(name, bound)`.
fn specifier(spec: Node, src: &str) -> Option<(String, String)> {
    let name = key_text(spec.child_by_field_name("name")?, src);
    let bound = match spec.child_by_field_name("alias") {
        Some(a) => key_text(a, src),
        None => name.clone(),
    };
    Some((name, bound))
}

fn key_text(node: Node, src: &str) -> String {
    match node.kind() {
        "string" => string_value(node, src),
        _ => node_text(node, src).to_string(),
    }
}

fn string_value(node: Node, src: &str) -> String {
    node_text(node, src)
        .trim_matches(|c| c == '"' || c == '\'' || c == '`')
        .to_string()
}

/// `require("s")` or `import("s")` with a literal specifier.
fn required(call: Node, src: &str) -> Option<String> {
    if call.kind() != "call_expression" {
        return None;
    }
    let func = call.child_by_field_name("function")?;
    let is_loader = matches!(func.kind(), "import") || node_text(func, src) == "require";
    if !is_loader {
        return None;
    }
    let args = call.child_by_field_name("arguments")?;
    let first = args.named_child(0)?;
    (first.kind() == "string").then(|| string_value(first, src))
}

/// `const x = require("s")` binds the module; `const {a, b: c} = …` names.
fn require_binding(pattern: Node, source: String, src: &str) -> Import {
    let mut names = Vec::new();
    let mut namespace = None;
    match pattern.kind() {
        "identifier" => namespace = Some(node_text(pattern, src).to_string()),
        "object_pattern" => {
            let mut c = pattern.walk();
            for p in pattern.named_children(&mut c) {
                match p.kind() {
                    "shorthand_property_identifier_pattern" => {
                        let n = node_text(p, src).to_string();
                        names.push((n.clone(), n));
                    }
                    "pair_pattern" => {
                        let k = p.child_by_field_name("key").map(|k| key_text(k, src));
                        let v = p.child_by_field_name("value").map(|v| node_text(v, src));
                        if let (Some(k), Some(v)) = (k, v) {
                            names.push((k, v.to_string()));
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    Import::Js {
        source,
        names,
        namespace,
    }
}

/// The first sentence of the `/** … */` comment above a definition (or
/// above the statement it stands in).
fn jsdoc(node: Node, src: &str) -> String {
    let Some(c) = node.prev_sibling().filter(|p| p.kind() == "comment") else {
        return String::new();
    };
    match super::doc_block_lines(node_text(c, src)) {
        Some(lines) => super::first_sentence(&lines.join("\n")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(src: &str) -> ParsedFile {
        JavaScript.parse("x.js", src)
    }

    fn names(f: &ParsedFile) -> Vec<(&str, Kind)> {
        f.entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.kind))
            .collect()
    }

    #[test]
    fn functions_are_named_as_the_code_names_them() {
        let f = js(r#"
function foo() { function inner() {} return inner() }
const bar = () => 1, baz = function () {};
let Klass = class { m() {} };
class A extends B.Base { constructor() {} static s() {} f = () => this.m(); }
const obj = { m() {}, n: function () {}, a: { deep: () => 2 }, v: 3 };
Foo.prototype.bar = function () {};
exports.ex = function () {};
module.exports.mx = () => {};
(function () { function hidden() {} })();
defineGetter(req, 'host', function hostname() {});
export default { dm() {} };
"#);
        use Kind::*;
        assert_eq!(
            names(&f),
            [
                ("foo", Function),
                ("bar", Function),
                ("baz", Function),
                ("Klass", Class),
                ("Klass.m", Method),
                ("A", Class),
                ("A.constructor", Method),
                ("A.s", Method),
                ("A.f", Method),
                ("obj.m", Method),
                ("obj.n", Method),
                ("obj.a.deep", Method),
                ("Foo.bar", Method),
                ("ex", Function),
                ("mx", Function),
                ("hidden", Function),
                ("hostname", Function),
                ("dm", Function),
            ]
        );
        let a = f.entities.iter().find(|e| e.qualname == "A").unwrap();
        assert_eq!(a.bases, [vec!["B", "Base"]]);
        let foo = &f.entities[0];
        assert_eq!(foo.calls, [Call::Name("inner".into())]);
    }

    #[test]
    fn typescript_signatures_are_not_entities_and_types_are_classes() {
        let f = TypeScript.parse(
            "x.ts",
            "interface I extends J { m(): void }\ntype T = string;\nenum E { A }\n\
             function o(a: string): void;\nfunction o(a: any) {}\n\
             abstract class C implements I { abstract z(): void; y(): number { return 1 } }\n\
             declare function ambient(): void;\n",
        );
        use Kind::*;
        assert_eq!(
            names(&f),
            [
                ("I", Class),
                ("T", Class),
                ("E", Class),
                ("o", Function),
                ("C", Class),
                ("C.y", Method),
            ]
        );
        assert_eq!(f.entities[0].bases, [vec!["J"]]);
        assert_eq!(f.entities[4].bases, [vec!["I"]]);
        let tsx = TypeScript.parse("x.tsx", "export const App = () => <div onClick={go} />;\n");
        assert_eq!(names(&tsx), [("App", Function)]);
    }

    #[test]
    fn imports_cover_esm_reexports_require_and_dynamic_import() {
        let f = js(r#"
import def, { a, b as c } from './m';
import * as ns from "../ns";
export { x as y } from './re';
export * from './all';
const lib = require('./lib');
const { p, q: r } = require('./pq');
import('./lazy');
"#);
        type Seen = (String, Vec<(String, String)>, Option<String>);
        let got: Vec<Seen> = f
            .imports
            .iter()
            .map(|i| match i {
                Import::Js {
                    source,
                    names,
                    namespace,
                } => (source.clone(), names.clone(), namespace.clone()),
                _ => unreachable!(),
            })
            .collect();
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            got,
            [
                (
                    "./m".into(),
                    vec![s("default", "def"), s("a", "a"), s("b", "c")],
                    None
                ),
                ("../ns".into(), vec![], Some("ns".into())),
                ("./re".into(), vec![s("x", "y")], None),
                ("./all".into(), vec![s("*", "*")], None),
                ("./lib".into(), vec![], Some("lib".into())),
                ("./pq".into(), vec![s("p", "p"), s("q", "r")], None),
                ("./lazy".into(), vec![], None),
            ]
        );
    }
}
