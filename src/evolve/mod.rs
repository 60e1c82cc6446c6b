//! Evolution: move the graph from the commit it reflects to another one,
//! with work proportional to the change (RPG-Encoder, Appendix A.2).
//!
//! A diff of the two trees (renames detected) names the changed files;
//! their old and new entities are matched by id, then by content hash
//! (moves and renames keep features and place); the rest are deletions and
//! insertions. Only changed entities are lifted; a modification whose
//! features drifted past τ is re-routed. Edges are re-resolved for the
//! changed files and for the files whose last resolution read a file or a
//! names-index slice the change altered ([`crate::graph::resolve::deps`]).
//! Everything lands in the store as one atomic batch.
//!
//! One module per phase: `diff` (1), `matching` (2, 3), `place` (4),
//! `route` (5), `edges` (6); the names index and the records (7, 8)
//! are written here.

mod diff;
mod edges;
mod matching;
pub mod merge;
mod open;
mod place;
mod route;
mod source;

pub use open::{open, refuse_tracked_store};

use crate::config::Config;
use crate::encode::{self, Outcome, SourceFile};
use crate::exclude::{attributes_files, is_attributes, Exclude};
use crate::git::{GitError, Repo, TreeChange};
use crate::graph::hierarchy;
use crate::graph::resolve::deps::{
    changed_entries, changed_keys, changed_names, flipped_many, interface_digest, prefixes, Deps,
};
use crate::graph::resolve::{Facts, NameRef, Resolver};
use crate::graph::{dir_of, Category, Edge, EdgeKind, Entity};
use crate::lift::Lifter;
use crate::parse::{Kind, Lang};
use crate::store::{
    block_names, DepKind, EventLog, FileBlock, FileDeps, HierState, RpgDir, Store, StoreError,
    StoredParse, WriteSet,
};
use crate::text::words::{is_stop, prose_words};
use diff::*;
use edges::EdgeWork;
use matching::*;
use place::*;
use route::*;
use serde::Serialize;
use source::StoreSource;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum EvolveError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Lift(#[from] crate::lift::LiftError),
    #[error(transparent)]
    Encode(#[from] crate::encode::EncodeError),
    #[error("the graph names an invalid commit id '{0}'; run `rpg init`")]
    BadCommit(String),
    #[error("the update ran past its time budget; nothing was written")]
    OverBudget,
    #[error(".rpg/store is committed to the repository, and rpg keeps its store local only; remove it from git (`git rm -r --cached .rpg/store`) and commit")]
    TrackedStore,
}

/// Default drift threshold τ: a modified entity whose new features share
/// less than half their words with the old ones (Jaccard distance > 0.5)
/// has changed intent and is re-routed.
pub const DEFAULT_DRIFT_THRESHOLD: f32 = 0.5;

/// How far from τ a drift is too close to call by word overlap alone.
pub const AMBIGUOUS_DRIFT: f32 = 0.2;

#[derive(Debug, Clone)]
pub struct UpdateOptions {
    /// τ: Jaccard distance between old and new feature words above which
    /// a modified entity is relocated.
    pub drift_threshold: f32,
    /// Re-resolving more files than this beyond the changed ones, and
    /// more than a quarter of the tree, falls back to re-resolving every
    /// file. Relative to the tree because each file costs the same either
    /// way: on the Linux tree, renaming `module_put` reached 3,000 callers,
    /// and re-resolving all 56k files instead took 50 s.
    pub max_extra_files: usize,
    /// Event logs kept in the store.
    pub keep_logs: usize,
    /// When to give up, writing nothing ([`EvolveError::OverBudget`]): a
    /// hook has git waiting on it, and leaves the rest to the next command.
    pub deadline: Option<std::time::Instant>,
}

impl Default for UpdateOptions {
    fn default() -> Self {
        UpdateOptions {
            drift_threshold: DEFAULT_DRIFT_THRESHOLD,
            max_extra_files: 2000,
            keep_logs: 20,
            deadline: None,
        }
    }
}

impl UpdateOptions {
    /// An error once the deadline has passed; checked between files as
    /// they are searched and resolved, and before anything is written, so
    /// giving up loses nothing.
    fn within_budget(&self) -> Result<(), EvolveError> {
        match self.deadline {
            Some(d) if std::time::Instant::now() > d => Err(EvolveError::OverBudget),
            _ => Ok(()),
        }
    }

    /// [`Self::within_budget`], and an error as soon as files resolved at
    /// the pace so far (`done` since `started`, `left` to go) would end
    /// past the deadline: a hook that cannot finish hands the update on
    /// at once rather than keep git waiting for work it then throws away.
    fn on_pace(
        &self,
        started: std::time::Instant,
        done: usize,
        left: usize,
    ) -> Result<(), EvolveError> {
        self.within_budget()?;
        let now = std::time::Instant::now();
        match self.deadline {
            Some(d) if overruns(now - started, done, left, d.saturating_duration_since(now)) => {
                Err(EvolveError::OverBudget)
            }
            _ => Ok(()),
        }
    }
}

/// Files resolved before their pace counts: the first few read the
/// names and headers the rest share, so they run slow.
const PACED_AFTER: usize = 16;

/// Whether `left` more files, each taking what the `done` so far took in
/// `spent`, and then written (about half as long again as resolving, by
/// profile on the Linux tree), outlast `remaining`.
fn overruns(
    spent: std::time::Duration,
    done: usize,
    left: usize,
    remaining: std::time::Duration,
) -> bool {
    if done < PACED_AFTER {
        return false;
    }
    let each = spent.as_secs_f64() / done as f64;
    each * left as f64 * 1.5 > remaining.as_secs_f64()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    Delete,
    Modify,
    /// A modification whose intent drifted: re-routed, id kept.
    Relocate,
    /// Same content under a new id (renamed or moved): features and place kept.
    Move,
    Insert,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    pub event: EventKind,
    pub id: String,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<f32>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct UpdateReport {
    pub from: String,
    pub to: String,
    pub files_changed: usize,
    /// Unchanged files whose edges were re-resolved because a name they
    /// look up changed.
    pub extra_files_resolved: usize,
    /// Files parsed only to answer the resolver's questions.
    pub files_parsed_on_demand: usize,
    /// More extra files than the bound: every file was re-resolved.
    pub full_resolve: bool,
    pub entities_lifted: usize,
    pub categories_created: Vec<String>,
    pub categories_pruned: Vec<String>,
    pub events: Vec<Event>,
    /// Files left out because git could not give their blob; the next
    /// update tries them again.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

/// One file's old and new state within an update.
struct FileDelta {
    old_path: Option<String>,
    new: Option<SourceFile>,
}

/// What to move the graph to: a commit and its tree, or (for a pre-commit
/// hook) the staged tree labelled with the commit it will follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub commit: gix::ObjectId,
    pub tree: gix::ObjectId,
}

impl Target {
    pub fn commit(repo: &Repo, commit: gix::ObjectId) -> Result<Target, GitError> {
        Ok(Target {
            commit,
            tree: repo.tree_of(commit)?,
        })
    }
}

/// [`update_store`] with the offline lifter and default options: how the
/// store repairs or catches itself up while opening, with no model calls.
fn update_offline(
    repo: &Repo,
    store: &Store,
    config: &Config,
    target: Target,
    recheck: bool,
) -> Result<UpdateReport, EvolveError> {
    let offline = crate::lift::offline::OfflineLifter;
    update_store(
        repo,
        store,
        config,
        target,
        &offline,
        &UpdateOptions::default(),
        recheck,
    )
}

/// Do what a hook left pending, so the graph never silently lags.
fn catch_up(
    repo: &Repo,
    rpg: &RpgDir,
    config: &Config,
    store: Store,
    _lock: crate::store::WriteLock,
) -> Result<Store, EvolveError> {
    if let Some(head) = repo.head_commit() {
        update_offline(repo, &store, config, Target::commit(repo, head)?, false)?;
    }
    rpg.clear_pending(repo);
    Ok(store)
}

/// Bring the store from the tree it reflects to `target`.
pub fn update(
    repo: &Repo,
    rpg: &RpgDir,
    config: &Config,
    target: Target,
    lifter: &dyn Lifter,
    opts: &UpdateOptions,
) -> Result<UpdateReport, EvolveError> {
    update_keeping_store(repo, rpg, config, target, lifter, opts).map(|(report, _)| report)
}

/// [`update`], and the store it updated, still open: a caller that reads
/// the store next (the search index, the snapshot) saves opening it again,
/// which at a monorepo's size is tens of milliseconds of a hook's run.
pub fn update_keeping_store(
    repo: &Repo,
    rpg: &RpgDir,
    config: &Config,
    target: Target,
    lifter: &dyn Lifter,
    opts: &UpdateOptions,
) -> Result<(UpdateReport, Store), EvolveError> {
    let t0 = std::time::Instant::now();
    let _lock = rpg.lock(crate::store::LOCK_WAIT)?;
    let store = open(repo, rpg, config)?;
    crate::timing("update open", t0);
    let report = update_open(repo, rpg, &store, config, target, lifter, opts)?;
    Ok((report, store))
}

/// [`update`] on a store the caller opened (with [`open`]) under the
/// store's lock, which it still holds: `rpg update` reads the graph's
/// commit and tree before it updates, and opening the store again took
/// tens of milliseconds of a large tree's update.
pub fn update_open(
    repo: &Repo,
    rpg: &RpgDir,
    store: &Store,
    config: &Config,
    target: Target,
    lifter: &dyn Lifter,
    opts: &UpdateOptions,
) -> Result<UpdateReport, EvolveError> {
    let report = update_store(repo, store, config, target, lifter, opts, false)?;
    rpg.clear_pending(repo);
    Ok(report)
}

/// [`update`] on an open store. With `recheck`, every file's blob is
/// compared with the target tree's, even when the store claims that tree
/// already: how a snapshot's false claims are repaired.
fn update_store(
    repo: &Repo,
    store: &Store,
    config: &Config,
    target: Target,
    lifter: &dyn Lifter,
    opts: &UpdateOptions,
    recheck: bool,
) -> Result<UpdateReport, EvolveError> {
    let mut meta = store.meta()?;
    let mut report = UpdateReport {
        from: meta.commit.clone(),
        to: target.commit.to_string(),
        ..UpdateReport::default()
    };
    let target_tree = target.tree.to_string();
    // A changed `[index]` config can let in or leave out any file, changed
    // or not: every file is read again, as init would.
    let index = config.index.digest();
    let replan = meta.index != index;
    // Files whose blob could not be read are tried again by every update.
    let retry = store.unreadable()?;
    let settled = !recheck && !replan && retry.is_empty();
    if meta.commit == report.to && meta.tree == target_tree && settled {
        return Ok(report);
    }
    if meta.tree == target_tree && settled {
        // Same content under another commit (e.g. the commit a pre-commit
        // hook already indexed): only the label moves.
        meta.commit = report.to.clone();
        let mut w = WriteSet::default();
        w.put_meta(&meta);
        store.apply(w)?;
        return Ok(report);
    }
    let mut w = WriteSet::default();
    let t = std::time::Instant::now();
    let plan = Plan {
        recheck,
        replan,
        retry,
        opts,
    };
    let mut change = diff(repo, store, config, &meta, target, &plan)?;
    w.put_unreadable(&change.unreadable);
    report.unreadable = change.unreadable.clone();
    meta.index = index;
    report.files_changed = change.deltas.len();
    meta.headers = change.headers;
    meta.attributes = std::mem::take(&mut change.attributes);
    if change.deltas.is_empty() && !change.crates_changed {
        // Only non-code files changed: the graph is the same, the label moves.
        meta.commit = target.commit.to_string();
        meta.tree = target.tree.to_string();
        w.put_meta(&meta);
        store.apply(w)?;
        return Ok(report);
    }
    crate::timing("update diff+parse", t);
    let old = OldState::load(store, &change.deltas)?;
    let sources: Vec<&SourceFile> = change
        .deltas
        .iter()
        .filter_map(|d| d.new.as_ref())
        .collect();
    let matching = match_entities(&old, &sources);
    let mut placed = lift_and_place(&old, &sources, &change.deltas, &matching, lifter, opts)?;
    opts.within_budget()?;
    report.entities_lifted = placed.lifted;
    crate::timing("update match+lift", t);
    let hier = route_pending(store, lifter, &old, &mut placed)?;
    report.categories_created = hier.created.clone();
    report.categories_pruned = hier.pruned.clone();
    crate::timing("update hierarchy", t);
    if change.crates_changed {
        let snapshot = repo.snapshot_tree(target.commit, target.tree)?;
        meta.crates = encode::crate_roots(repo, &snapshot.files);
    }
    let edges = EdgeWork {
        store,
        repo,
        change: &change,
        old: &old,
        sources: &sources,
        packed: sources
            .iter()
            .map(|s| StoredParse::of(&s.facts.parsed))
            .collect(),
        crates: &meta.crates,
        headers: meta.header_lang(),
    };
    let mut counts = edges.reresolve(&mut placed.new_blocks, opts, &mut report, &mut w)?;
    crate::timing("update edges", t);
    update_indexes(store, &old, &sources, &placed.new_blocks, &mut w)?;
    crate::timing("update indexes", t);
    counts.categories = hier.cats.len();
    meta.commit = target.commit.to_string();
    meta.tree = target.tree.to_string();
    placed
        .events
        .sort_by(|a, b| a.id.cmp(&b.id).then(a.event.cmp(&b.event)));
    report.events = placed.events;
    write_records(store, &hier, &counts, &meta, &report, opts, &mut w)?;
    crate::timing("update records", t);
    store.apply(w)?;
    crate::timing("update apply", t);
    Ok(report)
}

/// Phase 7: the names index, touched only where an entry changed.
fn update_indexes(
    store: &Store,
    old: &OldState,
    sources: &[&SourceFile],
    new_blocks: &BTreeMap<String, FileBlock>,
    w: &mut WriteSet,
) -> Result<(), EvolveError> {
    let mut lists: BTreeMap<String, Vec<NameRef>> = BTreeMap::new();
    let mut edit_names =
        |path: &str, refs: Vec<(String, NameRef)>, add: bool| -> Result<(), StoreError> {
            for (n, r) in refs {
                if !lists.contains_key(&n) {
                    lists.insert(n.clone(), store.named_any(&n)?);
                }
                let list = lists.get_mut(&n).expect("list loaded");
                if add {
                    list.push(r);
                    list.sort();
                    list.dedup();
                } else {
                    list.retain(|x| !(x.path == path && x.qualname == r.qualname));
                }
            }
            Ok(())
        };
    for (p, b) in &old.blocks {
        edit_names(p, crate::store::block_names(b), false)?;
    }
    for s in sources {
        if let Some(b) = new_blocks.get(&s.path) {
            edit_names(&s.path, crate::store::block_names(b), true)?;
        }
    }
    for (n, refs) in &lists {
        w.put_named(n, refs);
    }
    Ok(())
}

/// Phase 8: hierarchy records, counts, header and the event log, into the
/// one batch that moves the graph.
fn write_records(
    store: &Store,
    hier: &HierChange,
    counts: &crate::store::StoredCounts,
    meta: &crate::graph::Meta,
    report: &UpdateReport,
    opts: &UpdateOptions,
    w: &mut WriteSet,
) -> Result<(), EvolveError> {
    for c in hier
        .cats_before
        .keys()
        .filter(|c| !hier.cats.contains_key(*c))
    {
        w.remove_category(c);
    }
    for c in hier
        .cats
        .values()
        .filter(|c| hier.cats_before.get(&c.path) != Some(*c))
    {
        w.put_category(c);
    }
    w.put_hier(&hier.hier);
    w.put_counts(counts);
    w.put_meta(meta);
    let logs = store.events()?;
    let seq = logs.last().map(|(s, _)| s + 1).unwrap_or(0);
    let events = serde_json::to_value(&report.events).map_err(|e| {
        EvolveError::Store(StoreError::Damaged {
            path: std::path::PathBuf::from("event log"),
            message: e.to_string(),
        })
    })?;
    w.push_event(
        seq,
        &EventLog {
            from: report.from.clone(),
            to: report.to.clone(),
            events,
        },
    );
    let excess = (logs.len() + 1).saturating_sub(opts.keep_logs);
    for (s, _) in logs.iter().take(excess) {
        w.remove_event(*s);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_gives_up_once_the_files_left_at_its_pace_outlast_its_budget() {
        let ms = std::time::Duration::from_millis;
        // 32 files in 64 ms: 2 ms each, 3 ms with the write after.
        assert!(overruns(ms(64), 32, 200, ms(500)), "600 ms of work left");
        assert!(!overruns(ms(64), 32, 150, ms(500)), "450 ms of work left");
        // Too few files yet to tell a pace from the first reads.
        assert!(!overruns(ms(64), PACED_AFTER - 1, 10_000, ms(10)));
        // Without a deadline nothing is paced.
        let opts = UpdateOptions::default();
        assert!(opts
            .on_pace(std::time::Instant::now(), 1_000, 1_000_000)
            .is_ok());
    }

    fn f(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn how_headers_read_is_kept_unless_a_cpp_source_comes_or_a_header_or_cpp_source_goes() {
        let blob = gix::ObjectId::null(gix::hash::Kind::Sha1);
        let added = |p: &str| TreeChange::Added {
            path: p.into(),
            blob,
        };
        let deleted = |p: &str| TreeChange::Deleted { path: p.into() };
        let modified = |p: &str| TreeChange::Modified {
            path: p.into(),
            blob,
        };
        let renamed = |a: &str, b: &str| TreeChange::Renamed {
            from: a.into(),
            to: b.into(),
            blob,
        };
        let mut globs = globset::GlobSetBuilder::new();
        globs.add(globset::Glob::new("vendor/**").unwrap());
        let exclude = Exclude::globs(globs.build().unwrap());
        let keeps = |old, changes: &[TreeChange]| keeps_headers(old, changes, &exclude);
        for old in [Lang::C, Lang::Cpp] {
            // What a hook sees most: edits, moves and new C files.
            assert!(keeps(old, &[modified("kernel/sched.c"), modified("x.h")]));
            assert!(keeps(
                old,
                &[renamed("a.c", "b.c"), added("c.c"), deleted("d.c")]
            ));
            assert!(keeps(old, &[added("include/new.h")]));
            // A header or C++ source gone may have been the last one.
            assert!(!keeps(old, &[deleted("include/list.h")]));
            assert!(!keeps(old, &[renamed("shim.cpp", "shim.c")]));
            assert!(!keeps(old, &[deleted("tools/x.cc")]));
            // Excluded files do not count either way.
            assert!(keeps(old, &[deleted("vendor/z.h"), added("vendor/y.cpp")]));
        }
        assert!(!keeps(Lang::C, &[added("src/shim.cpp")]));
        assert!(!keeps(Lang::C, &[added("include/shim.hpp")]));
        assert!(!keeps(Lang::C, &[renamed("shim.c", "shim.cpp")]));
        assert!(keeps(Lang::Cpp, &[added("src/more.cpp")]));
    }

    #[test]
    fn drift_is_the_jaccard_distance_of_feature_words() {
        assert_eq!(drift(&f(&["parse date"]), &f(&["parse date"])), 0.0);
        assert_eq!(drift(&f(&["parse date"]), &f(&["render page"])), 1.0);
        // {parse, date} against {parse, date, time}: 1 - 2/3.
        let d = drift(&f(&["parse date"]), &f(&["parse date time"]));
        assert!((d - 1.0 / 3.0).abs() < 1e-6, "{d}");
        assert_eq!(drift(&[], &[]), 0.0);
    }

    #[test]
    fn pruning_removes_emptied_categories_bottom_up_and_keeps_occupied_ones() {
        let cat = |p: &str| {
            (
                p.to_string(),
                Category {
                    path: p.into(),
                    scopes: vec![],
                    terms: vec![],
                },
            )
        };
        let mut cats: BTreeMap<String, Category> =
            ["a", "a/b", "a/b/c", "x", "x/y", "x/y/z"].map(cat).into();
        let mut h = HierState::default();
        hier_add(&mut h, "x/y/z", "src");
        // The parents went because their only child did (listed sorted).
        let pruned = prune(&mut cats, &h);
        assert_eq!(pruned, ["a", "a/b", "a/b/c"]);
        assert_eq!(cats.keys().collect::<Vec<_>>(), ["x", "x/y", "x/y/z"]);
        hier_remove(&mut h, "x/y/z", "src");
        assert_eq!(prune(&mut cats, &h), ["x", "x/y", "x/y/z"]);
    }
}
