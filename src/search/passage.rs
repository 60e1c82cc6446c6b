//! Which lines of a function the words hit: what the scaffold
//! shows under each candidate, so siblings can be told apart without
//! opening each (RepoNav's within-file evidence). As a ranking signal,
//! the best short window of matching lines did not pay: it lowered
//! left-out function Hit@5 on the dev sets in every form tried.

use crate::text::words::prose_words;
use rustc_hash::FxHashMap;

/// Lines shown under a candidate at most.
pub const SHOWN: usize = 3;
/// Lines of one function read at most: a generated function of 100k lines
/// must not cost the query its budget.
const MAX_LINES: usize = 5_000;

/// Each word the query was matched with, and what it is worth: its query
/// weight times its IDF.
#[derive(Debug, Clone, Default)]
pub struct TermWeights {
    pub worth: FxHashMap<String, f32>,
    /// The words are literals (see [`super::literal`]), found in a line
    /// as written (ASCII case aside), not among its words.
    pub literal: bool,
}

impl TermWeights {
    fn of(&self, t: &str) -> f32 {
        self.worth.get(t).copied().unwrap_or(0.0)
    }
}

/// The distinct words of the query each line holds.
fn line_terms<'t>(lines: &[&str], terms: &'t TermWeights) -> Vec<Vec<&'t str>> {
    lines
        .iter()
        .map(|line| {
            if terms.literal {
                let line = line.to_ascii_lowercase();
                let mut out: Vec<&str> = terms
                    .worth
                    .keys()
                    .filter(|t| line.contains(t.as_str()))
                    .map(String::as_str)
                    .collect();
                out.sort_unstable();
                return out;
            }
            let mut words = prose_words(line);
            words.extend(super::query::flags_in(line));
            let mut out: Vec<&str> = words
                .iter()
                .filter_map(|w| {
                    terms
                        .worth
                        .get_key_value(w.as_str())
                        .map(|(t, _)| t.as_str())
                })
                .collect();
            out.sort_unstable();
            out.dedup();
            out
        })
        .collect()
}

/// The lines of `lines` (numbered from `first`) that hold most of the
/// query, best first, at most [`SHOWN`], in line order; none that hold
/// nothing.
pub fn hit_lines(lines: &[&str], first: u32, terms: &TermWeights) -> Vec<u32> {
    let hits = line_terms(&lines[..lines.len().min(MAX_LINES)], terms);
    let mut scored: Vec<(f32, u32)> = hits
        .iter()
        .enumerate()
        .map(|(i, h)| (h.iter().map(|t| terms.of(t)).sum(), first + i as u32))
        .filter(|(s, _): &(f32, u32)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<u32> = scored.into_iter().take(SHOWN).map(|x| x.1).collect();
    out.sort_unstable();
    out
}

/// A document's lines, `start..=end` (1-based), clamped to the file.
pub fn lines_of(text: &str, start: u32, end: u32) -> Vec<&str> {
    let s = (start as usize).saturating_sub(1);
    text.lines()
        .skip(s)
        .take((end as usize).saturating_sub(s).max(1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(words: &[(&str, f32)]) -> TermWeights {
        TermWeights {
            worth: words.iter().map(|(w, x)| (w.to_string(), *x)).collect(),
            literal: false,
        }
    }

    #[test]
    fn hit_lines_are_the_lines_holding_most_of_the_query_in_line_order() {
        let t = terms(&[("parse", 1.0), ("header", 2.0), ("date", 0.5)]);
        let lines = [
            "def parse_header(raw):",
            "    x = 1",
            "    date = raw.date",
            "    return header_value(raw)",
            "    # parse",
        ];
        assert_eq!(hit_lines(&lines, 10, &t), [10, 13, 14]);
        assert!(hit_lines(&["    x = 1"], 1, &t).is_empty());
    }

    #[test]
    fn lines_of_a_document_are_its_span_clamped_to_the_file() {
        let text = "a\nb\nc\nd";
        assert_eq!(lines_of(text, 2, 3), ["b", "c"]);
        assert_eq!(lines_of(text, 4, 9), ["d"]);
        assert_eq!(lines_of(text, 1, 1), ["a"]);
    }
}
