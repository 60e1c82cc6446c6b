//! The merge driver for the snapshot: when two branches both changed
//! `.rpg/graph.jsonl`, git asks rpg instead of writing conflict markers.
//!
//! Each side's header names the tree it describes. git merges those three
//! trees (`git merge-tree --write-tree`), and the merged graph is our
//! side's graph evolved to that tree in a scratch directory: a true graph
//! of a real tree, sealed like any other snapshot, whatever the two sides
//! held.

use super::{update, EvolveError, Target, UpdateOptions};
use crate::config::Config;
use crate::git::Repo;
use crate::lift::Lifter;
use crate::store::{snapshot, RpgDir};
use std::path::Path;

/// Set in the environment of the nested merge, so the driver it may call
/// keeps our side instead of recursing.
pub const NESTED: &str = "RPG_IN_MERGE_DRIVER";

/// The snapshot of the merge of `base`, `ours` and `theirs` (the bytes git
/// hands a merge driver). `base` is empty when the file has no common
/// ancestor.
pub fn merge_snapshots(
    repo: &Repo,
    config: &Config,
    base: &[u8],
    ours: &[u8],
    theirs: &[u8],
    lifter: &dyn Lifter,
) -> Result<Vec<u8>, EvolveError> {
    // Only the headers are read here: each side's records are adopted (and
    // so checked against git) by the update below, never taken whole.
    let name = Path::new(".rpg/graph.jsonl");
    let ours_meta = snapshot::header_of(ours, name)?;
    let tree_of = |bytes: &[u8]| -> Result<gix::ObjectId, EvolveError> {
        let tree = snapshot::header_of(bytes, name)?.tree;
        gix::ObjectId::from_hex(tree.as_bytes()).map_err(|_| EvolveError::BadCommit(tree))
    };
    let base_tree = match base.is_empty() {
        true => gix::ObjectId::empty_tree(gix::hash::Kind::Sha1),
        false => tree_of(base)?,
    };
    let merged = repo.merge_trees(base_tree, tree_of(ours)?, tree_of(theirs)?, NESTED)?;
    let commit = gix::ObjectId::from_hex(ours_meta.commit.as_bytes())
        .map_err(|_| EvolveError::BadCommit(ours_meta.commit.clone()))?;
    // A new directory of a random name: /tmp is shared.
    let scratch = tempfile::Builder::new()
        .prefix("rpg-merge-")
        .tempdir()
        .map_err(|source| crate::store::StoreError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
    let result = (|| {
        let copy = RpgDir::new(scratch.path())?;
        copy.ensure()?;
        snapshot::write_atomic(&copy.snapshot_path(), ours)?;
        let target = Target {
            commit,
            tree: merged,
        };
        update(
            repo,
            &copy,
            config,
            target,
            lifter,
            &UpdateOptions::default(),
        )?;
        let store = copy.open()?;
        copy.write_snapshot(&store)?;
        drop(store);
        std::fs::read(copy.snapshot_path()).map_err(|source| {
            EvolveError::Store(crate::store::StoreError::Io {
                path: copy.snapshot_path(),
                source,
            })
        })
    })();
    result
}
