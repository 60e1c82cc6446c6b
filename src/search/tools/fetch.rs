//! `fetch`: an entity's source (whole, a window of its lines, or the
//! lines around some words), or a hierarchy path's members.

use super::{
    entities_under, entity_in_block, file_text, invalid, parsed_of, shown, ToolError, MAX_MEMBERS,
    MAX_SOURCE_CHARS, MAX_SOURCE_LINES,
};
use crate::git::Repo;
use crate::graph::{Category, EdgeKind, Entity};
use crate::parse::Kind;
use crate::store::{FileBlock, Store};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

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
    let qualname = crate::search::strip_collisions(&e.qualname);
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
