//! The persisted search index: BM25F postings, kept in step with the
//! graph file by file. A first build writes its posting lists into an
//! immutable segment file (see [`super::segment`]); later updates keep
//! theirs in the sled store, shard by shard, and mark the segment's
//! postings of each file they re-index or drop as void. A file is
//! re-indexed only when its blob changed, so keeping the index current
//! costs what the change costs, and a query reads only the posting lists
//! of its own terms and the documents of the files they hit.

use super::query::is_noise;
use super::segment::{Seal, Segment};
use crate::git::Repo;
use crate::graph::resolve::bare_name;
use crate::graph::{EdgeKind, Entity};
use crate::parse::Kind;
use crate::store::{FileBlock, RpgDir, Store, StoreError, WriteSet, SEARCH_STALE};
use crate::text::words::{prose_words, split_identifier};
use rustc_hash::FxHashMap;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::rc::Rc;

/// The index lives in the store; its failures are the store's.
pub type SearchError = StoreError;

// The per-file records sort before every posting list, and a first build
// writes each kind in key order: sled rewrites a leaf, large values and
// all, as keys join it, so posting lists written just before a file's
// large record (a 20k-function file's terms) rewrote that record at every
// step. Postings, written last, only ever join the last leaf.

/// `s/meta` → [`IndexMeta`].
const META: &[u8] = b"s/meta";
/// `s/d/<num>` → [`FileDocs`].
const DOCS: &str = "s/d/";
/// `s/e/<num>` → [`Owners`]; absent when the file has no class.
const OWNERS: &str = "s/e/";
/// `s/f/<path>` → [`Slot`]: the file's number and the blob it was indexed from.
const SLOTS: &str = "s/f/";
/// `s/g/<num>` → [`FileTerms`]: what to take out when the file changes.
const TERMS_OF: &str = "s/g/";
/// `s/k/<lowercase bare name>` → the documents with that name.
const NAMES: &str = "s/k/";
/// `s/m/<term>` → postings over files' module text (see [`module_text`]),
/// each at position 0.
const POST_MODULE: &str = "s/m/";
/// `s/t/<term>` → postings over every field.
const POST_ALL: &str = "s/t/";
/// `s/u/<term>` → postings over names and features only.
const POST_FEATURES: &str = "s/u/";
/// `s/v/<num>` → nothing: file `num`'s postings in the segment are void,
/// since the file changed or left after the segment was written.
const VOID: &str = "s/v/";

/// Each class of a file with its members, by position: what lending class
/// context needs, without decoding every document of every file a query
/// touches.
pub type Owners = Vec<(u16, Vec<u16>)>;

fn owners_of(docs: &[DocMeta]) -> Owners {
    let mut out: BTreeMap<u16, Vec<u16>> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind == Kind::Class)
        .map(|(i, _)| (i as u16, Vec::new()))
        .collect();
    for (i, d) in docs.iter().enumerate() {
        if let Some(members) = d.parent.and_then(|p| out.get_mut(&p)) {
            members.push(i as u16);
        }
    }
    out.into_iter().collect()
}

/// BM25F field weights: a name says more than a body.
const W_NAME: f32 = 3.0;
const W_OWNER: f32 = 1.5;
const W_PATH: f32 = 1.0;
const W_FEATURE: f32 = 1.5;
const W_DOC: f32 = 1.0;
const W_BODY: f32 = 1.0;
/// A command-line flag the body declares (`"--verbose"`).
const W_FLAG: f32 = 3.0;

/// Which text a query is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Field {
    /// Names, path, features, docstring, signature and body.
    #[default]
    All,
    /// Names and lifted features only: what an entity is for.
    Features,
}

/// Bumped whenever what goes into a document, or where a record is kept,
/// changes; an index of another version is rebuilt from nothing. 8: a
/// first build's postings moved to the segment file.
const INDEX_VERSION: u32 = 8;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct IndexMeta {
    pub version: u32,
    /// The tree the index reflects.
    pub tree: String,
    next: u32,
    free: Vec<u32>,
    pub docs: u64,
    total_len: f64,
    total_features_len: f64,
    /// Files with module text, and its total length.
    pub modules: u64,
    total_module_len: f64,
    /// The segment file holding the first build's postings.
    segment: Option<Seal>,
}

impl IndexMeta {
    pub fn avg_len(&self, field: Field) -> f32 {
        let total = match field {
            Field::All => self.total_len,
            Field::Features => self.total_features_len,
        };
        (total / self.docs.max(1) as f64) as f32
    }

    pub fn avg_module_len(&self) -> f32 {
        (self.total_module_len / self.modules.max(1) as f64) as f32
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Slot {
    num: u32,
    blob: String,
    /// Its postings are in sled, with a [`FileTerms`] record to take them
    /// out by; otherwise in the segment.
    delta: bool,
}

/// One searchable entity (a class, function or method).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DocMeta {
    pub qualname: String,
    pub kind: Kind,
    /// The enclosing entity's position in the same file.
    pub parent: Option<u16>,
    pub start_line: u32,
    pub end_line: u32,
    pub len: f32,
    pub features_len: f32,
}

/// The documents of one file, in id order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileDocs {
    pub path: String,
    pub docs: Vec<DocMeta>,
    /// The length of its module text; 0 when it has none.
    pub module_len: f32,
}

impl FileDocs {
    pub fn id(&self, local: u16) -> String {
        crate::graph::entity_id(&self.path, &self.docs[local as usize].qualname)
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct FileTerms {
    all: Vec<String>,
    features: Vec<String>,
    names: Vec<String>,
    module: Vec<String>,
}

/// (file number, position in file, weighted term frequency, the document's
/// length in the field), so scoring needs no other read.
pub type Posting = (u32, u16, f32, f32);
/// A document: (file number, position in file).
pub type DocKey = (u32, u16);

fn encode<T: Serialize>(v: &T) -> Vec<u8> {
    postcard::to_stdvec(v).expect("index record serialises")
}

fn decode<T: DeserializeOwned>(store: &Store, what: &str, bytes: &[u8]) -> Result<T, StoreError> {
    postcard::from_bytes(bytes).map_err(|_| store.corrupt(what))
}

fn key(prefix: &str, rest: &str) -> Vec<u8> {
    [prefix.as_bytes(), rest.as_bytes()].concat()
}

fn num_key(prefix: &str, num: u32) -> Vec<u8> {
    [prefix.as_bytes(), &num.to_be_bytes()].concat()
}

/// Files whose postings of one term share a record. A common term's list
/// spans the whole tree; kept whole, re-indexing one file decoded and
/// rewrote a megabyte for each such term it holds.
const SHARD_FILES: u32 = 256;

/// Where every shard of `term`'s postings lies: `prefix term NUL`.
fn term_prefix(prefix: &str, term: &str) -> Vec<u8> {
    [prefix.as_bytes(), term.as_bytes(), b"\0"].concat()
}

/// The record of `term`'s postings in files `shard·SHARD_FILES..`; shards
/// sort by number, so a prefix scan reads the list in file order.
fn shard_key(prefix: &str, term: &str, shard: u32) -> Vec<u8> {
    [term_prefix(prefix, term), shard.to_be_bytes().to_vec()].concat()
}

/// Whether the index can key `term`: a NUL in it would blur shard keys.
fn keyable(term: &str) -> bool {
    !term.contains('\0')
}

/// Words of a path: its directories and the file's stem.
pub fn path_words(path: &str) -> BTreeSet<String> {
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let mut words = dir_words(dir);
    words.extend(file_words(file));
    words
}

/// Words of a directory's path, the first part of [`path_words`].
pub fn dir_words(dir: &str) -> BTreeSet<String> {
    words_of(dir.split('/'))
}

/// Words of a file's name without its extension, the rest of
/// [`path_words`]: every Go file would share `go` otherwise.
pub fn file_words(file: &str) -> BTreeSet<String> {
    let stem = match file.rsplit_once('.') {
        Some((stem, _)) if crate::parse::Lang::from_path(file).is_some() => stem,
        _ => file,
    };
    words_of([stem].into_iter())
}

fn words_of<'a>(parts: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    parts
        .flat_map(split_identifier)
        .filter(|w| !is_noise(w))
        .collect()
}

/// The bare name a query identifier is matched against.
pub fn name_key(qualname: &str) -> String {
    let name = bare_name(qualname);
    name.split('#').next().unwrap_or(name).to_lowercase()
}

struct Built {
    docs: FileDocs,
    all: Vec<Tf>,
    features: Vec<Tf>,
    module: Tf,
}

/// A document's weighted term frequencies and its length. The length adds
/// up in insertion order, so it is the same on every run.
#[derive(Default)]
struct Tf {
    terms: FxHashMap<String, f32>,
    len: f32,
}

fn add(tf: &mut Tf, words: impl IntoIterator<Item = String>, w: f32) {
    for word in words {
        if !is_noise(&word) {
            match tf.terms.get_mut(&word) {
                Some(f) => *f += w,
                None => {
                    tf.terms.insert(word, w);
                }
            }
            tf.len += w;
        }
    }
}

/// The pending edits of `term`'s list, made when first needed: a tree's
/// postings would otherwise copy the term's text once each.
fn edits_of<'p>(list: &'p mut FxHashMap<String, Edits>, term: &str) -> &'p mut Edits {
    if !list.contains_key(term) {
        list.insert(term.to_string(), Edits::default());
    }
    list.get_mut(term).expect("just inserted")
}

/// Documents of one file, from its graph block and its source text.
fn build_file(block: &FileBlock, text: &str) -> Built {
    let path = &block.file.path;
    let pw: Vec<String> = path_words(path).into_iter().collect();
    let lines: Vec<&str> = text.lines().collect();
    let ents: Vec<&Entity> = block
        .entities
        .iter()
        .filter(|e| e.kind != Kind::File)
        .take(u16::MAX as usize)
        .collect();
    let local: HashMap<&str, u16> = ents
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i as u16))
        .collect();
    let parent: HashMap<&str, u16> = block
        .out
        .iter()
        .filter(|e| e.kind == EdgeKind::Contains)
        .filter_map(|e| Some((e.dst.as_str(), *local.get(e.src.as_str())?)))
        .collect();
    let mut module = Tf::default();
    add(
        &mut module,
        prose_words(&module_text(&ents, &lines)),
        W_BODY,
    );
    let mut out = Built {
        docs: FileDocs {
            path: path.clone(),
            docs: Vec::with_capacity(ents.len()),
            module_len: module.len,
        },
        all: Vec::with_capacity(ents.len()),
        features: Vec::with_capacity(ents.len()),
        module,
    };
    let mut long_lines = HashMap::new();
    for e in ents {
        let mut all = Tf::default();
        let mut feats = Tf::default();
        let name = split_identifier(bare_name(&e.qualname).split('#').next().unwrap_or(""));
        add(&mut all, name.clone(), W_NAME);
        add(&mut feats, name, W_NAME);
        let owner = e
            .qualname
            .rsplit_once(['.', ':'])
            .map(|(o, _)| prose_words(o))
            .unwrap_or_default();
        add(&mut all, owner, W_OWNER);
        add(&mut all, pw.iter().cloned(), W_PATH);
        for f in &e.features {
            add(&mut all, prose_words(f), W_FEATURE);
            add(&mut feats, prose_words(f), W_FEATURE);
        }
        add(&mut all, prose_words(&e.doc), W_DOC);
        add(&mut all, prose_words(&e.signature), W_DOC);
        if e.kind != Kind::Class {
            let body = body_of(e, &lines, &mut long_lines);
            add(&mut all, prose_words(&body), W_BODY);
            add(&mut all, super::query::flags_in(&body), W_FLAG);
        }
        out.docs.docs.push(DocMeta {
            qualname: e.qualname.clone(),
            kind: e.kind,
            parent: parent.get(e.id.as_str()).copied(),
            start_line: e.start_line,
            end_line: e.end_line,
            len: all.len,
            features_len: feats.len,
        });
        out.all.push(all);
        out.features.push(feats);
    }
    out
}

/// A line longer than this is shared: it joins the bodies of at most
/// [`LONG_LINE_OWNERS`] entities.
const LONG_LINE: usize = 1000;
const LONG_LINE_OWNERS: u8 = 4;

/// The lines an entity's body is indexed from. Entities know their lines,
/// not their columns, so every function on one long line (a minified or
/// generated file) would read the whole line: 2,000 functions on a 139 KB
/// line tokenized 280 MB. A long line counts for its first few entities
/// only, so each byte is read a bounded number of times.
fn body_of(e: &Entity, lines: &[&str], long_lines: &mut HashMap<usize, u8>) -> String {
    let start = (e.start_line as usize).saturating_sub(1).min(lines.len());
    let end = (e.end_line as usize).clamp(start, lines.len());
    let mut kept: Vec<&str> = Vec::with_capacity(end - start);
    for (i, line) in lines.iter().enumerate().take(end).skip(start) {
        if line.len() > LONG_LINE {
            let owners = long_lines.entry(i).or_insert(0u8);
            if *owners >= LONG_LINE_OWNERS {
                continue;
            }
            *owners += 1;
        }
        kept.push(line);
    }
    kept.join("\n")
}

/// The lines of a file outside every function: its header comment,
/// imports, constants, tables, and the bodies of classes and structs
/// between their methods. A locale table or a regex constant is often
/// what an issue is about, and no function holds it.
fn module_text(ents: &[&Entity], lines: &[&str]) -> String {
    let mut inside = vec![false; lines.len()];
    for e in ents.iter().filter(|e| e.kind != Kind::Class) {
        let start = (e.start_line as usize).saturating_sub(1).min(lines.len());
        let end = (e.end_line as usize).clamp(start, lines.len());
        inside[start..end].fill(true);
    }
    let mut text = String::new();
    for (line, _) in lines.iter().zip(&inside).filter(|(_, i)| !**i) {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// What one [`sync`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncReport {
    /// Built from nothing rather than updated.
    pub fresh: bool,
    /// Records of an earlier index cleared before a rebuild.
    pub cleared: usize,
    /// Of those, posting-list records kept in sled.
    pub cleared_lists: usize,
    pub files_indexed: usize,
    pub files_removed: usize,
    pub docs: u64,
}

#[derive(Default)]
struct Edits {
    /// File numbers whose entries go.
    gone: BTreeSet<u32>,
    add: Vec<Posting>,
}

/// Posting-list edits collected over a sync, applied once per term.
#[derive(Default)]
struct Pending {
    all: FxHashMap<String, Edits>,
    features: FxHashMap<String, Edits>,
    names: FxHashMap<String, Edits>,
    module: FxHashMap<String, Edits>,
}

impl Pending {
    /// Take a file's documents out of the index.
    fn retire(
        &mut self,
        store: &Store,
        w: &mut WriteSet,
        meta: &mut IndexMeta,
        slot: &Slot,
    ) -> Result<(), StoreError> {
        if let Some(b) = store.search_get(&num_key(TERMS_OF, slot.num))? {
            let t: FileTerms = decode(store, "terms", &b)?;
            for (list, terms) in [
                (&mut self.all, t.all),
                (&mut self.features, t.features),
                (&mut self.names, t.names),
                (&mut self.module, t.module),
            ] {
                for term in terms {
                    edits_of(list, &term).gone.insert(slot.num);
                }
            }
        }
        if let Some(b) = store.search_get(&num_key(DOCS, slot.num))? {
            let d: FileDocs = decode(store, "docs", &b)?;
            meta.docs -= d.docs.len() as u64;
            meta.total_len -= d.docs.iter().map(|x| x.len as f64).sum::<f64>();
            meta.total_features_len -= d.docs.iter().map(|x| x.features_len as f64).sum::<f64>();
            if d.module_len > 0.0 {
                meta.modules -= 1;
                meta.total_module_len -= d.module_len as f64;
            }
        }
        if !slot.delta {
            w.put_search(num_key(VOID, slot.num), Vec::new());
        }
        w.remove_search(num_key(TERMS_OF, slot.num));
        w.remove_search(num_key(DOCS, slot.num));
        w.remove_search(num_key(OWNERS, slot.num));
        Ok(())
    }
}

/// Bring the index in step with the graph in the store: re-index the files
/// whose blob changed, drop the files that left. A no-op when the index
/// already reflects the graph's tree.
pub fn sync(store: &Store, repo: &Repo) -> Result<SyncReport, StoreError> {
    let graph_tree = store.meta()?.tree;
    // A record this version cannot read, or an index of another version,
    // is rebuilt rather than trusted.
    let mut meta = match store.search_get(META)? {
        Some(b) => decode::<IndexMeta>(store, "meta", &b)
            .ok()
            .filter(|m| m.version == INDEX_VERSION),
        None => None,
    };
    let stale: Vec<String> = store
        .search_keys(SEARCH_STALE.as_bytes())?
        .iter()
        .map(|k| String::from_utf8_lossy(&k[SEARCH_STALE.len()..]).into_owned())
        .collect();
    // So is an index whose segment is not the one it wrote (gone, cut or
    // replaced), and one most of whose files changed: a first build
    // writes a new segment for less than the shard edits would cost.
    if let Some(m) = &meta {
        let live = (m.next as usize).saturating_sub(m.free.len());
        if !segment_fits(store, m)? || stale.len() > REBUILD_AFTER.max(live / 2) {
            meta = None;
        }
    }
    let fresh = meta.is_none();
    let mut meta = meta.unwrap_or_default();
    meta.version = INDEX_VERSION;
    let mut report = SyncReport {
        fresh,
        docs: meta.docs,
        ..SyncReport::default()
    };
    if meta.tree == graph_tree && !graph_tree.is_empty() && stale.is_empty() {
        return Ok(report);
    }
    // An index in step but for the marked files looks at those alone:
    // the hook's cost follows the change, not the tree.
    let (blobs, slots) = match fresh {
        true => (store.blobs()?, BTreeMap::new()),
        false => marked(store, &stale)?,
    };
    if fresh {
        // Whatever a killed build left behind goes first: without `s/meta`
        // nothing under `s/` is trusted.
        let mut w = WriteSet::default();
        for k in store.search_keys(crate::store::SEARCH.as_bytes())? {
            let lists = [NAMES, POST_MODULE, POST_ALL, POST_FEATURES];
            if lists.iter().any(|p| k.starts_with(p.as_bytes())) {
                report.cleared_lists += 1;
            }
            w.remove_search(k.to_vec());
        }
        report.cleared = w.len();
        store.apply_unbatched(w)?;
    }
    let mut w = WriteSet::default();
    for path in &stale {
        w.remove_search(key(SEARCH_STALE, path));
    }
    let mut p = Pending::default();
    for (path, slot) in &slots {
        if !blobs.contains_key(path) {
            p.retire(store, &mut w, &mut meta, slot)?;
            w.remove_search(key(SLOTS, path));
            meta.free.push(slot.num);
            report.files_removed += 1;
        }
    }
    // Plan first (file numbers, retirements), then build documents on two
    // threads in bounded batches, then merge in path order: the same
    // postings whatever the timing.
    let mut todo: Vec<(&String, &String, u32)> = Vec::new();
    for (path, blob) in &blobs {
        let num = match slots.get(path) {
            Some(s) if s.blob == *blob => continue,
            Some(s) => {
                p.retire(store, &mut w, &mut meta, s)?;
                s.num
            }
            None => meta.free.pop().unwrap_or_else(|| {
                meta.next += 1;
                meta.next - 1
            }),
        };
        todo.push((path, blob, num));
    }
    for batch in todo.chunks(BUILD_BATCH) {
        for ((path, blob, num), built) in batch.iter().zip(build_batch(store, repo, batch)) {
            let Some(built) = built? else { continue };
            let delta = !fresh;
            add_file(&built, path, blob, *num, delta, &mut p, &mut meta, &mut w);
            report.files_indexed += 1;
        }
        if fresh {
            // Nothing is trusted before `s/meta`, so a first build can go
            // out as it is made instead of piling up beside the postings.
            store.write_unbatched(std::mem::take(&mut w))?;
        }
    }
    match fresh {
        true => meta.segment = Some(write_segment(store, p)?),
        false => write_postings(store, p, &mut w)?,
    }
    meta.tree = graph_tree;
    if meta.docs == 0 {
        meta.total_len = 0.0;
        meta.total_features_len = 0.0;
    }
    if meta.modules == 0 {
        meta.total_module_len = 0.0;
    }
    report.docs = meta.docs;
    if fresh {
        // A first build is written record by record (see
        // `Store::apply_unbatched`); `s/meta` goes last and makes it valid.
        store.apply_unbatched(w)?;
        let mut last = WriteSet::default();
        last.put_search(META.to_vec(), encode(&meta));
        store.apply(last)?;
    } else {
        w.put_search(META.to_vec(), encode(&meta));
        store.apply(w)?;
    }
    Ok(report)
}

/// Whether the segment file is the length the meta sealed it at; its map's
/// checksum is checked when a reader opens it.
fn segment_fits(store: &Store, meta: &IndexMeta) -> Result<bool, StoreError> {
    let Some(seal) = &meta.segment else {
        return Ok(false);
    };
    Ok(match store.open_segment()? {
        Some(f) => seal.fits(&f),
        None => false,
    })
}

/// Files an update re-indexes above which (and above half the index) it
/// builds afresh instead.
const REBUILD_AFTER: usize = 2_000;

/// The graph's blobs and the index's slots of the files marked stale.
#[allow(clippy::type_complexity)]
fn marked(
    store: &Store,
    stale: &[String],
) -> Result<(BTreeMap<String, String>, BTreeMap<String, Slot>), StoreError> {
    let (mut blobs, mut slots) = (BTreeMap::new(), BTreeMap::new());
    for path in stale {
        if let Some(blob) = store.blob_of(path)? {
            blobs.insert(path.clone(), blob);
        }
        if let Some(v) = store.search_get(&key(SLOTS, path))? {
            slots.insert(path.clone(), decode(store, "slot", &v)?);
        }
    }
    Ok((blobs, slots))
}

/// Documents of a batch of files, built on two threads; in the batch's
/// order, `None` for a file the store no longer holds.
fn build_batch(
    store: &Store,
    repo: &Repo,
    batch: &[(&String, &String, u32)],
) -> Vec<Result<Option<Built>, StoreError>> {
    let half = batch.len().div_ceil(2);
    std::thread::scope(|scope| {
        let workers: Vec<_> = batch
            .chunks(half.max(1))
            .map(|part| {
                scope.spawn(move || {
                    let local = repo.local();
                    part.iter()
                        .map(|(path, blob, _)| {
                            let Some(block) = store.file_block(path)? else {
                                return Ok(None);
                            };
                            // A blob missing from the object database
                            // leaves the file findable by name and
                            // features, just not by its body.
                            let text = gix::ObjectId::from_hex(blob.as_bytes())
                                .ok()
                                .and_then(|id| Repo::read_blob(&local, id).ok())
                                .map(|b| String::from_utf8_lossy(&b).into_owned())
                                .unwrap_or_default();
                            Ok(Some(build_file(&block, &text)))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Merge one built file into the pending postings, the corpus statistics
/// and the batch: its documents, its terms, its slot.
#[allow(clippy::too_many_arguments)]
fn add_file(
    built: &Built,
    path: &str,
    blob: &str,
    num: u32,
    delta: bool,
    p: &mut Pending,
    meta: &mut IndexMeta,
    w: &mut WriteSet,
) {
    let mut terms = FileTerms::default();
    for (i, d) in built.docs.docs.iter().enumerate() {
        let i = i as u16;
        for (tf, list, seen, len) in [
            (&built.all[i as usize], &mut p.all, &mut terms.all, d.len),
            (
                &built.features[i as usize],
                &mut p.features,
                &mut terms.features,
                d.features_len,
            ),
        ] {
            for (term, f) in &tf.terms {
                edits_of(list, term).add.push((num, i, *f, len));
                if delta {
                    seen.push(term.clone());
                }
            }
        }
        let n = name_key(&d.qualname);
        edits_of(&mut p.names, &n).add.push((num, i, 1.0, 0.0));
        terms.names.push(n);
    }
    let len = built.module.len;
    for (term, f) in &built.module.terms {
        edits_of(&mut p.module, term).add.push((num, 0, *f, len));
        if delta {
            terms.module.push(term.clone());
        }
    }
    if len > 0.0 {
        meta.modules += 1;
        meta.total_module_len += len as f64;
    }
    for t in [
        &mut terms.all,
        &mut terms.features,
        &mut terms.names,
        &mut terms.module,
    ] {
        t.sort();
        t.dedup();
    }
    let docs = &built.docs.docs;
    meta.docs += docs.len() as u64;
    meta.total_len += docs.iter().map(|x| x.len as f64).sum::<f64>();
    meta.total_features_len += docs.iter().map(|x| x.features_len as f64).sum::<f64>();
    w.put_search(num_key(DOCS, num), encode(&built.docs));
    let owners = owners_of(docs);
    if !owners.is_empty() {
        w.put_search(num_key(OWNERS, num), encode(&owners));
    }
    // Postings in the segment are voided whole, not edited term by term.
    if delta {
        w.put_search(num_key(TERMS_OF, num), encode(&terms));
    }
    let slot = Slot {
        num,
        blob: blob.to_string(),
        delta,
    };
    w.put_search(key(SLOTS, path), encode(&slot));
}

/// The pending edits of every list, in key order: the prefixes sort
/// as listed, then the terms.
fn in_key_order(p: Pending) -> impl Iterator<Item = (&'static str, String, Edits)> {
    [
        (NAMES, p.names),
        (POST_MODULE, p.module),
        (POST_ALL, p.all),
        (POST_FEATURES, p.features),
    ]
    .into_iter()
    .flat_map(|(prefix, edits)| {
        let mut edits: Vec<(String, Edits)> = edits.into_iter().collect();
        edits.sort_by(|a, b| a.0.cmp(&b.0));
        edits
            .into_iter()
            .filter(|(term, _)| keyable(term))
            .map(move |(term, e)| (prefix, term, e))
    })
}

/// A first build's postings, each list written once into a new segment.
fn write_segment(store: &Store, p: Pending) -> Result<Seal, StoreError> {
    let t = std::time::Instant::now();
    let seal = store.write_segment(|out| {
        let mut seg = super::segment::Writer::new(out)?;
        for (prefix, term, mut e) in in_key_order(p) {
            e.add.sort_by_key(|p| (p.0, p.1));
            seg.add(&key(prefix, &term), &encode(&e.add))?;
        }
        seg.finish()
    })?;
    crate::timing("index segment", t);
    Ok(seal)
}

/// Apply the pending posting edits to sled, term by term in key order, so
/// the batch (and so the store) is the same every run.
fn write_postings(store: &Store, p: Pending, w: &mut WriteSet) -> Result<(), StoreError> {
    for (prefix, term, e) in in_key_order(p) {
        write_shards(store, w, prefix, &term, e)?;
    }
    Ok(())
}

/// One term's edits, shard by shard: only the shards of the files that
/// came or went are read and rewritten.
fn write_shards(
    store: &Store,
    w: &mut WriteSet,
    prefix: &str,
    term: &str,
    e: Edits,
) -> Result<(), StoreError> {
    let mut shards: BTreeMap<u32, Vec<Posting>> = BTreeMap::new();
    for num in &e.gone {
        shards.entry(num / SHARD_FILES).or_default();
    }
    for p in e.add {
        shards.entry(p.0 / SHARD_FILES).or_default().push(p);
    }
    for (shard, add) in shards {
        let k = shard_key(prefix, term, shard);
        let mut list: Vec<Posting> = match store.search_get(&k)? {
            Some(b) => decode(store, "postings", &b)?,
            None => Vec::new(),
        };
        list.retain(|p| !e.gone.contains(&p.0));
        list.extend(add);
        list.sort_by_key(|p| (p.0, p.1));
        if list.is_empty() {
            w.remove_search(k);
        } else {
            w.put_search(k, encode(&list));
        }
    }
    Ok(())
}

/// Files whose documents are built together, two threads at a time.
const BUILD_BATCH: usize = 256;

/// Files indexed in one go above which the store is compacted afterwards.
const COMPACT_AFTER: usize = 256;

/// Bring the index in step with the graph (see [`sync`]); after a large
/// build, compact the store so later opens stay fast.
pub fn ready(rpg: &RpgDir, store: Store, repo: &Repo) -> Result<(Store, SyncReport), StoreError> {
    let t = std::time::Instant::now();
    let report = sync(&store, repo)?;
    crate::timing("index sync", t);
    // A first build is written compactly already, its lists outside sled;
    // a large update, or a rebuild over lists kept in sled, leaves garbage.
    let garbage = !report.fresh || report.cleared_lists >= COMPACT_AFTER;
    if report.files_indexed >= COMPACT_AFTER && garbage {
        let store = rpg.compact(store)?;
        crate::timing("index compact", t);
        return Ok((store, report));
    }
    Ok((store, report))
}

/// Query-time access to the index: posting lists by term, documents by
/// file, loaded once per query.
pub struct Reader<'s> {
    pub store: &'s Store,
    pub meta: IndexMeta,
    files: std::cell::RefCell<HashMap<u32, Rc<FileDocs>>>,
    slots: std::cell::OnceCell<BTreeMap<String, u32>>,
    /// Where files' text is read from, when the caller gave it.
    objects: Option<gix::Repository>,
    texts: std::cell::RefCell<HashMap<u32, Option<Rc<str>>>>,
    segment: std::cell::OnceCell<Option<Segment>>,
    /// Files whose postings in the segment are void.
    void: std::cell::OnceCell<HashSet<u32>>,
}

impl<'s> Reader<'s> {
    /// Open the index as it stands; see [`ready`] to bring it in step first.
    pub fn open(store: &'s Store) -> Result<Reader<'s>, SearchError> {
        let meta = match store.search_get(META)? {
            Some(b) => decode(store, "meta", &b)?,
            None => IndexMeta::default(),
        };
        Ok(Reader {
            store,
            meta,
            files: Default::default(),
            slots: Default::default(),
            objects: None,
            texts: Default::default(),
            segment: Default::default(),
            void: Default::default(),
        })
    }

    /// Let queries read files' text (for evidence inside functions) from
    /// `repo`'s objects.
    pub fn with_sources(mut self, repo: &Repo) -> Self {
        self.objects = Some(repo.local());
        self
    }

    pub fn has_sources(&self) -> bool {
        self.objects.is_some()
    }

    /// The text of file `num` as it was indexed: the blob its documents'
    /// lines count in. `None` without sources, or when the blob cannot be
    /// read (a partial clone): evidence inside it is simply not seen.
    pub fn source(&self, num: u32) -> Result<Option<Rc<str>>, SearchError> {
        if let Some(t) = self.texts.borrow().get(&num) {
            return Ok(t.clone());
        }
        let text = self.read_source(num)?;
        self.texts.borrow_mut().insert(num, text.clone());
        Ok(text)
    }

    /// [`Reader::source`], read afresh and kept by nobody: for scans.
    pub fn read_source(&self, num: u32) -> Result<Option<Rc<str>>, SearchError> {
        let Some(objects) = &self.objects else {
            return Ok(None);
        };
        let path = self.file(num)?.path.clone();
        let text = match self.store.search_get(&key(SLOTS, &path))? {
            Some(b) => {
                let slot: Slot = decode(self.store, "slot", &b)?;
                gix::ObjectId::from_hex(slot.blob.as_bytes())
                    .ok()
                    .and_then(|id| Repo::read_blob(objects, id).ok())
                    .map(|b| Rc::from(String::from_utf8_lossy(&b).as_ref()))
            }
            None => None,
        };
        Ok(text)
    }

    pub fn postings(&self, field: Field, term: &str) -> Result<Vec<Posting>, SearchError> {
        let prefix = match field {
            Field::All => POST_ALL,
            Field::Features => POST_FEATURES,
        };
        self.shards(prefix, term)
    }

    /// Indexed words of `field` (or of module text) that share `term`'s
    /// stem, other than `term`: how an issue's word the code never spells
    /// (`coloring`) finds the code's own (`color`, `colors`).
    pub fn variants(&self, field: Option<Field>, term: &str) -> Result<Vec<String>, SearchError> {
        let stem = crate::text::words::stem(term);
        if stem.len() < 4 || term.starts_with("--") {
            return Ok(Vec::new());
        }
        let prefix = match field {
            Some(Field::All) => POST_ALL,
            Some(Field::Features) => POST_FEATURES,
            None => POST_MODULE,
        };
        let mut out: Vec<String> = Vec::new();
        for word in self.words(prefix, &stem, usize::MAX)? {
            if word != term && crate::text::words::stem(&word) == stem {
                out.push(word);
            }
        }
        Ok(out)
    }

    /// Words with postings under `prefix` that start with `start`, in
    /// order, at most `max`: the segment's and sled's keys merged, a word
    /// whose every posting is void left out.
    fn words(&self, prefix: &str, start: &str, max: usize) -> Result<Vec<String>, SearchError> {
        let mut words: BTreeSet<String> = BTreeSet::new();
        let whole = key(prefix, start);
        // A word has one key per shard in sled and none in the segment
        // but its own.
        for k in self.store.search_keys(&whole)? {
            let rest = &k[prefix.len()..];
            let word = &rest[..rest.iter().position(|b| *b == 0).unwrap_or(rest.len())];
            if let Ok(word) = std::str::from_utf8(word) {
                words.insert(word.to_string());
            }
        }
        let void = !self.void()?.is_empty();
        let mut from_segment: Vec<String> = Vec::new();
        if let Some(seg) = self.segment()? {
            seg.keys_with(&whole, |k| {
                if let Ok(word) = std::str::from_utf8(&k[prefix.len()..]) {
                    if !words.contains(word) {
                        from_segment.push(word.to_string());
                    }
                }
                // Sled's words come in too: a few more than `max` do.
                from_segment.len() <= max
            });
        }
        for word in from_segment {
            if !void || !self.shards(prefix, &word)?.is_empty() {
                words.insert(word);
            }
        }
        Ok(words.into_iter().take(max).collect())
    }

    /// The segment, opened on first use; `None` before any first build.
    fn segment(&self) -> Result<Option<&Segment>, SearchError> {
        if let Some(s) = self.segment.get() {
            return Ok(s.as_ref());
        }
        let seg = match (&self.meta.segment, self.store.open_segment()?) {
            (Some(seal), Some(file)) => {
                Some(Segment::open(file, seal).map_err(|e| self.damaged(e))?)
            }
            _ => None,
        };
        Ok(self.segment.get_or_init(|| seg).as_ref())
    }

    fn damaged(&self, e: super::segment::SegmentError) -> StoreError {
        self.store.corrupt(&format!("segment ({e})"))
    }

    /// Files whose postings in the segment are void.
    fn void(&self) -> Result<&HashSet<u32>, SearchError> {
        if let Some(v) = self.void.get() {
            return Ok(v);
        }
        let mut void = HashSet::new();
        for k in self.store.search_keys(VOID.as_bytes())? {
            let num = k[VOID.len()..].try_into().map(u32::from_be_bytes);
            void.insert(num.map_err(|_| self.store.corrupt("void"))?);
        }
        Ok(self.void.get_or_init(|| void))
    }

    /// Files whose module text holds `term`, each at position 0.
    pub fn module_postings(&self, term: &str) -> Result<Vec<Posting>, SearchError> {
        self.shards(POST_MODULE, term)
    }

    /// Documents whose bare name is `name` (lowercase).
    pub fn named(&self, name: &str) -> Result<Vec<DocKey>, SearchError> {
        let list = self.shards(NAMES, name)?;
        Ok(list.into_iter().map(|p| (p.0, p.1)).collect())
    }

    /// Indexed bare names (lowercase) that start with `prefix`, at most
    /// `max`, in order.
    pub fn names_starting(&self, prefix: &str, max: usize) -> Result<Vec<String>, SearchError> {
        if !keyable(prefix) {
            return Ok(Vec::new());
        }
        self.words(NAMES, prefix, max)
    }

    /// `term`'s list under `prefix`, in file order: the segment's live
    /// postings and every shard of sled's.
    fn shards(&self, prefix: &str, term: &str) -> Result<Vec<Posting>, StoreError> {
        let mut out = Vec::new();
        if !keyable(term) {
            return Ok(out);
        }
        let got = match self.segment()? {
            Some(seg) => seg.get(&key(prefix, term)),
            None => Ok(None),
        };
        if let Some(b) = got.map_err(|e| self.damaged(e))? {
            out = decode::<Vec<Posting>>(self.store, "postings", &b)?;
            let void = self.void()?;
            if !void.is_empty() {
                out.retain(|p| !void.contains(&p.0));
            }
        }
        let from_segment = out.len();
        for (_, b) in self.store.search_scan(&term_prefix(prefix, term))? {
            out.extend(decode::<Vec<Posting>>(self.store, "postings", &b)?);
        }
        if from_segment > 0 && out.len() > from_segment {
            out.sort_by_key(|p| (p.0, p.1));
        }
        Ok(out)
    }

    pub fn file(&self, num: u32) -> Result<Rc<FileDocs>, SearchError> {
        if let Some(f) = self.files.borrow().get(&num) {
            return Ok(f.clone());
        }
        let f: FileDocs = match self.store.search_get(&num_key(DOCS, num))? {
            Some(b) => decode(self.store, "docs", &b)?,
            None => return Err(self.store.corrupt("missing documents")),
        };
        let f = Rc::new(f);
        self.files.borrow_mut().insert(num, f.clone());
        Ok(f)
    }

    /// The classes of file `num` with their members.
    pub fn owners(&self, num: u32) -> Result<Owners, SearchError> {
        match self.store.search_get(&num_key(OWNERS, num))? {
            Some(b) => Ok(decode(self.store, "owners", &b)?),
            None => Ok(Owners::new()),
        }
    }

    /// Every indexed path and its file number.
    pub fn paths(&self) -> Result<&BTreeMap<String, u32>, SearchError> {
        if let Some(s) = self.slots.get() {
            return Ok(s);
        }
        let mut out = BTreeMap::new();
        for (k, v) in self.store.search_scan(SLOTS.as_bytes())? {
            let slot: Slot = decode(self.store, "slot", &v)?;
            out.insert(
                String::from_utf8_lossy(&k[SLOTS.len()..]).into_owned(),
                slot.num,
            );
        }
        Ok(self.slots.get_or_init(|| out))
    }

    /// File number → path, for every indexed file.
    pub fn paths_by_num(&self) -> Result<HashMap<u32, &str>, SearchError> {
        Ok(self
            .paths()?
            .iter()
            .map(|(p, n)| (*n, p.as_str()))
            .collect())
    }

    /// The number of the indexed file at `path`.
    pub fn num_of(&self, path: &str) -> Result<Option<u32>, SearchError> {
        Ok(match self.slots.get() {
            Some(s) => s.get(path).copied(),
            None => match self.store.search_get(&key(SLOTS, path))? {
                Some(b) => Some(decode::<Slot>(self.store, "slot", &b)?.num),
                None => None,
            },
        })
    }

    /// The document with this id, if indexed.
    pub fn doc_of(&self, id: &str) -> Result<Option<DocKey>, SearchError> {
        let (path, qual) = crate::graph::split_id(id);
        if qual.is_empty() {
            return Ok(None);
        }
        let Some(num) = self.num_of(path)? else {
            return Ok(None);
        };
        let f = self.file(num)?;
        Ok(f.docs
            .iter()
            .position(|d| d.qualname == qual)
            .map(|i| (num, i as u16)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &BTreeSet<String>) -> Vec<&str> {
        w.iter().map(String::as_str).collect()
    }

    fn entity_on(start_line: u32, end_line: u32) -> Entity {
        Entity {
            id: format!("a.js:f{start_line}"),
            kind: Kind::Function,
            path: "a.js".into(),
            qualname: format!("f{start_line}"),
            flavor: String::new(),
            start_line,
            end_line,
            signature: String::new(),
            doc: String::new(),
            hash: String::new(),
            features: Vec::new(),
            lifter: String::new(),
            leaf: String::new(),
        }
    }

    #[test]
    fn a_long_line_is_read_for_a_few_of_the_functions_on_it_not_all() {
        let long = "function f(a){return a};".repeat(4_000);
        let lines = vec![long.as_str(), "// short", "return 1;"];
        let mut shared = HashMap::new();
        let read: usize = (0..2_000)
            .map(|_| body_of(&entity_on(1, 1), &lines, &mut shared).len())
            .sum();
        assert!(
            read <= LONG_LINE_OWNERS as usize * long.len(),
            "{read} bytes read for a {}-byte line",
            long.len()
        );
        // Short lines are every entity's, as before.
        assert_eq!(
            body_of(&entity_on(2, 3), &lines, &mut shared),
            "// short\nreturn 1;"
        );
        assert_eq!(
            body_of(&entity_on(2, 3), &lines, &mut shared),
            "// short\nreturn 1;"
        );
    }

    #[test]
    fn a_path_s_words_are_its_directories_and_its_stem_without_extension() {
        let w = path_words("core/logx/rotate_logger.go");
        assert_eq!(words(&w), ["core", "logger", "logx", "rotate"]);
        assert_eq!(words(&dir_words("core/logx")), ["core", "logx"]);
        assert_eq!(words(&file_words("rotate_logger.go")), ["logger", "rotate"]);
        // Not a source file: the whole name is words.
        assert_eq!(
            words(&path_words("docs/README.md")),
            ["docs", "md", "readme"]
        );
        assert_eq!(words(&path_words("main.rs")), ["main"]);
    }
}
