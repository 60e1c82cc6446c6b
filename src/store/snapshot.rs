//! The committed snapshot: `.rpg/graph.jsonl`. One JSON record per line,
//! sorted, so the same graph always gives the same bytes and a change to one
//! function touches only a few lines.
//!
//! The snapshot arrives with the repository, so nothing in it is taken on
//! faith: the header seals the lines after it (their count and sha256), so
//! a cut or edited file is caught, and a file with merge conflict markers
//! is recognised by name.

use super::{FileBlock, StoreError};
use crate::graph::{
    Category, Edge, EdgeKind, Entity, FileRecord, Graph, Meta, OLDEST_SCHEMA, SCHEMA_VERSION,
};
use crate::parse::{Kind, Lang};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub const SNAPSHOT_FILE: &str = "graph.jsonl";

#[derive(Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
enum Record {
    Meta(Header),
    File(FileRecord),
    /// Written as an [`EntityLine`].
    #[serde(skip_serializing)]
    Entity(EntityRecord),
    Category(Category),
}

/// The first line: where the graph stands, and the seal over the rest.
#[derive(Serialize, Deserialize)]
struct Header {
    #[serde(flatten)]
    meta: Meta,
    /// Lines after the header.
    records: u64,
    /// sha256 of the bytes after the header line.
    sha256: String,
}

/// An entity with its outgoing edges, so a changed function changes one
/// line. What its file's group of lines already says is left out: its id
/// (`path:qualname`), its path (the group's file), its lifter and leaf when
/// they are the group's first entity's, and the path of an edge into the
/// same file (`./qualname`). Schema 4 also leaves out the line's `"t"` (a
/// line without one is an entity), the flavor when it is the
/// [`usual_flavor`], and the file's `contains` edges when they are
/// [`implied`]; and writes the span as `"lines":[start,end]`. Schemas 2
/// and 3 are read.
#[derive(Deserialize)]
struct EntityRecord {
    id: Option<String>,
    kind: crate::parse::Kind,
    path: Option<String>,
    #[serde(default)]
    qualname: String,
    flavor: Option<String>,
    lines: Option<[u32; 2]>,
    start_line: Option<u32>,
    end_line: Option<u32>,
    #[serde(default)]
    signature: String,
    #[serde(default)]
    doc: String,
    #[serde(default)]
    hash: String,
    features: Vec<String>,
    lifter: Option<String>,
    leaf: Option<String>,
    #[serde(default)]
    out: BTreeMap<EdgeKind, Vec<String>>,
}

/// [`EntityRecord`] as written: borrowed, in the same field order.
#[derive(Serialize)]
struct EntityLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    kind: crate::parse::Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "str::is_empty")]
    qualname: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    flavor: Option<&'a str>,
    lines: [u32; 2],
    #[serde(skip_serializing_if = "str::is_empty")]
    signature: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    doc: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    hash: &'a str,
    features: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    lifter: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    leaf: Option<&'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    out: BTreeMap<EdgeKind, Vec<String>>,
}

/// The commonest flavor of each kind in each language, which schema 4
/// leaves unwritten. Part of the format: a change here is a new schema.
fn usual_flavor(lang: Lang, kind: Kind) -> &'static str {
    match (lang, kind) {
        (_, Kind::File) => "",
        (Lang::Python, Kind::Class) => "class",
        (Lang::Python, _) => "def",
        (Lang::Rust, Kind::Class) => "struct",
        (Lang::Rust, Kind::Macro) => "macro_rules",
        (Lang::Rust, _) => "fn",
        (Lang::Go, Kind::Class) => "struct",
        (Lang::Go, Kind::Function) => "func",
        (Lang::Go, _) => "method",
        (Lang::Java, Kind::Class) => "class",
        (Lang::Java, _) => "method",
        (Lang::JavaScript | Lang::TypeScript, Kind::Class) => "class",
        (Lang::JavaScript | Lang::TypeScript, Kind::Method) => "method",
        (Lang::JavaScript | Lang::TypeScript, _) => "function",
        (Lang::C | Lang::Cpp, Kind::Class) => "struct",
        (Lang::C | Lang::Cpp, _) => "function",
    }
}

/// The `contains` edges of a group's file entity that schema 4 leaves
/// unwritten: one to each other entity of the group that no entity of the
/// group contains. Parsers give every entity one parent, so this is the
/// whole list but where a graph was built otherwise; then it is written.
fn implied<'a>(members: impl Iterator<Item = &'a str>, held: &BTreeSet<&str>) -> Vec<&'a str> {
    let mut ids: Vec<&str> = members.filter(|id| !held.contains(id)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// How an edge into `path` is written from inside `path`'s group.
const HERE: &str = "./";

/// `dst` as written in `path`'s group: `./qualname` when it is in `path`
/// (no path git tracks starts with `./`, so the form is unambiguous).
fn relative(path: &str, dst: &str) -> String {
    match dst.strip_prefix(path).and_then(|q| q.strip_prefix(':')) {
        Some(q) if crate::graph::entity_id(path, q) == dst => format!("{HERE}{q}"),
        _ => dst.to_string(),
    }
}

/// [`relative`] undone.
fn absolute(path: &str, dst: String) -> String {
    match dst.strip_prefix(HERE) {
        Some(q) => crate::graph::entity_id(path, q),
        None => dst,
    }
}

/// The sha256 of each file's group of lines and of the categories' lines.
/// Schema 3's seal is the sha256 of these digests in order, so a snapshot
/// rewritten for one changed file hashes only that file's lines, given the
/// digests of the others (the store keeps them beside the file it wrote).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seals {
    pub files: BTreeMap<String, [u8; 32]>,
    pub categories: [u8; 32],
}

impl Seals {
    fn seal(&self) -> String {
        let mut sha = Sha256::new();
        for d in self.files.values() {
            sha.update(d);
        }
        sha.update(self.categories);
        crate::text::hex(&sha.finalize())
    }
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Serialise a graph to its canonical bytes: the header, then each file
/// (sorted by path) followed by its entities (sorted by id), then categories.
pub fn to_bytes(g: &Graph) -> Vec<u8> {
    to_bytes_sealed(g).0
}

/// [`to_bytes`], and the digests its seal was made of.
pub fn to_bytes_sealed(g: &Graph) -> (Vec<u8>, Seals) {
    let mut body = Vec::with_capacity(200 * g.entities.len());
    let mut sealer = Sealer::default();
    each_segment(g, |file, lines, n| {
        sealer.add(file, lines, n);
        body.extend_from_slice(lines);
    });
    let (header, seals) = sealer.header(&g.meta);
    // The header goes in front of the body in place: a second buffer of
    // the whole snapshot would double what this holds.
    body.splice(0..0, header);
    (body, seals)
}

/// The header line of `g`'s snapshot, and the digests its seal was made
/// of. Each segment is serialised and dropped in turn, so the whole
/// snapshot is never in memory: at 3.8M lines its 68 MB were init's peak.
pub fn header_sealed(g: &Graph) -> (Vec<u8>, Seals) {
    let mut sealer = Sealer::default();
    each_segment(g, |file, lines, n| sealer.add(file, lines, n));
    sealer.header(&g.meta)
}

/// The line count and digests of a snapshot's segments, taken as they
/// are serialised.
#[derive(Default)]
struct Sealer {
    records: u64,
    seals: Seals,
}

impl Sealer {
    /// A file's segment (`file` its path) or the categories' (`None`).
    fn add(&mut self, file: Option<&str>, lines: &[u8], n: u64) {
        self.records += n;
        match file {
            Some(path) => {
                self.seals.files.insert(path.to_string(), sha256(lines));
            }
            None => self.seals.categories = sha256(lines),
        }
    }

    fn header(self, meta: &Meta) -> (Vec<u8>, Seals) {
        let header = header_line(meta, self.records, &self.seals.seal());
        (header, self.seals)
    }
}

/// Write `header` and then `g`'s lines to `path`, atomically, serialising
/// one segment at a time; `header` is [`header_sealed`]'s.
pub fn write_streamed(path: &Path, header: &[u8], g: &Graph) -> Result<(), StoreError> {
    write_with_atomic(path, |out| {
        out.write_all(header)?;
        segments(g, |_, lines, _| out.write_all(lines))
    })
}

/// [`segments`] for a visit that cannot fail.
fn each_segment(g: &Graph, mut visit: impl FnMut(Option<&str>, &[u8], u64)) {
    segments(g, |file, lines, n| {
        visit(file, lines, n);
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap_or_else(|never| match never {})
}

/// Each file's lines, sorted by path, then the categories' lines (the
/// segments the seal is made of), each with its count of lines, built in
/// one buffer reused for all.
fn segments<E>(
    g: &Graph,
    mut visit: impl FnMut(Option<&str>, &[u8], u64) -> Result<(), E>,
) -> Result<(), E> {
    let mut buf = Vec::new();
    for block in super::blocks_of(g) {
        buf.clear();
        let n = file_lines(&block, &mut buf);
        visit(Some(&block.file.path), &buf, n)?;
    }
    buf.clear();
    let n = category_lines(g.categories.values(), &mut buf);
    visit(None, &buf, n)
}

/// What the store records of a snapshot it mirrors: the sha256 of the
/// header line, which seals every line after it, when the seal holds;
/// otherwise the sha256 of all the bytes.
pub fn fingerprint(bytes: &[u8]) -> String {
    match sealed_header(bytes) {
        Some(header) => super::digest(header),
        None => format!("unsealed:{}", super::digest(bytes)),
    }
}

/// [`fingerprint`] of bytes rpg just sealed, without checking the seal.
pub fn fingerprint_of_sealed(bytes: &[u8]) -> String {
    let end = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |i| i + 1);
    super::digest(&bytes[..end])
}

/// The header line (with its newline), when it seals what follows it.
fn sealed_header(bytes: &[u8]) -> Option<&[u8]> {
    let end = memchr::memchr(b'\n', bytes)? + 1;
    let line = std::str::from_utf8(&bytes[..end]).ok()?;
    let h = read_header(line.trim_end(), Path::new("")).ok()?;
    let body = &bytes[end..];
    let lines = body.iter().filter(|b| **b == b'\n').count() as u64;
    (lines == h.records && seal_of(body, h.meta.schema) == h.sha256).then_some(&bytes[..end])
}

/// The seal over `body` as schema `schema` makes it: schema 2 hashed the
/// body; schema 3 hashes the digests of its segments, which begin at each
/// file record and at the first category record (lines before the first
/// file, which rpg never writes, are a segment of their own).
fn seal_of(body: &[u8], schema: u32) -> String {
    if schema < 3 {
        return super::digest(body);
    }
    let mut outer = Sha256::new();
    let mut segment = Sha256::new();
    let (mut empty, mut in_categories) = (true, false);
    let mut at = 0;
    while at < body.len() {
        let end = memchr::memchr(b'\n', &body[at..]).map_or(body.len(), |i| at + i + 1);
        let raw = &body[at..end];
        let starts = if in_categories {
            false
        } else if raw.starts_with(CATEGORY_LINE) {
            in_categories = true;
            true
        } else {
            raw.starts_with(FILE_LINE)
        };
        if starts && !empty {
            outer.update(std::mem::take(&mut segment).finalize());
        }
        segment.update(raw);
        empty = false;
        at = end;
    }
    if !empty && in_categories {
        outer.update(segment.finalize());
    } else {
        if !empty {
            outer.update(segment.finalize());
        }
        // No category lines: their segment is empty.
        outer.update(Sha256::digest(b""));
    }
    crate::text::hex(&outer.finalize())
}

const FILE_LINE: &[u8] = b"{\"t\":\"file\",";
const CATEGORY_LINE: &[u8] = b"{\"t\":\"category\",";

fn line(r: &impl Serialize, out: &mut Vec<u8>) {
    // Plain structs of strings and integers always serialise.
    serde_json::to_writer(&mut *out, r).expect("snapshot record serialises");
    out.push(b'\n');
}

/// One file's lines: its record, then its entities with their edges. The
/// block is put in canonical order first, so any block holding the same
/// graph gives the same bytes. Returns how many lines.
fn file_lines(block: &FileBlock, out: &mut Vec<u8>) -> u64 {
    let mut edges: Vec<&Edge> = block.out.iter().collect();
    edges.sort();
    edges.dedup();
    let mut by_src: BTreeMap<&str, BTreeMap<EdgeKind, Vec<&str>>> = BTreeMap::new();
    for e in edges {
        by_src
            .entry(e.src.as_str())
            .or_default()
            .entry(e.kind)
            .or_default()
            .push(e.dst.as_str());
    }
    let mut entities: Vec<&Entity> = block.entities.iter().collect();
    entities.sort_by(|a, b| (a.id != a.path, &a.id).cmp(&(b.id != b.path, &b.id)));
    line(&Record::File(block.file.clone()), out);
    let path = block.file.path.as_str();
    let file_contains = written_file_contains(path, &entities, &mut by_src);
    for (i, e) in entities.iter().enumerate() {
        let first = entities[0];
        let mut own = by_src.remove(e.id.as_str()).unwrap_or_default();
        if e.id == path {
            match &file_contains {
                Some(list) => own.insert(EdgeKind::Contains, list.clone()),
                None => own.remove(&EdgeKind::Contains),
            };
        }
        let out_edges = own
            .into_iter()
            .map(|(kind, dsts)| (kind, dsts.iter().map(|d| relative(path, d)).collect()))
            .collect();
        let r = EntityLine {
            id: (e.id != crate::graph::entity_id(&e.path, &e.qualname)).then_some(&e.id),
            kind: e.kind,
            path: (e.path != path).then_some(&e.path),
            qualname: &e.qualname,
            flavor: (e.flavor != usual_flavor(block.file.lang, e.kind)).then_some(&e.flavor),
            lines: [e.start_line, e.end_line],
            signature: &e.signature,
            doc: &e.doc,
            hash: &e.hash,
            features: &e.features,
            lifter: (i == 0 || e.lifter != first.lifter).then_some(&e.lifter),
            leaf: (i == 0 || e.leaf != first.leaf).then_some(&e.leaf),
            out: out_edges,
        };
        line(&r, out);
    }
    1 + entities.len() as u64
}

/// The file entity's `contains` list as it must be written: `None` when
/// it is the [`implied`] one (and so left out), else the list as it is.
fn written_file_contains<'a>(
    path: &str,
    entities: &[&'a Entity],
    by_src: &mut BTreeMap<&str, BTreeMap<EdgeKind, Vec<&'a str>>>,
) -> Option<Vec<&'a str>> {
    let held: BTreeSet<&str> = entities
        .iter()
        .filter(|e| e.id != path)
        .filter_map(|e| by_src.get(e.id.as_str())?.get(&EdgeKind::Contains))
        .flatten()
        .copied()
        .collect();
    let members = entities
        .iter()
        .filter(|e| e.id != path)
        .map(|e| e.id.as_str());
    let implied = implied(members, &held);
    let actual = by_src
        .get(path)
        .and_then(|o| o.get(&EdgeKind::Contains))
        .cloned()
        .unwrap_or_default();
    (actual != implied).then_some(actual)
}

fn category_lines<'a>(cats: impl Iterator<Item = &'a Category>, out: &mut Vec<u8>) -> u64 {
    let mut n = 0;
    for c in cats {
        line(&Record::Category(c.clone()), out);
        n += 1;
    }
    n
}

fn header_line(meta: &Meta, records: u64, sha256: &str) -> Vec<u8> {
    // A graph read from an older schema is written in this one.
    let header = Record::Meta(Header {
        meta: Meta {
            schema: SCHEMA_VERSION,
            ..meta.clone()
        },
        records,
        sha256: sha256.to_string(),
    });
    let mut out = Vec::new();
    line(&header, &mut out);
    out
}

/// The lines of a snapshot this store wrote, with some files' groups
/// replaced: the bytes [`to_bytes`] would give for the graph after the
/// change, built without loading that graph. Unchanged files' lines are
/// borrowed from `old`; only changed files are serialised and hashed.
pub struct Spliced<'a> {
    pieces: Vec<std::borrow::Cow<'a, [u8]>>,
    pub header: Vec<u8>,
    old_header: &'a [u8],
    pub seals: Seals,
}

/// Splice `changed` (path → its block now, `None` when gone) into `old`,
/// the canonical bytes of an earlier graph, with `categories` and `meta`
/// as they are now. `known` holds digests of `old`'s groups (any it lacks
/// are computed). `None` when `old` is not laid out as [`to_bytes`]
/// writes, so the caller serialises the whole graph instead.
pub fn splice<'a>(
    old: &'a [u8],
    known: &Seals,
    changed: &BTreeMap<String, Option<FileBlock>>,
    categories: &BTreeMap<String, Category>,
    meta: &Meta,
) -> Option<Spliced<'a>> {
    let header_end = memchr::memchr(b'\n', old)? + 1;
    // Lines of another schema's groups would not be this schema's lines.
    let schema = read_header(
        std::str::from_utf8(&old[..header_end]).ok()?.trim_end(),
        Path::new(""),
    )
    .ok()?
    .meta
    .schema;
    if schema != SCHEMA_VERSION {
        return None;
    }
    let groups = file_groups(old, header_end)?;
    let mut pieces: Vec<std::borrow::Cow<[u8]>> = Vec::new();
    let mut seals = Seals::default();
    let mut records = 0u64;
    let mut fresh = |path: &str, block: &FileBlock, pieces: &mut Vec<std::borrow::Cow<[u8]>>| {
        let mut b = Vec::new();
        let n = file_lines(block, &mut b);
        seals.files.insert(path.to_string(), sha256(&b));
        pieces.push(b.into());
        n
    };
    let mut pending = changed
        .iter()
        .filter_map(|(p, b)| b.as_ref().map(|b| (p.as_str(), b)))
        .peekable();
    let mut kept = Vec::new();
    for (path, range, lines) in &groups.files {
        while let Some((p, b)) = pending.next_if(|(p, _)| *p < path.as_str()) {
            records += fresh(p, b, &mut pieces);
        }
        if changed.contains_key(path) {
            if let Some((p, b)) = pending.next_if(|(p, _)| *p == path.as_str()) {
                records += fresh(p, b, &mut pieces);
            }
            continue;
        }
        pieces.push(old[range.clone()].into());
        kept.push((path, range));
        records += lines;
    }
    for (p, b) in pending {
        records += fresh(p, b, &mut pieces);
    }
    for (path, range) in kept {
        let d = known
            .files
            .get(path)
            .copied()
            .unwrap_or_else(|| sha256(&old[range.clone()]));
        seals.files.insert(path.clone(), d);
    }
    let mut cats = Vec::new();
    records += category_lines(categories.values(), &mut cats);
    seals.categories = sha256(&cats);
    pieces.push(cats.into());
    let header = header_line(meta, records, &seals.seal());
    Some(Spliced {
        pieces,
        header,
        old_header: &old[..header_end],
        seals,
    })
}

impl Spliced<'_> {
    #[cfg(test)]
    fn bytes(&self) -> Vec<u8> {
        let mut out = self.header.clone();
        for p in &self.pieces {
            out.extend_from_slice(p);
        }
        out
    }

    /// The new bytes equal the old: the header seals the body's sha256.
    pub fn unchanged(&self) -> bool {
        self.header == self.old_header
    }

    /// When the new bytes differ from the old only in the header's commit
    /// and tree: the two trees (old, new). See [`relabelled`].
    pub fn relabelled(&self) -> Option<(String, String)> {
        let header = |b: &[u8]| match serde_json::from_slice(b.trim_ascii_end()).ok()? {
            Record::Meta(h) => Some(h),
            _ => None,
        };
        let (a, b) = (header(self.old_header)?, header(&self.header)?);
        let same_body = a.records == b.records && a.sha256 == b.sha256;
        let unlabelled = |m: &Meta| Meta {
            commit: String::new(),
            tree: String::new(),
            ..m.clone()
        };
        (same_body && unlabelled(&a.meta) == unlabelled(&b.meta))
            .then_some((a.meta.tree, b.meta.tree))
    }

    /// Write the new bytes to `path` atomically; their [`fingerprint`].
    pub fn write(&self, path: &Path) -> Result<String, StoreError> {
        let mut parts: Vec<&[u8]> = vec![&self.header];
        parts.extend(self.pieces.iter().map(|p| &p[..]));
        write_parts_atomic(path, &parts)?;
        Ok(fingerprint_of_sealed(&self.header))
    }
}

/// Where each file's group of lines lies in canonical bytes.
struct Groups {
    /// (path, byte range, lines), in path order.
    files: Vec<(String, std::ops::Range<usize>, u64)>,
}

fn file_groups(old: &[u8], from: usize) -> Option<Groups> {
    let mut files: Vec<(String, std::ops::Range<usize>, u64)> = Vec::new();
    let mut at = from;
    while at < old.len() {
        let end = at + memchr::memchr(b'\n', &old[at..])? + 1;
        let raw = &old[at..end];
        if raw.starts_with(FILE_LINE) {
            let Record::File(f) = serde_json::from_slice(raw).ok()? else {
                return None;
            };
            if files.last().is_some_and(|(p, _, _)| *p >= f.path) {
                return None;
            }
            files.push((f.path, at..end, 1));
        } else if raw.starts_with(CATEGORY_LINE) {
            break;
        } else {
            let (_, range, lines) = files.last_mut()?;
            range.end = end;
            *lines += 1;
        }
        at = end;
    }
    Some(Groups { files })
}
/// When two snapshots differ only in their header's commit and tree, the
/// two trees (old, new); otherwise `None`.
pub fn relabelled(old: &[u8], new: &[u8]) -> Option<(String, String)> {
    let header = |b: &[u8]| -> Option<(Meta, usize)> {
        let end = b.iter().position(|c| *c == b'\n')?;
        match serde_json::from_slice(&b[..end]).ok()? {
            Record::Meta(h) => Some((h.meta, end)),
            _ => None,
        }
    };
    let ((a, i), (b, j)) = (header(old)?, header(new)?);
    let unlabelled = |m: &Meta| Meta {
        commit: String::new(),
        tree: String::new(),
        ..m.clone()
    };
    (old[i..] == new[j..] && unlabelled(&a) == unlabelled(&b)).then_some((a.tree, b.tree))
}

/// Whether the text holds git's conflict markers: a merge that could not
/// combine two snapshots line by line.
fn has_conflict_markers(text: &str) -> bool {
    text.lines().any(|l| {
        l.starts_with("<<<<<<< ")
            || l.starts_with(">>>>>>> ")
            || l.starts_with("||||||| ")
            || l == "======="
    })
}

/// Parse canonical bytes; `path` names the file in errors. A record that
/// does not parse is named by its line; a file that parses but does not
/// match its seal is damaged as a whole.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Graph, StoreError> {
    let corrupt = |line: usize, message: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| corrupt(0, format!("not UTF-8: {e}")))?;
    if has_conflict_markers(text) {
        return Err(StoreError::Conflicted(path.to_path_buf()));
    }
    let (first, body) = match text.split_once('\n') {
        Some((first, body)) => (first, body),
        None => (text, ""),
    };
    let header = read_header(first, path)?;
    let mut files = BTreeMap::new();
    let mut entities = BTreeMap::new();
    let mut edges = BTreeSet::new();
    let mut categories = BTreeMap::new();
    let mut records = 0u64;
    let mut group: Option<Group> = None;
    for (i, raw) in body.lines().enumerate() {
        let n = i + 2;
        records += 1;
        // Since schema 4 a line rpg writes without a leading "t" is an entity.
        let tagless = header.meta.schema >= 4 && !raw.starts_with("{\"t\":");
        let record: Record = match tagless {
            false => serde_json::from_str(raw),
            true => serde_json::from_str(raw).map(Record::Entity),
        }
        .map_err(|e| corrupt(n, e.to_string()))?;
        if matches!(record, Record::File(_) | Record::Category(_)) {
            if let Some(g) = group.take() {
                edges.extend(g.implied_contains());
            }
        }
        match record {
            Record::Meta(_) => {
                return Err(corrupt(n, "the header must be the first line".into()));
            }
            Record::File(f) => {
                group = Some(Group::of(&f, header.meta.schema));
                files.insert(f.path.clone(), f);
            }
            Record::Entity(r) => {
                let Some(g) = group.as_mut() else {
                    return Err(corrupt(n, "an entity before any file".into()));
                };
                let (entity, out) = r.read(g).map_err(|why| corrupt(n, why.into()))?;
                if let Some(why) = oversized(&entity) {
                    return Err(StoreError::Damaged {
                        path: path.to_path_buf(),
                        message: format!("line {n}: {why}, more than rpg ever writes"),
                    });
                }
                edges.extend(out);
                entities.insert(entity.id.clone(), entity);
            }
            Record::Category(c) => {
                categories.insert(c.path.clone(), c);
            }
        }
    }
    if let Some(g) = group.take() {
        edges.extend(g.implied_contains());
    }
    let damaged = |message: String| StoreError::Damaged {
        path: path.to_path_buf(),
        message,
    };
    if records != header.records {
        return Err(damaged(format!(
            "the header seals {} records but {records} follow (cut or edited?)",
            header.records
        )));
    }
    if seal_of(body.as_bytes(), header.meta.schema) != header.sha256 {
        return Err(damaged(
            "its records do not match the header's sha256 (edited by hand?)".into(),
        ));
    }
    Ok(Graph {
        meta: Meta {
            schema: SCHEMA_VERSION,
            ..header.meta
        },
        files,
        entities,
        edges,
        categories,
    })
}

/// What the entities of one file's group share: its path, language and
/// schema, and the lifter and leaf of its first entity; and what its
/// file's [`implied`] `contains` edges are found from.
struct Group {
    path: String,
    lang: Lang,
    schema: u32,
    lifter: Option<String>,
    leaf: Option<String>,
    /// Whether the file entity was read without its `contains` list.
    contains_implied: bool,
    members: Vec<String>,
    held: BTreeSet<String>,
}

impl Group {
    fn of(file: &FileRecord, schema: u32) -> Group {
        Group {
            path: file.path.clone(),
            lang: file.lang,
            schema,
            lifter: None,
            leaf: None,
            contains_implied: false,
            members: Vec::new(),
            held: BTreeSet::new(),
        }
    }

    /// The file's `contains` edges that its line left out.
    fn implied_contains(self) -> Vec<Edge> {
        if !self.contains_implied {
            return Vec::new();
        }
        let held: BTreeSet<&str> = self.held.iter().map(String::as_str).collect();
        implied(self.members.iter().map(String::as_str), &held)
            .into_iter()
            .map(|dst| Edge {
                src: self.path.clone(),
                kind: EdgeKind::Contains,
                dst: dst.to_string(),
            })
            .collect()
    }
}

impl EntityRecord {
    /// The entity and its edges, with what the group left out filled in.
    fn read(self, g: &mut Group) -> Result<(Entity, Vec<Edge>), &'static str> {
        let inherit = |own: Option<String>, shared: &mut Option<String>| match own {
            Some(v) => {
                shared.get_or_insert_with(|| v.clone());
                v
            }
            None => shared.clone().unwrap_or_default(),
        };
        let [start_line, end_line] = match (self.lines, self.start_line, self.end_line) {
            (Some(lines), _, _) => lines,
            (None, Some(start), Some(end)) => [start, end],
            _ => return Err("an entity without its lines"),
        };
        let flavor = match self.flavor {
            Some(f) => f,
            None if g.schema >= 4 => usual_flavor(g.lang, self.kind).to_string(),
            None => String::new(),
        };
        let path = self.path.unwrap_or_else(|| g.path.clone());
        let id = self
            .id
            .unwrap_or_else(|| crate::graph::entity_id(&path, &self.qualname));
        let is_file = id == g.path;
        if is_file {
            g.contains_implied = g.schema >= 4 && !self.out.contains_key(&EdgeKind::Contains);
        } else {
            g.members.push(id.clone());
        }
        let out: Vec<Edge> = self
            .out
            .into_iter()
            .flat_map(|(kind, dsts)| dsts.into_iter().map(move |d| (kind, d)))
            .map(|(kind, dst)| Edge {
                src: id.clone(),
                kind,
                dst: absolute(&g.path, dst),
            })
            .collect();
        if !is_file {
            let held = out.iter().filter(|e| e.kind == EdgeKind::Contains);
            g.held.extend(held.map(|e| e.dst.clone()));
        }
        let entity = Entity {
            id,
            kind: self.kind,
            path,
            qualname: self.qualname,
            flavor,
            start_line,
            end_line,
            signature: self.signature,
            doc: self.doc,
            hash: self.hash,
            features: self.features,
            lifter: inherit(self.lifter, &mut g.lifter),
            leaf: inherit(self.leaf, &mut g.leaf),
        };
        Ok((entity, out))
    }
}

/// Bounds no entity rpg writes comes near (parsers cut docstrings to 300
/// bytes and signatures to 200 a line, nine lines at most; lifters write at most five features of
/// 60). A snapshot is data from whoever committed it: a field past these
/// is refused, so it cannot make every query slow or every answer huge.
const MAX_FEATURES: usize = 32;
const MAX_FEATURE_BYTES: usize = 512;
const MAX_TEXT_BYTES: usize = 8192;

fn oversized(e: &Entity) -> Option<&'static str> {
    if e.features.len() > MAX_FEATURES {
        return Some("an entity has too many features");
    }
    if e.features.iter().any(|f| f.len() > MAX_FEATURE_BYTES) {
        return Some("a feature is too long");
    }
    [
        &e.id,
        &e.qualname,
        &e.signature,
        &e.doc,
        &e.lifter,
        &e.leaf,
        &e.hash,
    ]
    .iter()
    .any(|t| t.len() > MAX_TEXT_BYTES)
    .then_some("a field is too long")
}

/// The header line, its schema checked before its shape, so an older
/// snapshot is named as such rather than as malformed.
fn read_header(line: &str, path: &Path) -> Result<Header, StoreError> {
    let corrupt = |message: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        line: 1,
        message,
    };
    if line.trim().is_empty() {
        return Err(corrupt("empty snapshot".into()));
    }
    let value: serde_json::Value =
        serde_json::from_str(line).map_err(|e| corrupt(e.to_string()))?;
    if value.get("t").and_then(|t| t.as_str()) != Some("meta") {
        return Err(corrupt("missing header line".into()));
    }
    let schema = value.get("schema").and_then(|s| s.as_u64()).unwrap_or(0);
    if !(u64::from(OLDEST_SCHEMA)..=u64::from(SCHEMA_VERSION)).contains(&schema) {
        return Err(StoreError::Schema {
            path: path.to_path_buf(),
            found: u32::try_from(schema).unwrap_or(u32::MAX),
            expected: SCHEMA_VERSION,
        });
    }
    match serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))? {
        Record::Meta(h) => Ok(h),
        _ => Err(corrupt("missing header line".into())),
    }
}

/// Write `bytes` to `path` atomically: a new temporary file, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_parts_atomic(path, &[bytes])
}

/// [`write_atomic`] of the concatenation of `parts`.
fn write_parts_atomic(path: &Path, parts: &[&[u8]]) -> Result<(), StoreError> {
    write_with_atomic(path, |out| parts.iter().try_for_each(|p| out.write_all(p)))
}

/// Replace `path` with what `write` writes, or leave it as it was (see
/// [`crate::files::write_atomic`]: a link at `path` is replaced, never
/// written through).
fn write_with_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), StoreError> {
    crate::files::write_atomic(path, write).map_err(|source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Meta;

    fn graph() -> Graph {
        Graph {
            meta: Meta {
                schema: SCHEMA_VERSION,
                commit: "c".repeat(40),
                tree: "t".repeat(40),
                lifter: "offline/1".into(),
                crates: BTreeMap::new(),
                headers: None,
                attributes: Vec::new(),
                index: None,
            },
            files: BTreeMap::new(),
            entities: BTreeMap::new(),
            edges: BTreeSet::new(),
            categories: [
                (
                    "a".to_string(),
                    Category {
                        path: "a".into(),
                        scopes: vec![".".into()],
                        terms: vec!["x".into()],
                    },
                ),
                (
                    "b".to_string(),
                    Category {
                        path: "b".into(),
                        scopes: vec![".".into()],
                        terms: vec!["y".into()],
                    },
                ),
            ]
            .into(),
        }
    }

    #[test]
    fn a_sealed_snapshot_round_trips() {
        let g = graph();
        let bytes = to_bytes(&g);
        assert_eq!(from_bytes(&bytes, Path::new("g")).unwrap(), g);
    }

    #[test]
    fn the_seal_is_made_of_each_files_digest_and_the_fingerprint_of_the_header() {
        let g = linked();
        let (bytes, seals) = to_bytes_sealed(&g);
        assert_eq!(seals.files.len(), 2);
        assert_eq!(fingerprint(&bytes), fingerprint_of_sealed(&bytes));
        // An edit anywhere breaks the seal, and the fingerprint says so.
        let text = String::from_utf8(bytes.clone()).unwrap();
        let edited = text.replace("\"qualname\":\"g\"", "\"qualname\":\"h\"");
        assert_ne!(edited, text);
        assert!(fingerprint(edited.as_bytes()).starts_with("unsealed:"));
        let e = from_bytes(edited.as_bytes(), Path::new("g")).unwrap_err();
        assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
        // So does reordering lines.
        let mut lines: Vec<&str> = text.lines().collect();
        let last = lines.len() - 3;
        lines.swap(last, last + 1);
        let moved = lines.join("\n") + "\n";
        assert!(fingerprint(moved.as_bytes()).starts_with("unsealed:"));
    }

    #[test]
    fn a_snapshot_written_a_file_at_a_time_is_the_whole_one_and_sealed_as_its_header_says() {
        let g = linked();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SNAPSHOT_FILE);
        let (header, seals) = header_sealed(&g);
        write_streamed(&path, &header, &g).unwrap();
        let written = std::fs::read(&path).unwrap();
        let (whole, whole_seals) = to_bytes_sealed(&g);
        assert_eq!(written, whole);
        assert_eq!(seals.seal(), whole_seals.seal());
        assert_eq!(fingerprint(&written), fingerprint_of_sealed(&header));
        assert_eq!(from_bytes(&written, &path).unwrap(), g);
    }

    #[test]
    fn a_snapshot_cut_at_a_line_boundary_is_damaged() {
        let bytes = to_bytes(&graph());
        let text = String::from_utf8(bytes).unwrap();
        let cut: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
        let e = from_bytes(cut.as_bytes(), Path::new("g")).unwrap_err();
        assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
    }

    #[test]
    fn an_edited_record_is_damaged() {
        let text = String::from_utf8(to_bytes(&graph())).unwrap();
        let edited = text.replace("\"x\"", "\"z\"");
        let e = from_bytes(edited.as_bytes(), Path::new("g")).unwrap_err();
        assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
    }

    #[test]
    fn a_resealed_snapshot_with_a_huge_feature_is_refused() {
        let mut g = graph();
        g.entities.insert(
            "a.py".into(),
            Entity {
                id: "a.py".into(),
                kind: crate::parse::Kind::File,
                path: "a.py".into(),
                qualname: String::new(),
                flavor: String::new(),
                start_line: 1,
                end_line: 1,
                signature: String::new(),
                doc: String::new(),
                hash: String::new(),
                features: vec!["x".repeat(10_000)],
                lifter: "offline/1".into(),
                leaf: "a".into(),
            },
        );
        g.files.insert(
            "a.py".into(),
            FileRecord {
                path: "a.py".into(),
                blob: "b".repeat(40),
                lang: crate::parse::Lang::Python,
                lines: 1,
                has_errors: false,
            },
        );
        let e = from_bytes(&to_bytes(&g), Path::new("g")).unwrap_err();
        assert!(e.to_string().contains("a feature is too long"), "{e}");
    }

    #[test]
    fn conflict_markers_are_named_as_such() {
        let text = String::from_utf8(to_bytes(&graph())).unwrap();
        let conflicted = format!("<<<<<<< HEAD\n{text}=======\n{text}>>>>>>> theirs\n");
        let e = from_bytes(conflicted.as_bytes(), Path::new("g")).unwrap_err();
        assert!(matches!(e, StoreError::Conflicted(_)), "{e}");
    }

    fn add_file(g: &mut Graph, path: &str, funcs: &[&str]) {
        g.files.insert(
            path.into(),
            FileRecord {
                path: path.into(),
                blob: "b".repeat(40),
                lang: crate::parse::Lang::Python,
                lines: 9,
                has_errors: false,
            },
        );
        let entity = |id: String, kind, qualname: &str| Entity {
            id,
            kind,
            path: path.into(),
            qualname: qualname.into(),
            flavor: String::new(),
            start_line: 1,
            end_line: 2,
            signature: String::new(),
            doc: String::new(),
            hash: String::new(),
            features: vec![format!("do {qualname}")],
            lifter: "offline/1".into(),
            leaf: "a".into(),
        };
        g.entities.insert(
            path.into(),
            entity(path.into(), crate::parse::Kind::File, ""),
        );
        for f in funcs {
            let id = format!("{path}:{f}");
            g.entities.insert(
                id.clone(),
                entity(id.clone(), crate::parse::Kind::Function, f),
            );
            g.edges.insert(Edge {
                src: path.into(),
                kind: EdgeKind::Contains,
                dst: id,
            });
        }
    }

    fn blocks_by_path(g: &Graph) -> BTreeMap<String, FileBlock> {
        crate::store::blocks_of(g)
            .map(|b| (b.file.path.clone(), b))
            .collect()
    }

    #[test]
    fn splicing_the_changed_files_gives_the_bytes_of_the_whole_new_graph() {
        let mut old = graph();
        for (path, funcs) in [
            ("b.py", &["f"][..]),
            ("c.py", &["g", "h"]),
            ("e.py", &["k"]),
        ] {
            add_file(&mut old, path, funcs);
        }
        let mut new = old.clone();
        // b.py gains a function that calls e.py; c.py goes; a.py and d.py
        // arrive before and between the old files; a category changes.
        add_file(&mut new, "b.py", &["f", "f2"]);
        new.edges.insert(Edge {
            src: "b.py:f2".into(),
            kind: EdgeKind::Invokes,
            dst: "e.py:k".into(),
        });
        new.files.remove("c.py");
        new.entities.retain(|_, e| e.path != "c.py");
        new.edges.retain(|e| !e.src.starts_with("c.py"));
        add_file(&mut new, "a.py", &["z"]);
        add_file(&mut new, "d.py", &[]);
        new.categories.get_mut("b").unwrap().terms = vec!["w".into()];
        new.meta.commit = "d".repeat(40);
        let blocks = blocks_by_path(&new);
        let changed: BTreeMap<String, Option<FileBlock>> = ["a.py", "b.py", "c.py", "d.py"]
            .iter()
            .map(|p| (p.to_string(), blocks.get(*p).cloned()))
            .collect();
        let (old_bytes, old_seals) = to_bytes_sealed(&old);
        let (new_bytes, new_seals) = to_bytes_sealed(&new);
        // With the old groups' digests known, or hashed afresh.
        for known in [old_seals.clone(), Seals::default()] {
            let spliced = splice(&old_bytes, &known, &changed, &new.categories, &new.meta).unwrap();
            assert_eq!(
                String::from_utf8(spliced.bytes()).unwrap(),
                String::from_utf8(new_bytes.clone()).unwrap()
            );
            assert_eq!(spliced.seals, new_seals);
            assert!(!spliced.unchanged());
        }
        // Nothing changed: the same bytes, and they say so.
        let same = splice(
            &old_bytes,
            &old_seals,
            &BTreeMap::new(),
            &old.categories,
            &old.meta,
        )
        .unwrap();
        assert!(same.unchanged());
        assert_eq!(same.bytes(), old_bytes);
    }

    /// Two files; b.py's `f` calls its neighbour `f2` and c.py's `g`, and
    /// `f2` was lifted by another lifter.
    fn linked() -> Graph {
        let mut g = graph();
        add_file(&mut g, "b.py", &["f", "f2"]);
        add_file(&mut g, "c.py", &["g"]);
        for dst in ["b.py:f2", "c.py:g"] {
            g.edges.insert(Edge {
                src: "b.py:f".into(),
                kind: EdgeKind::Invokes,
                dst: dst.into(),
            });
        }
        g.entities.get_mut("b.py:f2").unwrap().lifter = "llm/m".into();
        g
    }

    #[test]
    fn entities_leave_out_what_their_file_group_says() {
        let g = linked();
        let text = String::from_utf8(to_bytes(&g)).unwrap();
        let line = |q: &str| {
            text.lines()
                .find(|l| l.contains(&format!("\"qualname\":\"{q}\"")))
                .unwrap()
                .to_string()
        };
        let f = line("f");
        assert!(!f.contains("\"id\"") && !f.contains("\"path\""), "{f}");
        assert!(!f.contains("\"lifter\"") && !f.contains("\"leaf\""), "{f}");
        assert!(f.contains(r#""invokes":["./f2","c.py:g"]"#), "{f}");
        assert!(line("f2").contains(r#""lifter":"llm/m""#));
        assert_eq!(from_bytes(text.as_bytes(), Path::new("g")).unwrap(), g);
    }

    /// `g` as schema 2 wrote it: every entity whole, every edge's path.
    fn schema_2_bytes(g: &Graph) -> Vec<u8> {
        let mut body = String::new();
        for block in crate::store::blocks_of(g) {
            let mut file = serde_json::to_value(&block.file).unwrap();
            file["t"] = "file".into();
            body += &format!("{file}\n");
            for e in &block.entities {
                let mut v = serde_json::to_value(e).unwrap();
                v["t"] = "entity".into();
                for edge in block.out.iter().filter(|x| x.src == e.id) {
                    let list = v["out"][edge.kind.as_str()].as_array().cloned();
                    let mut list = list.unwrap_or_default();
                    list.push(edge.dst.clone().into());
                    v["out"][edge.kind.as_str()] = list.into();
                }
                body += &format!("{v}\n");
            }
        }
        for c in g.categories.values() {
            let mut v = serde_json::to_value(c).unwrap();
            v["t"] = "category".into();
            body += &format!("{v}\n");
        }
        let records = body.lines().count() as u64;
        let old = Meta {
            schema: 2,
            ..g.meta.clone()
        };
        let mut out = header_line(&old, records, &crate::store::digest(body.as_bytes()));
        let header = String::from_utf8(out.clone())
            .unwrap()
            .replace(&format!("\"schema\":{SCHEMA_VERSION}"), "\"schema\":2");
        out = header.into_bytes();
        out.extend_from_slice(body.as_bytes());
        out
    }

    #[test]
    fn a_schema_2_snapshot_reads_as_the_same_graph_and_is_never_spliced() {
        let g = linked();
        let old = schema_2_bytes(&g);
        assert!(String::from_utf8_lossy(&old).contains(r#""id":"b.py:f""#));
        assert_eq!(from_bytes(&old, Path::new("g")).unwrap(), g);
        let none = BTreeMap::new();
        assert!(splice(&old, &Seals::default(), &none, &g.categories, &g.meta).is_none());
    }

    /// A snapshot rpg wrote in schema 3, of a Python and a Rust file.
    const SCHEMA_3: &[u8] = include_bytes!("testdata/schema3.jsonl");

    fn line_of<'a>(text: &'a str, qualname: &str) -> &'a str {
        let key = format!("\"qualname\":\"{qualname}\"");
        text.lines().find(|l| l.contains(&key)).unwrap()
    }

    #[test]
    fn a_schema_3_snapshot_reads_whole_and_is_rewritten_shorter_as_schema_4() {
        let g = from_bytes(SCHEMA_3, Path::new("g")).unwrap();
        let close = &g.entities["pkg/client.py:Session.close"];
        assert_eq!(
            (close.flavor.as_str(), close.start_line, close.end_line),
            ("async def", 13, 14)
        );
        assert_eq!(g.entities["src/lib.rs:split"].flavor, "fn");
        assert_eq!(g.entities["pkg/client.py"].flavor, "");
        let contains = |src: &str, dst: &str| Edge {
            src: src.into(),
            kind: EdgeKind::Contains,
            dst: dst.into(),
        };
        assert!(g
            .edges
            .contains(&contains("pkg/client.py", "pkg/client.py:request")));
        assert!(!g
            .edges
            .contains(&contains("pkg/client.py", "pkg/client.py:Adapter.send")));
        let none = BTreeMap::new();
        assert!(splice(SCHEMA_3, &Seals::default(), &none, &g.categories, &g.meta).is_none());
        let now = to_bytes(&g);
        assert!(
            now.len() * 10 < SCHEMA_3.len() * 9,
            "{} of {}",
            now.len(),
            SCHEMA_3.len()
        );
        assert_eq!(from_bytes(&now, Path::new("g")).unwrap(), g);
    }

    #[test]
    fn entity_lines_leave_out_their_tag_a_usual_flavor_and_the_files_implied_contains() {
        let g = from_bytes(SCHEMA_3, Path::new("g")).unwrap();
        let text = String::from_utf8(to_bytes(&g)).unwrap();
        assert!(!text.contains(r#""t":"entity""#));
        let request = line_of(&text, "request");
        assert!(
            request.starts_with(r#"{"kind":"function","qualname":"request","lines":[22,24],"#),
            "{request}"
        );
        assert!(line_of(&text, "Session.close").contains(r#""flavor":"async def""#));
        assert!(line_of(&text, "Named").contains(r#""flavor":"trait""#));
        let file = text
            .lines()
            .find(|l| l.starts_with(r#"{"kind":"file""#))
            .unwrap();
        assert!(!file.contains("contains"), "{file}");
        assert!(line_of(&text, "Session").contains(r#""contains":["./Session.adapter","#));
    }

    #[test]
    fn a_files_contains_list_that_is_not_the_implied_one_is_written_as_it_is() {
        let g = from_bytes(SCHEMA_3, Path::new("g")).unwrap();
        let file_contains = |g: &Graph| -> Vec<Edge> {
            let from_file = |e: &&Edge| e.kind == EdgeKind::Contains && e.src == "pkg/client.py";
            g.edges.iter().filter(from_file).cloned().collect()
        };
        let all = file_contains(&g);
        assert_eq!(all.len(), 3);
        for (dropped, written) in [
            (1, r#""contains":["./Session","./request"]"#),
            (3, r#""contains":[]"#),
        ] {
            let mut h = g.clone();
            for e in &all[..dropped] {
                h.edges.remove(e);
            }
            let text = String::from_utf8(to_bytes(&h)).unwrap();
            let file = text
                .lines()
                .find(|l| l.starts_with(r#"{"kind":"file""#))
                .unwrap();
            assert!(file.contains(written), "{file}");
            assert_eq!(from_bytes(text.as_bytes(), Path::new("g")).unwrap(), h);
        }
    }

    #[test]
    fn bytes_not_laid_out_as_rpg_writes_them_are_not_spliced() {
        let mut g = graph();
        add_file(&mut g, "b.py", &["f"]);
        add_file(&mut g, "c.py", &["g"]);
        let text = String::from_utf8(to_bytes(&g)).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        // Files out of order, or an entity before any file.
        let b = lines
            .iter()
            .position(|l| l.contains(r#""path":"b.py","blob""#))
            .unwrap();
        let c = lines
            .iter()
            .position(|l| l.contains(r#""path":"c.py","blob""#))
            .unwrap();
        lines.swap(b, c);
        let swapped = lines.join("\n") + "\n";
        let none = BTreeMap::new();
        let known = Seals::default();
        assert!(splice(swapped.as_bytes(), &known, &none, &g.categories, &g.meta).is_none());
        let orphan = format!("{}\n{}\n", lines[0], lines[2]);
        assert!(splice(orphan.as_bytes(), &known, &none, &g.categories, &g.meta).is_none());
    }
}
