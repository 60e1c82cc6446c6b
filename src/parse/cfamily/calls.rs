//! The calls a definition makes, read from its body (typed where a
//! declaration says what the receiver is) or, for a function-like macro,
//! from its text.

use super::blank::{word_len, KEYWORDS};
use super::normalize;
use crate::parse::{node_text, Call};
use std::collections::{HashMap, HashSet};
use tree_sitter::Node;

/// Declared types of parameters, locals and fields, by name.
pub(super) type Types = HashMap<String, Vec<String>>;

/// The names a macro's text calls: a word followed by `(`, neither one of
/// the macro's parameters, a keyword, a member, nor half of a `##` paste.
pub(super) fn macro_calls(text: &str, params: &HashSet<&str>) -> Vec<Call> {
    // Operators spelt as words, which C and C++ do not reserve.
    const OPERATORS: &[&str] = &[
        "defined",
        "typeof",
        "__typeof__",
        "_Generic",
        "static_assert",
        "_Static_assert",
    ];
    let mut out = Vec::new();
    for (at, word) in identifiers(text) {
        let end = at + word.len();
        let rest = text[end..].trim_start();
        let before = text[..at].trim_end();
        let pasted = before.ends_with("##");
        let member = before.ends_with('.') || before.ends_with("->");
        if rest.starts_with('(')
            && !pasted
            && !member
            && !params.contains(word)
            && !KEYWORDS.contains(&word)
            && !OPERATORS.contains(&word)
            && !word.starts_with(|c: char| c.is_ascii_digit())
        {
            out.push(Call::Name(word.to_string()));
        }
    }
    out
}

/// Every identifier of a macro's text with its offset, past string and
/// character literals and comments.
fn identifiers(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < bytes.len() && bytes[i] != c {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let end = bytes[i..].windows(2).position(|w| w == [b'*', b'/']);
            i = end.map_or(bytes.len(), |e| i + e + 2);
        } else if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            i = bytes[i..]
                .iter()
                .position(|b| *b == b'\n')
                .map_or(bytes.len(), |e| i + e);
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let n = word_len(&text[i..]);
            out.push((i, &text[i..i + n]));
            i += n;
        } else {
            i += 1;
        }
    }
    out
}

/// A type as written, without qualifiers, pointers or template arguments.
fn type_path(ty: Node, src: &str) -> Option<Vec<String>> {
    match ty.kind() {
        "type_identifier" | "qualified_identifier" | "template_type" => {
            let n = normalize(node_text(ty, src));
            Some(n.split("::").map(str::to_string).collect())
        }
        _ => None,
    }
}

pub(super) fn declare_params(params: Node, src: &str, types: &mut Types) {
    let mut c = params.walk();
    for p in params.named_children(&mut c) {
        let (Some(ty), Some(d)) = (
            p.child_by_field_name("type")
                .and_then(|t| type_path(t, src)),
            p.child_by_field_name("declarator"),
        ) else {
            continue;
        };
        if let Some(n) = plain_name(d, src) {
            types.insert(n, ty);
        }
    }
}

/// The variable a declarator names: `x`, `*x`, `&x`, `x = …`, `x[3]`.
fn plain_name(decl: Node, src: &str) -> Option<String> {
    let mut d = decl;
    loop {
        match d.kind() {
            "identifier" => return Some(node_text(d, src).to_string()),
            "pointer_declarator"
            | "reference_declarator"
            | "init_declarator"
            | "array_declarator" => {
                d = d
                    .child_by_field_name("declarator")
                    .or_else(|| d.named_child(0))?;
            }
            _ => return None,
        }
    }
}

/// The calls under a body, in source order, typed where a declaration
/// says what the receiver is. Lambdas belong to the enclosing function.
pub(super) fn calls_in(root: Node, src: &str, types: &mut Types) -> Vec<Call> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        match node.kind() {
            "call_expression" => out.extend(call_of(node, src, types)),
            "declaration" => {
                out.extend(looped_call(node, src));
                if let Some(ty) = node
                    .child_by_field_name("type")
                    .and_then(|t| type_path(t, src))
                {
                    let mut c = node.walk();
                    for d in node.children_by_field_name("declarator", &mut c) {
                        if let Some(n) = plain_name(d, src) {
                            types.insert(n, ty.clone());
                        }
                    }
                }
            }
            "new_expression" => {
                if let Some(ty) = node
                    .child_by_field_name("type")
                    .and_then(|t| type_path(t, src))
                {
                    let name = ty.last().cloned().unwrap_or_default();
                    out.push(Call::Typed { ty, name });
                }
            }
            "string_literal" | "raw_string_literal" | "comment" | "char_literal" => continue,
            _ => {}
        }
        let before = stack.len();
        stack.extend(node.named_children(&mut cursor));
        stack[before..].reverse();
    }
    out
}

/// `for_each_cpu(c)\n    f(c);` parses as a declaration of `f` with a
/// macro for its type; in a body that is a loop macro over a call.
fn looped_call(decl: Node, src: &str) -> Option<Call> {
    let ty = decl.child_by_field_name("type")?;
    let f = decl.child_by_field_name("declarator")?;
    let name = f.child_by_field_name("declarator")?;
    let looped = ty.kind() == "macro_type_specifier"
        && f.kind() == "function_declarator"
        && name.kind() == "identifier";
    looped.then(|| Call::Name(node_text(name, src).to_string()))
}

fn call_of(node: Node, src: &str, types: &Types) -> Option<Call> {
    let func = node.child_by_field_name("function")?;
    match func.kind() {
        "identifier" => Some(Call::Name(node_text(func, src).to_string())),
        "template_function" => Some(Call::Name(
            node_text(func.child_by_field_name("name")?, src).to_string(),
        )),
        "qualified_identifier" => {
            let mut segs: Vec<String> = normalize(node_text(func, src))
                .split("::")
                .map(str::to_string)
                .collect();
            let name = segs.pop()?;
            segs.retain(|s| !s.is_empty());
            if segs.is_empty() {
                return Some(Call::Name(name));
            }
            Some(Call::Typed { ty: segs, name })
        }
        "field_expression" => {
            let field = func.child_by_field_name("field")?;
            let name = normalize(node_text(field, src));
            let name = name.rsplit("::").next().unwrap_or(&name).to_string();
            let arg = func.child_by_field_name("argument")?;
            match arg.kind() {
                "this" => Some(Call::SelfMethod(name)),
                "identifier" => {
                    let recv = node_text(arg, src);
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
                _ => Some(Call::Attr {
                    recv: String::new(),
                    name,
                }),
            }
        }
        _ => None,
    }
}
