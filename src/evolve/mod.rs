//! Evolution: move the graph from the commit it reflects to another one,
//! with work proportional to the change (RPG-Encoder, Appendix A.2).
//!
//! A diff of the two trees (renames detected) names the changed files;
//! their old and new entities are matched by id, then by content hash
//! (moves and renames keep features and place); the rest are deletions and
//! insertions. Only changed entities are lifted; a modification whose
//! features drifted past τ is re-routed. Edges are re-resolved for the
//! changed files and for the files that look up a name that appeared,
//! disappeared or moved. Everything lands in the store as one atomic batch.

pub mod merge;
mod source;

use crate::config::Config;
use crate::encode::{self, Outcome, SourceFile};
use crate::git::{GitError, Repo, TreeChange};
use crate::graph::hierarchy;
use crate::graph::resolve::{bare_name, Facts, NameRef, Resolver};
use crate::graph::{dir_of, Category, Edge, EdgeKind, Entity};
use crate::lift::Lifter;
use crate::parse::{Kind, Lang};
use crate::store::{
    name_bucket, EventLog, FileBlock, FileMentions, HierState, RpgDir, Store, StoreError, WriteSet,
};
use crate::text::words::{is_stop, prose_words};
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
    /// Re-resolving more files than this beyond the changed ones falls
    /// back to re-resolving every file.
    pub max_extra_files: usize,
    /// Event logs kept in the store.
    pub keep_logs: usize,
}

impl Default for UpdateOptions {
    fn default() -> Self {
        UpdateOptions {
            drift_threshold: DEFAULT_DRIFT_THRESHOLD,
            max_extra_files: 2000,
            keep_logs: 20,
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

/// Open the store for any command, believing nothing the snapshot file
/// says that git can check:
/// - a file that is cut, edited, conflicted or of another schema is never
///   adopted: the local store is kept if there is one, else the graph is
///   rebuilt from git (offline), and a notice says so on every command
///   until `rpg update --snapshot` rewrites the file;
/// - an adopted file's blob ids are checked against the tree its header
///   names (one tree walk, no blob reads); files that do not match are
///   re-parsed from git;
/// - what a hook could not do (another writer held the lock) is done now.
pub fn open(repo: &Repo, rpg: &RpgDir, config: &Config) -> Result<Store, EvolveError> {
    let store = match rpg.open_adopting() {
        Ok((store, false)) => store,
        Ok((store, true)) => verify_adopted(repo, rpg, config, store)?,
        Err(e) if e.is_damaged_snapshot() => recover(repo, rpg, config, &e)?,
        Err(e) => return Err(e.into()),
    };
    if let Some(Some(why)) = store.mirrored()?.map(|m| m.damaged) {
        eprintln!(
            "rpg: notice: .rpg/graph.jsonl cannot be used ({why}); answering from the local graph. `rpg update --snapshot` rewrites it"
        );
    }
    match rpg.pending() {
        Some(_) => catch_up(repo, rpg, config, store),
        None => Ok(store),
    }
}

/// Build the store from git when the snapshot cannot be believed, unless a
/// sound local store is there to keep.
fn recover(
    repo: &Repo,
    rpg: &RpgDir,
    config: &Config,
    damage: &StoreError,
) -> Result<Store, EvolveError> {
    let why = damage.to_string();
    if let Ok(store) = rpg.open_store_only() {
        rpg.keep_store_over_damaged(&store, &why)?;
        return Ok(store);
    }
    let head = repo.resolve("HEAD")?;
    let encoded = encode::encode(
        repo,
        config,
        head,
        &crate::lift::offline::OfflineLifter,
        &crate::progress::Silent,
    )?;
    let path = rpg.snapshot_path();
    let mirrored = crate::store::Mirrored {
        digest: crate::store::digest(&std::fs::read(&path).unwrap_or_default()),
        stamp: crate::store::FileStamp::of(&path).unwrap_or_default(),
        damaged: Some(why),
    };
    Ok(rpg.replace_store(&encoded.graph, &encoded.mentions, &mirrored)?)
}

/// Check a just-adopted snapshot's file records against git, and re-parse
/// the files whose records name another blob than the tree holds there.
fn verify_adopted(
    repo: &Repo,
    rpg: &RpgDir,
    config: &Config,
    store: Store,
) -> Result<Store, EvolveError> {
    let meta = store.meta()?;
    let tree = gix::ObjectId::from_hex(meta.tree.as_bytes())
        .map_err(|_| EvolveError::BadCommit(meta.tree.clone()))?;
    // A shallow clone may lack the tree the snapshot names; then the
    // graph is checked against HEAD instead, blob by blob.
    let target = match (repo.has_tree(tree), repo.head_commit()) {
        (true, _) => Target {
            commit: gix::ObjectId::from_hex(meta.commit.as_bytes())
                .map_err(|_| EvolveError::BadCommit(meta.commit.clone()))?,
            tree,
        },
        (false, Some(head)) => Target::commit(repo, head)?,
        (false, None) => return Err(GitError::EmptyRepository.into()),
    };
    let in_tree: BTreeMap<String, String> = repo
        .snapshot_tree(target.commit, target.tree)?
        .files
        .into_iter()
        .map(|f| (f.path, f.blob.to_string()))
        .collect();
    let stored = store.blobs()?;
    let wrong: Vec<&String> = stored
        .iter()
        .filter(|(path, blob)| in_tree.get(*path) != Some(*blob))
        .map(|(path, _)| path)
        .collect();
    if wrong.is_empty() && target.tree == tree {
        return Ok(store);
    }
    if let Some(first) = wrong.first() {
        eprintln!(
            "rpg: notice: {} file record{} in .rpg/graph.jsonl do not match git (first: {first}); re-parsed from git",
            wrong.len(),
            if wrong.len() == 1 { "" } else { "s" }
        );
    }
    let _lock = rpg.lock(crate::store::LOCK_WAIT)?;
    update_offline(repo, &store, config, target, true)?;
    Ok(store)
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
) -> Result<Store, EvolveError> {
    let Ok(_lock) = rpg.lock(std::time::Duration::ZERO) else {
        return Ok(store); // the writer holding it will leave the graph current
    };
    if let Some(head) = repo.head_commit() {
        update_offline(repo, &store, config, Target::commit(repo, head)?, false)?;
    }
    rpg.clear_pending();
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
    let t0 = std::time::Instant::now();
    let _lock = rpg.lock(crate::store::LOCK_WAIT)?;
    let store = open(repo, rpg, config)?;
    crate::timing("update open", t0);
    let report = update_store(repo, &store, config, target, lifter, opts, false)?;
    rpg.clear_pending();
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
    if meta.commit == report.to && meta.tree == target_tree && !recheck {
        return Ok(report);
    }
    if meta.tree == target_tree && !recheck {
        // Same content under another commit (e.g. the commit a pre-commit
        // hook already indexed): only the label moves.
        meta.commit = report.to.clone();
        let mut w = WriteSet::default();
        w.put_meta(&meta);
        store.apply(w)?;
        return Ok(report);
    }
    let old_tree = gix::ObjectId::from_hex(meta.tree.as_bytes())
        .map_err(|_| EvolveError::BadCommit(meta.tree.clone()))?;
    let local = repo.local();
    let exclude = config.excluder()?;
    let mut w = WriteSet::default();
    let mut mention_buckets = Buckets::default();
    let backfilled = backfill_mentions(store, repo, &mut w, &mut mention_buckets)?;
    let old_mentions = |p: &str| -> Result<Option<FileMentions>, StoreError> {
        match backfilled.get(p) {
            Some(m) => Ok(Some(m.clone())),
            None => store.file_mentions(p),
        }
    };

    let t1 = std::time::Instant::now();
    // 1. Which files changed.
    let (changes, crates_changed) = if recheck {
        changed_blobs(repo, store, target)?
    } else {
        changed_files(repo, store, old_tree, target)?
    };
    let mut deltas: Vec<FileDelta> = Vec::new();
    for c in changes {
        let (old_path, new) = match c {
            TreeChange::Deleted { path } => (Some(path), None),
            TreeChange::Added { path, blob } | TreeChange::Modified { path, blob } => {
                let stored = store.blob_of(&path)?;
                if stored.as_deref() == Some(blob.to_string().as_str()) {
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
                match encode::classify(&local, &f, &exclude, config.index.max_file_bytes)? {
                    Outcome::Parsed(s) => Some(s),
                    _ => None,
                }
            }
            None => None,
        };
        if old_path.is_none() && new.is_none() {
            continue;
        }
        deltas.push(FileDelta { old_path, new });
    }
    report.files_changed = deltas.len();
    if deltas.is_empty() && !crates_changed {
        // Only non-code files changed: the graph is the same, the label moves.
        meta.commit = target.commit.to_string();
        meta.tree = target.tree.to_string();
        w.put_meta(&meta);
        store.apply(w)?;
        return Ok(report);
    }

    crate::timing("update diff+parse", t1);
    let t2 = std::time::Instant::now();
    // 2. Old state of the changed files.
    let mut old_blocks: BTreeMap<String, FileBlock> = BTreeMap::new();
    for d in &deltas {
        if let Some(p) = &d.old_path {
            if let Some(b) = store.file_block(p)? {
                old_blocks.insert(p.clone(), b);
            }
        }
    }
    let old_entities: BTreeMap<&str, &Entity> = old_blocks
        .values()
        .flat_map(|b| b.entities.iter())
        .filter(|e| e.kind != Kind::File)
        .map(|e| (e.id.as_str(), e))
        .collect();
    let new_sources: Vec<&SourceFile> = deltas.iter().filter_map(|d| d.new.as_ref()).collect();
    let mut new_ids: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (si, s) in new_sources.iter().enumerate() {
        for (ei, e) in s.facts.parsed.entities.iter().enumerate() {
            new_ids.insert(crate::graph::entity_id(&s.path, &e.qualname), (si, ei));
        }
    }

    crate::timing("update old state", t2);
    let t3 = std::time::Instant::now();
    // 3. Match old and new entities: by id, then by content hash.
    #[derive(Clone)]
    enum Fate {
        Keep(String),
        Modify(String),
        Move(String),
        Insert,
    }
    let mut fate: BTreeMap<String, Fate> = BTreeMap::new();
    let mut unmatched_old: BTreeMap<(Kind, String), Vec<&str>> = BTreeMap::new();
    for (id, e) in &old_entities {
        match new_ids.get(*id) {
            Some(&(si, ei)) => {
                let ne = &new_sources[si].facts.parsed.entities[ei];
                let f = if ne.hash == e.hash && ne.kind == e.kind {
                    Fate::Keep(id.to_string())
                } else {
                    Fate::Modify(id.to_string())
                };
                fate.insert(id.to_string(), f);
            }
            None => unmatched_old
                .entry((e.kind, e.hash.clone()))
                .or_default()
                .push(id),
        }
    }
    for (id, &(si, ei)) in &new_ids {
        if fate.contains_key(id) {
            continue;
        }
        let ne = &new_sources[si].facts.parsed.entities[ei];
        let moved = unmatched_old
            .get_mut(&(ne.kind, ne.hash.clone()))
            .filter(|v| !v.is_empty())
            .map(|v| v.remove(0).to_string());
        fate.insert(id.clone(), moved.map(Fate::Move).unwrap_or(Fate::Insert));
    }
    let deleted: Vec<&str> = unmatched_old.values().flatten().copied().collect();

    // 4. Lift what changed; keep the rest.
    let mut new_blocks: BTreeMap<String, FileBlock> = BTreeMap::new();
    // (id, terms, whether the file's leaf may serve as a prior, features)
    type Pending = (String, BTreeMap<String, f32>, bool, Vec<String>);
    let mut pending_route: Vec<Pending> = Vec::new();
    let mut events: Vec<Event> = Vec::new();
    // Everything to lift goes to the lifter in one call, so a model-backed
    // lifter can batch across files.
    let mut picks: Vec<(usize, usize)> = Vec::new();
    for (si, s) in new_sources.iter().enumerate() {
        for (ei, e) in s.facts.parsed.entities.iter().enumerate() {
            let id = crate::graph::entity_id(&s.path, &e.qualname);
            if matches!(fate[&id], Fate::Modify(_) | Fate::Insert) {
                picks.push((si, ei));
            }
        }
    }
    report.entities_lifted = picks.len();
    let mut lifted: BTreeMap<(usize, usize), crate::lift::Lifted> = picks
        .iter()
        .copied()
        .zip(encode::lift_all(&new_sources, &picks, lifter)?)
        .collect();
    let mut codes = Vec::with_capacity(new_sources.len());
    for (si, s) in new_sources.iter().enumerate() {
        let ents = &s.facts.parsed.entities;
        let mut features = Vec::with_capacity(ents.len());
        let mut lifters = Vec::with_capacity(ents.len());
        for (ei, e) in ents.iter().enumerate() {
            let id = crate::graph::entity_id(&s.path, &e.qualname);
            match &fate[&id] {
                // Offline features are a function of the entity as it is
                // now (its name, owner, docstring, body): recomputed, as a
                // fresh init would. What a model wrote is kept.
                Fate::Keep(old) | Fate::Move(old)
                    if old_entities[old.as_str()].lifter == crate::lift::offline::OFFLINE_ID =>
                {
                    let l = crate::lift::offline::lift(&encode::lift_input(s, ei));
                    features.push(l.features);
                    lifters.push(l.by);
                }
                Fate::Keep(old) | Fate::Move(old) => {
                    let o = old_entities[old.as_str()];
                    features.push(o.features.clone());
                    lifters.push(o.lifter.clone());
                }
                _ => {
                    let l = lifted
                        .remove(&(si, ei))
                        .unwrap_or_else(|| crate::lift::Lifted {
                            features: Vec::new(),
                            by: lifter.id().to_string(),
                        });
                    features.push(l.features);
                    lifters.push(l.by);
                }
            }
        }
        codes.push(encode::code_entities(s, &features, &lifters));
    }
    let inputs: Vec<crate::lift::FileLiftInput> = new_sources
        .iter()
        .zip(&codes)
        .map(|(s, (code, _))| encode::file_input(s, code))
        .collect();
    let summaries = lifter.summarize_files(&inputs)?;
    drop(inputs);
    for ((s, (mut code, contains)), summary) in new_sources.iter().zip(codes).zip(summaries) {
        let mut file = encode::file_entity(s, summary);
        let old_file = old_blocks
            .values()
            .find(|b| b.file.path == s.path)
            .or_else(|| {
                deltas
                    .iter()
                    .find(|d| d.new.as_ref().is_some_and(|n| n.path == s.path))
                    .and_then(|d| d.old_path.as_ref())
                    .and_then(|p| old_blocks.get(p))
            })
            .and_then(|b| b.entities.iter().find(|e| e.kind == Kind::File));
        match old_file {
            Some(of) => {
                file.leaf = of.leaf.clone();
                if of.id != file.id {
                    events.push(Event {
                        event: EventKind::Move,
                        id: file.id.clone(),
                        kind: Kind::File,
                        from: Some(of.id.clone()),
                        leaf: Some(file.leaf.clone()),
                        drift: None,
                    });
                }
            }
            None => {
                pending_route.push((
                    file.id.clone(),
                    encode::file_bag(&file.path, std::iter::once(&file).chain(&code)),
                    false,
                    file.features.clone(),
                ));
                events.push(Event {
                    event: EventKind::Insert,
                    id: file.id.clone(),
                    kind: Kind::File,
                    from: None,
                    leaf: None,
                    drift: None,
                });
            }
        }
        for e in &mut code {
            match &fate[&e.id] {
                Fate::Keep(old) => e.leaf = old_entities[old.as_str()].leaf.clone(),
                Fate::Move(old) => {
                    e.leaf = old_entities[old.as_str()].leaf.clone();
                    events.push(Event {
                        event: EventKind::Move,
                        id: e.id.clone(),
                        kind: e.kind,
                        from: Some(old.clone()),
                        leaf: Some(e.leaf.clone()),
                        drift: None,
                    });
                }
                Fate::Modify(old) => {
                    let o = old_entities[old.as_str()];
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
                        pending_route.push((
                            e.id.clone(),
                            encode::entity_terms(e),
                            false,
                            e.features.clone(),
                        ));
                        events.push(Event {
                            event: EventKind::Relocate,
                            id: e.id.clone(),
                            kind: e.kind,
                            from: Some(o.leaf.clone()),
                            leaf: None,
                            drift: Some(round(d)),
                        });
                    } else {
                        e.leaf = o.leaf.clone();
                        events.push(Event {
                            event: EventKind::Modify,
                            id: e.id.clone(),
                            kind: e.kind,
                            from: None,
                            leaf: Some(e.leaf.clone()),
                            drift: Some(round(d)),
                        });
                    }
                }
                Fate::Insert => {
                    pending_route.push((
                        e.id.clone(),
                        encode::entity_terms(e),
                        true,
                        e.features.clone(),
                    ));
                    events.push(Event {
                        event: EventKind::Insert,
                        id: e.id.clone(),
                        kind: e.kind,
                        from: None,
                        leaf: None,
                        drift: None,
                    });
                }
            }
        }
        let mut entities = vec![file];
        entities.extend(code);
        new_blocks.insert(
            s.path.clone(),
            FileBlock {
                file: encode::file_record(s),
                entities,
                out: contains,
            },
        );
    }
    for id in &deleted {
        events.push(Event {
            event: EventKind::Delete,
            id: id.to_string(),
            kind: old_entities[id].kind,
            from: None,
            leaf: Some(old_entities[id].leaf.clone()),
            drift: None,
        });
    }
    for (path, b) in &old_blocks {
        if !new_blocks.contains_key(path) && !renamed_to_existing(&deltas, path, &new_blocks) {
            events.push(Event {
                event: EventKind::Delete,
                id: path.clone(),
                kind: Kind::File,
                from: None,
                leaf: b.entities.first().map(|e| e.leaf.clone()),
                drift: None,
            });
        }
    }

    crate::timing("update match+lift", t3);
    let t5 = std::time::Instant::now();
    // 5. Hierarchy: remove the old placements, route, add the new ones.
    let mut cats = store.categories()?;
    let mut hier = store.hier()?;
    let cats_before = cats.clone();
    for b in old_blocks.values() {
        for e in &b.entities {
            hier_remove(&mut hier, &e.leaf, dir_of(&e.path));
        }
    }
    // Entities of a new file join the file's leaf; others route on their own.
    let mut routed: BTreeMap<String, String> = BTreeMap::new();
    for (id, terms, use_file_prior, features) in &pending_route {
        let (path, _) = crate::graph::split_id(id);
        let file_leaf = routed.get(path).cloned().or_else(|| {
            new_blocks
                .get(path)
                .and_then(|b| b.entities.first())
                .map(|f| f.leaf.clone())
                .filter(|l| !l.is_empty())
        });
        let is_file = crate::graph::is_file_id(id);
        let new_file = !is_file && routed.contains_key(path);
        let leaf = if new_file {
            file_leaf.clone().unwrap_or_default()
        } else {
            let prior = file_leaf.filter(|_| *use_file_prior);
            let item = crate::lift::RouteInput { id, features };
            let r = match lifter.route(&cats, &item)? {
                Some(under) => hierarchy::complete(&cats, terms, under),
                None => hierarchy::route(&cats, terms, dir_of(path), prior.as_deref()),
            };
            for c in &r.created {
                cats.insert(
                    c.clone(),
                    Category {
                        path: c.clone(),
                        scopes: Vec::new(),
                        terms: hierarchy::terms_of(terms),
                    },
                );
            }
            r.leaf
        };
        routed.insert(id.clone(), leaf);
    }
    for b in new_blocks.values_mut() {
        for e in &mut b.entities {
            if let Some(l) = routed.get(&e.id) {
                e.leaf = l.clone();
            }
        }
    }
    for ev in &mut events {
        if ev.leaf.is_none() {
            ev.leaf = routed.get(&ev.id).cloned();
        }
    }
    for b in new_blocks.values() {
        for e in &b.entities {
            hier_add(&mut hier, &e.leaf, dir_of(&e.path));
        }
    }
    let pruned = prune(&mut cats, &hier);
    regroundings(&mut cats, &hier);
    report.categories_created = cats
        .keys()
        .filter(|c| !cats_before.contains_key(*c))
        .cloned()
        .collect();
    report.categories_pruned = pruned;

    crate::timing("update hierarchy", t5);
    let t6 = std::time::Instant::now();
    // 6. Edges: re-resolve the changed files and those that look up a name
    // that appeared, disappeared or moved.
    let gone: BTreeSet<String> = old_blocks
        .keys()
        .filter(|p| !new_blocks.contains_key(*p))
        .cloned()
        .collect();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for id in &deleted {
        names.insert(bare_name(crate::graph::split_id(id).1).to_string());
    }
    for (id, f) in &fate {
        match f {
            Fate::Insert => {
                names.insert(bare_name(crate::graph::split_id(id).1).to_string());
            }
            Fate::Move(old) => {
                names.insert(bare_name(crate::graph::split_id(id).1).to_string());
                names.insert(bare_name(crate::graph::split_id(old).1).to_string());
            }
            Fate::Modify(old) if old_entities[old.as_str()].kind == Kind::Class => {
                names.insert(bare_name(crate::graph::split_id(id).1).to_string());
            }
            _ => {}
        }
    }
    for path in gone.iter().chain(new_blocks.keys()) {
        if !old_blocks.contains_key(path) || gone.contains(path) {
            names.extend(module_names(path));
        }
    }
    // A changed file that binds a name differently (an import, a
    // re-export) changes what its importers resolve that name to.
    let new_facts: Vec<Arc<Facts>> = new_sources.iter().map(|s| s.facts.clone()).collect();
    for d in &deltas {
        let old = match (
            &d.old_path,
            d.old_path.as_ref().and_then(|p| old_blocks.get(p)),
        ) {
            (Some(p), Some(b)) => {
                let binds = old_mentions(p)?.map(|m| m.binds).unwrap_or_default();
                exports(top_level_of_block(b), binds)
            }
            _ => BTreeMap::new(),
        };
        let new = d
            .new
            .as_ref()
            .map(|s| exports(top_level_of_facts(&s.facts), s.facts.binds()))
            .unwrap_or_default();
        for name in old.keys().chain(new.keys()) {
            if old.get(name) != new.get(name) {
                names.insert(name.clone());
            }
        }
    }
    let mut affected: BTreeSet<String> = new_blocks.keys().cloned().collect();
    // Files whose edges point into entities that vanished or moved.
    let vanished: BTreeSet<&str> = deleted
        .iter()
        .copied()
        .chain(fate.values().filter_map(|f| match f {
            Fate::Move(old) => Some(old.as_str()),
            _ => None,
        }))
        .chain(gone.iter().map(String::as_str))
        .collect();
    for p in old_blocks.keys() {
        for e in store.inbound(p)? {
            if vanished.contains(e.dst.as_str()) {
                affected.insert(crate::graph::split_id(&e.src).0.to_string());
            }
        }
    }
    for n in &names {
        affected.extend(mention_buckets.lookup(store, n)?);
    }
    affected.retain(|p| !gone.contains(p) || new_blocks.contains_key(p));
    let extra = affected
        .iter()
        .filter(|p| !new_blocks.contains_key(*p))
        .count();
    if extra > opts.max_extra_files || crates_changed {
        report.full_resolve = true;
        affected.extend(store.blobs()?.into_keys().filter(|p| !gone.contains(p)));
    }
    report.extra_files_resolved = affected
        .iter()
        .filter(|p| !new_blocks.contains_key(*p))
        .count();
    if crates_changed {
        let snapshot = repo.snapshot_tree(target.commit, target.tree)?;
        meta.crates = encode::crate_roots(repo, &snapshot.files);
    }
    let source = StoreSource::new(store, repo, &new_facts, gone.clone(), &meta.crates);
    let resolver = Resolver::new(&source);
    let mut counts = store.counts()?;
    let mut inbound_delta: BTreeMap<String, (BTreeSet<Edge>, BTreeSet<Edge>)> = BTreeMap::new();
    let mut touch_edges = |old: &[Edge], new: &[Edge]| {
        let old: BTreeSet<&Edge> = old.iter().collect();
        let new: BTreeSet<&Edge> = new.iter().collect();
        for e in old.difference(&new) {
            let p = crate::graph::split_id(&e.dst).0.to_string();
            inbound_delta.entry(p).or_default().0.insert((*e).clone());
        }
        for e in new.difference(&old) {
            let p = crate::graph::split_id(&e.dst).0.to_string();
            inbound_delta.entry(p).or_default().1.insert((*e).clone());
        }
    };
    for path in &affected {
        // The block as stored before this update, whose counts come off.
        let (mut block, stored) = match new_blocks.remove(path) {
            Some(b) => (b, old_blocks.get(path).map(FileBlock::counts)),
            None => match store.file_block(path)? {
                Some(b) => {
                    let c = b.counts();
                    (b, Some(c))
                }
                None => continue,
            },
        };
        let old_out: Vec<Edge> = match old_blocks.get(path) {
            Some(b) => b.out.clone(),
            None if deltas
                .iter()
                .any(|d| d.new.as_ref().is_some_and(|n| &n.path == path)) =>
            {
                // A renamed file's old edges start under its old path.
                deltas
                    .iter()
                    .find(|d| d.new.as_ref().is_some_and(|n| &n.path == path))
                    .and_then(|d| d.old_path.as_ref())
                    .and_then(|p| old_blocks.get(p))
                    .map(|b| b.out.clone())
                    .unwrap_or_default()
            }
            None => block.out.clone(),
        };
        let mut out: Vec<Edge> = block
            .out
            .iter()
            .filter(|e| e.kind == EdgeKind::Contains)
            .cloned()
            .collect();
        out.extend(resolver.edges_of(path));
        out.sort();
        out.dedup();
        touch_edges(&old_out, &out);
        if let Some(c) = stored {
            counts.apply(&c, -1);
        }
        block.out = out;
        counts.apply(&block.counts(), 1);
        w.put_block(&block);
        new_blocks.insert(path.clone(), block);
    }
    report.files_parsed_on_demand = *source.parsed_on_demand.borrow();
    for (blob, f) in source.fresh.borrow().iter() {
        w.put_parsed(blob, &f.parsed);
    }
    // Cache the changed files' new parses too, and forget their old ones.
    for b in old_blocks.values() {
        w.remove_parsed(&b.file.blob);
    }
    for s in &new_sources {
        w.put_parsed(&s.blob.to_string(), &s.facts.parsed);
    }
    for p in &gone {
        if let Some(ob) = old_blocks.get(p) {
            counts.apply(&ob.counts(), -1);
            let out = ob.out.clone();
            touch_edges(&out, &[]);
        }
        w.remove_block(p);
    }
    for (p, (removed, added)) in inbound_delta {
        let mut edges: BTreeSet<Edge> = store.inbound(&p)?.into_iter().collect();
        for e in &removed {
            edges.remove(e);
        }
        edges.extend(added);
        let edges: Vec<Edge> = edges.into_iter().collect();
        w.put_inbound(&p, &edges);
    }

    crate::timing("update edges", t6);
    let t7 = std::time::Instant::now();
    // 7. Names and mentions indexes.
    let mut name_buckets: BTreeMap<String, BTreeMap<String, Vec<NameRef>>> = BTreeMap::new();
    let mut edit_names =
        |path: &str, refs: Vec<(String, NameRef)>, add: bool| -> Result<(), StoreError> {
            for (n, r) in refs {
                let b = name_bucket(&n);
                if !name_buckets.contains_key(&b) {
                    name_buckets.insert(b.clone(), store.names_bucket(&b)?);
                }
                let list = name_buckets
                    .get_mut(&b)
                    .expect("bucket loaded")
                    .entry(n)
                    .or_default();
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
    for (p, b) in &old_blocks {
        edit_names(p, crate::store::block_names(b), false)?;
    }
    for s in &new_sources {
        if let Some(b) = new_blocks.get(&s.path) {
            edit_names(&s.path, crate::store::block_names(b), true)?;
        }
    }
    for (b, mut m) in name_buckets {
        m.retain(|_, v| !v.is_empty());
        w.put_names(&b, &m);
    }
    for d in &deltas {
        let old = match &d.old_path {
            Some(p) => old_mentions(p)?.map(|m| m.names).unwrap_or_default(),
            None => BTreeSet::new(),
        };
        let new = d
            .new
            .as_ref()
            .map(|s| s.facts.mentions())
            .unwrap_or_default();
        let new_path = d.new.as_ref().map(|s| s.path.as_str());
        let same_path = d.old_path.as_deref() == new_path;
        // Only names whose entry changes are touched: most survive an edit.
        if let Some(p) = &d.old_path {
            for n in old.iter().filter(|n| !same_path || !new.contains(*n)) {
                mention_buckets.edit(store, n, p, false)?;
            }
            if !same_path {
                w.put_file_mentions(p, None);
            }
        }
        if let Some(s) = &d.new {
            for n in new.iter().filter(|n| !same_path || !old.contains(*n)) {
                mention_buckets.edit(store, n, &s.path, true)?;
            }
            let m = FileMentions {
                blob: s.blob.to_string(),
                names: new,
                binds: s.facts.binds(),
            };
            w.put_file_mentions(&s.path, Some(&m));
        }
    }
    mention_buckets.write(&mut w);

    crate::timing("update indexes", t7);
    let t8 = std::time::Instant::now();
    // 8. Hierarchy records, meta, counts, event log: one atomic batch.
    for c in cats_before.keys() {
        if !cats.contains_key(c) {
            w.remove_category(c);
        }
    }
    for c in cats.values() {
        if cats_before.get(&c.path) != Some(c) {
            w.put_category(c);
        }
    }
    w.put_hier(&hier);
    counts.categories = cats.len();
    w.put_counts(&counts);
    meta.commit = target.commit.to_string();
    meta.tree = target.tree.to_string();
    w.put_meta(&meta);
    events.sort_by(|a, b| a.id.cmp(&b.id).then(a.event.cmp(&b.event)));
    report.events = events;
    let logs = store.events()?;
    let seq = logs.last().map(|(s, _)| s + 1).unwrap_or(0);
    w.push_event(
        seq,
        &EventLog {
            from: report.from.clone(),
            to: report.to.clone(),
            events: serde_json::to_value(&report.events).unwrap_or_default(),
        },
    );
    let excess = (logs.len() + 1).saturating_sub(opts.keep_logs);
    for (s, _) in logs.iter().take(excess) {
        w.remove_event(*s);
    }
    crate::timing("update records", t8);
    let ta = std::time::Instant::now();
    store.apply(w)?;
    crate::timing("update apply", ta);
    Ok(report)
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
) -> Result<(Vec<TreeChange>, bool), EvolveError> {
    let is_manifest = |p: &str| p == "Cargo.toml" || p.ends_with("/Cargo.toml");
    let keep = |p: &str| Lang::from_path(p).is_some();
    if repo.has_tree(old) {
        let all = repo.diff(old, new.tree)?;
        let crates_changed = all.iter().any(|c| match c {
            TreeChange::Deleted { path }
            | TreeChange::Added { path, .. }
            | TreeChange::Modified { path, .. } => is_manifest(path),
            TreeChange::Renamed { from, to, .. } => is_manifest(from) || is_manifest(to),
        });
        let code = all
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
        return Ok((code, crates_changed));
    }
    changed_blobs(repo, store, new)
}

/// Changed files found by comparing each stored blob id with the target
/// tree's, for when no old tree can be trusted or found.
fn changed_blobs(
    repo: &Repo,
    store: &Store,
    new: Target,
) -> Result<(Vec<TreeChange>, bool), EvolveError> {
    let keep = |p: &str| Lang::from_path(p).is_some();
    let target = repo.snapshot_tree(new.commit, new.tree)?;
    let stored = store.blobs()?;
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &target.files {
        if !keep(&f.path) {
            continue;
        }
        seen.insert(f.path.clone());
        match stored.get(&f.path) {
            Some(b) if b.as_str() == f.blob.to_string().as_str() => {}
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
    Ok((out, true))
}

/// Module names a file answers to: its stem, or its directory for
/// `__init__.py`, `mod.rs`, `lib.rs` and `main.rs`.
fn module_names(path: &str) -> Vec<String> {
    let file = crate::text::file_name(path);
    let stem = file.split('.').next().unwrap_or(file);
    let mut out = vec![stem.to_string()];
    if matches!(stem, "__init__" | "mod" | "lib" | "main") {
        if let Some(dir) = path.rsplit('/').nth(1) {
            out.push(dir.to_string());
        }
    }
    out
}

/// What a file exports: each name it defines at top level or binds by
/// import, with what it is bound to. Importers see a change here.
fn exports(
    defined: Vec<(String, Kind)>,
    binds: BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut out = binds;
    for (name, kind) in defined {
        out.insert(name, format!("def {}", kind.as_str()));
    }
    out
}

fn top_level_of_facts(f: &Facts) -> Vec<(String, Kind)> {
    f.parsed
        .entities
        .iter()
        .filter(|e| e.parent.is_none())
        .map(|e| (e.name.clone(), e.kind))
        .collect()
}

fn top_level_of_block(b: &FileBlock) -> Vec<(String, Kind)> {
    let child: BTreeSet<&str> = b
        .out
        .iter()
        .filter(|e| e.kind == EdgeKind::Contains && e.src != b.file.path)
        .map(|e| e.dst.as_str())
        .collect();
    b.entities
        .iter()
        .filter(|e| e.kind != Kind::File && !child.contains(e.id.as_str()))
        .map(|e| (bare_name(&e.qualname).to_string(), e.kind))
        .collect()
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

/// Read-modify-write cache of mention buckets.
#[derive(Default)]
struct Buckets {
    loaded: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

impl Buckets {
    fn load(&mut self, store: &Store, b: &str) -> Result<(), StoreError> {
        if !self.loaded.contains_key(b) {
            self.loaded.insert(b.to_string(), store.mentions_bucket(b)?);
        }
        Ok(())
    }

    /// Files that look `name` up.
    fn lookup(&mut self, store: &Store, name: &str) -> Result<BTreeSet<String>, StoreError> {
        let b = name_bucket(name);
        self.load(store, &b)?;
        Ok(self.loaded[&b].get(name).cloned().unwrap_or_default())
    }

    fn edit(&mut self, store: &Store, name: &str, path: &str, add: bool) -> Result<(), StoreError> {
        let b = name_bucket(name);
        self.load(store, &b)?;
        let m = self.loaded.get_mut(&b).expect("bucket loaded");
        let set = m.entry(name.to_string()).or_default();
        if add {
            set.insert(path.to_string());
        } else {
            set.remove(path);
        }
        if set.is_empty() {
            m.remove(name);
        }
        Ok(())
    }

    fn write(&self, w: &mut WriteSet) {
        for (b, m) in &self.loaded {
            w.put_mentions(b, m);
        }
    }
}

/// A store rebuilt from a snapshot knows no mentions yet: parse the files
/// that lack them (once) so re-resolution stays exact.
fn backfill_mentions(
    store: &Store,
    repo: &Repo,
    w: &mut WriteSet,
    buckets: &mut Buckets,
) -> Result<BTreeMap<String, FileMentions>, EvolveError> {
    let mut added = BTreeMap::new();
    if !store.mentions_missing()? {
        return Ok(added);
    }
    let have = store.all_file_mentions()?;
    let local = repo.local();
    for (path, blob) in store.blobs()? {
        if have.get(&path).is_some_and(|m| m.blob == blob) {
            continue;
        }
        let (Some(lang), Ok(id)) = (
            Lang::from_path(&path),
            gix::ObjectId::from_hex(blob.as_bytes()),
        ) else {
            continue;
        };
        let Ok(text) = Repo::read_blob(&local, id).map(String::from_utf8) else {
            continue;
        };
        let Ok(text) = text else { continue };
        let facts = Facts::new(path.clone(), lang, crate::parse::parse(lang, &text));
        let m = FileMentions {
            blob,
            names: facts.mentions(),
            binds: facts.binds(),
        };
        for n in &m.names {
            buckets.edit(store, n, &path, true)?;
        }
        w.put_file_mentions(&path, Some(&m));
        added.insert(path, m);
    }
    w.set_mentions_missing(false);
    Ok(added)
}
