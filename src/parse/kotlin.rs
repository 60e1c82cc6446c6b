//! Kotlin: top-level functions, classes, interfaces, objects, companion
//! objects (`C.Companion`, or their own name), their methods and
//! secondary constructors, and extension functions, named after the type
//! they extend (`fun String.shout()` is `String.shout`).

use super::generic::{self, field_text, type_segments, Def, DefKind, Grammar};
use super::{node_text, Call, Import, Lang, Language, ParsedFile};
use tree_sitter::Node;

pub struct Kotlin;

impl Language for Kotlin {
    fn lang(&self) -> Lang {
        Lang::Kotlin
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".kt", ".kts"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        generic::parse(self, &without_annotations(source))
    }
}

/// The source with every annotation (`@Serializable`, `@OptIn(X::class)`,
/// `@file:JvmName("x")`) blanked to spaces, newlines kept, so lines and
/// byte offsets stay. The grammar reads an annotation on its own line
/// before a top-level declaration as an expression and loses the
/// declaration (`@DslMarker⏎annotation class M`); annotations name
/// nothing rpg links.
fn without_annotations(src: &str) -> std::borrow::Cow<'_, str> {
    let b = src.as_bytes();
    let starts = |i: usize| {
        b[i] == b'@'
            && b.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic())
            && (i == 0
                || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'"'))
    };
    if !(0..b.len()).any(starts) {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        if !starts(i) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'.' | b':')) {
            j += 1;
        }
        if b.get(j) == Some(&b'(') {
            let mut depth = 0usize;
            let mut in_str = false;
            while j < b.len() {
                match b[j] {
                    b'"' => in_str = !in_str,
                    b'\\' if in_str => j += 1,
                    b'(' if !in_str => depth += 1,
                    b')' if !in_str => {
                        depth -= 1;
                        if depth == 0 {
                            j += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        for c in &mut out[i..j.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        i = j;
    }
    // Only ASCII was blanked, whole: the bytes are still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| src.to_string()))
}

impl Grammar for Kotlin {
    fn language(&self) -> tree_sitter::Language {
        tree_sitter_kotlin_ng::LANGUAGE.into()
    }

    fn definition<'t>(&self, node: Node<'t>, src: &str) -> Option<Def<'t>> {
        let body = || generic::child_of_kind(node, &["class_body", "enum_class_body"]);
        match node.kind() {
            "class_declaration" => {
                let flavor = match first_word(node, src) {
                    "interface" => "interface",
                    _ if generic::has_modifier(node, src, "enum") => "enum class",
                    _ if generic::has_modifier(node, src, "data") => "data class",
                    _ => "class",
                };
                Some(Def {
                    name: field_text(node, "name", src)?.to_string(),
                    owner: None,
                    kind: DefKind::Type,
                    flavor,
                    body: body(),
                    bases: supertypes(node, src),
                })
            }
            "object_declaration" => Some(Def {
                name: field_text(node, "name", src)?.to_string(),
                owner: None,
                kind: DefKind::Type,
                flavor: "object",
                body: body(),
                bases: supertypes(node, src),
            }),
            "companion_object" => Some(Def {
                name: field_text(node, "name", src)
                    .unwrap_or("Companion")
                    .to_string(),
                owner: None,
                kind: DefKind::Type,
                flavor: "companion object",
                body: body(),
                bases: supertypes(node, src),
            }),
            "function_declaration" => {
                let name = node.child_by_field_name("name")?;
                // An extension's receiver type is written before its name.
                let receiver = {
                    let mut c = node.walk();
                    let found = node
                        .named_children(&mut c)
                        .take_while(|n| n.start_byte() < name.start_byte())
                        .filter(|n| matches!(n.kind(), "user_type" | "nullable_type"))
                        .last();
                    found
                };
                Some(Def {
                    name: node_text(name, src).to_string(),
                    owner: receiver
                        .and_then(|r| type_segments(node_text(r, src)))
                        .map(|s| s.join(".")),
                    kind: DefKind::Function,
                    flavor: if receiver.is_some() {
                        "extension fun"
                    } else {
                        "fun"
                    },
                    body: generic::child_of_kind(node, &["function_body"]),
                    bases: Vec::new(),
                })
            }
            "secondary_constructor" => Some(Def {
                name: "constructor".to_string(),
                owner: None,
                kind: DefKind::Function,
                flavor: "constructor",
                body: None,
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
            "identifier" => Some(Call::Name(node_text(callee, src).to_string())),
            "navigation_expression" => {
                let parts: Vec<Node> = {
                    let mut c = callee.walk();
                    let found = callee.named_children(&mut c).collect();
                    found
                };
                let (last, before) = parts.split_last()?;
                if last.kind() != "identifier" {
                    return None;
                }
                let name = node_text(*last, src).to_string();
                Some(match before {
                    [r] if r.kind() == "this_expression" || r.kind() == "super_expression" => {
                        Call::SelfMethod(name)
                    }
                    [r] if r.kind() == "identifier" => {
                        generic::on_identifier(node_text(*r, src), name)
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
        if node.kind() != "import" {
            return None;
        }
        let path = generic::child_of_kind(node, &["qualified_identifier", "identifier"])?;
        let segs = type_segments(node_text(path, src))?;
        let text = node_text(node, src);
        let alias = {
            let mut c = node.walk();
            let found = node
                .named_children(&mut c)
                .filter(|n| n.kind() == "identifier" && n.start_byte() > path.end_byte())
                .last()
                .map(|n| node_text(n, src).to_string());
            found
        };
        Some(vec![Import::Qualified {
            path: segs,
            alias,
            wildcard: text.trim_end().ends_with('*'),
        }])
    }

    fn declares(&self, node: Node, src: &str, out: &mut Vec<(String, Vec<String>)>) {
        match node.kind() {
            "parameter" | "class_parameter" => {
                let name = generic::child_of_kind(node, &["identifier"]);
                let ty = generic::child_of_kind(node, &["user_type", "nullable_type"]);
                if let (Some(n), Some(t)) =
                    (name, ty.and_then(|t| type_segments(node_text(t, src))))
                {
                    out.push((node_text(n, src).to_string(), t));
                }
            }
            "property_declaration" => {
                let Some(var) = generic::child_of_kind(node, &["variable_declaration"]) else {
                    return;
                };
                let Some(name) = generic::child_of_kind(var, &["identifier"]) else {
                    return;
                };
                let written = generic::child_of_kind(var, &["user_type", "nullable_type"])
                    .and_then(|t| type_segments(node_text(t, src)));
                // `val r = Repo()`: a call of a capitalised name makes one.
                let made = generic::child_of_kind(node, &["call_expression"])
                    .and_then(|c| c.named_child(0))
                    .filter(|c| c.kind() == "identifier")
                    .and_then(|c| generic::constructed(node_text(c, src)));
                if let Some(ty) = written.or(made) {
                    out.push((node_text(name, src).to_string(), ty));
                }
            }
            _ => {}
        }
    }
}

/// The first keyword of a declaration, modifiers aside.
fn first_word<'s>(node: Node, src: &'s str) -> &'s str {
    let mut c = node.walk();
    let found = node
        .children(&mut c)
        .find(|n| !n.is_named())
        .map(|n| node_text(n, src))
        .unwrap_or("");
    found
}

/// The supertypes after `:`.
fn supertypes(node: Node, src: &str) -> Vec<Vec<String>> {
    let Some(list) = generic::child_of_kind(node, &["delegation_specifiers"]) else {
        return Vec::new();
    };
    generic::descendants_of_kind(list, &["user_type"])
        .into_iter()
        .filter_map(|t| type_segments(node_text(t, src)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse, Kind};

    const SRC: &str = "package com.shop.cart
import com.shop.tax.Tax
import com.shop.util.*
import java.util.List as JList
/** A cart of items. */
class Cart(val repo: Repo) : Base(), Countable {
    fun add(item: Item): Int {
        validate(item)
        this.total()
        repo.save(item)
        Tax.rate(item)
        val r = Repo()
        r.open()
        return helper(1)
    }
    companion object {
        fun create(): Cart = Cart(Repo())
    }
    constructor(x: Int) : this(Repo())
}
object Registry {
    fun get() = 1
}
interface Countable {
    fun count(): Int
}
fun String.shout(): String = uppercase()
fun helper(x: Int) = x
";

    #[test]
    fn classes_objects_companions_and_extensions_are_entities() {
        let p = parse(Lang::Kotlin, "Cart.kt", SRC);
        let got = p.kinds();
        assert_eq!(
            got,
            [
                ("Cart", Kind::Class, "class"),
                ("Cart.add", Kind::Method, "fun"),
                ("Cart.Companion", Kind::Class, "companion object"),
                ("Cart.Companion.create", Kind::Method, "fun"),
                ("Cart.constructor", Kind::Method, "constructor"),
                ("Registry", Kind::Class, "object"),
                ("Registry.get", Kind::Method, "fun"),
                ("Countable", Kind::Class, "interface"),
                ("Countable.count", Kind::Method, "fun"),
                ("String.shout", Kind::Method, "extension fun"),
                ("helper", Kind::Function, "fun"),
            ]
        );
        assert_eq!(p.entities[0].doc, "A cart of items.");
        let bases: Vec<String> = p.entities[0].bases.iter().map(|b| b.join(".")).collect();
        assert_eq!(bases, ["Base", "Countable"]);
        assert_eq!(p.entities[9].owner_type.as_deref(), Some("String"));
    }

    #[test]
    fn annotated_top_level_declarations_are_read() {
        let src = "package a\n\n@DslMarker\nannotation class Marker\n\n/** The app. */\n@OptIn(X::class, \"a)\")\n@Serializable\nopen class App protected constructor() {\n    @JvmStatic fun run(@Named(\"x\") y: Int) = this@App.go(\"a@b\")\n}\n";
        let p = parse(Lang::Kotlin, "A.kt", src);
        let got: Vec<(&str, u32)> = p
            .entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.start_line))
            .collect();
        assert_eq!(got, [("Marker", 4), ("App", 9), ("App.run", 10)]);
        assert_eq!(p.entities[1].doc, "The app.");
        assert!(!p.has_errors);
    }

    #[test]
    fn calls_are_typed_by_declarations_and_imports_keep_aliases() {
        let p = parse(Lang::Kotlin, "Cart.kt", SRC);
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
                Call::Name("Repo".into()),
                typed("Repo", "open"),
                Call::Name("helper".into()),
            ]
        );
        assert_eq!(
            p.imports[1..],
            [
                Import::Qualified {
                    path: vec!["com".into(), "shop".into(), "util".into()],
                    alias: None,
                    wildcard: true
                },
                Import::Qualified {
                    path: vec!["java".into(), "util".into(), "List".into()],
                    alias: Some("JList".into()),
                    wildcard: false
                },
            ]
        );
    }
}
