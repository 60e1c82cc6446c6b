//! The localization benchmark behind `rpg eval`: replay a case file over
//! real history — index the first case's commit, evolve with `update` to
//! each later one — and score what `locate` ranks against the gold files
//! and functions.
//!
//! Each repository is indexed in a scratch repository that borrows its
//! objects, so the user's checkout and its `.rpg/` are never touched.

use crate::config::Config;
use crate::encode;
use crate::evolve::{self, Target, UpdateOptions};
use crate::git::{GitError, Repo};
use crate::lift::offline::OfflineLifter;
use crate::progress::Silent;
use crate::search::{self, index, Reader, Switches};
use crate::store::{RpgDir, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub mod fit;
pub mod history;

pub const KS: [usize; 4] = [1, 3, 5, 10];

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}, line {line}: {message}")]
    BadCase {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error(
        "no repository given holds commit {commit} of case {case}; pass its clone with --repo"
    )]
    NoRepository { case: String, commit: String },
    #[error("{0} has no cases")]
    Empty(PathBuf),
    #[error("cannot read the history: {0}")]
    BadHistory(String),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Embed(#[from] crate::embed::EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Encode(#[from] encode::EncodeError),
    #[error(transparent)]
    Evolve(#[from] evolve::EvolveError),
}

/// One issue with its gold answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Case {
    pub id: String,
    pub repo: String,
    pub base_commit: String,
    pub query: String,
    #[serde(default)]
    pub gold_files: Vec<String>,
    /// Where a case file separates source files from others (the Rust set).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gold_files_rs: Vec<String>,
    #[serde(default)]
    pub gold_functions: Vec<String>,
    /// The fix a case from history was made of (`rpg eval --history`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix_commit: Option<String>,
    /// The set the case belongs to: its case file's stem (`rust_dev`), or
    /// the repository whose history made it. Not part of the case's text.
    #[serde(skip)]
    pub set: String,
}

impl Case {
    fn gold_files(&self) -> &[String] {
        if self.gold_files_rs.is_empty() {
            &self.gold_files
        } else {
            &self.gold_files_rs
        }
    }
}

/// Read a JSON-lines case file; blank lines are skipped.
pub fn load_cases(path: &Path) -> Result<Vec<Case>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let set = path
        .file_stem()
        .map_or_else(|| "cases".into(), |s| s.to_string_lossy().into_owned());
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut case: Case = serde_json::from_str(line).map_err(|e| EvalError::BadCase {
            path: path.to_path_buf(),
            line: i + 1,
            message: e.to_string(),
        })?;
        case.set = set.clone();
        if gix::ObjectId::from_hex(case.base_commit.as_bytes()).is_err() {
            return Err(EvalError::BadCase {
                path: path.to_path_buf(),
                line: i + 1,
                message: format!("base_commit {:?} is not a commit id", case.base_commit),
            });
        }
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(EvalError::Empty(path.to_path_buf()));
    }
    Ok(cases)
}

/// Function ids compare after dropping a trailing `.__init__`: a Python
/// constructor stands for its class.
fn norm_fn(f: &str) -> String {
    // Redefinitions and overloads are one function to a reader (the
    // ranking lists `f#2` as `f`), and to the dev data's own rule.
    crate::search::strip_collisions(f.strip_suffix(".__init__").unwrap_or(f))
}

/// Scores of one ranked list against its gold.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scores {
    pub hit: [f64; 4],
    pub acc: [f64; 4],
    pub recall: [f64; 4],
    pub mrr: f64,
}

/// Scores of `ranked` against `gold`, or `None` when there is no gold.
pub fn score(ranked: &[String], gold: &[String]) -> Option<Scores> {
    let items: Vec<&[String]> = ranked.iter().map(std::slice::from_ref).collect();
    score_items(&items, gold)
}

/// [`score`] for a ranking whose places may each stand for several ids:
/// a function listed once for all its copies (see `search::copies`)
/// finds every one of them that is gold.
pub fn score_items<I: AsRef<[String]>>(ranked: &[I], gold: &[String]) -> Option<Scores> {
    if gold.is_empty() {
        return None;
    }
    let mut gold: Vec<String> = gold.iter().map(|g| norm_fn(g)).collect();
    gold.sort();
    gold.dedup();
    let ranked: Vec<Vec<String>> = ranked
        .iter()
        .map(|item| item.as_ref().iter().map(|r| norm_fn(r)).collect())
        .collect();
    let mut s = Scores::default();
    for (i, k) in KS.iter().enumerate() {
        let top = &ranked[..ranked.len().min(*k)];
        let found = gold
            .iter()
            .filter(|g| top.iter().any(|item| item.contains(g)))
            .count();
        s.hit[i] = (found > 0) as u8 as f64;
        s.acc[i] = (found == gold.len()) as u8 as f64;
        s.recall[i] = found as f64 / gold.len() as f64;
    }
    s.mrr = ranked
        .iter()
        .position(|item| item.iter().any(|r| gold.contains(r)))
        .map(|p| 1.0 / (p as f64 + 1.0))
        .unwrap_or(0.0);
    Some(s)
}

/// Means of many [`Scores`], how many there were, and a bootstrap 95%
/// interval for each mean: with tens of cases a mean alone overstates
/// what it knows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub n: usize,
    #[serde(flatten)]
    pub mean: Scores,
    /// Lower and upper ends of each mean's interval.
    pub ci95: [Scores; 2],
}

/// Resamples behind each interval.
const BOOTSTRAP: usize = 2000;

impl Summary {
    pub fn of<'a>(all: impl IntoIterator<Item = &'a Scores>) -> Summary {
        let all: Vec<&Scores> = all.into_iter().collect();
        let mean = mean_of(all.iter().copied());
        Summary {
            n: all.len(),
            ci95: bootstrap(&all, &mean),
            mean,
        }
    }
}

fn mean_of<'a>(all: impl IntoIterator<Item = &'a Scores>) -> Scores {
    let mut sum = Scores::default();
    let mut n = 0;
    for s in all {
        n += 1;
        for i in 0..KS.len() {
            sum.hit[i] += s.hit[i];
            sum.acc[i] += s.acc[i];
            sum.recall[i] += s.recall[i];
        }
        sum.mrr += s.mrr;
    }
    let d = n.max(1) as f64;
    for i in 0..KS.len() {
        sum.hit[i] /= d;
        sum.acc[i] /= d;
        sum.recall[i] /= d;
    }
    sum.mrr /= d;
    sum
}

/// Percentile bootstrap of every mean: cases drawn with replacement, the
/// 2.5th and 97.5th percentiles of the resampled means. Seeded, so the
/// same cases always give the same interval.
fn bootstrap(all: &[&Scores], mean: &Scores) -> [Scores; 2] {
    if all.len() < 2 {
        return [mean.clone(), mean.clone()];
    }
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64 ^ all.len() as u64;
    let mut next = move || {
        // xorshift64*: enough for resampling, and the same everywhere.
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let means: Vec<Scores> = (0..BOOTSTRAP)
        .map(|_| mean_of((0..all.len()).map(|_| all[(next() % all.len() as u64) as usize])))
        .collect();
    let pick = |get: &dyn Fn(&Scores) -> f64| -> [f64; 2] {
        let mut xs: Vec<f64> = means.iter().map(get).collect();
        xs.sort_by(f64::total_cmp);
        let at = |q: f64| xs[((xs.len() - 1) as f64 * q).round() as usize];
        [at(0.025), at(0.975)]
    };
    let mut lo = Scores::default();
    let mut hi = Scores::default();
    for i in 0..KS.len() {
        [lo.hit[i], hi.hit[i]] = pick(&|s| s.hit[i]);
        [lo.acc[i], hi.acc[i]] = pick(&|s| s.acc[i]);
        [lo.recall[i], hi.recall[i]] = pick(&|s| s.recall[i]);
    }
    [lo.mrr, hi.mrr] = pick(&|s| s.mrr);
    [lo, hi]
}

/// A named set of [`Switches`]: the full ranker, or one with parts off.
#[derive(Debug, Clone)]
pub struct Variant {
    pub name: String,
    pub switches: Switches,
}

/// The name of the variant that is BM25 alone.
pub const BM25: &str = "bm25 only";

/// The full ranker, BM25 alone, and the full ranker without each part.
pub fn ablations() -> Vec<Variant> {
    let full = Switches::default();
    let mut out = vec![
        Variant {
            name: "full".into(),
            switches: full,
        },
        Variant {
            name: BM25.into(),
            switches: Switches {
                w: full.w,
                names: false,
                frames: false,
                context: false,
                neighbours: false,
                test_penalty: false,
                paths: false,
                modules: false,
                variants: false,
                size: false,
                literal: false,
                dirs: false,
                fusion: false,
                dense: false,
                dense_rrf: false,
                recent: false,
                whole_files: false,
            },
        },
    ];
    type Off = fn(&mut Switches);
    let parts: [(&str, Off); 13] = [
        ("dense", |s| s.dense = false),
        ("names", |s| s.names = false),
        ("frames", |s| s.frames = false),
        ("context", |s| s.context = false),
        ("neighbours", |s| s.neighbours = false),
        ("test penalty", |s| s.test_penalty = false),
        ("paths", |s| s.paths = false),
        ("modules", |s| s.modules = false),
        ("variants", |s| s.variants = false),
        ("size", |s| s.size = false),
        ("literal", |s| s.literal = false),
        ("recent changes", |s| s.recent = false),
        ("whole files", |s| s.whole_files = false),
    ];
    for (name, off) in parts {
        let mut s = full;
        off(&mut s);
        out.push(Variant {
            name: format!("without {name}"),
            switches: s,
        });
    }
    for w in [0.15, 0.5] {
        out.push(Variant {
            name: format!("dense weight {w}"),
            switches: Switches {
                w: search::Weights { dense: w, ..full.w },
                ..full
            },
        });
    }
    out.push(Variant {
        name: "dense by rrf".into(),
        switches: Switches {
            dense_rrf: true,
            ..full
        },
    });
    out.push(Variant {
        name: "with directories".into(),
        switches: Switches { dirs: true, ..full },
    });
    out.push(Variant {
        name: "with fusion".into(),
        switches: Switches {
            fusion: true,
            ..full
        },
    });
    out
}

/// What one case scored under one variant.
#[derive(Debug, Clone, Serialize)]
pub struct CaseResult {
    pub id: String,
    pub repo: String,
    pub file: Option<Scores>,
    pub function: Option<Scores>,
    pub millis: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct VariantReport {
    pub name: String,
    pub file: BTreeMap<String, Summary>,
    pub function: BTreeMap<String, Summary>,
    pub latency_ms: Percentiles,
    pub cases: Vec<CaseResult>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub max: f64,
}

impl Percentiles {
    pub fn of(mut xs: Vec<f64>) -> Percentiles {
        if xs.is_empty() {
            return Percentiles::default();
        }
        xs.sort_by(f64::total_cmp);
        let at = |q: f64| xs[((xs.len() - 1) as f64 * q).round() as usize];
        Percentiles {
            p50: at(0.5),
            p90: at(0.9),
            p95: at(0.95),
            max: *xs.last().unwrap_or(&0.0),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub cases: usize,
    pub variants: Vec<VariantReport>,
    /// Cases that could not be run (a missing object, a broken commit),
    /// left out of every figure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<CaseError>,
    /// Each case's evidence under the first variant, when asked for.
    #[serde(skip)]
    pub samples: Vec<fit::Sample>,
}

/// Called before each case, for progress display.
pub trait Observer {
    fn case(&self, _done: usize, _total: usize, _case: &Case) {}
}

pub struct Quiet;
impl Observer for Quiet {}

/// Run every case under every variant. `repos` are clones (or directories
/// of clones); each case goes to the one that holds its commit. `scratch`
/// is an empty directory to work in. With `collect`, also keep each
/// case's evidence for fitting.
pub fn run(
    cases: &[Case],
    repos: &[PathBuf],
    variants: &[Variant],
    scratch: &Path,
    observer: &dyn Observer,
    mut embedder: Option<&mut crate::embed::Embedder>,
    collect: bool,
) -> Result<Report, EvalError> {
    let mut sources: Vec<Repo> = Vec::new();
    for r in repos {
        match Repo::discover(r) {
            Ok(repo) if repo.workdir().canonicalize().ok() == r.canonicalize().ok() => {
                sources.push(repo)
            }
            _ => {
                // A directory of clones.
                let entries = std::fs::read_dir(r).map_err(|source| EvalError::Io {
                    path: r.clone(),
                    source,
                })?;
                let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
                dirs.sort();
                for d in dirs {
                    if d.join(".git").exists() {
                        if let Ok(repo) = Repo::discover(&d) {
                            sources.push(repo);
                        }
                    }
                }
            }
        }
    }
    // Group by the repository holding each case's commit.
    let mut groups: BTreeMap<usize, Vec<(i64, &Case)>> = BTreeMap::new();
    for c in cases {
        let id = gix::ObjectId::from_hex(c.base_commit.as_bytes()).map_err(|_| {
            EvalError::NoRepository {
                case: c.id.clone(),
                commit: c.base_commit.clone(),
            }
        })?;
        let Some(i) = sources.iter().position(|s| s.has_commit(id)) else {
            return Err(EvalError::NoRepository {
                case: c.id.clone(),
                commit: c.base_commit.clone(),
            });
        };
        groups
            .entry(i)
            .or_default()
            .push((sources[i].commit_time(id)?, c));
    }
    let mut per_variant: Vec<Vec<CaseResult>> = vec![Vec::new(); variants.len()];
    let mut samples = Vec::new();
    let mut errors = Vec::new();
    let mut done = 0;
    for (i, mut group) in groups {
        group.sort_by(|a, b| (a.0, &a.1.id).cmp(&(b.0, &b.1.id)));
        let dir = scratch.join(format!("repo-{i}"));
        let repo = Repo::scratch(&sources[i], &dir)?;
        let rpg = RpgDir::new(repo.workdir())?;
        let config = Config::default();
        let vectors = match embedder {
            Some(_) => Some(crate::embed::vectors::Vectors::open(&rpg)?),
            None => None,
        };
        let mut first = true;
        for (_, case) in group {
            observer.case(done, cases.len(), case);
            done += 1;
            let run = Run {
                repo: &repo,
                rpg: &rpg,
                config: &config,
                variants,
                collect,
            };
            let dense_with = embedder.as_deref_mut().zip(vectors.as_ref());
            match run.case(case, first, dense_with) {
                Ok((results, sample)) => {
                    first = false;
                    for (v, r) in results.into_iter().enumerate() {
                        per_variant[v].push(r);
                    }
                    samples.extend(sample);
                }
                Err(e) => {
                    // Counted, said, and passed: the next case starts from
                    // a fresh init, whatever state this one left.
                    first = true;
                    errors.push(CaseError {
                        id: case.id.clone(),
                        why: e.to_string(),
                    });
                }
            }
        }
    }
    let variants = variants
        .iter()
        .zip(per_variant)
        .map(|(v, results)| {
            let summarize = |pick: fn(&CaseResult) -> Option<&Scores>| {
                let mut by: BTreeMap<String, Vec<&Scores>> = BTreeMap::new();
                for r in &results {
                    if let Some(s) = pick(r) {
                        by.entry("all".into()).or_default().push(s);
                        by.entry(r.repo.clone()).or_default().push(s);
                    }
                }
                by.into_iter()
                    .map(|(k, v)| (k, Summary::of(v)))
                    .collect::<BTreeMap<_, _>>()
            };
            VariantReport {
                name: v.name.clone(),
                file: summarize(|r| r.file.as_ref()),
                function: summarize(|r| r.function.as_ref()),
                latency_ms: Percentiles::of(results.iter().map(|r| r.millis).collect()),
                cases: results,
            }
        })
        .collect();
    Ok(Report {
        cases: cases.len(),
        variants,
        samples,
        errors,
    })
}

/// What one case needs: the scratch repository, its graph, the variants.
struct Run<'r> {
    repo: &'r Repo,
    rpg: &'r RpgDir,
    config: &'r Config,
    variants: &'r [Variant],
    collect: bool,
}

impl Run<'_> {
    /// Bring the graph to the case's commit (init for the first), then
    /// rank under each variant.
    fn case(
        &self,
        case: &Case,
        first: bool,
        dense_with: Option<(&mut crate::embed::Embedder, &crate::embed::vectors::Vectors)>,
    ) -> Result<(Vec<CaseResult>, Option<fit::Sample>), EvalError> {
        let (repo, rpg) = (self.repo, self.rpg);
        let commit =
            gix::ObjectId::from_hex(case.base_commit.as_bytes()).expect("checked when loaded");
        if first {
            let e = encode::encode(repo, self.config, commit, &OfflineLifter, &Silent)?;
            rpg.save(&e.graph, e.resolved)?;
        } else {
            evolve::update(
                repo,
                rpg,
                self.config,
                Target::commit(repo, commit)?,
                &OfflineLifter,
                &UpdateOptions::default(),
            )?;
        }
        let (store, _) = index::ready(rpg, rpg.open()?, repo)?;
        let mut dense = Vec::new();
        if let Some((e, vectors)) = dense_with {
            vectors.sync(&store, repo, e, &Silent)?;
            dense = crate::embed::vectors::neighbours(vectors, e, &case.query)?;
        }
        let reader = Reader::open(&store)?.with_sources(repo);
        // Neighbours come from the embedder eval holds, not the store's.
        let lexical = Switches {
            dense: false,
            ..Switches::default()
        };
        let mut cited = search::issue_query(repo, &store, &case.query, lexical)?;
        cited.dense = dense;
        let sample = match self.collect {
            true => {
                let sw = self
                    .variants
                    .first()
                    .map(|v| v.switches)
                    .unwrap_or_default();
                Some(fit::Sample::gather(&reader, case, cited.clone(), sw)?)
            }
            false => None,
        };
        let mut results = Vec::with_capacity(self.variants.len());
        for variant in self.variants {
            let t = Instant::now();
            let ranking = search::rank(&reader, &cited, variant.switches)?;
            let millis = t.elapsed().as_secs_f64() * 1000.0;
            let files: Vec<String> = ranking.files.into_iter().map(|f| f.path).collect();
            let fns: Vec<Vec<String>> = ranking
                .functions
                .into_iter()
                .map(|h| std::iter::once(h.id).chain(h.copies).collect())
                .collect();
            results.push(CaseResult {
                id: case.id.clone(),
                repo: case.repo.clone(),
                file: score(&files, case.gold_files()),
                function: score_items(&fns, &case.gold_functions),
                millis,
            });
        }
        Ok((results, sample))
    }
}

/// A case that could not be run, and why.
#[derive(Debug, Clone, Serialize)]
pub struct CaseError {
    pub id: String,
    pub why: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_place_that_stands_for_copies_finds_each_one_that_is_gold() {
        let gold = v(&["src/a.py:f", "dist/all.py:f", "src/b.py:g"]);
        let items = vec![
            v(&["x.py:h"]),
            v(&["src/a.py:f", "dist/all.py:f"]),
            v(&["src/b.py:g"]),
        ];
        let s = score_items(&items, &gold).unwrap();
        assert_eq!((s.hit[0], s.hit[1], s.acc[1]), (0.0, 1.0, 1.0));
        assert_eq!(s.mrr, 0.5);
        let only_copy = score_items(&items[..2], &v(&["dist/all.py:f"])).unwrap();
        assert_eq!(only_copy.acc[1], 1.0);
        assert!((score_items(&items[..2], &gold).unwrap().recall[1] - 2.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn scores_follow_the_definitions() {
        let s = score(&v(&["a", "b", "c", "d"]), &v(&["c", "z"])).unwrap();
        assert_eq!(s.hit, [0.0, 1.0, 1.0, 1.0]);
        assert_eq!(s.acc, [0.0; 4]);
        assert_eq!(s.recall, [0.0, 0.5, 0.5, 0.5]);
        assert!((s.mrr - 1.0 / 3.0).abs() < 1e-12);
        assert!(score(&v(&["a"]), &[]).is_none());
        // A Python constructor stands for its class.
        let s = score(&v(&["m.py:A"]), &v(&["m.py:A.__init__"])).unwrap();
        assert_eq!(s.mrr, 1.0);
        // A redefinition is its function: the ranking lists `f#2` as `f`,
        // and two gold redefinitions are one function to find.
        let s = score(&v(&["a.rb:A.f"]), &v(&["a.rb:A.f#2", "a.rb:A.f"])).unwrap();
        assert_eq!((s.hit[0], s.acc[0], s.mrr), (1.0, 1.0, 1.0));
        let s = score(&v(&["x.scala:C.m"]), &v(&["x.scala:C#2.m"])).unwrap();
        assert_eq!(s.mrr, 1.0);
    }

    #[test]
    fn every_mean_has_a_seeded_bootstrap_interval_around_it() {
        let of = |hits: &[u8]| {
            let scores: Vec<Scores> = hits
                .iter()
                .map(|h| Scores {
                    hit: [f64::from(*h); 4],
                    mrr: f64::from(*h) / 2.0,
                    ..Scores::default()
                })
                .collect();
            Summary::of(&scores)
        };
        let ten = of(&[1, 0, 1, 1, 0, 1, 1, 0, 1, 1]);
        let [lo, hi] = &ten.ci95;
        assert!(lo.hit[2] < ten.mean.hit[2] && ten.mean.hit[2] < hi.hit[2]);
        assert!(lo.mrr < ten.mean.mrr && ten.mean.mrr < hi.mrr);
        assert!((0.0..=1.0).contains(&lo.hit[2]) && (0.0..=1.0).contains(&hi.hit[2]));
        // The same cases, the same interval; more cases, a narrower one.
        assert_eq!(of(&[1, 0, 1, 1, 0, 1, 1, 0, 1, 1]).ci95[0].hit, lo.hit);
        let hundred = of(&[1, 0, 1, 1, 0, 1, 1, 0, 1, 1].repeat(10));
        let width = |s: &Summary| s.ci95[1].hit[2] - s.ci95[0].hit[2];
        assert!(width(&hundred) < width(&ten) / 2.0);
        // No spread, no interval.
        let same = of(&[1, 1, 1]);
        assert_eq!((same.ci95[0].hit[2], same.ci95[1].hit[2]), (1.0, 1.0));
    }

    #[test]
    fn percentiles_pick_ranks() {
        let p = Percentiles::of(vec![5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!((p.p50, p.max), (3.0, 5.0));
    }
}
