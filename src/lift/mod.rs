//! Semantic lifting: short verb–object features for every entity. Lifting
//! sits behind [`Lifter`] so a model-backed lifter can replace the offline one.

pub mod offline;
pub mod words;

use crate::parse::{Kind, Lang};

/// What a lifter sees of one entity.
#[derive(Debug, Clone)]
pub struct LiftInput<'a> {
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

/// Produces features. Implementations must be deterministic for the same input.
pub trait Lifter {
    /// Recorded with every feature set, e.g. `offline/1`.
    fn id(&self) -> &str;
    fn lift(&self, items: &[LiftInput]) -> Vec<Vec<String>>;
    fn summarize_file(&self, file: &FileLiftInput) -> Vec<String>;
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
        if words.len() < 2 && !words.first().is_some_and(|w| words::is_verb(w)) {
            continue;
        }
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
