//! `search`: entities by what they are for or by what their code says.

use super::{check_path, shown, ToolError, MAX_RESULTS};
use crate::git::Repo;
use crate::parse::Kind;
use crate::search::index::{Field, Reader};
use crate::search::{query::Query, rank_field, Switches};
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What `search` matches; the CLI and MCP parse it the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// What entities are for: names and lifted features.
    Features,
    /// What the code says: names, docstrings, signatures and bodies.
    Snippets,
    /// Both, fused by reciprocal rank.
    #[default]
    Auto,
}

#[derive(Debug, Clone, Serialize)]
pub struct Found {
    pub id: String,
    pub kind: Kind,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f32,
    pub features: Vec<String>,
    pub leaf: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub signature: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Searched {
    pub commit: String,
    pub results: Vec<Found>,
}

/// `search`: entities for a query, optionally inside a hierarchy path or a
/// directory.
/// `search` as every surface runs it (the CLI and MCP): in auto mode,
/// embedding neighbours join once `rpg embed` has run here.
pub fn search_issue(
    repo: &Repo,
    store: &Store,
    text: &str,
    scope: Option<&str>,
    mode: Mode,
    top_k: usize,
) -> Result<Searched, ToolError> {
    let reader = Reader::open(store)?.with_sources(repo);
    let dense = match mode {
        Mode::Auto => crate::embed::vectors::dense_neighbours(repo, store, text),
        _ => Vec::new(),
    };
    search(store, &reader, text, scope, mode, top_k, &dense)
}

pub fn search(
    store: &Store,
    reader: &Reader,
    text: &str,
    scope: Option<&str>,
    mode: Mode,
    top_k: usize,
    dense: &[(String, f32)],
) -> Result<Searched, ToolError> {
    let top_k = top_k.clamp(1, MAX_RESULTS);
    let scope = match scope.map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => {
            let s = s.trim_end_matches('/');
            let is_category = store.categories()?.contains_key(s);
            if !is_category {
                check_path(s)?;
                let prefix = format!("{s}/");
                if !store
                    .blobs()?
                    .keys()
                    .any(|p| p == s || p.starts_with(&prefix))
                {
                    return Err(ToolError::NotFound(format!(
                        "no hierarchy path or directory {} in the graph",
                        shown(s)
                    )));
                }
            }
            Some((s.to_string(), is_category))
        }
    };
    let q = Query::parse(text);
    let sw = Switches::default();
    let lists: Vec<Vec<(String, f32)>> = match mode {
        Mode::Features => vec![ranked(reader, &q, sw, Field::Features)?],
        Mode::Snippets => vec![ranked(reader, &q, sw, Field::All)?],
        Mode::Auto => {
            let mut lists = vec![
                ranked(reader, &q, sw, Field::All)?,
                ranked(reader, &q, sw, Field::Features)?,
            ];
            // Embedding neighbours, when the caller has them, are a third voice.
            if !dense.is_empty() {
                lists.push(dense.to_vec());
            }
            lists
        }
    };
    let mut fused: BTreeMap<String, f32> = BTreeMap::new();
    if lists.len() == 1 {
        fused.extend(lists.into_iter().flatten());
    } else {
        for list in lists {
            for (rank, (id, _)) in list.into_iter().enumerate() {
                *fused.entry(id).or_default() += crate::search::rrf(rank);
            }
        }
    }
    let mut order: Vec<(String, f32)> = fused.into_iter().collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut results = Vec::new();
    for (id, score) in order {
        if results.len() == top_k {
            break;
        }
        let Some(e) = store.entity(&id)? else {
            continue;
        };
        if let Some((s, is_category)) = &scope {
            let inside = if *is_category {
                e.leaf == *s || e.leaf.starts_with(&format!("{s}/"))
            } else {
                e.path == *s || e.path.starts_with(&format!("{s}/"))
            };
            if !inside {
                continue;
            }
        }
        results.push(Found {
            id: e.id.clone(),
            kind: e.kind,
            path: e.path.clone(),
            start_line: e.start_line,
            end_line: e.end_line,
            score,
            features: e.features.clone(),
            leaf: e.leaf.to_string(),
            signature: if mode == Mode::Features {
                String::new()
            } else {
                e.signature.clone()
            },
        });
    }
    Ok(Searched {
        commit: store.meta()?.commit,
        results,
    })
}

/// Entity ids, best first, for one field.
fn ranked(
    reader: &Reader,
    q: &Query,
    sw: Switches,
    field: Field,
) -> Result<Vec<(String, f32)>, ToolError> {
    let r = rank_field(reader, q, sw, field)?;
    Ok(r.functions.into_iter().map(|h| (h.id, h.score)).collect())
}
