//! What the model answered, kept in `.rpg/cache` (a sled database beside
//! the store, never committed) so nothing paid for is asked twice: not on
//! re-init, not on update, not after a rename or a move.
//!
//! Keys are `<kind>/<model>/<prompt version>/<digest of the input>`; an
//! entity's input is its content hash, which ignores indentation and its
//! own name. Every answer is flushed as it arrives, so a killed run keeps
//! what it already paid for.

use super::super::LiftError;
use std::path::{Path, PathBuf};

pub struct Cache {
    db: sled::Db,
    path: PathBuf,
    scope: String,
}

/// What a cached answer is for.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Entity,
    File,
    Areas,
    Assign,
    Route,
    Drift,
}

impl Kind {
    fn tag(self) -> &'static str {
        match self {
            Kind::Entity => "e",
            Kind::File => "f",
            Kind::Areas => "a",
            Kind::Assign => "h",
            Kind::Route => "r",
            Kind::Drift => "d",
        }
    }
}

impl Cache {
    /// Open the cache under `dir` for answers of `model` to prompts of
    /// `version`.
    pub fn open(dir: &Path, model: &str, version: &str) -> Result<Cache, LiftError> {
        let path = dir.join("cache");
        crate::files::check_store_dir(&path).map_err(|e| LiftError::Cache {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let db = sled::Config::new()
            .path(&path)
            .open()
            .map_err(|e| LiftError::Cache {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
        Ok(Cache {
            db,
            path,
            scope: format!("{model}/{version}"),
        })
    }

    fn key(&self, kind: Kind, input: &str) -> String {
        format!("{}/{}/{input}", kind.tag(), self.scope)
    }

    fn err(&self, e: sled::Error) -> LiftError {
        LiftError::Cache {
            path: self.path.display().to_string(),
            reason: e.to_string(),
        }
    }

    /// Store the answers the cache lacks; an answer it holds is kept. How
    /// many were new.
    pub fn seed<T: serde::Serialize>(
        &self,
        kind: Kind,
        answers: &[(String, T)],
    ) -> Result<usize, LiftError> {
        let mut batch = sled::Batch::default();
        let mut new = 0;
        for (input, answer) in answers {
            let key = self.key(kind, input);
            if self.db.contains_key(&key).map_err(|e| self.err(e))? {
                continue;
            }
            let v = serde_json::to_vec(answer).map_err(|e| LiftError::Cache {
                path: self.path.display().to_string(),
                reason: e.to_string(),
            })?;
            batch.insert(key.as_bytes(), v);
            new += 1;
        }
        self.db.apply_batch(batch).map_err(|e| self.err(e))?;
        self.db.flush().map_err(|e| self.err(e))?;
        Ok(new)
    }

    pub fn get<T: serde::de::DeserializeOwned>(
        &self,
        kind: Kind,
        input: &str,
    ) -> Result<Option<T>, LiftError> {
        let Some(v) = self
            .db
            .get(self.key(kind, input))
            .map_err(|e| self.err(e))?
        else {
            return Ok(None);
        };
        // An unreadable entry is asked again rather than trusted.
        Ok(serde_json::from_slice(&v).ok())
    }

    /// Store answers and make them durable before returning.
    pub fn put_all<T: serde::Serialize>(
        &self,
        kind: Kind,
        entries: &[(String, T)],
    ) -> Result<(), LiftError> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut batch = sled::Batch::default();
        for (input, value) in entries {
            let bytes = serde_json::to_vec(value).map_err(|e| LiftError::Cache {
                path: self.path.display().to_string(),
                reason: e.to_string(),
            })?;
            batch.insert(self.key(kind, input).as_bytes(), bytes);
        }
        self.db.apply_batch(batch).map_err(|e| self.err(e))?;
        self.db.flush().map_err(|e| self.err(e))?;
        Ok(())
    }
}
