//! Persistence. sled (`.rpg/store/`, never committed) is the working store
//! every command reads and writes; `.rpg/graph.jsonl` is the canonical
//! snapshot committed with the repository. The store records which snapshot
//! it mirrors, so a fresh clone, a pull or a checkout that changes the
//! snapshot is noticed and the store is rebuilt from it — no parsing and no
//! model calls.

mod db;
pub mod snapshot;

pub use db::FileStamp;
use db::Mirrored;
pub use db::{
    block_names, blocks_of, name_bucket, EventLog, FileBlock, FileMentions, HierState, Store,
    StoredCounts, WriteSet, SEARCH,
};

use crate::graph::Graph;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("corrupt snapshot {path}, line {line}: {message}")]
    Corrupt {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path} uses snapshot schema {found}, this rpg reads schema {expected}; run `rpg init` to rebuild it")]
    Schema {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("the store at {0} is in use by another rpg process; try again when it finishes")]
    Locked(PathBuf),
    #[error("store {path}: {message}")]
    Sled { path: PathBuf, message: String },
    #[error("no graph yet: run `rpg init` first")]
    NoGraph,
}

/// The graph's directory at the top of the work tree.
pub const RPG_DIR: &str = ".rpg";

/// The `.rpg/` directory of a repository.
#[derive(Debug, Clone)]
pub struct RpgDir {
    root: PathBuf,
}

const GITIGNORE: &str = "\
# rpg: the sled working store and scratch files are local, never committed.
/store/
/store.*/
*.tmp.*
/log/
/vectors/
/cache/
/lock
";

const GITATTRIBUTES: &str = "\
# rpg: the snapshot is generated; collapse it in reviews and keep LF endings.
# On a merge conflict, run `rpg update --snapshot` instead of editing it.
graph.jsonl text eol=lf linguist-generated=true
";

impl RpgDir {
    pub fn new(workdir: &Path) -> RpgDir {
        RpgDir {
            root: workdir.join(RPG_DIR),
        }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn snapshot_path(&self) -> PathBuf {
        self.root.join(snapshot::SNAPSHOT_FILE)
    }

    fn store_path(&self) -> PathBuf {
        self.root.join("store")
    }

    fn io(&self, path: &Path) -> impl Fn(std::io::Error) -> StoreError + '_ {
        let path = path.to_path_buf();
        move |source| StoreError::Io {
            path: path.clone(),
            source,
        }
    }

    /// Create `.rpg/` with its git metadata files.
    pub fn ensure(&self) -> Result<(), StoreError> {
        std::fs::create_dir_all(&self.root).map_err(self.io(&self.root))?;
        for (name, body) in [(".gitignore", GITIGNORE), (".gitattributes", GITATTRIBUTES)] {
            let p = self.root.join(name);
            let current = std::fs::read_to_string(&p).ok();
            if current.as_deref() != Some(body) {
                snapshot::write_atomic(&p, body.as_bytes())?;
            }
        }
        Ok(())
    }

    pub fn has_snapshot(&self) -> bool {
        self.snapshot_path().is_file()
    }

    pub fn read_snapshot(&self) -> Result<(Graph, String), StoreError> {
        let path = self.snapshot_path();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(StoreError::NoGraph),
            Err(e) => return Err(self.io(&path)(e)),
        };
        let g = snapshot::from_bytes(&bytes, &path)?;
        Ok((g, digest(&bytes)))
    }

    /// Write the snapshot and a store mirroring it; `mentions` are the
    /// names each file looks up (see [`FileMentions`]).
    pub fn save(
        &self,
        g: &Graph,
        mentions: &BTreeMap<String, FileMentions>,
    ) -> Result<(), StoreError> {
        self.ensure()?;
        let t = std::time::Instant::now();
        let bytes = snapshot::to_bytes(g);
        crate::timing("snapshot bytes", t);
        let d = digest(&bytes);
        // The file write and the store build touch different things; overlap them.
        let (written, stored) = std::thread::scope(|scope| {
            let writer = scope.spawn(|| snapshot::write_atomic(&self.snapshot_path(), &bytes));
            let stored = self.build_store(g, mentions, &d);
            (
                writer
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
                stored,
            )
        });
        written?;
        self.swap_store(stored?)?;
        crate::timing("snapshot+store", t);
        Ok(())
    }

    /// Rewrite the snapshot from the store (after updates), and record it
    /// as the one the store mirrors.
    pub fn write_snapshot(&self, store: &Store) -> Result<(), StoreError> {
        self.write_snapshot_unless_relabel(store, |_, _| false)
            .map(|_| ())
    }

    /// [`RpgDir::write_snapshot`], except that a snapshot differing only
    /// in the commit it names is kept when `equivalent(old_tree, new_tree)`
    /// says the two commits hold the same code. Rewriting it then would
    /// only record the snapshot's own commit, which needs a new commit,
    /// which needs a new snapshot, for ever. True when the file was kept.
    pub fn write_snapshot_unless_relabel(
        &self,
        store: &Store,
        equivalent: impl Fn(&str, &str) -> bool,
    ) -> Result<bool, StoreError> {
        self.ensure()?;
        let g = store.load_graph()?;
        let bytes = snapshot::to_bytes(&g);
        let path = self.snapshot_path();
        let old = std::fs::read(&path).ok();
        let kept = old.as_deref().is_some_and(|old| {
            old != bytes.as_slice()
                && snapshot::relabelled(old, &bytes)
                    .is_some_and(|(old_tree, new_tree)| equivalent(&old_tree, &new_tree))
        });
        let written = match old {
            Some(old) if kept || old == bytes => old,
            _ => {
                snapshot::write_atomic(&path, &bytes)?;
                bytes
            }
        };
        let mut w = WriteSet::default();
        w.put_mirrored(&Mirrored {
            digest: digest(&written),
            stamp: FileStamp::of(&path).unwrap_or_default(),
        });
        store.apply(w)?;
        Ok(kept)
    }

    /// Open the store. When it is missing or broken, or the snapshot changed
    /// underneath it (a fresh clone, a pull, a checkout), the store adopts
    /// the snapshot: rebuilt from it without parsing or model calls,
    /// keeping what it knew about files whose content did not change.
    pub fn open(&self) -> Result<Store, StoreError> {
        let path = self.snapshot_path();
        let stamp = FileStamp::of(&path);
        let opened = match Store::open_waiting(&self.store_path()) {
            Err(e @ StoreError::Locked(_)) => return Err(e),
            other => other,
        };
        let mut keep = BTreeMap::new();
        if let Ok(store) = opened {
            match store.mirrored() {
                Ok(Some(m)) if stamp.as_ref().is_some_and(|s| m.stamp == *s) => return Ok(store),
                Ok(Some(m)) if stamp.is_some() => {
                    // Timestamps differ (a checkout rewrote the file): compare content.
                    let bytes = std::fs::read(&path).map_err(self.io(&path))?;
                    if digest(&bytes) == m.digest {
                        let mut w = WriteSet::default();
                        w.put_mirrored(&Mirrored {
                            digest: m.digest,
                            stamp: FileStamp::of(&path).unwrap_or_default(),
                        });
                        store.apply(w)?;
                        return Ok(store);
                    }
                }
                Ok(None) if stamp.is_none() => return Err(StoreError::NoGraph),
                _ => {}
            }
            keep = store.all_file_mentions().unwrap_or_default();
            drop(store);
        }
        let (g, d) = self.read_snapshot()?;
        let fresh = self.build_store(&g, &keep, &d)?;
        self.swap_store(fresh)?;
        Store::open_waiting(&self.store_path())
    }

    /// Write `g` into a new store beside the live one, recording which
    /// snapshot it mirrors; returns its path.
    fn build_store(
        &self,
        g: &Graph,
        mentions: &BTreeMap<String, FileMentions>,
        snapshot_digest: &str,
    ) -> Result<PathBuf, StoreError> {
        let fresh = self.root.join(format!("store.new.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&fresh);
        let store = Store::open(&fresh)?;
        // The stamp may predate a snapshot still being written; a stale
        // stamp only costs one digest comparison on the next open.
        let mirrored = Mirrored {
            digest: snapshot_digest.to_string(),
            stamp: FileStamp::of(&self.snapshot_path()).unwrap_or_default(),
        };
        store.write_graph(g, mentions, &mirrored)?;
        Ok(fresh)
    }

    /// Rewrite the store without the garbage a large write leaves in sled's
    /// log, which otherwise every later open and close pays for. The copy
    /// is built beside the live store and swapped in, so a kill at any point
    /// leaves one whole store.
    pub fn compact(&self, store: Store) -> Result<Store, StoreError> {
        let fresh = self.root.join(format!("store.new.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&fresh);
        {
            let copy = Store::open(&fresh)?;
            store.copy_into(&copy)?;
        }
        drop(store);
        self.swap_store(fresh)?;
        Store::open_waiting(&self.store_path())
    }

    /// Move a freshly built store into place.
    fn swap_store(&self, fresh: PathBuf) -> Result<(), StoreError> {
        let live = self.store_path();
        let old = self.root.join(format!("store.old.{}", std::process::id()));
        if live.exists() {
            std::fs::rename(&live, &old).map_err(self.io(&live))?;
        }
        std::fs::rename(&fresh, &live).map_err(self.io(&live))?;
        let _ = std::fs::remove_dir_all(&old);
        self.sweep_leftovers();
        Ok(())
    }

    /// Stores left behind by killed runs.
    fn sweep_leftovers(&self) {
        let Ok(dir) = std::fs::read_dir(&self.root) else {
            return;
        };
        for entry in dir.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("store.new.") || name.starts_with("store.old.") {
                let pid_alive = name
                    .rsplit('.')
                    .next()
                    .and_then(|p| p.parse::<u32>().ok())
                    .is_some_and(|p| {
                        p == std::process::id() || Path::new(&format!("/proc/{p}")).exists()
                    });
                if !pid_alive {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
    }
}

/// sha256 hex of bytes.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
