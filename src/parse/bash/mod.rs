//! Bash, and the shells that share its syntax (zsh, ksh): functions,
//! written `f() { … }` or `function f { … }`. A command
//! is a call of its name; `source f` and `. f` with a literal path are
//! file imports.

use super::generic::{self, field_text, Def, DefKind, Grammar};
use super::{node_text, Call, Import, Lang, Language, ParsedFile};
use tree_sitter::{Node, Tree};

mod spans;

pub struct Bash;

impl Language for Bash {
    fn lang(&self) -> Lang {
        Lang::Bash
    }
    fn extensions(&self) -> &'static [&'static str] {
        // Zsh's and ksh's scripts, plugins and themes define functions as
        // bash does; the grammar skips what only zsh spells (`${(j:,:)x}`)
        // and keeps the definitions around it.
        &[".sh", ".bash", ".zsh", ".zsh-theme", ".ksh"]
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

    /// A script tree-sitter-bash cannot read whole (zsh's, mostly) is read
    /// function by function, then the rest, without zsh's expansion flags.
    /// A function whose own body it still cannot read is kept with its
    /// header and closing brace alone: its lines, name and comment,
    /// without the calls inside.
    fn parts(&self, src: &str) -> Vec<Tree> {
        let found = spans::functions(src);
        if found.is_empty() {
            return Vec::new();
        }
        let lines = super::line_starts(src);
        let tree = |ranges: &[std::ops::Range<usize>]| {
            let read = spans::without_zsh_syntax(src, ranges);
            super::syntax_tree_in(self.language(), src, &lines, &read)
        };
        let mut out = Vec::with_capacity(found.len() + 1);
        for span in &found {
            let whole = tree(std::slice::from_ref(&span.whole));
            let read = whole.filter(|t| defines_at(t.root_node(), span.open));
            let hollow = || {
                let end = span.whole.end;
                tree(&[span.whole.start..span.open + 1, end - 1..end])
            };
            out.extend(read.or_else(hollow));
        }
        // No ranges would mean the whole text to tree-sitter.
        let rest = spans::outside(&found, src.len());
        if !rest.is_empty() {
            out.extend(tree(&rest));
        }
        out
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

/// Whether a function definition under `root` has its body open at byte
/// `open`.
fn defines_at(root: Node, open: usize) -> bool {
    let mut c = root.walk();
    let found = root.named_children(&mut c).any(|n| {
        n.kind() == "function_definition"
            && n.child_by_field_name("body")
                .is_some_and(|b| b.start_byte() == open)
    });
    found
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

    #[test]
    fn a_zsh_script_the_grammar_cannot_read_whole_keeps_every_function() {
        let src = "(( ! ${+FOO_STYLE} )) && typeset -g FOO_STYLE=bold\n\
                   # Joins its arguments.\n\
                   join() {\n  print ${(j:,:)@}\n}\n\
                   function helper {\n  (( $+functions[x] )) && x\n  local -a a=(${(s: :)1})\n}\n\
                   # Says hi.\n\
                   greet() {\n  printf hi\n  helper\n}\n\
                   source ${0:h}/lib.zsh\n";
        let whole = super::super::syntax_tree(Bash.language(), src).unwrap();
        assert!(
            whole.root_node().has_error(),
            "the fixture must defeat the grammar"
        );
        let p = parse(Lang::Bash, "plugin.zsh", src);
        let got: Vec<(&str, u32, u32)> = p
            .entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.start_line, e.end_line))
            .collect();
        assert_eq!(got, [("join", 3, 5), ("helper", 6, 9), ("greet", 11, 14)]);
        let greet = &p.entities[2];
        assert_eq!(greet.doc, "Says hi.");
        let name = |n: &str| Call::Name(n.to_string());
        assert_eq!(greet.calls, [name("printf"), name("helper")]);
        // Read without zsh's flags, `${(j:,:)@}` is bash's `${@}`.
        assert_eq!(p.entities[0].calls, [name("print")]);
        // Bytes and lines are the file's own: each entity's hash is of its
        // own text, so editing one function changes that function alone.
        let edited = src.replace("printf hi", "printf hello");
        let q = parse(Lang::Bash, "plugin.zsh", &edited);
        let hashes = |p: &ParsedFile| {
            p.entities
                .iter()
                .map(|e| e.hash.clone())
                .collect::<Vec<_>>()
        };
        let (a, b) = (hashes(&p), hashes(&q));
        assert_eq!(
            (a[0] == b[0], a[1] == b[1], a[2] == b[2]),
            (true, true, false)
        );
    }
}
