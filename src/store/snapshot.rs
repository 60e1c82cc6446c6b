//! The committed snapshot: `.rpg/graph.jsonl`. One JSON record per line,
//! sorted, so the same graph always gives the same bytes and a change to one
//! function touches only a few lines.

use super::StoreError;
use crate::graph::{Category, Edge, EdgeKind, Entity, FileRecord, Graph, Meta, SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub const SNAPSHOT_FILE: &str = "graph.jsonl";

#[derive(Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
enum Record {
    Meta(Meta),
    File(FileRecord),
    Entity(EntityRecord),
    Category(Category),
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
    let mut out = Vec::with_capacity(200 * g.entities.len());
    let mut line = |r: &Record| {
        // Plain structs of strings and integers always serialise.
        serde_json::to_writer(&mut out, r).expect("snapshot record serialises");
        out.push(b'\n');
    };
    line(&Record::Meta(g.meta.clone()));
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
    out
}

/// When two snapshots differ only in their header's commit and tree, the
/// two trees (old, new); otherwise `None`.
pub fn relabelled(old: &[u8], new: &[u8]) -> Option<(String, String)> {
    let header = |b: &[u8]| -> Option<(Meta, usize)> {
        let end = b.iter().position(|c| *c == b'\n')?;
        match serde_json::from_slice(&b[..end]).ok()? {
            Record::Meta(m) => Some((m, end)),
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

/// Parse canonical bytes; `path` names the file in errors.
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Graph, StoreError> {
    let corrupt = |line: usize, message: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        line,
        message,
    };
    let text = std::str::from_utf8(bytes).map_err(|e| corrupt(0, format!("not UTF-8: {e}")))?;
    let mut meta = None;
    let mut files = BTreeMap::new();
    let mut entities = BTreeMap::new();
    let mut edges = BTreeSet::new();
    let mut categories = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let record: Record = serde_json::from_str(raw).map_err(|e| corrupt(n, e.to_string()))?;
        match record {
            Record::Meta(m) => {
                if n != 1 {
                    return Err(corrupt(n, "the header must be the first line".into()));
                }
                if m.schema != SCHEMA_VERSION {
                    return Err(StoreError::Schema {
                        path: path.to_path_buf(),
                        found: m.schema,
                        expected: SCHEMA_VERSION,
                    });
                }
                meta = Some(m);
            }
            _ if meta.is_none() => {
                return Err(corrupt(n, "missing header line".into()));
            }
            Record::File(f) => {
                files.insert(f.path.clone(), f);
            }
            Record::Entity(r) => {
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
    let meta = meta.ok_or_else(|| corrupt(1, "empty snapshot".into()))?;
    Ok(Graph {
        meta,
        files,
        entities,
        edges,
        categories,
    })
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
