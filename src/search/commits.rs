//! Commits an issue cites ("a regression of a6fe347", a `/commit/` link)
//! point at the functions they changed: a regression is most often
//! mended where it was made. Each changed function becomes a frame, as
//! if a stack trace had named it; a commit the repository does not hold
//! is passed over.

use super::query::{Frame, Query};
use crate::git::{Repo, TreeChange};
use crate::parse::{self, Lang};
use std::collections::BTreeMap;

/// A commit changing more code files than this is a sweep (a rename, a
/// reformat), which says nothing about where one bug lives.
const MAX_FILES: usize = 8;
/// A file with more changed functions than this counts only as a file.
const MAX_FUNCTIONS: usize = 10;
/// Files larger than this are not parsed for it.
const MAX_BYTES: usize = 1 << 20;

/// Add a frame for each function the commits `q` cites changed, in the
/// files as that commit left them; `headers` is how `.h` files read.
pub fn add_commit_frames(repo: &Repo, headers: Lang, q: &mut Query) {
    for sha in q.commits.clone() {
        q.frames.extend(changed_functions(repo, headers, &sha));
    }
    q.frames.sort();
    q.frames.dedup();
}

/// The frames for one cited commit; none when it is unknown, a root, a
/// merge's second side or a sweep.
fn changed_functions(repo: &Repo, headers: Lang, sha: &str) -> Vec<Frame> {
    let Ok(id) = repo.resolve(sha) else {
        return Vec::new();
    };
    changed_in(repo, headers, id, u64::MAX).unwrap_or_default()
}

/// A frame for each function `commit` changed against its first parent,
/// or for each file where it changed none or many; none for a sweep, or
/// when its changed code files hold more than `max_bytes` (what parsing
/// them would cost). `None` when the commit is a root or git cannot read
/// its trees.
pub(crate) fn changed_in(
    repo: &Repo,
    headers: Lang,
    commit: gix::ObjectId,
    max_bytes: u64,
) -> Option<Vec<Frame>> {
    let (parent, tree) = trees(repo, commit)?;
    let indexed = |p: &str| Lang::from_path(p).is_some();
    let changes = repo.diff(parent, tree, &indexed).ok()?;
    let code: Vec<Touched> = changes
        .iter()
        .filter_map(|c| {
            let (path, before, new) = match c {
                TreeChange::Modified { path, blob } => (path, Some(path), *blob),
                TreeChange::Added { path, blob } => (path, None, *blob),
                TreeChange::Renamed { from, to, blob } => (to, Some(from), *blob),
                TreeChange::Deleted { .. } => return None,
            };
            let lang = Lang::of(path, headers)?;
            Some(Touched {
                path,
                lang,
                before,
                new,
            })
        })
        .collect();
    if code.len() > MAX_FILES {
        return Some(Vec::new());
    }
    let size = |b: gix::ObjectId| repo.blob_size(b).unwrap_or(u64::MAX);
    let total = code.iter().fold(0u64, |n, t| n.saturating_add(size(t.new)));
    if total > max_bytes {
        return Some(Vec::new());
    }
    Some(
        code.iter()
            .flat_map(|t| file_frames(repo, parent, t))
            .collect(),
    )
}

/// A code file the commit added, changed or renamed.
struct Touched<'a> {
    path: &'a str,
    lang: Lang,
    /// Its path in the parent, unless the commit added it.
    before: Option<&'a String>,
    new: gix::ObjectId,
}

/// The commit's first parent's tree and its own.
fn trees(repo: &Repo, id: gix::ObjectId) -> Option<(gix::ObjectId, gix::ObjectId)> {
    let local = repo.local();
    let commit = local.find_commit(id).ok()?;
    let parent = commit.parent_ids().next()?.detach();
    Some((repo.tree_of(parent).ok()?, repo.tree_of(id).ok()?))
}

/// Frames for the innermost entities of a touched file whose source
/// differs from the parent's (or that are new).
fn file_frames(repo: &Repo, parent: gix::ObjectId, t: &Touched) -> Vec<Frame> {
    let Touched {
        path, lang, new, ..
    } = *t;
    let old = t
        .before
        .and_then(|p| repo.blob_at(parent, p).ok().flatten());
    let local = repo.local();
    let parsed = |blob: gix::ObjectId| {
        let data = Repo::read_blob(&local, blob).ok()?;
        let text = String::from_utf8(data)
            .ok()
            .filter(|t| t.len() <= MAX_BYTES)?;
        Some(parse::parse(lang, path, &text))
    };
    let Some(after) = parsed(new) else {
        return Vec::new();
    };
    let before: BTreeMap<String, String> = old
        .and_then(parsed)
        .map(|p| {
            p.entities
                .into_iter()
                .map(|e| (e.qualname, e.hash))
                .collect()
        })
        .unwrap_or_default();
    let changed: Vec<usize> = (0..after.entities.len())
        .filter(|&i| before.get(&after.entities[i].qualname) != Some(&after.entities[i].hash))
        .collect();
    // A method's change changes its class too; the method is the place.
    let innermost: Vec<&str> = changed
        .iter()
        .filter(|&&i| !changed.iter().any(|&j| after.entities[j].parent == Some(i)))
        .map(|&i| after.entities[i].name.as_str())
        .collect();
    let frame = |function: Option<&str>| Frame {
        path: path.to_string(),
        line: None,
        end_line: None,
        function: function.map(str::to_string),
    };
    if innermost.is_empty() || innermost.len() > MAX_FUNCTIONS {
        return vec![frame(None)];
    }
    innermost.into_iter().map(|f| frame(Some(f))).collect()
}
