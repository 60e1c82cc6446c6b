//! Fitting the ranker's weights to evaluation cases, and judging a fit the
//! honest way: each repository scored by weights fitted on the others
//! only (leave-one-repository-out). Hand-set weights count as fitted too,
//! so the shipped ones are held to the same table.

use super::{score, score_items, Scores, Summary};
use crate::search::copies::{self, CopyKey};
use crate::search::weights::LIMITS;
use crate::search::{self, DocKey, Evidence, Known, Scored, Switches, Weights};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// One case, with what the index said about its issue.
#[derive(Debug, Clone)]
pub struct Sample {
    pub id: String,
    pub repo: String,
    /// The case set it came from (see [`super::Case::set`]).
    pub set: String,
    pub ev: Evidence,
    pub names: FxHashMap<DocKey, Scored>,
    /// The copy key of each named function with copies among them (see
    /// [`search::copies`]): a ranking lists copies once, and is scored so.
    pub copies: BTreeMap<String, CopyKey>,
    pub gold_files: Vec<String>,
    pub gold_functions: Vec<String>,
}

/// What one case scored.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub file: Option<Scores>,
    pub function: Option<Scores>,
}

impl Sample {
    /// What the index says about `case`'s issue, for scoring under many
    /// weightings near `sw`'s.
    pub fn gather(
        r: &search::Reader,
        case: &super::Case,
        q: search::Query,
        sw: Switches,
    ) -> Result<Sample, search::SearchError> {
        let (ev, names) = Evidence::gather_for_fitting(r, &q, sw)?;
        let copies = copies::copy_keys(
            r.store,
            names.values().map(|s| {
                let (path, qualname) = crate::graph::split_id(&s.id);
                (s.id.as_str(), path, qualname)
            }),
        )?
        .into_iter()
        .map(|(id, (key, _))| (id, key))
        .collect();
        Ok(Sample {
            id: case.id.clone(),
            repo: case.repo.clone(),
            set: case.set.clone(),
            ev,
            names,
            copies,
            gold_files: case.gold_files().to_vec(),
            gold_functions: case.gold_functions.clone(),
        })
    }

    pub fn outcome(&self, sw: Switches) -> Outcome {
        // Known names never fail; an error ranks nothing.
        let (files, functions) = match search::score(&self.ev, sw, &mut Known(&self.names)) {
            Ok(r) => (
                r.files.into_iter().map(|f| f.path).collect(),
                r.functions.into_iter().map(|h| h.id).collect(),
            ),
            Err(_) => (Vec::new(), Vec::new()),
        };
        Outcome {
            file: score(&files, &self.gold_files),
            function: score_items(&self.folded(functions), &self.gold_functions),
        }
    }

    /// `functions` with copies in one place, the best-ranked one's, as
    /// [`copies::fold`] lists them.
    fn folded(&self, functions: Vec<String>) -> Vec<Vec<String>> {
        let mut places: Vec<Vec<String>> = Vec::with_capacity(functions.len());
        let mut placed: BTreeMap<&CopyKey, usize> = BTreeMap::new();
        for id in functions {
            let Some(key) = self.copies.get(&id) else {
                places.push(vec![id]);
                continue;
            };
            match placed.get(key) {
                Some(&at) => places[at].push(id),
                None => {
                    placed.insert(key, places.len());
                    places.push(vec![id]);
                }
            }
        }
        places
    }
}

/// What fitting maximises, per case: Hit@5 of files and of functions,
/// plus half their MRR to tell apart weightings that tie on Hit@5.
fn value(o: &Outcome) -> f64 {
    [&o.file, &o.function]
        .into_iter()
        .flatten()
        .map(|s| s.hit[2] + 0.5 * s.mrr)
        .sum()
}

fn objective(samples: &[&Sample], sw: Switches) -> f64 {
    let total: f64 = samples.iter().map(|s| value(&s.outcome(sw))).sum();
    total / samples.len().max(1) as f64
}

/// Values to try for a weight now at `v`: off, and steps either side.
fn candidates(v: f32, max: f32) -> Vec<f32> {
    let mut c: Vec<f32> = if v > 0.0 {
        [0.0, 0.5, 0.75, 1.5, 2.0].iter().map(|f| v * f).collect()
    } else {
        vec![0.05, 0.1, 0.2, 0.4]
    };
    for x in c.iter_mut() {
        *x = ((*x * 1e4).round() / 1e4).min(max);
    }
    c.retain(|x| *x != v);
    c.dedup();
    c
}

/// Rounds of coordinate ascent at most.
const ROUNDS: usize = 4;

/// The weights worth fitting on `samples`, as indices into
/// [`LIMITS`]: all but directory strength, which stays off, and dense
/// only when the cases carry embedding neighbours. A non-empty `only`
/// narrows them to the weights it names, so one change can be judged
/// with everything else held where it ships.
pub fn params_for(samples: &[Sample], only: &[String]) -> Vec<usize> {
    let dense = samples
        .iter()
        .any(|s| s.ev.docs.values().any(|d| d.dense > 0.0));
    (0..LIMITS.len())
        .filter(|&p| only.is_empty() || only.iter().any(|n| n == LIMITS[p].0))
        .filter(|&p| match LIMITS[p].0 {
            "dir" => false,
            "dense" => dense,
            _ => true,
        })
        .collect()
}

/// Coordinate ascent from `start` over `params`: each weight in turn
/// takes whichever of its candidates scores best, until a round moves
/// nothing. Deterministic: the same samples give the same weights.
pub fn fit(samples: &[&Sample], start: Switches, params: &[usize]) -> Switches {
    let mut best_sw = start;
    let mut best = objective(samples, start);
    for _ in 0..ROUNDS {
        let mut moved = false;
        for &p in params {
            let v = *best_sw.w.clone().slot(p);
            for c in candidates(v, LIMITS[p].1) {
                let mut sw = best_sw;
                *sw.w.slot(p) = c;
                let j = objective(samples, sw);
                if j > best + 1e-9 {
                    (best, best_sw, moved) = (j, sw, true);
                }
            }
        }
        if !moved {
            break;
        }
    }
    best_sw
}

/// One repository held out: the weights fitted without it, and what its
/// cases scored under them.
#[derive(Debug, Clone, Serialize)]
pub struct Fold {
    pub repo: String,
    pub weights: Weights,
    pub outcomes: Vec<Outcome>,
}

/// Fit on every repository but one, score that one; for each repository.
/// Folds run on all cores.
pub fn leave_one_repo_out(samples: &[Sample], start: Switches, params: &[usize]) -> Vec<Fold> {
    let repos: Vec<String> = repos_of(samples);
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Fold>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(repos.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(repo) = repos.get(i) else { break };
                let train: Vec<&Sample> = samples.iter().filter(|s| &s.repo != repo).collect();
                let sw = fit(&train, start, params);
                let outcomes = samples
                    .iter()
                    .filter(|s| &s.repo == repo)
                    .map(|s| s.outcome(sw))
                    .collect();
                let fold = Fold {
                    repo: repo.clone(),
                    weights: sw.w,
                    outcomes,
                };
                done.lock().unwrap_or_else(|e| e.into_inner()).push(fold);
            });
        }
    });
    let mut folds = done.into_inner().unwrap_or_else(|e| e.into_inner());
    folds.sort_by(|a, b| a.repo.cmp(&b.repo));
    folds
}

fn repos_of(samples: &[Sample]) -> Vec<String> {
    let mut repos: Vec<String> = samples.iter().map(|s| s.repo.clone()).collect();
    repos.sort();
    repos.dedup();
    repos
}

/// File and function summaries, per repository and over `all`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Table {
    pub file: BTreeMap<String, Summary>,
    pub function: BTreeMap<String, Summary>,
}

impl Table {
    pub fn of<'a>(rows: impl IntoIterator<Item = (&'a str, &'a Outcome)>) -> Table {
        let mut file: BTreeMap<String, Vec<&Scores>> = BTreeMap::new();
        let mut function: BTreeMap<String, Vec<&Scores>> = BTreeMap::new();
        for (repo, o) in rows {
            for (by, s) in [(&mut file, &o.file), (&mut function, &o.function)] {
                if let Some(s) = s {
                    by.entry("all".into()).or_default().push(s);
                    by.entry(repo.to_string()).or_default().push(s);
                }
            }
        }
        let sum = |m: BTreeMap<String, Vec<&Scores>>| {
            m.into_iter()
                .map(|(k, v)| (k, Summary::of(v)))
                .collect::<BTreeMap<_, _>>()
        };
        Table {
            file: sum(file),
            function: sum(function),
        }
    }
}

/// The cross-validation report: the shipped weights, a fit on every case
/// (in-sample, so optimistic), and leave-one-repository-out; by
/// repository, and by case set for the shipped and left-out figures.
#[derive(Debug, Clone, Serialize)]
pub struct CvReport {
    pub cases: usize,
    pub shipped: Table,
    pub in_sample: Table,
    pub fitted: Weights,
    pub cross_validated: Table,
    pub shipped_by_set: Table,
    pub cross_validated_by_set: Table,
    pub folds: Vec<Fold>,
}

/// Everything [`CvReport`] holds, for `samples` starting from `start`
/// and fitting `params`.
pub fn cross_validate(samples: &[Sample], start: Switches, params: &[usize]) -> CvReport {
    let all: Vec<&Sample> = samples.iter().collect();
    let shipped: Vec<Outcome> = samples.iter().map(|s| s.outcome(start)).collect();
    let fitted = fit(&all, start, params);
    let in_sample: Vec<Outcome> = samples.iter().map(|s| s.outcome(fitted)).collect();
    let folds = leave_one_repo_out(samples, start, params);
    let left_out = in_sample_order(samples, &folds);
    let by = |key: fn(&Sample) -> &str, outcomes: &[&Outcome]| {
        Table::of(samples.iter().map(key).zip(outcomes.iter().copied()))
    };
    let shipped: Vec<&Outcome> = shipped.iter().collect();
    let in_sample: Vec<&Outcome> = in_sample.iter().collect();
    CvReport {
        cases: samples.len(),
        shipped: by(|s| &s.repo, &shipped),
        in_sample: by(|s| &s.repo, &in_sample),
        fitted: fitted.w,
        cross_validated: by(|s| &s.repo, &left_out),
        shipped_by_set: by(|s| &s.set, &shipped),
        cross_validated_by_set: by(|s| &s.set, &left_out),
        folds,
    }
}

/// The folds' outcomes in the order of `samples`: a fold scores its
/// repository's samples in that order.
fn in_sample_order<'f>(samples: &[Sample], folds: &'f [Fold]) -> Vec<&'f Outcome> {
    let mut next: BTreeMap<&str, std::slice::Iter<'f, Outcome>> = folds
        .iter()
        .map(|f| (f.repo.as_str(), f.outcomes.iter()))
        .collect();
    samples
        .iter()
        .filter_map(|s| next.get_mut(s.repo.as_str()).and_then(Iterator::next))
        .collect()
}

/// One variant of the ranker judged by [`cross_validate`].
#[derive(Debug, Clone, Serialize)]
pub struct CvVariant {
    pub name: String,
    #[serde(flatten)]
    pub report: CvReport,
}

/// [`cross_validate`] for each variant the evidence can score: fusion
/// and rank-fused vectors need a second ranking, which samples lack.
pub fn cross_validate_variants(
    samples: &[Sample],
    variants: &[super::Variant],
    params: &[usize],
) -> Vec<CvVariant> {
    variants
        .iter()
        .filter(|v| !v.switches.fusion && !v.switches.dense_rrf)
        .map(|v| CvVariant {
            name: v.name.clone(),
            report: cross_validate(samples, v.switches, params),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{FileFacts, Signals};

    /// A case whose gold function is found by name only: BM25 prefers
    /// another function.
    fn named_case(repo: &str, n: u32) -> Sample {
        let mut ev = Evidence::default();
        let mut names = FxHashMap::default();
        for (local, (name, signals)) in [
            (
                "wordy",
                Signals {
                    bm25: 1.0,
                    ..Default::default()
                },
            ),
            (
                "named",
                Signals {
                    bm25: 0.5,
                    names: 1,
                    ..Default::default()
                },
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let k = (n * 2 + local as u32, 0);
            ev.docs.insert(k, signals);
            let path = format!("{repo}/{name}{n}.py");
            ev.files.insert(
                k.0,
                FileFacts {
                    path: path.clone(),
                    is_test: false,
                    path_words: 0,
                    hollow: false,
                },
            );
            names.insert(
                k,
                Scored {
                    id: format!("{path}:{name}"),
                    path,
                    kind: crate::parse::Kind::Function,
                    start_line: 1,
                    end_line: 2,
                    size: 1.0,
                },
            );
        }
        Sample {
            id: format!("{repo}-{n}"),
            repo: repo.into(),
            set: "dev".into(),
            ev,
            names,
            copies: BTreeMap::new(),
            gold_files: vec![format!("{repo}/named{n}.py")],
            gold_functions: vec![format!("{repo}/named{n}.py:named")],
        }
    }

    /// The shipped switches with the name weight at `w`.
    fn name_at(w: f32) -> Switches {
        Switches {
            w: Weights {
                name: w,
                ..Weights::default()
            },
            ..Switches::default()
        }
    }

    #[test]
    fn fitting_raises_a_weight_the_cases_reward() {
        let samples: Vec<Sample> = (0..4).map(|n| named_case("a", n)).collect();
        let refs: Vec<&Sample> = samples.iter().collect();
        let start = name_at(0.3);
        let before = objective(&refs, start);
        let after = fit(&refs, start, &params_for(&samples, &[]));
        assert!(after.w.name >= 0.6, "name weight {}", after.w.name);
        assert!(objective(&refs, after) > before);
    }

    #[test]
    fn fitting_only_the_named_weights_leaves_the_rest_where_they_start() {
        let samples: Vec<Sample> = (0..4).map(|n| named_case("a", n)).collect();
        let refs: Vec<&Sample> = samples.iter().collect();
        let start = name_at(0.3);
        let size = params_for(&samples, &["size".into()]);
        assert_eq!(size.len(), 1);
        assert_eq!(LIMITS[size[0]].0, "size");
        assert_eq!(fit(&refs, start, &size).w.name, 0.3);
        let name = params_for(&samples, &["name".into()]);
        assert!(fit(&refs, start, &name).w.name >= 0.6);
    }

    #[test]
    fn a_held_out_repository_is_scored_by_weights_fitted_without_it() {
        let mut samples: Vec<Sample> = (0..3).map(|n| named_case("a", n)).collect();
        // Repository b rewards nothing: its fold's weights come from a alone.
        let mut b = named_case("b", 9);
        b.gold_functions = vec!["b/wordy9.py:wordy".into()];
        b.gold_files = vec!["b/wordy9.py".into()];
        samples.push(b);
        let start = name_at(0.3);
        let folds = leave_one_repo_out(&samples, start, &params_for(&samples, &[]));
        assert_eq!(
            folds.iter().map(|f| f.repo.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        let b = &folds[1];
        assert!(b.weights.name >= 0.6, "fitted on a: {}", b.weights.name);
        assert_eq!(b.outcomes[0].function.as_ref().map(|s| s.hit[0]), Some(0.0));
    }

    #[test]
    fn left_out_figures_are_also_given_per_case_set() {
        // Sets cut across repositories: a and b in one file, c in another.
        let mut samples: Vec<Sample> = (0..2).map(|n| named_case("a", n)).collect();
        samples.push(named_case("b", 5));
        let mut c = named_case("c", 7);
        c.set = "other".into();
        c.gold_functions = vec!["c/wordy7.py:wordy".into()];
        samples.push(c);
        let cv = cross_validate(&samples, name_at(0.3), &params_for(&samples, &[]));
        let sets = &cv.cross_validated_by_set.function;
        assert_eq!(sets.keys().collect::<Vec<_>>(), ["all", "dev", "other"]);
        assert_eq!((sets["dev"].n, sets["other"].n, sets["all"].n), (3, 1, 4));
        // c's fold learns from a and b to rank by name, which misses c's
        // gold; each set's figure is its own cases' left-out outcomes.
        assert_eq!(sets["other"].mean.hit[0], 0.0);
        assert_eq!(sets["dev"].mean.hit[0], 1.0);
        let by_repo = &cv.cross_validated.function;
        assert_eq!(by_repo["c"].mean.hit[0], sets["other"].mean.hit[0]);
        assert_eq!(cv.shipped_by_set.function["all"].n, 4);
    }

    #[test]
    fn copies_of_a_function_take_one_place_as_the_shipped_ranking_lists_them() {
        // `wordy` outranks `named` in its own file and in a built copy of
        // it; the gold is named's, third unless the copies share a place.
        let mut s = named_case("a", 0);
        let (k, copy) = ((2, 0), "a/dist/wordy0.py:wordy");
        s.ev.docs.insert(k, s.ev.docs[&(0, 0)]);
        let facts = FileFacts {
            path: "a/dist/wordy0.py".into(),
            ..s.ev.files[&0].clone()
        };
        s.ev.files.insert(k.0, facts);
        s.names.insert(
            k,
            Scored {
                id: copy.into(),
                path: "a/dist/wordy0.py".into(),
                ..s.names[&(0, 0)].clone()
            },
        );
        let sw = name_at(0.0);
        let mrr = |s: &Sample| s.outcome(sw).function.map(|f| f.mrr);
        assert_eq!(mrr(&s), Some(1.0 / 3.0));
        let key: CopyKey = ("wordy".into(), "h".into());
        for id in ["a/wordy0.py:wordy", copy] {
            s.copies.insert(id.into(), key.clone());
        }
        assert_eq!(mrr(&s), Some(0.5));
    }

    #[test]
    fn candidates_stay_in_bounds_and_leave_the_current_value_out() {
        assert_eq!(candidates(0.0, 1.0), vec![0.05, 0.1, 0.2, 0.4]);
        let c = candidates(0.8, 1.0);
        assert!(c.iter().all(|x| (0.0..=1.0).contains(x) && *x != 0.8));
        assert!(c.contains(&0.0) && c.contains(&1.0));
    }
}
