//! Reading: canonical bytes back to a graph, checked against their seal
//! and against the bounds of what rpg itself writes.

use super::*;
use crate::graph::Id;

/// Whether the text holds git's conflict markers: a merge that could not
/// combine two snapshots line by line.
pub(super) fn has_conflict_markers(text: &str) -> bool {
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
    // An entity's id recurs in every edge into it: one shared text each.
    let mut ids = crate::graph::Interner::default();
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
                edges.extend(g.implied_contains().into_iter().map(|e| ids.edge(e)));
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
                g.records += 1;
                let why = oversized(&entity)
                    .or((out.len() > MAX_EDGES).then_some("an entity has too many edges"))
                    .or((g.records > MAX_RECORDS).then_some("a file has too many entities"));
                if let Some(why) = why {
                    return Err(StoreError::Damaged {
                        path: path.to_path_buf(),
                        message: format!("line {n}: {why}, more than rpg ever writes"),
                    });
                }
                edges.extend(out.into_iter().map(|e| ids.edge(e)));
                entities.insert(entity.id.clone(), entity);
            }
            Record::Category(c) => {
                if c.terms.len() > MAX_TERMS || c.scopes.len() > MAX_RECORDS {
                    return Err(StoreError::Damaged {
                        path: path.to_path_buf(),
                        message: format!(
                            "line {n}: a category too large, more than rpg ever writes"
                        ),
                    });
                }
                categories.insert(c.path.clone(), c);
            }
        }
    }
    if let Some(g) = group.take() {
        edges.extend(g.implied_contains().into_iter().map(|e| ids.edge(e)));
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
pub(super) struct Group {
    pub(super) path: String,
    lang: Lang,
    schema: u32,
    lifter: Option<Id>,
    leaf: Option<Id>,
    /// Entity lines read so far.
    records: usize,
    /// Whether the file entity was read without its `contains` list.
    contains_implied: bool,
    members: Vec<String>,
    held: BTreeSet<String>,
}

impl Group {
    pub(super) fn of(file: &FileRecord, schema: u32) -> Group {
        Group {
            path: file.path.clone(),
            lang: file.lang,
            schema,
            lifter: None,
            leaf: None,
            records: 0,
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
                src: self.path.as_str().into(),
                kind: EdgeKind::Contains,
                dst: dst.into(),
            })
            .collect()
    }
}

impl EntityRecord {
    /// The entity and its edges, with what the group left out filled in.
    pub(super) fn read(self, g: &mut Group) -> Result<(Entity, Vec<Edge>), &'static str> {
        // Shared with the group's, as most of a file's entities inherit.
        let inherit = |own: Option<String>, shared: &mut Option<Id>| match own {
            Some(v) => {
                let v = Id::from(v);
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
            Some(f) => Id::from(f),
            None if g.schema >= 4 => Id::common(usual_flavor(g.lang, self.kind)),
            None => Id::default(),
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
        let src = crate::graph::Id::from(&id);
        let out: Vec<Edge> = self
            .out
            .into_iter()
            .flat_map(|(kind, dsts)| dsts.into_iter().map(move |d| (kind, d)))
            .map(|(kind, dst)| Edge {
                src: src.clone(),
                kind,
                dst: absolute(&g.path, dst).into(),
            })
            .collect();
        if !is_file {
            let held = out.iter().filter(|e| e.kind == EdgeKind::Contains);
            g.held.extend(held.map(|e| e.dst.to_string()));
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
pub(super) const MAX_FEATURES: usize = 32;
pub(super) const MAX_FEATURE_BYTES: usize = 512;
pub(super) const MAX_TEXT_BYTES: usize = 8192;
/// Entities in one file, and edges from one entity: far past any real
/// file (a 16 MB file of one-line functions holds about 500k), and a
/// bound on what one line of a snapshot can make rpg hold.
const MAX_RECORDS: usize = 500_000;
const MAX_EDGES: usize = 100_000;
/// A category's routing terms (rpg writes a few dozen).
const MAX_TERMS: usize = 1_000;

pub(super) fn oversized(e: &Entity) -> Option<&'static str> {
    if e.features.len() > MAX_FEATURES {
        return Some("an entity has too many features");
    }
    if e.features.iter().any(|f| f.len() > MAX_FEATURE_BYTES) {
        return Some("a feature is too long");
    }
    [
        e.id.as_str(),
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
pub(super) fn read_header(line: &str, path: &Path) -> Result<Header, StoreError> {
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
