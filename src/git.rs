//! Read-only access to git objects. Everything `rpg` indexes comes from a
//! commit's tree, never from the working tree, so a dirty checkout or an
//! untracked file can never leak into the graph.

use std::path::{Path, PathBuf};

/// A failure to read the repository; each variant says what the user should check.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("not a git repository: {0} (run rpg inside a git checkout or pass --repo)")]
    NotARepository(PathBuf),
    #[error("the repository has no commits yet; commit something before indexing it")]
    EmptyRepository,
    #[error("unknown revision '{0}'")]
    UnknownRevision(String),
    #[error("'{0}' does not point to a commit")]
    NotACommit(String),
    #[error("bare repositories are not supported: {0}")]
    Bare(PathBuf),
    #[error("git object {id} could not be read: {reason}")]
    Object { id: String, reason: String },
}

/// One tracked regular file of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    pub path: String,
    pub blob: gix::ObjectId,
}

/// A tree resolved from a revision, with the commit it came from.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub commit: gix::ObjectId,
    pub tree: gix::ObjectId,
    pub files: Vec<TreeFile>,
    /// Symlinks and submodules: tracked, but never followed.
    pub skipped_links: usize,
}

/// An opened repository with a working tree.
pub struct Repo {
    inner: gix::ThreadSafeRepository,
    workdir: PathBuf,
}

impl Repo {
    /// Find the repository that contains `dir`.
    pub fn discover(dir: &Path) -> Result<Repo, GitError> {
        let repo = gix::discover(dir).map_err(|_| GitError::NotARepository(dir.to_path_buf()))?;
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
            .map_err(|_| GitError::UnknownRevision(rev.to_string()))?;
        let commit = id
            .object()
            .map_err(|e| GitError::Object {
                id: id.to_string(),
                reason: e.to_string(),
            })?
            .peel_to_commit()
            .map_err(|_| GitError::NotACommit(rev.to_string()))?;
        Ok(commit.id)
    }

    /// List the regular files of the commit's tree, sorted by path.
    pub fn snapshot(&self, commit: gix::ObjectId) -> Result<Snapshot, GitError> {
        let repo = self.local();
        let obj_err = |e: &dyn std::fmt::Display| GitError::Object {
            id: commit.to_string(),
            reason: e.to_string(),
        };
        let commit_obj = repo.find_commit(commit).map_err(|e| obj_err(&e))?;
        let tree = commit_obj.tree().map_err(|e| obj_err(&e))?;
        let entries = tree
            .traverse()
            .breadthfirst
            .files()
            .map_err(|e| obj_err(&e))?;
        let mut files = Vec::new();
        let mut skipped_links = 0;
        for entry in entries {
            // Tree traversal yields directories too; only blobs hold code.
            if entry.mode.is_blob() {
                let Ok(path) = String::from_utf8(entry.filepath.to_vec()) else {
                    skipped_links += 1;
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
        })
    }

    /// Read a blob's bytes.
    pub fn read_blob(repo: &gix::Repository, id: gix::ObjectId) -> Result<Vec<u8>, GitError> {
        let obj = repo.find_object(id).map_err(|e| GitError::Object {
            id: id.to_string(),
            reason: e.to_string(),
        })?;
        Ok(obj.detach().data)
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
