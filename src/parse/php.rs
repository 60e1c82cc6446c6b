//! PHP: functions, classes, interfaces, traits and enums, and their
//! methods (`Class.method`). Namespaces and `use` are imports; `require`
//! and `include` of a literal path are file imports.

use super::generic::{self, field_text, type_segments, Def, DefKind, Grammar};
use super::{node_text, Call, Import, Lang, Language, ParsedFile};
use tree_sitter::Node;

pub struct Php;

impl Language for Php {
    fn lang(&self) -> Lang {
        Lang::Php
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".php"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        generic::parse(self, source)
    }
}

impl Grammar for Php {
    fn language(&self) -> tree_sitter::Language {
        tree_sitter_php::LANGUAGE_PHP.into()
    }

    fn definition<'t>(&self, node: Node<'t>, src: &str) -> Option<Def<'t>> {
        let flavor = match node.kind() {
            "class_declaration" => "class",
            "interface_declaration" => "interface",
            "trait_declaration" => "trait",
            "enum_declaration" => "enum",
            "function_definition" => "function",
            "method_declaration" => "method",
            _ => return None,
        };
        let kind = match flavor {
            "function" | "method" => DefKind::Function,
            _ => DefKind::Type,
        };
        let mut bases = Vec::new();
        let mut c = node.walk();
        for part in node.named_children(&mut c) {
            if matches!(part.kind(), "base_clause" | "class_interface_clause") {
                bases.extend(names_in(part, src));
            }
        }
        // `use SomeTrait;` in a class body mixes the trait in.
        if let Some(body) = node.child_by_field_name("body") {
            let mut c = body.walk();
            for u in body
                .named_children(&mut c)
                .filter(|u| u.kind() == "use_declaration")
            {
                bases.extend(names_in(u, src));
            }
        }
        Some(Def {
            name: field_text(node, "name", src)?.to_string(),
            owner: None,
            kind,
            flavor,
            body: node.child_by_field_name("body"),
            bases,
        })
    }

    fn call(&self, node: Node, src: &str) -> Option<Call> {
        match node.kind() {
            "function_call_expression" => {
                let f = node.child_by_field_name("function")?;
                let segs = type_segments(node_text(f, src))?;
                Some(Call::Name(segs.last()?.clone()))
            }
            "member_call_expression" | "nullsafe_member_call_expression" => {
                let name = field_text(node, "name", src)?.to_string();
                let object = node.child_by_field_name("object")?;
                let recv = node_text(object, src);
                Some(match recv {
                    "$this" => Call::SelfMethod(name),
                    r if object.kind() == "variable_name" => Call::Attr {
                        recv: r.trim_start_matches('$').to_string(),
                        name,
                    },
                    _ => Call::Attr {
                        recv: String::new(),
                        name,
                    },
                })
            }
            "scoped_call_expression" => {
                let name = field_text(node, "name", src)?.to_string();
                let scope = node.child_by_field_name("scope")?;
                Some(match node_text(scope, src) {
                    "self" | "static" | "parent" => Call::SelfMethod(name),
                    s => Call::Typed {
                        ty: type_segments(s)?,
                        name,
                    },
                })
            }
            "object_creation_expression" => {
                let ty = generic::child_of_kind(node, &["name", "qualified_name"])?;
                let ty = type_segments(node_text(ty, src))?;
                Some(Call::Typed {
                    name: ty.last()?.clone(),
                    ty,
                })
            }
            _ => None,
        }
    }

    fn imports(&self, node: Node, src: &str) -> Option<Vec<Import>> {
        match node.kind() {
            "namespace_use_declaration" => {
                let mut out = Vec::new();
                for clause in generic::descendants_of_kind(node, &["namespace_use_clause"]) {
                    let Some(target) = generic::child_of_kind(clause, &["qualified_name", "name"])
                    else {
                        continue;
                    };
                    if let Some(path) = type_segments(node_text(target, src)) {
                        out.push(Import::Qualified {
                            path,
                            alias: field_text(clause, "alias", src).map(str::to_string),
                            wildcard: false,
                        });
                    }
                }
                Some(out)
            }
            "require_expression"
            | "require_once_expression"
            | "include_expression"
            | "include_once_expression" => {
                // `require __DIR__ . '/x.php'` and `require 'x.php'`: the
                // literal part is the path.
                let lit = generic::descendants_of_kind(node, &["string", "encapsed_string"]);
                let path = lit
                    .first()
                    .map(|s| node_text(*s, src).trim_matches(['\'', '"']))?;
                let relative =
                    path.starts_with('/') || path.starts_with("./") || path.starts_with("../");
                Some(vec![Import::File {
                    path: path.trim_start_matches('/').to_string(),
                    relative,
                }])
            }
            _ => None,
        }
    }

    fn declares(&self, node: Node, src: &str, out: &mut Vec<(String, Vec<String>)>) {
        match node.kind() {
            "simple_parameter" | "property_promotion_parameter" => {
                if let (Some(ty), Some(name)) = (
                    field_text(node, "type", src).and_then(type_segments),
                    field_text(node, "name", src),
                ) {
                    out.push((name.trim_start_matches('$').to_string(), ty));
                }
            }
            "assignment_expression" => {
                let (Some(left), Some(right)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ) else {
                    return;
                };
                if left.kind() == "variable_name" && right.kind() == "object_creation_expression" {
                    if let Some(ty) = generic::child_of_kind(right, &["name", "qualified_name"])
                        .and_then(|t| type_segments(node_text(t, src)))
                    {
                        out.push((node_text(left, src).trim_start_matches('$').to_string(), ty));
                    }
                }
            }
            _ => {}
        }
    }
}

/// The class names listed in an `extends`, `implements` or `use` clause.
fn names_in(node: Node, src: &str) -> Vec<Vec<String>> {
    let mut c = node.walk();
    let found: Vec<Vec<String>> = node
        .named_children(&mut c)
        .filter(|n| matches!(n.kind(), "name" | "qualified_name"))
        .filter_map(|n| type_segments(node_text(n, src)))
        .collect();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse, Kind};

    const SRC: &str = r#"<?php
namespace App\Models;
use App\Support\Helper;
use Foo\Bar as Baz;
require_once __DIR__ . '/util.php';
function top($a) { return helper($a); }
/** A user. */
class User extends Model implements Countable {
    use Notifiable;
    public function save(Repo $r) {
        $this->validate();
        $r->store($this);
        self::make();
        Helper::log("x");
        $x = new Repo();
        $x->open();
    }
}
interface I { public function m(); }
trait T { function t() {} }
enum Suit: string { case H = 'h'; public function color() {} }
"#;

    #[test]
    fn classes_traits_and_their_methods_are_entities() {
        let p = parse(Lang::Php, "User.php", SRC);
        let got: Vec<(&str, Kind)> = p
            .entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.kind))
            .collect();
        assert_eq!(
            got,
            [
                ("top", Kind::Function),
                ("User", Kind::Class),
                ("User.save", Kind::Method),
                ("I", Kind::Class),
                ("I.m", Kind::Method),
                ("T", Kind::Class),
                ("T.t", Kind::Method),
                ("Suit", Kind::Class),
                ("Suit.color", Kind::Method),
            ]
        );
        let user = &p.entities[1];
        assert_eq!(user.doc, "A user.");
        let names: Vec<String> = user.bases.iter().map(|b| b.join("\\")).collect();
        assert_eq!(names, ["Model", "Countable", "Notifiable"]);
    }

    #[test]
    fn calls_and_imports_are_read_as_php_writes_them() {
        let p = parse(Lang::Php, "User.php", SRC);
        let typed = |t: &str, n: &str| Call::Typed {
            ty: vec![t.to_string()],
            name: n.to_string(),
        };
        assert_eq!(
            p.entities[2].calls,
            [
                Call::SelfMethod("validate".into()),
                typed("Repo", "store"),
                Call::SelfMethod("make".into()),
                typed("Helper", "log"),
                typed("Repo", "Repo"),
                typed("Repo", "open"),
            ]
        );
        assert_eq!(
            p.imports,
            [
                Import::Qualified {
                    path: vec!["App".into(), "Support".into(), "Helper".into()],
                    alias: None,
                    wildcard: false
                },
                Import::Qualified {
                    path: vec!["Foo".into(), "Bar".into()],
                    alias: Some("Baz".into()),
                    wildcard: false
                },
                Import::File {
                    path: "util.php".into(),
                    relative: true
                },
            ]
        );
    }
}
