//! Opening the graph for any command, believing nothing the snapshot file
//! says that git can check. The seal on a snapshot proves integrity, not
//! truth: anyone can compute it. So a clone's graph is built from git,
//! always, and the snapshot lends only what a model was paid for.

use super::*;
use crate::store::snapshot::{self, Claims};
use crate::store::{Adoption, FileStamp, Mirrored, StoreError};

/// Open the store for any command:
/// - a store that mirrors the snapshot on disk is used as it is;
/// - otherwise (a fresh clone, a pull, a checkout) the snapshot is
///   adopted: see [`adopt`];
/// - a file that is cut, edited, conflicted or of another schema is never
///   adopted: the local store is kept if there is one, else the graph is
///   rebuilt from git (offline), and a notice says so on every command
///   until `rpg update --snapshot` rewrites the file;
/// - what a hook could not do (another writer held the lock) is done now.
pub fn open(repo: &Repo, rpg: &RpgDir, config: &Config) -> Result<Store, EvolveError> {
    let store = open_as_is(repo, rpg, config)?;
    if rpg.pending(repo).is_none() {
        return Ok(store);
    }
    if let Ok(lock) = rpg.lock(std::time::Duration::ZERO) {
        return catch_up(repo, rpg, config, store, lock);
    }
    // Another writer (the hook's own background process) is finishing the
    // update, and may be waiting for this process's hold on the store:
    // let go, wait for it a while, and answer from what it left.
    drop(store);
    let lock = rpg.lock(crate::store::LOCK_WAIT);
    let store = open_as_is(repo, rpg, config)?;
    match (lock, rpg.pending(repo)) {
        (Ok(lock), Some(_)) => catch_up(repo, rpg, config, store, lock),
        _ => Ok(store),
    }
}

/// [`open`] without doing what a hook left pending.
fn open_as_is(repo: &Repo, rpg: &RpgDir, config: &Config) -> Result<Store, EvolveError> {
    refuse_tracked_store(repo)?;
    let store = match rpg.open() {
        Ok(store) => store,
        Err(StoreError::Unadopted) => match adopt(repo, rpg, config) {
            Err(EvolveError::Store(e)) if e.is_damaged_snapshot() => {
                recover(repo, rpg, config, &e)?
            }
            other => other?,
        },
        Err(e) if e.is_damaged_snapshot() => recover(repo, rpg, config, &e)?,
        Err(e) => return Err(e.into()),
    };
    if let Some(Some(why)) = store.mirrored()?.map(|m| m.damaged) {
        crate::notice!(
            "rpg: notice: .rpg/graph.jsonl cannot be used ({why}); answering from the local graph. `rpg update --snapshot` rewrites it"
        );
    }
    Ok(store)
}

/// A store that came with a commit would be believed whole, lies and all,
/// and replacing it would delete files git tracks: rpg's store is its
/// own, never the repository's.
pub fn refuse_tracked_store(repo: &Repo) -> Result<(), EvolveError> {
    match repo.tracks_under(".rpg/store") {
        true => Err(EvolveError::TrackedStore),
        false => Ok(()),
    }
}

/// Adopt the committed snapshot: build the graph of the tree it names
/// from git (offline, seconds), lending it from the snapshot only a
/// model's features, summaries and hierarchy, each where the re-parse
/// confirms the entity's source hash (or the file's blob). Forged
/// docstrings, signatures, entities, edges and files are not read at all;
/// what the snapshot held that git did not confirm is counted, and said.
fn adopt(repo: &Repo, rpg: &RpgDir, config: &Config) -> Result<Store, EvolveError> {
    let _lock = rpg.lock(crate::store::LOCK_WAIT)?;
    let path = rpg.snapshot_path();
    let bytes = rpg.snapshot_bytes()?;
    let target = target_of(repo, &snapshot::header_of(&bytes, &path)?)?;
    let listing = repo.snapshot_tree(target.commit, target.tree)?;
    let blobs: BTreeMap<&str, gix::ObjectId> = listing
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.blob))
        .collect();
    // A file's claims are read only for the blob the tree holds, and no
    // more of them than its size could define.
    let claims = snapshot::claims(&bytes, &path, |f| {
        let blob = blobs
            .get(f.path.as_str())
            .filter(|b| b.to_string() == f.blob)?;
        Some(repo.blob_size(*blob).map_or(16, |n| n as usize / 4 + 16))
    })?;
    let mirrored = Mirrored {
        digest: snapshot::fingerprint(&bytes),
        stamp: FileStamp::of(&path).unwrap_or_default(),
        damaged: None,
    };
    // The file and what was claimed from it go as soon as they have been
    // used: on the Linux tree they were a gigabyte beside the graph.
    drop(bytes);
    let lifter = crate::lift::adopted::Adopted::new(&claims);
    let encoded =
        encode::encode_snapshot(repo, config, listing, &lifter, &crate::progress::Silent)?;
    drop(lifter);
    let (adoption, first) = tally(&claims, &encoded.graph);
    let claimed: Vec<String> = claims.paths.iter().map(|(p, _)| p.clone()).collect();
    drop(claims);
    let store = rpg.replace_store(&encoded.graph, encoded.resolved, &mirrored)?;
    let mut w = WriteSet::default();
    w.put_adoption(&adoption);
    // Where the file says more or other than the graph, the next snapshot
    // written says what the graph holds, every file of it. The file's seal
    // held (or claims would have refused it), so its header line stands for
    // all of its bytes, and the graph's header is made without its body.
    let (header, _) = snapshot::header_sealed(&encoded.graph);
    if snapshot::fingerprint_of_sealed(&header) != mirrored.digest {
        for p in claimed.iter().chain(encoded.graph.files.keys()) {
            w.snapshot_differs(p);
        }
    }
    store.apply(w)?;
    if let Some(first) = first {
        crate::notice!(
            "rpg: notice: {} of {} records in .rpg/graph.jsonl do not match git (first: {first}); the graph was built from git without them",
            adoption.dropped,
            adoption.dropped + adoption.confirmed
        );
    }
    Ok(store)
}

/// The tree a snapshot names, or HEAD's when this clone lacks it (shallow).
fn target_of(repo: &Repo, meta: &crate::graph::Meta) -> Result<Target, EvolveError> {
    let tree = gix::ObjectId::from_hex(meta.tree.as_bytes()).ok();
    let commit = gix::ObjectId::from_hex(meta.commit.as_bytes()).ok();
    match (
        tree.filter(|t| repo.has_tree(*t)),
        commit,
        repo.head_commit(),
    ) {
        (Some(tree), Some(commit), _) => Ok(Target { commit, tree }),
        (_, _, Some(head)) => Ok(Target::commit(repo, head)?),
        (_, _, None) => Err(GitError::EmptyRepository.into()),
    }
}

/// How many of the snapshot's entity records the graph built from git
/// bears out (the same entity, with the same source hash, span, signature
/// and docstring), and the first file with one it did not.
fn tally(claims: &Claims, g: &crate::graph::Graph) -> (Adoption, Option<String>) {
    let holds = |c: &snapshot::EntityClaim| {
        g.entities.get(&c.id).is_some_and(|e| {
            e.kind == c.kind
                && e.hash == c.hash
                && e.signature == c.signature
                && e.doc == c.doc
                && (e.start_line, e.end_line) == c.lines
        })
    };
    let mut confirmed = 0;
    let mut first = None;
    for (path, records) in &claims.paths {
        let held = claims
            .files
            .get(path)
            .map_or(0, |(_, kept)| kept.iter().filter(|c| holds(c)).count());
        confirmed += held;
        if held < *records && first.is_none() {
            first = Some(path.clone());
        }
    }
    let adoption = Adoption {
        confirmed,
        dropped: claims.records.saturating_sub(confirmed),
    };
    (adoption, first)
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
    let mirrored = Mirrored {
        digest: snapshot::fingerprint(&rpg.snapshot_bytes().unwrap_or_default()),
        stamp: FileStamp::of(&path).unwrap_or_default(),
        damaged: Some(why),
    };
    Ok(rpg.replace_store(&encoded.graph, encoded.resolved, &mirrored)?)
}
