//! A parsed file as the resolver sees it, and the names index's view of
//! an entity.

use super::go_package_name;
use crate::parse::{Import, Kind, Lang, ParsedFile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::hash::BuildHasher;

/// A parsed file as the resolver sees it.
#[derive(Debug)]
pub struct Facts {
    pub path: String,
    pub lang: Lang,
    pub parsed: ParsedFile,
    /// Entity indexes by a hash of their qualname, in hash order: a
    /// lookup compares integers, not qualnames (C's calls look into every
    /// included header, and string compares were a fifth of resolution),
    /// without a second copy of every qualname.
    by_qualname: Vec<(u32, u32)>,
}

/// The hash [`Facts::lookup`] sorts by; collisions are told apart by the
/// qualname itself.
pub(super) fn qualname_hash(qualname: &str) -> u32 {
    rustc_hash::FxBuildHasher.hash_one(qualname) as u32
}

impl Facts {
    pub fn new(path: String, lang: Lang, parsed: ParsedFile) -> Facts {
        let ents = &parsed.entities;
        let mut by_qualname: Vec<(u32, u32)> = (0..ents.len() as u32)
            .map(|i| (qualname_hash(&ents[i as usize].qualname), i))
            .collect();
        by_qualname.sort_unstable();
        Facts {
            path,
            lang,
            parsed,
            by_qualname,
        }
    }

    /// The first entity named `qualname`, in source order.
    pub fn lookup(&self, qualname: &str) -> Option<usize> {
        self.lookup_hashed(qualname_hash(qualname), qualname)
    }

    /// [`Facts::lookup`] with the qualname's hash already made, for a
    /// name asked of many files.
    pub(super) fn lookup_hashed(&self, h: u32, qualname: &str) -> Option<usize> {
        let from = self.by_qualname.partition_point(|&(x, _)| x < h);
        self.by_qualname[from..]
            .iter()
            .take_while(|&&(x, _)| x == h)
            .map(|&(_, i)| i as usize)
            .find(|&i| self.parsed.entities[i].qualname == qualname)
    }

    /// The names this file binds by import, each with a description of
    /// what it is bound to; a glob import appears as `*`.
    pub fn binds(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for imp in &self.parsed.imports {
            match imp {
                Import::Python {
                    level,
                    module,
                    names,
                    alias,
                } => {
                    let m = format!("{}{}", ".".repeat(*level), module.join("."));
                    for (n, b) in names {
                        if n == "*" {
                            out.insert("*".to_string(), format!("from {m} import *"));
                        } else {
                            out.insert(b.clone(), format!("from {m} import {n}"));
                        }
                    }
                    match (alias, module.first()) {
                        (Some(a), _) => {
                            out.insert(a.clone(), format!("import {m}"));
                        }
                        (None, Some(first)) if names.is_empty() => {
                            out.insert(first.clone(), format!("import {first}"));
                        }
                        _ => {}
                    }
                }
                Import::RustUse {
                    path,
                    bound_as,
                    glob,
                    ..
                } => {
                    let key = if *glob {
                        "*".to_string()
                    } else {
                        bound_as.clone()
                    };
                    out.insert(key, format!("use {}", path.join("::")));
                }
                Import::RustMod { name, .. } => {
                    out.insert(name.clone(), "mod".into());
                }
                Import::Go { path, alias } => {
                    out.insert(
                        go_package_name(path, alias.as_deref()),
                        format!("import {path}"),
                    );
                }
                Import::Java { path, wildcard, .. } => {
                    let key = match (wildcard, path.last()) {
                        (false, Some(last)) => last.clone(),
                        _ => "*".to_string(),
                    };
                    out.insert(key, format!("import {}", path.join(".")));
                }
                Import::JavaPackage { .. } => {}
                Import::Include { path, .. } => {
                    out.insert("*".to_string(), format!("#include {path}"));
                }
                Import::File { path, .. } => {
                    out.insert("*".to_string(), format!("require {path}"));
                }
                Import::Qualified {
                    path,
                    alias,
                    wildcard,
                } => {
                    let key = match (wildcard, alias, path.last()) {
                        (true, _, _) | (_, None, None) => "*".to_string(),
                        (false, Some(a), _) => a.clone(),
                        (false, None, Some(last)) => last.clone(),
                    };
                    out.insert(key, format!("import {}", path.join(".")));
                }
                Import::Js {
                    source,
                    names,
                    namespace,
                } => {
                    for (n, b) in names {
                        let key = if n == "*" { "*" } else { b.as_str() };
                        out.insert(key.to_string(), format!("import {n} from {source}"));
                    }
                    if let Some(ns) = namespace {
                        out.insert(ns.clone(), format!("import * from {source}"));
                    }
                }
            }
        }
        out
    }
}

/// An entity as the names index knows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NameRef {
    pub path: String,
    pub qualname: String,
    pub kind: Kind,
    /// For methods: the owning type's bare name. Always serialised: the
    /// names index is postcard, which cannot skip fields.
    pub owner: Option<String>,
}

/// The bare name an entity is called by: the last segment of its qualname,
/// without a collision suffix.
pub fn bare_name(qualname: &str) -> &str {
    let last = qualname.rsplit(['.', ':']).next().unwrap_or(qualname);
    last.split('#').next().unwrap_or(last)
}

/// The owning type's bare name of a method, from its qualname.
pub fn owner_of(qualname: &str) -> Option<&str> {
    let cut = qualname.rfind(['.', ':'])?;
    let parent = qualname[..cut].trim_end_matches(':');
    Some(parent.rsplit(['.', ':']).next().unwrap_or(parent))
}

/// The names-index entries of one file's entities.
pub fn name_refs(path: &str, entities: &[(String, Kind)]) -> Vec<(String, NameRef)> {
    entities
        .iter()
        .filter_map(|(q, k)| Some((indexed_name(q, *k)?.to_string(), name_ref(path, q, *k))))
        .collect()
}

/// The name an entity is filed under in the names index: its bare name;
/// files are not in the index.
pub fn indexed_name(qualname: &str, kind: Kind) -> Option<&str> {
    (kind != Kind::File).then(|| bare_name(qualname))
}

/// The names-index entry of one entity.
pub(crate) fn name_ref(path: &str, qualname: &str, kind: Kind) -> NameRef {
    NameRef {
        path: path.to_string(),
        qualname: qualname.to_string(),
        kind,
        owner: (kind == Kind::Method).then(|| owner_of(qualname).unwrap_or("").to_string()),
    }
}
