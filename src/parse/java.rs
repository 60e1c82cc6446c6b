//! Java: classes, interfaces, enums, records and annotation types at any
//! nesting depth, named `Outer.Inner`, and their methods and constructors
//! (`Class.Class`). Method bodies are not entered for definitions: lambdas
//! and local or anonymous classes belong to the enclosing method.

use super::{line_span, node_text, squash, Call, EntityBuilder, Import, Kind, ParsedEntity};
use super::{Lang, Language, ParsedFile};
use std::collections::HashMap;
use tree_sitter::Node;

pub struct Java;

impl Language for Java {
    fn lang(&self) -> Lang {
        Lang::Java
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".java"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        parse(source)
    }
}

/// Declared types of fields, parameters and locals, by name.
type Types = HashMap<String, Vec<String>>;

const TYPE_DECLS: &[&str] = &[
    "class_declaration",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
    "annotation_type_declaration",
];

const MEMBER_DECLS: &[&str] = &[
    "method_declaration",
    "constructor_declaration",
    "compact_constructor_declaration",
    "annotation_type_element_declaration",
];

fn parse(src: &str) -> ParsedFile {
    let Some(tree) = super::syntax_tree(tree_sitter_java::LANGUAGE.into(), src) else {
        return ParsedFile::default();
    };
    let root = tree.root_node();
    let mut out = ParsedFile::of_tree(root, src);
    let mut entities = EntityBuilder::new();
    // (node, enclosing class, the fields that class and its outers declare)
    let mut stack: Vec<(Node, Option<usize>, std::rc::Rc<Types>)> =
        vec![(root, None, Default::default())];
    let mut cursor = root.walk();
    while let Some((node, class, fields)) = stack.pop() {
        let kind = node.kind();
        if kind == "import_declaration" {
            out.imports.extend(import_of(node, src));
            continue;
        }
        if kind == "package_declaration" {
            let mut c = node.walk();
            let name = node
                .named_children(&mut c)
                .find(|n| matches!(n.kind(), "scoped_identifier" | "identifier"));
            if let Some(n) = name {
                let path = node_text(n, src).split('.').map(str::to_string).collect();
                out.imports.push(Import::JavaPackage { path });
            }
            continue;
        }
        if TYPE_DECLS.contains(&kind) {
            let Some(idx) = define_type(node, class, src, &mut entities) else {
                continue;
            };
            let Some(body) = node.child_by_field_name("body") else {
                continue;
            };
            let mut own = (*fields).clone();
            field_types(body, src, &mut own);
            let own = std::rc::Rc::new(own);
            push_children(&mut stack, body, Some(idx), &own, &mut cursor);
            continue;
        }
        if MEMBER_DECLS.contains(&kind) {
            if let Some(c) = class {
                define_member(node, c, &fields, src, &mut entities);
            }
            continue;
        }
        match (kind, class) {
            ("program" | "enum_body" | "enum_body_declarations", _) => {
                push_children(&mut stack, node, class, &fields, &mut cursor);
            }
            // `static final TypeAdapter<URI> URI = new TypeAdapter<URI>() {…}`:
            // the anonymous class is named after its field, so its methods
            // (`TypeAdapters.URI.read`), where fixes land, are entities.
            ("field_declaration", Some(c)) if anonymous_in(node).is_some() => {
                let (declarator, body) = anonymous_in(node).expect("just checked");
                match define_anonymous(node, declarator, body, c, src, &mut entities) {
                    Some(idx) => push_children(&mut stack, body, Some(idx), &fields, &mut cursor),
                    None => {
                        let calls = calls_in(node, src, &mut (*fields).clone());
                        entities.get_mut(c).calls.extend(calls);
                    }
                }
            }
            // Field initialisers, initializer blocks, enum constants: the
            // class's own code.
            (_, Some(c)) => {
                let calls = calls_in(node, src, &mut (*fields).clone());
                entities.get_mut(c).calls.extend(calls);
            }
            _ => {}
        }
    }
    out.entities = entities.finish(src);
    out
}

/// A field's one declarator whose value is an anonymous class, with the
/// class's body.
fn anonymous_in(field: Node) -> Option<(Node, Node)> {
    let mut c = field.walk();
    let declarators: Vec<Node> = field.children_by_field_name("declarator", &mut c).collect();
    let [d] = declarators[..] else {
        return None;
    };
    let value = d.child_by_field_name("value")?;
    if value.kind() != "object_creation_expression" {
        return None;
    }
    let mut vc = value.walk();
    let body = value
        .named_children(&mut vc)
        .find(|n| n.kind() == "class_body")?;
    Some((d, body))
}

/// The anonymous class of a field, as a class named after the field, its
/// base the type it instantiates.
fn define_anonymous(
    field: Node,
    declarator: Node,
    body: Node,
    class: usize,
    src: &str,
    entities: &mut EntityBuilder,
) -> Option<usize> {
    let name = node_text(declarator.child_by_field_name("name")?, src).to_string();
    if entities.too_deep(Some(class)) {
        return None;
    }
    let value = declarator.child_by_field_name("value")?;
    let bases = value
        .child_by_field_name("type")
        .and_then(|t| type_path(t, src))
        .into_iter()
        .collect();
    let qualname = format!("{}.{}", entities.prefix_of(class), name);
    Some(entities.push(entity(
        field,
        src,
        name,
        qualname,
        Kind::Class,
        "anonymous",
        Some(body),
        Some(class),
        None,
        bases,
    )))
}

fn push_children<'t>(
    stack: &mut Vec<(Node<'t>, Option<usize>, std::rc::Rc<Types>)>,
    node: Node<'t>,
    class: Option<usize>,
    fields: &std::rc::Rc<Types>,
    cursor: &mut tree_sitter::TreeCursor<'t>,
) {
    let before = stack.len();
    stack.extend(
        node.named_children(cursor)
            .filter(|c| !is_comment(*c))
            .map(|c| (c, class, fields.clone())),
    );
    stack[before..].reverse();
}

fn is_comment(n: Node) -> bool {
    matches!(n.kind(), "line_comment" | "block_comment")
}

fn define_type(
    node: Node,
    outer: Option<usize>,
    src: &str,
    entities: &mut EntityBuilder,
) -> Option<usize> {
    let name = node_text(node.child_by_field_name("name")?, src).to_string();
    if entities.too_deep(outer) {
        return outer; // its members belong to the ancestor
    }
    let qualname = match outer {
        Some(o) => format!("{}.{}", entities.prefix_of(o), name),
        None => name.clone(),
    };
    let flavor = match node.kind() {
        "class_declaration" => "class",
        "interface_declaration" => "interface",
        "enum_declaration" => "enum",
        "record_declaration" => "record",
        _ => "@interface",
    };
    let mut bases = Vec::new();
    if let Some(s) = node.child_by_field_name("superclass") {
        bases.extend(type_list(s, src));
    }
    let mut c = node.walk();
    for part in node.named_children(&mut c) {
        if matches!(part.kind(), "super_interfaces" | "extends_interfaces") {
            bases.extend(type_list(part, src));
        }
    }
    let body = node.child_by_field_name("body");
    Some(entities.push(entity(
        node,
        src,
        name,
        qualname,
        Kind::Class,
        flavor,
        body,
        outer,
        None,
        bases,
    )))
}

fn define_member(
    node: Node,
    class: usize,
    fields: &Types,
    src: &str,
    entities: &mut EntityBuilder,
) {
    if entities.too_deep(Some(class)) {
        let body = node.child_by_field_name("body");
        let calls = body.map(|b| calls_in(b, src, &mut fields.clone()));
        entities
            .get_mut(class)
            .calls
            .extend(calls.unwrap_or_default());
        return;
    }
    let owner = entities.prefix_of(class).to_string();
    let name = match node.child_by_field_name("name") {
        Some(n) => node_text(n, src).to_string(),
        None => return,
    };
    let flavor = match node.kind() {
        "method_declaration" | "annotation_type_element_declaration" => "method",
        _ => "constructor",
    };
    let body = node.child_by_field_name("body");
    let mut e = entity(
        node,
        src,
        name.clone(),
        format!("{owner}.{name}"),
        Kind::Method,
        flavor,
        body,
        Some(class),
        Some(owner),
        Vec::new(),
    );
    let mut types = fields.clone();
    if let Some(params) = node.child_by_field_name("parameters") {
        declared_in(params, src, &mut types);
    }
    if let Some(b) = body {
        e.calls = calls_in(b, src, &mut types);
    }
    entities.push(e);
}

#[allow(clippy::too_many_arguments)]
fn entity(
    node: Node,
    src: &str,
    name: String,
    qualname: String,
    kind: Kind,
    flavor: &str,
    body: Option<Node>,
    parent: Option<usize>,
    owner_type: Option<String>,
    bases: Vec<Vec<String>>,
) -> ParsedEntity {
    let (start_line, end_line) = line_span(node);
    let end = body.map(|b| b.start_byte()).unwrap_or(node.end_byte());
    ParsedEntity {
        qualname,
        name,
        kind,
        flavor: flavor.to_string(),
        start_line,
        end_line,
        signature: squash(src.get(node.start_byte()..end).unwrap_or(""), 200),
        doc: javadoc(node, src),
        hash: String::new(),
        parent,
        calls: Vec::new(),
        bases,
        owner_type,
        byte_range: (node.start_byte(), node.end_byte()),
    }
}

/// The first sentence of the `/** … */` comment directly above `node`.
fn javadoc(node: Node, src: &str) -> String {
    let Some(c) = node.prev_sibling().filter(|p| p.kind() == "block_comment") else {
        return String::new();
    };
    let Some(lines) = super::doc_block_lines(node_text(c, src)) else {
        return String::new();
    };
    let para = super::first_paragraph(&lines.join("\n"));
    super::first_sentence(&strip_inline_tags(&para))
}

/// `{@code x}` and `{@link A#b}` → `x`, `A#b`; HTML tags dropped.
fn strip_inline_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(['{', '<']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(t) = tail.strip_prefix("{@") {
            let end = t.find('}').unwrap_or(t.len());
            let inner = &t[..end];
            out.push_str(inner.split_once(' ').map(|(_, v)| v).unwrap_or(""));
            rest = t.get(end + 1..).unwrap_or("");
        } else if tail.starts_with('<') && tail.find('>').is_some_and(|e| e < 12) {
            rest = &tail[tail.find('>').unwrap_or(0) + 1..];
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Type paths of a `superclass`, `super_interfaces` or `extends_interfaces`.
fn type_list(node: Node, src: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if let Some(p) = type_path(n, src) {
            out.push(p);
            continue;
        }
        let mut c = n.walk();
        let before = stack.len();
        stack.extend(n.named_children(&mut c));
        stack[before..].reverse();
    }
    out
}

/// A class type as its dotted segments, without type arguments; `None`
/// for primitives, arrays and `var`.
fn type_path(ty: Node, src: &str) -> Option<Vec<String>> {
    let mut ty = ty;
    while ty.kind() == "generic_type" {
        ty = ty.named_child(0)?;
    }
    match ty.kind() {
        "type_identifier" => {
            let t = node_text(ty, src);
            (t != "var").then(|| vec![t.to_string()])
        }
        "scoped_type_identifier" => {
            // An explicit stack: a scoped name may nest as deep as it is long.
            let mut segs = Vec::new();
            let mut stack = vec![ty];
            let mut c = ty.walk();
            while let Some(n) = stack.pop() {
                match n.kind() {
                    "type_identifier" => segs.push(node_text(n, src).to_string()),
                    "scoped_type_identifier" | "generic_type" => {
                        let before = stack.len();
                        stack.extend(n.named_children(&mut c));
                        stack[before..].reverse();
                    }
                    _ => {}
                }
            }
            (!segs.is_empty()).then_some(segs)
        }
        _ => None,
    }
}

/// Field types declared directly in a class body.
fn field_types(body: Node, src: &str, types: &mut Types) {
    let mut c = body.walk();
    for member in body.named_children(&mut c) {
        if member.kind() == "field_declaration" {
            declare(member, src, types);
        }
    }
}

/// A `type a, b = …;` declaration's names, with its type.
fn declare(decl: Node, src: &str, types: &mut Types) {
    let Some(ty) = decl
        .child_by_field_name("type")
        .and_then(|t| type_path(t, src))
    else {
        return;
    };
    let mut c = decl.walk();
    for d in decl.children_by_field_name("declarator", &mut c) {
        if let Some(n) = d.child_by_field_name("name") {
            types.insert(node_text(n, src).to_string(), ty.clone());
        }
    }
}

/// Parameters of a method or constructor.
fn declared_in(params: Node, src: &str, types: &mut Types) {
    let mut c = params.walk();
    for p in params.named_children(&mut c) {
        let (Some(ty), Some(name)) = (
            p.child_by_field_name("type")
                .and_then(|t| type_path(t, src)),
            p.child_by_field_name("name"),
        ) else {
            continue;
        };
        types.insert(node_text(name, src).to_string(), ty);
    }
}

/// The calls under `root` in source order, typed where a declaration
/// (field, parameter, local) says what the receiver is.
fn calls_in(root: Node, src: &str, types: &mut Types) -> Vec<Call> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        match node.kind() {
            "method_invocation" => out.extend(invocation(node, src, types)),
            "object_creation_expression" => {
                if let Some(ty) = node
                    .child_by_field_name("type")
                    .and_then(|t| type_path(t, src))
                {
                    let name = ty.last().cloned().unwrap_or_default();
                    out.push(Call::Typed { ty, name });
                }
            }
            "local_variable_declaration" => declare(node, src, types),
            "formal_parameters" | "inferred_parameters" => declared_in(node, src, types),
            "string_literal" | "line_comment" | "block_comment" => continue,
            _ => {}
        }
        let before = stack.len();
        stack.extend(node.named_children(&mut cursor));
        stack[before..].reverse();
    }
    out
}

fn invocation(node: Node, src: &str, types: &Types) -> Option<Call> {
    let name = node_text(node.child_by_field_name("name")?, src).to_string();
    let Some(object) = node.child_by_field_name("object") else {
        return Some(Call::Name(name));
    };
    let field_of_this = (object.kind() == "field_access")
        .then(|| object.child_by_field_name("object"))
        .flatten()
        .is_some_and(|o| o.kind() == "this");
    let var = match object.kind() {
        "this" => return Some(Call::SelfMethod(name)),
        "identifier" => Some(object),
        "field_access" if field_of_this => object.child_by_field_name("field"),
        _ => None,
    };
    let Some(var) = var else {
        return Some(Call::Attr {
            recv: String::new(),
            name,
        });
    };
    let recv = node_text(var, src);
    Some(match types.get(recv) {
        Some(ty) => Call::Typed {
            ty: ty.clone(),
            name,
        },
        None => Call::Attr {
            recv: recv.to_string(),
            name,
        },
    })
}

fn import_of(node: Node, src: &str) -> Option<Import> {
    let mut c = node.walk();
    let children: Vec<Node> = node.children(&mut c).collect();
    let path_node = children
        .iter()
        .find(|n| matches!(n.kind(), "scoped_identifier" | "identifier"))?;
    Some(Import::Java {
        path: node_text(*path_node, src)
            .split('.')
            .map(|s| s.trim().to_string())
            .collect(),
        wildcard: children.iter().any(|n| n.kind() == "asterisk"),
        is_static: children.iter().any(|n| n.kind() == "static"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"package com.x.core;

import java.util.List;
import static com.x.util.Strings.quote;
import com.x.io.*;

/**
 * Reads tokens from a {@code Reader}. Not thread safe.
 * @since 2.0
 */
public abstract class Parser extends Base implements Closeable, Iterable<Token> {
    private Lexer lexer = new Lexer();

    public Parser(Reader r) { this(r, 0); }
    public Parser(Reader r, int flags) { lexer.reset(r); }

    /** Next token. */
    public Token next() {
        Token t = lexer.scan();
        t.check();
        Runnable run = () -> { class Local { void f() { helper(); } } };
        return this.peek(quote("x"));
    }

    abstract Token peek(String s);

    interface Listener extends EventListener {
        void on(Token t);
        enum Mode { A, B; void m() {} }
    }
    record Pos(int line) { Pos { check(line); } }
    @interface Marker { String value(); }
}
"#;

    fn ids(f: &ParsedFile) -> Vec<(&str, Kind, u32, u32)> {
        f.entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.kind, e.start_line, e.end_line))
            .collect()
    }

    #[test]
    fn nested_types_methods_and_constructors_are_named_outer_to_inner() {
        let f = parse(SRC);
        assert_eq!(
            ids(&f),
            [
                ("Parser", Kind::Class, 11, 33),
                ("Parser.Parser", Kind::Method, 14, 14),
                ("Parser.Parser#2", Kind::Method, 15, 15),
                ("Parser.next", Kind::Method, 18, 23),
                ("Parser.peek", Kind::Method, 25, 25),
                ("Parser.Listener", Kind::Class, 27, 30),
                ("Parser.Listener.on", Kind::Method, 28, 28),
                ("Parser.Listener.Mode", Kind::Class, 29, 29),
                ("Parser.Listener.Mode.m", Kind::Method, 29, 29),
                ("Parser.Pos", Kind::Class, 31, 31),
                ("Parser.Pos.Pos", Kind::Method, 31, 31),
                ("Parser.Marker", Kind::Class, 32, 32),
                ("Parser.Marker.value", Kind::Method, 32, 32),
            ]
        );
        let p = &f.entities[0];
        assert_eq!(p.doc, "Reads tokens from a Reader.");
        assert_eq!(p.bases, [vec!["Base"], vec!["Closeable"], vec!["Iterable"]]);
        assert_eq!(f.entities[3].doc, "Next token.");
        assert_eq!(f.entities[5].bases, [vec!["EventListener"]]);
    }

    #[test]
    fn calls_are_typed_by_fields_parameters_and_locals() {
        let f = parse(SRC);
        let typed = |ty: &str, name: &str| Call::Typed {
            ty: vec![ty.to_string()],
            name: name.into(),
        };
        assert_eq!(f.entities[0].calls, [typed("Lexer", "Lexer")]);
        assert_eq!(f.entities[2].calls, [typed("Lexer", "reset")]);
        assert_eq!(
            f.entities[3].calls,
            [
                typed("Lexer", "scan"),
                typed("Token", "check"),
                Call::Name("helper".into()),
                Call::SelfMethod("peek".into()),
                Call::Name("quote".into()),
            ]
        );
        assert_eq!(
            f.imports[2],
            Import::Java {
                path: vec![
                    "com".into(),
                    "x".into(),
                    "util".into(),
                    "Strings".into(),
                    "quote".into()
                ],
                wildcard: false,
                is_static: true,
            }
        );
        assert!(matches!(&f.imports[3], Import::Java { wildcard: true, .. }));
        assert_eq!(
            f.imports[0],
            Import::JavaPackage {
                path: vec!["com".into(), "x".into(), "core".into()]
            }
        );
    }
}
