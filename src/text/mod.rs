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
}
