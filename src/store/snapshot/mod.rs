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
/// [`implied`]; and writes the span as `"lines":[start,end]`. Schema 5
/// leaves out features the offline lifter wrote: they read back as none.
/// Schemas 2 to 4 are read.
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
    #[serde(default)]
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
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
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
        (
            Lang::CSharp | Lang::Php | Lang::Ruby | Lang::Kotlin | Lang::Swift | Lang::Scala,
            Kind::Class,
        ) => "class",
        (Lang::CSharp | Lang::Php, _) => "method",
        (Lang::Ruby | Lang::Scala, _) => "def",
        (Lang::Kotlin, _) => "fun",
        (Lang::Swift, _) => "func",
        (Lang::Bash, _) => "function",
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

/// What the store records of a snapshot it mirrors: the sha256 of the
/// header line, which seals every line after it, when the seal holds;
/// otherwise the sha256 of all the bytes.
pub fn fingerprint(bytes: &[u8]) -> String {
    match sealed_header(bytes) {
        Some(header) => crate::store::digest(header),
        None => format!("unsealed:{}", crate::store::digest(bytes)),
    }
}

/// [`fingerprint`] of bytes rpg just sealed, without checking the seal.
pub fn fingerprint_of_sealed(bytes: &[u8]) -> String {
    let end = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |i| i + 1);
    crate::store::digest(&bytes[..end])
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
        return crate::store::digest(body);
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

mod claims;
mod read;
mod splice;
mod write;

pub use claims::{claims, header_of, Claims, EntityClaim};
pub use read::*;
pub use splice::*;
pub use write::*;

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

    /// `g` as a reader gets it back: without the offline lifter's features.
    fn as_read(g: &Graph) -> Graph {
        let mut g = g.clone();
        for e in g.entities.values_mut() {
            if e.lifter == crate::graph::OFFLINE_LIFTER {
                e.features.clear();
            }
        }
        g
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
        assert_eq!(from_bytes(&written, &path).unwrap(), as_read(&g));
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
                flavor: Default::default(),
                start_line: 1,
                end_line: 1,
                signature: String::new(),
                doc: String::new(),
                hash: String::new(),
                features: vec!["x".repeat(10_000)],
                lifter: "llm/m".into(),
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
    fn a_resealed_snapshot_with_an_entity_of_a_million_edges_is_refused() {
        let mut g = linked();
        let src = g
            .entities
            .keys()
            .find(|id| id.contains(':'))
            .unwrap()
            .clone();
        for i in 0..100_001 {
            g.edges.insert(Edge {
                src: src.as_str().into(),
                kind: EdgeKind::Invokes,
                dst: format!("x.py:f{i}").into(),
            });
        }
        let e = from_bytes(&to_bytes(&g), Path::new("g")).unwrap_err();
        assert!(e.to_string().contains("too many edges"), "{e}");
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
            flavor: Default::default(),
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
                dst: id.into(),
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
        assert_eq!(
            from_bytes(text.as_bytes(), Path::new("g")).unwrap(),
            as_read(&g)
        );
    }

    #[test]
    fn a_models_features_are_written_and_the_offline_lifters_are_not() {
        let g = linked();
        let text = String::from_utf8(to_bytes(&g)).unwrap();
        let line = |q: &str| line_of(&text, q).to_string();
        assert!(
            line("f2").contains(r#""features":["do f2"]"#),
            "{}",
            line("f2")
        );
        for q in ["f", "g"] {
            assert!(!line(q).contains("features"), "{}", line(q));
        }
        let read = from_bytes(text.as_bytes(), Path::new("g")).unwrap();
        assert_eq!(read.entities["b.py:f2"].features, ["do f2"]);
        assert!(read.entities["b.py:f"].features.is_empty());
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
                    list.push(edge.dst.as_str().into());
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
    fn a_schema_3_snapshot_reads_whole_and_is_rewritten_shorter() {
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
        rewritten_shorter(SCHEMA_3, &g);
    }

    /// `g`, read from `old` bytes of an older schema, which are never
    /// spliced: its bytes now, a tenth shorter, that read back as `g`.
    fn rewritten_shorter(old: &[u8], g: &Graph) -> Vec<u8> {
        let none = BTreeMap::new();
        assert!(splice(old, &Seals::default(), &none, &g.categories, &g.meta).is_none());
        let now = to_bytes(g);
        assert!(
            now.len() * 10 < old.len() * 9,
            "{} of {}",
            now.len(),
            old.len()
        );
        assert_eq!(from_bytes(&now, Path::new("g")).unwrap(), as_read(g));
        now
    }

    /// A snapshot rpg wrote in schema 4, of a Python and a Rust file, with
    /// every entity's offline features.
    const SCHEMA_4: &[u8] = include_bytes!("testdata/schema4.jsonl");

    #[test]
    fn a_schema_4_snapshot_reads_with_its_features_and_is_rewritten_without_them() {
        let g = from_bytes(SCHEMA_4, Path::new("g")).unwrap();
        let split = &g.entities["src/lib.rs:split"];
        assert_eq!(
            split.features,
            ["split", "split line into words", "split whitespace"]
        );
        let text = String::from_utf8(rewritten_shorter(SCHEMA_4, &g)).unwrap();
        assert!(!text.contains("\"features\""), "{text}");
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
            assert_eq!(
                from_bytes(text.as_bytes(), Path::new("g")).unwrap(),
                as_read(&h)
            );
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
