//! Persistence. sled (`.rpg/store/`, never committed) is the working store
//! every command reads and writes; `.rpg/graph.jsonl` is the canonical
//! snapshot committed with the repository. The store records which snapshot
//! it mirrors, so a fresh clone, a pull or a checkout that changes the
//! snapshot is noticed and the store is rebuilt from it — no parsing and no
//! model calls.

pub mod snapshot;

use crate::graph::{Category, Counts, Edge, EdgeKind, Entity, FileRecord, Graph, Meta};
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
        let bytes = snapshot::to_bytes(g);
        snapshot::write_atomic(&self.snapshot_path(), &bytes)?;
        self.rebuild_store(g, &digest(&bytes))
    }

    /// Open the store, rebuilding it from the snapshot when it is missing,
    /// broken, or mirrors a different snapshot.
    pub fn open(&self) -> Result<Store, StoreError> {
        let path = self.snapshot_path();
        let stamp = FileStamp::of(&path);
        if let Ok(store) = Store::open(&self.store_path()) {
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
        Store::open(&self.store_path())
    }

    /// Replace the store atomically: build a new one beside it, then swap.
    fn rebuild_store(&self, g: &Graph, snapshot_digest: &str) -> Result<(), StoreError> {
        let live = self.store_path();
        let fresh = self.root.join(format!("store.new.{}", std::process::id()));
        let old = self.root.join(format!("store.old.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&fresh);
        {
            let store = Store::open(&fresh)?;
            store.write_graph(g)?;
            store.set_mirrored(&Mirrored {
                digest: snapshot_digest.to_string(),
                stamp: FileStamp::of(&self.snapshot_path()).unwrap_or_default(),
            })?;
            store.flush()?;
        }
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
const FILES: &str = "files";
const ENTITIES: &str = "entities";
const EDGES_OUT: &str = "edges_out";
const EDGES_IN: &str = "edges_in";
const CATEGORIES: &str = "categories";

impl Store {
    fn open(path: &Path) -> Result<Store, StoreError> {
        let db = sled::Config::new()
            .path(path)
            .mode(sled::Mode::LowSpace)
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
        serde_json::from_slice(&v)
            .map(Some)
            .map_err(|e| StoreError::Sled {
                path: self.path.clone(),
                message: format!("bad record {tree}/{key}: {e}"),
            })
    }

    fn put_json<T: Serialize>(&self, tree: &str, key: &str, v: &T) -> Result<(), StoreError> {
        let bytes = serde_json::to_vec(v).expect("store record serialises");
        self.tree(tree)?
            .insert(key, bytes)
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
        let mut batch = sled::Batch::default();
        for f in g.files.values() {
            batch.insert(f.path.as_bytes(), json(f));
        }
        self.tree(FILES)?
            .apply_batch(batch)
            .map_err(self.sled_err())?;
        let mut batch = sled::Batch::default();
        for e in g.entities.values() {
            batch.insert(e.id.as_bytes(), json(e));
        }
        self.tree(ENTITIES)?
            .apply_batch(batch)
            .map_err(self.sled_err())?;
        let mut out = sled::Batch::default();
        let mut inb = sled::Batch::default();
        for e in &g.edges {
            out.insert(edge_key(&e.src, e.kind, &e.dst), &[]);
            inb.insert(edge_key(&e.dst, e.kind, &e.src), &[]);
        }
        self.tree(EDGES_OUT)?
            .apply_batch(out)
            .map_err(self.sled_err())?;
        self.tree(EDGES_IN)?
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

    pub fn entity(&self, id: &str) -> Result<Option<Entity>, StoreError> {
        self.get_json(ENTITIES, id)
    }

    /// Edges leaving (`outgoing`) or entering an entity.
    pub fn edges(&self, id: &str, outgoing: bool) -> Result<Vec<Edge>, StoreError> {
        let tree = self.tree(if outgoing { EDGES_OUT } else { EDGES_IN })?;
        let mut prefix = id.as_bytes().to_vec();
        prefix.push(0);
        let mut out = Vec::new();
        for kv in tree.scan_prefix(&prefix) {
            let (k, _) = kv.map_err(self.sled_err())?;
            let Some((a, kind, b)) = split_edge_key(&k) else {
                continue;
            };
            let (src, dst) = if outgoing { (a, b) } else { (b, a) };
            out.push(Edge { src, kind, dst });
        }
        Ok(out)
    }

    /// Load the whole graph into memory.
    pub fn load_graph(&self) -> Result<Graph, StoreError> {
        let meta = self.meta()?;
        let mut files = BTreeMap::new();
        for kv in self.tree(FILES)?.iter() {
            let (_, v) = kv.map_err(self.sled_err())?;
            let f: FileRecord = self.decode(&v)?;
            files.insert(f.path.clone(), f);
        }
        let mut entities = BTreeMap::new();
        for kv in self.tree(ENTITIES)?.iter() {
            let (_, v) = kv.map_err(self.sled_err())?;
            let e: Entity = self.decode(&v)?;
            entities.insert(e.id.clone(), e);
        }
        let mut edges = BTreeSet::new();
        for kv in self.tree(EDGES_OUT)?.iter() {
            let (k, _) = kv.map_err(self.sled_err())?;
            if let Some((src, kind, dst)) = split_edge_key(&k) {
                edges.insert(Edge { src, kind, dst });
            }
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

fn edge_key(a: &str, kind: EdgeKind, b: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(a.len() + b.len() + 12);
    k.extend_from_slice(a.as_bytes());
    k.push(0);
    k.extend_from_slice(kind.as_str().as_bytes());
    k.push(0);
    k.extend_from_slice(b.as_bytes());
    k
}

fn split_edge_key(k: &[u8]) -> Option<(String, EdgeKind, String)> {
    let mut parts = k.splitn(3, |b| *b == 0);
    let a = std::str::from_utf8(parts.next()?).ok()?;
    let kind = EdgeKind::parse(std::str::from_utf8(parts.next()?).ok()?)?;
    let b = std::str::from_utf8(parts.next()?).ok()?;
    Some((a.to_string(), kind, b.to_string()))
}

fn json<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("store record serialises")
}
