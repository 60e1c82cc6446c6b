//! Go: functions, methods named `Recv.Name` after their receiver type, and
//! struct and interface types as classes. Embedding is inheritance.

use super::{line_span, node_text, squash, Call, EntityBuilder, Import, Kind, ParsedEntity};
use super::{Lang, Language, ParsedFile};
use std::collections::HashMap;
use tree_sitter::Node;

pub struct Go;

impl Language for Go {
    fn lang(&self) -> Lang {
        Lang::Go
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".go"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        parse(source)
    }
}

/// Declared types of the names in scope: receiver, parameters, typed vars
/// and composite literals, as `["T"]` or `["pkg", "T"]`.
type Types = HashMap<String, Vec<String>>;

fn parse(src: &str) -> ParsedFile {
    let Some(tree) = super::syntax_tree(tree_sitter_go::LANGUAGE.into(), src) else {
        return ParsedFile::default();
    };
    let root = tree.root_node();
    let mut out = ParsedFile::of_tree(root, src);
    let mut entities = EntityBuilder::new();
    let mut cursor = root.walk();
    for top in root.named_children(&mut cursor) {
        match top.kind() {
            "package_clause" => out.doc = doc_above(top, src),
            "import_declaration" => imports_of(top, src, &mut out.imports),
            "function_declaration" | "method_declaration" => {
                if let Some(idx) = define_func(top, src, &mut entities) {
                    let mut types = Types::new();
                    for field in ["receiver", "parameters"] {
                        if let Some(list) = top.child_by_field_name(field) {
                            declared(list, src, &mut types);
                        }
                    }
                    let calls = calls_in(top.child_by_field_name("body"), src, &mut types);
                    entities.get_mut(idx).calls = calls;
                }
            }
            "type_declaration" => {
                let mut c = top.walk();
                for spec in top.named_children(&mut c) {
                    define_type(spec, top, src, &mut entities);
                }
            }
            _ => {
                let calls = calls_in(Some(top), src, &mut Types::new());
                out.file_calls.extend(calls);
            }
        }
    }
    out.entities = entities.finish(src);
    out
}

fn define_func(node: Node, src: &str, entities: &mut EntityBuilder) -> Option<usize> {
    let name = node_text(node.child_by_field_name("name")?, src).to_string();
    let receiver = node
        .child_by_field_name("receiver")
        .and_then(|r| first_param_type(r, src));
    let (kind, qualname, flavor) = match &receiver {
        Some(r) => (Kind::Method, format!("{r}.{name}"), "method"),
        None => (Kind::Function, name.clone(), "func"),
    };
    Some(entities.push(entity(
        node,
        src,
        name,
        qualname,
        kind,
        flavor,
        node.child_by_field_name("body"),
        receiver,
        Vec::new(),
    )))
}

/// `type T struct {…}` and `type I interface {…}`; other named types
/// (`type Duration int64`) are not classes.
fn define_type(spec: Node, decl: Node, src: &str, entities: &mut EntityBuilder) {
    if spec.kind() != "type_spec" {
        return;
    }
    let (Some(name), Some(ty)) = (
        spec.child_by_field_name("name"),
        spec.child_by_field_name("type"),
    ) else {
        return;
    };
    let flavor = match ty.kind() {
        "struct_type" => "struct",
        "interface_type" => "interface",
        _ => return,
    };
    let name = node_text(name, src).to_string();
    // A lone spec owns its `type` keyword and doc; a grouped one, itself.
    let lone = decl.named_child_count() == 1;
    let node = if lone { decl } else { spec };
    let mut e = entity(
        node,
        src,
        name.clone(),
        name,
        Kind::Class,
        flavor,
        Some(ty),
        None,
        embedded(ty, src),
    );
    let head = header(spec, Some(ty), src).trim_end();
    e.signature = squash(&format!("type {head} {flavor}"), 200);
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
    owner_type: Option<String>,
    bases: Vec<Vec<String>>,
) -> ParsedEntity {
    let (start_line, end_line) = line_span(node);
    ParsedEntity {
        qualname,
        name,
        kind,
        flavor: flavor.to_string(),
        start_line,
        end_line,
        signature: squash(header(node, body, src), 200),
        doc: doc_above(node, src),
        hash: String::new(),
        parent: None,
        calls: Vec::new(),
        bases,
        owner_type,
        byte_range: (node.start_byte(), node.end_byte()),
    }
}

/// The text of `node` up to its body.
fn header<'a>(node: Node, body: Option<Node>, src: &'a str) -> &'a str {
    let end = body.map(|b| b.start_byte()).unwrap_or(node.end_byte());
    src.get(node.start_byte()..end).unwrap_or("")
}

/// The `//` comment lines directly above `node`, first paragraph.
fn doc_above(node: Node, src: &str) -> String {
    let lines: Vec<&str> = super::comments_above(node, src)
        .into_iter()
        .rev()
        .map(|text| {
            let text = text
                .strip_prefix("//")
                .or_else(|| text.strip_prefix("/*").map(|t| t.trim_end_matches("*/")))
                .unwrap_or(text);
            text.trim()
        })
        .collect();
    super::first_paragraph(&lines.join("\n"))
}

/// Embedded fields of a struct and embedded interfaces, as type paths.
fn embedded(ty: Node, src: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![ty];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "field_declaration" if n.child_by_field_name("name").is_none() => {
                out.extend(
                    n.child_by_field_name("type")
                        .and_then(|t| type_path(t, src)),
                );
            }
            "type_elem" => {
                let mut c = n.walk();
                out.extend(n.named_children(&mut c).filter_map(|t| type_path(t, src)));
            }
            "struct_type" | "interface_type" | "field_declaration_list" => {
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
            _ => {}
        }
    }
    out.reverse();
    out
}

/// A named type as a path, without `*` or type arguments; `None` for
/// slices, maps, funcs and other unnamed types.
fn type_path(ty: Node, src: &str) -> Option<Vec<String>> {
    let mut ty = ty;
    // A loop, not recursion: `****…T` may be as deep as the file is long.
    loop {
        ty = match ty.kind() {
            "pointer_type" | "parenthesized_type" => ty.named_child(0)?,
            "generic_type" => ty.child_by_field_name("type")?,
            _ => break,
        };
    }
    match ty.kind() {
        "type_identifier" => Some(vec![node_text(ty, src).to_string()]),
        "qualified_type" => Some(vec![
            node_text(ty.child_by_field_name("package")?, src).to_string(),
            node_text(ty.child_by_field_name("name")?, src).to_string(),
        ]),
        _ => None,
    }
}

/// The receiver's type name: `(s *Server[T])` → `Server`.
fn first_param_type(list: Node, src: &str) -> Option<String> {
    let mut c = list.walk();
    let param = list
        .named_children(&mut c)
        .find(|p| p.kind() == "parameter_declaration")?;
    type_path(param.child_by_field_name("type")?, src)?.pop()
}

/// Record the declared types of a parameter list or `var` spec.
fn declared(node: Node, src: &str, types: &mut Types) {
    let mut c = node.walk();
    for p in node.named_children(&mut c) {
        if !matches!(
            p.kind(),
            "parameter_declaration" | "variadic_parameter_declaration"
        ) {
            continue;
        }
        let Some(ty) = p
            .child_by_field_name("type")
            .and_then(|t| type_path(t, src))
        else {
            continue;
        };
        let mut names = p.walk();
        for n in p.children_by_field_name("name", &mut names) {
            types.insert(node_text(n, src).to_string(), ty.clone());
        }
    }
}

/// The calls under `root`, in source order, with receivers typed where
/// a declaration says so. Function literals belong to their enclosing
/// function.
fn calls_in(root: Option<Node>, src: &str, types: &mut Types) -> Vec<Call> {
    let Some(root) = root else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        match node.kind() {
            "call_expression" => out.extend(call_of(node, src, types)),
            "var_spec" => {
                if let Some(ty) = node
                    .child_by_field_name("type")
                    .and_then(|t| type_path(t, src))
                {
                    let mut c = node.walk();
                    for n in node.children_by_field_name("name", &mut c) {
                        types.insert(node_text(n, src).to_string(), ty.clone());
                    }
                }
            }
            "short_var_declaration" => short_var_types(node, src, types),
            "parameter_list" => declared(node, src, types),
            "comment" | "interpreted_string_literal" | "raw_string_literal" => continue,
            _ => {}
        }
        let before = stack.len();
        stack.extend(node.named_children(&mut cursor));
        stack[before..].reverse();
    }
    out
}

/// `x := T{…}` and `x := &pkg.T{…}` tell x's type.
fn short_var_types(node: Node, src: &str, types: &mut Types) {
    let (Some(left), Some(right)) = (
        node.child_by_field_name("left"),
        node.child_by_field_name("right"),
    ) else {
        return;
    };
    let mut lc = left.walk();
    let mut rc = right.walk();
    for (l, r) in left
        .named_children(&mut lc)
        .zip(right.named_children(&mut rc))
    {
        let lit = if r.kind() == "unary_expression" {
            r.child_by_field_name("operand")
        } else {
            Some(r)
        };
        let ty = lit
            .filter(|n| n.kind() == "composite_literal")
            .and_then(|n| n.child_by_field_name("type"))
            .and_then(|t| type_path(t, src));
        let name = node_text(l, src).to_string();
        match ty {
            Some(ty) => types.insert(name, ty),
            // A new binding hides an outer one of the same name.
            None => types.remove(&name),
        };
    }
}

fn call_of(node: Node, src: &str, types: &Types) -> Option<Call> {
    let func = node.child_by_field_name("function")?;
    match func.kind() {
        "identifier" => Some(Call::Name(node_text(func, src).to_string())),
        "selector_expression" => {
            let name = node_text(func.child_by_field_name("field")?, src).to_string();
            let operand = func.child_by_field_name("operand")?;
            if operand.kind() != "identifier" {
                return Some(Call::Attr {
                    recv: String::new(),
                    name,
                });
            }
            let recv = node_text(operand, src);
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
        _ => None,
    }
}

fn imports_of(decl: Node, src: &str, out: &mut Vec<Import>) {
    let mut stack = vec![decl];
    while let Some(n) = stack.pop() {
        if n.kind() == "import_spec" {
            let Some(path) = n.child_by_field_name("path") else {
                continue;
            };
            let path = node_text(path, src).trim_matches(['"', '`']).to_string();
            let alias = n
                .child_by_field_name("name")
                .map(|a| node_text(a, src).to_string());
            out.push(Import::Go { path, alias });
            continue;
        }
        let mut c = n.walk();
        let before = stack.len();
        stack.extend(n.named_children(&mut c));
        stack[before..].reverse();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"// Package server serves.
package server

import (
	"fmt"
	z "github.com/x/y/zrpc"
)

// Server answers requests.
// It is safe for concurrent use.
type Server struct {
	*Base
	zrpc.Conf
	name string
}

type (
	Handler interface {
		Named
		Handle(r *Request) error
	}
	Duration int64
)

// NewServer makes a Server.
func NewServer(c Config) *Server {
	s := &Server{}
	s.start()
	c.Validate()
	go func() { helper() }()
	return s
}

func (s *Server) start() {
	fmt.Println(z.Dial())
}

func (g *Group[T]) Add(v T) {}
"#;

    fn ids(f: &ParsedFile) -> Vec<(&str, Kind, u32, u32)> {
        f.entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.kind, e.start_line, e.end_line))
            .collect()
    }

    #[test]
    fn functions_methods_and_named_struct_and_interface_types_are_entities() {
        let f = parse(SRC);
        assert_eq!(
            ids(&f),
            [
                ("Server", Kind::Class, 11, 15),
                ("Handler", Kind::Class, 18, 21),
                ("NewServer", Kind::Function, 26, 32),
                ("Server.start", Kind::Method, 34, 36),
                ("Group.Add", Kind::Method, 38, 38),
            ]
        );
        assert_eq!(f.doc, "Package server serves.");
        let server = &f.entities[0];
        assert_eq!(
            server.doc,
            "Server answers requests. It is safe for concurrent use."
        );
        assert_eq!(server.bases, [vec!["Base"], vec!["zrpc", "Conf"]]);
        assert_eq!(f.entities[1].bases, [vec!["Named"]]);
        assert_eq!(f.entities[3].owner_type.as_deref(), Some("Server"));
        assert_eq!(f.entities[2].signature, "func NewServer(c Config) *Server");
        assert_eq!(server.signature, "type Server struct");
        assert_eq!(f.entities[1].signature, "type Handler interface");
    }

    #[test]
    fn calls_carry_the_declared_type_of_their_receiver() {
        let f = parse(SRC);
        let typed = |ty: &[&str], name: &str| Call::Typed {
            ty: ty.iter().map(|s| s.to_string()).collect(),
            name: name.into(),
        };
        assert_eq!(
            f.entities[2].calls,
            [
                typed(&["Server"], "start"),
                typed(&["Config"], "Validate"),
                Call::Name("helper".into()),
            ]
        );
        assert_eq!(
            f.entities[3].calls,
            [
                Call::Attr {
                    recv: "fmt".into(),
                    name: "Println".into()
                },
                Call::Attr {
                    recv: "z".into(),
                    name: "Dial".into()
                },
            ]
        );
        assert_eq!(
            f.imports,
            [
                Import::Go {
                    path: "fmt".into(),
                    alias: None
                },
                Import::Go {
                    path: "github.com/x/y/zrpc".into(),
                    alias: Some("z".into())
                },
            ]
        );
    }
}
