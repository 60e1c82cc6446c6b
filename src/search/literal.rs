//! The last resort: when the index finds nothing, search the indexed
//! sources for what the issue spells literally. An issue about
//! `@import` or `0x7fff` may share no indexed word with the code (`import`
//! is noise to the index, punctuation is dropped), while `git grep` would
//! find the file at once; `locate` must never answer "nothing" then.

use super::index::{FileDocs, Reader, SearchError};
use super::passage::TermWeights;
use super::{FileHit, Hit, Ranking};
use crate::parse::Kind;
use aho_corasick::{AhoCorasick, MatchKind};
use std::collections::BTreeMap;

/// Source read at most per query: the scan is linear in the repository,
/// and a query must cost bounded time. Files are read in path order, so
/// what a cut leaves out does not depend on history.
const MAX_SCAN_BYTES: usize = 256 << 20;
/// Literals searched at most.
const MAX_LITERALS: usize = 16;
/// Lines of one file looked at for its functions at most.
const MAX_HIT_LINES: usize = 1000;

/// What to search for in `text`, as written: tokens that carry
/// punctuation or code shape (`@import`, `--no-cache`, `0x7fff`,
/// `a.b`, `snake_case`, `camelCase`), and, when there are none, the plain
/// words the index could not use, at least four letters long.
pub fn literals(text: &str) -> Vec<String> {
    let mut code = Vec::new();
    let mut plain = Vec::new();
    for raw in text.split(|c: char| c.is_whitespace() || "()[]{}<>,;\"'`*|".contains(c)) {
        let tok = raw.trim_end_matches(['.', ':', '!', '?']);
        let letters = tok.chars().filter(|c| c.is_alphanumeric()).count();
        if letters < 2 || tok.len() < 3 || tok.len() > 120 {
            continue;
        }
        let shaped = tok.chars().any(|c| !c.is_alphanumeric())
            || tok.chars().skip(1).any(|c| c.is_uppercase())
            || (tok.chars().any(|c| c.is_ascii_digit()) && tok.chars().any(char::is_alphabetic));
        let list = if shaped { &mut code } else { &mut plain };
        // Matching ignores ASCII case, so `Import` and `import` are one literal.
        if !list.iter().any(|t: &String| t.eq_ignore_ascii_case(tok)) {
            list.push(tok.to_string());
        }
    }
    let words = plain
        .into_iter()
        .filter(|w| w.chars().count() >= 4 && !crate::text::words::is_stop(&w.to_lowercase()));
    let mut out = if code.is_empty() {
        words.collect()
    } else {
        code
    };
    out.truncate(MAX_LITERALS);
    out
}

/// Files and functions holding the literals: a file by the summed rarity
/// of the literals it holds, a function by those on its own lines. `None`
/// when the reader has no sources or nothing holds any literal.
pub fn rank(r: &Reader, literals: &[String]) -> Result<Option<Ranking>, SearchError> {
    if literals.is_empty() || !r.has_sources() {
        return Ok(None);
    }
    // Literals are short and few, so building cannot run out of room;
    // if it did, there would be nothing to search with.
    let Ok(ac) = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(literals)
    else {
        return Ok(None);
    };
    let scan = scan(r, &ac, literals.len())?;
    if scan.found.is_empty() {
        return Ok(None);
    }
    // Rarer literals say more: IDF over the indexed files.
    let n = scan.files.max(1) as f32;
    let worth: Vec<f32> = scan
        .df
        .iter()
        .map(|d| (1.0 + n / (*d as f32).max(1.0)).ln())
        .collect();
    let (mut files, mut functions) = (Vec::new(), Vec::new());
    for (num, hits) in &scan.found {
        let f = r.file(*num)?;
        let held = distinct(hits.iter().map(|h| h.1));
        files.push(FileHit {
            path: f.path.clone(),
            score: held.iter().map(|p| worth[*p]).sum(),
            evidence: held.len(),
        });
        functions.extend(holders(&f, hits, &worth));
    }
    files.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    functions.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    functions.truncate(super::RANKED_FUNCTIONS);
    let terms = TermWeights {
        worth: literals
            .iter()
            .zip(&worth)
            .map(|(l, w)| (l.to_ascii_lowercase(), *w))
            .collect(),
        literal: true,
    };
    Ok(Some(Ranking {
        files,
        functions,
        terms,
    }))
}

/// What a scan of the indexed sources found.
struct Scan {
    /// Files holding a literal, by number, with their (line, literal) hits.
    found: Vec<(u32, Vec<(u32, usize)>)>,
    /// How many files hold each literal.
    df: Vec<usize>,
    /// How many files are indexed.
    files: usize,
}

/// Every indexed file's text in path order, until [`MAX_SCAN_BYTES`].
fn scan(r: &Reader, ac: &AhoCorasick, literals: usize) -> Result<Scan, SearchError> {
    let nums: Vec<u32> = r.paths()?.in_path_order();
    let mut out = Scan {
        found: Vec::new(),
        df: vec![0; literals],
        files: nums.len(),
    };
    let mut scanned = 0usize;
    for num in nums {
        if scanned >= MAX_SCAN_BYTES {
            break;
        }
        let Some(text) = r.read_source(num)? else {
            continue;
        };
        scanned += text.len();
        let hits = line_hits(ac, &text);
        for p in distinct(hits.iter().map(|h| h.1)) {
            out.df[p] += 1;
        }
        if !hits.is_empty() {
            out.found.push((num, hits));
        }
    }
    Ok(out)
}

/// The functions of `f` whose lines hold the hits, each scored by the
/// worth of the distinct literals on its own lines.
fn holders(f: &FileDocs, hits: &[(u32, usize)], worth: &[f32]) -> Vec<Hit> {
    let mut per_doc: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (line, p) in hits.iter().take(MAX_HIT_LINES) {
        if let Some(d) = super::holder(&f.docs, *line, *line) {
            per_doc.entry(d).or_default().push(*p);
        }
    }
    per_doc
        .into_iter()
        .filter(|(d, _)| f.docs[*d].kind != Kind::Class)
        .map(|(d, ps)| {
            let doc = &f.docs[d];
            Hit {
                id: f.id(d as u16),
                path: f.path.clone(),
                qualname: doc.qualname.clone(),
                kind: doc.kind,
                start_line: doc.start_line,
                end_line: doc.end_line,
                score: distinct(ps.into_iter()).iter().map(|p| worth[*p]).sum(),
                copies: Vec::new(),
            }
        })
        .collect()
}

fn distinct(it: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut v: Vec<usize> = it.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Each (1-based line, literal) the text holds, in order.
fn line_hits(ac: &AhoCorasick, text: &str) -> Vec<(u32, usize)> {
    let mut out = Vec::new();
    let mut line = 1u32;
    let mut at = 0usize;
    for m in ac.find_overlapping_iter(text) {
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[at..m.start()]).count() as u32;
        at = m.start();
        out.push((line, m.pattern().as_usize()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_the_tokens_with_code_shape_else_the_plain_words() {
        assert_eq!(
            literals("tab hangs on circular @import (see `--no-cache`, 0x7fff)."),
            ["@import", "--no-cache", "0x7fff"]
        );
        assert_eq!(
            literals("Gson.fromJson drops snake_case fields"),
            ["Gson.fromJson", "snake_case"]
        );
        assert_eq!(
            literals("tab hangs on a circular import"),
            ["hangs", "circular", "import"]
        );
        assert!(literals("a b c").is_empty());
        assert_eq!(literals("@Import and @import"), ["@Import"]);
    }

    #[test]
    fn each_hit_is_numbered_by_its_line() {
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(["@import", "url"])
            .unwrap();
        let text = "a {}\n@IMPORT url(x);\n\nb @import";
        assert_eq!(line_hits(&ac, text), [(2, 0), (2, 1), (4, 0)]);
    }
}
