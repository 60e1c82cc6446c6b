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

mod edges;
pub mod merge;
mod open;
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
use edges::EdgeWork;
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
    let report = update_store(repo, &store, config, target, lifter, opts, false)?;
    rpg.clear_pending(repo);
    Ok((report, store))
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

/// Phase 1's result: the changed files, parsed, and whether a Cargo
/// manifest changed (which can rename crates).
struct Change {
    deltas: Vec<FileDelta>,
    crates_changed: bool,
    /// How the target's `.h` files were read.
    headers: Option<Lang>,
    /// The target's `.gitattributes` files.
    attributes: Vec<String>,
    /// Files whose blob could not be read: left out, tried again next time.
    unreadable: Vec<String>,
}

/// How phase 1 looks: with `recheck`, every stored blob is compared with
/// the target tree's instead of diffing two trees; with `replan`, every
/// code file of the target is read again as well.
struct Plan<'o> {
    recheck: bool,
    replan: bool,
    /// Files whose blob could not be read last time, read again.
    retry: Vec<String>,
    opts: &'o UpdateOptions,
}

/// Phase 1: which indexed files changed between the graph's tree and the
/// target, each parsed anew (see [`Plan`]).
fn diff(
    repo: &Repo,
    store: &Store,
    config: &Config,
    meta: &crate::graph::Meta,
    target: Target,
    plan: &Plan,
) -> Result<Change, EvolveError> {
    let (recheck, replan) = (plan.recheck, plan.replan);
    let old_tree = gix::ObjectId::from_hex(meta.tree.as_bytes())
        .map_err(|_| EvolveError::BadCommit(meta.tree.clone()))?;
    let globs = config.excluder()?;
    let listing = if recheck || replan {
        changed_blobs(repo, store, target)?
    } else {
        changed_files(repo, store, old_tree, target, &globs)?
    };
    let (mut changes, crates_changed) = (listing.changes, listing.manifests_changed);
    let mut replanned: Vec<crate::git::TreeFile> = Vec::new();
    if let (true, Some(t)) = (replan, &listing.tree) {
        let unchanged: BTreeSet<&str> = t.unchanged.iter().map(String::as_str).collect();
        replanned.extend(
            t.files
                .iter()
                .filter(|f| unchanged.contains(f.path.as_str()))
                .cloned(),
        );
    }
    let attributes = match &listing.tree {
        Some(t) => attributes_files(&t.files, &globs),
        None => stored_attributes(repo, meta, target)?,
    };
    repo.fetch_missing_blobs(&attributes.iter().map(|f| f.blob).collect::<Vec<_>>());
    let exclude = Exclude::new(globs, &repo.local(), &attributes)?;
    if let (false, Some(t)) = (replan, &listing.tree) {
        changes.extend(newly_excluded(t, &exclude));
    }
    let (headers, mut reread) =
        headers_after(repo, &exclude, meta, target, &changes, recheck || replan)?;
    reread.extend(replanned);
    for path in &plan.retry {
        if changes.iter().any(|c| c.paths().any(|p| p == path)) {
            continue;
        }
        if let Some(blob) = repo.blob_at(target.tree, path)? {
            reread.push(crate::git::TreeFile {
                path: path.clone(),
                blob,
            });
        }
    }
    reread.sort_by(|a, b| a.path.cmp(&b.path));
    reread.dedup_by(|a, b| a.path == b.path);
    let changes = changes
        .into_iter()
        .chain(reread.iter().map(|f| TreeChange::Modified {
            path: f.path.clone(),
            blob: f.blob,
        }));
    let reread: BTreeSet<&str> = reread.iter().map(|f| f.path.as_str()).collect();
    let local = repo.local();
    let read = encode::Read {
        exclude: &exclude,
        max_bytes: config.index.max_file_bytes,
        headers: crate::parse::headers_as(headers),
        // Few files change: their text is kept whatever the lifter.
        keep_text: true,
    };
    let changes: Vec<TreeChange> = changes.collect();
    let new_blobs: Vec<crate::git::TreeFile> = changes
        .iter()
        .filter_map(|c| match c {
            TreeChange::Added { path, blob }
            | TreeChange::Modified { path, blob }
            | TreeChange::Renamed { to: path, blob, .. } => Some(crate::git::TreeFile {
                path: path.clone(),
                blob: *blob,
            }),
            TreeChange::Deleted { .. } => None,
        })
        .collect();
    repo.fetch_missing_blobs(&encode::wanted_blobs(&new_blobs));
    let mut deltas: Vec<FileDelta> = Vec::new();
    let mut unreadable = Vec::new();
    for c in changes {
        plan.opts.within_budget()?;
        let (old_path, new) = match c {
            TreeChange::Deleted { path } => (Some(path), None),
            TreeChange::Added { path, blob } | TreeChange::Modified { path, blob } => {
                let stored = store.blob_of(&path)?;
                let same = stored.as_deref() == Some(blob.to_string().as_str());
                if same && !reread.contains(path.as_str()) {
                    continue;
                }
                (stored.map(|_| path.clone()), Some((path, blob)))
            }
            TreeChange::Renamed { from, to, blob } => {
                let stored = store.blob_of(&from)?;
                (stored.map(|_| from), Some((to, blob)))
            }
        };
        let new = match new {
            Some((path, blob)) => {
                let f = crate::git::TreeFile { path, blob };
                match encode::classify(&local, &f, &read)? {
                    Outcome::Parsed(s) => Some(s),
                    Outcome::Unreadable => {
                        unreadable.push(f.path);
                        None
                    }
                    _ => None,
                }
            }
            None => None,
        };
        if old_path.is_some() || new.is_some() {
            deltas.push(FileDelta { old_path, new });
        }
    }
    Ok(Change {
        deltas,
        crates_changed,
        headers,
        attributes: attributes.into_iter().map(|f| f.path).collect(),
        unreadable,
    })
}

/// Deletions of the stored files the tree holds unchanged that `exclude`
/// now leaves out: attributes can change without the file changing.
fn newly_excluded(tree: &ListedTree, exclude: &Exclude) -> Vec<TreeChange> {
    tree.unchanged
        .iter()
        .filter(|p| exclude.is_match(p))
        .map(|p| TreeChange::Deleted { path: p.clone() })
        .collect()
}

/// The target's blobs of the attributes files the graph's tree had, when
/// no diff touched one.
fn stored_attributes(
    repo: &Repo,
    meta: &crate::graph::Meta,
    target: Target,
) -> Result<Vec<crate::git::TreeFile>, EvolveError> {
    let mut out = Vec::new();
    for path in &meta.attributes {
        if let Some(blob) = repo.blob_at(target.tree, path)? {
            out.push(crate::git::TreeFile {
                path: path.clone(),
                blob,
            });
        }
    }
    Ok(out)
}

/// How the target reads `.h` files, and the unchanged `.h` files to parse
/// again because that differs from how the store read them. Only a change
/// that adds a C++ source or takes away a header or C++ source can move
/// the answer, so only then is the whole target tree listed: on the Linux
/// tree the listing and its exclusion checks were 90 ms of a hook's 300.
fn headers_after(
    repo: &Repo,
    exclude: &Exclude,
    meta: &crate::graph::Meta,
    target: Target,
    changes: &[TreeChange],
    recheck: bool,
) -> Result<(Option<Lang>, Vec<crate::git::TreeFile>), EvolveError> {
    let changed: BTreeSet<&str> = changes.iter().flat_map(TreeChange::paths).collect();
    let c_family = |p: &&str| Lang::from_path(p).is_some_and(Lang::is_c);
    if !recheck && !changed.iter().any(c_family) {
        return Ok((meta.headers, Vec::new()));
    }
    if let (false, Some(old)) = (recheck, meta.headers) {
        if keeps_headers(old, changes, exclude) {
            return Ok((meta.headers, Vec::new()));
        }
    }
    let tree = repo.snapshot_tree(target.commit, target.tree)?;
    let headers = encode::header_lang(exclude, &tree.files);
    if headers.is_none_or(|h| h == meta.header_lang()) {
        return Ok((headers, Vec::new()));
    }
    let reread = tree
        .files
        .into_iter()
        .filter(|f| crate::parse::is_header(&f.path) && !exclude.is_match(&f.path))
        .filter(|f| !changed.contains(f.path.as_str()))
        .collect();
    Ok((headers, reread))
}

/// Whether a tree that read `.h` files as `old` reads them so after
/// `changes`, judged from the changed paths alone. The answer is C++ when
/// the tree has headers and a C++ source (neither excluded), so it holds
/// while none of those leaves, and, for C, while no C++ source comes.
fn keeps_headers(old: Lang, changes: &[TreeChange], exclude: &Exclude) -> bool {
    let (mut came, mut went) = (BTreeSet::new(), BTreeSet::new());
    for c in changes {
        match c {
            TreeChange::Added { path, .. } => {
                came.insert(path.as_str());
            }
            TreeChange::Deleted { path } => {
                went.insert(path.as_str());
            }
            TreeChange::Renamed { from, to, .. } => {
                went.insert(from.as_str());
                came.insert(to.as_str());
            }
            TreeChange::Modified { .. } => {}
        }
    }
    // As `crate::parse::header_lang` counts them: `.hpp` is a C++ source.
    let header = |p: &str| crate::parse::is_header(p) && !exclude.is_match(p);
    let cpp = |p: &str| {
        !crate::parse::is_header(p) && Lang::from_path(p) == Some(Lang::Cpp) && !exclude.is_match(p)
    };
    let lost = went.difference(&came).any(|p| header(p) || cpp(p));
    let gained_cpp = came.difference(&went).any(|p| cpp(p));
    !lost && (old == Lang::Cpp || !gained_cpp)
}

/// Phase 2: the changed files as the store holds them.
struct OldState {
    blocks: BTreeMap<String, FileBlock>,
    /// Their code entities (not files), by id.
    entities: BTreeMap<String, Entity>,
}

impl OldState {
    fn load(store: &Store, deltas: &[FileDelta]) -> Result<OldState, EvolveError> {
        let mut blocks = BTreeMap::new();
        for p in deltas.iter().filter_map(|d| d.old_path.as_ref()) {
            if let Some(b) = store.file_block(p)? {
                blocks.insert(p.clone(), b);
            }
        }
        let entities = blocks
            .values()
            .flat_map(|b| b.entities.iter())
            .filter(|e| e.kind != Kind::File)
            .map(|e| (e.id.clone(), e.clone()))
            .collect();
        Ok(OldState { blocks, entities })
    }

    /// The old block of the file `path` had before this update, under
    /// its own path or, renamed, under the old one.
    fn block_before<'a>(&'a self, deltas: &[FileDelta], path: &str) -> Option<&'a FileBlock> {
        self.blocks.get(path).or_else(|| {
            deltas
                .iter()
                .find(|d| d.new.as_ref().is_some_and(|n| n.path == path))
                .and_then(|d| d.old_path.as_ref())
                .and_then(|p| self.blocks.get(p))
        })
    }
}

/// What became of an old or new entity.
#[derive(Clone)]
enum Fate {
    /// Same id, same content.
    Keep(String),
    /// Same id, new content.
    Modify(String),
    /// Same content under a new id: renamed or moved.
    Move(String),
    Insert,
}

/// Phase 3's result.
struct Matching {
    /// Every new entity's fate, by its new id.
    fate: BTreeMap<String, Fate>,
    /// Old entities nothing matched.
    deleted: Vec<String>,
}

/// Phase 3: match old and new entities, by id, then by content hash.
fn match_entities(old: &OldState, sources: &[&SourceFile]) -> Matching {
    let mut new_ids: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (si, s) in sources.iter().enumerate() {
        for (ei, e) in s.facts.parsed.entities.iter().enumerate() {
            new_ids.insert(crate::graph::entity_id(&s.path, &e.qualname), (si, ei));
        }
    }
    let new_entity = |(si, ei): (usize, usize)| &sources[si].facts.parsed.entities[ei];
    let mut fate: BTreeMap<String, Fate> = BTreeMap::new();
    let mut unmatched: BTreeMap<(Kind, String), Vec<String>> = BTreeMap::new();
    for (id, e) in &old.entities {
        match new_ids.get(id) {
            Some(&at) => {
                let ne = new_entity(at);
                let f = if ne.hash == e.hash && ne.kind == e.kind {
                    Fate::Keep(id.clone())
                } else {
                    Fate::Modify(id.clone())
                };
                fate.insert(id.clone(), f);
            }
            None => unmatched
                .entry((e.kind, e.hash.clone()))
                .or_default()
                .push(id.clone()),
        }
    }
    for (id, &at) in &new_ids {
        if fate.contains_key(id) {
            continue;
        }
        let ne = new_entity(at);
        let moved = unmatched
            .get_mut(&(ne.kind, ne.hash.clone()))
            .filter(|v| !v.is_empty())
            .map(|v| v.remove(0));
        fate.insert(id.clone(), moved.map(Fate::Move).unwrap_or(Fate::Insert));
    }
    Matching {
        fate,
        deleted: unmatched.into_values().flatten().collect(),
    }
}

/// An entity waiting to be routed: its id, term bag, whether its file's
/// leaf may serve as a prior, and its features.
type Pending = (String, BTreeMap<String, f32>, bool, Vec<String>);

/// Phase 4's result.
struct Placed {
    /// The changed files' new blocks, contains edges only so far.
    new_blocks: BTreeMap<String, FileBlock>,
    /// Entities to route down the hierarchy.
    pending: Vec<Pending>,
    events: Vec<Event>,
    /// Entities handed to the lifter.
    lifted: usize,
}

/// Phase 4: lift what changed (everything in one call, so a model lifter
/// batches across files), keep the rest, and decide each entity's event.
fn lift_and_place(
    old: &OldState,
    sources: &[&SourceFile],
    deltas: &[FileDelta],
    matching: &Matching,
    lifter: &dyn Lifter,
    opts: &UpdateOptions,
) -> Result<Placed, EvolveError> {
    let fate_of = |s: &SourceFile, e: &crate::parse::ParsedEntity| {
        &matching.fate[&crate::graph::entity_id(&s.path, &e.qualname)]
    };
    let mut picks: Vec<(usize, usize)> = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        for (ei, e) in s.facts.parsed.entities.iter().enumerate() {
            if matches!(fate_of(s, e), Fate::Modify(_) | Fate::Insert) {
                picks.push((si, ei));
            }
        }
    }
    let mut lifted: BTreeMap<(usize, usize), crate::lift::Lifted> = picks
        .iter()
        .copied()
        .zip(encode::lift_all(sources, &picks, lifter)?)
        .collect();
    let mut codes = Vec::with_capacity(sources.len());
    for (si, s) in sources.iter().enumerate() {
        let mut code = Vec::new();
        let lines = crate::lift::LineStarts::of(s.text.as_deref().unwrap_or(""));
        for (ei, e) in s.facts.parsed.entities.iter().enumerate() {
            let l = match fate_of(s, e) {
                // Offline features are a function of the entity as it is
                // now (its name, owner, docstring, body): recomputed, as a
                // fresh init would. What a model wrote is kept.
                Fate::Keep(o) | Fate::Move(o)
                    if old.entities[o].lifter == crate::lift::offline::OFFLINE_ID =>
                {
                    crate::lift::offline::lift(&encode::lift_input(s, &lines, ei))
                }
                Fate::Keep(o) | Fate::Move(o) => crate::lift::Lifted {
                    features: old.entities[o].features.clone(),
                    by: old.entities[o].lifter.clone(),
                },
                _ => lifted
                    .remove(&(si, ei))
                    .unwrap_or_else(|| crate::lift::Lifted {
                        features: Vec::new(),
                        by: lifter.id().to_string(),
                    }),
            };
            code.push(l);
        }
        codes.push(encode::code_entities(s, code, None));
    }
    let inputs: Vec<crate::lift::FileLiftInput> = sources
        .iter()
        .zip(&codes)
        .map(|(s, (code, _))| encode::file_input(s, code.iter().map(|e| &e.features)))
        .collect();
    let summaries = lifter.summarize_files(&inputs)?;
    drop(inputs);
    let mut placed = Placed {
        new_blocks: BTreeMap::new(),
        pending: Vec::new(),
        events: Vec::new(),
        lifted: picks.len(),
    };
    for ((s, (mut code, contains)), summary) in sources.iter().zip(codes).zip(summaries) {
        let mut file = encode::file_entity(s, summary);
        place_file(
            &mut file,
            &code,
            old.block_before(deltas, &s.path),
            &mut placed,
        );
        for e in &mut code {
            place_entity(e, &matching.fate[&e.id], old, lifter, opts, &mut placed)?;
        }
        let mut entities = vec![file];
        entities.extend(code);
        let block = FileBlock {
            file: encode::file_record(s),
            entities,
            out: contains,
        };
        placed.new_blocks.insert(s.path.clone(), block);
    }
    for id in &matching.deleted {
        let e = &old.entities[id];
        placed.events.push(event(
            EventKind::Delete,
            id,
            e.kind,
            None,
            Some(&e.leaf),
            None,
        ));
    }
    for (path, b) in &old.blocks {
        if !placed.new_blocks.contains_key(path)
            && !renamed_to_existing(deltas, path, &placed.new_blocks)
        {
            let leaf = b.entities.first().map(|e| e.leaf.as_str());
            placed
                .events
                .push(event(EventKind::Delete, path, Kind::File, None, leaf, None));
        }
    }
    Ok(placed)
}

fn event(
    kind: EventKind,
    id: &str,
    entity: Kind,
    from: Option<&str>,
    leaf: Option<&str>,
    drift: Option<f32>,
) -> Event {
    Event {
        event: kind,
        id: id.to_string(),
        kind: entity,
        from: from.map(str::to_string),
        leaf: leaf.map(str::to_string),
        drift,
    }
}

/// A changed file keeps its old file's place (a rename is a move); a new
/// file waits to be routed.
fn place_file(file: &mut Entity, code: &[Entity], before: Option<&FileBlock>, placed: &mut Placed) {
    let old_file = before.and_then(|b| b.entities.iter().find(|e| e.kind == Kind::File));
    match old_file {
        Some(of) => {
            file.leaf = of.leaf.clone();
            if of.id != file.id {
                let ev = event(
                    EventKind::Move,
                    &file.id,
                    Kind::File,
                    Some(&of.id),
                    Some(&file.leaf),
                    None,
                );
                placed.events.push(ev);
            }
        }
        None => {
            let terms = encode::file_bag(
                &file.path,
                std::iter::once(&*file).chain(code).map(|e| &e.features),
            );
            placed
                .pending
                .push((file.id.clone(), terms, false, file.features.clone()));
            placed.events.push(event(
                EventKind::Insert,
                &file.id,
                Kind::File,
                None,
                None,
                None,
            ));
        }
    }
}

/// One code entity's event: kept and moved entities keep their place, a
/// modification whose features drifted past τ is routed afresh (a model
/// may judge the ambiguous ones), insertions are routed.
fn place_entity(
    e: &mut Entity,
    fate: &Fate,
    old: &OldState,
    lifter: &dyn Lifter,
    opts: &UpdateOptions,
    placed: &mut Placed,
) -> Result<(), EvolveError> {
    match fate {
        Fate::Keep(o) => e.leaf = old.entities[o].leaf.clone(),
        Fate::Move(o) => {
            e.leaf = old.entities[o].leaf.clone();
            placed.events.push(event(
                EventKind::Move,
                &e.id,
                e.kind,
                Some(o),
                Some(&e.leaf),
                None,
            ));
        }
        Fate::Modify(o) => {
            let o = &old.entities[o];
            let d = drift(&o.features, &e.features);
            // Near τ the overlap alone cannot tell; a model may judge.
            let drifted = if (d - opts.drift_threshold).abs() <= AMBIGUOUS_DRIFT {
                lifter
                    .judge_drift(&e.id, &o.features, &e.features)?
                    .unwrap_or(d > opts.drift_threshold)
            } else {
                d > opts.drift_threshold
            };
            if drifted {
                // Intent changed: route afresh, without the old place as a prior.
                placed.pending.push((
                    e.id.clone(),
                    encode::entity_terms(e),
                    false,
                    e.features.clone(),
                ));
                let ev = event(
                    EventKind::Relocate,
                    &e.id,
                    e.kind,
                    Some(&o.leaf),
                    None,
                    Some(round(d)),
                );
                placed.events.push(ev);
            } else {
                e.leaf = o.leaf.clone();
                let ev = event(
                    EventKind::Modify,
                    &e.id,
                    e.kind,
                    None,
                    Some(&e.leaf),
                    Some(round(d)),
                );
                placed.events.push(ev);
            }
        }
        Fate::Insert => {
            placed.pending.push((
                e.id.clone(),
                encode::entity_terms(e),
                true,
                e.features.clone(),
            ));
            placed
                .events
                .push(event(EventKind::Insert, &e.id, e.kind, None, None, None));
        }
    }
    Ok(())
}

/// Phase 5's result: the hierarchy after routing and pruning.
struct HierChange {
    cats: BTreeMap<String, Category>,
    cats_before: BTreeMap<String, Category>,
    hier: HierState,
    created: Vec<String>,
    pruned: Vec<String>,
}

/// Phase 5: take the old placements out, route what waits (entities of a
/// new file join the file's leaf), put the new placements in, prune what
/// emptied and re-ground what changed.
fn route_pending(
    store: &Store,
    lifter: &dyn Lifter,
    old: &OldState,
    placed: &mut Placed,
) -> Result<HierChange, EvolveError> {
    let mut cats = store.categories()?;
    let mut hier = store.hier()?;
    let cats_before = cats.clone();
    for e in old.blocks.values().flat_map(|b| &b.entities) {
        hier_remove(&mut hier, &e.leaf, dir_of(&e.path));
    }
    let mut routed: BTreeMap<String, String> = BTreeMap::new();
    for (id, terms, use_file_prior, features) in &placed.pending {
        let (path, _) = crate::graph::split_id(id);
        let file_leaf = routed.get(path).cloned().or_else(|| {
            placed
                .new_blocks
                .get(path)
                .and_then(|b| b.entities.first())
                .map(|f| f.leaf.clone())
                .filter(|l| !l.is_empty())
        });
        let in_new_file = !crate::graph::is_file_id(id) && routed.contains_key(path);
        let leaf = if in_new_file {
            file_leaf.unwrap_or_default()
        } else {
            let prior = file_leaf.filter(|_| *use_file_prior);
            let item = crate::lift::RouteInput { id, features };
            let r = match lifter.route(&cats, &item)? {
                Some(under) => hierarchy::complete(&cats, terms, under),
                None => hierarchy::route(&cats, terms, dir_of(path), prior.as_deref()),
            };
            for c in &r.created {
                let category = Category {
                    path: c.clone(),
                    scopes: Vec::new(),
                    terms: hierarchy::terms_of(terms),
                };
                cats.insert(c.clone(), category);
            }
            r.leaf
        };
        routed.insert(id.clone(), leaf);
    }
    for e in placed.new_blocks.values_mut().flat_map(|b| &mut b.entities) {
        if let Some(l) = routed.get(&e.id) {
            e.leaf = l.clone();
        }
    }
    for ev in placed.events.iter_mut().filter(|ev| ev.leaf.is_none()) {
        ev.leaf = routed.get(&ev.id).cloned();
    }
    for e in placed.new_blocks.values().flat_map(|b| &b.entities) {
        hier_add(&mut hier, &e.leaf, dir_of(&e.path));
    }
    let pruned = prune(&mut cats, &hier);
    regroundings(&mut cats, &hier);
    let created = cats
        .keys()
        .filter(|c| !cats_before.contains_key(*c))
        .cloned()
        .collect();
    Ok(HierChange {
        cats,
        cats_before,
        hier,
        created,
        pruned,
    })
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

fn renamed_to_existing(
    deltas: &[FileDelta],
    old: &str,
    new_blocks: &BTreeMap<String, FileBlock>,
) -> bool {
    deltas.iter().any(|d| {
        d.old_path.as_deref() == Some(old)
            && d.new
                .as_ref()
                .is_some_and(|n| new_blocks.contains_key(&n.path))
    })
}

/// Changed files between the graph's tree and the target's, plus whether
/// any Cargo manifest changed. Falls back to comparing blob ids with the
/// store when the old tree is not in this repository (shallow clone,
/// rewritten history, gc).
fn changed_files(
    repo: &Repo,
    store: &Store,
    old: gix::ObjectId,
    new: Target,
    globs: &globset::GlobSet,
) -> Result<Listing, EvolveError> {
    let keep = |p: &str| Lang::from_path(p).is_some();
    if !repo.has_tree(old) {
        return changed_blobs(repo, store, new);
    }
    let all = repo.diff(old, new.tree, &keep)?;
    // Attributes can leave out or let in files no diff touches: compare
    // the whole tree instead.
    let attributes = |p: &str| is_attributes(p) && !globs.is_match(p);
    if all.iter().any(|c| c.paths().any(attributes)) {
        return changed_blobs(repo, store, new);
    }
    let manifests_changed = all
        .iter()
        .any(|c| c.paths().any(crate::encode::is_manifest));
    let changes = all
        .into_iter()
        .filter_map(|c| match c {
            TreeChange::Renamed { from, to, blob } => match (keep(&from), keep(&to)) {
                (true, true) => Some(TreeChange::Renamed { from, to, blob }),
                (true, false) => Some(TreeChange::Deleted { path: from }),
                (false, true) => Some(TreeChange::Added { path: to, blob }),
                (false, false) => None,
            },
            TreeChange::Deleted { ref path }
            | TreeChange::Added { ref path, .. }
            | TreeChange::Modified { ref path, .. } => keep(path).then_some(c),
        })
        .collect();
    Ok(Listing {
        changes,
        manifests_changed,
        tree: None,
    })
}

/// The code files that differ from the store's, and what else the
/// comparison learnt.
struct Listing {
    changes: Vec<TreeChange>,
    manifests_changed: bool,
    /// The target tree, when it was listed whole.
    tree: Option<ListedTree>,
}

struct ListedTree {
    files: Vec<crate::git::TreeFile>,
    /// Stored code files whose blob the tree holds unchanged.
    unchanged: Vec<String>,
}

/// Changed files found by comparing each stored blob id with the target
/// tree's, which is kept, so filters can be applied to it anew.
fn changed_blobs(repo: &Repo, store: &Store, new: Target) -> Result<Listing, EvolveError> {
    let keep = |p: &str| Lang::from_path(p).is_some();
    let target = repo.snapshot_tree(new.commit, new.tree)?;
    let stored = store.blobs()?;
    let mut out = Vec::new();
    let mut unchanged = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &target.files {
        if !keep(&f.path) {
            continue;
        }
        seen.insert(f.path.clone());
        match stored.get(&f.path) {
            Some(b) if b.as_str() == f.blob.to_string().as_str() => unchanged.push(f.path.clone()),
            Some(_) => out.push(TreeChange::Modified {
                path: f.path.clone(),
                blob: f.blob,
            }),
            None => out.push(TreeChange::Added {
                path: f.path.clone(),
                blob: f.blob,
            }),
        }
    }
    for p in stored.keys() {
        if !seen.contains(p) {
            out.push(TreeChange::Deleted { path: p.clone() });
        }
    }
    // Without the old tree there is no telling whether manifests changed.
    Ok(Listing {
        changes: out,
        manifests_changed: true,
        tree: Some(ListedTree {
            files: target.files,
            unchanged,
        }),
    })
}

/// Jaccard distance between the word sets of two feature lists.
pub fn drift(old: &[String], new: &[String]) -> f32 {
    let words = |fs: &[String]| -> BTreeSet<String> {
        fs.iter()
            .flat_map(|f| prose_words(f))
            .filter(|w| !is_stop(w))
            .collect()
    };
    let (a, b) = (words(old), words(new));
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let inter = a.intersection(&b).count() as f32;
    let union = a.union(&b).count() as f32;
    1.0 - inter / union
}

fn round(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

fn hier_remove(h: &mut HierState, leaf: &str, dir: &str) {
    if let Some(dirs) = h.leaf_dirs.get_mut(leaf) {
        if let Some(n) = dirs.get_mut(dir) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                dirs.remove(dir);
            }
        }
        if dirs.is_empty() {
            h.leaf_dirs.remove(leaf);
        }
    }
}

fn hier_add(h: &mut HierState, leaf: &str, dir: &str) {
    *h.leaf_dirs
        .entry(leaf.to_string())
        .or_default()
        .entry(dir.to_string())
        .or_default() += 1;
}

/// Remove categories with no entities below them, bottom-up (Algorithm 2).
fn prune(cats: &mut BTreeMap<String, Category>, h: &HierState) -> Vec<String> {
    let mut pruned = Vec::new();
    // Deepest first, so an emptied parent is seen after its children went.
    let mut paths: Vec<String> = cats.keys().cloned().collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
    for p in paths {
        let has_members = h.leaf_dirs.contains_key(&p);
        let prefix = format!("{p}/");
        let has_children = cats
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&prefix));
        if !has_members && !has_children {
            cats.remove(&p);
            pruned.push(p);
        }
    }
    pruned.sort();
    pruned
}

/// Recompute every category's scopes from the directories of its leaves.
fn regroundings(cats: &mut BTreeMap<String, Category>, h: &HierState) {
    let mut dirs: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (leaf, ds) in &h.leaf_dirs {
        let mut prefix = String::new();
        for seg in leaf.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(seg);
            dirs.entry(prefix.clone())
                .or_default()
                .extend(ds.keys().map(String::as_str));
        }
    }
    for (path, c) in cats.iter_mut() {
        if let Some(ds) = dirs.get(path) {
            c.scopes = hierarchy::ground_dirs(ds.iter().copied());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
