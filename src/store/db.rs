//! The sled working store: one tree, keys prefixed by record type, so that
//! every change — a whole init or one update — lands as a single atomic
//! batch. A kill at any point leaves either the old state or the new one.

use super::buckets::{self, Bucket};
use super::grams;
use super::StoreError;
use crate::graph::resolve::deps::Deps;
use crate::graph::resolve::{indexed_name, name_ref, name_refs, NameRef};
use crate::graph::{Category, Counts, Edge, Entity, FileRecord, Graph, Meta};
use crate::parse::{Kind, Lang};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const META: &str = "meta";
const COUNTS: &str = "counts";
const MIRRORED: &str = "mirrored";
/// The seals of the snapshot the store last wrote (see [`super::snapshot::Seals`]).
const SEALS: &str = "seals";
const HIER: &str = "hier";
/// Set once every file's [`FileDeps`] is in the store.
const DEPS_READY: &str = "deps_ready";
/// `unreadable` → the files whose blob could not be read when the graph
/// last met them; every update tries them again.
const UNREADABLE: &str = "unreadable";
/// `adopted` → [`Adoption`]: what adopting the snapshot found, when the
/// store was built by adopting one.
const ADOPTED: &str = "adopted";
/// `layout` → [`STORE_LAYOUT`] of the rpg that built the store.
const LAYOUT: &str = "layout";
/// Bumped whenever a record's key or encoding changes; a store of another
/// layout is rebuilt from the snapshot rather than misread. 2: names by
/// bare name in postcard, grouped dependents, stale marks. 3: lent edges.
/// 4: parses keep C and C++ declarations. 5: parses under `p/`, the
/// search index's per-file records before its postings. 6: names and
/// dependents in buckets (see [`buckets`]). 7: a file's dependency record
/// holds its parse's trigram filter.
pub const STORE_LAYOUT: u32 = 7;
/// `f/<path>` → [`FileBlock`].
const BLOCK: &str = "f/";
/// `b/<path>` → blob id: a light index of what is indexed.
const BLOB: &str = "b/";
/// `i/<path>` → edges whose destination lies in that file.
const INBOUND: &str = "i/";
/// `n/<bucket>` → by bare name, the entities with that name (see
/// [`buckets`]: grouped, as each kind of dependents record is).
const NAMES: &str = "n/";
/// `fd/<path>` → [`FileDeps`]: what resolving the file read.
const FILE_DEPS: &str = "fd/";
/// `dn/<bucket>` → by slice key, the files whose resolution asked for
/// that slice of the names index. Grouped, not one record per pair: sled
/// spends a few hundred bytes and a page-table entry on every key, and a
/// registry-sized tree has a million pairs.
const DEP_NAME: &str = "dn/";
/// `dp/<bucket>` → by path read, the files whose resolution looked into
/// (or probed for) that file.
const DEP_PATH: &str = "dp/";
/// `dl/<bucket>` → by path, the files whose resolution gave edges that
/// start in that file ([`Deps::lends`]).
const DEP_LENT: &str = "dl/";
/// `c/<category path>` → [`Category`].
const CATEGORY: &str = "c/";
/// `e/<seq>` → one update's event log.
const EVENTS: &str = "e/";
/// `p/<blob>` → the parse of that blob, so unchanged files an update asks
/// about are not parsed again. Before `s/`: large records must not follow
/// the search index's keys (see [`Store::write_graph`]).
const PARSED: &str = "p/";
/// `s/…` → the search index, laid out by [`crate::search::index`].
pub const SEARCH: &str = "s/";
/// `s/c/<path>` → nothing: the file's block was written (or removed) since
/// the search index last caught up, so an index sync looks only at these.
/// Written with the block itself, so no writer can forget it.
pub const SEARCH_STALE: &str = "s/c/";
/// The search index's posting lists of its first build, beside sled's
/// files in the store's directory.
const SEARCH_SEGMENT: &str = "search.seg";
/// `g/<path>` → nothing: the file's block was written (or removed) since
/// the store last wrote or adopted the snapshot it mirrors, so the next
/// snapshot re-serialises these files alone.
const SNAPSHOT_STALE: &str = "g/";

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

/// What resolving one file read, and what other files' resolutions may
/// read of it, tied to the blob they were computed from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDeps {
    pub blob: String,
    pub deps: Deps,
    /// The [`grams`] filter of the blob's stored parse: whether the parse
    /// may mention a name, told without reading it.
    pub grams: Vec<u8>,
    /// Names the file binds by import, with what they are bound to (`*`
    /// for a glob import): lets the resolver skip files that cannot
    /// re-export a name.
    pub binds: BTreeMap<String, String>,
    /// [`crate::graph::resolve::deps::interface_digest`] of the file.
    pub interface: String,
}

/// [`FileDeps`]'s fields as postcard lays them out, up to the filter.
#[derive(Deserialize)]
pub struct DepsView<'a> {
    #[serde(borrow)]
    pub blob: &'a str,
    _names: Skipped,
    /// The files the resolution looked into ([`Deps::paths`]).
    #[serde(borrow)]
    pub paths: Vec<&'a str>,
    _lends: Skipped,
    #[serde(borrow)]
    pub grams: &'a [u8],
}

/// [`DepsView`] without the paths, for a file asked only whether its
/// parse may hold a name.
#[derive(Deserialize)]
pub struct GramsView<'a> {
    #[serde(borrow)]
    pub blob: &'a str,
    _names: Skipped,
    _paths: Skipped,
    _lends: Skipped,
    #[serde(borrow)]
    pub grams: &'a [u8],
}

/// A list of strings passed over: neither checked as UTF-8 nor kept. The
/// names a file looked up are most of its dependency record.
struct Skipped;

impl<'de> Deserialize<'de> for Skipped {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> serde::de::Visitor<'de> for Each {
            type Value = Skipped;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of strings")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Skipped, A::Error> {
                while seq.next_element::<&'de [u8]>()?.is_some() {}
                Ok(Skipped)
            }
        }
        d.deserialize_seq(Each)
    }
}

/// Which reads a dependents lookup is about.
#[derive(Debug, Clone, Copy)]
pub enum DepKind {
    /// A names-index slice key.
    Name,
    /// A file looked into.
    Path,
    /// A file some of whose edges another file's resolution gave.
    Lent,
}

impl DepKind {
    fn prefix(self) -> &'static str {
        match self {
            DepKind::Name => DEP_NAME,
            DepKind::Path => DEP_PATH,
            DepKind::Lent => DEP_LENT,
        }
    }
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

/// What adopting a committed snapshot found: of the entity records it
/// held, how many git confirmed (same entity, same source hash; the file
/// at its blob) and how many it dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adoption {
    pub confirmed: usize,
    pub dropped: usize,
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
    /// The stamp of what is at `path` itself; a link is never followed.
    pub fn of(path: &Path) -> Option<FileStamp> {
        let m = std::fs::symlink_metadata(path).ok()?;
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

fn json<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("store record serialises")
}

/// The compact encoding of the records written per file and read back by
/// updates; they are never shown or exchanged.
fn packed<T: Serialize>(v: &T) -> Vec<u8> {
    postcard::to_stdvec(v).expect("store record serialises")
}

fn slim(p: &crate::parse::ParsedFile) -> crate::parse::ParsedFile {
    let mut p = p.clone();
    p.doc.clear();
    for e in &mut p.entities {
        e.signature.clear();
        e.doc.clear();
        e.hash.clear();
    }
    p
}

/// What [`StoredParse::shelved`] deflated in this process's memory.
fn inflated(deflated: &[u8]) -> Vec<u8> {
    let mut plain = Vec::with_capacity(deflated.len() * 4);
    std::io::Read::read_to_end(&mut flate2::read::DeflateDecoder::new(deflated), &mut plain)
        .expect("inflate what this process deflated");
    plain
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
        let entities: Vec<Entity> = entities_of(g, path).cloned().collect();
        let from = |src: &str| Edge {
            src: src.into(),
            kind: crate::graph::EdgeKind::Contains,
            dst: crate::graph::Id::default(),
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

/// The entities of file `path`: the file's own first, then the rest by id.
fn entities_of<'g>(g: &'g Graph, path: &'g str) -> impl Iterator<Item = &'g Entity> + 'g {
    let inner = format!("{path}:");
    let code = g.entities.range(inner.clone()..);
    g.entities.get(path).into_iter().chain(
        code.take_while(move |(id, _)| id.starts_with(&inner))
            .filter(move |(_, e)| e.path == path)
            .map(|(_, e)| e),
    )
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

/// What resolution learnt while a graph was built, for the store to keep:
/// each file's [`FileDeps`], and the parses worth caching by blob.
#[derive(Default)]
pub struct Resolved {
    pub deps: BTreeMap<String, FileDeps>,
    pub parsed: Vec<(String, StoredParse)>,
    /// Files whose blob could not be read: the next update tries them.
    pub unreadable: Vec<String>,
}

/// A parse as the store keeps it (see [`WriteSet::put_parsed`]), packed
/// as soon as resolution is done with it, so init can free the parses
/// before the store is written: at millions of lines they were a third
/// of its heap.
pub struct StoredParse(Packed);

enum Packed {
    Plain(Vec<u8>),
    /// Deflated while it waits for the store (see [`StoredParse::shelved`]).
    Deflated(Vec<u8>),
}

impl StoredParse {
    pub fn of(parsed: &crate::parse::ParsedFile) -> StoredParse {
        StoredParse(Packed::Plain(packed(&slim(parsed))))
    }

    /// The same parse deflated, for one that waits long for the store: an
    /// init holds every file's through resolution and the store write,
    /// 163 MB on the Linux tree when its peak is set. Fast deflate, which
    /// the store write undoes a parse at a time.
    pub fn shelved(self) -> StoredParse {
        let Packed::Plain(plain) = self.0 else {
            return self;
        };
        let mut z = flate2::write::DeflateEncoder::new(
            Vec::with_capacity(plain.len() / 3),
            flate2::Compression::fast(),
        );
        // Writing to a Vec cannot fail.
        let deflated = std::io::Write::write_all(&mut z, &plain)
            .and_then(|()| z.finish())
            .expect("deflate into memory");
        StoredParse(Packed::Deflated(deflated))
    }

    /// The packed bytes, as the store keeps them.
    fn into_plain(self) -> Vec<u8> {
        match self.0 {
            Packed::Plain(plain) => plain,
            Packed::Deflated(deflated) => inflated(&deflated),
        }
    }

    fn plain(&self) -> std::borrow::Cow<'_, [u8]> {
        match &self.0 {
            Packed::Plain(plain) => plain.into(),
            Packed::Deflated(deflated) => inflated(deflated).into(),
        }
    }

    /// Its [`FileDeps::grams`].
    pub fn grams(&self) -> Vec<u8> {
        grams::filter(&self.plain())
    }
}

/// Files to add to (true) or drop from one dependents list.
type FileEdits = BTreeMap<String, bool>;

/// Pending writes, applied all at once by [`Store::apply`].
#[derive(Default)]
pub struct WriteSet {
    /// Key → new value, or `None` to remove; later writes to a key win.
    ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Names-index entries to replace: name → its entries (none: gone).
    /// Settled against the stored bucket when applied.
    names: BTreeMap<String, Vec<NameRef>>,
    /// Dependents records to edit: (kind's prefix, read) → file → added
    /// (true) or dropped. Settled against the stored bucket when applied.
    dep_edits: BTreeMap<(&'static str, String), FileEdits>,
    /// Drop every stored dependents record before the edits.
    clear_deps: bool,
}

impl WriteSet {
    fn put<T: Serialize>(&mut self, k: Vec<u8>, v: &T) {
        self.ops.push((k, Some(json(v))));
    }
    fn del(&mut self, k: Vec<u8>) {
        self.ops.push((k, None));
    }
    pub fn len(&self) -> usize {
        self.ops.len() + self.names.len() + self.dep_edits.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
            && self.names.is_empty()
            && self.dep_edits.is_empty()
            && !self.clear_deps
    }
    pub fn put_block(&mut self, b: &FileBlock) {
        self.put_fresh_block(b);
        self.mark_stale(&b.file.path);
    }
    fn mark_stale(&mut self, path: &str) {
        self.ops.push((key(SEARCH_STALE, path), Some(Vec::new())));
        self.ops.push((key(SNAPSHOT_STALE, path), Some(Vec::new())));
    }
    /// The snapshot now holds these files as the store does.
    /// The snapshot on disk no longer says what the store holds of `path`:
    /// the next snapshot write serialises it anew (or drops it).
    pub fn snapshot_differs(&mut self, path: &str) {
        self.mark_stale(path);
    }
    pub fn put_unreadable(&mut self, paths: &[String]) {
        match paths.is_empty() {
            true => self.del(UNREADABLE.as_bytes().to_vec()),
            false => self.put(UNREADABLE.as_bytes().to_vec(), &paths),
        }
    }
    pub fn put_adoption(&mut self, a: &Adoption) {
        self.put(ADOPTED.as_bytes().to_vec(), a);
    }
    pub fn snapshot_caught_up(&mut self, paths: &[String]) {
        for p in paths {
            self.del(key(SNAPSHOT_STALE, p));
        }
    }
    /// A block for a store that has no search index yet.
    fn put_fresh_block(&mut self, b: &FileBlock) {
        self.put(key(BLOCK, &b.file.path), b);
        self.put(key(BLOB, &b.file.path), &b.file.blob);
    }
    pub fn remove_block(&mut self, path: &str) {
        self.del(key(BLOCK, path));
        self.del(key(BLOB, path));
        self.mark_stale(path);
    }
    pub fn put_inbound<E: Serialize>(&mut self, path: &str, edges: &[E]) {
        if edges.is_empty() {
            self.del(key(INBOUND, path));
        } else {
            self.put(key(INBOUND, path), &edges);
        }
    }
    /// The names-index entries under one bare name; none removes it.
    pub fn put_named(&mut self, name: &str, refs: &[NameRef]) {
        self.names.insert(name.to_string(), refs.to_vec());
    }
    /// A file's dependency record, or its removal.
    pub fn put_file_deps(&mut self, path: &str, d: Option<&FileDeps>) {
        match d {
            Some(d) => self.ops.push((key(FILE_DEPS, path), Some(packed(d)))),
            None => self.del(key(FILE_DEPS, path)),
        }
    }
    /// Record (or forget) that `file`'s resolution read `read`.
    pub fn dep(&mut self, kind: DepKind, read: &str, file: &str, add: bool) {
        self.dep_edits
            .entry((kind.prefix(), read.to_string()))
            .or_default()
            .insert(file.to_string(), add);
    }
    /// Forget every recorded read, before this set's own edits.
    pub fn clear_deps(&mut self) {
        self.clear_deps = true;
        self.dep_edits.clear();
    }
    /// A whole bucket of records, for a store being built.
    fn put_bucket(&mut self, k: Vec<u8>, entries: &[(&str, Vec<u8>)]) {
        self.ops.push((k, Some(buckets::encode_sorted(entries))));
    }
    /// Record every read of `file`'s resolution.
    pub fn deps_of(&mut self, file: &str, d: &Deps, add: bool) {
        for n in &d.names {
            self.dep(DepKind::Name, n, file, add);
        }
        for p in &d.paths {
            self.dep(DepKind::Path, p, file, add);
        }
        for p in &d.lends {
            self.dep(DepKind::Lent, p, file, add);
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
    pub fn put_seals(&mut self, s: &super::snapshot::Seals) {
        self.ops.push((SEALS.as_bytes().to_vec(), Some(packed(s))));
    }
    fn put_layout(&mut self) {
        self.put(LAYOUT.as_bytes().to_vec(), &STORE_LAYOUT);
    }
    pub fn set_deps_ready(&mut self, ready: bool) {
        self.put(DEPS_READY.as_bytes().to_vec(), &ready);
    }
    pub fn push_event(&mut self, seq: u64, log: &EventLog) {
        self.put(key(EVENTS, &format!("{seq:016x}")), log);
    }
    /// The parse of a blob, as resolution and `symbols` read it: without
    /// the docs, signatures and hashes the entity records already hold.
    pub fn put_parsed(&mut self, blob: &str, parsed: &crate::parse::ParsedFile) {
        self.put_stored_parse_owned(blob, StoredParse::of(parsed));
    }
    pub fn put_stored_parse(&mut self, blob: &str, parsed: &StoredParse) {
        self.ops
            .push((key(PARSED, blob), Some(parsed.plain().into_owned())));
    }
    pub fn put_stored_parse_owned(&mut self, blob: &str, parsed: StoredParse) {
        self.ops
            .push((key(PARSED, blob), Some(parsed.into_plain())));
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
        // sled creates and writes files by name inside: none may be a link.
        crate::files::check_store_dir(path).map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
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
                sled::Error::Io(source) => StoreError::Io {
                    path: path.to_path_buf(),
                    source,
                },
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

    /// sled's I/O failures (a full disk) read as any other I/O error does.
    fn sled_err(&self) -> impl Fn(sled::Error) -> StoreError + '_ {
        move |source| match source {
            sled::Error::Io(source) => StoreError::Io {
                path: self.path.clone(),
                source,
            },
            source => StoreError::Sled {
                path: self.path.clone(),
                source,
            },
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

    fn get_packed<T: for<'de> Deserialize<'de>>(&self, k: &[u8]) -> Result<Option<T>, StoreError> {
        match self.db.get(k).map_err(self.sled_err())? {
            Some(v) => postcard::from_bytes(&v)
                .map(Some)
                .map_err(|_| self.bad_record(k)),
            None => Ok(None),
        }
    }

    fn bad_record(&self, k: &[u8]) -> StoreError {
        StoreError::Record {
            path: self.path.clone(),
            what: String::from_utf8_lossy(k).into_owned(),
            source: None,
        }
    }

    /// The record under `name` in its bucket of `prefix`.
    fn get_named<T: for<'de> Deserialize<'de>>(
        &self,
        prefix: &str,
        name: &str,
    ) -> Result<Option<T>, StoreError> {
        let k = buckets::key(prefix, name);
        let Some(v) = self.db.get(&k).map_err(self.sled_err())? else {
            return Ok(None);
        };
        match buckets::find(&v, name).map_err(|_| self.bad_record(&k))? {
            Some(packed) => postcard::from_bytes(packed)
                .map(Some)
                .map_err(|_| self.bad_record(&k)),
            None => Ok(None),
        }
    }

    /// A stored bucket, to edit; empty when there is none.
    fn bucket(&self, k: &[u8]) -> Result<Bucket, StoreError> {
        match self.db.get(k).map_err(self.sled_err())? {
            Some(v) => Bucket::decode(&v).ok_or_else(|| self.bad_record(k)),
            None => Ok(Bucket::default()),
        }
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
    pub fn apply(&self, mut w: WriteSet) -> Result<(), StoreError> {
        self.settle(&mut w)?;
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
        self.write_unbatched(w)?;
        self.db.flush().map(|_| ()).map_err(self.sled_err())
    }

    /// [`Store::apply_unbatched`] without the flush, for a part of
    /// something that a later record makes visible.
    pub fn write_unbatched(&self, mut w: WriteSet) -> Result<(), StoreError> {
        self.settle(&mut w)?;
        // In key order, as a batch applies (see `Store::write_graph` for
        // why); stable, so a later write to a key still wins.
        w.ops.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, v) in w.ops {
            match v {
                Some(v) => self.db.insert(k, v).map(|_| ()),
                None => self.db.remove(k).map(|_| ()),
            }
            .map_err(self.sled_err())?;
        }
        Ok(())
    }

    /// Copy every record into `other`, an empty store, in bounded batches,
    /// and the search segment with them.
    pub fn copy_into(&self, other: &Store) -> Result<(), StoreError> {
        for kv in self.db.iter() {
            let (k, v) = kv.map_err(self.sled_err())?;
            other.db.insert(k, v).map_err(other.sled_err())?;
        }
        if let Some(mut segment) = self.open_segment()? {
            other.write_segment(|w| std::io::copy(&mut segment, w))?;
        }
        other.db.flush().map(|_| ()).map_err(other.sled_err())
    }

    /// Replace the search index's segment file (see `search::segment`)
    /// with what `write` writes; nothing reads it until the index's meta,
    /// written afterwards, names it.
    pub(crate) fn write_segment<T>(
        &self,
        write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<T>,
    ) -> Result<T, StoreError> {
        let path = self.path.join(SEARCH_SEGMENT);
        let mut out = None;
        crate::files::write_atomic(&path, |w| {
            out = Some(write(w)?);
            Ok(())
        })
        .map_err(|source| StoreError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(out.expect("written"))
    }

    /// The search index's segment file, never through a link; `None`
    /// when there is none.
    pub(crate) fn open_segment(&self) -> Result<Option<std::fs::File>, StoreError> {
        let path = self.path.join(SEARCH_SEGMENT);
        crate::files::open_regular(&path).map_err(|source| StoreError::Io { path, source })
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

    pub fn layout(&self) -> Result<Option<u32>, StoreError> {
        // A value that does not decode is another layout's too.
        Ok(self.get(LAYOUT.as_bytes()).unwrap_or(None))
    }

    pub fn mirrored(&self) -> Result<Option<Mirrored>, StoreError> {
        self.get(MIRRORED.as_bytes())
    }

    /// The seals of the snapshot this store last wrote, if it wrote one.
    pub fn seals(&self) -> Result<Option<super::snapshot::Seals>, StoreError> {
        self.get_packed(SEALS.as_bytes())
    }

    pub fn meta(&self) -> Result<Meta, StoreError> {
        self.get(META.as_bytes())?.ok_or(StoreError::NoGraph)
    }

    /// The files whose blob could not be read, to try again.
    pub fn unreadable(&self) -> Result<Vec<String>, StoreError> {
        Ok(self.get(UNREADABLE.as_bytes())?.unwrap_or_default())
    }

    /// What adopting the snapshot found, when this store was adopted.
    pub fn adoption(&self) -> Result<Option<Adoption>, StoreError> {
        self.get(ADOPTED.as_bytes())
    }

    pub fn counts(&self) -> Result<StoredCounts, StoreError> {
        Ok(self.get(COUNTS.as_bytes())?.unwrap_or_default())
    }

    pub fn hier(&self) -> Result<HierState, StoreError> {
        Ok(self.get(HIER.as_bytes())?.unwrap_or_default())
    }

    /// Whether every file's [`FileDeps`] is in the store (a store built
    /// from a snapshot has none until its first update).
    pub fn deps_ready(&self) -> Result<bool, StoreError> {
        Ok(self.get(DEPS_READY.as_bytes())?.unwrap_or(false))
    }

    /// A file with its entities and outgoing edges.
    pub fn file_block(&self, path: &str) -> Result<Option<FileBlock>, StoreError> {
        self.get(&key(BLOCK, path))
    }

    pub fn blob_of(&self, path: &str) -> Result<Option<String>, StoreError> {
        self.get(&key(BLOB, path))
    }

    /// Files whose blocks changed since the snapshot was last written.
    pub fn snapshot_stale(&self) -> Result<Vec<String>, StoreError> {
        let mut out = Vec::new();
        for k in self.db.scan_prefix(SNAPSHOT_STALE.as_bytes()).keys() {
            let k = k.map_err(self.sled_err())?;
            out.push(String::from_utf8_lossy(&k[SNAPSHOT_STALE.len()..]).into_owned());
        }
        Ok(out)
    }

    /// Whether an indexed file whose path starts with `prefix` passes `keep`.
    pub fn any_file_under(
        &self,
        prefix: &str,
        keep: impl Fn(&str) -> bool,
    ) -> Result<bool, StoreError> {
        for k in self.db.scan_prefix(key(BLOB, prefix)).keys() {
            let k = k.map_err(self.sled_err())?;
            if keep(&String::from_utf8_lossy(&k[BLOB.len()..])) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Every indexed file and its blob id.
    pub fn blobs(&self) -> Result<BTreeMap<String, String>, StoreError> {
        Ok(self.scan(BLOB)?.into_iter().collect())
    }

    /// A cached parse of a blob.
    pub fn parsed(&self, blob: &str) -> Result<Option<crate::parse::ParsedFile>, StoreError> {
        self.get_packed(&key(PARSED, blob))
    }

    /// A cached parse of a blob as stored: its strings are there as
    /// written, so a search for a word in them needs no decoding.
    pub fn parsed_bytes(&self, blob: &str) -> Result<Option<sled::IVec>, StoreError> {
        self.db.get(key(PARSED, blob)).map_err(self.sled_err())
    }

    pub fn inbound(&self, path: &str) -> Result<Vec<Edge>, StoreError> {
        Ok(self.get(&key(INBOUND, path))?.unwrap_or_default())
    }

    /// Entities whose bare name is `name`, in every language.
    pub fn named_any(&self, name: &str) -> Result<Vec<NameRef>, StoreError> {
        Ok(self.get_named(NAMES, name)?.unwrap_or_default())
    }

    pub fn file_deps(&self, path: &str) -> Result<Option<FileDeps>, StoreError> {
        self.get_packed(&key(FILE_DEPS, path))
    }

    /// What `path`'s resolution read ([`DepsView`]), from its dependency
    /// record without decoding the rest or copying it: a change to a
    /// header asks this of every file that includes it.
    pub fn paths_read<R>(
        &self,
        path: &str,
        f: impl FnOnce(&DepsView) -> R,
    ) -> Result<Option<R>, StoreError> {
        self.deps_record(path, |v| Some(f(&postcard::from_bytes(v).ok()?)))
    }

    /// The blob and parse filter of `path`'s dependency record.
    pub fn grams_of<R>(
        &self,
        path: &str,
        f: impl FnOnce(&GramsView) -> R,
    ) -> Result<Option<R>, StoreError> {
        self.deps_record(path, |v| Some(f(&postcard::from_bytes(v).ok()?)))
    }

    /// `path`'s dependency record as sled holds it, through `decode`
    /// (`None`: the record is not what rpg writes).
    fn deps_record<R>(
        &self,
        path: &str,
        decode: impl FnOnce(&[u8]) -> Option<R>,
    ) -> Result<Option<R>, StoreError> {
        let k = key(FILE_DEPS, path);
        let Some(v) = self.db.get(&k).map_err(self.sled_err())? else {
            return Ok(None);
        };
        decode(&v).map(Some).ok_or_else(|| self.bad_record(&k))
    }

    /// Every file's dependency record.
    pub fn all_file_deps(&self) -> Result<Vec<(String, FileDeps)>, StoreError> {
        let mut out = Vec::new();
        for kv in self.db.scan_prefix(FILE_DEPS.as_bytes()) {
            let (k, v) = kv.map_err(self.sled_err())?;
            let path = String::from_utf8_lossy(&k[FILE_DEPS.len()..]).into_owned();
            let d = postcard::from_bytes(&v).map_err(|_| StoreError::Record {
                path: self.path.clone(),
                what: format!("dependencies of {path}"),
                source: None,
            })?;
            out.push((path, d));
        }
        Ok(out)
    }

    /// The files whose resolution read `read`.
    pub fn dependents(&self, kind: DepKind, read: &str) -> Result<BTreeSet<String>, StoreError> {
        let files: Vec<String> = self.get_named(kind.prefix(), read)?.unwrap_or_default();
        Ok(files.into_iter().collect())
    }

    /// Turn a write set's names and dependents edits into plain writes of
    /// their buckets, reading each bucket they touch once.
    fn settle(&self, w: &mut WriteSet) -> Result<(), StoreError> {
        let names = std::mem::take(&mut w.names);
        let by_bucket = buckets::group(NAMES, names.iter().map(|(n, r)| (n.as_str(), r)));
        for (k, entries) in by_bucket {
            let mut b = self.bucket(&k)?;
            for (name, refs) in entries {
                b.set(name, (!refs.is_empty()).then(|| packed(refs)));
            }
            w.ops.push((k, b.encode()));
        }
        self.settle_deps(w)
    }

    /// [`Store::settle`] for dependents: each edit adds a file to, or
    /// drops it from, the list of one read; after `clear_deps`, the lists
    /// are the edits' additions alone.
    fn settle_deps(&self, w: &mut WriteSet) -> Result<(), StoreError> {
        let clear = std::mem::take(&mut w.clear_deps);
        let edits = std::mem::take(&mut w.dep_edits);
        let by_bucket = [DEP_LENT, DEP_NAME, DEP_PATH].into_iter().flat_map(|kind| {
            let of_kind = edits.iter().filter(move |((p, _), _)| *p == kind);
            buckets::group(kind, of_kind.map(|((_, read), e)| (read.as_str(), e)))
        });
        let mut written = BTreeSet::new();
        for (k, reads) in by_bucket {
            let mut b = match clear {
                true => Bucket::default(),
                false => self.bucket(&k)?,
            };
            for (read, e) in reads {
                let mut files: BTreeSet<String> = match b.get(read) {
                    Some(v) => postcard::from_bytes::<Vec<String>>(v)
                        .map_err(|_| self.bad_record(&k))?
                        .into_iter()
                        .collect(),
                    None => BTreeSet::new(),
                };
                for (f, add) in e {
                    match add {
                        true => files.insert(f.clone()),
                        false => files.remove(f),
                    };
                }
                b.set(read, (!files.is_empty()).then(|| packed(&files)));
            }
            written.insert(k.clone());
            w.ops.push((k, b.encode()));
        }
        if clear {
            for prefix in [DEP_NAME, DEP_PATH, DEP_LENT] {
                for k in self.db.scan_prefix(prefix.as_bytes()).keys() {
                    let k = k.map_err(self.sled_err())?;
                    if !written.contains(k.as_ref()) {
                        w.ops.push((k.to_vec(), None));
                    }
                }
            }
        }
        Ok(())
    }

    /// Entities whose bare name is `name`, in files of language `lang`.
    pub fn named(&self, lang: Lang, name: &str) -> Result<Vec<NameRef>, StoreError> {
        Ok(self
            .named_any(name)?
            .into_iter()
            .filter(|r| Lang::from_path(&r.path).map(Lang::family) == Some(lang.family()))
            .collect())
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

    /// Write a whole graph into an empty store, with what resolving each
    /// file read and, when given, its parse; files without deps are
    /// resolved again on the next update.
    ///
    /// Records go in in key order. sled rewrites a leaf, large values and
    /// all, as keys are added to it; keys written in order only ever join
    /// the last leaf, so a large record is rewritten a few times at most.
    /// Written out of order, 20k small keys that sorted just before one
    /// file's large inbound record rewrote it at every step: 44 s and 3 GB
    /// of writes for a 2 MB file.
    ///
    /// So what only the store keeps is freed where its keys fall, not
    /// first: the dependency records after `fd/`, each parse as it is
    /// written, last (at millions of lines they were a quarter of the heap
    /// `init` peaks at, until they waited deflated: see
    /// [`StoredParse::shelved`]). Parses written first, under a key that
    /// sorts first, lowered the Linux tree's peak by 40 MB but left sled 278
    /// free segments instead of 45, and sled overwrites every free
    /// segment at every open: 139 MB of writes and 50 ms more for every
    /// hook and query.
    pub fn write_graph(
        &self,
        g: &Graph,
        resolved: Resolved,
        mirrored: &Mirrored,
    ) -> Result<(), StoreError> {
        let mut w = Slices {
            store: self,
            w: WriteSet::default(),
        };
        let Resolved {
            deps,
            parsed,
            unreadable,
        } = resolved;
        for f in g.files.values() {
            w.next()?.put(key(BLOB, &f.path), &f.blob);
        }
        for c in g.categories.values() {
            w.next()?.put_category(c);
        }
        w.next()?.put_counts(&StoredCounts::from(g.counts()));
        let t = std::time::Instant::now();
        let ready = self.write_deps(g, &deps, &mut w)?;
        w.next()?.set_deps_ready(ready);
        crate::timing("store: dependents", t);
        let mut hier = HierState::default();
        for b in blocks_of(g) {
            for e in &b.entities {
                *hier
                    .leaf_dirs
                    .entry(e.leaf.to_string())
                    .or_default()
                    .entry(crate::graph::dir_of(&e.path).to_string())
                    .or_default() += 1;
            }
            w.next()?.put(key(BLOCK, &b.file.path), &b);
        }
        for (path, d) in deps_of(g, &deps) {
            w.next()?.put_file_deps(path, Some(d));
        }
        drop(deps);
        w.next()?.put_hier(&hier);
        crate::timing("store: blocks and dependencies", t);
        self.write_inbound(g, &mut w)?;
        crate::timing("store: inbound edges", t);
        w.next()?.put_layout();
        w.next()?.put_meta(&g.meta);
        w.next()?.put_mirrored(mirrored);
        self.write_names(g, &mut w)?;
        crate::timing("store: names", t);
        for (blob, parsed) in parsed {
            w.next()?.put_stored_parse_owned(&blob, parsed);
        }
        w.next()?.put_unreadable(&unreadable);
        self.apply_unbatched(w.w)
    }

    /// [`Store::write_graph`]'s inbound edges, by the file they point into.
    fn write_inbound(&self, g: &Graph, w: &mut Slices) -> Result<(), StoreError> {
        // Borrowed, not cloned: a second copy of every edge was a large
        // share of a big init's peak memory.
        let mut inbound: BTreeMap<&str, Vec<&Edge>> = BTreeMap::new();
        for e in &g.edges {
            inbound
                .entry(crate::graph::split_id(&e.dst).0)
                .or_default()
                .push(e);
        }
        for (path, edges) in inbound {
            w.next()?.put_inbound(path, &edges);
        }
        Ok(())
    }

    /// [`Store::write_graph`]'s names index, borrowing the entities in the
    /// order blocks list them.
    fn write_names(&self, g: &Graph, w: &mut Slices) -> Result<(), StoreError> {
        let mut names: BTreeMap<&str, Vec<&Entity>> = BTreeMap::new();
        for f in g.files.values() {
            for e in entities_of(g, &f.path) {
                if let Some(n) = indexed_name(&e.qualname, e.kind) {
                    names.entry(n).or_default().push(e);
                }
            }
        }
        for (k, entries) in buckets::group(NAMES, names) {
            let packed: Vec<(&str, Vec<u8>)> = entries
                .into_iter()
                .map(|(n, ents)| {
                    let refs: Vec<NameRef> = ents
                        .iter()
                        .map(|e| name_ref(&e.path, &e.qualname, e.kind))
                        .collect();
                    (n, packed(&refs))
                })
                .collect();
            w.next()?.put_bucket(k, &packed);
        }
        Ok(())
    }

    /// [`Store::write_graph`]'s lists of the files that read each name,
    /// path and lent item. Whether every file had its reads recorded.
    fn write_deps(
        &self,
        g: &Graph,
        deps: &BTreeMap<String, FileDeps>,
        w: &mut Slices,
    ) -> Result<bool, StoreError> {
        // Files by number, not by `&str`: the Linux tree has 17M (name,
        // file) pairs, and at 16 bytes each they raised init's peak.
        let paths: Vec<&str> = deps_of(g, deps).map(|(path, _)| path).collect();
        let named =
            |files: &[u32]| -> Vec<&str> { files.iter().map(|&f| paths[f as usize]).collect() };
        // One kind at a time, in the order of their keys: the lists are
        // built beside the whole graph, at init's peak.
        for kind in [DepKind::Lent, DepKind::Name, DepKind::Path] {
            let mut by_read: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
            for (file, (_, d)) in deps_of(g, deps).enumerate() {
                let reads = match kind {
                    DepKind::Lent => &d.deps.lends,
                    DepKind::Name => &d.deps.names,
                    DepKind::Path => &d.deps.paths,
                };
                for r in reads {
                    by_read.entry(r).or_default().push(file as u32);
                }
            }
            // Files were visited in order, so each list is sorted already.
            for (k, entries) in buckets::group(kind.prefix(), by_read.iter().map(|(r, f)| (*r, f)))
            {
                let entries: Vec<(&str, Vec<u8>)> = entries
                    .into_iter()
                    .map(|(r, f)| (r, packed(&named(f))))
                    .collect();
                w.next()?.put_bucket(k, &entries);
            }
        }
        Ok(paths.len() == g.files.len())
    }
}

/// Each file's recorded reads, when they were made of the blob it holds.
fn deps_of<'g>(
    g: &'g Graph,
    deps: &'g BTreeMap<String, FileDeps>,
) -> impl Iterator<Item = (&'g str, &'g FileDeps)> {
    g.files.iter().filter_map(|(path, f)| {
        let d = deps.get(path).filter(|d| d.blob == f.blob)?;
        Some((path.as_str(), d))
    })
}

/// A write set applied in slices as it fills: a fresh store is invisible
/// until swapped in, so it can be written in parts, which keeps memory
/// flat on large trees.
struct Slices<'s> {
    store: &'s Store,
    w: WriteSet,
}

impl Slices<'_> {
    /// The set to add the next record to, after writing out a full one.
    fn next(&mut self) -> Result<&mut WriteSet, StoreError> {
        if self.w.len() >= 1024 {
            self.store.apply_unbatched(std::mem::take(&mut self.w))?;
        }
        Ok(&mut self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paths_a_file_read_come_back_without_decoding_its_whole_record() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let set = |xs: &[&str]| xs.iter().map(|x| std::sync::Arc::from(*x)).collect();
        let d = FileDeps {
            blob: "b1".into(),
            deps: Deps {
                names: set(&["c:kfree", "c:list_add", "c:module_is_live"]),
                paths: set(&["include/linux/list.h", "include/linux/module.h"]),
                lends: set(&["x.c"]),
            },
            grams: vec![1, 2, 3],
            binds: [("a".to_string(), "b".to_string())].into(),
            interface: "digest".into(),
        };
        let mut w = WriteSet::default();
        w.put_file_deps("kernel/module.c", Some(&d));
        store.apply(w).unwrap();
        let owned = |v: &DepsView| v.paths.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(
            store.paths_read("kernel/module.c", owned).unwrap().unwrap(),
            ["include/linux/list.h", "include/linux/module.h"]
        );
        assert_eq!(store.file_deps("kernel/module.c").unwrap(), Some(d));
        assert_eq!(store.paths_read("kernel/other.c", owned).unwrap(), None);
    }

    #[test]
    fn a_dependency_record_carries_a_filter_that_denies_names_its_parse_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let src =
            "static int helper(void) { return 0; }\nint api_entry(void) { return helper(); }\n";
        let parse = StoredParse::of(&crate::parse::parse(Lang::C, "x.c", src));
        let d = FileDeps {
            blob: "b1".into(),
            deps: Deps::default(),
            grams: parse.grams(),
            binds: BTreeMap::new(),
            interface: String::new(),
        };
        let mut w = WriteSet::default();
        w.put_file_deps("x.c", Some(&d));
        store.apply(w).unwrap();
        let may = |words: &[&str]| {
            store
                .paths_read("x.c", |v| {
                    words.iter().any(|w| grams::may_hold(v.grams, w.as_bytes()))
                })
                .unwrap()
                .unwrap()
        };
        assert!(may(&["helper"]));
        assert!(!may(&["hex_byte_pack_upper", "module_put"]));
        assert!(may(&["module_put", "api_entry"]));
        assert_eq!(store.file_deps("x.c").unwrap(), Some(d));
        let blob = store.grams_of("x.c", |v| (v.blob.to_string(), v.grams.len()));
        assert_eq!(blob.unwrap(), Some(("b1".to_string(), parse.grams().len())));
    }

    #[test]
    fn a_parse_shelved_until_the_store_write_is_smaller_and_stored_as_it_was() {
        let src: String = (0..200)
            .map(|i| format!("static int helper_{i}(int x) {{ return x + {i}; }}\n"))
            .collect();
        let parsed = crate::parse::parse(Lang::C, "x.c", &src);
        let plain = StoredParse::of(&parsed);
        let shelved = StoredParse::of(&parsed).shelved();
        let size = |p: &StoredParse| match &p.0 {
            Packed::Plain(b) | Packed::Deflated(b) => b.len(),
        };
        assert!(
            size(&shelved) * 3 < size(&plain),
            "{} deflated against {} plain",
            size(&shelved),
            size(&plain)
        );
        assert_eq!(shelved.grams(), plain.grams());
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut w = WriteSet::default();
        w.put_stored_parse("plain", &plain);
        w.put_stored_parse_owned("shelved", shelved);
        store.apply(w).unwrap();
        let bytes = |blob| store.parsed_bytes(blob).unwrap().unwrap();
        assert_eq!(bytes("shelved"), bytes("plain"));
        let back = store.parsed("shelved").unwrap().unwrap();
        assert_eq!(back.entities.len(), parsed.entities.len());
    }
}
