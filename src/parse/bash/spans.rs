//! Where a shell script's functions begin and end, read from the text
//! alone. tree-sitter-bash reads bash; one zsh expansion it cannot read
//! (`${(j:,:)names}`, `$+functions[x]`) can turn the rest of the file into
//! one error node and hide every function after it. Knowing the spans,
//! each function is parsed apart (see [`super::Bash`]), so what the
//! grammar cannot read costs only its own function.

use std::ops::Range;

/// One top-level function: its text from the comments right above its
/// header to its closing brace, and where its body opens.
#[derive(Debug)]
pub(super) struct Span {
    pub whole: Range<usize>,
    /// The byte of the body's `{`.
    pub open: usize,
}

/// The top-level functions of `src`, in order. Scanning stops at the first
/// header whose body never closes, so the whole scan reads each byte a
/// bounded number of times.
pub(super) fn functions(src: &str) -> Vec<Span> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let line_end = src[at..].find('\n').map_or(b.len(), |i| at + i);
        let Some(open) = header(src, at, line_end) else {
            at = line_end + 1;
            continue;
        };
        let Some(close) = closing_brace(b, open) else {
            break;
        };
        out.push(Span {
            whole: comments_above(src, at)..close + 1,
            open,
        });
        at = src[close..].find('\n').map_or(b.len(), |i| close + i + 1);
    }
    out
}

/// The byte of the `{` opening a body, if the line at `start..end` is a
/// function header: `name() {`, `function name {`, `function name() {`,
/// the brace on this line or first on the next.
fn header(src: &str, start: usize, end: usize) -> Option<usize> {
    let line = &src[start..end];
    let rest = line.trim_start();
    let (rest, keyword) = match rest.strip_prefix("function") {
        Some(r) if r.starts_with([' ', '\t']) => (r.trim_start(), true),
        _ => (rest, false),
    };
    let name_len = rest
        .find(|c: char| c.is_whitespace() || "(){}|&;<>'\"$#=`".contains(c))
        .unwrap_or(rest.len());
    if name_len == 0 {
        return None;
    }
    let mut tail = rest[name_len..].trim_start();
    match tail.strip_prefix("()") {
        Some(t) => tail = t.trim_start(),
        None if !keyword => return None,
        None => {}
    }
    let offset = |s: &str| end - s.len();
    if let Some(t) = tail.strip_prefix('{') {
        // `f() { body; }` on one line is a header too; `f() {x` is not.
        return (t.is_empty() || t.starts_with([' ', '\t'])).then(|| offset(tail));
    }
    if !tail.is_empty() {
        return None;
    }
    let next = src[end..].trim_start();
    next.starts_with('{').then(|| src.len() - next.len())
}

/// Where the line at `at` begins, moved up over the comment lines directly
/// above it, which document the function.
fn comments_above(src: &str, at: usize) -> usize {
    let mut start = at;
    while start > 0 {
        let prev = src[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        let line = src[prev..start - 1].trim_start();
        if !line.starts_with('#') || line.starts_with("#!") {
            break;
        }
        start = prev;
    }
    start
}

/// The `}` closing the `{` at `open`: braces counted outside quotes,
/// comments, escapes and here-documents. `${…}` and `{a,b}` balance
/// themselves; inside `${…}`, `#` is a pattern (`${x## #}`), never a
/// comment, and neither is a `#` after an escaped space (`\ #`).
fn closing_brace(b: &[u8], open: usize) -> Option<usize> {
    // Per open brace, whether it opened a parameter expansion.
    let mut open_braces: Vec<bool> = Vec::new();
    let mut expansions = 0usize;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'\'' => i = single_quote_end(b, i)?,
            b'"' => i = quote_end(b, i, 0)?,
            b'#' if expansions == 0 && starts_comment(b, i) => {
                i = line_end(b, i);
            }
            b'<' if b[i..].starts_with(b"<<") && !b[i..].starts_with(b"<<<") => {
                i = heredoc_end(b, i)?;
            }
            b'{' => {
                let expansion = i > 0 && b[i - 1] == b'$';
                expansions += usize::from(expansion);
                open_braces.push(expansion);
            }
            b'}' => {
                expansions -= usize::from(open_braces.pop()?);
                if open_braces.is_empty() {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `'` closing the one at `at`: nothing is special inside.
fn single_quote_end(b: &[u8], at: usize) -> Option<usize> {
    Some(at + 1 + memchr::memchr(b'\'', &b[at + 1..])?)
}

/// The newline ending the line that holds `at`, or the end of `b`.
fn line_end(b: &[u8], at: usize) -> usize {
    memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |n| at + n)
}

/// Whether the `#` at `i` starts a comment: it begins a word.
fn starts_comment(b: &[u8], i: usize) -> bool {
    i == 0 || (matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';') && !(i >= 2 && b[i - 2] == b'\\'))
}

/// How deep quotes and expansions nest before a scan gives up: no script
/// nests twenty, and a hostile one cannot exhaust the stack.
const MAX_QUOTE_NESTING: u32 = 64;

/// The `"` closing the one at `at`, `nesting` deep in quotes and
/// expansions. An expansion inside (`"${x//"a"/b}"`, `"$(f "$1")"`) holds
/// quotes of its own.
fn quote_end(b: &[u8], at: usize, nesting: u32) -> Option<usize> {
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            b'$' if matches!(b.get(i + 1), Some(b'{' | b'(')) => {
                i = group_end(b, i + 1, nesting + 1)? + 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// The `}` or `)` closing the `${` or `$(` whose bracket is at `open`,
/// inside a double-quoted string. In `$(…)` single quotes quote; in
/// `${…}` they are literal, as bash reads them there, and only a `${`
/// nests (`"${x:-\${y\}}"` closes at its last brace).
fn group_end(b: &[u8], open: usize, nesting: u32) -> Option<usize> {
    if nesting > MAX_QUOTE_NESTING {
        return None;
    }
    let (opens, closes) = match b[open] {
        b'{' => (b'{', b'}'),
        _ => (b'(', b')'),
    };
    let mut depth = 1usize;
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'"' => i = quote_end(b, i, nesting + 1)?,
            b'\'' if opens == b'(' => {
                i = single_quote_end(b, i)?;
            }
            // Only `${` nests in an expansion: a bare `{` is a character.
            b'$' if opens == b'{' && b.get(i + 1) == Some(&b'{') => {
                depth += 1;
                i += 1;
            }
            b'(' if opens == b'(' => depth += 1,
            c if c == closes => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Where reading goes on after the `<<` at `at`: past the here-document
/// it introduces (`<<EOF`, `<<-'EOF'`), at the newline ending its
/// delimiter line, or past the `<<` of a shift. `None` when the document
/// never ends: the scan stops there, so no `<<` is read to the end twice.
fn heredoc_end(b: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 2;
    let dash = b.get(i) == Some(&b'-');
    i += usize::from(dash);
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    let quote = matches!(b.get(i), Some(b'\'' | b'"'));
    i += usize::from(quote);
    // `$(( x << 2 ))` shifts; a delimiter is a word.
    if !b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return Some(at + 1);
    }
    let word_len = b[i..]
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .unwrap_or(b.len() - i);
    let word = &b[i..i + word_len];
    let mut line = i + memchr::memchr(b'\n', &b[i..])? + 1;
    loop {
        let end = line_end(b, line);
        let text = &b[line..end];
        let text = if dash { text.trim_ascii_start() } else { text };
        if text == word {
            return Some(end);
        }
        if end >= b.len() {
            return None;
        }
        line = end + 1;
    }
}

/// Byte ranges of `len` bytes outside every span: the file's own code.
pub(super) fn outside(spans: &[Span], len: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for s in spans {
        if s.whole.start > at {
            out.push(at..s.whole.start);
        }
        at = s.whole.end;
    }
    if at < len {
        out.push(at..len);
    }
    out
}

/// The longest flag list `${(…)x}` is searched for.
const MAX_FLAGS: usize = 32;

/// `ranges` with zsh's own expansion syntax left out, so that the bytes
/// read are bash: the flags of `${(j:,:)x}` and the sigils of `${+x}`,
/// `${~x}`, `${=x}`, `${^x}` and `$+x` go, leaving `${x}` and `$x`.
/// Offsets and lines stay the file's own.
pub(super) fn without_zsh_syntax(src: &str, ranges: &[Range<usize>]) -> Vec<Range<usize>> {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(ranges.len());
    for r in ranges {
        let mut from = r.start;
        let mut i = r.start;
        while i + 2 < r.end {
            let skip = match (b[i], b[i + 1]) {
                (b'$', b'{') => zsh_flags(b, i + 2, r.end),
                (b'$', b'+') if b[i + 2].is_ascii_alphabetic() || b[i + 2] == b'_' => {
                    Some(i + 1..i + 2)
                }
                _ => None,
            };
            match skip {
                Some(s) => {
                    out.push(from..s.start);
                    from = s.end;
                    i = s.end;
                }
                None => i += 1,
            }
        }
        out.push(from..r.end);
    }
    out.retain(|r| !r.is_empty());
    out
}

/// The zsh-only prefix of the expansion whose name starts at `at`, if any.
fn zsh_flags(b: &[u8], at: usize, end: usize) -> Option<Range<usize>> {
    match b.get(at)? {
        b'(' => {
            let within = &b[at..end.min(at + MAX_FLAGS)];
            let close = within.iter().position(|&c| c == b')' || c == b'\n')?;
            (within[close] == b')').then_some(at..at + close + 1)
        }
        b'+' | b'~' | b'=' | b'^' => {
            let n = b[at..end]
                .iter()
                .take_while(|c| b"+~=^".contains(c))
                .count();
            Some(at..at + n)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<&str> {
        functions(src).into_iter().map(|s| &src[s.whole]).collect()
    }

    #[test]
    fn every_header_form_opens_a_function_that_ends_at_its_brace() {
        let src = "x=1\n# Greets.\ngreet() {\n  echo hi\n}\nfunction a-b {\n  :\n}\nfunction c() { d; }\nf ()\n{\n  :\n}\n";
        assert_eq!(
            texts(src),
            [
                "# Greets.\ngreet() {\n  echo hi\n}",
                "function a-b {\n  :\n}",
                "function c() { d; }",
                "f ()\n{\n  :\n}",
            ]
        );
    }

    #[test]
    fn braces_in_quotes_comments_escapes_and_here_documents_do_not_count() {
        let src = "f() {\n  echo '}' \"}\\\"}\" \\} # }\n  x=${a:-{}}\n  cat <<-EOF\n\t}\n\tEOF\n  echo ${#x} $#\n}\ng() {\n  :\n}\n";
        let got = texts(src);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].ends_with("echo ${#x} $#\n}"));
        assert_eq!(got[1], "g() {\n  :\n}");
    }

    #[test]
    fn a_hash_inside_an_expansion_or_after_an_escaped_space_is_no_comment() {
        let src = "f() {\n  x=${${y## #}%% #}\n  [[ $t == (|\\ #\\#(*)) ]]\n}\ng() {\n  :\n}\n";
        let got = texts(src);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].ends_with("(*)) ]]\n}"), "{got:?}");
    }

    #[test]
    fn quotes_inside_an_expansion_inside_quotes_nest() {
        let src =
            "f() {\n  printf '%s' \"${1//[^a-z\"'()~\"]/_}\" \"$(g \"$1\")\"\n}\ng() {\n  :\n}\n";
        let got = texts(src);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[1], "g() {\n  :\n}");
        // Escaped, a `$` opens nothing.
        let escaped = "f() {\n  echo \"${x:-'\\${y\\}' }\"\n}\ng() {\n  :\n}\n";
        assert_eq!(texts(escaped).len(), 2, "{:?}", texts(escaped));
        // Nesting past the bound ends the scan instead of the stack.
        let deep = format!("h() {{\n  x=\"{}\"\n}}\n", "${\"".repeat(200));
        assert!(texts(&deep).is_empty());
    }

    #[test]
    fn nested_functions_belong_to_the_top_level_one_and_calls_are_no_headers() {
        let src = "outer() {\n  inner() {\n    :\n  }\n  run(x)\n}\nif [ -n \"$x\" ]; then\n  echo {\nfi\n";
        assert_eq!(
            texts(src),
            ["outer() {\n  inner() {\n    :\n  }\n  run(x)\n}"]
        );
    }

    #[test]
    fn zsh_flags_and_sigils_are_left_out_of_what_is_read() {
        let src = "a=${(j:,:)x} ${+b} $+functions[f] ${#c} $((1+2)) ${(unclosed";
        let read: String = without_zsh_syntax(src, std::slice::from_ref(&(0..src.len())))
            .into_iter()
            .map(|r| &src[r])
            .collect();
        assert_eq!(read, "a=${x} ${b} $functions[f] ${#c} $((1+2)) ${(unclosed");
    }

    #[test]
    fn a_body_that_never_closes_ends_the_scan() {
        let src = "f() {\n  :\n}\ng() {\n  echo '\n}\nh() {\n  :\n}\n";
        assert_eq!(texts(src), ["f() {\n  :\n}"]);
        let spans = functions(src);
        assert_eq!(
            outside(&spans, src.len()),
            vec![spans[0].whole.end..src.len()]
        );
    }
}
