//! The tools agents use to navigate the graph — search, fetch, explore and
//! symbols (the RPG paper's SearchNode / FetchNode / ExploreRPG and
//! RepoNav's list_symbols).
//!
//! Every id, path and hierarchy path given here is untrusted: it may come
//! from an agent or, through the bot, from an issue's author. The tools read
//! only what the graph and the repository's git objects hold — never the
//! working tree — so a path outside the repository or through a symlink
//! cannot be read, and every answer is bounded in size.

use crate::git::Repo;
use crate::graph::{split_id, Entity};
use crate::parse::{Kind, ParsedFile};
use crate::store::{FileBlock, Store, StoreError};
use std::collections::BTreeMap;

mod explore;
mod fetch;
mod search;
mod symbols;
mod tree;

pub use explore::{explore, explore_page, Direction, EdgeCount, Explored, Step};
pub use fetch::{
    fetch, fetch_window, CategoryView, Declared, EntityView, Fetched, Line, Window, AROUND_CONTEXT,
};
pub use search::{search, search_issue, Found, Mode, Searched};
pub use symbols::{symbols, symbols_page, SymbolLine, Symbols};
pub use tree::{tree, Tree, TreeNode};

/// Source lines `fetch` shows before it falls back to a skeleton.
pub const MAX_SOURCE_LINES: usize = 200;
/// Characters of source `fetch` shows at most.
pub const MAX_SOURCE_CHARS: usize = 16_000;
/// Nodes `explore` visits at most.
pub const MAX_NODES: usize = 200;
pub const MAX_DEPTH: usize = 5;
/// Entities a hierarchy path lists at most.
pub const MAX_MEMBERS: usize = 50;
/// Results `search` returns at most.
pub const MAX_RESULTS: usize = 50;
/// Symbols `symbols` lists at most.
pub const MAX_SYMBOLS: usize = 500;
const MAX_INPUT: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("invalid {what} {value:?}: {why}")]
    Invalid {
        what: &'static str,
        value: String,
        why: std::borrow::Cow<'static, str>,
    },
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ToolError {
    /// Nothing matched, as opposed to a request that could not be served.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ToolError::NotFound(_))
    }
}

/// `s` shown safely in an error: bounded, control characters escaped.
fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(200).collect();
    if s.chars().count() > 200 {
        out.push('…');
    }
    out
}

fn invalid(what: &'static str, value: &str, why: &'static str) -> ToolError {
    ToolError::Invalid {
        what,
        value: shown(value),
        why: why.into(),
    }
}

/// A repository-relative path as the graph spells it: no absolute paths, no
/// `.` or `..` components, no backslashes or control characters.
pub fn check_path(path: &str) -> Result<&str, ToolError> {
    if path.is_empty() {
        return Err(invalid("path", path, "it is empty"));
    }
    if path.len() > MAX_INPUT {
        return Err(invalid("path", path, "it is too long"));
    }
    if path.chars().any(|c| c.is_control()) {
        return Err(invalid("path", path, "it contains control characters"));
    }
    if path.starts_with('/') || path.starts_with('~') || path.contains('\\') {
        return Err(invalid(
            "path",
            path,
            "paths are relative to the repository root, with forward slashes",
        ));
    }
    // `C:/x` is a Windows absolute path; `a:b.py` is a legal Unix name.
    if path.len() >= 3
        && path.as_bytes()[0].is_ascii_alphabetic()
        && path.as_bytes()[1..3] == *b":/"
    {
        return Err(invalid(
            "path",
            path,
            "paths are relative to the repository root",
        ));
    }
    if path
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(invalid(
            "path",
            path,
            "empty, `.` and `..` components are not allowed",
        ));
    }
    Ok(path)
}

/// Split and check an entity id (`path` or `path:qualname`).
pub fn check_id(id: &str) -> Result<(&str, &str), ToolError> {
    if id.len() > MAX_INPUT {
        return Err(invalid("id", id, "it is too long"));
    }
    let (path, qual) = split_id(id);
    check_path(path)?;
    if qual
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '/' || c == '\\')
    {
        return Err(invalid(
            "id",
            id,
            "a qualified name has no spaces, slashes or control characters",
        ));
    }
    Ok((path, qual))
}

fn not_in_graph(path: &str) -> ToolError {
    ToolError::NotFound(format!(
        "no file {} in the graph (only tracked source files rpg reads are indexed, skipped ones are counted by `rpg init`, and symlinks are never followed)",
        shown(path)
    ))
}

/// [`not_in_graph`], or for a bare name (`fromJson`), the entities it may mean.
fn not_in_graph_or_named(store: &Store, path: &str) -> ToolError {
    if !path.contains(['/', '.']) || crate::parse::Lang::from_path(path).is_none() {
        let hint = did_you_mean(store, path);
        if !hint.is_empty() {
            return ToolError::NotFound(format!(
                "no file or entity {} in the graph (an entity id is path:qualname){hint}",
                shown(path)
            ));
        }
    }
    not_in_graph(path)
}

/// The entity an id names.
pub fn entity(store: &Store, id: &str) -> Result<Entity, ToolError> {
    entity_in_block(store, id).map(|(e, _)| e)
}

/// The entity an id names, with its file's block (read once).
fn entity_in_block(store: &Store, id: &str) -> Result<(Entity, FileBlock), ToolError> {
    let (path, qual) = check_id(id)?;
    let block = store
        .file_block(path)?
        .ok_or_else(|| not_in_graph_or_named(store, path))?;
    let found = if qual.is_empty() {
        block.entities.iter().find(|e| e.kind == Kind::File)
    } else {
        let wanted = crate::graph::entity_id(path, qual);
        block.entities.iter().find(|e| e.id == wanted)
    };
    match found {
        Some(e) => Ok((e.clone(), block)),
        None if qual.is_empty() => Err(not_in_graph(path)),
        None => Err(ToolError::NotFound(format!(
            "no entity {} in the graph{}",
            shown(id),
            did_you_mean(store, id)
        ))),
    }
}

/// Suggestions shown at most.
const SUGGESTIONS: usize = 5;

/// "; did you mean …?" with the ids nearest `id`, or nothing: entities
/// of its bare name in any file (`Substr` → `core/stringx/strings.go:Substr`),
/// then entities whose names start with it, then near spellings among
/// its file's entities. Best effort: a failed read suggests nothing.
fn did_you_mean(store: &Store, id: &str) -> String {
    let ids = suggestions(store, id).unwrap_or_default();
    if ids.is_empty() {
        return String::new();
    }
    let ids: Vec<String> = ids.iter().map(|i| shown(i)).collect();
    format!("; did you mean {}?", ids.join(", "))
}

fn suggestions(store: &Store, id: &str) -> Result<Vec<String>, ToolError> {
    let (path, qual) = split_id(id);
    let whole = if qual.is_empty() { path } else { qual };
    let bare = crate::graph::resolve::bare_name(whole)
        .split('#')
        .next()
        .unwrap_or("")
        .to_lowercase();
    if bare.len() < 2 {
        return Ok(Vec::new());
    }
    let r = super::Reader::open(store)?;
    let named = |name: &str| -> Result<Vec<String>, ToolError> {
        let mut ids: Vec<String> = Vec::new();
        for k in r.named(name)?.into_iter().take(64) {
            ids.push(super::strip_collisions(&r.file(k.0)?.id(k.1)));
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    };
    let mut out = named(&bare)?;
    if out.is_empty() && bare.len() >= 3 {
        for name in r.names_starting(&bare, SUGGESTIONS)? {
            out.extend(named(&name)?);
        }
    }
    if out.is_empty() && !qual.is_empty() {
        if let Some(block) = store.file_block(path)? {
            let want = qual.to_lowercase();
            let mut near: Vec<(f64, &str)> = block
                .entities
                .iter()
                .filter(|e| e.kind != Kind::File)
                .map(|e| {
                    (
                        strsim::jaro_winkler(&want, &e.qualname.to_lowercase()),
                        e.id.as_str(),
                    )
                })
                .filter(|(s, _)| *s >= 0.8)
                .collect();
            near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            out.extend(near.into_iter().map(|(_, i)| i.to_string()));
        }
    }
    out.retain(|i| i != id);
    out.truncate(SUGGESTIONS);
    Ok(out)
}

/// The blob the graph's tree holds at `path`, which must be the one the
/// graph recorded: source is only ever shown from what git has there.
fn checked_blob(store: &Store, repo: &Repo, path: &str) -> Result<gix::ObjectId, ToolError> {
    let recorded = store.blob_of(path)?.ok_or_else(|| not_in_graph(path))?;
    let tree = store.meta()?.tree;
    let in_tree = gix::ObjectId::from_hex(tree.as_bytes())
        .ok()
        .and_then(|t| repo.blob_at(t, path).ok().flatten());
    match in_tree {
        Some(id) if gix::ObjectId::from_hex(recorded.as_bytes()).is_ok_and(|r| r == id) => Ok(id),
        Some(_) | None => Err(ToolError::NotFound(format!(
            "the graph's record of {path} does not match git's tree {}; run `rpg update`",
            &tree[..tree.len().min(12)]
        ))),
    }
}

/// The text of a file as the graph recorded it, from git objects.
fn file_text(store: &Store, repo: &Repo, path: &str) -> Result<String, ToolError> {
    let id = checked_blob(store, repo, path)?;
    let bytes = Repo::read_blob(&repo.local(), id).map_err(|_| {
        ToolError::NotFound(format!(
            "the blob of {path} is not in this repository's objects (a shallow or partial clone?)"
        ))
    })?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A file's parse: cached by updates, else parsed from its blob.
fn parsed_of(store: &Store, repo: &Repo, block: &FileBlock) -> Result<ParsedFile, ToolError> {
    let path = &block.file.path;
    Ok(match store.parsed(&block.file.blob)? {
        Some(p) => p,
        None => crate::parse::parse(block.file.lang, path, &file_text(store, repo, path)?),
    })
}

fn entities_under(leaf_dirs: &BTreeMap<String, BTreeMap<String, u32>>, path: &str) -> u64 {
    let prefix = format!("{path}/");
    leaf_dirs
        .iter()
        .filter(|(leaf, _)| path.is_empty() || *leaf == path || leaf.starts_with(&prefix))
        .flat_map(|(_, dirs)| dirs.values())
        .map(|&n| u64::from(n))
        .sum()
}
