//! Macros tree-sitter cannot know can make its error recovery swallow
//! every definition after them. `for_each_entity(se)\n f(se)->x = y;` reads
//! as a definition of `f` nested in a body; `} while_each_thread(p, t);`
//! leaves a `do` without its `while`; the C++ grammar reads a header's
//! `SETGET(id, struct item, member, 64);` as a declarator whose parameters
//! run on to the next body, and the C grammar reads `extern __printf(3, 4)
//! void f(…);` as an old-style definition whose parameter declarations run
//! on to the next body. Where a parse has errors, the macros that
//! caused them are learnt and their uses rewritten in place, and the file
//! is parsed again. A rewrite is kept only when less of the file is in
//! error after it. Offsets and lines never move.

use super::blank::{balanced_parens, blank, line_starts, word_len, KEYWORDS};
use crate::parse::syntax_tree;
use std::collections::BTreeSet;
use std::ops::Range;
use tree_sitter::{Language, Node, Tree};

/// Each round learns what the last one's parse still misread.
const ROUNDS: usize = 4;

/// `src` parsed, with the uses of the macros its parse misread rewritten.
pub(super) fn parse(language: Language, mut src: String) -> Option<(Tree, String)> {
    let mut tree = syntax_tree(language.clone(), &src)?;
    let mut misread = Misread::of(tree.root_node());
    for _ in 0..ROUNDS {
        if misread.regions.is_empty() {
            break;
        }
        let repaired = Macros::learn(&src, &misread.regions).rewrite(&src);
        if repaired == src {
            break;
        }
        let again = syntax_tree(language.clone(), &repaired)?;
        let now = Misread::of(again.root_node());
        if now.size() >= misread.size() {
            break;
        }
        (tree, src, misread) = (again, repaired, now);
    }
    Some((tree, src))
}

/// What of a parse is in error: the outermost error nodes and definitions
/// misread inside bodies, in order, and how many tokens are missing. Only
/// the paths to errors are walked.
struct Misread {
    regions: Vec<Range<usize>>,
    missing: usize,
}

impl Misread {
    fn of(root: Node) -> Misread {
        let mut out = Misread {
            regions: Vec::new(),
            missing: 0,
        };
        let mut cursor = root.walk();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            if node.is_error() || nested_definition(node) {
                out.regions.push(node.byte_range());
            } else if node.is_missing() {
                out.missing += 1;
            } else if node.has_error() {
                stack.extend(node.children(&mut cursor));
            }
        }
        out.regions.sort_by_key(|r| r.start);
        out
    }

    fn size(&self) -> usize {
        self.regions.iter().map(|r| r.len()).sum::<usize>() + self.missing
    }
}

/// Macros named by how their uses were misread.
#[derive(Default)]
struct Macros {
    /// `for_each_x(a)` before a statement: nests like `if (a)`.
    loops: BTreeSet<String>,
    /// `} while_each_x(a);`: ends a `do` like `while (a);`.
    do_whiles: BTreeSet<String>,
    /// `SETGET(…);` at file scope: defines nothing rpg names.
    statements: BTreeSet<String>,
    /// `__printf(3, 4)` before a declaration: an attribute, which
    /// declares nothing.
    attributes: BTreeSet<String>,
}

impl Macros {
    /// The macros named by the lines of the regions in error.
    fn learn(src: &str, regions: &[Range<usize>]) -> Macros {
        let mut out = Macros::default();
        let lines: Vec<(usize, &str)> = line_starts(src).collect();
        let mut regions = merged(regions).into_iter().peekable();
        for (i, (start, line)) in lines.iter().enumerate() {
            while regions.peek().is_some_and(|r| r.end <= *start) {
                regions.next();
            }
            // The error may begin mid-line: `SETGET(a, struct b, 64);`.
            if regions.peek().is_none_or(|r| r.start > start + line.len()) {
                continue;
            }
            let next = lines[i + 1..]
                .iter()
                .map(|l| l.1)
                .find(|l| !l.trim().is_empty());
            if let Some(name) = loop_header(line, next) {
                out.loops.insert(name.to_string());
            } else if let Some(name) = do_while_end(line) {
                out.do_whiles.insert(name.to_string());
            } else if let Some(name) = statement_call(src, *start) {
                out.statements.insert(name.to_string());
            } else if let Some(name) = attribute_call(line, next) {
                out.attributes.insert(name.to_string());
            }
        }
        out
    }

    /// Every statement a learnt macro begins, rewritten: a loop macro's
    /// name becomes `if`, a do-while macro's `while`, and a statement
    /// macro's whole call, to its `;`, blank, as is an attribute's call
    /// wherever more of a declaration follows it.
    fn rewrite(&self, src: &str) -> String {
        let mut out = src.as_bytes().to_vec();
        for name in &self.attributes {
            for (at, _) in src.match_indices(name.as_str()) {
                let starts_word =
                    !src[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                let call = balanced_parens(&src[at + name.len()..]);
                let before_more = begins_name(src[at + name.len() + call..].trim_start());
                if starts_word && call > 0 && before_more {
                    blank(&mut out, at, name.len() + call);
                }
            }
        }
        for (start, line) in line_starts(src) {
            let trimmed = line.trim_start();
            let at = start + line.len() - trimmed.len();
            if let Some(rest) = trimmed.strip_prefix('}') {
                let at = at + 1 + rest.len() - rest.trim_start().len();
                let word = &src[at..at + word_len(&src[at..])];
                if self.do_whiles.contains(word) && src[at + word.len()..].starts_with('(') {
                    replace_word(&mut out, at, word.len(), b"while");
                }
                continue;
            }
            let word = &trimmed[..word_len(trimmed)];
            let called = trimmed[word.len()..].starts_with('(');
            if called && self.loops.contains(word) {
                replace_word(&mut out, at, word.len(), b"if");
            } else if self.statements.contains(word) {
                let call = word.len() + balanced_parens(&src[at + word.len()..]);
                let rest = &src[at + call..];
                if call > word.len() && rest.trim_start().starts_with(';') {
                    let end = at + call + rest.len() - rest.trim_start().len() + 1;
                    blank(&mut out, at, end - at);
                }
            }
        }
        // Only ASCII bytes were replaced with ASCII bytes.
        String::from_utf8(out).unwrap_or_else(|_| src.to_string())
    }
}

/// Overlapping ranges joined, in order.
fn merged(sorted: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for r in sorted {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r.clone()),
        }
    }
    out
}

/// `for_each_x(a)` alone on an indented line, before a `{` or a statement
/// indented deeper, or `for_each_x(a) {`: the macro's name. A definition
/// wrapped in a macro (`SYSCALL_DEFINE1(x)`) starts its line.
fn loop_header<'s>(line: &'s str, next: Option<&str>) -> Option<&'s str> {
    let trimmed = line.trim_start();
    let indent = line.len() - trimmed.len();
    let word = &trimmed[..word_len(trimmed)];
    let args = balanced_parens(&trimmed[word.len()..]);
    if indent == 0 || word.len() < 2 || args == 0 || KEYWORDS.contains(&word) {
        return None;
    }
    let rest = trimmed[word.len() + args..].trim();
    let opens = rest == "{"
        || rest.is_empty()
            && next.is_some_and(|n| {
                let t = n.trim_start();
                t.starts_with('{')
                    || n.len() - t.len() > indent
                        && t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            });
    opens.then_some(word)
}

/// `} while_each_x(a);`: the macro's name, long enough to become `while`.
fn do_while_end(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('}')?.trim_start();
    let word = &rest[..word_len(rest)];
    let args = balanced_parens(&rest[word.len()..]);
    let ends = rest[word.len() + args..].trim() == ";";
    (word.len() >= 5 && args > 0 && ends && !KEYWORDS.contains(&word)).then_some(word)
}

/// `SETGET(id, struct item,\n member, 64);` from the first column: the
/// macro's name. File scope holds no calls, and no definition ends in `;`.
fn statement_call(src: &str, start: usize) -> Option<&str> {
    let text = &src[start..];
    let word = &text[..word_len(text)];
    let args = balanced_parens(&text[word.len()..]);
    let ends = text[word.len() + args..].trim_start().starts_with(';');
    (!word.is_empty() && args > 0 && ends && !KEYWORDS.contains(&word)).then_some(word)
}

/// `extern __printf(3, 4)`, or `__printf(3, 4) void f(…)`, from the first
/// column and before more of a declaration: the macro's name. Its
/// arguments are single tokens (`3`, `&lock`), where the parameters of the
/// declarator it could be mistaken for name a type and a name.
fn attribute_call<'s>(line: &'s str, next: Option<&str>) -> Option<&'s str> {
    let mut rest = line;
    while let Some(r) = ["extern", "static", "inline"]
        .iter()
        .find_map(|k| rest.strip_prefix(k).filter(|r| r.starts_with([' ', '\t'])))
    {
        rest = r.trim_start();
    }
    let word = &rest[..word_len(rest)];
    let call = balanced_parens(&rest[word.len()..]);
    if line.starts_with([' ', '\t']) || word.len() < 2 || call == 0 || KEYWORDS.contains(&word) {
        return None;
    }
    let args = &rest[word.len() + 1..word.len() + call - 1];
    let single = |a: &str| !a.trim().contains(char::is_whitespace);
    let after = rest[word.len() + call..].trim_start();
    let follows = if after.is_empty() { next? } else { after };
    (args.split(',').all(single) && begins_name(follows.trim_start())).then_some(word)
}

/// Whether text begins with a name (a type, a specifier, another macro).
fn begins_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// C has no nested functions: a definition in a body is a macro misread.
fn nested_definition(node: Node) -> bool {
    node.kind() == "function_definition"
        && node
            .parent()
            .is_some_and(|p| p.kind() == "compound_statement")
}

fn replace_word(out: &mut [u8], at: usize, len: usize, with: &[u8]) {
    out[at..at + with.len()].copy_from_slice(with);
    blank(out, at + with.len(), len - with.len());
}

#[cfg(test)]
mod tests {
    use super::super::{Cpp, C};
    use crate::parse::{Call, Language, ParsedFile};

    fn spans(f: &ParsedFile) -> Vec<(&str, u32, u32)> {
        f.entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.start_line, e.end_line))
            .collect()
    }

    #[test]
    fn a_loop_macro_over_a_call_statement_does_not_swallow_the_file() {
        // tree-sitter alone reads `for_each_entity(se) cfs_rq_of(se)` as a
        // nested definition of `cfs_rq_of` that runs to the end of the file.
        let f = C.parse(
            "fair.c",
            "static void set_skip(struct se *se)\n{\n\tfor_each_entity(se)\n\t\tcfs_rq_of(se)->skip = se;\n}\n\n\
             static void wake(struct rq *rq)\n{\n\tfor_each_entity(se) {\n\t\tfor_each_cpu(c)\n\t\t\tn += per_cpu(c)->count;\n\t}\n}\n\n\
             int last(void)\n{\n\treturn 1;\n}\n",
        );
        assert_eq!(
            spans(&f),
            [("set_skip", 1, 5), ("wake", 7, 13), ("last", 15, 18)]
        );
        // The body is still read: its calls are kept.
        assert!(f.entities[0]
            .calls
            .contains(&Call::Name("cfs_rq_of".into())));
        assert!(f.entities[1].calls.contains(&Call::Name("per_cpu".into())));
    }

    #[test]
    fn a_do_loop_closed_by_a_macro_ends_where_its_braces_do() {
        let f = C.parse(
            "cgroup.c",
            "int attach(struct task *leader)\n{\n\tdo {\n\t\tadd(task);\n\t} while_each_thread(leader, task);\n\treturn 0;\n}\n\n\
             struct task *start(char *buf)\n{\n\treturn 0;\n}\n",
        );
        assert_eq!(spans(&f), [("attach", 1, 7), ("start", 9, 12)]);
        assert!(f.entities[0].calls.contains(&Call::Name("add".into())));
    }

    #[test]
    fn statement_macros_in_a_c_header_do_not_take_the_definitions_below() {
        // Read as C++, `SETGET(…, struct item, …);` starts a declarator whose
        // parameters run on to the next body.
        let f = Cpp.parse(
            "ctree.h",
            "SETGET(device_type, struct item, type, 64);\nSETGET(device_id, struct item,\n\t\tdevid, 64);\n\n\
             static inline unsigned long uuid(struct item *d)\n{\n\treturn (unsigned long)d;\n}\n\n\
             static inline int id(struct item *d)\n{\n\treturn SETGET(a, b);\n}\n",
        );
        assert_eq!(spans(&f), [("uuid", 5, 8), ("id", 10, 13)]);
    }

    #[test]
    fn an_attribute_macro_with_arguments_does_not_start_an_old_style_definition() {
        // Read as C, `extern __printf(3, 4) void warn(…);` defines
        // `__printf` old-style, its parameter declarations running on to
        // the next body.
        let f = C.parse(
            "ufs.h",
            "extern __printf(3, 4)\nvoid warn(struct sb *, const char *, ...);\nextern void put(struct sb *);\n\n\
             static inline int first(struct sb *sb)\n{\n\treturn 0;\n}\n\n\
             static __printf(2, 0) int vlog(const char *fmt, va_list a)\n{\n\treturn first(0);\n}\n",
        );
        assert_eq!(spans(&f), [("first", 5, 8), ("vlog", 10, 13)]);
        assert!(f.entities[1].calls.contains(&Call::Name("first".into())));
    }

    #[test]
    fn only_the_macro_that_was_misread_is_rewritten() {
        // `h(x)` before a continued expression is a call, not a loop.
        let src = "static void f(struct se *se)\n{\n\tfor_each_entity(se)\n\t\tcfs_rq_of(se)->skip = se;\n\th(se)\n\t\t|| k(se);\n}\n\nint z(void)\n{\n\treturn 0;\n}\n";
        let f = C.parse("ok.c", src);
        assert_eq!(spans(&f), [("f", 1, 7), ("z", 9, 12)]);
        let calls = &f.entities[0].calls;
        for name in ["cfs_rq_of", "h", "k"] {
            assert!(
                calls.contains(&Call::Name(name.into())),
                "{name}: {calls:?}"
            );
        }
    }
}
