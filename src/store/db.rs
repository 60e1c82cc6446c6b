//! The sled working store: one tree, keys prefixed by record type, so that
//! every change — a whole init or one update — lands as a single atomic
//! batch. A kill at any point leaves either the old state or the new one.

use super::StoreError;
use crate::graph::resolve::{name_refs, NameRef};
use crate::graph::{Category, Counts, Edge, Entity, FileRecord, Graph, Meta};
use crate::parse::{Kind, Lang};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const META: &str = "meta";
const COUNTS: &str = "counts";
const MIRRORED: &str = "mirrored";
const HIER: &str = "hier";
const MENTIONS_MISSING: &str = "mentions_missing";
/// `f/<path>` → [`FileBlock`].
const BLOCK: &str = "f/";
/// `b/<path>` → blob id: a light index of what is indexed.
const BLOB: &str = "b/";
/// `i/<path>` → edges whose destination lies in that file.
const INBOUND: &str = "i/";
/// `n/<bucket>` → name → entities with that bare name.
const NAMES: &str = "n/";
/// `m/<bucket>` → name → files that look that name up.
const MENTIONS: &str = "m/";
/// `fm/<path>` → the names one file looks up, with the blob they came from.
const FILE_MENTIONS: &str = "fm/";
/// `c/<category path>` → [`Category`].
const CATEGORY: &str = "c/";
/// `e/<seq>` → one update's event log.
const EVENTS: &str = "e/";
/// `x/<blob>` → the parse of that blob, so unchanged files an update asks
/// about are not parsed again.
const PARSED: &str = "x/";
/// `s/…` → the search index, laid out by [`crate::search::index`].
pub const SEARCH: &str = "s/";

const BUCKETS: u32 = 1024;

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

impl FileBlock {
    pub fn counts(&self) -> Counts {
        Counts::of(self.entities.iter(), self.out.iter())
    }
}

/// The names one file looks up, tied to the blob they were computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMentions {
    pub blob: String,
    pub names: BTreeSet<String>,
    /// Names the file binds by import, with what they are bound to (`*`
    /// for a glob import): lets the resolver skip files that cannot
    /// re-export a name, and an update see re-bindings without re-parsing.
    #[serde(default)]
    pub binds: BTreeMap<String, String>,
}

/// Per leaf: how many entities sit in each directory. Enough to prune
/// emptied categories and recompute groundings without scanning entities.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HierState {
    pub leaf_dirs: BTreeMap<String, BTreeMap<String, u32>>,
}

/// Counts kept in the store so `status` need not scan it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCounts {
    pub files: usize,
    pub classes: usize,
    pub functions: usize,
    pub methods: usize,
    /// Rust `macro_rules!` definitions; left out of JSON when there are none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub macros: usize,
    pub edges: BTreeMap<String, usize>,
    pub categories: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl From<Counts> for StoredCounts {
    fn from(c: Counts) -> Self {
        StoredCounts {
            files: c.files,
            classes: c.classes,
            functions: c.functions,
            methods: c.methods,
            macros: c.macros,
            edges: c
                .edges
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            categories: c.categories,
        }
    }
}

impl StoredCounts {
    /// Add (`sign` = 1) or remove (-1) a block's contribution.
    pub fn apply(&mut self, c: &Counts, sign: i64) {
        // A count below zero is bookkeeping gone wrong: loud in debug
        // builds, never a wrapped number in release ones.
        let f = |x: &mut usize, d: usize| {
            let n = *x as i64 + sign * d as i64;
            debug_assert!(n >= 0, "a stored count went below zero");
            *x = n.max(0) as usize;
        };
        f(&mut self.files, c.files);
        f(&mut self.classes, c.classes);
        f(&mut self.functions, c.functions);
        f(&mut self.methods, c.methods);
        f(&mut self.macros, c.macros);
        for (k, v) in &c.edges {
            f(self.edges.entry(k.to_string()).or_default(), *v);
        }
    }
}

/// Which snapshot the store last adopted or wrote.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Mirrored {
    pub digest: String,
    pub stamp: FileStamp,
    /// Why the snapshot with this digest could not be believed, when the
    /// store was built from git or kept instead of adopting it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damaged: Option<String>,
}

/// Cheap identity of a file, to skip hashing when nothing changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    len: u64,
    mtime_ns: u128,
}

impl FileStamp {
    pub fn of(path: &Path) -> Option<FileStamp> {
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

/// One update's events, as kept for the pull-request bot.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventLog {
    pub from: String,
    pub to: String,
    pub events: serde_json::Value,
}

fn bucket(name: &str) -> String {
    // FNV-1a: stable across runs and platforms, unlike the std hasher.
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{:03x}", h % BUCKETS)
}

fn json<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("store record serialises")
}

fn key(prefix: &str, rest: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + rest.len());
    k.extend_from_slice(prefix.as_bytes());
    k.extend_from_slice(rest.as_bytes());
    k
}

/// A graph's entities and outgoing edges grouped by file, built one file
/// at a time so a large graph is never copied whole.
pub fn blocks_of(g: &Graph) -> impl Iterator<Item = FileBlock> + '_ {
    g.files.values().map(move |f| {
        let path = f.path.as_str();
        let inner = format!("{path}:");
        let mut entities: Vec<Entity> = g.entities.get(path).into_iter().cloned().collect();
        entities.extend(
            g.entities
                .range(inner.clone()..)
                .take_while(|(id, _)| id.starts_with(&inner))
                .filter(|(_, e)| e.path == path)
                .map(|(_, e)| e.clone()),
        );
        let from = |src: &str| Edge {
            src: src.to_string(),
            kind: crate::graph::EdgeKind::Contains,
            dst: String::new(),
        };
        let mut out: Vec<Edge> = g
            .edges
            .range(from(path)..)
            .take_while(|e| e.src == path)
            .cloned()
            .collect();
        out.extend(
            g.edges
                .range(from(&inner)..)
                .take_while(|e| e.src.starts_with(&inner))
                .filter(|e| crate::graph::split_id(&e.src).0 == path)
                .cloned(),
        );
        FileBlock {
            file: f.clone(),
            entities,
            out,
        }
    })
}

/// The names-index entries of a block's entities.
pub fn block_names(b: &FileBlock) -> Vec<(String, NameRef)> {
    let ents: Vec<(String, Kind)> = b
        .entities
        .iter()
        .map(|e| (e.qualname.clone(), e.kind))
        .collect();
    name_refs(&b.file.path, &ents)
}

/// Pending writes, applied all at once by [`Store::apply`].
#[derive(Default)]
pub struct WriteSet {
    /// Key → new value, or `None` to remove; later writes to a key win.
    ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl WriteSet {
    fn put<T: Serialize>(&mut self, k: Vec<u8>, v: &T) {
        self.ops.push((k, Some(json(v))));
    }
    fn del(&mut self, k: Vec<u8>) {
        self.ops.push((k, None));
    }
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    pub fn put_block(&mut self, b: &FileBlock) {
        self.put(key(BLOCK, &b.file.path), b);
        self.put(key(BLOB, &b.file.path), &b.file.blob);
    }
    pub fn remove_block(&mut self, path: &str) {
        self.del(key(BLOCK, path));
        self.del(key(BLOB, path));
    }
    pub fn put_inbound(&mut self, path: &str, edges: &[Edge]) {
        if edges.is_empty() {
            self.del(key(INBOUND, path));
        } else {
            self.put(key(INBOUND, path), &edges);
        }
    }
    pub fn put_names(&mut self, bucket: &str, names: &BTreeMap<String, Vec<NameRef>>) {
        self.put(key(NAMES, bucket), names);
    }
    pub fn put_mentions(&mut self, bucket: &str, m: &BTreeMap<String, BTreeSet<String>>) {
        self.put(key(MENTIONS, bucket), m);
    }
    pub fn put_file_mentions(&mut self, path: &str, m: Option<&FileMentions>) {
        match m {
            Some(m) => self.put(key(FILE_MENTIONS, path), m),
            None => self.del(key(FILE_MENTIONS, path)),
        }
    }
    pub fn put_category(&mut self, c: &Category) {
        self.put(key(CATEGORY, &c.path), c);
    }
    pub fn remove_category(&mut self, path: &str) {
        self.del(key(CATEGORY, path));
    }
    pub fn put_hier(&mut self, h: &HierState) {
        self.put(HIER.as_bytes().to_vec(), h);
    }
    pub fn put_meta(&mut self, m: &Meta) {
        self.put(META.as_bytes().to_vec(), m);
    }
    pub fn put_counts(&mut self, c: &StoredCounts) {
        self.put(COUNTS.as_bytes().to_vec(), c);
    }
    pub fn put_mirrored(&mut self, m: &Mirrored) {
        self.put(MIRRORED.as_bytes().to_vec(), m);
    }
    pub fn set_mentions_missing(&mut self, missing: bool) {
        self.put(MENTIONS_MISSING.as_bytes().to_vec(), &missing);
    }
    pub fn push_event(&mut self, seq: u64, log: &EventLog) {
        self.put(key(EVENTS, &format!("{seq:016x}")), log);
    }
    pub fn put_parsed(&mut self, blob: &str, parsed: &crate::parse::ParsedFile) {
        self.put(key(PARSED, blob), parsed);
    }
    pub fn remove_parsed(&mut self, blob: &str) {
        self.del(key(PARSED, blob));
    }
    /// A search-index record; `k` must lie under [`SEARCH`].
    pub fn put_search(&mut self, k: Vec<u8>, v: Vec<u8>) {
        debug_assert!(k.starts_with(SEARCH.as_bytes()));
        self.ops.push((k, Some(v)));
    }
    pub fn remove_search(&mut self, k: Vec<u8>) {
        debug_assert!(k.starts_with(SEARCH.as_bytes()));
        self.del(k);
    }
    pub fn remove_event(&mut self, seq: u64) {
        self.del(key(EVENTS, &format!("{seq:016x}")));
    }
}

/// Whether another process holds the store: sled keeps an exclusive
/// Another process, or a child this one just started, holds sled's lock
/// on `<store>/db`. sled 0.34 reports that only as a message (see
/// `Config::try_lock` in sled), so the message is what there is to match.
/// The lock is never probed by taking it: a probe's lock leaks into any
/// child started meanwhile, and makes a concurrent opener fail instead.
fn is_lock_conflict(io: &std::io::Error) -> bool {
    io.kind() == std::io::ErrorKind::WouldBlock
        || io.to_string().starts_with("could not acquire lock on")
}

/// The sled working store.
pub struct Store {
    db: sled::Db,
    path: PathBuf,
}

impl Store {
    /// Open, waiting a little while another process holds the store.
    pub fn open_waiting(path: &Path) -> Result<Store, StoreError> {
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

    pub fn open(path: &Path) -> Result<Store, StoreError> {
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
                sled::Error::Io(io) if is_lock_conflict(&io) => {
                    StoreError::Locked(path.to_path_buf())
                }
                source => StoreError::Sled {
                    path: path.to_path_buf(),
                    source,
                },
            })?;
        Ok(Store {
            db,
            path: path.to_path_buf(),
        })
    }

    fn sled_err(&self) -> impl Fn(sled::Error) -> StoreError + '_ {
        move |source| StoreError::Sled {
            path: self.path.clone(),
            source,
        }
    }

    fn decode<T: for<'de> Deserialize<'de>>(&self, v: &[u8]) -> Result<T, StoreError> {
        serde_json::from_slice(v).map_err(|source| StoreError::Record {
            path: self.path.clone(),
            what: std::any::type_name::<T>()
                .rsplit("::")
                .next()
                .unwrap_or("store")
                .to_string(),
            source: Some(source),
        })
    }

    fn get<T: for<'de> Deserialize<'de>>(&self, k: &[u8]) -> Result<Option<T>, StoreError> {
        match self.db.get(k).map_err(self.sled_err())? {
            Some(v) => self.decode(&v).map(Some),
            None => Ok(None),
        }
    }

    fn scan<T: for<'de> Deserialize<'de>>(
        &self,
        prefix: &str,
    ) -> Result<Vec<(String, T)>, StoreError> {
        let mut out = Vec::new();
        for kv in self.db.scan_prefix(prefix.as_bytes()) {
            let (k, v) = kv.map_err(self.sled_err())?;
            let name = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
            out.push((name, self.decode(&v)?));
        }
        Ok(out)
    }

    /// Apply pending writes atomically and make them durable.
    pub fn apply(&self, w: WriteSet) -> Result<(), StoreError> {
        let mut batch = sled::Batch::default();
        for (k, v) in w.ops {
            match v {
                Some(v) => batch.insert(k, v),
                None => batch.remove(k),
            }
        }
        crate::failpoint("store-before-batch");
        self.db.apply_batch(batch).map_err(self.sled_err())?;
        crate::failpoint("store-batch-unflushed");
        self.db.flush().map(|_| ()).map_err(self.sled_err())
    }

    /// Apply writes one by one, for stores no reader sees yet or records
    /// written before the one that makes them visible. One huge sled batch
    /// leaves the log bloated, and every later open and close pays for it.
    pub fn apply_unbatched(&self, w: WriteSet) -> Result<(), StoreError> {
        for (k, v) in w.ops {
            match v {
                Some(v) => self.db.insert(k, v).map(|_| ()),
                None => self.db.remove(k).map(|_| ()),
            }
            .map_err(self.sled_err())?;
        }
        self.db.flush().map(|_| ()).map_err(self.sled_err())
    }

    /// Copy every record into `other`, an empty store, in bounded batches.
    pub fn copy_into(&self, other: &Store) -> Result<(), StoreError> {
        for kv in self.db.iter() {
            let (k, v) = kv.map_err(self.sled_err())?;
            other.db.insert(k, v).map_err(other.sled_err())?;
        }
        other.db.flush().map(|_| ()).map_err(other.sled_err())
    }

    /// Bytes the store takes on disk, garbage included.
    pub fn size_on_disk(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0)
    }

    /// Every search-index key under a prefix.
    pub(crate) fn search_keys(&self, prefix: &[u8]) -> Result<Vec<sled::IVec>, StoreError> {
        debug_assert!(prefix.starts_with(SEARCH.as_bytes()));
        self.db
            .scan_prefix(prefix)
            .keys()
            .map(|k| k.map_err(self.sled_err()))
            .collect()
    }

    /// A raw search-index record.
    pub(crate) fn search_get(&self, k: &[u8]) -> Result<Option<sled::IVec>, StoreError> {
        debug_assert!(k.starts_with(SEARCH.as_bytes()));
        self.db.get(k).map_err(self.sled_err())
    }

    /// Raw search-index records under a prefix, in key order.
    pub(crate) fn search_scan(
        &self,
        prefix: &[u8],
    ) -> Result<Vec<(sled::IVec, sled::IVec)>, StoreError> {
        debug_assert!(prefix.starts_with(SEARCH.as_bytes()));
        self.db
            .scan_prefix(prefix)
            .map(|kv| kv.map_err(self.sled_err()))
            .collect()
    }

    /// A record the search index could not decode: the store is damaged.
    pub fn corrupt(&self, what: &str) -> StoreError {
        StoreError::Record {
            path: self.path.clone(),
            what: format!("search {what}"),
            source: None,
        }
    }

    pub fn mirrored(&self) -> Result<Option<Mirrored>, StoreError> {
        self.get(MIRRORED.as_bytes())
    }

    pub fn meta(&self) -> Result<Meta, StoreError> {
        self.get(META.as_bytes())?.ok_or(StoreError::NoGraph)
    }

    pub fn counts(&self) -> Result<StoredCounts, StoreError> {
        Ok(self.get(COUNTS.as_bytes())?.unwrap_or_default())
    }

    pub fn hier(&self) -> Result<HierState, StoreError> {
        Ok(self.get(HIER.as_bytes())?.unwrap_or_default())
    }

    pub fn mentions_missing(&self) -> Result<bool, StoreError> {
        Ok(self.get(MENTIONS_MISSING.as_bytes())?.unwrap_or(false))
    }

    /// A file with its entities and outgoing edges.
    pub fn file_block(&self, path: &str) -> Result<Option<FileBlock>, StoreError> {
        self.get(&key(BLOCK, path))
    }

    pub fn blob_of(&self, path: &str) -> Result<Option<String>, StoreError> {
        self.get(&key(BLOB, path))
    }

    /// Every indexed file and its blob id.
    pub fn blobs(&self) -> Result<BTreeMap<String, String>, StoreError> {
        Ok(self.scan(BLOB)?.into_iter().collect())
    }

    /// A cached parse of a blob.
    pub fn parsed(&self, blob: &str) -> Result<Option<crate::parse::ParsedFile>, StoreError> {
        self.get(&key(PARSED, blob))
    }

    pub fn inbound(&self, path: &str) -> Result<Vec<Edge>, StoreError> {
        Ok(self.get(&key(INBOUND, path))?.unwrap_or_default())
    }

    pub fn names_bucket(&self, bucket: &str) -> Result<BTreeMap<String, Vec<NameRef>>, StoreError> {
        Ok(self.get(&key(NAMES, bucket))?.unwrap_or_default())
    }

    pub fn mentions_bucket(
        &self,
        bucket: &str,
    ) -> Result<BTreeMap<String, BTreeSet<String>>, StoreError> {
        Ok(self.get(&key(MENTIONS, bucket))?.unwrap_or_default())
    }

    pub fn file_mentions(&self, path: &str) -> Result<Option<FileMentions>, StoreError> {
        self.get(&key(FILE_MENTIONS, path))
    }

    pub fn all_file_mentions(&self) -> Result<BTreeMap<String, FileMentions>, StoreError> {
        Ok(self.scan(FILE_MENTIONS)?.into_iter().collect())
    }

    /// Entities whose bare name is `name`, in files of language `lang`.
    pub fn named(&self, lang: Lang, name: &str) -> Result<Vec<NameRef>, StoreError> {
        let mut b = self.names_bucket(&bucket(name))?;
        Ok(b.remove(name)
            .unwrap_or_default()
            .into_iter()
            .filter(|r| Lang::from_path(&r.path).map(Lang::family) == Some(lang.family()))
            .collect())
    }

    /// Files that look `name` up.
    pub fn mentioned_by(&self, name: &str) -> Result<BTreeSet<String>, StoreError> {
        Ok(self
            .mentions_bucket(&bucket(name))?
            .remove(name)
            .unwrap_or_default())
    }

    pub fn categories(&self) -> Result<BTreeMap<String, Category>, StoreError> {
        Ok(self.scan(CATEGORY)?.into_iter().collect())
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
        let edges = if outgoing {
            self.file_block(path)?.map(|b| b.out).unwrap_or_default()
        } else {
            self.inbound(path)?
        };
        Ok(edges
            .into_iter()
            .filter(|e| if outgoing { e.src == id } else { e.dst == id })
            .collect())
    }

    /// The last update event logs, oldest first.
    pub fn events(&self) -> Result<Vec<(u64, EventLog)>, StoreError> {
        Ok(self
            .scan::<EventLog>(EVENTS)?
            .into_iter()
            .filter_map(|(k, v)| u64::from_str_radix(&k, 16).ok().map(|s| (s, v)))
            .collect())
    }

    /// Load the whole graph into memory.
    pub fn load_graph(&self) -> Result<Graph, StoreError> {
        let meta = self.meta()?;
        let mut files = BTreeMap::new();
        let mut entities = BTreeMap::new();
        let mut edges = BTreeSet::new();
        for (_, b) in self.scan::<FileBlock>(BLOCK)? {
            for e in b.entities {
                entities.insert(e.id.clone(), e);
            }
            edges.extend(b.out);
            files.insert(b.file.path.clone(), b.file);
        }
        Ok(Graph {
            meta,
            files,
            entities,
            edges,
            categories: self.categories()?,
        })
    }

    /// Write a whole graph into an empty store. `mentions` are the names each
    /// file looks up; files without them are computed on the next update.
    pub fn write_graph(
        &self,
        g: &Graph,
        mentions: &BTreeMap<String, FileMentions>,
        mirrored: &Mirrored,
    ) -> Result<(), StoreError> {
        let mut w = WriteSet::default();
        let mut inbound: BTreeMap<&str, Vec<Edge>> = BTreeMap::new();
        for e in &g.edges {
            inbound
                .entry(crate::graph::split_id(&e.dst).0)
                .or_default()
                .push(e.clone());
        }
        let mut names: BTreeMap<String, BTreeMap<String, Vec<NameRef>>> = BTreeMap::new();
        let mut hier = HierState::default();
        for b in blocks_of(g) {
            // A fresh store is invisible until swapped in, so it can be
            // written in slices, which keeps memory flat on large trees.
            if w.len() >= 512 {
                self.apply_unbatched(std::mem::take(&mut w))?;
            }
            for (n, r) in block_names(&b) {
                names
                    .entry(bucket(&n))
                    .or_default()
                    .entry(n)
                    .or_default()
                    .push(r);
            }
            for e in &b.entities {
                *hier
                    .leaf_dirs
                    .entry(e.leaf.clone())
                    .or_default()
                    .entry(crate::graph::dir_of(&e.path).to_string())
                    .or_default() += 1;
            }
            w.put_block(&b);
        }
        for (path, edges) in inbound {
            w.put_inbound(path, &edges);
        }
        for (b, m) in &names {
            w.put_names(b, m);
        }
        let mut buckets: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        let mut missing = false;
        for (path, f) in &g.files {
            match mentions.get(path).filter(|m| m.blob == f.blob) {
                Some(m) => {
                    for n in &m.names {
                        buckets
                            .entry(bucket(n))
                            .or_default()
                            .entry(n.clone())
                            .or_default()
                            .insert(path.clone());
                    }
                    w.put_file_mentions(path, Some(m));
                }
                None => missing = true,
            }
        }
        for (b, m) in &buckets {
            w.put_mentions(b, m);
        }
        w.set_mentions_missing(missing);
        for c in g.categories.values() {
            w.put_category(c);
        }
        w.put_hier(&hier);
        w.put_meta(&g.meta);
        w.put_counts(&StoredCounts::from(g.counts()));
        w.put_mirrored(mirrored);
        self.apply_unbatched(w)
    }
}

/// The bucket a name's index entries live in.
pub fn name_bucket(name: &str) -> String {
    bucket(name)
}
