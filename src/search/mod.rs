//! Retrieval over the graph: BM25F over entity documents, then the graph
//! itself — names the issue mentions, stack-trace frames, class and file
//! context, call neighbours — and file ranking from entity scores.
//! Offline and deterministic.

pub mod query;

use crate::git::Repo;
use crate::graph::{EdgeKind, Graph};
use crate::lift::words::{prose_words, split_identifier};
use crate::parse::Kind;
pub use query::{Frame, Query};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Components `locate` combines; each can be switched off for ablations.
#[derive(Debug, Clone, Copy)]
pub struct Switches {
    pub names: bool,
    pub frames: bool,
    pub context: bool,
    pub neighbours: bool,
    pub test_penalty: bool,
    pub paths: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Switches {
            names: true,
            frames: true,
            context: true,
            neighbours: true,
            test_penalty: true,
            paths: true,
        }
    }
}

struct Doc {
    id: String,
    path: String,
    kind: Kind,
    parent: Option<usize>,
    len: f32,
}

/// An in-memory BM25F index over a graph's code entities.
pub struct Index {
    docs: Vec<Doc>,
    vocab: HashMap<String, u32>,
    postings: Vec<Vec<(u32, f32)>>,
    avg_len: f32,
    by_id: HashMap<String, usize>,
    /// Per file: words of its path (directories and file stem).
    path_words: BTreeMap<String, BTreeSet<String>>,
}

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Field weights for BM25F: a name says more than a body.
const W_NAME: f32 = 3.0;
const W_OWNER: f32 = 1.5;
const W_PATH: f32 = 1.0;
const W_FEATURE: f32 = 1.5;
const W_DOC: f32 = 1.0;
const W_BODY: f32 = 1.0;

fn is_test_path(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    path.split('/')
        .any(|c| matches!(c, "test" | "tests" | "testing"))
        || file.starts_with("test_")
        || file.ends_with("_test.py")
        || file == "conftest.py"
        || file == "tests.rs"
}

fn path_words(path: &str) -> BTreeSet<String> {
    let stem = path
        .strip_suffix(".py")
        .or_else(|| path.strip_suffix(".rs"))
        .unwrap_or(path);
    stem.split('/')
        .flat_map(split_identifier)
        .filter(|w| !query::is_noise(w))
        .collect()
}

impl Index {
    /// Build from a graph, reading function bodies from the git objects the
    /// graph recorded.
    pub fn build(g: &Graph, repo: &Repo) -> Index {
        let local = repo.local();
        let mut vocab: HashMap<String, u32> = HashMap::new();
        let mut postings: Vec<Vec<(u32, f32)>> = Vec::new();
        let mut docs = Vec::new();
        let mut by_id = HashMap::new();
        let mut path_index = BTreeMap::new();
        let mut by_file: BTreeMap<&str, Vec<&crate::graph::Entity>> = BTreeMap::new();
        for e in g.entities.values() {
            if e.kind != Kind::File {
                by_file.entry(e.path.as_str()).or_default().push(e);
            }
        }
        let parents: HashMap<&str, &str> = g
            .edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Contains)
            .map(|e| (e.dst.as_str(), e.src.as_str()))
            .collect();
        for (path, ents) in by_file {
            let pw = path_words(path);
            path_index.insert(path.to_string(), pw.clone());
            let text = g
                .files
                .get(path)
                .and_then(|f| gix::ObjectId::from_hex(f.blob.as_bytes()).ok())
                .and_then(|id| Repo::read_blob(&local, id).ok())
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            for e in ents {
                let mut tf: HashMap<String, f32> = HashMap::new();
                let mut add = |words: Vec<String>, w: f32| {
                    for word in words {
                        if !query::is_noise(&word) {
                            *tf.entry(word).or_default() += w;
                        }
                    }
                };
                let name = crate::graph::resolve::bare_name(&e.qualname);
                add(split_identifier(name), W_NAME);
                let owner: Vec<String> = e
                    .qualname
                    .rsplit_once(['.', ':'])
                    .map(|(o, _)| prose_words(o))
                    .unwrap_or_default();
                add(owner, W_OWNER);
                add(pw.iter().cloned().collect(), W_PATH);
                for f in &e.features {
                    add(prose_words(f), W_FEATURE);
                }
                add(prose_words(&e.doc), W_DOC);
                add(prose_words(&e.signature), W_DOC);
                if e.kind != Kind::Class {
                    let start = (e.start_line as usize).saturating_sub(1).min(lines.len());
                    let end = (e.end_line as usize).min(lines.len());
                    let body = lines[start..end].join("\n");
                    add(prose_words(&body), W_BODY);
                }
                let len: f32 = tf.values().sum();
                let d = docs.len() as u32;
                for (word, w) in tf {
                    let next = vocab.len() as u32;
                    let t = *vocab.entry(word).or_insert(next);
                    if t as usize == postings.len() {
                        postings.push(Vec::new());
                    }
                    postings[t as usize].push((d, w));
                }
                by_id.insert(e.id.clone(), docs.len());
                docs.push(Doc {
                    id: e.id.clone(),
                    path: e.path.clone(),
                    kind: e.kind,
                    parent: None,
                    len,
                });
            }
        }
        for d in docs.iter_mut() {
            d.parent = parents
                .get(d.id.as_str())
                .and_then(|p| by_id.get(*p).copied());
        }
        let avg_len = docs.iter().map(|d| d.len).sum::<f32>() / docs.len().max(1) as f32;
        Index {
            docs,
            vocab,
            postings,
            avg_len,
            by_id,
            path_words: path_index,
        }
    }

    fn bm25(&self, q: &Query) -> Vec<f32> {
        let n = self.docs.len() as f32;
        let mut scores = vec![0.0f32; self.docs.len()];
        for (term, qw) in &q.terms {
            let Some(&t) = self.vocab.get(term) else {
                continue;
            };
            let list = &self.postings[t as usize];
            let df = list.len() as f32;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(d, tf) in list {
                let len = self.docs[d as usize].len;
                let norm = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / self.avg_len));
                scores[d as usize] += qw * idf * norm;
            }
        }
        scores
    }
}

/// One ranked entity.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Hit {
    pub id: String,
    pub path: String,
    pub qualname: String,
    pub kind: Kind,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f32,
}

/// One ranked file with its supporting entities.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FileHit {
    pub path: String,
    pub score: f32,
    /// How many of its entities matched the query.
    pub evidence: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Ranking {
    pub files: Vec<FileHit>,
    pub functions: Vec<Hit>,
}

fn path_matches(frame_path: &str, path: &str) -> bool {
    // Frames carry absolute or installed paths; compare trailing components.
    let f: Vec<&str> = frame_path
        .split(['/', '\\'])
        .filter(|s| !s.is_empty())
        .collect();
    let p: Vec<&str> = path.split('/').collect();
    let n = p.len().min(f.len()).min(3);
    n >= 1 && f[f.len() - n..] == p[p.len() - n..]
}

/// Rank files and entities of `g` for the issue text in `q`.
pub fn rank(g: &Graph, index: &Index, q: &Query, sw: Switches) -> Ranking {
    let mut s = index.bm25(q);
    let max = s.iter().cloned().fold(0.0f32, f32::max).max(1e-6);
    for x in &mut s {
        *x /= max;
    }
    let idents: BTreeSet<String> = q.identifiers.iter().map(|i| i.to_lowercase()).collect();
    let mut base = s.clone();
    for (i, d) in index.docs.iter().enumerate() {
        let qual = d.id.split_once(':').map(|(_, q)| q).unwrap_or("");
        let name = crate::graph::resolve::bare_name(qual).to_lowercase();
        if sw.names {
            if idents.contains(&name) && name.len() > 3 {
                base[i] += 0.6;
            }
            let dotted = qual.replace("::", ".").to_lowercase();
            if idents.contains(&dotted) && dotted.contains('.') {
                base[i] += 0.6;
            }
        }
        if sw.frames {
            for f in &q.frames {
                if path_matches(&f.path, &d.path) {
                    base[i] += 0.15;
                    if f.function.as_deref().map(str::to_lowercase).as_deref()
                        == Some(name.as_str())
                    {
                        base[i] += 0.8;
                    }
                }
            }
        }
        if sw.paths
            && q.paths
                .iter()
                .any(|p| path_matches(p.split(':').next().unwrap_or(p), &d.path))
        {
            base[i] += 0.25;
        }
    }
    // Class context: a method inherits part of its class's score.
    let mut scores = base.clone();
    if sw.context {
        for (i, d) in index.docs.iter().enumerate() {
            if let Some(p) = d.parent {
                if index.docs[p].kind == Kind::Class {
                    scores[i] += 0.3 * base[p];
                }
            }
        }
    }
    // One hop along calls: the neighbours of strong hits gain a little.
    if sw.neighbours {
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b)));
        let top: BTreeSet<usize> = order.iter().take(30).copied().collect();
        let mut bonus = vec![0.0f32; scores.len()];
        for e in &g.edges {
            if e.kind != EdgeKind::Invokes {
                continue;
            }
            let (Some(&a), Some(&b)) = (index.by_id.get(&e.src), index.by_id.get(&e.dst)) else {
                continue;
            };
            if top.contains(&a) {
                bonus[b] = bonus[b].max(0.1 * scores[a]);
            }
            if top.contains(&b) {
                bonus[a] = bonus[a].max(0.1 * scores[b]);
            }
        }
        for (x, b) in scores.iter_mut().zip(bonus) {
            *x += b;
        }
    }
    if sw.test_penalty {
        for (i, d) in index.docs.iter().enumerate() {
            if is_test_path(&d.path) {
                scores[i] *= 0.3;
            }
        }
    }
    // Files: α·best + (1−α)·mean of the top 3 (RepoNav), plus what the
    // path's own words share with the issue.
    let mut per_file: BTreeMap<&str, Vec<f32>> = BTreeMap::new();
    for (i, d) in index.docs.iter().enumerate() {
        if scores[i] > 0.0 {
            per_file.entry(d.path.as_str()).or_default().push(scores[i]);
        }
    }
    let mut files: Vec<FileHit> = per_file
        .into_iter()
        .map(|(path, mut v)| {
            v.sort_by(|a, b| b.total_cmp(a));
            let top: Vec<f32> = v.iter().take(3).copied().collect();
            let mean = top.iter().sum::<f32>() / top.len() as f32;
            let mut score = 0.5 * v[0] + 0.5 * mean;
            if sw.paths {
                let words = &index.path_words[path];
                let hits = words.iter().filter(|w| q.terms.contains_key(*w)).count();
                score += 0.1 * hits as f32;
            }
            if sw.test_penalty && is_test_path(path) {
                score *= 0.5;
            }
            FileHit {
                path: path.to_string(),
                score,
                evidence: v.iter().filter(|x| **x > 0.05).count(),
            }
        })
        .collect();
    files.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    let mut functions: Vec<Hit> = index
        .docs
        .iter()
        .enumerate()
        .filter(|(i, d)| scores[*i] > 0.0 && d.kind != Kind::Class)
        .filter_map(|(i, d)| {
            let e = g.entities.get(&d.id)?;
            Some(Hit {
                id: d.id.clone(),
                path: d.path.clone(),
                qualname: e.qualname.clone(),
                kind: e.kind,
                start_line: e.start_line,
                end_line: e.end_line,
                score: scores[i],
            })
        })
        .collect();
    functions.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    // Redefinitions (`@overload` stubs, cfg twins) are one function to a
    // reader: list it once, under its plain id, with its best-scoring span.
    let mut seen = BTreeSet::new();
    functions.retain_mut(|h| {
        if h.id.contains('#') {
            h.id = strip_collisions(&h.id);
            h.qualname = strip_collisions(&h.qualname);
        }
        seen.insert(h.id.clone())
    });
    Ranking { files, functions }
}

/// `a.py:f#2` → `a.py:f`; `A#2.m` → `A.m`.
fn strip_collisions(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    let mut chars = id.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '#' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            while chars
                .peek()
                .is_some_and(|d| d.is_ascii_digit() || *d == '_')
            {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}
