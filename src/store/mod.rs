//! Persistence. sled (`.rpg/store/`, never committed) is the working store
//! every command reads and writes; `.rpg/graph.jsonl` is the canonical
//! snapshot committed with the repository. The store records which snapshot
//! it mirrors, so a fresh clone, a pull or a checkout that changes the
//! snapshot is noticed and the store is rebuilt from it — no parsing and no
//! model calls.

pub mod snapshot;

use crate::graph::{Category, Counts, Edge, Entity, FileRecord, Graph, Meta};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
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
            root: workdir.join(".rpg"),
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

    /// Write the snapshot and a store mirroring it. The snapshot goes first:
    /// a crash in between leaves a store that no longer matches, which the
    /// next open rebuilds from the new snapshot.
    pub fn save(&self, g: &Graph) -> Result<(), StoreError> {
        self.ensure()?;
        let t = std::time::Instant::now();
        let bytes = snapshot::to_bytes(g);
        let d = digest(&bytes);
        // The file write and the store build touch different things; overlap them.
        let (written, stored) = std::thread::scope(|scope| {
            let writer = scope.spawn(|| snapshot::write_atomic(&self.snapshot_path(), &bytes));
            let stored = self.build_store(g, &d);
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

    /// Open the store, rebuilding it from the snapshot when it is missing,
    /// broken, or mirrors a different snapshot.
    pub fn open(&self) -> Result<Store, StoreError> {
        let path = self.snapshot_path();
        let stamp = FileStamp::of(&path);
        let opened = match Store::open_waiting(&self.store_path()) {
            Err(e @ StoreError::Locked(_)) => return Err(e),
            other => other,
        };
        if let Ok(store) = opened {
            match store.mirrored()? {
                Some(m) if stamp.as_ref().is_some_and(|s| m.stamp == *s) => return Ok(store),
                Some(m) if stamp.is_some() => {
                    // Timestamps differ (a checkout rewrote the file): compare content.
                    let bytes = std::fs::read(&path).map_err(self.io(&path))?;
                    if digest(&bytes) == m.digest {
                        store.set_mirrored(&Mirrored {
                            digest: m.digest,
                            stamp: FileStamp::of(&path).unwrap_or_default(),
                        })?;
                        return Ok(store);
                    }
                }
                _ => {}
            }
            drop(store);
        }
        let (g, d) = self.read_snapshot()?;
        self.rebuild_store(&g, &d)?;
        Store::open_waiting(&self.store_path())
    }

    /// Replace the store atomically: build a new one beside it, then swap.
    fn rebuild_store(&self, g: &Graph, snapshot_digest: &str) -> Result<(), StoreError> {
        let fresh = self.build_store(g, snapshot_digest)?;
        self.swap_store(fresh)
    }

    /// Write `g` into a new store beside the live one, recording which
    /// snapshot it mirrors; returns its path.
    fn build_store(&self, g: &Graph, snapshot_digest: &str) -> Result<PathBuf, StoreError> {
        let fresh = self.root.join(format!("store.new.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&fresh);
        let store = Store::open(&fresh)?;
        store.write_graph(g)?;
        // The stamp may predate a snapshot still being written; a stale
        // stamp only costs one digest comparison on the next open.
        store.set_mirrored(&Mirrored {
            digest: snapshot_digest.to_string(),
            stamp: FileStamp::of(&self.snapshot_path()).unwrap_or_default(),
        })?;
        Ok(fresh)
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

/// Cheap identity of a file, to skip hashing when nothing changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct FileStamp {
    len: u64,
    mtime_ns: u128,
}

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        let m = std::fs::metadata(path).ok()?;
        let mtime_ns = m
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos();
        Some(FileStamp {
            len: m.len(),
            mtime_ns,
        })
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Mirrored {
    digest: String,
    stamp: FileStamp,
}

/// The sled working store.
pub struct Store {
    db: sled::Db,
    path: PathBuf,
}

const META: &str = "meta";
/// path → [`FileBlock`]: a file, its entities and their outgoing edges.
const FILES: &str = "files";
/// path → edges whose destination lies in that file.
const INBOUND: &str = "inbound";
const CATEGORIES: &str = "categories";

/// Everything the store keeps about one file. Grouping by file keeps the
/// number of keys small (sled pays per key) and matches how updates work:
/// a changed file rewrites its own block.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileBlock {
    pub file: FileRecord,
    /// The file entity first, then the others in id order.
    pub entities: Vec<Entity>,
    pub out: Vec<Edge>,
}

/// Group a graph's entities and outgoing edges by file.
pub fn blocks_of(g: &Graph) -> Vec<FileBlock> {
    let mut blocks: BTreeMap<&str, FileBlock> = g
        .files
        .values()
        .map(|f| {
            (
                f.path.as_str(),
                FileBlock {
                    file: f.clone(),
                    entities: Vec::new(),
                    out: Vec::new(),
                },
            )
        })
        .collect();
    for e in g.entities.values() {
        if let Some(b) = blocks.get_mut(e.path.as_str()) {
            b.entities.push(e.clone());
        }
    }
    for e in &g.edges {
        let src_path = crate::graph::split_id(&e.src).0;
        if let Some(b) = blocks.get_mut(src_path) {
            b.out.push(e.clone());
        }
    }
    blocks.into_values().collect()
}

impl Store {
    /// Open, waiting a little while another process holds the store.
    fn open_waiting(path: &Path) -> Result<Store, StoreError> {
        let mut waited = 0;
        loop {
            match Store::open(path) {
                Err(StoreError::Locked(_)) if waited < 3000 => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    waited += 50;
                }
                other => return other,
            }
        }
    }

    fn open(path: &Path) -> Result<Store, StoreError> {
        let db = sled::Config::new()
            .path(path)
            // No background flusher: writes are flushed explicitly, and a
            // dropped store must release its lock at once.
            .flush_every_ms(None)
            // sled defaults to a 1 GB page cache; the graph is read in bulk
            // or by point lookups, so a small cache is enough.
            .cache_capacity(32 * 1024 * 1024)
            .mode(sled::Mode::HighThroughput)
            .open()
            .map_err(|e| match e {
                sled::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => {
                    StoreError::Locked(path.to_path_buf())
                }
                sled::Error::Io(io) if io.to_string().contains("lock") => {
                    StoreError::Locked(path.to_path_buf())
                }
                other => StoreError::Sled {
                    path: path.to_path_buf(),
                    message: other.to_string(),
                },
            })?;
        Ok(Store {
            db,
            path: path.to_path_buf(),
        })
    }

    fn sled_err(&self) -> impl Fn(sled::Error) -> StoreError + '_ {
        move |e| StoreError::Sled {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    fn tree(&self, name: &str) -> Result<sled::Tree, StoreError> {
        self.db.open_tree(name).map_err(self.sled_err())
    }

    fn get_json<T: for<'de> Deserialize<'de>>(
        &self,
        tree: &str,
        key: &str,
    ) -> Result<Option<T>, StoreError> {
        let Some(v) = self.tree(tree)?.get(key).map_err(self.sled_err())? else {
            return Ok(None);
        };
        self.decode(&v).map(Some)
    }

    fn put_json<T: Serialize>(&self, tree: &str, key: &str, v: &T) -> Result<(), StoreError> {
        self.tree(tree)?
            .insert(key, json(v))
            .map_err(self.sled_err())?;
        Ok(())
    }

    fn mirrored(&self) -> Result<Option<Mirrored>, StoreError> {
        self.get_json(META, "mirrored")
    }

    fn set_mirrored(&self, m: &Mirrored) -> Result<(), StoreError> {
        self.put_json(META, "mirrored", m)?;
        self.flush()
    }

    fn flush(&self) -> Result<(), StoreError> {
        self.db.flush().map(|_| ()).map_err(self.sled_err())
    }

    fn write_graph(&self, g: &Graph) -> Result<(), StoreError> {
        let mut files = sled::Batch::default();
        let mut inbound: BTreeMap<&str, Vec<&Edge>> = BTreeMap::new();
        for e in &g.edges {
            inbound
                .entry(crate::graph::split_id(&e.dst).0)
                .or_default()
                .push(e);
        }
        for b in blocks_of(g) {
            files.insert(b.file.path.as_bytes(), json(&b));
        }
        self.tree(FILES)?
            .apply_batch(files)
            .map_err(self.sled_err())?;
        let mut inb = sled::Batch::default();
        for (path, edges) in inbound {
            inb.insert(path.as_bytes(), json(&edges));
        }
        self.tree(INBOUND)?
            .apply_batch(inb)
            .map_err(self.sled_err())?;
        let mut batch = sled::Batch::default();
        for c in g.categories.values() {
            batch.insert(c.path.as_bytes(), json(c));
        }
        self.tree(CATEGORIES)?
            .apply_batch(batch)
            .map_err(self.sled_err())?;
        self.put_json(META, "meta", &g.meta)?;
        self.put_json(META, "counts", &StoredCounts::from(g.counts()))?;
        Ok(())
    }

    pub fn meta(&self) -> Result<Meta, StoreError> {
        self.get_json(META, "meta")?.ok_or(StoreError::NoGraph)
    }

    pub fn counts(&self) -> Result<StoredCounts, StoreError> {
        Ok(self.get_json(META, "counts")?.unwrap_or_default())
    }

    /// A file with its entities and outgoing edges.
    pub fn file_block(&self, path: &str) -> Result<Option<FileBlock>, StoreError> {
        self.get_json(FILES, path)
    }

    pub fn entity(&self, id: &str) -> Result<Option<Entity>, StoreError> {
        let path = crate::graph::split_id(id).0;
        Ok(self
            .file_block(path)?
            .and_then(|b| b.entities.into_iter().find(|e| e.id == id)))
    }

    /// Edges leaving (`outgoing`) or entering an entity.
    pub fn edges(&self, id: &str, outgoing: bool) -> Result<Vec<Edge>, StoreError> {
        let path = crate::graph::split_id(id).0;
        let edges: Vec<Edge> = if outgoing {
            self.file_block(path)?.map(|b| b.out).unwrap_or_default()
        } else {
            self.get_json(INBOUND, path)?.unwrap_or_default()
        };
        Ok(edges
            .into_iter()
            .filter(|e| if outgoing { e.src == id } else { e.dst == id })
            .collect())
    }

    /// Load the whole graph into memory.
    pub fn load_graph(&self) -> Result<Graph, StoreError> {
        let meta = self.meta()?;
        let mut files = BTreeMap::new();
        let mut entities = BTreeMap::new();
        let mut edges = BTreeSet::new();
        for kv in self.tree(FILES)?.iter() {
            let (_, v) = kv.map_err(self.sled_err())?;
            let b: FileBlock = self.decode(&v)?;
            for e in b.entities {
                entities.insert(e.id.clone(), e);
            }
            edges.extend(b.out);
            files.insert(b.file.path.clone(), b.file);
        }
        let mut categories = BTreeMap::new();
        for kv in self.tree(CATEGORIES)?.iter() {
            let (_, v) = kv.map_err(self.sled_err())?;
            let c: Category = self.decode(&v)?;
            categories.insert(c.path.clone(), c);
        }
        Ok(Graph {
            meta,
            files,
            entities,
            edges,
            categories,
        })
    }

    fn decode<T: for<'de> Deserialize<'de>>(&self, v: &[u8]) -> Result<T, StoreError> {
        serde_json::from_slice(v).map_err(|e| StoreError::Sled {
            path: self.path.clone(),
            message: format!("bad record: {e}"),
        })
    }
}

/// Counts kept in the store so `status` need not scan it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCounts {
    pub files: usize,
    pub classes: usize,
    pub functions: usize,
    pub methods: usize,
    pub edges: BTreeMap<String, usize>,
    pub categories: usize,
}

impl From<Counts> for StoredCounts {
    fn from(c: Counts) -> Self {
        StoredCounts {
            files: c.files,
            classes: c.classes,
            functions: c.functions,
            methods: c.methods,
            edges: c
                .edges
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            categories: c.categories,
        }
    }
}

fn json<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("store record serialises")
}
