//! The file-centred scaffold `locate` prints (RepoNav's layout): the top
//! files grouped by directory, each with who imports it, its anchors (the
//! symbols that matched, with their same-file calls), a glimpse of its
//! other symbols, then candidate targets and a next step.

use super::{passage, Hit, Ranking, Reader, SearchError};
use crate::graph::{split_id, Edge, EdgeKind, Entity};
use crate::parse::Kind;
use serde::Serialize;
use std::collections::BTreeMap;

/// Files expanded with anchors and glimpses; the next few are only listed.
pub const EXPANDED: usize = 3;
pub const LISTED: usize = 2;
const ANCHORS: usize = 2;
const GLIMPSE: usize = 3;
const GLIMPSE_NO_ANCHOR: usize = 5;
/// As many as Hit@5 judges: the targets are the function ranking's head.
const TARGETS: usize = 5;
const NEIGHBOURS: usize = 3;
const IMPORTERS: usize = 3;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Symbol {
    pub id: String,
    pub qualname: String,
    pub kind: Kind,
    pub start_line: u32,
    pub end_line: u32,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Anchor {
    #[serde(flatten)]
    pub symbol: Symbol,
    /// Same-file entities it invokes, by qualified name.
    pub invokes: Vec<String>,
    /// Same-file entities that invoke it.
    pub invoked_by: Vec<String>,
    /// Its lines that hold most of the words, in line order: what
    /// tells it from its siblings without opening it.
    pub lines: Vec<super::tools::Line>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScaffoldFile {
    pub path: String,
    pub rank: usize,
    pub score: f32,
    pub evidence: usize,
    /// Files that import this one (at most a few), and how many there are.
    pub imported_by: Vec<String>,
    pub imported_by_total: usize,
    pub expanded: bool,
    pub anchors: Vec<Anchor>,
    pub glimpse: Vec<Symbol>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScaffoldDir {
    pub path: String,
    /// Matching symbols across the listed files of this directory.
    pub evidence: usize,
    pub files: Vec<ScaffoldFile>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Scaffold {
    /// When no indexed word matched and the files were found by the
    /// issue's text as written (see [`super::literal`]): that text,
    /// lowercased. Empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub literals: Vec<String>,
    pub dirs: Vec<ScaffoldDir>,
    pub candidate_targets: Vec<String>,
    /// Candidate targets listed once for the same function in other files
    /// (see [`super::copies`]): those files, which a fix may have to
    /// regenerate or edit alike.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub target_copies: BTreeMap<String, Vec<String>>,
    /// The lines that hold most of the words, for each candidate
    /// target not already shown as an anchor (whose `lines` has them).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub target_lines: BTreeMap<String, Vec<super::tools::Line>>,
    /// Each candidate target's first and last line, where known: what a
    /// link to it points at.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub target_spans: BTreeMap<String, [u32; 2]>,
    pub next: Option<String>,
}

fn symbol(e: &Entity) -> Symbol {
    Symbol {
        id: e.id.clone(),
        qualname: e.qualname.clone(),
        kind: e.kind,
        start_line: e.start_line,
        end_line: e.end_line,
    }
}

/// Names at the far end of `id`'s invokes edges that stay in `path`.
fn same_file(edges: &[Edge], id: &str, path: &str, outgoing: bool) -> Vec<String> {
    let mut out: Vec<String> = edges
        .iter()
        .filter(|e| e.kind == EdgeKind::Invokes)
        .filter_map(|e| {
            let (this, other) = if outgoing {
                (&e.src, &e.dst)
            } else {
                (&e.dst, &e.src)
            };
            (this == id).then_some(other)
        })
        .filter_map(|o| {
            let (p, q) = split_id(o);
            (p == path && !q.is_empty()).then(|| q.to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out.truncate(NEIGHBOURS);
    out
}

/// Build the scaffold for a ranking. `ranking` is the full ranking, before
/// any top-k cut, so siblings can be ordered by how well they matched.
pub fn build(reader: &Reader, ranking: &Ranking) -> Result<Scaffold, SearchError> {
    let store = reader.store;
    let shown = ranking.files.iter().take(EXPANDED + LISTED);
    let score_of: BTreeMap<&str, f32> = ranking
        .functions
        .iter()
        .map(|h| (h.id.as_str(), h.score))
        .collect();
    let mut files = Vec::new();
    let mut neighbours: Vec<String> = Vec::new();
    for (rank, f) in shown.enumerate() {
        let expanded = rank < EXPANDED;
        let inbound = store.inbound(&f.path)?;
        let mut importers: Vec<String> = inbound
            .iter()
            .filter(|e| e.kind == EdgeKind::Imports)
            .map(|e| split_id(&e.src).0.to_string())
            .filter(|p| *p != f.path)
            .collect();
        importers.sort();
        importers.dedup();
        let total = importers.len();
        importers.truncate(IMPORTERS);
        let mut file = ScaffoldFile {
            path: f.path.clone(),
            rank: rank + 1,
            score: f.score,
            evidence: f.evidence,
            imported_by: importers,
            imported_by_total: total,
            expanded,
            anchors: Vec::new(),
            glimpse: Vec::new(),
        };
        if expanded {
            let block = store.file_block(&f.path)?;
            let out = block.as_ref().map(|b| b.out.as_slice()).unwrap_or(&[]);
            let anchors: Vec<&Hit> = ranking
                .functions
                .iter()
                .filter(|h| h.path == f.path)
                .take(ANCHORS)
                .collect();
            for a in &anchors {
                let invokes = same_file(out, &a.id, &f.path, true);
                let invoked_by = same_file(&inbound, &a.id, &f.path, false);
                for n in invokes.iter().chain(&invoked_by) {
                    neighbours.push(crate::graph::entity_id(&f.path, n));
                }
                file.anchors.push(Anchor {
                    symbol: Symbol {
                        id: a.id.clone(),
                        qualname: a.qualname.clone(),
                        kind: a.kind,
                        start_line: a.start_line,
                        end_line: a.end_line,
                    },
                    invokes,
                    invoked_by,
                    lines: hit_lines(reader, a, &ranking.terms)?,
                });
            }
            let room = if rank == 0 && anchors.is_empty() {
                GLIMPSE_NO_ANCHOR
            } else {
                GLIMPSE
            };
            // Siblings that matched come first, then the rest in file order.
            let mut siblings: Vec<&Entity> = block
                .as_ref()
                .map(|b| b.entities.iter().filter(|e| e.kind != Kind::File).collect())
                .unwrap_or_default();
            siblings.retain(|e| !anchors.iter().any(|a| a.id == e.id));
            siblings.sort_by(|a, b| {
                let sa = score_of.get(a.id.as_str()).copied().unwrap_or(0.0);
                let sb = score_of.get(b.id.as_str()).copied().unwrap_or(0.0);
                sb.total_cmp(&sa)
                    .then(a.start_line.cmp(&b.start_line))
                    .then(a.id.cmp(&b.id))
            });
            // Redefinitions (cfg twins, overloads) show once.
            let mut seen: Vec<String> = file
                .anchors
                .iter()
                .map(|a| a.symbol.qualname.clone())
                .collect();
            for e in siblings {
                if file.glimpse.len() == room {
                    break;
                }
                let mut s = symbol(e);
                s.qualname = super::strip_collisions(&s.qualname);
                s.id = super::strip_collisions(&s.id);
                if !seen.contains(&s.qualname) {
                    seen.push(s.qualname.clone());
                    file.glimpse.push(s);
                }
            }
        }
        files.push(file);
    }
    let targets = targets(ranking, &files, &neighbours);
    let about = about_targets(reader, ranking, &targets, &files)?;
    let next = match (targets.first(), files.first()) {
        (Some(t), _) => Some(format!("rpg fetch {t}")),
        (None, Some(f)) => Some(format!("rpg symbols {}", f.path)),
        _ => None,
    };
    // Directories in the order of their best file.
    let mut dirs: Vec<ScaffoldDir> = Vec::new();
    for f in files {
        let dir = crate::graph::dir_of(&f.path).to_string();
        match dirs.iter_mut().find(|d| d.path == dir) {
            Some(d) => {
                d.evidence += f.evidence;
                d.files.push(f);
            }
            None => dirs.push(ScaffoldDir {
                path: dir,
                evidence: f.evidence,
                files: vec![f],
            }),
        }
    }
    let mut literals: Vec<String> = match ranking.terms.literal {
        true => ranking.terms.worth.keys().cloned().collect(),
        false => Vec::new(),
    };
    literals.sort();
    Ok(Scaffold {
        literals,
        dirs,
        candidate_targets: targets,
        target_copies: about.copies,
        target_lines: about.lines,
        target_spans: about.spans,
        next,
    })
}

/// What the scaffold says beside each candidate target.
#[derive(Default)]
struct AboutTargets {
    copies: BTreeMap<String, Vec<String>>,
    /// Only for targets that are not anchors: those have theirs already.
    lines: BTreeMap<String, Vec<super::tools::Line>>,
    spans: BTreeMap<String, [u32; 2]>,
}

/// One pass over the ranked functions that are targets, so that siblings
/// in one file can be told apart in the list itself; the glimpse knows
/// the spans of the symbols standing in, and a call neighbour has none.
fn about_targets(
    reader: &Reader,
    ranking: &Ranking,
    targets: &[String],
    files: &[ScaffoldFile],
) -> Result<AboutTargets, SearchError> {
    let anchored: Vec<&str> = files
        .iter()
        .flat_map(|f| &f.anchors)
        .map(|a| a.symbol.id.as_str())
        .collect();
    let mut about = AboutTargets::default();
    for h in ranking.functions.iter().filter(|h| targets.contains(&h.id)) {
        about.spans.insert(h.id.clone(), [h.start_line, h.end_line]);
        if !h.copies.is_empty() {
            about.copies.insert(h.id.clone(), h.copies.clone());
        }
        if !anchored.contains(&h.id.as_str()) {
            let lines = hit_lines(reader, h, &ranking.terms)?;
            if !lines.is_empty() {
                about.lines.insert(h.id.clone(), lines);
            }
        }
    }
    for g in files.iter().flat_map(|f| &f.glimpse) {
        if targets.contains(&g.id) {
            about
                .spans
                .entry(g.id.clone())
                .or_insert([g.start_line, g.end_line]);
        }
    }
    Ok(about)
}

/// What to open next: the head of the function ranking, in its order, so
/// the scaffold and `functions` never disagree. Only when no function
/// matched (a file found by its module text or path) do anchors' call
/// neighbours and glimpsed symbols stand in.
fn targets(ranking: &Ranking, files: &[ScaffoldFile], neighbours: &[String]) -> Vec<String> {
    let mut targets: Vec<String> = Vec::new();
    let mut push = |id: &str| {
        if targets.len() < TARGETS && !targets.iter().any(|t| t == id) {
            targets.push(id.to_string());
        }
    };
    for h in &ranking.functions {
        push(&h.id);
    }
    for n in neighbours {
        push(n);
    }
    for g in files.iter().flat_map(|f| &f.glimpse) {
        push(&g.id);
    }
    targets
}

/// A shown line is cut to this many bytes.
const MAX_LINE: usize = 200;

/// The lines of `hit` that hold most of the query's words; none when the
/// reader has no sources or its file's text cannot be read.
fn hit_lines(
    reader: &Reader,
    hit: &Hit,
    terms: &passage::TermWeights,
) -> Result<Vec<super::tools::Line>, SearchError> {
    let Some(num) = reader.num_of(&hit.path)? else {
        return Ok(Vec::new());
    };
    let Some(text) = reader.source(num)? else {
        return Ok(Vec::new());
    };
    let lines = passage::lines_of(&text, hit.start_line, hit.end_line);
    let first = hit.start_line.max(1);
    Ok(passage::hit_lines(&lines, first, terms)
        .into_iter()
        .map(|n| super::tools::Line {
            n,
            text: crate::text::clip(lines[(n - first) as usize].trim(), MAX_LINE).into_owned(),
        })
        .collect())
}
