//! Persistence. sled (`.rpg/store/`, never committed) is the working store
//! every command reads and writes; `.rpg/graph.jsonl` is the canonical
//! snapshot committed with the repository. The store records which snapshot
//! it mirrors, so a fresh clone, a pull or a checkout that changes the
//! snapshot is noticed and the store is rebuilt from it — no parsing and no
//! model calls.

mod buckets;
mod db;
pub(crate) mod grams;
pub mod snapshot;

pub(crate) use db::{
    block_names, blocks_of, DepKind, EventLog, FileBlock, FileDeps, FileStamp, HierState, Mirrored,
    Resolved, StoredParse, WriteSet, SEARCH, SEARCH_STALE,
};
pub use db::{Adoption, Store, StoredCounts, STORE_LAYOUT};

use crate::graph::Graph;
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
    #[error("damaged snapshot {path}: {message}")]
    Damaged { path: PathBuf, message: String },
    #[error("{} has merge conflict markers; run `rpg update --snapshot`", .0.display())]
    Conflicted(PathBuf),
    #[error("{path} uses snapshot schema {found}, this rpg reads schema {expected}")]
    Schema {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error("the store at {0} is in use by another rpg process; try again when it finishes")]
    Locked(PathBuf),
    #[error("store {path}")]
    Sled {
        path: PathBuf,
        #[source]
        source: sled::Error,
    },
    #[error("store {path}: a {what} record cannot be read; delete .rpg/store to rebuild it")]
    Record {
        path: PathBuf,
        what: String,
        #[source]
        source: Option<serde_json::Error>,
    },
    #[error("the store at {0} was written by another rpg version and there is no snapshot to rebuild it from; run `rpg init`")]
    Layout(PathBuf),
    #[error("no graph yet: run `rpg init` first")]
    NoGraph,
    /// The store does not mirror the snapshot on disk, which must be
    /// adopted first (`evolve::open` does).
    #[error("the store does not hold the committed snapshot's graph yet")]
    Unadopted,
}

impl StoreError {
    /// The snapshot file cannot be believed: rebuild from git, never from it.
    pub fn is_damaged_snapshot(&self) -> bool {
        matches!(
            self,
            StoreError::Corrupt { .. }
                | StoreError::Damaged { .. }
                | StoreError::Conflicted(_)
                | StoreError::Schema { .. }
        )
    }
}

/// The graph's directory at the top of the work tree.
pub const RPG_DIR: &str = ".rpg";

/// Whether two trees hold the same code: the same everything but `.rpg/`.
/// A commit that only wrote the snapshot changes nothing the graph
/// describes. False when either is missing.
pub fn same_outside_graph(repo: &crate::git::Repo, a: gix::ObjectId, b: gix::ObjectId) -> bool {
    repo.same_except(a, b, RPG_DIR)
}

/// Whether a graph of `commit` (tree `tree`) describes `head`: the same
/// commit, or one that differs only in `.rpg/`.
pub fn graph_describes(
    repo: &crate::git::Repo,
    commit: &str,
    tree: &str,
    head: gix::ObjectId,
) -> bool {
    if gix::ObjectId::from_hex(commit.as_bytes()).is_ok_and(|c| c == head) {
        return true;
    }
    let (Ok(tree), Ok(head_tree)) = (gix::ObjectId::from_hex(tree.as_bytes()), repo.tree_of(head))
    else {
        return false;
    };
    same_outside_graph(repo, tree, head_tree)
}

/// The commit a graph made at `commit` from `tree` is shown as: HEAD
/// when the graph describes HEAD's code. A snapshot written by the
/// pre-commit hook names the parent, since the new commit's id does not
/// exist yet; its tree is what identifies it.
pub fn shown_commit(repo: &crate::git::Repo, commit: &str, tree: &str) -> String {
    match repo.head_commit() {
        Some(h) if graph_describes(repo, commit, tree, h) => h.to_string(),
        _ => commit.to_string(),
    }
}

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
/pending
";

const GITATTRIBUTES: &str = "\
# rpg: the snapshot is generated; collapse it in reviews and keep LF endings.
# `rpg hook install` registers the merge driver that regenerates it on a
# merge; without it, run `rpg update --snapshot` instead of editing it.
graph.jsonl text eol=lf linguist-generated=true merge=rpg
";

/// A snapshot write: whether the file was kept, the fingerprint of the
/// file now on disk, and the seals of what was written, if anything was.
type Written = (bool, String, Option<snapshot::Seals>);

impl RpgDir {
    /// The `.rpg/` of a work tree (or a scratch directory). It must be a
    /// real directory or absent: a `.rpg` that is a link, which a commit
    /// can plant, would send the graph, the store and the logs wherever it
    /// points, so it is refused here, before anything reads or writes.
    pub fn new(workdir: &Path) -> Result<RpgDir, StoreError> {
        let root = workdir.join(RPG_DIR);
        crate::files::real_dir(&root).map_err(|source| StoreError::Io {
            path: root.clone(),
            source,
        })?;
        Ok(RpgDir { root })
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
        crate::files::ensure_dir(&self.root).map_err(self.io(&self.root))?;
        for (name, body) in [(".gitignore", GITIGNORE), (".gitattributes", GITATTRIBUTES)] {
            let p = self.root.join(name);
            let current = crate::files::read_text_capped(&p, crate::files::cap::SMALL);
            if current.ok().flatten().as_deref() != Some(body) {
                snapshot::write_atomic(&p, body.as_bytes())?;
            }
        }
        Ok(())
    }

    pub fn has_snapshot(&self) -> bool {
        crate::files::is_regular(&self.snapshot_path())
    }

    /// The snapshot file's bytes. One that cannot be read as rpg reads it
    /// (a link, a FIFO, past the cap) is damaged, as a cut one is: rebuilt
    /// from git, never followed.
    /// Mapped, not copied: on the Linux tree it is 274 MB, read once from
    /// end to end (see [`crate::files::map_capped`]).
    pub fn snapshot_bytes(&self) -> Result<crate::files::Mapped, StoreError> {
        let path = self.snapshot_path();
        match crate::files::map_capped(&path, crate::files::cap::SNAPSHOT) {
            Ok(Some(b)) => Ok(b),
            Ok(None) => Err(StoreError::NoGraph),
            Err(e) => Err(StoreError::Damaged {
                path,
                message: e.to_string(),
            }),
        }
    }

    pub fn read_snapshot(&self) -> Result<(Graph, String), StoreError> {
        let bytes = self.snapshot_bytes()?;
        let g = snapshot::from_bytes(&bytes, &self.snapshot_path())?;
        Ok((g, snapshot::fingerprint_of_sealed(&bytes)))
    }

    /// Write the snapshot and a store mirroring it, with what resolution
    /// learnt (see [`Resolved`]).
    pub fn save(&self, g: &Graph, resolved: Resolved) -> Result<(), StoreError> {
        self.ensure()?;
        let _lock = self.lock(LOCK_WAIT)?;
        let t = std::time::Instant::now();
        let (header, seals) = snapshot::header_sealed(g);
        crate::timing("snapshot seal", t);
        let d = snapshot::fingerprint_of_sealed(&header);
        let path = self.snapshot_path();
        // The file write and the store build read the graph side by side;
        // the writer serialises it again, a file at a time, rather than
        // holding the whole snapshot through the store build.
        let (written, stored) = std::thread::scope(|scope| {
            let writer = scope.spawn(|| snapshot::write_streamed(&path, &header, g));
            let stored = self.build_store(g, resolved, &d, Some(&seals));
            (
                writer
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
                stored,
            )
        });
        written?;
        let stored = stored?;
        crate::failpoint("store-before-swap");
        self.swap_store(stored)?;
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
        let _lock = self.lock(LOCK_WAIT)?;
        let path = self.snapshot_path();
        let stale = store.snapshot_stale()?;
        let t = std::time::Instant::now();
        let (kept, digest, seals) = match self.splice_snapshot(store, &stale, &equivalent)? {
            Some(done) => {
                crate::timing("snapshot spliced", t);
                done
            }
            None => {
                let done = self.serialise_snapshot(store, &equivalent)?;
                crate::timing("snapshot whole", t);
                done
            }
        };
        let mut w = WriteSet::default();
        w.put_mirrored(&Mirrored {
            digest,
            stamp: FileStamp::of(&path).unwrap_or_default(),
            damaged: None,
        });
        if let Some(seals) = seals {
            w.put_seals(&seals);
        }
        w.snapshot_caught_up(&stale);
        store.apply(w)?;
        Ok(kept)
    }

    /// Rewrite only the files whose blocks changed since the snapshot on
    /// disk was written, when that file is the one the store mirrors:
    /// (kept, fingerprint of the file now on disk, its seals when new).
    /// `None` when it cannot be.
    fn splice_snapshot(
        &self,
        store: &Store,
        stale: &[String],
        equivalent: &impl Fn(&str, &str) -> bool,
    ) -> Result<Option<Written>, StoreError> {
        let path = self.snapshot_path();
        let Some(m) = store.mirrored()?.filter(|m| m.damaged.is_none()) else {
            return Ok(None);
        };
        let Ok(old) = self.snapshot_bytes() else {
            return Ok(None);
        };
        // As on open: a matching stamp vouches for the content.
        if FileStamp::of(&path).as_ref() != Some(&m.stamp)
            && snapshot::fingerprint(&old) != m.digest
        {
            return Ok(None);
        }
        let mut changed = BTreeMap::new();
        for p in stale {
            changed.insert(p.clone(), store.file_block(p)?);
        }
        let categories = store.categories()?;
        let known = store.seals()?.unwrap_or_default();
        let Some(new) = snapshot::splice(&old, &known, &changed, &categories, &store.meta()?)
        else {
            return Ok(None);
        };
        if new.unchanged() {
            return Ok(Some((false, m.digest, None)));
        }
        if new.relabelled().is_some_and(|(a, b)| equivalent(&a, &b)) {
            return Ok(Some((true, m.digest, None)));
        }
        let fingerprint = new.write(&path)?;
        Ok(Some((false, fingerprint, Some(new.seals))))
    }

    /// Serialise the whole graph in the store: see [`Written`].
    fn serialise_snapshot(
        &self,
        store: &Store,
        equivalent: &impl Fn(&str, &str) -> bool,
    ) -> Result<Written, StoreError> {
        let g = store.load_graph()?;
        let (bytes, seals) = snapshot::to_bytes_sealed(&g);
        let path = self.snapshot_path();
        let old = self.snapshot_bytes().ok();
        let kept = old.as_deref().is_some_and(|old| {
            old != bytes.as_slice()
                && snapshot::relabelled(old, &bytes)
                    .is_some_and(|(old_tree, new_tree)| equivalent(&old_tree, &new_tree))
        });
        Ok(match old {
            Some(old) if kept || *old == *bytes => (kept, snapshot::fingerprint(&old), None),
            _ => {
                snapshot::write_atomic(&path, &bytes)?;
                (kept, snapshot::fingerprint_of_sealed(&bytes), Some(seals))
            }
        })
    }

    /// The store, when it mirrors the snapshot file on disk (or there is
    /// no snapshot file and the store knows the graph). When the snapshot
    /// changed underneath it (a fresh clone, a pull, a checkout), or the
    /// store is missing or of another layout, [`StoreError::Unadopted`]:
    /// the caller adopts the snapshot (see `evolve::open`). A repository
    /// with no graph gets nothing written.
    pub fn open(&self) -> Result<Store, StoreError> {
        let path = self.snapshot_path();
        let stamp = FileStamp::of(&path);
        let live = self.live_store()?;
        if stamp.is_none() && live.is_none() {
            return Err(StoreError::NoGraph);
        }
        let opened = match self.open_live_store() {
            Err(e @ StoreError::Locked(_)) => return Err(e),
            other => other,
        };
        // A store laid out by another version is never read: its records
        // would mean something else.
        let store = match (opened, stamp.is_some()) {
            (Ok(store), _) if store.layout()? == Some(STORE_LAYOUT) => store,
            (Ok(_), false) => return Err(StoreError::Layout(self.store_path())),
            (Err(e), false) => return Err(e),
            (_, true) => return Err(StoreError::Unadopted),
        };
        match store.mirrored()? {
            Some(m) if stamp.as_ref().is_some_and(|s| m.stamp == *s) => Ok(store),
            Some(m) if stamp.is_some() => {
                // Timestamps differ (a checkout rewrote the file): compare content.
                let bytes = self.snapshot_bytes()?;
                if snapshot::fingerprint(&bytes) != m.digest {
                    return Err(StoreError::Unadopted);
                }
                let mut w = WriteSet::default();
                w.put_mirrored(&Mirrored {
                    stamp: FileStamp::of(&path).unwrap_or_default(),
                    ..m
                });
                store.apply(w)?;
                Ok(store)
            }
            // The snapshot file is gone (a checkout from before it was
            // committed): the store still knows the graph.
            Some(_) => Ok(store),
            None if stamp.is_none() => Err(StoreError::NoGraph),
            None => Err(StoreError::Unadopted),
        }
    }

    /// The live store's directory, when there is one: checked first, since
    /// sled opens and writes whatever it finds there by name.
    fn live_store(&self) -> Result<Option<PathBuf>, StoreError> {
        let path = self.store_path();
        match crate::files::check_store_dir(&path).map_err(self.io(&path))? {
            crate::files::Entry::Dir => Ok(Some(path)),
            _ => Ok(None),
        }
    }

    /// A new empty directory beside the live store, created exclusively
    /// under a random name (`store.<kind>.<pid>.<random>`), so no name a
    /// commit planted is ever reused; removed when dropped unless swapped
    /// in, so a failed build (a full disk) leaves nothing behind.
    fn scratch_store(&self, kind: &str) -> Result<Scratch, StoreError> {
        crate::files::ensure_dir(&self.root).map_err(self.io(&self.root))?;
        tempfile::Builder::new()
            .prefix(&format!("store.{kind}.{}.", std::process::id()))
            .tempdir_in(&self.root)
            .map(|d| Scratch(Some(d.keep())))
            .map_err(self.io(&self.root))
    }

    /// Replace the store with `g`, recording that it stands for the
    /// snapshot file with `mirrored`'s digest (a damaged file, when `g`
    /// was built from git instead). The snapshot file is not touched.
    pub fn replace_store(
        &self,
        g: &Graph,
        resolved: Resolved,
        mirrored: &Mirrored,
    ) -> Result<Store, StoreError> {
        let _lock = self.lock(LOCK_WAIT)?;
        let fresh = self.scratch_store("new")?;
        Store::open(fresh.path())?.write_graph(g, resolved, mirrored)?;
        self.swap_store(fresh)?;
        Store::open_waiting(&self.store_path())
    }

    /// Keep the live store as it is, but record that it stands for the
    /// snapshot file now on disk, which could not be believed (`why`).
    pub fn keep_store_over_damaged(&self, store: &Store, why: &str) -> Result<(), StoreError> {
        let path = self.snapshot_path();
        let bytes = self.snapshot_bytes().unwrap_or_default();
        let mut w = WriteSet::default();
        w.put_mirrored(&Mirrored {
            digest: snapshot::fingerprint(&bytes),
            stamp: FileStamp::of(&path).unwrap_or_default(),
            damaged: Some(why.to_string()),
        });
        store.apply(w)
    }

    /// The live store as it is, without looking at the snapshot file.
    pub fn open_store_only(&self) -> Result<Store, StoreError> {
        if self.live_store()?.is_none() {
            return Err(StoreError::NoGraph);
        }
        let store = Store::open_waiting(&self.store_path())?;
        store.meta()?;
        Ok(store)
    }

    /// Write `g` into a new store beside the live one, recording which
    /// snapshot it mirrors (its fingerprint, and the seals it was made
    /// with when known); returns its path.
    fn build_store(
        &self,
        g: &Graph,
        resolved: Resolved,
        snapshot_digest: &str,
        seals: Option<&snapshot::Seals>,
    ) -> Result<Scratch, StoreError> {
        let fresh = self.scratch_store("new")?;
        let store = Store::open(fresh.path())?;
        // The stamp may predate a snapshot still being written; a stale
        // stamp only costs one digest comparison on the next open.
        let mirrored = Mirrored {
            digest: snapshot_digest.to_string(),
            stamp: FileStamp::of(&self.snapshot_path()).unwrap_or_default(),
            damaged: None,
        };
        store.write_graph(g, resolved, &mirrored)?;
        if let Some(seals) = seals {
            let mut w = WriteSet::default();
            w.put_seals(seals);
            store.apply(w)?;
        }
        Ok(fresh)
    }

    /// Rewrite the store without the garbage a large write leaves in sled's
    /// log, which otherwise every later open and close pays for. The copy
    /// is built beside the live store and swapped in, so a kill at any point
    /// leaves one whole store.
    pub fn compact(&self, store: Store) -> Result<Store, StoreError> {
        let _lock = self.lock(LOCK_WAIT)?;
        let fresh = self.scratch_store("new")?;
        {
            let copy = Store::open(fresh.path())?;
            store.copy_into(&copy)?;
        }
        drop(store);
        self.swap_store(fresh)?;
        Store::open_waiting(&self.store_path())
    }

    /// Move a freshly built store into place; the one it replaces goes.
    fn swap_store(&self, mut fresh: Scratch) -> Result<(), StoreError> {
        let live = self.store_path();
        let old = match self.live_store()? {
            Some(_) => {
                // Renamed over the empty directory made for it.
                let old = self.scratch_store("old")?;
                std::fs::rename(&live, old.path()).map_err(self.io(&live))?;
                Some(old)
            }
            None => None,
        };
        if let Err(e) = std::fs::rename(fresh.path(), &live) {
            if let Some(mut old) = old {
                let _ = std::fs::rename(old.path(), &live).map(|_| old.0.take());
            }
            return Err(self.io(&live)(e));
        }
        fresh.0.take();
        drop(old);
        self.sweep_leftovers();
        Ok(())
    }

    /// Stores left behind by killed runs.
    fn sweep_leftovers(&self) {
        for s in self.scratch_stores() {
            if !s.alive {
                let _ = std::fs::remove_dir_all(s.path);
            }
        }
    }

    /// Whether another live process is building a store to swap in (a
    /// compaction, an adoption, an index rebuild): it holds the live one
    /// meanwhile, for seconds to minutes on a large tree.
    fn rewriting(&self) -> bool {
        self.scratch_stores().iter().any(|s| s.new && s.alive)
    }

    /// The scratch stores beside the live one.
    fn scratch_stores(&self) -> Vec<ScratchStore> {
        let Ok(dir) = std::fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in dir.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let (new, rest) = match (
                name.strip_prefix("store.new."),
                name.strip_prefix("store.old."),
            ) {
                (Some(rest), _) => (true, rest),
                (None, Some(rest)) => (false, rest),
                (None, None) => continue,
            };
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let alive = rest
                .split('.')
                .next()
                .and_then(|p| p.parse::<u32>().ok())
                .is_some_and(|p| {
                    p == std::process::id() || Path::new(&format!("/proc/{p}")).exists()
                });
            out.push(ScratchStore {
                path: entry.path(),
                new,
                alive,
            });
        }
        out
    }

    /// The live store, waited for while another process rewrites it (see
    /// [`Self::rewriting`]), which failing at once would make a query
    /// after a commit pay for.
    fn open_live_store(&self) -> Result<Store, StoreError> {
        let started = std::time::Instant::now();
        let mut told = false;
        loop {
            match Store::open_waiting(&self.store_path()) {
                Err(StoreError::Locked(_))
                    if started.elapsed() < REWRITE_WAIT && self.rewriting() =>
                {
                    if !told {
                        crate::notice!("rpg: another rpg is rewriting the store; waiting for it");
                        told = true;
                    }
                }
                other => return other,
            }
        }
    }
}

/// A directory beside the live store, removed when dropped unless taken.
struct Scratch(Option<PathBuf>);

impl Scratch {
    fn path(&self) -> &Path {
        self.0.as_deref().unwrap_or(Path::new(""))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

/// A `store.new.<pid>.*` or `store.old.<pid>.*` directory beside the live
/// store.
struct ScratchStore {
    path: PathBuf,
    /// A store being built to swap in, not an old one on its way out.
    new: bool,
    /// Whether the process named in it (or this one) is alive.
    alive: bool,
}

/// How long a reader waits for a store another process is rewriting.
const REWRITE_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// How long a writer waits for another to finish before saying so.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The one-writer lock on `.rpg/`: held by whatever replaces the store or
/// moves the graph (init, update, embed, hooks, adopting a snapshot).
/// Re-entrant within a process, so a writer may call another writer's code.
pub struct WriteLock {
    path: PathBuf,
    /// The locked file, in the outermost guard only.
    file: Option<std::fs::File>,
}

/// Locks this process holds, by path, with their depth.
static HELD: std::sync::Mutex<Vec<(PathBuf, usize)>> = std::sync::Mutex::new(Vec::new());

impl Drop for WriteLock {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
        held.retain_mut(|(p, depth)| {
            if *p == self.path {
                *depth -= 1;
            }
            *depth > 0
        });
        if let Some(file) = self.file.take() {
            let _ = file.unlock();
        }
    }
}

impl RpgDir {
    /// Take the writer lock, waiting up to `wait` for another process.
    pub fn lock(&self, wait: std::time::Duration) -> Result<WriteLock, StoreError> {
        // The key of this process's re-entrant count; on Unix the lock is
        // taken on `.rpg/` itself (see [`crate::files::lock_handle`]).
        let path = self.root.join("lock");
        {
            let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((_, depth)) = held.iter_mut().find(|(p, _)| *p == path) {
                *depth += 1;
                return Ok(WriteLock { path, file: None });
            }
        }
        self.ensure()?;
        let file = crate::files::lock_handle(&self.root).map_err(self.io(&self.root))?;
        let started = std::time::Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                    std::thread::sleep(std::time::Duration::from_millis(25));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(StoreError::Locked(self.root.clone()))
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(self.io(&path)(e)),
            }
        }
        let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
        held.push((path.clone(), 1));
        Ok(WriteLock {
            path,
            file: Some(file),
        })
    }

    /// Say that a hook could not move the graph (another writer held it),
    /// so the next command catches up instead of the graph silently lagging.
    pub fn mark_pending(&self, why: &str) -> Result<(), StoreError> {
        self.ensure()?;
        snapshot::write_atomic(&self.root.join("pending"), why.as_bytes())
    }

    /// What a hook left undone, if anything. A `pending` that git tracks
    /// came with a commit, not from a hook, and says nothing.
    pub fn pending(&self, repo: &crate::git::Repo) -> Option<String> {
        let path = self.root.join("pending");
        let text = crate::files::read_text_capped(&path, crate::files::cap::SMALL).ok()??;
        (!repo.tracks(&format!("{RPG_DIR}/pending"))).then_some(text)
    }

    /// Forget what a hook left undone; a tracked file is never removed.
    pub fn clear_pending(&self, repo: &crate::git::Repo) {
        let path = self.root.join("pending");
        if crate::files::is_regular(&path) && !repo.tracks(&format!("{RPG_DIR}/pending")) {
            crate::files::remove_regular(&path);
        }
    }
}

pub use crate::text::digest;
