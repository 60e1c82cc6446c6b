//! The committed snapshot: `.rpg/graph.jsonl`. One JSON record per line,
//! sorted, so the same graph always gives the same bytes and a change to one
//! function touches only a few lines.
//!
//! The snapshot arrives with the repository, so nothing in it is taken on
//! faith: the header seals the lines after it (their count and sha256), so
//! a cut or edited file is caught, and a file with merge conflict markers
//! is recognised by name.

use super::StoreError;
use crate::graph::{Category, Edge, EdgeKind, Entity, FileRecord, Graph, Meta, SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub const SNAPSHOT_FILE: &str = "graph.jsonl";

#[derive(Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
enum Record {
    Meta(Header),
    File(FileRecord),
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

/// An entity with its outgoing edges, so a changed function changes one line.
#[derive(Serialize, Deserialize)]
struct EntityRecord {
    #[serde(flatten)]
    entity: Entity,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    out: BTreeMap<EdgeKind, Vec<String>>,
}

/// Serialise a graph to its canonical bytes: the header, then each file
/// (sorted by path) followed by its entities (sorted by id), then categories.
pub fn to_bytes(g: &Graph) -> Vec<u8> {
    let mut body = Vec::with_capacity(200 * g.entities.len());
    let mut records = 0u64;
    let mut line = |r: &Record| {
        // Plain structs of strings and integers always serialise.
        serde_json::to_writer(&mut body, r).expect("snapshot record serialises");
        body.push(b'\n');
        records += 1;
    };
    for block in super::blocks_of(g) {
        let mut by_src: BTreeMap<&str, BTreeMap<EdgeKind, Vec<String>>> = BTreeMap::new();
        for e in &block.out {
            by_src
                .entry(e.src.as_str())
                .or_default()
                .entry(e.kind)
                .or_default()
                .push(e.dst.clone());
        }
        line(&Record::File(block.file.clone()));
        for entity in &block.entities {
            let out = by_src.remove(entity.id.as_str()).unwrap_or_default();
            line(&Record::Entity(EntityRecord {
                entity: entity.clone(),
                out,
            }));
        }
    }
    for c in g.categories.values() {
        line(&Record::Category(c.clone()));
    }
    let header = Record::Meta(Header {
        meta: g.meta.clone(),
        records,
        sha256: super::digest(&body),
    });
    let mut out = serde_json::to_vec(&header).expect("snapshot header serialises");
    out.push(b'\n');
    out.extend_from_slice(&body);
    out
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
    for (i, raw) in body.lines().enumerate() {
        let n = i + 2;
        records += 1;
        let record: Record = serde_json::from_str(raw).map_err(|e| corrupt(n, e.to_string()))?;
        match record {
            Record::Meta(_) => {
                return Err(corrupt(n, "the header must be the first line".into()));
            }
            Record::File(f) => {
                files.insert(f.path.clone(), f);
            }
            Record::Entity(r) => {
                if let Some(why) = oversized(&r.entity) {
                    return Err(StoreError::Damaged {
                        path: path.to_path_buf(),
                        message: format!("line {n}: {why}, more than rpg ever writes"),
                    });
                }
                for (kind, dsts) in r.out {
                    for dst in dsts {
                        edges.insert(Edge {
                            src: r.entity.id.clone(),
                            kind,
                            dst,
                        });
                    }
                }
                entities.insert(r.entity.id.clone(), r.entity);
            }
            Record::Category(c) => {
                categories.insert(c.path.clone(), c);
            }
        }
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
    if super::digest(body.as_bytes()) != header.sha256 {
        return Err(damaged(
            "its records do not match the header's sha256 (edited by hand?)".into(),
        ));
    }
    Ok(Graph {
        meta: header.meta,
        files,
        entities,
        edges,
        categories,
    })
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
    if schema != u64::from(SCHEMA_VERSION) {
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

/// Write `bytes` to `path` atomically: a temporary file, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    use std::io::Write;
    let io = |e: std::io::Error| StoreError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        crate::failpoint("snapshot-before-rename");
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            // Persist the rename itself; best effort where directories can't be opened.
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
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
}
