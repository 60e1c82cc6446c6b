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
    // (qualname, hash) → the places of its copies, best first.
    let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
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
        sizes.insert(i, *n);
        groups
            .entry((h.qualname.clone(), hash.clone()))
            .or_default()
            .push(i);
    }
    let mut keep: Vec<Option<Hit>> = functions.into_iter().map(Some).collect();
    for mut places in groups.into_values().filter(|p| p.len() > 1) {
        places.sort_unstable();
        let best = places[0];
        let best_score = keep[best].as_ref().map_or(0.0, |h| h.score);
        let source = *places
            .iter()
            .min_by_key(|&&i| (sizes[&i], keep[i].as_ref().map(|h| h.path.clone())))
            .expect("a group has members");
        let mut copies: Vec<String> = Vec::new();
        let mut chosen = None;
        for &i in &places {
            let h = keep[i].take().expect("each place is in one group");
            if i == source {
                chosen = Some(h);
            } else {
                copies.push(h.id);
            }
        }
        let mut chosen = chosen.expect("the source is a member");
        chosen.score = chosen.score.max(best_score);
        copies.sort();
        chosen.copies = copies;
        keep[best] = Some(chosen);
    }
    Ok(keep.into_iter().flatten().collect())
}
