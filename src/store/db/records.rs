//! What the store keeps, record by record, and how each is encoded.

use super::*;

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
    pub(super) fn prefix(self) -> &'static str {
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

pub(super) fn json<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).expect("store record serialises")
}

/// The compact encoding of the records written per file and read back by
/// updates; they are never shown or exchanged.
pub(super) fn packed<T: Serialize>(v: &T) -> Vec<u8> {
    postcard::to_stdvec(v).expect("store record serialises")
}

pub(super) fn slim(p: &crate::parse::ParsedFile) -> crate::parse::ParsedFile {
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
pub(super) fn inflated(deflated: &[u8]) -> Vec<u8> {
    let mut plain = Vec::with_capacity(deflated.len() * 4);
    std::io::Read::read_to_end(&mut flate2::read::DeflateDecoder::new(deflated), &mut plain)
        .expect("inflate what this process deflated");
    plain
}

pub(super) fn key(prefix: &str, rest: &str) -> Vec<u8> {
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
pub(super) fn entities_of<'g>(
    g: &'g Graph,
    path: &'g str,
) -> impl Iterator<Item = &'g Entity> + 'g {
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
pub struct StoredParse(pub(super) Packed);

pub(super) enum Packed {
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
    pub(super) fn into_plain(self) -> Vec<u8> {
        match self.0 {
            Packed::Plain(plain) => plain,
            Packed::Deflated(deflated) => inflated(&deflated),
        }
    }

    pub(super) fn plain(&self) -> std::borrow::Cow<'_, [u8]> {
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
