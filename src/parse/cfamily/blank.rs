//! The text tree-sitter is given: attribute-like macros, comments on
//! directive lines and preprocessor branches it cannot balance are blanked
//! with spaces, so every byte and line stays where it was.

use std::collections::HashSet;

/// Words C and C++ reserve; never blanked.
#[rustfmt::skip]
pub(super) const KEYWORDS: &[&str] = &[
    "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
    "const", "consteval", "constexpr", "constinit", "continue", "decltype", "default", "delete",
    "do", "double", "else", "enum", "explicit", "export", "extern", "float", "for", "friend",
    "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
    "operator", "private", "protected", "public", "register", "requires", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw", "try",
    "typedef", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while",
];

/// Words that begin a declaration's type or specifiers. An identifier
/// followed by one of these is never valid C or C++, so it is a macro
/// standing where an attribute would (`FMT_API void f()`,
/// `really_inline bool g()`).
#[rustfmt::skip]
const DECL_STARTS: &[&str] = &[
    "auto", "bool", "char", "class", "consteval", "constexpr", "double", "enum", "explicit",
    "extern", "float", "friend", "inline", "int", "long", "short", "signed", "static",
    "struct", "template", "typename", "union", "unsigned", "virtual", "void",
];

/// Blank attribute-like macros with spaces, keeping every offset. A word
/// is such a macro where nothing else could stand: directly before a
/// declaration keyword (`FMT_API void f()`, `really_inline bool g()`),
/// before two more plain words (`FMT_CONSTEXPR rgb get()`), alone on its
/// line (`FMT_BEGIN_NAMESPACE`), or after a parameter list. An
/// all-capitals word seen so once is blanked wherever it stands before a
/// name in this file, so `FMT_CONSTEXPR text_style(…) : a(), b() {}`
/// parses as the constructor it is.
pub(super) fn blank_macros(src: &str) -> String {
    let all: Vec<(usize, &str)> = line_starts(src).collect();
    let lines: Vec<(usize, &str)> = all
        .iter()
        .filter(|(_, l)| !l.trim_start().starts_with('#'))
        .copied()
        .collect();
    let mut out = src.as_bytes().to_vec();
    let mut learned: HashSet<&str> = HashSet::new();
    let mut prev = "";
    for (start, line) in &lines {
        let lead = line.len() - line.trim_start().len();
        for at in macro_positions(line.trim_start()) {
            let word = &line[lead + at..];
            let word = &word[..word_len(word)];
            if is_caps(word) {
                learned.insert(word);
            }
            blank(&mut out, start + lead + at, word.len());
        }
        // A parameter list closed on the line before leaves its
        // specifiers to this one: `)\n    GTEST_LOCK_EXCLUDED_(&m) {`. A
        // statement after `if (x)` ends in `;`, a definition's header not.
        let continued = after_params(prev)
            .then(|| specifier_caps(line, lead))
            .filter(|c| {
                c.last()
                    .is_some_and(|(at, len)| !line[at + len..].trim_start().starts_with(';'))
            });
        for (at, len) in trailing_caps(line)
            .into_iter()
            .chain(continued.into_iter().flatten())
        {
            let word = &line[at..at + word_len(&line[at..])];
            if is_caps(word) {
                learned.insert(word);
            }
            blank(&mut out, start + at, len);
        }
        if !line.trim().is_empty() {
            prev = line;
        }
    }
    for (start, line) in &lines {
        let trimmed = line.trim_start();
        let lead = line.len() - trimmed.len();
        let words = words_of(trimmed);
        for (i, (at, w)) in words.iter().enumerate() {
            let ends = trimmed[at + w.len()..].trim().is_empty();
            let before_name = words
                .get(i + 1)
                .is_some_and(|(next, _)| trimmed[at + w.len()..*next].trim().is_empty());
            if learned.contains(w) && (ends || before_name) && !after_access(trimmed, *at) {
                blank(&mut out, start + lead + at, w.len());
            }
        }
    }
    let directive = directive_lines(&all);
    keep_continuations(&all, &directive, &mut out);
    blank_directive_comments(&all, &directive, &mut out);
    // Only ASCII bytes were replaced with ASCII spaces.
    String::from_utf8(out).unwrap_or_else(|_| src.to_string())
}

/// Restore the continuation lines of a directive that blanking emptied:
/// tree-sitter reads the line after an empty continuation as part of the
/// directive, so `#define F(x) \\` over a blanked `__f(x)` would take the
/// definition below it.
fn keep_continuations(lines: &[(usize, &str)], directive: &[bool], out: &mut [u8]) {
    for (i, (start, line)) in lines.iter().enumerate().skip(1) {
        let emptied = out[*start..start + line.len()]
            .iter()
            .all(u8::is_ascii_whitespace);
        if directive[i] && directive[i - 1] && emptied && !line.trim().is_empty() {
            out[*start..start + line.len()].copy_from_slice(line.as_bytes());
        }
    }
}

/// Blank `/* … */` comments on the lines of a directive that continue:
/// tree-sitter ends a `#define`'s text at a comment, and reads the rest of
/// it as code (`#define REG(n) \\ … }; /* NOLINT */ \\`).
fn blank_directive_comments(lines: &[(usize, &str)], directive: &[bool], out: &mut [u8]) {
    for (i, (start, line)) in lines.iter().enumerate() {
        if !directive[i] || !line.trim_end().ends_with('\\') {
            continue;
        }
        let mut from = 0;
        while let Some(open) = line[from..].find("/*").map(|o| from + o) {
            let Some(close) = line[open + 2..].find("*/").map(|c| open + 2 + c + 2) else {
                break;
            };
            blank(out, start + open, close - open);
            from = close;
        }
    }
}

/// Where a line (without its indent) holds a word that can only be a
/// macro in attribute position.
fn macro_positions(trimmed: &str) -> Vec<usize> {
    let words = words_of(trimmed);
    let mut out = Vec::new();
    if let [(0, w)] = words.as_slice() {
        if is_caps(w) && trimmed[w.len()..].trim().is_empty() {
            out.push(0);
        }
    }
    let adjacent = |i: usize| -> bool {
        let ((at, w), (next, _)) = (words[i], words[i + 1]);
        trimmed[at + w.len()..next].trim().is_empty()
    };
    for i in 0..words.len().saturating_sub(1) {
        let (at, w) = words[i];
        let next = words[i + 1].1;
        if KEYWORDS.contains(&w) || after_access(trimmed, at) || !adjacent(i) {
            continue;
        }
        let before_keyword = DECL_STARTS.contains(&next);
        // `W a b(`: two plain words after a third is a declaration only
        // when the third is a specifier.
        let before_two = i + 2 < words.len()
            && adjacent(i + 1)
            && !KEYWORDS.contains(&next)
            && !KEYWORDS.contains(&words[i + 2].1)
            && trimmed[words[i + 2].0 + words[i + 2].1.len()..]
                .trim_start()
                .starts_with('(');
        // `class FMT_API format_error`
        let after_class =
            i > 0 && matches!(words[i - 1].1, "class" | "struct" | "union") && is_caps(w);
        if before_keyword || before_two || after_class {
            out.push(at);
        }
    }
    out
}

/// A member access or template argument stands before the word, so it is
/// an expression's or a type's, not a specifier.
fn after_access(trimmed: &str, at: usize) -> bool {
    trimmed[..at].trim_end().ends_with(['.', '>', ':', '('])
}

/// A line that ends a parameter list, and may leave specifiers to the next.
fn after_params(line: &str) -> bool {
    let t = line.trim_end();
    t.ends_with(')') || t.ends_with(" const") || t.ends_with(" override")
}

fn is_caps(w: &str) -> bool {
    w.len() > 2
        && w.as_bytes()[0].is_ascii_uppercase()
        && w.bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
}

/// A name the C standard reserves to the implementation: after a
/// declarator, an annotation macro (`__releases(x)`, `__aligned(8)`).
fn is_reserved(w: &str) -> bool {
    w.len() > 2 && w.starts_with("__")
}

pub(super) fn word_len(s: &str) -> usize {
    s.bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count()
}

/// A conditional whose every branch opens the same braces
/// (`#ifdef WIN32 int wmain(…) { #else int main(…) { #endif`) splits one
/// definition across branches, which no parser can read: keep only its
/// last branch, as plain code. An `extern "C" {` guard goes.
pub(super) fn unbalanced_branches_blanked(src: &str) -> String {
    let lines: Vec<(usize, &str)> = line_starts(src).collect();
    // A `#define`'s braces are not code.
    let directive = directive_lines(&lines);
    let mut out = src.as_bytes().to_vec();
    // Open groups: the line indices of their directives.
    let mut open: Vec<Vec<usize>> = Vec::new();
    let mut open_guards = 0usize;
    for (i, (_, line)) in lines.iter().enumerate() {
        let t = line.trim_start();
        let Some(d) = t.strip_prefix('#').map(str::trim_start) else {
            continue;
        };
        if d.starts_with("if") {
            open.push(vec![i]);
        } else if d.starts_with("el") {
            if let Some(g) = open.last_mut() {
                g.push(i);
            }
        } else if d.starts_with("endif") {
            let Some(mut g) = open.pop() else { continue };
            g.push(i);
            let balance = |a: usize, b: usize| -> i64 {
                (a + 1..b)
                    .filter(|k| !directive[*k])
                    .map(|k| brace_balance(lines[k].1))
                    .sum()
            };
            let balances: Vec<i64> = g.windows(2).map(|w| balance(w[0], w[1])).collect();
            // Alternative headers of one definition: every branch opens
            // the same braces. A lone branch is the `extern "C" {` guard.
            let split = balances.len() > 1
                && balances[0] != 0
                && balances.iter().all(|b| *b == balances[0]);
            let only = |ok: &dyn Fn(&str) -> bool| {
                lines[g[0] + 1..i]
                    .iter()
                    .map(|(_, l)| l.trim())
                    .all(|l| l.is_empty() || ok(l))
            };
            let opens_guard = balances == [1] && only(&|l: &str| l.starts_with("extern \"C\""));
            // A lone `}` closes the guard only when one is open.
            let closes_guard = balances == [-1] && open_guards > 0 && only(&|l: &str| l == "}");
            let guard = opens_guard || closes_guard;
            open_guards = open_guards + usize::from(opens_guard) - usize::from(closes_guard);
            // `#ifdef X … } else { #endif`, closed by a later `#ifdef X }
            // #endif`: the code reads whole as if X were defined, so only
            // the directives go.
            let lone = balances.len() == 1 && balances[0] != 0 && !guard;
            if lone {
                blank(&mut out, lines[g[0]].0, lines[g[0]].1.len());
                blank(&mut out, lines[i].0, lines[i].1.len());
                continue;
            }
            if !split && !guard {
                continue;
            }
            // Branches before the last go, and the directives with them.
            let keep_from = if g.len() > 2 { g[g.len() - 2] + 1 } else { i };
            for (k, (start, line)) in lines.iter().enumerate().take(i + 1).skip(g[0]) {
                if k < keep_from || g.contains(&k) {
                    blank(&mut out, *start, line.len());
                }
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| src.to_string())
}

/// Directives other than conditionals inside braces go: a `#define` or
/// an x-macro `#include` in an initialiser list is no declaration, and
/// tree-sitter cannot fit it into the expression around it.
pub(super) fn nested_directives_blanked(src: &str) -> String {
    let mut out = src.as_bytes().to_vec();
    let mut depth = 0i64;
    let (mut continued, mut conditional) = (false, false);
    for (start, line) in line_starts(src) {
        let t = line.trim_start();
        if !continued {
            if !t.starts_with('#') {
                depth += brace_balance(line);
                continue;
            }
            let word = t.trim_start_matches('#').trim_start();
            conditional = ["if", "el", "endif"].iter().any(|w| word.starts_with(w));
        }
        continued = line.trim_end().ends_with('\\');
        if depth > 0 && !conditional {
            blank(&mut out, start, line.len());
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| src.to_string())
}

/// `{` minus `}` on a line, outside strings, characters and `//` comments.
fn brace_balance(line: &str) -> i64 {
    let mut n = 0;
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q && prev != '\\' => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '/') if prev == '/' => break,
            (None, '{') => n += 1,
            (None, '}') => n -= 1,
            _ => {}
        }
        prev = c;
    }
    n
}

/// All-capitals or reserved macros after a parameter list or an array's
/// bounds (`) FMT_NOEXCEPT {`, `) const FMT_OVERRIDE;`, `[] __aligned(8) =`),
/// where only specifiers may stand. Any `)` of the line may close the list:
/// `iterator end() FMT_NOEXCEPT { return e(); }`.
fn trailing_caps(line: &str) -> Vec<(usize, usize)> {
    line.match_indices([')', ']'])
        .flat_map(|(close, _)| specifier_caps(line, close + 1))
        .collect()
}

/// The all-capitals and reserved words among the specifiers from `at`,
/// when nothing but specifiers stands there up to the end of the
/// declarator. A reserved word before `;` may be a call after `if (x)`
/// (`__free_page(p);`), so it is one only before a body or initialiser.
fn specifier_caps(line: &str, mut at: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut reserved = false;
    let bytes = line.as_bytes();
    loop {
        while at < bytes.len() && bytes[at] == b' ' {
            at += 1;
        }
        let word = &line[at..at + word_len(&line[at..])];
        if word.is_empty() {
            break;
        }
        if is_caps(word) || is_reserved(word) {
            reserved |= !is_caps(word);
            // `GTEST_LOCK_EXCLUDED_(&mutex_)` takes its arguments along.
            let len = word.len() + balanced_parens(&line[at + word.len()..]);
            out.push((at, len));
            at += len - word.len();
        } else if !matches!(
            word,
            "const" | "override" | "final" | "noexcept" | "volatile"
        ) {
            return Vec::new();
        }
        at += word.len();
    }
    // Only when the specifiers end the declarator.
    let rest = line[at..].trim_start();
    let ends = rest.is_empty() || rest.starts_with(['{', ';', '=', ':']) || rest.starts_with("->");
    if ends && !(reserved && rest.starts_with(';')) {
        out
    } else {
        Vec::new()
    }
}

/// The length of a parenthesised group at the start of `s`, or 0.
pub(super) fn balanced_parens(s: &str) -> usize {
    if !s.starts_with('(') {
        return 0;
    }
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 1 => return i + 1,
            ')' => depth -= 1,
            _ => {}
        }
    }
    0
}

/// Spaces over `len` bytes from `at`; line ends stay, so no line moves.
pub(super) fn blank(out: &mut [u8], at: usize, len: usize) {
    out[at..at + len]
        .iter_mut()
        .filter(|b| !matches!(**b, b'\n' | b'\r'))
        .for_each(|b| *b = b' ');
}

/// Which lines belong to a directive, continuations included.
fn directive_lines(lines: &[(usize, &str)]) -> Vec<bool> {
    let mut directive = vec![false; lines.len()];
    let mut continued = false;
    for (i, (_, l)) in lines.iter().enumerate() {
        directive[i] = continued || l.trim_start().starts_with('#');
        continued = directive[i] && l.trim_end().ends_with('\\');
    }
    directive
}

pub(super) fn line_starts(src: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    src.split_inclusive('\n').map(move |l| {
        let start = at;
        at += l.len();
        (start, l.trim_end_matches(['\n', '\r']))
    })
}

/// Identifiers of a line with their byte offsets, up to a `(`, `;`, `=` or
/// `{`, where a declaration's specifiers end.
fn words_of(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if matches!(c, b'(' | b';' | b'=' | b'{' | b'"' | b'\'' | b'/') {
            break;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((start, &line[start..i]));
        } else {
            i += 1;
        }
    }
    out
}
