//! Ruby: modules, classes (`class A::B` is `A.B`), methods, singleton
//! methods (`def self.x`, and `def x` inside `class << self`, both `C.x`),
//! and `define_method(:name)` with a literal name. `include` and `extend`
//! are bases; `require` and `require_relative` are file imports.

use super::generic::{self, field_text, type_segments, Def, DefKind, Grammar};
use super::{node_text, Call, Import, Lang, Language, ParsedFile};
use tree_sitter::Node;

pub struct Ruby;

impl Language for Ruby {
    fn lang(&self) -> Lang {
        Lang::Ruby
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".rb", ".rake"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        generic::parse(self, source)
    }
    /// Ruby declares no method without a body, and its bodies need no braces.
    fn declares_without_body(&self, _text: &str) -> bool {
        false
    }
}

impl Grammar for Ruby {
    fn language(&self) -> tree_sitter::Language {
        tree_sitter_ruby::LANGUAGE.into()
    }

    fn definition<'t>(&self, node: Node<'t>, src: &str) -> Option<Def<'t>> {
        let (flavor, kind) = match node.kind() {
            "class" => ("class", DefKind::Type),
            "module" => ("module", DefKind::Type),
            "method" => ("def", DefKind::Function),
            "singleton_method" => ("def self", DefKind::Function),
            "call" => return define_method(node, src),
            _ => return None,
        };
        let written = node.child_by_field_name("name")?;
        // `class A::B`: B, owned by A.
        let (owner, name) = match written.kind() {
            "scope_resolution" => {
                let segs = type_segments(node_text(written, src))?;
                let (last, first) = segs.split_last()?;
                (
                    Some(first.join(".")).filter(|o| !o.is_empty()),
                    last.clone(),
                )
            }
            _ => (None, node_text(written, src).to_string()),
        };
        let mut bases = Vec::new();
        if let Some(sup) = node.child_by_field_name("superclass") {
            bases.extend(
                generic::child_of_kind(sup, &["constant", "scope_resolution"])
                    .and_then(|c| type_segments(node_text(c, src))),
            );
        }
        if kind == DefKind::Type {
            bases.extend(mixins(node, src));
        }
        Some(Def {
            name,
            owner,
            kind,
            flavor,
            body: node.child_by_field_name("body"),
            bases,
        })
    }

    fn call(&self, node: Node, src: &str) -> Option<Call> {
        // A bare name standing as a statement calls a method: `close`.
        if node.kind() == "identifier" {
            let statement = node.parent().is_some_and(|p| p.kind() == "body_statement");
            return statement.then(|| Call::Name(node_text(node, src).to_string()));
        }
        if node.kind() != "call" {
            return None;
        }
        let name = field_text(node, "method", src)?.to_string();
        if MIXINS.contains(&name.as_str()) {
            return None;
        }
        Some(match node.child_by_field_name("receiver") {
            None => Call::Name(name),
            Some(r) if r.kind() == "self" => Call::SelfMethod(name),
            Some(r) if matches!(r.kind(), "constant" | "scope_resolution") => Call::Typed {
                ty: type_segments(node_text(r, src))?,
                name,
            },
            Some(r) if r.kind() == "identifier" => Call::Attr {
                recv: node_text(r, src).to_string(),
                name,
            },
            Some(_) => Call::Attr {
                recv: String::new(),
                name,
            },
        })
    }

    fn imports(&self, node: Node, src: &str) -> Option<Vec<Import>> {
        if node.kind() != "call" || node.child_by_field_name("receiver").is_some() {
            return None;
        }
        let relative = match field_text(node, "method", src)? {
            "require_relative" => true,
            "require" | "load" => false,
            _ => return None,
        };
        let arg = node.child_by_field_name("arguments")?.named_child(0)?;
        // Only a literal path names a file.
        if arg.kind() != "string" || arg.named_child_count() != 1 {
            return Some(Vec::new());
        }
        let path = node_text(arg.named_child(0)?, src).to_string();
        Some(vec![Import::File { path, relative }])
    }

    fn declares(&self, node: Node, src: &str, out: &mut Vec<(String, Vec<String>)>) {
        // `r = Repo.new`
        if node.kind() != "assignment" {
            return;
        }
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left"),
            node.child_by_field_name("right"),
        ) else {
            return;
        };
        if left.kind() != "identifier"
            || right.kind() != "call"
            || field_text(right, "method", src) != Some("new")
        {
            return;
        }
        if let Some(ty) = right
            .child_by_field_name("receiver")
            .filter(|r| matches!(r.kind(), "constant" | "scope_resolution"))
            .and_then(|r| type_segments(node_text(r, src)))
        {
            out.push((node_text(left, src).to_string(), ty));
        }
    }
}

/// Calls that mix a module into a class.
const MIXINS: &[&str] = &["include", "extend", "prepend"];

/// The modules a class or module body includes, extends or prepends.
fn mixins(node: Node, src: &str) -> Vec<Vec<String>> {
    let Some(body) = node.child_by_field_name("body") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut c = body.walk();
    for call in body.named_children(&mut c).filter(|n| n.kind() == "call") {
        if call.child_by_field_name("receiver").is_some()
            || !field_text(call, "method", src).is_some_and(|m| MIXINS.contains(&m))
        {
            continue;
        }
        if let Some(args) = call.child_by_field_name("arguments") {
            let mut ac = args.walk();
            out.extend(
                args.named_children(&mut ac)
                    .filter(|a| matches!(a.kind(), "constant" | "scope_resolution"))
                    .filter_map(|a| type_segments(node_text(a, src))),
            );
        }
    }
    out
}

/// `define_method(:name) { … }` with a literal name.
fn define_method<'t>(node: Node<'t>, src: &str) -> Option<Def<'t>> {
    if field_text(node, "method", src)? != "define_method"
        || node.child_by_field_name("receiver").is_some()
    {
        return None;
    }
    let arg = node.child_by_field_name("arguments")?.named_child(0)?;
    let name = match arg.kind() {
        "simple_symbol" => node_text(arg, src).trim_start_matches(':').to_string(),
        "string" if arg.named_child_count() == 1 => node_text(arg.named_child(0)?, src).to_string(),
        _ => return None,
    };
    Some(Def {
        name,
        owner: None,
        kind: DefKind::Function,
        flavor: "define_method",
        body: node.child_by_field_name("block"),
        bases: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse, Kind};

    const SRC: &str = "require 'json'
require_relative 'util/helper'
module Shop
  # A cart of items.
  class Cart < Base
    include Enumerable
    extend Helpers
    def add(item)
      validate(item)
      self.total
      @items.push(item)
      Tax.rate(item)
      r = Repo.new
      r.open
    end
    def self.build
      new
    end
    class << self
      def create; end
    end
    define_method(:dyn) { 1 }
  end
end
class Shop::Order; def total = 1; end
";

    #[test]
    fn modules_classes_and_every_kind_of_method_are_entities() {
        let p = parse(Lang::Ruby, "cart.rb", SRC);
        let got = p.kinds();
        assert_eq!(
            got,
            [
                ("Shop", Kind::Class, "module"),
                ("Shop.Cart", Kind::Class, "class"),
                ("Shop.Cart.add", Kind::Method, "def"),
                ("Shop.Cart.build", Kind::Method, "def self"),
                ("Shop.Cart.create", Kind::Method, "def"),
                ("Shop.Cart.dyn", Kind::Method, "define_method"),
                ("Shop.Order", Kind::Class, "class"),
                ("Shop.Order.total", Kind::Method, "def"),
            ]
        );
        let cart = &p.entities[1];
        assert_eq!(cart.doc, "A cart of items.");
        let bases: Vec<String> = cart.bases.iter().map(|b| b.join("::")).collect();
        assert_eq!(bases, ["Base", "Enumerable", "Helpers"]);
    }

    #[test]
    fn calls_and_requires() {
        let p = parse(Lang::Ruby, "cart.rb", SRC);
        let typed = |t: &str, n: &str| Call::Typed {
            ty: vec![t.to_string()],
            name: n.to_string(),
        };
        assert_eq!(
            p.entities[2].calls,
            [
                Call::Name("validate".into()),
                Call::SelfMethod("total".into()),
                Call::Attr {
                    recv: String::new(),
                    name: "push".into()
                },
                typed("Tax", "rate"),
                typed("Repo", "new"),
                typed("Repo", "open"),
            ]
        );
        assert_eq!(
            p.imports,
            [
                Import::File {
                    path: "json".into(),
                    relative: false
                },
                Import::File {
                    path: "util/helper".into(),
                    relative: true
                },
            ]
        );
    }
}
