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
/// The seals of the snapshot the store last wrote (see
/// [`super::snapshot::Seals`]): megabytes on a large tree, so the key sorts
/// before every other. sled rewrites a whole leaf when it splits one, and
/// keys inserted in order just before a large value keep splitting the
/// leaf that holds it: as `seals`, right after the search index's `s/`
/// records, each first build of the Linux tree's index wrote its 2 MB
/// again every few files (10.4 of the index's 36 s).
const SEALS: &str = "!seals";
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
/// holds its parse's trigram filter. 8: long dependents lists in parts
/// (see [`dependents`]). 9: the seals under [`SEALS`], first.
pub const STORE_LAYOUT: u32 = 9;
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
/// `h/<commit>` → the functions that commit changed, as
/// [`crate::search::recent`] reads them: a commit never changes, so
/// neither does its record.
const CHANGED_BY: &str = "h/";
/// `g/<path>` → nothing: the file's block was written (or removed) since
/// the store last wrote or adopted the snapshot it mirrors, so the next
/// snapshot re-serialises these files alone.
const SNAPSHOT_STALE: &str = "g/";

mod dependents;
mod records;
mod whole_graph;
mod write;

pub use records::*;
pub use write::*;

/// Whether another process, or a child this one just started, holds sled's lock
/// on `<store>/db`. sled 0.34 reports that only as a message (see
/// `Config::try_lock` in sled), so the message is what there is to match.
/// The lock is never probed by taking it: a probe's lock leaks into any
/// child started meanwhile, and makes a concurrent opener fail instead.
fn is_lock_conflict(io: &std::io::Error) -> bool {
    io.kind() == std::io::ErrorKind::WouldBlock
        || io.to_string().starts_with("could not acquire lock on")
}

/// Free space (bytes rewritten at every open) below which a store is
/// never compacted: 128 of sled's 512 KiB segments, about 25 ms an open.
const COMPACT_WASTE: u64 = 64 << 20;

/// The sled working store.
pub struct Store {
    db: sled::Db,
    path: PathBuf,
    /// Bytes written while sled opened the store, where the OS says.
    open_writes: Option<u64>,
}

/// Bytes this process has written so far (Linux's `/proc/self/io`).
fn written_so_far() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    let wchar = io.lines().find_map(|l| l.strip_prefix("wchar:"))?;
    wchar.trim().parse().ok()
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
        let before = written_so_far();
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
        let open_writes = before
            .zip(written_so_far())
            .map(|(a, b)| b.saturating_sub(a));
        Ok(Store {
            db,
            path: path.to_path_buf(),
            open_writes,
        })
    }

    /// Bytes sled wrote while opening this store, where the OS says:
    /// sled 0.34 overwrites each free segment of its log at every open
    /// (`SegmentAccountant::initialize_from_snapshot`), so this is the
    /// store's free space.
    pub fn rewritten_at_open(&self) -> Option<u64> {
        self.open_writes
    }

    /// Whether the store's free space, above 64 MB and an eighth of its
    /// log, costs every open more than a copy without it costs once:
    /// after two thousand commits the whole Linux tree's store held 330 MB
    /// of it, which every hook and query wrote out again, 50–80 ms each.
    /// A compacted copy (see `RpgDir::compact`) has none.
    /// `RPG_COMPACT_WASTE_MB` moves the floor.
    pub fn wants_compacting(&self) -> bool {
        let Some(wasted) = self.open_writes else {
            return false;
        };
        let floor = std::env::var("RPG_COMPACT_WASTE_MB")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(COMPACT_WASTE, |mb| mb << 20);
        // The log holds the free segments; large values sit in files of
        // their own beside it.
        let log = std::fs::metadata(self.path.join("db")).map_or(0, |m| m.len());
        wasted >= floor.max(log / 8)
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
        self.get_in(&buckets::key(prefix, name), name)
    }

    /// The record under `name` in the bucket stored at `k`.
    fn get_in<T: for<'de> Deserialize<'de>>(
        &self,
        k: &[u8],
        name: &str,
    ) -> Result<Option<T>, StoreError> {
        let Some(v) = self.db.get(k).map_err(self.sled_err())? else {
            return Ok(None);
        };
        match buckets::find(&v, name).map_err(|_| self.bad_record(k))? {
            Some(packed) => postcard::from_bytes(packed)
                .map(Some)
                .map_err(|_| self.bad_record(k)),
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

    /// The functions `commit` changed, when recorded (see
    /// [`WriteSet::put_changed_by`]).
    pub fn changed_by(&self, commit: &str) -> Result<Option<Vec<(String, String)>>, StoreError> {
        self.get(&key(CHANGED_BY, commit))
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seals_sort_before_every_record_that_grows_in_key_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let seals = super::super::snapshot::Seals {
            files: [("z.c".to_string(), [7; 32])].into(),
            categories: [1; 32],
        };
        let mut w = WriteSet::default();
        w.put_seals(&seals);
        w.put_layout();
        w.put_search(b"s/f/a.c".to_vec(), vec![1]);
        w.put_search(b"s/d/0001".to_vec(), vec![2]);
        w.put_counts(&StoredCounts::default());
        store.apply(w).unwrap();
        let first = store.db.iter().next().unwrap().unwrap().0;
        assert_eq!(&*first, SEALS.as_bytes());
        assert_eq!(store.seals().unwrap(), Some(seals));
    }

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
