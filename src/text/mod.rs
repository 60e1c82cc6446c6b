//! Text rules shared by every layer: the words of identifiers and prose,
//! and how text is cut to fit.

pub mod words;

use std::borrow::Cow;

/// Marks where a string was cut.
pub const CUT_MARK: &str = "… [truncated]";

/// The longest prefix of `s` of at most `max` bytes that ends on a
/// character boundary: the one UTF-8-safe cut.
pub fn prefix(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A commit id shortened for people, as git does: twelve characters.
pub fn short_id(id: &str) -> &str {
    prefix(id, 12)
}

/// Bytes as lowercase hex, as sha256 sums are written.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// sha256 hex of bytes: what the store keys and names are digested with,
/// kept here so every layer can use it.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// The last component of a slash-separated path.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `s` cut to at most `max` bytes on a character boundary, marked when cut.
/// What a repository holds (a feature, a docstring, a source line) is shown
/// through this, so no single field can make an answer unbounded.
pub fn clip(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    Cow::Owned(format!(
        "{}{CUT_MARK}",
        prefix(s, max.saturating_sub(CUT_MARK.len()))
    ))
}

/// Whether a character could steer a terminal or forge a line: C0 and C1
/// controls (ESC starts ANSI sequences), DEL, line and paragraph
/// separators, and the bidirectional overrides that reorder what is shown.
fn is_steering(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escaped(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| is_steering(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            c if !is_steering(c) || keep(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.extend(c.escape_unicode()),
        }
    }
    Cow::Owned(out)
}

/// `s` on one line for a terminal, a log or a notice: every control
/// character, newlines included, written as an escape. What a repository
/// names (a path, an id, a config value) is shown through this, so it can
/// neither forge a line of rpg's output nor send the terminal a command.
pub fn one_line(s: &str) -> Cow<'_, str> {
    escaped(s, |_| false)
}

/// `s` as text of several lines (source code, a whole answer): newlines
/// and tabs kept, every other control character escaped.
pub fn printable(s: &str) -> Cow<'_, str> {
    escaped(s, |c| c == '\n' || c == '\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_short_text_and_cuts_long_text_on_a_char_boundary() {
        assert_eq!(clip("short", 10), "short");
        let long = "é".repeat(100);
        let cut = clip(&long, 50);
        assert!(cut.len() <= 50, "{}", cut.len());
        assert!(cut.ends_with(CUT_MARK));
    }

    #[test]
    fn controls_from_a_repository_are_escaped_never_passed_through() {
        assert_eq!(one_line("plain/path.py"), "plain/path.py");
        assert_eq!(
            one_line("evil\nnext: rpg fetch pwned.py"),
            "evil\\nnext: rpg fetch pwned.py"
        );
        assert_eq!(one_line("\x1b[31mred"), "\\u{1b}[31mred");
        assert_eq!(one_line("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(printable("line\n\tindented\x07"), "line\n\tindented\\u{7}");
    }
}
