//! Swift: classes, structs, enums, actors, protocols and extensions at any
//! depth, their functions, initialisers and deinitialisers, and top-level
//! functions. An extension is named after the type it extends, so its
//! members are that type's (`extension Cart { func f() }` is `Cart.f`).

use super::generic::{self, field_text, type_segments, Def, DefKind, Grammar};
use super::{node_text, Call, Import, Lang, Language, ParsedFile};
use tree_sitter::Node;

pub struct Swift;

impl Language for Swift {
    fn lang(&self) -> Lang {
        Lang::Swift
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".swift"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        generic::parse(self, source)
    }
}

impl Grammar for Swift {
    fn language(&self) -> tree_sitter::Language {
        tree_sitter_swift::LANGUAGE.into()
    }

    fn definition<'t>(&self, node: Node<'t>, src: &str) -> Option<Def<'t>> {
        let body = node.child_by_field_name("body");
        match node.kind() {
            "class_declaration" | "protocol_declaration" => {
                let flavor = match keyword(node, src) {
                    "struct" => "struct",
                    "enum" => "enum",
                    "extension" => "extension",
                    "actor" => "actor",
                    "protocol" => "protocol",
                    _ => "class",
                };
                let name = type_segments(field_text(node, "name", src)?)?.join(".");
                let mut bases = Vec::new();
                let mut c = node.walk();
                for spec in node
                    .named_children(&mut c)
                    .filter(|n| n.kind() == "inheritance_specifier")
                {
                    bases.extend(field_text(spec, "inherits_from", src).and_then(type_segments));
                }
                Some(Def {
                    name,
                    owner: None,
                    kind: DefKind::Type,
                    flavor,
                    body,
                    bases,
                })
            }
            "function_declaration" | "protocol_function_declaration" => Some(Def {
                // The first `name` is the function's; later ones are types.
                name: field_text(node, "name", src)?.to_string(),
                owner: None,
                kind: DefKind::Function,
                flavor: "func",
                body,
                bases: Vec::new(),
            }),
            "init_declaration" | "deinit_declaration" => Some(Def {
                name: keyword(node, src).to_string(),
                owner: None,
                kind: DefKind::Function,
                flavor: if node.kind() == "init_declaration" {
                    "init"
                } else {
                    "deinit"
                },
                body,
                bases: Vec::new(),
            }),
            _ => None,
        }
    }

    fn call(&self, node: Node, src: &str) -> Option<Call> {
        if node.kind() != "call_expression" {
            return None;
        }
        let callee = node.named_child(0)?;
        match callee.kind() {
            "simple_identifier" => Some(Call::Name(node_text(callee, src).to_string())),
            "navigation_expression" => {
                let name = callee
                    .child_by_field_name("suffix")
                    .and_then(|s| s.child_by_field_name("suffix"))
                    .map(|n| node_text(n, src).to_string())?;
                let target = callee.child_by_field_name("target");
                Some(match target {
                    Some(t) if matches!(t.kind(), "self_expression" | "super_expression") => {
                        Call::SelfMethod(name)
                    }
                    Some(t) if t.kind() == "simple_identifier" => {
                        generic::on_identifier(node_text(t, src), name)
                    }
                    _ => Call::Attr {
                        recv: String::new(),
                        name,
                    },
                })
            }
            _ => None,
        }
    }

    fn imports(&self, node: Node, src: &str) -> Option<Vec<Import>> {
        if node.kind() != "import_declaration" {
            return None;
        }
        let path = generic::child_of_kind(node, &["identifier"])
            .and_then(|i| type_segments(node_text(i, src)));
        Some(
            path.map(|path| Import::Qualified {
                path,
                alias: None,
                wildcard: true,
            })
            .into_iter()
            .collect(),
        )
    }

    fn declares(&self, node: Node, src: &str, out: &mut Vec<(String, Vec<String>)>) {
        match node.kind() {
            "parameter" => {
                let mut c = node.walk();
                let names: Vec<Node> = node.children_by_field_name("name", &mut c).collect();
                let ident = names.iter().find(|n| n.kind() == "simple_identifier");
                let ty = names.iter().find(|n| n.kind() == "user_type");
                if let (Some(n), Some(t)) =
                    (ident, ty.and_then(|t| type_segments(node_text(*t, src))))
                {
                    out.push((node_text(*n, src).to_string(), t));
                }
            }
            "property_declaration" => {
                let Some(name) = field_text(node, "name", src) else {
                    return;
                };
                let written = generic::child_of_kind(node, &["type_annotation"])
                    .and_then(|a| field_text(a, "name", src))
                    .and_then(type_segments);
                let made = node
                    .child_by_field_name("value")
                    .filter(|v| v.kind() == "call_expression")
                    .and_then(|v| v.named_child(0))
                    .filter(|c| c.kind() == "simple_identifier")
                    .and_then(|c| generic::constructed(node_text(c, src)));
                if let Some(ty) = written.or(made) {
                    out.push((name.to_string(), ty));
                }
            }
            _ => {}
        }
    }
}

/// The declaration's keyword (`class`, `struct`, `extension`, `init`…),
/// attributes and modifiers aside.
fn keyword<'s>(node: Node, src: &'s str) -> &'s str {
    let mut c = node.walk();
    let found = node
        .children(&mut c)
        .find(|n| !n.is_named())
        .map(|n| node_text(n, src))
        .unwrap_or("");
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse, Kind};

    const SRC: &str = "import Foundation
/// A cart of items.
class Cart: Base, Countable {
    var repo: Repo
    init(repo: Repo) { self.repo = repo; setup() }
    func add(_ item: Item) -> Int {
        validate(item)
        self.total()
        repo.save(item)
        Tax.rate(item)
        let r = Repo()
        r.open()
        return helper(1)
    }
    deinit { }
}
struct P { func m() {} }
protocol Countable { func count() -> Int }
extension Cart: Sequence {
    func extra() {}
}
func helper(_ x: Int) -> Int { x }
";

    #[test]
    fn types_extensions_and_functions_are_entities() {
        let p = parse(Lang::Swift, "Cart.swift", SRC);
        let got = p.kinds();
        assert_eq!(
            got,
            [
                ("Cart", Kind::Class, "class"),
                ("Cart.init", Kind::Method, "init"),
                ("Cart.add", Kind::Method, "func"),
                ("Cart.deinit", Kind::Method, "deinit"),
                ("P", Kind::Class, "struct"),
                ("P.m", Kind::Method, "func"),
                ("Countable", Kind::Class, "protocol"),
                ("Countable.count", Kind::Method, "func"),
                ("Cart#2", Kind::Class, "extension"),
                ("Cart.extra", Kind::Method, "func"),
                ("helper", Kind::Function, "func"),
            ]
        );
        assert_eq!(p.entities[0].doc, "A cart of items.");
        let bases: Vec<String> = p.entities[8].bases.iter().map(|b| b.join(".")).collect();
        assert_eq!(bases, ["Sequence"]);
    }

    #[test]
    fn calls_are_typed_by_declarations() {
        let p = parse(Lang::Swift, "Cart.swift", SRC);
        let typed = |t: &str, n: &str| Call::Typed {
            ty: vec![t.to_string()],
            name: n.to_string(),
        };
        assert_eq!(
            p.entities[2].calls,
            [
                Call::Name("validate".into()),
                Call::SelfMethod("total".into()),
                typed("Repo", "save"),
                typed("Tax", "rate"),
                Call::Name("Repo".into()),
                typed("Repo", "open"),
                Call::Name("helper".into()),
            ]
        );
    }
}
