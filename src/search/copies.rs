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

/// What makes functions copies of each other: their qualified name and
/// their text's hash.
pub type CopyKey = (String, String);

/// A file's entity count, and each entity's hash by id.
type FileHashes = (usize, BTreeMap<String, String>);

/// The copy key of each function of `functions` (id, path, qualified name)
/// whose qualified name they hold more than once, with its file's entity
/// count. Only those functions' files are read, so a list without such
/// names costs no reads.
pub fn copy_keys<'a>(
    store: &Store,
    functions: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
) -> Result<BTreeMap<String, (CopyKey, usize)>, StoreError> {
    let mut by_name: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for (id, path, qualname) in functions {
        by_name.entry(qualname).or_default().push((id, path));
    }
    let mut files: BTreeMap<&str, Option<FileHashes>> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (qualname, ids) in by_name.into_iter().filter(|(_, v)| v.len() > 1) {
        for (id, path) in ids {
            if !files.contains_key(path) {
                let block = store.file_block(path)?.map(|b| {
                    let n = b.entities.len();
                    (n, b.entities.into_iter().map(|e| (e.id, e.hash)).collect())
                });
                files.insert(path, block);
            }
            let Some((n, hashes)) = &files[path] else {
                continue;
            };
            if let Some(hash) = hashes.get(id).filter(|x| !x.is_empty()) {
                out.insert(id.to_string(), ((qualname.to_string(), hash.clone()), *n));
            }
        }
    }
    Ok(out)
}

/// `functions` with each function's copies folded into its best-ranked
/// place.
pub fn fold(store: &Store, functions: Vec<Hit>) -> Result<Vec<Hit>, StoreError> {
    let keys = copy_keys(
        store,
        functions
            .iter()
            .map(|h| (h.id.as_str(), h.path.as_str(), h.qualname.as_str())),
    )?;
    if keys.is_empty() {
        return Ok(functions);
    }
    // Each copy's place and its file's entity count.
    let mut groups: BTreeMap<&CopyKey, Vec<(usize, usize)>> = BTreeMap::new();
    for (i, h) in functions.iter().enumerate() {
        if let Some((key, n)) = keys.get(&h.id) {
            groups.entry(key).or_default().push((i, *n));
        }
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
