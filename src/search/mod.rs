//! Retrieval over the graph: BM25F over entity documents, then the graph
//! itself — names the issue mentions, stack-trace frames, class and file
//! context, call neighbours — and file ranking from entity scores.
//! Offline and deterministic.

pub mod index;
pub mod query;
pub mod scaffold;
pub mod tools;

use crate::graph::EdgeKind;
use crate::parse::Kind;
use index::{name_key, DocMeta};
pub use index::{path_words, DocKey, Field, Reader, SearchError};
pub use query::{Frame, Query};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

const K1: f32 = 1.2;
const B: f32 = 0.75;
/// How many of the best documents lend score to their call neighbours.
const NEIGHBOUR_SOURCES: usize = 30;
/// How many of the best files have their path words scored.
const PATH_WORD_FILES: usize = 300;
/// The least score a class needs to lend context to its methods.
const CONTEXT_MIN: f32 = 0.1;
/// Weight of embedding neighbours.
const DENSE_WEIGHT: f32 = 0.3;
/// How many functions a ranking lists at most.
pub const RANKED_FUNCTIONS: usize = 200;

/// How much each component weighs. Set by hand on the dev sets; see
/// `rpg eval --ablate`.
#[derive(Debug, Clone, Copy)]
pub struct Weights {
    /// An entity whose bare name the issue mentions.
    pub name: f32,
    /// An entity whose qualified name (`Class.method`) the issue mentions.
    pub dotted_name: f32,
    /// Every entity of a file a stack frame points into.
    pub frame_file: f32,
    /// The function a stack frame names.
    pub frame_function: f32,
    /// Every entity of a file the issue names.
    pub path_mention: f32,
    /// Share of a class's score its methods inherit.
    pub class_context: f32,
    /// Share of a strong hit's score its callers and callees gain.
    pub neighbour: f32,
    /// Factor on test code, per entity and per file.
    pub test_entity: f32,
    pub test_file: f32,
    /// File score: α·best + (1−α)·mean of the top 3 (RepoNav).
    pub alpha: f32,
    /// Per word a file's path shares with the issue.
    pub path_word: f32,
    /// Share of its directory's score (mean of the directory's best three
    /// files) a file gains.
    pub dir: f32,
    /// An entity among the embedding's nearest, scaled by its cosine
    /// relative to the nearest one's.
    pub dense: f32,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            name: 0.3,
            dotted_name: 0.6,
            frame_file: 0.05,
            frame_function: 0.8,
            path_mention: 0.25,
            class_context: 0.3,
            neighbour: 0.1,
            test_entity: 0.3,
            test_file: 0.5,
            alpha: 0.5,
            path_word: 0.05,
            dir: 0.2,
            dense: DENSE_WEIGHT,
        }
    }
}

/// Components `locate` combines; each can be switched off for ablations.
#[derive(Debug, Clone, Copy)]
pub struct Switches {
    pub w: Weights,
    pub names: bool,
    pub frames: bool,
    pub context: bool,
    pub neighbours: bool,
    pub test_penalty: bool,
    pub paths: bool,
    /// Files gain from the strength of their directory. Off by default.
    pub dirs: bool,
    /// Functions: reciprocal-rank fusion (k = 60) of the all-fields and
    /// the names-and-features rankings. Off by default.
    pub fusion: bool,
    /// Entities near the issue in embedding space gain (when the query
    /// carries neighbours; see [`Query::dense`]).
    pub dense: bool,
    /// Functions: reciprocal-rank fusion (k = 60) of the ranking with the
    /// embedding neighbours, instead of adding their similarity to scores.
    pub dense_rrf: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Switches {
            w: Weights::default(),
            names: true,
            frames: true,
            context: true,
            neighbours: true,
            test_penalty: true,
            paths: true,
            // Directory strength was neutral on the Python dev set and cost
            // file Hit@1 on the Rust one (0.448 -> 0.405): opt-in.
            dirs: false,
            // Fusing in the names-and-features ranking lowered function
            // Hit@5 on the Python dev set (0.600 -> 0.525): opt-in.
            fusion: false,
            dense: true,
            dense_rrf: false,
        }
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

/// The entity that best holds lines `start..=end`: the one overlapping
/// them most, the innermost on ties. Line numbers quoted in issues come
/// from nearby versions, so an overlap is enough.
fn holder(docs: &[DocMeta], start: u32, end: u32) -> Option<usize> {
    docs.iter()
        .enumerate()
        .filter_map(|(i, d)| {
            let overlap = end.min(d.end_line) as i64 - start.max(d.start_line) as i64 + 1;
            (overlap > 0).then_some((overlap, -((d.end_line - d.start_line) as i64), i))
        })
        .max()
        .map(|(_, _, i)| i)
}

/// A document the query touched.
struct Scored {
    id: String,
    path: String,
    kind: Kind,
    start_line: u32,
    end_line: u32,
}

impl Scored {
    fn hit(self, score: f32) -> Hit {
        Hit {
            qualname: crate::graph::split_id(&self.id).1.to_string(),
            id: self.id,
            path: self.path,
            kind: self.kind,
            start_line: self.start_line,
            end_line: self.end_line,
            score,
        }
    }

    fn of(r: &Reader, key: DocKey) -> Result<Scored, SearchError> {
        let f = r.file(key.0)?;
        let d = &f.docs[key.1 as usize];
        Ok(Scored {
            id: f.id(key.1),
            path: f.path.clone(),
            kind: d.kind,
            start_line: d.start_line,
            end_line: d.end_line,
        })
    }
}

/// BM25 over one field, normalised so the best document scores 1.
fn bm25(r: &Reader, q: &Query, field: Field) -> Result<FxHashMap<DocKey, f32>, SearchError> {
    let n = r.meta.docs as f32;
    let avg = r.meta.avg_len(field).max(1e-6);
    let mut scores: FxHashMap<DocKey, f32> = FxHashMap::default();
    for (term, qw) in &q.terms {
        let list = r.postings(field, term)?;
        if list.is_empty() {
            continue;
        }
        let df = list.len() as f32;
        let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
        // Declaring a flag is definitional: the long option table that
        // declares `--collect-only` is no less about it for declaring fifty.
        let b = if term.starts_with("--") { 0.0 } else { B };
        for (f, l, tf, len) in list {
            let norm = tf * (K1 + 1.0) / (tf + K1 * (1.0 - b + b * len / avg));
            *scores.entry((f, l)).or_default() += qw * idf * norm;
        }
    }
    let max = scores.values().cloned().fold(0.0f32, f32::max).max(1e-6);
    for x in scores.values_mut() {
        *x /= max;
    }
    Ok(scores)
}

/// Rank files and entities for the issue text in `q`.
pub fn rank(r: &Reader, q: &Query, sw: Switches) -> Result<Ranking, SearchError> {
    if sw.dense_rrf && !q.dense.is_empty() {
        let lexical = rank_field(r, q, Switches { dense: false, ..sw }, Field::All)?;
        let mut near = Vec::new();
        for (id, cos) in &q.dense {
            if let Some(k) = r.doc_of(id)? {
                let s = Scored::of(r, k)?;
                if s.kind == Kind::Class {
                    continue;
                }
                near.push(s.hit(*cos));
            }
        }
        let mut all = lexical;
        all.functions = fuse(all.functions, near);
        return Ok(all);
    }
    let mut all = rank_field(r, q, sw, Field::All)?;
    if sw.fusion {
        let features = rank_field(r, q, sw, Field::Features)?;
        all.functions = fuse(all.functions, features.functions);
    }
    Ok(all)
}

/// Reciprocal-rank fusion's constant: each list gives its hit at `rank`
/// (0-based) `1 / (k + rank + 1)`, as Cormack et al. set it.
pub const RRF_K: f32 = 60.0;

/// What a hit at `rank` (0-based) adds in reciprocal-rank fusion.
pub fn rrf(rank: usize) -> f32 {
    1.0 / (RRF_K + rank as f32 + 1.0)
}

/// Reciprocal-rank fusion (k = 60) of two function rankings; a hit keeps
/// the span and fields of its first appearance, its score is the fused one.
fn fuse(a: Vec<Hit>, b: Vec<Hit>) -> Vec<Hit> {
    let mut by_id: BTreeMap<String, Hit> = BTreeMap::new();
    let mut fused: BTreeMap<String, f32> = BTreeMap::new();
    for list in [a, b] {
        for (rank, h) in list.into_iter().enumerate() {
            *fused.entry(h.id.clone()).or_default() += rrf(rank);
            by_id.entry(h.id.clone()).or_insert(h);
        }
    }
    let mut out: Vec<Hit> = by_id
        .into_values()
        .map(|mut h| {
            h.score = fused[&h.id];
            h
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    out
}

/// [`rank`], matching the query against one field.
pub fn rank_field(
    r: &Reader,
    q: &Query,
    sw: Switches,
    field: Field,
) -> Result<Ranking, SearchError> {
    let mut base = bm25(r, q, field)?;
    if sw.names {
        add_names(r, q, sw, &mut base)?;
    }
    if (sw.frames && !q.frames.is_empty()) || (sw.paths && !q.paths.is_empty()) {
        add_frames_and_paths(r, q, sw, &mut base)?;
    }
    // Embedding neighbours reorder what the words found; alone they are
    // not a match: every issue has nearest neighbours.
    if !base.values().any(|s| *s > 0.0) {
        return Ok(Ranking {
            files: Vec::new(),
            functions: Vec::new(),
        });
    }
    if sw.dense && !q.dense.is_empty() {
        add_dense(r, q, sw, &mut base)?;
    }
    let mut scores = base.clone();
    if sw.context {
        add_class_context(r, sw, &base, &mut scores)?;
    }
    // Only the best documents need names; everything else is scored by key.
    let mut named: FxHashMap<DocKey, Scored> = FxHashMap::default();
    if sw.neighbours {
        add_neighbours(r, sw, &mut scores, &mut named)?;
    }
    let paths = r.paths_by_num()?;
    let is_test: FxHashMap<u32, bool> = paths
        .iter()
        .map(|(n, p)| (*n, crate::graph::is_test_path(p)))
        .collect();
    if sw.test_penalty {
        for (k, x) in scores.iter_mut() {
            if is_test.get(&k.0) == Some(&true) {
                *x *= sw.w.test_entity;
            }
        }
    }
    let files = rank_files(q, sw, &scores, &paths, &is_test);
    let functions = rank_functions(r, &scores, &mut named)?;
    Ok(Ranking { files, functions })
}

/// Names the issue mentions: a bare identifier boosts every entity of that
/// name, a dotted one only the entity whose qualname it spells.
fn add_names(
    r: &Reader,
    q: &Query,
    sw: Switches,
    base: &mut FxHashMap<DocKey, f32>,
) -> Result<(), SearchError> {
    for ident in &q.identifiers {
        let ident = ident.replace("::", ".").to_lowercase();
        match ident.rsplit_once('.') {
            None if ident.len() > 3 => {
                for k in r.named(&ident)? {
                    *base.entry(k).or_default() += sw.w.name;
                }
            }
            Some((_, last)) if !last.is_empty() => {
                for k in r.named(last)? {
                    let f = r.file(k.0)?;
                    let qual = f.docs[k.1 as usize].qualname.replace("::", ".");
                    if qual.to_lowercase() == ident {
                        *base.entry(k).or_default() += sw.w.dotted_name;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Embedding neighbours: each gains its cosine relative to the best one.
fn add_dense(
    r: &Reader,
    q: &Query,
    sw: Switches,
    base: &mut FxHashMap<DocKey, f32>,
) -> Result<(), SearchError> {
    let best = q
        .dense
        .iter()
        .map(|d| d.1)
        .fold(f32::MIN, f32::max)
        .max(1e-6);
    for (id, cos) in &q.dense {
        if let Some(k) = r.doc_of(id)? {
            *base.entry(k).or_default() += sw.w.dense * (cos / best).max(0.0);
        }
    }
    Ok(())
}

/// Stack-trace frames and mentioned paths: every entity of a named file
/// gains, and the entity a frame names (or whose lines it gives) more.
fn add_frames_and_paths(
    r: &Reader,
    q: &Query,
    sw: Switches,
    base: &mut FxHashMap<DocKey, f32>,
) -> Result<(), SearchError> {
    for (path, &num) in r.paths()? {
        let frames: Vec<&Frame> = q
            .frames
            .iter()
            .filter(|f| sw.frames && path_matches(&f.path, path))
            .collect();
        let mentioned = sw.paths
            && q.paths
                .iter()
                .any(|p| path_matches(p.split(':').next().unwrap_or(p), path));
        if frames.is_empty() && !mentioned {
            continue;
        }
        let f = r.file(num)?;
        // A frame with lines but no function name (a Rust panic, a
        // permalink) points at the entity that holds those lines.
        let at_lines: Vec<Option<usize>> = frames
            .iter()
            .map(|fr| match fr.function {
                None => fr
                    .line
                    .and_then(|l| holder(&f.docs, l, fr.end_line.unwrap_or(l))),
                Some(_) => None,
            })
            .collect();
        for (i, d) in f.docs.iter().enumerate() {
            let name = name_key(&d.qualname);
            let mut add = if mentioned { sw.w.path_mention } else { 0.0 };
            for (fr, at) in frames.iter().zip(&at_lines) {
                add += sw.w.frame_file;
                let named = fr.function.as_deref().map(str::to_lowercase).as_deref() == Some(&name);
                if named || *at == Some(i) {
                    add += sw.w.frame_function;
                }
            }
            *base.entry((num, i as u16)).or_default() += add;
        }
    }
    Ok(())
}

/// Class context: a method inherits part of its class's score. Only strong
/// classes lend much; looking at every hit would read the documents of
/// nearly every file.
fn add_class_context(
    r: &Reader,
    sw: Switches,
    base: &FxHashMap<DocKey, f32>,
    scores: &mut FxHashMap<DocKey, f32>,
) -> Result<(), SearchError> {
    let mut hit: Vec<(DocKey, f32)> = base
        .iter()
        .filter(|(_, s)| **s >= CONTEXT_MIN)
        .map(|(k, s)| (*k, *s))
        .collect();
    hit.sort_by_key(|(k, _)| *k);
    for ((num, local), s) in hit {
        let f = r.file(num)?;
        if s <= 0.0 || f.docs[local as usize].kind != Kind::Class {
            continue;
        }
        for (i, d) in f.docs.iter().enumerate() {
            if d.parent == Some(local) {
                *scores.entry((num, i as u16)).or_default() += sw.w.class_context * s;
            }
        }
    }
    Ok(())
}

/// The `n` best documents (more on a tie with the last), best first, named
/// in `named` as they are met.
fn top_docs(
    r: &Reader,
    scores: &FxHashMap<DocKey, f32>,
    named: &mut FxHashMap<DocKey, Scored>,
    n: usize,
) -> Result<Vec<DocKey>, SearchError> {
    let mut all: Vec<(DocKey, f32)> = scores
        .iter()
        .filter(|(_, s)| **s > 0.0)
        .map(|(k, s)| (*k, *s))
        .collect();
    if all.len() > n {
        all.select_nth_unstable_by(n - 1, |a, b| b.1.total_cmp(&a.1));
        let cut = all[n - 1].1;
        // Keep ties with the last place, so the cut never depends on
        // file numbers, which depend on history.
        let mut rest = all.split_off(n);
        rest.retain(|x| x.1 >= cut);
        all.extend(rest);
    }
    for (k, _) in &all {
        if !named.contains_key(k) {
            named.insert(*k, Scored::of(r, *k)?);
        }
    }
    all.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| named[&a.0].id.cmp(&named[&b.0].id))
    });
    Ok(all.into_iter().map(|x| x.0).collect())
}

/// One hop along calls: the callers and callees of strong hits gain a
/// little.
fn add_neighbours(
    r: &Reader,
    sw: Switches,
    scores: &mut FxHashMap<DocKey, f32>,
    named: &mut FxHashMap<DocKey, Scored>,
) -> Result<(), SearchError> {
    let mut bonus: BTreeMap<String, f32> = BTreeMap::new();
    let mut out: HashMap<String, Vec<crate::graph::Edge>> = HashMap::new();
    let mut inbound: HashMap<String, Vec<crate::graph::Edge>> = HashMap::new();
    for k in top_docs(r, scores, named, NEIGHBOUR_SOURCES)?
        .into_iter()
        .take(NEIGHBOUR_SOURCES)
    {
        let s = &named[&k];
        let gain = sw.w.neighbour * scores[&k];
        if !out.contains_key(&s.path) {
            let block = r.store.file_block(&s.path)?;
            out.insert(s.path.clone(), block.map(|b| b.out).unwrap_or_default());
            inbound.insert(s.path.clone(), r.store.inbound(&s.path)?);
        }
        let calls = out[&s.path]
            .iter()
            .filter(|e| e.kind == EdgeKind::Invokes && e.src == s.id)
            .map(|e| &e.dst);
        let callers = inbound[&s.path]
            .iter()
            .filter(|e| e.kind == EdgeKind::Invokes && e.dst == s.id)
            .map(|e| &e.src);
        for other in calls.chain(callers) {
            let b = bonus.entry(other.clone()).or_default();
            *b = b.max(gain);
        }
    }
    for (id, b) in bonus {
        if let Some(k) = r.doc_of(&id)? {
            *scores.entry(k).or_default() += b;
        }
    }
    Ok(())
}

/// Files: α·best + (1−α)·mean of the top 3 (RepoNav), plus what the path's
/// own words share with the issue; optionally the strength of the
/// directory; test files down-weighted.
fn rank_files(
    q: &Query,
    sw: Switches,
    scores: &FxHashMap<DocKey, f32>,
    paths: &HashMap<u32, String>,
    is_test: &FxHashMap<u32, bool>,
) -> Vec<FileHit> {
    let mut per_file: FxHashMap<u32, Vec<f32>> = FxHashMap::default();
    for (k, x) in scores {
        if *x > 0.0 {
            per_file.entry(k.0).or_default().push(*x);
        }
    }
    let mut files: Vec<(u32, FileHit)> = per_file
        .into_iter()
        .filter_map(|(num, mut v)| {
            v.sort_by(|a, b| b.total_cmp(a));
            let top: Vec<f32> = v.iter().take(3).copied().collect();
            let mean = top.iter().sum::<f32>() / top.len() as f32;
            let score = sw.w.alpha * v[0] + (1.0 - sw.w.alpha) * mean;
            let evidence = v.iter().filter(|x| **x > 0.05).count();
            let path = paths.get(&num)?.clone();
            Some((
                num,
                FileHit {
                    path,
                    score,
                    evidence,
                },
            ))
        })
        .collect();
    let order = |files: &mut Vec<(u32, FileHit)>| {
        files.sort_by(|a, b| {
            b.1.score
                .total_cmp(&a.1.score)
                .then_with(|| a.1.path.cmp(&b.1.path))
        })
    };
    if sw.paths {
        // Path words can lift a file only so far: score them for the
        // files already near the top, not for every file with a hit.
        order(&mut files);
        for (_, f) in files.iter_mut().take(PATH_WORD_FILES) {
            let hits = path_words(&f.path)
                .iter()
                .filter(|w| q.terms.contains_key(*w))
                .count();
            f.score += sw.w.path_word * hits as f32;
        }
    }
    for (num, f) in files.iter_mut() {
        if sw.test_penalty && is_test.get(num) == Some(&true) {
            f.score *= sw.w.test_file;
        }
    }
    order(&mut files);
    let mut files: Vec<FileHit> = files.into_iter().map(|(_, f)| f).collect();
    if sw.dirs {
        add_directory_strength(sw, &mut files);
    }
    files.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    files
}

/// A file in a directory of strong files is likelier than a lone hit.
fn add_directory_strength(sw: Switches, files: &mut [FileHit]) {
    let mut per_dir: BTreeMap<String, Vec<f32>> = BTreeMap::new();
    for f in files.iter() {
        per_dir
            .entry(crate::graph::dir_of(&f.path).to_string())
            .or_default()
            .push(f.score);
    }
    let strength: BTreeMap<String, f32> = per_dir
        .into_iter()
        .map(|(d, mut v)| {
            v.sort_by(|a, b| b.total_cmp(a));
            let top = &v[..v.len().min(3)];
            (d, top.iter().sum::<f32>() / top.len() as f32)
        })
        .collect();
    for f in files.iter_mut() {
        f.score += sw.w.dir * strength[crate::graph::dir_of(&f.path)];
    }
}

/// Functions, best first. Redefinitions (`@overload` stubs, cfg twins) are
/// one function to a reader: listed once, under the plain id, with the
/// best-scoring span.
fn rank_functions(
    r: &Reader,
    scores: &FxHashMap<DocKey, f32>,
    named: &mut FxHashMap<DocKey, Scored>,
) -> Result<Vec<Hit>, SearchError> {
    let mut functions: Vec<Hit> = top_docs(r, scores, named, RANKED_FUNCTIONS)?
        .into_iter()
        .filter_map(|k| {
            let s = named.remove(&k)?;
            (s.kind != Kind::Class).then(|| s.hit(scores[&k]))
        })
        .collect();
    functions.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    let mut seen = BTreeSet::new();
    functions.retain_mut(|h| {
        if h.id.contains('#') {
            h.id = strip_collisions(&h.id);
            h.qualname = strip_collisions(&h.qualname);
        }
        seen.insert(h.id.clone())
    });
    Ok(functions)
}

/// What `locate` answers: both rankings, cut to `top_k`, and the scaffold.
#[derive(Debug, Clone, Serialize)]
pub struct Located {
    pub commit: String,
    pub files: Vec<FileHit>,
    pub functions: Vec<Hit>,
    pub scaffold: scaffold::Scaffold,
}

/// Rank for an issue's text and build the scaffold; the index must be
/// ready (see [`index::ready`]).
pub fn locate(
    store: &crate::store::Store,
    text: &str,
    sw: Switches,
    top_k: usize,
) -> Result<Located, SearchError> {
    locate_query(store, Query::parse(text), sw, top_k)
}

/// Locate an issue the way every surface does — the CLI, MCP and the bot:
/// the lexical ranking, plus embedding neighbours once `rpg embed` has run
/// in this repository (and `sw.dense` allows).
pub fn locate_issue(
    repo: &crate::git::Repo,
    store: &crate::store::Store,
    text: &str,
    sw: Switches,
    top_k: usize,
) -> Result<Located, SearchError> {
    let mut q = Query::parse(text);
    if sw.dense {
        q.dense = crate::embed::vectors::dense_neighbours(repo, store, text);
    }
    locate_query(store, q, sw, top_k)
}

/// [`locate`] for an already analysed query (e.g. one given embedding
/// neighbours).
pub fn locate_query(
    store: &crate::store::Store,
    q: Query,
    sw: Switches,
    top_k: usize,
) -> Result<Located, SearchError> {
    let reader = Reader::open(store)?;
    let t = std::time::Instant::now();
    let mut ranking = rank(&reader, &q, sw)?;
    crate::timing("locate rank", t);
    let scaffold = scaffold::build(store, &ranking)?;
    crate::timing("locate scaffold", t);
    ranking.files.truncate(top_k);
    ranking.functions.truncate(top_k);
    Ok(Located {
        commit: store.meta()?.commit,
        files: ranking.files,
        functions: ranking.functions,
        scaffold,
    })
}

/// `a.py:f#2` → `a.py:f`; `A#2.m` → `A.m`.
pub(crate) fn strip_collisions(id: &str) -> String {
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
