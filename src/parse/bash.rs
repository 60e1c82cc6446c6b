//! Bash: functions, written `f() { … }` or `function f { … }`. A command
//! is a call of its name; `source f` and `. f` with a literal path are
//! file imports.

use super::generic::{self, field_text, Def, DefKind, Grammar};
use super::{node_text, Call, Import, Lang, Language, ParsedFile};
use tree_sitter::Node;

pub struct Bash;

impl Language for Bash {
    fn lang(&self) -> Lang {
        Lang::Bash
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".sh", ".bash"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        generic::parse(self, source)
    }
}

impl Grammar for Bash {
    fn language(&self) -> tree_sitter::Language {
        tree_sitter_bash::LANGUAGE.into()
    }

    fn definition<'t>(&self, node: Node<'t>, src: &str) -> Option<Def<'t>> {
        if node.kind() != "function_definition" {
            return None;
        }
        Some(Def {
            name: field_text(node, "name", src)?.to_string(),
            owner: None,
            kind: DefKind::Function,
            flavor: "function",
            body: node.child_by_field_name("body"),
            bases: Vec::new(),
        })
    }

    fn call(&self, node: Node, src: &str) -> Option<Call> {
        if node.kind() != "command" {
            return None;
        }
        let name = command_word(node, src)?;
        Some(Call::Name(name.to_string()))
    }

    fn imports(&self, node: Node, src: &str) -> Option<Vec<Import>> {
        if node.kind() != "command" || !matches!(command_word(node, src), Some("source" | ".")) {
            return None;
        }
        let arg = node.child_by_field_name("argument")?;
        let text = node_text(arg, src).trim_matches(['"', '\'']);
        // `source "$DIR/lib.sh"`: the literal tail is the path from the
        // script's own directory, as such scripts mean it.
        let path = match text.split_once('/') {
            Some((head, rest)) if head.starts_with('$') => rest,
            _ => text,
        };
        if path.contains('$') {
            return Some(Vec::new());
        }
        Some(vec![Import::File {
            path: path.trim_start_matches("./").to_string(),
            relative: true,
        }])
    }
}

/// A command's name when it is a plain word.
fn command_word<'s>(node: Node, src: &'s str) -> Option<&'s str> {
    let name = node.child_by_field_name("name")?;
    let word = generic::child_of_kind(name, &["word"])?;
    (word.end_byte() == name.end_byte()).then(|| node_text(word, src))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse, Kind};

    #[test]
    fn both_function_forms_are_entities_and_commands_are_calls() {
        let src = "#!/bin/bash\nsource ./lib.sh\n. \"$DIR/util.sh\"\n# Says foo.\nfoo() {\n  bar 1\n  echo x\n}\nfunction baz {\n  foo\n  $(qux)\n}\n";
        let p = parse(Lang::Bash, "run.sh", src);
        let got: Vec<(&str, Kind)> = p
            .entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.kind))
            .collect();
        assert_eq!(got, [("foo", Kind::Function), ("baz", Kind::Function)]);
        assert_eq!(p.entities[0].doc, "Says foo.");
        let name = |n: &str| Call::Name(n.to_string());
        assert_eq!(p.entities[0].calls, [name("bar"), name("echo")]);
        assert_eq!(p.entities[1].calls, [name("foo"), name("qux")]);
        let file = |p: &str| Import::File {
            path: p.to_string(),
            relative: true,
        };
        assert_eq!(p.imports, [file("lib.sh"), file("util.sh")]);
        let up = parse(
            Lang::Bash,
            "bin/x.sh",
            "source \"$DIR/../lib/util.sh\"\n. \"$A/$B.sh\"\n",
        );
        assert_eq!(up.imports, [file("../lib/util.sh")]);
    }
}
