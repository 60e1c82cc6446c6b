//! Semantic lifting: short verb–object features for every entity. Lifting
//! sits behind [`Lifter`] so a model-backed lifter can replace the offline
//! one; the model-backed one also proposes the hierarchy, routes insertions
//! and judges drift, each with the offline path as its fallback.

pub mod adopted;
pub mod llm;
pub mod offline;

use crate::graph::Category;
use crate::parse::{Kind, Lang};
use std::collections::BTreeMap;

#[derive(Debug, thiserror::Error)]
pub enum LiftError {
    /// The model service refused us in a way no retry fixes (bad key,
    /// unknown model): going on would only mark everything offline.
    #[error("the model API at {base} refused the request ({status}): {message}")]
    Refused {
        base: String,
        status: u16,
        message: String,
    },
    #[error("model settings: {0}")]
    Settings(String),
    #[error("the lift cache {path}: {reason}")]
    Cache { path: String, reason: String },
}

/// What a lifter sees of one entity.
#[derive(Debug, Clone)]
pub struct LiftInput<'a> {
    pub path: &'a str,
    pub qualname: &'a str,
    /// Content hash of the entity's own text (indentation and its own name
    /// ignored): what lifted features are cached under.
    pub hash: &'a str,
    /// The entity's source text.
    pub code: &'a str,
    pub lang: Lang,
    pub kind: Kind,
    pub name: &'a str,
    /// Class or type that owns a method.
    pub owner: Option<&'a str>,
    pub flavor: &'a str,
    pub signature: &'a str,
    pub doc: &'a str,
    /// Bare names of what the entity calls, in source order.
    pub callees: Vec<&'a str>,
}

/// What a lifter sees of a file, after its entities were lifted.
#[derive(Debug, Clone)]
pub struct FileLiftInput<'a> {
    pub path: &'a str,
    pub doc: &'a str,
    /// Features of top-level entities, largest first.
    pub top_features: Vec<&'a [String]>,
}

/// Features and the lifter that wrote them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lifted {
    pub features: Vec<String>,
    /// Shared: every entity a lifter writes names it.
    pub by: crate::graph::Id,
}

/// What the hierarchy step sees of a file.
#[derive(Debug, Clone)]
pub struct FileOutline<'a> {
    pub path: &'a str,
    pub features: &'a [String],
    /// The leaf the offline hierarchy gives the file: the repair for a
    /// missing or invalid model answer.
    pub offline_leaf: &'a str,
}

/// An entity to place in the hierarchy.
#[derive(Debug, Clone)]
pub struct RouteInput<'a> {
    pub id: &'a str,
    pub features: &'a [String],
}

/// Produces features, and may organise the hierarchy. Implementations must
/// be deterministic for the same input (a model-backed one by caching).
pub trait Lifter {
    /// Recorded in the graph's meta, e.g. `offline/1`.
    fn id(&self) -> &str;
    /// Whether [`LiftInput::code`] is read; when not, init holds no file
    /// text and passes it empty.
    fn reads_code(&self) -> bool {
        true
    }
    /// Features for every item, in order.
    fn lift(&self, items: &[LiftInput]) -> Result<Vec<Lifted>, LiftError>;
    /// Summary features for every file, in order.
    fn summarize_files(&self, files: &[FileLiftInput]) -> Result<Vec<Lifted>, LiftError>;
    /// A three-level leaf for every file, or `None` to keep the offline
    /// hierarchy.
    fn organize(
        &self,
        _files: &[FileOutline],
    ) -> Result<Option<BTreeMap<String, String>>, LiftError> {
        Ok(None)
    }
    /// The deepest existing category `item` belongs under (Algorithm 4),
    /// `Some("")` for none, or `None` to route offline.
    fn route(
        &self,
        _categories: &BTreeMap<String, Category>,
        _item: &RouteInput,
    ) -> Result<Option<String>, LiftError> {
        Ok(None)
    }
    /// Whether a modification changed the entity's intent, asked only when
    /// the feature overlap is ambiguous; `None` to trust the overlap.
    fn judge_drift(
        &self,
        _id: &str,
        _old: &[String],
        _new: &[String],
    ) -> Result<Option<bool>, LiftError> {
        Ok(None)
    }
}

/// Where each line of a text starts: cutting every entity of a file out
/// of it then costs one scan of the file, not one per entity.
#[derive(Default)]
pub struct LineStarts(Vec<usize>);

impl LineStarts {
    pub fn of(text: &str) -> LineStarts {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineStarts(starts)
    }

    /// Lines `start..=end` (1-based) of `text`, the text these starts were
    /// taken from, without the last line's newline.
    pub fn cut<'t>(&self, text: &'t str, start: u32, end: u32) -> &'t str {
        let at = |line: u32| self.0.get(line.max(1) as usize - 1).copied();
        let begin = at(start).unwrap_or(text.len());
        let stop = at(end.saturating_add(1)).map_or(text.len(), |next| next - 1);
        text.get(begin..stop.max(begin)).unwrap_or("")
    }
}

/// Lowercase, trim, collapse whitespace, drop empties and duplicates, cap count and length.
pub fn normalize_features(raw: Vec<String>, max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for f in raw {
        let words: Vec<String> = f
            .to_lowercase()
            .split(|c: char| c.is_whitespace() || c == '/')
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                    .to_string()
            })
            .filter(|w| !w.is_empty())
            .take(8)
            .collect();
        if words.len() < 2
            && !words
                .first()
                .is_some_and(|w| crate::text::words::is_verb(w))
        {
            continue;
        }
        // A word is cut as a name is (a generated identifier can be
        // thousands of letters), so no feature passes what a snapshot
        // reader accepts.
        let words: Vec<&str> = words.iter().map(|w| crate::text::prefix(w, 48)).collect();
        let phrase = words.join(" ");
        if !out.contains(&phrase) {
            out.push(phrase);
        }
        if out.len() == max {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::LineStarts;

    #[test]
    fn lines_are_cut_one_based_and_inclusive_without_the_last_newline() {
        let text = "a\nbb\n\nccc\n";
        let lines = LineStarts::of(text);
        assert_eq!(lines.cut(text, 1, 1), "a");
        assert_eq!(lines.cut(text, 2, 4), "bb\n\nccc");
        assert_eq!(lines.cut(text, 3, 3), "");
        assert_eq!(lines.cut(text, 4, 9), "ccc\n");
        assert_eq!(lines.cut(text, 6, 9), "");
        let unterminated = "x\ny";
        assert_eq!(LineStarts::of(unterminated).cut(unterminated, 2, 2), "y");
    }
}
