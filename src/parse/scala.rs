//! Scala: classes, case classes, objects, traits, enums, named givens and
//! implicit vals at any depth, and `def`s (declared or defined) in them or
//! at the top.
//! `extends` and `with` are bases.

use super::generic::{self, field_text, type_segments, Def, DefKind, Grammar};
use super::{node_text, Call, Import, Lang, Language, ParsedFile};
use tree_sitter::Node;

pub struct Scala;

impl Language for Scala {
    fn lang(&self) -> Lang {
        Lang::Scala
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".scala", ".sc"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        generic::parse(self, source)
    }
}

impl Grammar for Scala {
    fn language(&self) -> tree_sitter::Language {
        tree_sitter_scala::LANGUAGE.into()
    }

    fn definition<'t>(&self, node: Node<'t>, src: &str) -> Option<Def<'t>> {
        let flavor = match node.kind() {
            "class_definition" if node_text(node, src).trim_start().starts_with("case ") => {
                "case class"
            }
            "class_definition" => "class",
            "object_definition" => "object",
            "trait_definition" => "trait",
            "enum_definition" => "enum",
            "given_definition" => "given",
            "function_definition" | "function_declaration" => "def",
            "val_definition" => return implicit_val(node, src),
            _ => return None,
        };
        let kind = if flavor == "def" {
            DefKind::Function
        } else {
            DefKind::Type
        };
        let bases = node
            .child_by_field_name("extend")
            .map(|e| {
                let mut c = e.walk();
                let found: Vec<Vec<String>> = e
                    .children_by_field_name("type", &mut c)
                    .filter(|t| t.is_named())
                    .filter_map(|t| type_segments(node_text(t, src)))
                    .collect();
                found
            })
            .unwrap_or_default();
        Some(Def {
            // An anonymous given has no name to look it up by.
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
            "call_expression" => {
                let f = node.child_by_field_name("function")?;
                match f.kind() {
                    "identifier" => Some(Call::Name(node_text(f, src).to_string())),
                    "field_expression" => {
                        let name = field_text(f, "field", src)?.to_string();
                        let value = f.child_by_field_name("value")?;
                        let recv = node_text(value, src);
                        Some(match value.kind() {
                            "identifier" if recv == "this" || recv == "super" => {
                                Call::SelfMethod(name)
                            }
                            "identifier" => generic::on_identifier(recv, name),
                            _ => Call::Attr {
                                recv: String::new(),
                                name,
                            },
                        })
                    }
                    _ => None,
                }
            }
            "instance_expression" => {
                let ty = generic::child_of_kind(
                    node,
                    &["type_identifier", "generic_type", "stable_type_identifier"],
                )?;
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
        if node.kind() != "import_declaration" {
            return None;
        }
        let mut c = node.walk();
        let path: Vec<String> = node
            .children_by_field_name("path", &mut c)
            .filter(|p| p.is_named())
            .map(|p| node_text(p, src).to_string())
            .collect();
        if path.is_empty() {
            return Some(Vec::new());
        }
        if generic::child_of_kind(node, &["namespace_wildcard"]).is_some() {
            return Some(vec![Import::Qualified {
                path,
                alias: None,
                wildcard: true,
            }]);
        }
        let Some(selectors) = generic::child_of_kind(node, &["namespace_selectors"]) else {
            return Some(vec![Import::Qualified {
                path,
                alias: None,
                wildcard: false,
            }]);
        };
        // `import a.{B, C => D}`
        let mut out = Vec::new();
        let mut sc = selectors.walk();
        for s in selectors.named_children(&mut sc) {
            let (name, alias) = match s.kind() {
                "identifier" => (node_text(s, src).to_string(), None),
                "arrow_renamed_identifier" | "as_renamed_identifier" => (
                    field_text(s, "name", src).unwrap_or("").to_string(),
                    field_text(s, "alias", src).map(str::to_string),
                ),
                _ => continue,
            };
            let mut p = path.clone();
            p.push(name);
            out.push(Import::Qualified {
                path: p,
                alias,
                wildcard: false,
            });
        }
        Some(out)
    }

    fn declares(&self, node: Node, src: &str, out: &mut Vec<(String, Vec<String>)>) {
        match node.kind() {
            "parameter" | "class_parameter" => {
                if let (Some(n), Some(t)) = (
                    field_text(node, "name", src),
                    field_text(node, "type", src).and_then(type_segments),
                ) {
                    out.push((n.to_string(), t));
                }
            }
            "val_definition" | "var_definition" => {
                let Some(n) =
                    field_text(node, "pattern", src).filter(|n| type_segments(n).is_some())
                else {
                    return;
                };
                let written = field_text(node, "type", src).and_then(type_segments);
                let made = node
                    .child_by_field_name("value")
                    .and_then(|v| match v.kind() {
                        "instance_expression" => generic::child_of_kind(v, &["type_identifier"])
                            .and_then(|t| type_segments(node_text(t, src))),
                        "call_expression" => field_text(v, "function", src)
                            .filter(|f| generic::names_type(f))
                            .and_then(type_segments),
                        _ => None,
                    });
                if let Some(ty) = written.or(made) {
                    out.push((n.to_string(), ty));
                }
            }
            _ => {}
        }
    }
}

/// An `implicit val` or `implicit lazy val`, Scala 2's given: where a
/// typeclass library keeps its instances, and so where their fixes land.
/// One made by `new T { … }` is a type whose defs are its methods
/// (`Decoder.decodeJson.apply`, not the object's twentieth `apply`), with
/// `T` its base; any other is a function whose value is its body. A plain
/// `val` is data, not an entity.
fn implicit_val<'t>(node: Node<'t>, src: &str) -> Option<Def<'t>> {
    if !generic::has_modifier(node, src, "implicit") {
        return None;
    }
    let pattern = node.child_by_field_name("pattern")?;
    if pattern.kind() != "identifier" {
        return None;
    }
    let value = node.child_by_field_name("value")?;
    let template = match value.kind() {
        "instance_expression" => generic::child_of_kind(value, &["template_body"]),
        _ => None,
    };
    let (kind, body, bases) = match template {
        Some(t) => {
            let base = generic::child_of_kind(
                value,
                &["type_identifier", "generic_type", "stable_type_identifier"],
            )
            .and_then(|ty| type_segments(node_text(ty, src)));
            (DefKind::Type, t, base.into_iter().collect())
        }
        None => (DefKind::Function, value, Vec::new()),
    };
    Some(Def {
        name: node_text(pattern, src).to_string(),
        owner: None,
        kind,
        flavor: "implicit val",
        body: Some(body),
        bases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse, Kind};

    const SRC: &str = "package shop.cart
import shop.tax.Tax
import shop.util._
import scala.collection.{Map, Set => S}
/** A cart of items. */
class Cart(repo: Repo) extends Base with Countable {
  def add(item: Item): Int = {
    validate(item)
    this.total()
    repo.save(item)
    Tax.rate(item)
    val r = new Repo()
    r.open()
    helper(1)
  }
}
object Cart { def apply(): Cart = new Cart(Repo()) }
trait Countable { def count: Int }
case class P(x: Int)
given intOrd: Ord[Int] with { def compare(a: Int, b: Int) = 0 }
def helper(x: Int) = x
";

    #[test]
    fn classes_objects_traits_givens_and_defs_are_entities() {
        let p = parse(Lang::Scala, "Cart.scala", SRC);
        let got = p.kinds();
        assert_eq!(
            got,
            [
                ("Cart", Kind::Class, "class"),
                ("Cart.add", Kind::Method, "def"),
                ("Cart#2", Kind::Class, "object"),
                ("Cart.apply", Kind::Method, "def"),
                ("Countable", Kind::Class, "trait"),
                ("Countable.count", Kind::Method, "def"),
                ("P", Kind::Class, "case class"),
                ("intOrd", Kind::Class, "given"),
                ("intOrd.compare", Kind::Method, "def"),
                ("helper", Kind::Function, "def"),
            ]
        );
        assert_eq!(p.entities[0].doc, "A cart of items.");
        let bases: Vec<String> = p.entities[0].bases.iter().map(|b| b.join(".")).collect();
        assert_eq!(bases, ["Base", "Countable"]);
    }

    #[test]
    fn implicit_vals_are_instances_and_plain_vals_are_not_entities() {
        let src = "object Decoder {
  implicit final val decodeJson: Decoder[Json] = new Decoder[Json] {
    final def apply(c: HCursor): Result[Json] = Right(c.value)
  }
  implicit lazy val eqFoo: Eq[Foo] = Eq.fromUniversalEquals
  implicit val encodeFoo: Encoder[Foo] = Encoder.instance { foo => render(foo) }
  val plain = 3
  private val (a, b) = (1, 2)
}
";
        let p = parse(Lang::Scala, "Decoder.scala", src);
        assert_eq!(
            p.kinds(),
            [
                ("Decoder", Kind::Class, "object"),
                ("Decoder.decodeJson", Kind::Class, "implicit val"),
                ("Decoder.decodeJson.apply", Kind::Method, "def"),
                ("Decoder.eqFoo", Kind::Method, "implicit val"),
                ("Decoder.encodeFoo", Kind::Method, "implicit val"),
            ]
        );
        let bases: Vec<String> = p.entities[1].bases.iter().map(|b| b.join(".")).collect();
        assert_eq!(bases, ["Decoder"]);
        assert_eq!((p.entities[4].start_line, p.entities[4].end_line), (6, 6));
        assert!(p.entities[4].calls.contains(&Call::Name("render".into())));
    }

    #[test]
    fn calls_and_selector_imports() {
        let p = parse(Lang::Scala, "Cart.scala", SRC);
        let typed = |t: &str, n: &str| Call::Typed {
            ty: vec![t.to_string()],
            name: n.to_string(),
        };
        assert_eq!(
            p.entities[1].calls,
            [
                Call::Name("validate".into()),
                Call::SelfMethod("total".into()),
                typed("Repo", "save"),
                typed("Tax", "rate"),
                typed("Repo", "Repo"),
                typed("Repo", "open"),
                Call::Name("helper".into()),
            ]
        );
        let q = |p: &[&str], a: Option<&str>, w: bool| Import::Qualified {
            path: p.iter().map(|s| s.to_string()).collect(),
            alias: a.map(str::to_string),
            wildcard: w,
        };
        assert_eq!(
            p.imports,
            [
                q(&["shop", "tax", "Tax"], None, false),
                q(&["shop", "util"], None, true),
                q(&["scala", "collection", "Map"], None, false),
                q(&["scala", "collection", "Set"], Some("S"), false),
            ]
        );
    }
}
