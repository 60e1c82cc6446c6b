//! The tools agents use to navigate the graph — search, fetch, explore and
//! symbols (the RPG paper's SearchNode / FetchNode / ExploreRPG and
//! RepoNav's list_symbols).
//!
//! Every id, path and hierarchy path given here is untrusted: it may come
//! from an agent or, through the bot, from an issue's author. The tools read
//! only what the graph and the repository's git objects hold — never the
//! working tree — so a path outside the repository or through a symlink
//! cannot be read, and every answer is bounded in size.

use super::index::{Field, Reader};
use super::{query::Query, rank_field, Switches};
use crate::git::Repo;
use crate::graph::{split_id, Category, EdgeKind, Entity};
use crate::parse::{Import, Kind, ParsedFile};
use crate::store::{FileBlock, Store, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

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

/// A source line with its number.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Line {
    pub n: u32,
    pub text: String,
}

/// Bounds on what one field of a view may show; a repository (or a
/// snapshot) can hold anything, an answer cannot.
const MAX_FEATURES: usize = 20;
const MAX_FEATURE: usize = 200;
const MAX_SIGNATURE: usize = 1000;
const MAX_DOC: usize = 4000;
const MAX_LINE: usize = 1000;

#[derive(Debug, Clone, Serialize)]
pub struct EntityView {
    pub id: String,
    pub kind: Kind,
    pub path: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub qualname: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub signature: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub doc: String,
    pub features: Vec<String>,
    /// The hierarchy leaf and its ancestors, most specific last.
    pub hierarchy: Vec<String>,
    pub lifter: String,
}

impl EntityView {
    fn of(e: &Entity) -> EntityView {
        let mut hierarchy = Vec::new();
        let mut acc = String::new();
        for seg in e.leaf.split('/').filter(|s| !s.is_empty()) {
            if !acc.is_empty() {
                acc.push('/');
            }
            acc.push_str(seg);
            hierarchy.push(acc.clone());
        }
        let clip = |s: &str, max: usize| crate::text::clip(s, max).into_owned();
        EntityView {
            id: e.id.clone(),
            kind: e.kind,
            path: e.path.clone(),
            qualname: e.qualname.clone(),
            start_line: e.start_line,
            end_line: e.end_line,
            signature: clip(&e.signature, MAX_SIGNATURE),
            doc: clip(&e.doc, MAX_DOC),
            features: e
                .features
                .iter()
                .take(MAX_FEATURES)
                .map(|f| clip(f, MAX_FEATURE))
                .collect(),
            hierarchy: hierarchy.iter().map(|h| clip(h, MAX_FEATURE)).collect(),
            lifter: clip(&e.lifter, MAX_FEATURE),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Fetched {
    pub commit: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity: Option<EntityView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<CategoryView>,
    /// Line-numbered source; for large bodies, a skeleton of it.
    pub source: Vec<Line>,
    /// `source` is a skeleton: signatures of nested definitions, the first
    /// and last lines, and elision markers.
    pub skeleton: bool,
    pub truncated: bool,
    /// When a window of lines was cut short: the first line it did not
    /// show, to ask for next (`--lines N-…`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_line: Option<u32>,
    /// A C or C++ definition's declaration in a header it includes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub declared: Option<Declared>,
}

/// Where a definition is declared, with the declaration's source.
#[derive(Debug, Clone, Serialize)]
pub struct Declared {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub source: Vec<Line>,
}

/// How deep `fetch` follows includes for a declaration: the definition's
/// own headers, and the headers those include.
const DECLARATION_DEPTH: usize = 2;

#[derive(Debug, Clone, Serialize)]
pub struct CategoryView {
    pub path: String,
    pub scopes: Vec<String>,
    pub terms: Vec<String>,
    pub children: Vec<String>,
    pub members: Vec<String>,
    pub members_total: usize,
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

/// Lines `start..=end` (1-based), or a skeleton when there are too many:
/// the first lines, the header line of each nested entity, the last lines.
fn excerpt(text: &str, start: u32, end: u32, nested: &[(u32, u32)]) -> (Vec<Line>, bool, bool) {
    let lines: Vec<&str> = text.lines().collect();
    let s = (start.max(1) as usize).min(lines.len().max(1));
    let e = (end as usize).clamp(s, lines.len().max(s));
    let take = |n: usize| Line {
        n: n as u32,
        text: crate::text::clip(lines.get(n - 1).copied().unwrap_or(""), MAX_LINE).into_owned(),
    };
    let mut out = Vec::new();
    let skeleton = e + 1 - s > MAX_SOURCE_LINES;
    if !skeleton {
        out.extend((s..=e).filter(|n| *n <= lines.len()).map(take));
    } else {
        let mut keep: BTreeSet<usize> = BTreeSet::new();
        keep.extend(s..(s + 20).min(e + 1));
        keep.extend(e.saturating_sub(4).max(s)..=e);
        for (a, _) in nested {
            let a = *a as usize;
            if a > s && a < e {
                keep.insert(a);
            }
        }
        let mut prev = 0;
        for n in keep {
            if n > lines.len() {
                break;
            }
            if prev != 0 && n > prev + 1 {
                out.push(Line {
                    n: 0,
                    text: format!("… {} lines …", n - prev - 1),
                });
            }
            out.push(take(n));
            prev = n;
        }
    }
    let mut chars = 0;
    let mut truncated = false;
    out.retain(|l| {
        chars += l.text.len() + 8;
        if chars > MAX_SOURCE_CHARS {
            truncated = true;
        }
        !truncated
    });
    (out, skeleton, truncated)
}

/// Which of a target's lines `fetch` shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Window {
    /// All of them, or a skeleton when there are more than
    /// [`MAX_SOURCE_LINES`].
    #[default]
    Whole,
    /// Lines `a..=b` of the file (1-based), within the target's span.
    Lines(u32, u32),
    /// The lines holding any of these words (ASCII case aside), with
    /// [`AROUND_CONTEXT`] lines either side, as `grep -C` shows them.
    Around(String),
}

/// Lines shown either side of a line `--around` matched.
pub const AROUND_CONTEXT: u32 = 3;
/// Words `--around` looks for at most.
const AROUND_WORDS: usize = 16;

/// Lines `a..=b` of `e`, at most [`MAX_SOURCE_LINES`] of them and
/// [`MAX_SOURCE_CHARS`] of text, with the first line left out when cut.
fn lines_window(
    text: &str,
    e: &Entity,
    a: u32,
    b: u32,
) -> Result<(Vec<Line>, Option<u32>), ToolError> {
    let range = format!("{a}-{b}");
    if a == 0 || b < a {
        return Err(invalid("lines", &range, "give A-B with 1 <= A <= B"));
    }
    let (s, end) = (a.max(e.start_line), b.min(e.end_line));
    if s > end {
        return Err(ToolError::Invalid {
            what: "lines",
            value: range,
            why: format!(
                "{} holds lines {}-{}",
                shown(&e.id),
                e.start_line,
                e.end_line
            )
            .into(),
        });
    }
    let lines: Vec<&str> = text.lines().collect();
    Ok(shown_lines(&lines, s..=end.min(lines.len() as u32)))
}

/// Lines `keep` (1-based, ascending) of `lines`, each cut to
/// [`MAX_LINE`], with a marker for each gap between them; stopped at
/// [`MAX_SOURCE_LINES`] lines or [`MAX_SOURCE_CHARS`] of text, with the
/// first line it left out.
fn shown_lines(lines: &[&str], keep: impl IntoIterator<Item = u32>) -> (Vec<Line>, Option<u32>) {
    let (mut out, mut shown, mut prev, mut chars) = (Vec::new(), 0, 0u32, 0usize);
    for n in keep {
        let line = crate::text::clip(lines[n as usize - 1], MAX_LINE).into_owned();
        chars += line.len() + 8;
        if shown == MAX_SOURCE_LINES || chars > MAX_SOURCE_CHARS {
            return (out, Some(n));
        }
        if prev != 0 && n > prev + 1 {
            out.push(Line {
                n: 0,
                text: format!("… {} lines …", n - prev - 1),
            });
        }
        out.push(Line { n, text: line });
        (shown, prev) = (shown + 1, n);
    }
    (out, None)
}

/// The lines of `e` holding any of `words`, each with
/// [`AROUND_CONTEXT`] lines either side, windows that touch merged, and a
/// marker for each gap; cut at [`MAX_SOURCE_LINES`] lines.
fn around(text: &str, e: &Entity, words: &str) -> Result<(Vec<Line>, bool), ToolError> {
    let words: Vec<String> = words
        .split_whitespace()
        .map(|w| w.to_ascii_lowercase())
        .filter(|w| w.chars().count() >= 2)
        .take(AROUND_WORDS)
        .map(|w| crate::text::clip(&w, 100).into_owned())
        .collect();
    if words.is_empty() {
        return Err(invalid("around", "", "give words of two letters or more"));
    }
    let lines: Vec<&str> = text.lines().collect();
    let (s, end) = (e.start_line.max(1), e.end_line.min(lines.len() as u32));
    let hit = |n: u32| {
        let l = lines[n as usize - 1].to_ascii_lowercase();
        words.iter().any(|w| l.contains(w.as_str()))
    };
    let mut keep: BTreeSet<u32> = BTreeSet::new();
    for n in (s..=end).filter(|n| hit(*n)) {
        keep.extend(n.saturating_sub(AROUND_CONTEXT).max(s)..=(n + AROUND_CONTEXT).min(end));
    }
    if keep.is_empty() {
        return Err(ToolError::NotFound(format!(
            "no line of {} holds {}",
            shown(&e.id),
            shown(&words.join(" "))
        )));
    }
    let (out, cut) = shown_lines(&lines, keep);
    Ok((out, cut.is_some()))
}

/// `fetch`: an entity (by id), a file (by path) or a hierarchy path.
pub fn fetch(store: &Store, repo: &Repo, target: &str) -> Result<Fetched, ToolError> {
    fetch_window(store, repo, target, &Window::Whole)
}

/// [`fetch`], showing `window` of the target's lines.
pub fn fetch_window(
    store: &Store,
    repo: &Repo,
    target: &str,
    window: &Window,
) -> Result<Fetched, ToolError> {
    let commit = {
        let meta = store.meta()?;
        crate::store::shown_commit(repo, &meta.commit, &meta.tree)
    };
    let target = target.trim();
    if target.is_empty() {
        return Err(invalid(
            "target",
            target,
            "give an entity id, a file path or a hierarchy path",
        ));
    }
    if target == "/" {
        return Ok(Fetched {
            commit,
            entity: None,
            category: Some(root_view(store)?),
            source: Vec::new(),
            skeleton: false,
            truncated: false,
            next_line: None,
            declared: None,
        });
    }
    let looks_like_file = target.contains(':') || crate::parse::Lang::from_path(target).is_some();
    if !looks_like_file {
        let categories = store.categories()?;
        if let Some(c) = categories.get(target) {
            return Ok(Fetched {
                commit,
                entity: None,
                category: Some(category_view(store, &categories, c)?),
                source: Vec::new(),
                skeleton: false,
                truncated: false,
                next_line: None,
                declared: None,
            });
        }
    }
    let (e, block) = match entity_in_block(store, target) {
        Err(ToolError::NotFound(m)) if !looks_like_file => {
            return Err(ToolError::NotFound(format!(
                "no hierarchy path {}, and {m}",
                shown(target)
            )))
        }
        other => other?,
    };
    let text = file_text(store, repo, &e.path)?;
    let nested: Vec<(u32, u32)> = block
        .entities
        .iter()
        .filter(|x| x.id != e.id && x.start_line >= e.start_line && x.end_line <= e.end_line)
        .map(|x| (x.start_line, x.end_line))
        .collect();
    let (source, skeleton, truncated, next_line) = match window {
        Window::Whole => {
            let (source, skeleton, truncated) = excerpt(&text, e.start_line, e.end_line, &nested);
            // Cut lines in a row go on where they stopped; a skeleton's
            // reader picks a window instead.
            let next = (truncated && !skeleton)
                .then(|| source.last().map(|l| l.n + 1))
                .flatten();
            (source, skeleton, truncated, next)
        }
        Window::Lines(a, b) => {
            let (source, next) = lines_window(&text, &e, *a, *b)?;
            (source, false, next.is_some(), next)
        }
        Window::Around(words) => {
            let (source, truncated) = around(&text, &e, words)?;
            (source, false, truncated, None)
        }
    };
    Ok(Fetched {
        commit,
        entity: Some(EntityView::of(&e)),
        category: None,
        source,
        skeleton,
        truncated,
        next_line,
        declared: declaration_of(store, repo, &e, &block),
    })
}

/// The declaration of a C or C++ function in the headers its file
/// includes, nearest first. A header that cannot be read (a stale record,
/// a missing blob) is passed over: the declaration is an aid, never the
/// answer.
fn declaration_of(store: &Store, repo: &Repo, e: &Entity, block: &FileBlock) -> Option<Declared> {
    if !block.file.lang.is_c() || !matches!(e.kind, Kind::Function | Kind::Method) {
        return None;
    }
    let qualname = super::strip_collisions(&e.qualname);
    let mut seen = BTreeSet::from([e.path.clone()]);
    let mut level = includes(block);
    for _ in 0..DECLARATION_DEPTH {
        let mut next = Vec::new();
        for path in level {
            if !seen.insert(path.clone()) {
                continue;
            }
            let Ok(Some(header)) = store.file_block(&path) else {
                continue;
            };
            let Ok(parsed) = parsed_of(store, repo, &header) else {
                continue;
            };
            // A namespace written only around the declaration.
            let same = |d: &&crate::parse::Declaration| {
                qualname
                    .strip_suffix(d.qualname.as_str())
                    .is_some_and(|ns| ns.is_empty() || ns.ends_with("::"))
            };
            if let Some(d) = parsed.declarations.iter().find(same) {
                let text = file_text(store, repo, &path).ok()?;
                let (source, _, _) = excerpt(&text, d.start_line, d.end_line, &[]);
                return Some(Declared {
                    path,
                    start_line: d.start_line,
                    end_line: d.end_line,
                    source,
                });
            }
            next.extend(includes(&header));
        }
        level = next;
    }
    None
}

/// The files a file's includes resolved to.
fn includes(block: &FileBlock) -> Vec<String> {
    block
        .out
        .iter()
        .filter(|e| e.kind == EdgeKind::Imports && e.src == block.file.path)
        .map(|e| e.dst.to_string())
        .collect()
}

/// A file's parse: cached by updates, else parsed from its blob.
fn parsed_of(store: &Store, repo: &Repo, block: &FileBlock) -> Result<ParsedFile, ToolError> {
    let path = &block.file.path;
    Ok(match store.parsed(&block.file.blob)? {
        Some(p) => p,
        None => crate::parse::parse(block.file.lang, path, &file_text(store, repo, path)?),
    })
}

/// The hierarchy's root, `/`: the areas as children. Members are left to
/// the areas; listing every entity here would say nothing.
fn root_view(store: &Store) -> Result<CategoryView, ToolError> {
    let children = store
        .categories()?
        .into_keys()
        .filter(|k| !k.contains('/'))
        .collect();
    let hier = store.hier()?;
    Ok(CategoryView {
        path: "/".into(),
        scopes: vec![".".into()],
        terms: Vec::new(),
        children,
        members: Vec::new(),
        members_total: usize::try_from(entities_under(&hier.leaf_dirs, "")).unwrap_or(usize::MAX),
    })
}

fn category_view(
    store: &Store,
    all: &BTreeMap<String, Category>,
    c: &Category,
) -> Result<CategoryView, ToolError> {
    let prefix = format!("{}/", c.path);
    let children = all
        .keys()
        .filter(|k| {
            k.strip_prefix(&prefix)
                .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
        })
        .cloned()
        .collect();
    // Members live in the directories the hierarchy state records for the
    // leaves under this path; read only those files.
    let hier = store.hier()?;
    let dirs: BTreeSet<&str> = hier
        .leaf_dirs
        .iter()
        .filter(|(leaf, _)| **leaf == c.path || leaf.starts_with(&prefix))
        .flat_map(|(_, d)| d.keys().map(String::as_str))
        .collect();
    let mut members = Vec::new();
    for path in store.blobs()?.keys() {
        if !dirs.contains(crate::graph::dir_of(path)) {
            continue;
        }
        if let Some(b) = store.file_block(path)? {
            members.extend(
                b.entities
                    .into_iter()
                    .filter(|e| e.leaf == c.path || e.leaf.starts_with(&prefix))
                    .map(|e| e.id),
            );
        }
    }
    let total = members.len();
    members.truncate(MAX_MEMBERS);
    Ok(CategoryView {
        path: c.path.clone(),
        scopes: c.scopes.clone(),
        terms: c.terms.clone(),
        children,
        members,
        members_total: total,
    })
}

/// Which way `explore` walks; the CLI and MCP parse it the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Along outgoing edges: what this entity contains, imports, invokes.
    Down,
    /// Along incoming edges: who contains, imports, invokes it.
    Up,
    #[default]
    Both,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Step {
    pub id: String,
    pub depth: usize,
    /// The node this one was reached from.
    pub from: String,
    pub edge: EdgeKind,
    /// `down` when `from` → `id`, `up` when `id` → `from`.
    pub direction: Direction,
}

#[derive(Debug, Clone, Serialize)]
pub struct Explored {
    pub root: String,
    /// The root's own edges of each chosen kind and direction, however
    /// many of them the walk could show.
    pub counts: Vec<EdgeCount>,
    /// Steps of the walk before this page.
    #[serde(skip_serializing_if = "is_zero")]
    pub offset: usize,
    pub steps: Vec<Step>,
    pub truncated: bool,
    /// When truncated: the offset of the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EdgeCount {
    pub edge: EdgeKind,
    pub direction: Direction,
    pub n: usize,
}

/// The order `explore` walks edge kinds in: what a reader asks first is
/// who calls this and what it calls; the file and its siblings come last.
const EXPLORE_ORDER: [EdgeKind; 4] = [
    EdgeKind::Invokes,
    EdgeKind::Inherits,
    EdgeKind::Imports,
    EdgeKind::Contains,
];

/// `explore`: breadth-first to `depth` hops, one edge kind after another
/// in [`EXPLORE_ORDER`], so calls are shown before siblings and a walk
/// cut at [`MAX_NODES`] loses the siblings first.
pub fn explore(
    store: &Store,
    id: &str,
    kinds: &[EdgeKind],
    direction: Direction,
    depth: usize,
) -> Result<Explored, ToolError> {
    explore_page(store, id, kinds, direction, depth, 0)
}

/// [`explore`] from the `offset`-th step of the same walk on: the next
/// page of a walk longer than [`MAX_NODES`].
pub fn explore_page(
    store: &Store,
    id: &str,
    kinds: &[EdgeKind],
    direction: Direction,
    depth: usize,
    offset: usize,
) -> Result<Explored, ToolError> {
    let root = entity(store, id)?.id;
    if depth == 0 || depth > MAX_DEPTH {
        return Err(invalid(
            "depth",
            &depth.to_string(),
            "it must be between 1 and 5",
        ));
    }
    let mut walk = Walk {
        store,
        direction,
        depth,
        seen: BTreeSet::from([root.clone()]),
        steps: Vec::new(),
        limit: offset.saturating_add(MAX_NODES),
        truncated: false,
        edges: BTreeMap::new(),
    };
    for kind in EXPLORE_ORDER.into_iter().filter(|k| kinds.contains(k)) {
        walk.from(&root, kind)?;
    }
    if offset > 0 && offset >= walk.steps.len() {
        return Err(invalid(
            "offset",
            &offset.to_string(),
            "the walk has fewer steps",
        ));
    }
    Ok(Explored {
        counts: walk.counts(&root, kinds)?,
        root,
        offset,
        steps: walk.steps.split_off(offset),
        truncated: walk.truncated,
        next_offset: walk.truncated.then_some(offset + MAX_NODES),
    })
}

/// One breadth-first walk per edge kind, sharing what it has seen.
struct Walk<'s> {
    store: &'s Store,
    direction: Direction,
    depth: usize,
    seen: BTreeSet<String>,
    steps: Vec<Step>,
    /// Steps walked at most: this page's and every one before it.
    limit: usize,
    truncated: bool,
    /// Each node's edges (outgoing or not) as read, since every edge kind
    /// walks the same nodes again.
    edges: BTreeMap<(String, bool), Vec<crate::graph::Edge>>,
}

impl Walk<'_> {
    /// Breadth-first along `kind` from `root`: callers before callees.
    /// A path keeps the way it set out (callers of callers, callees of
    /// callees), except along `contains`, where the way up to the file
    /// turns down to its other members.
    fn from(&mut self, root: &str, kind: EdgeKind) -> Result<(), ToolError> {
        let mut queue = VecDeque::from([(root.to_string(), 0usize, self.direction)]);
        while let Some((node, d, way)) = queue.pop_front() {
            if d == self.depth || self.truncated {
                continue;
            }
            let mut next: Vec<(String, Direction)> = Vec::new();
            if matches!(way, Direction::Up | Direction::Both) {
                let up = self.ends(&node, kind, false)?;
                next.extend(up.into_iter().map(|id| (id, Direction::Up)));
            }
            if matches!(way, Direction::Down | Direction::Both) {
                let down = self.ends(&node, kind, true)?;
                next.extend(down.into_iter().map(|id| (id, Direction::Down)));
            }
            for (other, direction) in next {
                if !self.seen.insert(other.clone()) {
                    continue;
                }
                if self.steps.len() == self.limit {
                    self.truncated = true;
                    break;
                }
                self.steps.push(Step {
                    id: other.clone(),
                    depth: d + 1,
                    from: node.clone(),
                    edge: kind,
                    direction,
                });
                let onward = match kind {
                    EdgeKind::Contains => self.direction,
                    _ => direction,
                };
                queue.push_back((other, d + 1, onward));
            }
        }
        Ok(())
    }

    /// `node`'s edges one way, read once per walk.
    fn edges(&mut self, node: &str, outgoing: bool) -> Result<&[crate::graph::Edge], ToolError> {
        let key = (node.to_string(), outgoing);
        if !self.edges.contains_key(&key) {
            let read = self.store.edges(node, outgoing)?;
            self.edges.insert(key.clone(), read);
        }
        Ok(&self.edges[&key])
    }

    /// The far ends of `node`'s `kind` edges one way, in id order.
    fn ends(
        &mut self,
        node: &str,
        kind: EdgeKind,
        outgoing: bool,
    ) -> Result<Vec<String>, ToolError> {
        let mut ends: Vec<String> = self
            .edges(node, outgoing)?
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| {
                if outgoing {
                    e.dst.to_string()
                } else {
                    e.src.to_string()
                }
            })
            .collect();
        ends.sort();
        Ok(ends)
    }

    /// How many edges of each chosen kind `root` has, each way the walk
    /// goes, in [`EXPLORE_ORDER`]; kinds it has none of are left out.
    fn counts(&mut self, root: &str, kinds: &[EdgeKind]) -> Result<Vec<EdgeCount>, ToolError> {
        let mut ways = Vec::new();
        if matches!(self.direction, Direction::Up | Direction::Both) {
            ways.push(Direction::Up);
        }
        if matches!(self.direction, Direction::Down | Direction::Both) {
            ways.push(Direction::Down);
        }
        let mut out = Vec::new();
        for edge in EXPLORE_ORDER.into_iter().filter(|k| kinds.contains(k)) {
            for direction in &ways {
                let outgoing = matches!(direction, Direction::Down);
                let n = self.ends(root, edge, outgoing)?.len();
                if n > 0 {
                    out.push(EdgeCount {
                        edge,
                        direction: *direction,
                        n,
                    });
                }
            }
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SymbolLine {
    pub id: String,
    pub qualname: String,
    pub kind: Kind,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    /// Nesting depth: 0 for top-level definitions.
    pub depth: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Symbols {
    pub commit: String,
    pub path: String,
    pub lines: u32,
    pub imports: Vec<String>,
    pub symbols: Vec<SymbolLine>,
    pub truncated: bool,
    /// When truncated: the offset of the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

fn import_text(i: &Import) -> String {
    match i {
        Import::Python {
            level,
            module,
            names,
            alias,
        } => {
            let module = format!("{}{}", ".".repeat(*level), module.join("."));
            if names.is_empty() {
                match alias {
                    Some(a) => format!("import {module} as {a}"),
                    None => format!("import {module}"),
                }
            } else {
                let names: Vec<String> = names
                    .iter()
                    .map(|(n, b)| {
                        if n == b {
                            n.clone()
                        } else {
                            format!("{n} as {b}")
                        }
                    })
                    .collect();
                format!("from {module} import {}", names.join(", "))
            }
        }
        Import::RustUse {
            path,
            bound_as,
            glob,
            ..
        } => {
            let p = path.join("::");
            if *glob {
                format!("use {p}::*")
            } else if path.last() == Some(bound_as) || bound_as.is_empty() {
                format!("use {p}")
            } else {
                format!("use {p} as {bound_as}")
            }
        }
        Import::RustMod { name, .. } => format!("mod {name}"),
        Import::Go { path, alias } => match alias {
            Some(a) => format!("import {a} \"{path}\""),
            None => format!("import \"{path}\""),
        },
        Import::JavaPackage { path } => format!("package {}", path.join(".")),
        Import::Include { path, system } => match system {
            true => format!("#include <{path}>"),
            false => format!("#include \"{path}\""),
        },
        Import::Js {
            source,
            names,
            namespace,
        } => {
            let mut bound: Vec<String> = names
                .iter()
                .map(|(n, b)| {
                    if n == b {
                        n.clone()
                    } else {
                        format!("{n} as {b}")
                    }
                })
                .collect();
            bound.extend(namespace.iter().map(|n| format!("* as {n}")));
            match bound.is_empty() {
                true => format!("import \"{source}\""),
                false => format!("import {{ {} }} from \"{source}\"", bound.join(", ")),
            }
        }
        Import::Java {
            path,
            wildcard,
            is_static,
        } => format!(
            "import {}{}{}",
            if *is_static { "static " } else { "" },
            path.join("."),
            if *wildcard { ".*" } else { "" }
        ),
        Import::File { path, .. } => format!("require {path}"),
        Import::Qualified {
            path,
            alias,
            wildcard,
        } => format!(
            "import {}{}{}",
            path.join("."),
            if *wildcard { ".*" } else { "" },
            alias
                .as_ref()
                .map(|a| format!(" as {a}"))
                .unwrap_or_default()
        ),
    }
}

/// `symbols`: a file's skeleton — imports, then every definition with its
/// line range and signature, no bodies.
pub fn symbols(store: &Store, repo: &Repo, path: &str) -> Result<Symbols, ToolError> {
    symbols_page(store, repo, path, 0)
}

/// [`symbols`] from the `offset`-th definition on: the next page of a
/// file with more than [`MAX_SYMBOLS`]. Imports come with the first page.
pub fn symbols_page(
    store: &Store,
    repo: &Repo,
    path: &str,
    offset: usize,
) -> Result<Symbols, ToolError> {
    let path = check_path(path)?;
    let block = store.file_block(path)?.ok_or_else(|| not_in_graph(path))?;
    checked_blob(store, repo, path)?;
    let parsed = parsed_of(store, repo, &block)?;
    let mut imports: Vec<String> = parsed.imports.iter().map(import_text).collect();
    imports.dedup();
    let mut ents: Vec<&Entity> = block
        .entities
        .iter()
        .filter(|e| e.kind != Kind::File)
        .collect();
    ents.sort_by(|a, b| (a.start_line, &a.id).cmp(&(b.start_line, &b.id)));
    let parent: BTreeMap<&str, &str> = block
        .out
        .iter()
        .filter(|e| e.kind == EdgeKind::Contains)
        .map(|e| (e.dst.as_str(), e.src.as_str()))
        .collect();
    let depth_of = |id: &str| {
        let mut d = 0;
        let mut cur = id;
        while let Some(p) = parent.get(cur) {
            if crate::graph::is_file_id(p) {
                break;
            }
            d += 1;
            cur = p;
        }
        d
    };
    if offset > 0 && offset >= ents.len() {
        return Err(invalid(
            "offset",
            &offset.to_string(),
            "the file has fewer definitions",
        ));
    }
    let truncated = ents.len() > offset + MAX_SYMBOLS;
    let next_offset = truncated.then_some(offset + MAX_SYMBOLS);
    if offset > 0 {
        imports.clear();
    }
    let symbols = ents
        .into_iter()
        .skip(offset)
        .take(MAX_SYMBOLS)
        .map(|e| SymbolLine {
            id: e.id.clone(),
            qualname: e.qualname.clone(),
            kind: e.kind,
            start_line: e.start_line,
            end_line: e.end_line,
            signature: e.signature.clone(),
            depth: depth_of(&e.id),
        })
        .collect();
    Ok(Symbols {
        commit: store.meta()?.commit,
        path: path.to_string(),
        lines: block.file.lines,
        imports,
        symbols,
        truncated,
        next_offset,
    })
}

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
                *fused.entry(id).or_default() += super::rrf(rank);
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

/// The hierarchy under a path, in reading order, with entity counts.
#[derive(Debug, Clone, Serialize)]
pub struct Tree {
    pub commit: String,
    pub nodes: Vec<TreeNode>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TreeNode {
    pub path: String,
    /// 1 for an area, 2 for a category, 3 for a subcategory.
    pub depth: usize,
    pub entities: u64,
    pub scopes: Vec<String>,
}

/// Areas, categories and subcategories under `root` (everything when it is
/// empty or `/`), down to `depth` levels below it.
pub fn tree(store: &Store, root: &str, depth: usize) -> Result<Tree, ToolError> {
    if depth == 0 {
        return Err(invalid("depth", "0", "show at least one level"));
    }
    let commit = store.meta()?.commit;
    let root = root.trim().trim_matches('/');
    let categories = store.categories()?;
    if !root.is_empty() && !categories.contains_key(root) {
        return Err(ToolError::NotFound(format!(
            "no hierarchy path {}; `rpg tree` lists them",
            shown(root)
        )));
    }
    let base = if root.is_empty() {
        0
    } else {
        root.split('/').count() - 1
    };
    let prefix = format!("{root}/");
    let under = |p: &str| root.is_empty() || p == root || p.starts_with(&prefix);
    let hier = store.hier()?;
    let mut nodes: Vec<TreeNode> = categories
        .values()
        .filter(|c| under(&c.path) && c.depth() - base <= depth)
        .map(|c| TreeNode {
            path: c.path.clone(),
            depth: c.depth(),
            entities: entities_under(&hier.leaf_dirs, &c.path),
            scopes: c.scopes.clone(),
        })
        .collect();
    // Segment order keeps each node right after its parent ("a b" sorts
    // before "a/x" as a string).
    nodes.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    Ok(Tree { commit, nodes })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{RpgDir, WriteSet};
    use crate::testing::git;

    /// However a store came to name another blob for a file than the
    /// graph's tree holds there (adoption never writes one), `fetch`
    /// serves only what git holds at that path.
    #[test]
    fn fetch_serves_only_the_blob_git_holds_at_the_path() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        git(root, &["init", "-q"]);
        std::fs::write(root.join("a.py"), "def f():\n    return 'honest'\n").unwrap();
        std::fs::write(root.join("b.py"), "def f():\n    steal_secrets()\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "two"]);
        let repo = Repo::discover(root).unwrap();
        let head = repo.resolve("HEAD").unwrap();
        let config = crate::config::Config::default();
        let lifter = crate::lift::offline::OfflineLifter;
        let e =
            crate::encode::encode(&repo, &config, head, &lifter, &crate::progress::Silent).unwrap();
        let rpg = RpgDir::new(repo.workdir()).unwrap();
        rpg.save(&e.graph, e.resolved).unwrap();
        let store = rpg.open().unwrap();
        assert!(fetch(&store, &repo, "a.py:f").is_ok());
        let mut block = store.file_block("a.py").unwrap().unwrap();
        block.file.blob = store.blob_of("b.py").unwrap().unwrap();
        let mut w = WriteSet::default();
        w.put_block(&block);
        store.apply(w).unwrap();
        match fetch(&store, &repo, "a.py:f") {
            Err(e) => assert!(e.to_string().contains("does not match git"), "{e}"),
            Ok(f) => {
                let text: Vec<&str> = f.source.iter().map(|l| l.text.as_str()).collect();
                panic!("served {text:?}");
            }
        }
    }
}
