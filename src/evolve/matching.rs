//! Phases 2 and 3: the changed files as the store holds them, and their old
//! entities matched to the new by id, then by content hash.

use super::*;

/// Phase 2: the changed files as the store holds them.
pub(super) struct OldState {
    pub(super) blocks: BTreeMap<String, FileBlock>,
    /// Their code entities (not files), by id.
    pub(super) entities: BTreeMap<String, Entity>,
}

impl OldState {
    pub(super) fn load(store: &Store, deltas: &[FileDelta]) -> Result<OldState, EvolveError> {
        let mut blocks = BTreeMap::new();
        for p in deltas.iter().filter_map(|d| d.old_path.as_ref()) {
            if let Some(b) = store.file_block(p)? {
                blocks.insert(p.clone(), b);
            }
        }
        let entities = blocks
            .values()
            .flat_map(|b| b.entities.iter())
            .filter(|e| e.kind != Kind::File)
            .map(|e| (e.id.clone(), e.clone()))
            .collect();
        Ok(OldState { blocks, entities })
    }

    /// The old block of the file `path` had before this update, under
    /// its own path or, renamed, under the old one.
    pub(super) fn block_before<'a>(
        &'a self,
        deltas: &[FileDelta],
        path: &str,
    ) -> Option<&'a FileBlock> {
        self.blocks.get(path).or_else(|| {
            deltas
                .iter()
                .find(|d| d.new.as_ref().is_some_and(|n| n.path == path))
                .and_then(|d| d.old_path.as_ref())
                .and_then(|p| self.blocks.get(p))
        })
    }
}

/// What became of an old or new entity.
#[derive(Clone)]
pub(super) enum Fate {
    /// Same id, same content.
    Keep(String),
    /// Same id, new content.
    Modify(String),
    /// Same content under a new id: renamed or moved.
    Move(String),
    Insert,
}

/// Phase 3's result.
pub(super) struct Matching {
    /// Every new entity's fate, by its new id.
    pub(super) fate: BTreeMap<String, Fate>,
    /// Old entities nothing matched.
    pub(super) deleted: Vec<String>,
}

/// Phase 3: match old and new entities, by id, then by content hash.
pub(super) fn match_entities(old: &OldState, sources: &[&SourceFile]) -> Matching {
    let mut new_ids: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (si, s) in sources.iter().enumerate() {
        for (ei, e) in s.facts.parsed.entities.iter().enumerate() {
            new_ids.insert(crate::graph::entity_id(&s.path, &e.qualname), (si, ei));
        }
    }
    let new_entity = |(si, ei): (usize, usize)| &sources[si].facts.parsed.entities[ei];
    let mut fate: BTreeMap<String, Fate> = BTreeMap::new();
    let mut unmatched: BTreeMap<(Kind, String), Vec<String>> = BTreeMap::new();
    for (id, e) in &old.entities {
        match new_ids.get(id) {
            Some(&at) => {
                let ne = new_entity(at);
                let f = if ne.hash == e.hash && ne.kind == e.kind {
                    Fate::Keep(id.clone())
                } else {
                    Fate::Modify(id.clone())
                };
                fate.insert(id.clone(), f);
            }
            None => unmatched
                .entry((e.kind, e.hash.clone()))
                .or_default()
                .push(id.clone()),
        }
    }
    for (id, &at) in &new_ids {
        if fate.contains_key(id) {
            continue;
        }
        let ne = new_entity(at);
        let moved = unmatched
            .get_mut(&(ne.kind, ne.hash.clone()))
            .filter(|v| !v.is_empty())
            .map(|v| v.remove(0));
        fate.insert(id.clone(), moved.map(Fate::Move).unwrap_or(Fate::Insert));
    }
    Matching {
        fate,
        deleted: unmatched.into_values().flatten().collect(),
    }
}
