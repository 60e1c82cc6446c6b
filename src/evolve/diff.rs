//! Phase 1: which indexed files changed between the graph's tree and the
//! target's, what the change does to how `.h` files and attributes read,
//! and the changed files parsed.

use super::*;

/// Phase 1's result: the changed files, parsed, and whether a Cargo
/// manifest changed (which can rename crates).
pub(super) struct Change {
    pub(super) deltas: Vec<FileDelta>,
    pub(super) crates_changed: bool,
    /// How the target's `.h` files were read.
    pub(super) headers: Option<Lang>,
    /// The target's `.gitattributes` files.
    pub(super) attributes: Vec<String>,
    /// Files whose blob could not be read: left out, tried again next time.
    pub(super) unreadable: Vec<String>,
}

/// How phase 1 looks: with `recheck`, every stored blob is compared with
/// the target tree's instead of diffing two trees; with `replan`, every
/// code file of the target is read again as well.
pub(super) struct Plan<'o> {
    pub(super) recheck: bool,
    pub(super) replan: bool,
    /// Files whose blob could not be read last time, read again.
    pub(super) retry: Vec<String>,
    pub(super) opts: &'o UpdateOptions,
}

/// Phase 1: which indexed files changed between the graph's tree and the
/// target, each parsed anew (see [`Plan`]).
pub(super) fn diff(
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
pub(super) fn newly_excluded(tree: &ListedTree, exclude: &Exclude) -> Vec<TreeChange> {
    tree.unchanged
        .iter()
        .filter(|p| exclude.is_match(p))
        .map(|p| TreeChange::Deleted { path: p.clone() })
        .collect()
}

/// The target's blobs of the attributes files the graph's tree had, when
/// no diff touched one.
pub(super) fn stored_attributes(
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
pub(super) fn headers_after(
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
pub(super) fn keeps_headers(old: Lang, changes: &[TreeChange], exclude: &Exclude) -> bool {
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

pub(super) fn renamed_to_existing(
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
pub(super) fn changed_files(
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
pub(super) struct Listing {
    pub(super) changes: Vec<TreeChange>,
    pub(super) manifests_changed: bool,
    /// The target tree, when it was listed whole.
    pub(super) tree: Option<ListedTree>,
}

pub(super) struct ListedTree {
    pub(super) files: Vec<crate::git::TreeFile>,
    /// Stored code files whose blob the tree holds unchanged.
    pub(super) unchanged: Vec<String>,
}

/// Changed files found by comparing each stored blob id with the target
/// tree's, which is kept, so filters can be applied to it anew.
pub(super) fn changed_blobs(
    repo: &Repo,
    store: &Store,
    new: Target,
) -> Result<Listing, EvolveError> {
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
