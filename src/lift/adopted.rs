//! What a committed snapshot paid a model for, taken where git confirms
//! it. Adoption builds a clone's graph from git; this lifter hands it the
//! snapshot's features for each entity whose source hash the re-parse
//! reproduces (and each file's summary, and place in a model's hierarchy,
//! for a file at the blob its record names), and lifts the rest offline.
//! Nothing here calls a model.

use super::offline::{self, OFFLINE_ID};
use super::{FileLiftInput, FileOutline, LiftError, LiftInput, Lifted, Lifter};
use crate::parse::Kind;
use crate::store::snapshot::Claims;
use std::collections::{BTreeMap, HashMap};

pub struct Adopted {
    id: String,
    /// Entity id → (source hash, features, lifter), for what a model wrote.
    entities: HashMap<String, (String, Vec<String>, String)>,
    /// File path → (summary features, lifter), for what a model wrote.
    files: HashMap<String, (Vec<String>, String)>,
    /// File path → leaf, when the snapshot's hierarchy was a model's.
    leaves: Option<HashMap<String, String>>,
}

impl Adopted {
    /// The model's work in `claims` (read from the files git confirms).
    pub fn new(claims: &Claims) -> Adopted {
        let by_model = |lifter: &str| lifter != OFFLINE_ID && !lifter.is_empty();
        let mut adopted = Adopted {
            id: OFFLINE_ID.to_string(),
            entities: HashMap::new(),
            files: HashMap::new(),
            leaves: by_model(&claims.meta.lifter).then(HashMap::new),
        };
        for (path, (_, entities)) in &claims.files {
            for e in entities.iter().filter(|e| by_model(&e.lifter)) {
                let (features, by) = (e.features.clone(), e.lifter.clone());
                if e.kind == Kind::File {
                    adopted.files.insert(path.clone(), (features, by));
                } else {
                    let hash = e.hash.clone();
                    adopted.entities.insert(e.id.clone(), (hash, features, by));
                }
            }
            let leaf = entities.iter().find(|e| e.kind == Kind::File);
            if let (Some(leaves), Some(e)) = (adopted.leaves.as_mut(), leaf) {
                if is_leaf(&e.leaf) {
                    leaves.insert(path.clone(), e.leaf.clone());
                }
            }
        }
        if !adopted.entities.is_empty() || !adopted.files.is_empty() {
            adopted.id = crate::text::prefix(&claims.meta.lifter, 100).to_string();
        }
        adopted
    }
}

/// A place in the hierarchy as rpg makes them: three short segments.
fn is_leaf(leaf: &str) -> bool {
    let parts: Vec<&str> = leaf.split('/').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 100 && !p.chars().any(char::is_control))
}

impl Lifter for Adopted {
    fn id(&self) -> &str {
        &self.id
    }

    fn reads_code(&self) -> bool {
        false
    }

    fn lift(&self, items: &[LiftInput]) -> Result<Vec<Lifted>, LiftError> {
        Ok(items
            .iter()
            .map(|item| {
                let id = crate::graph::entity_id(item.path, item.qualname);
                match self.entities.get(&id) {
                    Some((hash, features, by)) if hash == item.hash => Lifted {
                        features: features.clone(),
                        by: by.clone().into(),
                    },
                    _ => offline::lift(item),
                }
            })
            .collect())
    }

    fn summarize_files(&self, files: &[FileLiftInput]) -> Result<Vec<Lifted>, LiftError> {
        Ok(files
            .iter()
            .map(|f| match self.files.get(f.path) {
                Some((features, by)) => Lifted {
                    features: features.clone(),
                    by: by.clone().into(),
                },
                None => offline::summarize(f),
            })
            .collect())
    }

    fn organize(
        &self,
        files: &[FileOutline],
    ) -> Result<Option<BTreeMap<String, String>>, LiftError> {
        let Some(leaves) = &self.leaves else {
            return Ok(None);
        };
        Ok(Some(
            files
                .iter()
                .map(|f| {
                    let leaf = leaves.get(f.path).map_or(f.offline_leaf, String::as_str);
                    (f.path.to_string(), leaf.to_string())
                })
                .collect(),
        ))
    }
}
