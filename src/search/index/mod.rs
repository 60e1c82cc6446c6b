//! The persisted search index: BM25F postings, kept in step with the
//! graph file by file. A first build writes its posting lists into an
//! immutable segment file (see [`super::segment`]); later updates keep
//! theirs in the sled store, shard by shard, and mark the segment's
//! postings of each file they re-index or drop as void. A file is
//! re-indexed only when its blob changed, so keeping the index current
//! costs what the change costs, and a query reads only the posting lists
//! of its own terms and the documents of the files they hit.

mod docs;
mod reader;
mod sync;

pub use reader::Reader;
pub use sync::{ready, sync, SyncReport};

use super::query::is_noise;
use super::segment::{Seal, Segment};
use crate::git::Repo;
use crate::graph::resolve::bare_name;
use crate::graph::{EdgeKind, Entity};
use crate::parse::Kind;
use crate::store::{FileBlock, RpgDir, Store, StoreError, WriteSet, SEARCH_STALE};
use crate::text::words::split_identifier;
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
/// In the segment, `s/a` → every indexed path by file number (`""` for a
/// number no file had): a query that ranks files by the tens of thousands
/// reads one list instead of walking every slot in sled.
const PATHS: &str = "s/a";
/// `s/n/<num>` → the path of file `num` since the segment was written,
/// empty once it left.
const PATHS_SINCE: &str = "s/n/";
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
/// first build's postings moved to the segment file; 9: paths by number
/// there too ([`PATHS`]); 10: [`FileDocs::hollow`].
const INDEX_VERSION: u32 = 10;

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

    /// How many files are indexed: every number given out, less those
    /// freed for reuse.
    pub fn files(&self) -> usize {
        (self.next as usize).saturating_sub(self.free.len())
    }

    /// The mean length of a whole file: its entities' words and its
    /// module text.
    pub fn avg_file_len(&self) -> f32 {
        ((self.total_len + self.total_module_len) / self.files().max(1) as f64) as f32
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

/// Every indexed file's path by its number.
#[derive(Debug, Default)]
pub struct Paths(Vec<String>);

impl Paths {
    pub fn get(&self, num: u32) -> Option<&str> {
        self.0
            .get(num as usize)
            .map(String::as_str)
            .filter(|p| !p.is_empty())
    }

    /// Each file's number and path, by number.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &str)> {
        (0u32..)
            .zip(self.0.iter())
            .filter(|(_, p)| !p.is_empty())
            .map(|(n, p)| (n, p.as_str()))
    }

    /// File numbers in path order.
    pub fn in_path_order(&self) -> Vec<u32> {
        let mut all: Vec<(u32, &str)> = self.iter().collect();
        all.sort_unstable_by(|a, b| a.1.cmp(b.1));
        all.into_iter().map(|(n, _)| n).collect()
    }
}

/// The documents of one file, in id order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileDocs {
    pub path: String,
    pub docs: Vec<DocMeta>,
    /// The length of its module text; 0 when it has none.
    pub module_len: f32,
    /// It has functions, and every one is a declaration without a body (an
    /// interface's file, a one-method callback's, a header of prototypes):
    /// a fix lands where they are implemented.
    pub hollow: bool,
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
    file_words_in_order(file).collect()
}

/// [`file_words`] as they come, repeats and all.
pub fn file_words_in_order(file: &str) -> impl Iterator<Item = String> + '_ {
    let stem = match file.rsplit_once('.') {
        Some((stem, _)) if crate::parse::Lang::from_path(file).is_some() => stem,
        _ => file,
    };
    words_in_order([stem].into_iter())
}

fn words_of<'a>(parts: impl Iterator<Item = &'a str>) -> BTreeSet<String> {
    words_in_order(parts).collect()
}

fn words_in_order<'a>(parts: impl Iterator<Item = &'a str>) -> impl Iterator<Item = String> {
    parts.flat_map(split_identifier).filter(|w| !is_noise(w))
}

/// The bare name a query identifier is matched against.
pub fn name_key(qualname: &str) -> String {
    let name = bare_name(qualname);
    name.split('#').next().unwrap_or(name).to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &BTreeSet<String>) -> Vec<&str> {
        w.iter().map(String::as_str).collect()
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
