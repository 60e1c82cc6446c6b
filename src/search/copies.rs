//! One place per function in the ranking, not one per copy. A repository
//! that commits a generated concatenation of its sources (a single-header
//! amalgamation, a plugin's built `.zsh`, a bundled `dist/` file) holds
//! every function twice, and both copies match an issue equally: the top
//! five would name two or three functions. Copies are the same qualified
//! name with the same text (the entity hash, which ignores whitespace);
//! the ranking keeps one at the best rank of them, the copy in the file
//! with the fewest entities (the source a fix edits, not the file built
//! from all of them), and names the others.

use super::Hit;
use crate::store::{Store, StoreError};
use std::collections::BTreeMap;

/// A file's entity count, and each entity's hash by id.
type FileHashes = (usize, BTreeMap<String, String>);

/// `functions` with each function's copies folded into its best-ranked
/// place. Only functions whose qualified name the list holds more than
/// once are looked up, so a ranking without such names costs no reads.
pub fn fold(store: &Store, functions: Vec<Hit>) -> Result<Vec<Hit>, StoreError> {
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, h) in functions.iter().enumerate() {
        by_name.entry(h.qualname.as_str()).or_default().push(i);
    }
    let shared: Vec<usize> = by_name
        .into_values()
        .filter(|v| v.len() > 1)
        .flatten()
        .collect();
    if shared.is_empty() {
        return Ok(functions);
    }
    let mut files: BTreeMap<String, Option<FileHashes>> = BTreeMap::new();
    // (qualname, hash) → each copy's place and its file's entity count.
    let mut groups: BTreeMap<(String, String), Vec<(usize, usize)>> = BTreeMap::new();
    for i in shared {
        let h = &functions[i];
        if !files.contains_key(&h.path) {
            let block = store.file_block(&h.path)?.map(|b| {
                let n = b.entities.len();
                let hashes = b.entities.into_iter().map(|e| (e.id, e.hash)).collect();
                (n, hashes)
            });
            files.insert(h.path.clone(), block);
        }
        let Some((n, hashes)) = &files[&h.path] else {
            continue;
        };
        let Some(hash) = hashes.get(&h.id).filter(|x| !x.is_empty()) else {
            continue;
        };
        groups
            .entry((h.qualname.clone(), hash.clone()))
            .or_default()
            .push((i, *n));
    }
    let mut keep: Vec<Option<Hit>> = functions.into_iter().map(Some).collect();
    for mut copies in groups.into_values().filter(|c| c.len() > 1) {
        copies.sort_unstable();
        let best = copies[0].0;
        let path = |i: usize| keep[i].as_ref().map(|h| h.path.as_str());
        let source = copies
            .iter()
            .min_by(|a, b| (a.1, path(a.0)).cmp(&(b.1, path(b.0))))
            .expect("a group has members")
            .0;
        let best_score = keep[best].as_ref().map_or(0.0, |h| h.score);
        let mut chosen = keep[source].take().expect("each place is in one group");
        chosen.copies = copies
            .iter()
            .filter(|c| c.0 != source)
            .filter_map(|c| keep[c.0].take().map(|h| h.id))
            .collect();
        chosen.copies.sort();
        chosen.score = chosen.score.max(best_score);
        keep[best] = Some(chosen);
    }
    Ok(keep.into_iter().flatten().collect())
}
