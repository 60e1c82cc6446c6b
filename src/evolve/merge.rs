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
    let name = Path::new(".rpg/graph.jsonl");
    let ours_graph = snapshot::from_bytes(ours, name)?;
    let tree_of = |bytes: &[u8]| -> Result<gix::ObjectId, EvolveError> {
        let tree = snapshot::from_bytes(bytes, name)?.meta.tree;
        gix::ObjectId::from_hex(tree.as_bytes()).map_err(|_| EvolveError::BadCommit(tree))
    };
    let base_tree = match base.is_empty() {
        true => gix::ObjectId::empty_tree(gix::hash::Kind::Sha1),
        false => tree_of(base)?,
    };
    let merged = repo.merge_trees(base_tree, tree_of(ours)?, tree_of(theirs)?, NESTED)?;
    let commit = gix::ObjectId::from_hex(ours_graph.meta.commit.as_bytes())
        .map_err(|_| EvolveError::BadCommit(ours_graph.meta.commit.clone()))?;
    let scratch = tempfile_dir()?;
    let result = (|| {
        let copy = RpgDir::new(&scratch)?;
        copy.ensure()?;
        std::fs::write(copy.snapshot_path(), ours).map_err(|source| {
            crate::store::StoreError::Io {
                path: copy.snapshot_path(),
                source,
            }
        })?;
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
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn tempfile_dir() -> Result<std::path::PathBuf, EvolveError> {
    let dir = std::env::temp_dir().join(format!("rpg-merge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|source| {
        EvolveError::Store(crate::store::StoreError::Io {
            path: dir.clone(),
            source,
        })
    })?;
    Ok(dir)
}
