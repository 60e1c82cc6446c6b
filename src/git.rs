//! Read-only access to git objects. Everything `rpg` indexes comes from a
//! commit's tree, never from the working tree, so a dirty checkout or an
//! untracked file can never leak into the graph.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A failure to read the repository; each variant says what the user should check.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("not a git repository: {dir}")]
    NotARepository {
        dir: PathBuf,
        #[source]
        source: Cause,
    },
    #[error("the repository has no commits yet; commit something before indexing it")]
    EmptyRepository,
    #[error("unknown revision '{rev}'")]
    UnknownRevision {
        rev: String,
        #[source]
        source: Cause,
    },
    #[error("'{0}' does not point to a commit")]
    NotACommit(String),
    #[error("bare repositories are not supported: {0}")]
    Bare(PathBuf),
    #[error("git object {id} could not be read")]
    Object {
        id: String,
        #[source]
        source: Cause,
    },
}

/// What gix (or git) said went wrong, kept as the error's source.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

impl GitError {
    fn object(id: impl ToString, source: impl Into<Cause>) -> GitError {
        GitError::Object {
            id: id.to_string(),
            source: source.into(),
        }
    }
}

/// One tracked regular file of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    pub path: String,
    pub blob: gix::ObjectId,
}

/// How one tracked regular file differs between two trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeChange {
    Deleted {
        path: String,
    },
    Added {
        path: String,
        blob: gix::ObjectId,
    },
    Modified {
        path: String,
        blob: gix::ObjectId,
    },
    /// Detected by content similarity, as `git diff -M` does.
    Renamed {
        from: String,
        to: String,
        blob: gix::ObjectId,
    },
}

impl TreeChange {
    /// The paths the change touches: one, or a rename's two.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        let (a, b) = match self {
            TreeChange::Deleted { path }
            | TreeChange::Added { path, .. }
            | TreeChange::Modified { path, .. } => (path, None),
            TreeChange::Renamed { from, to, .. } => (from, Some(to)),
        };
        std::iter::once(a.as_str()).chain(b.map(String::as_str))
    }
}

/// A tree resolved from a revision, with the commit it came from.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub commit: gix::ObjectId,
    pub tree: gix::ObjectId,
    pub files: Vec<TreeFile>,
    /// Symlinks and submodules: tracked, but never followed.
    pub skipped_links: usize,
    /// Paths rpg will not take (see [`tracked_path`]).
    pub unsafe_names: usize,
}

/// A tree path as rpg takes it: UTF-8, at most 4 KB, and no component git's fsck
/// rejects (empty, `.`, `..`, or `.git` in any case, with the trailing
/// dots and spaces Windows drops). git never checks such a tree out, but a
/// crafted one can sit in the object store, and indexing it would put
/// `.git/…` or a path above the work tree in answers.
pub fn tracked_path(raw: &[u8]) -> Option<String> {
    // Longer than any file system's path, and than an id may be.
    if raw.len() > 4096 {
        return None;
    }
    let path = std::str::from_utf8(raw).ok()?;
    let refused = |c: &str| {
        let bare = c.trim_end_matches(['.', ' ']);
        c.is_empty() || c == "." || c == ".." || bare.eq_ignore_ascii_case(".git")
    };
    (!path.split('/').any(refused)).then(|| path.to_string())
}

/// An opened repository with a working tree.
pub struct Repo {
    inner: gix::ThreadSafeRepository,
    workdir: PathBuf,
}

impl Repo {
    /// Find the repository that contains `dir`.
    pub fn discover(dir: &Path) -> Result<Repo, GitError> {
        let repo = gix::discover(dir).map_err(|e| GitError::NotARepository {
            dir: dir.to_path_buf(),
            source: e.into(),
        })?;
        let workdir = repo
            .workdir()
            .ok_or_else(|| GitError::Bare(repo.git_dir().to_path_buf()))?
            .to_path_buf();
        Ok(Repo {
            inner: repo.into_sync(),
            workdir,
        })
    }

    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The same repository opened again, with an object store of its own.
    /// gix keeps a pack mapped for as long as its store lives, and reading
    /// every blob touches every page of it (235 MB resident for the Linux
    /// tree): a pass over all blobs through this handle gives them back
    /// when it is dropped.
    pub fn reopened(&self) -> Result<Repo, GitError> {
        let git_dir = self.git_dir();
        let repo = gix::open(&git_dir).map_err(|e| GitError::NotARepository {
            dir: git_dir,
            source: e.into(),
        })?;
        Ok(Repo {
            inner: repo.into_sync(),
            workdir: self.workdir.clone(),
        })
    }

    pub fn git_dir(&self) -> PathBuf {
        self.inner.to_thread_local().git_dir().to_path_buf()
    }

    /// A handle for the current thread; cheap, and needed because gix
    /// repositories are not `Sync`.
    pub fn local(&self) -> gix::Repository {
        self.inner.to_thread_local()
    }

    /// The commit HEAD points to, or `None` for an unborn branch.
    pub fn head_commit(&self) -> Option<gix::ObjectId> {
        self.local().head_id().ok().map(|id| id.detach())
    }

    /// Resolve `rev` to a commit id.
    pub fn resolve(&self, rev: &str) -> Result<gix::ObjectId, GitError> {
        let repo = self.local();
        if rev == "HEAD" && repo.head_id().is_err() {
            return Err(GitError::EmptyRepository);
        }
        let id = repo
            .rev_parse_single(rev)
            .map_err(|e| GitError::UnknownRevision {
                rev: rev.to_string(),
                source: e.into(),
            })?;
        let commit = id
            .object()
            .map_err(|e| GitError::object(id.to_string(), e))?
            .peel_to_commit()
            .map_err(|_| GitError::NotACommit(rev.to_string()))?;
        Ok(commit.id)
    }

    /// List the regular files of the commit's tree, sorted by path.
    pub fn snapshot(&self, commit: gix::ObjectId) -> Result<Snapshot, GitError> {
        let tree = self.tree_of(commit)?;
        self.snapshot_tree(commit, tree)
    }

    /// List the regular files of a tree, labelled with `commit`.
    pub fn snapshot_tree(
        &self,
        commit: gix::ObjectId,
        tree: gix::ObjectId,
    ) -> Result<Snapshot, GitError> {
        let repo = self.local();
        let tree_id = tree;
        let tree = repo
            .find_tree(tree)
            .map_err(|e| GitError::object(tree_id, e))?;
        let entries = tree
            .traverse()
            .breadthfirst
            .files()
            .map_err(|e| GitError::object(tree_id, e))?;
        let mut files = Vec::new();
        let (mut skipped_links, mut unsafe_names) = (0, 0);
        for entry in entries {
            // Tree traversal yields directories too; only blobs hold code.
            if entry.mode.is_blob() {
                let Some(path) = tracked_path(&entry.filepath) else {
                    unsafe_names += 1;
                    continue;
                };
                files.push(TreeFile {
                    path,
                    blob: entry.oid,
                });
            } else if entry.mode.is_link() || entry.mode.is_commit() {
                skipped_links += 1;
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Snapshot {
            commit,
            tree: tree.id,
            files,
            skipped_links,
            unsafe_names,
        })
    }

    /// A fresh repository at `dir` that borrows `source`'s objects (git's
    /// alternates), so any commit of `source` can be indexed there without
    /// touching `source` or copying its history.
    pub fn scratch(source: &Repo, dir: &Path) -> Result<Repo, GitError> {
        let created = gix::init(dir).map_err(|e| GitError::object(dir.display(), e))?;
        let objects = source.local().common_dir().join("objects");
        let objects = objects.canonicalize().unwrap_or(objects);
        let info = created.common_dir().join("objects").join("info");
        std::fs::create_dir_all(&info).map_err(|e| GitError::object(dir.display(), e))?;
        std::fs::write(info.join("alternates"), format!("{}\n", objects.display()))
            .map_err(|e| GitError::object(dir.display(), e))?;
        Repo::discover(dir)
    }

    /// A commit's committer time, in seconds since the epoch.
    pub fn commit_time(&self, id: gix::ObjectId) -> Result<i64, GitError> {
        let repo = self.local();
        let c = repo.find_commit(id).map_err(|e| GitError::object(id, e))?;
        let t = c.time().map_err(|e| GitError::object(id, e))?;
        Ok(t.seconds)
    }

    /// Whether git's index tracks `path` (a file a commit brought, as
    /// opposed to one rpg made). False when the index cannot be read.
    pub fn tracks(&self, path: &str) -> bool {
        self.index_unhashed()
            .is_some_and(|index| index.entry_by_path(path.into()).is_some())
    }

    /// Git's index, read without hashing it: every command asks what it
    /// tracks, and its checksum guards against a torn write, which a read
    /// that fails to decode answers as well. On the Linux tree (8 MB)
    /// hashing was a fifth of a post-commit hook's fixed cost.
    fn index_unhashed(&self) -> Option<gix::index::File> {
        let repo = self.local();
        let options = gix::index::decode::Options::default();
        gix::index::File::at_or_default(repo.index_path(), repo.object_hash(), true, options).ok()
    }

    /// Whether git's index tracks anything under the directory `dir`.
    pub fn tracks_under(&self, dir: &str) -> bool {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        self.index_unhashed().is_some_and(|index| {
            index
                .prefixed_entries(prefix.as_str().into())
                .is_some_and(|e| !e.is_empty())
        })
    }

    /// In a partial clone (`git clone --filter=blob:none`), fetch those
    /// of `blobs` this clone lacks from its promisor remote, in one go, as
    /// git itself does when it needs them; elsewhere, nothing. gix reads
    /// only what is here, and one request a blob would take an age. A
    /// fetch that fails leaves the blobs missing: their files are skipped.
    pub fn fetch_missing_blobs(&self, blobs: &[gix::ObjectId]) {
        let repo = self.local();
        let missing: Vec<String> = blobs
            .iter()
            .filter(|id| !repo.has_object(**id))
            .map(|id| id.to_string())
            .collect();
        if missing.is_empty() {
            return;
        }
        let Some(remote) = self.promisor_remote() else {
            return;
        };
        let fetched = std::process::Command::new("git")
            .args(["-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet"])
            .arg(&remote)
            .args([
                "--no-tags",
                "--no-write-fetch-head",
                "--recurse-submodules=no",
                "--filter=blob:none",
                "--stdin",
            ])
            .current_dir(&self.workdir)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if let Ok(mut child) = fetched {
            if let Some(mut stdin) = child.stdin.take() {
                use std::io::Write;
                let _ = stdin.write_all(format!("{}\n", missing.join("\n")).as_bytes());
            }
            let _ = child.wait();
        }
    }

    /// The remote a partial clone fetches missing objects from.
    fn promisor_remote(&self) -> Option<String> {
        let repo = self.local();
        let config = repo.config_snapshot();
        repo.remote_names().into_iter().find_map(|name| {
            let key = format!("remote.{name}.promisor");
            config
                .boolean(key.as_str())
                .filter(|on| *on)
                .map(|_| name.to_string())
        })
    }

    /// A blob's size in bytes, read from its header alone.
    pub fn blob_size(&self, id: gix::ObjectId) -> Option<u64> {
        self.local().find_header(id).ok().map(|h| h.size())
    }

    /// Whether this repository has the commit (a shallow clone or gc may not).
    pub fn has_commit(&self, id: gix::ObjectId) -> bool {
        self.local().find_commit(id).is_ok()
    }

    /// The tree a commit points to.
    pub fn tree_of(&self, commit: gix::ObjectId) -> Result<gix::ObjectId, GitError> {
        let repo = self.local();
        let c = repo
            .find_commit(commit)
            .map_err(|e| GitError::object(commit.to_string(), e))?;
        c.tree_id()
            .map(|t| t.detach())
            .map_err(|e| GitError::object(commit.to_string(), e))
    }

    /// Whether this repository has the tree object.
    pub fn has_tree(&self, id: gix::ObjectId) -> bool {
        self.local().find_tree(id).is_ok()
    }

    /// Whether two trees hold the same everything except the top-level
    /// entry `name`. False when either is missing.
    pub fn same_except(&self, a: gix::ObjectId, b: gix::ObjectId, name: &str) -> bool {
        if a == b {
            return true;
        }
        let repo = self.local();
        let entries = |id: gix::ObjectId| -> Option<Vec<(Vec<u8>, u16, gix::ObjectId)>> {
            let tree = repo.find_tree(id).ok()?;
            let decoded = tree.decode().ok()?;
            Some(
                decoded
                    .entries
                    .iter()
                    .filter(|e| e.filename != name)
                    .map(|e| (e.filename.to_vec(), e.mode.value(), e.oid.to_owned()))
                    .collect(),
            )
        };
        matches!((entries(a), entries(b)), (Some(x), Some(y)) if x == y)
    }

    /// Changed regular files between two trees, renames detected among
    /// the paths `renamable` accepts only (the files rpg indexes): git's
    /// own detection reads every changed blob, data files included, and
    /// one a partial clone or a mirror lacks would stop the whole diff.
    /// Directory entries and symlinks are left out.
    pub fn diff(
        &self,
        old: gix::ObjectId,
        new: gix::ObjectId,
        renamable: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<TreeChange>, GitError> {
        use gix::diff::tree::recorder::Change as C;
        let repo = self.local();
        let old_tree = repo.find_tree(old).map_err(|e| GitError::object(old, e))?;
        let new_tree = repo.find_tree(new).map_err(|e| GitError::object(new, e))?;
        // The plain tree diff: renames are rpg's own (`with_renames`), and
        // gix's diff with rewrites first builds a blob cache whose
        // attributes it reads from git's index, which on the Linux tree
        // (78k entries) was a tenth of a hook that had nothing to do.
        let mut changes = gix::diff::tree::Recorder::default();
        let kind = repo.object_hash();
        gix::diff::tree(
            gix::objs::TreeRefIter::from_bytes(&old_tree.data, kind),
            gix::objs::TreeRefIter::from_bytes(&new_tree.data, kind),
            gix::diff::tree::State::default(),
            &repo.objects,
            &mut changes,
        )
        .map_err(|e| GitError::object(new, e))?;
        let mut out = Vec::new();
        let mut gone: Vec<(String, gix::ObjectId)> = Vec::new();
        for c in changes.records {
            match c {
                C::Addition {
                    path,
                    entry_mode,
                    oid,
                    ..
                } if entry_mode.is_blob() => {
                    if let Some(path) = tracked_path(&path) {
                        out.push(TreeChange::Added { path, blob: oid });
                    }
                }
                C::Deletion {
                    path,
                    entry_mode,
                    oid,
                    ..
                } if entry_mode.is_blob() => {
                    if let Some(path) = tracked_path(&path) {
                        gone.push((path, oid));
                    }
                }
                C::Modification {
                    path,
                    previous_entry_mode,
                    previous_oid,
                    entry_mode,
                    oid,
                } => {
                    let Some(path) = tracked_path(&path) else {
                        continue;
                    };
                    match (previous_entry_mode.is_blob(), entry_mode.is_blob()) {
                        (true, true) => out.push(TreeChange::Modified { path, blob: oid }),
                        (false, true) => out.push(TreeChange::Added { path, blob: oid }),
                        (true, false) => gone.push((path, previous_oid)),
                        (false, false) => {}
                    }
                }
                _ => {}
            }
        }
        Ok(self.with_renames(out, gone, renamable))
    }

    /// `changes` and the deletions `gone`, with each deletion that an
    /// addition continues turned into a rename: the same blob first, then
    /// the most similar content (git's 50%), among `renamable` paths only.
    fn with_renames(
        &self,
        mut changes: Vec<TreeChange>,
        gone: Vec<(String, gix::ObjectId)>,
        renamable: &dyn Fn(&str) -> bool,
    ) -> Vec<TreeChange> {
        let mut from: Vec<Option<(String, gix::ObjectId)>> = gone.into_iter().map(Some).collect();
        let added: Vec<usize> = (0..changes.len())
            .filter(|&i| matches!(&changes[i], TreeChange::Added { path, .. } if renamable(path)))
            .collect();
        // The same blob under another name, each deletion used once.
        let mut pairs: Vec<(usize, usize)> = Vec::new();
        for &a in &added {
            let TreeChange::Added { blob, .. } = &changes[a] else {
                continue;
            };
            let same = (0..from.len()).find(|g| {
                !pairs.iter().any(|(pg, _)| pg == g)
                    && from[*g]
                        .as_ref()
                        .is_some_and(|(p, b)| b == blob && renamable(p))
            });
            if let Some(g) = same {
                pairs.push((g, a));
            }
        }
        let left_gone: Vec<usize> = (0..from.len())
            .filter(|g| !pairs.iter().any(|(pg, _)| pg == g))
            .filter(|&g| from[g].as_ref().is_some_and(|(p, _)| renamable(p)))
            .collect();
        let left_added: Vec<usize> = added
            .iter()
            .copied()
            .filter(|a| !pairs.iter().any(|(_, pa)| pa == a))
            .collect();
        pairs.extend(self.similar(&from, &left_gone, &changes, &left_added));
        pairs.sort_by_key(|(_, a)| std::cmp::Reverse(*a));
        for (g, a) in pairs {
            let (Some((old, _)), TreeChange::Added { path, blob }) = (from[g].take(), &changes[a])
            else {
                continue;
            };
            changes[a] = TreeChange::Renamed {
                from: old,
                to: path.clone(),
                blob: *blob,
            };
        }
        changes.extend(
            from.into_iter()
                .flatten()
                .map(|(path, _)| TreeChange::Deleted { path }),
        );
        changes
    }

    /// Pairs (deletion, addition) of similar content, best first, each side
    /// used once; a blob that cannot be read pairs with nothing. Past
    /// git's own limit of candidates, none.
    fn similar(
        &self,
        from: &[Option<(String, gix::ObjectId)>],
        gone: &[usize],
        changes: &[TreeChange],
        added: &[usize],
    ) -> Vec<(usize, usize)> {
        const LIMIT: usize = 1000;
        if gone.is_empty() || added.is_empty() || gone.len() * added.len() > LIMIT * LIMIT {
            return Vec::new();
        }
        let repo = self.local();
        let lines = |id: gix::ObjectId| -> Option<HashMap<u64, u32>> {
            let data = Repo::read_blob(&repo, id).ok()?;
            let mut counts = HashMap::new();
            for line in data.split(|b| *b == b'\n') {
                let mut h = std::hash::DefaultHasher::new();
                std::hash::Hash::hash(line, &mut h);
                *counts.entry(std::hash::Hasher::finish(&h)).or_insert(0u32) += 1;
            }
            Some(counts)
        };
        let old: Vec<Option<HashMap<u64, u32>>> = gone
            .iter()
            .map(|&g| from[g].as_ref().and_then(|(_, id)| lines(*id)))
            .collect();
        let new: Vec<Option<HashMap<u64, u32>>> = added
            .iter()
            .map(|&a| match &changes[a] {
                TreeChange::Added { blob, .. } => lines(*blob),
                _ => None,
            })
            .collect();
        let mut scored: Vec<(u32, usize, usize)> = Vec::new();
        for (i, o) in old.iter().enumerate() {
            for (j, n) in new.iter().enumerate() {
                let (Some(o), Some(n)) = (o, n) else { continue };
                let (a, b): (u32, u32) = (o.values().sum(), n.values().sum());
                let common: u32 = o
                    .iter()
                    .map(|(k, c)| (*c).min(n.get(k).copied().unwrap_or(0)))
                    .sum();
                // Per mille, so ties break by position, deterministically.
                let score = (2000 * common as u64 / (a + b).max(1) as u64) as u32;
                if score >= 500 {
                    scored.push((score, i, j));
                }
            }
        }
        scored.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
        let (mut used_old, mut used_new) = (BTreeSet::new(), BTreeSet::new());
        let mut out = Vec::new();
        for (_, i, j) in scored {
            if !used_old.contains(&i) && !used_new.contains(&j) {
                used_old.insert(i);
                used_new.insert(j);
                out.push((gone[i], added[j]));
            }
        }
        out
    }

    /// The blob a tree holds at `path`, if a regular file is there.
    pub fn blob_at(
        &self,
        tree: gix::ObjectId,
        path: &str,
    ) -> Result<Option<gix::ObjectId>, GitError> {
        let repo = self.local();
        let id = tree;
        let tree = repo.find_tree(id).map_err(|e| GitError::object(id, e))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(|e| GitError::object(id, e))?;
        Ok(entry.filter(|e| e.mode().is_blob()).map(|e| e.object_id()))
    }

    /// The tree git's own merge makes of three trees; an error when the
    /// two sides conflict. `guard` is set in git's environment so a merge
    /// driver it calls can tell it is nested.
    pub fn merge_trees(
        &self,
        base: gix::ObjectId,
        ours: gix::ObjectId,
        theirs: gix::ObjectId,
        guard: &str,
    ) -> Result<gix::ObjectId, GitError> {
        let fail = |reason: String| GitError::object(format!("{ours}+{theirs}"), reason);
        let out = std::process::Command::new("git")
            .arg("merge-tree")
            .arg("--write-tree")
            .arg(format!("--merge-base={base}"))
            .arg(ours.to_string())
            .arg(theirs.to_string())
            .current_dir(&self.workdir)
            .env(guard, "1")
            .output()
            .map_err(|e| fail(format!("cannot run git merge-tree: {e}")))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        match out.status.code() {
            Some(0) => {
                gix::ObjectId::from_hex(stdout.lines().next().unwrap_or("").trim().as_bytes())
                    .map_err(|_| fail("git merge-tree printed no tree".into()))
            }
            Some(1) => Err(fail("the two sides' code conflicts".into())),
            _ => Err(fail(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            )),
        }
    }

    /// Fetch each of `commits` this shallow clone lacks, with its parent,
    /// from `origin`: a CI checkout holds one commit, so the commits an
    /// issue cites are missing. A full clone is left alone (a depth would
    /// make it shallow), and a commit origin refuses is passed over.
    pub fn fetch_missing(&self, commits: &[gix::ObjectId]) {
        if self.local().is_shallow().ok() != Some(true) {
            return;
        }
        for id in commits.iter().filter(|id| !self.has_commit(**id)) {
            let _ = std::process::Command::new("git")
                .args(["fetch", "--quiet", "--no-tags", "--depth=2", "origin"])
                .arg(id.to_string())
                .current_dir(&self.workdir)
                .env("GIT_TERMINAL_PROMPT", "0")
                .stdin(std::process::Stdio::null())
                .output();
        }
    }

    /// Read a blob's bytes.
    pub fn read_blob(repo: &gix::Repository, id: gix::ObjectId) -> Result<Vec<u8>, GitError> {
        let obj = repo
            .find_object(id)
            .map_err(|e| GitError::object(id.to_string(), e))?;
        Ok(obj.detach().data)
    }

    /// The first-parent chain from `from` (exclusive) to `to` (inclusive),
    /// oldest first; `None` when `from` is not on it or not in this repository.
    pub fn first_parent_path(
        &self,
        from: gix::ObjectId,
        to: gix::ObjectId,
    ) -> Option<Vec<gix::ObjectId>> {
        let repo = self.local();
        let mut path = Vec::new();
        let mut cur = to;
        while cur != from {
            path.push(cur);
            let commit = repo.find_commit(cur).ok()?;
            cur = commit.parent_ids().next()?.detach();
            if path.len() > 1_000_000 {
                return None;
            }
        }
        path.reverse();
        Some(path)
    }

    /// Commits reachable from `to` but not from `from`, capped at `limit`.
    /// Returns `None` when `from` is unknown here (shallow clone, gc).
    pub fn commits_between(
        &self,
        from: gix::ObjectId,
        to: gix::ObjectId,
        limit: usize,
    ) -> Option<usize> {
        if from == to {
            return Some(0);
        }
        let repo = self.local();
        repo.find_commit(from).ok()?;
        let walk = repo.rev_walk([to]).with_hidden([from]).all().ok()?;
        let mut n = 0;
        for info in walk {
            info.ok()?;
            n += 1;
            if n >= limit {
                break;
            }
        }
        Some(n)
    }
}
