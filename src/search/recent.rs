//! Where the repository has been changing: a bug is likelier in a
//! function that changed lately (the version-history prior of bug
//! localisation; Sisman and Kak, "Incorporating version histories in
//! information retrieval based bug localization", MSR 2012). Each of the
//! newest [`WINDOW`] commits before the graph's own lends the functions
//! it changed a weight that halves every [`HALF_LIFE`] commits.
//!
//! Measured per function, not per file: lent to files, the prior moved no
//! dev figure (see docs/locate.md). What a commit changed is worked out
//! once, by parsing both sides of its files, and kept in the store under
//! the commit, which never changes.

use super::commits;
use crate::git::Repo;
use crate::parse::Lang;
use crate::store::{Store, WriteSet};
use std::collections::BTreeMap;

/// How many of the newest non-merge commits that changed code are read.
const WINDOW: usize = 100;
/// A commit's weight halves every this many commits back.
const HALF_LIFE: f32 = 25.0;
/// How many commits are looked at, at most, to find the [`WINDOW`]: a
/// history of documentation or data changes is not walked to its root.
const MAX_SCANNED: usize = 4 * WINDOW;
/// A commit whose changed code files hold more than this is not parsed
/// (as a sweep is not): what the first query in a repository pays to
/// learn its history stays bounded.
const MAX_COMMIT_BYTES: u64 = 1 << 20;

/// Per (file, lowercased bare function name) changed in the newest
/// commits up to `commit`, how much it changed lately, in [0, 1):
/// 1 − e^(−Σ weights). Empty without history (a shallow clone) or when
/// this repository does not hold `commit`. What it learns of commits not
/// yet recorded it records in `store`, when it can.
pub fn recent_functions(
    repo: &Repo,
    store: &Store,
    headers: Lang,
    commit: gix::ObjectId,
) -> BTreeMap<(String, String), f32> {
    let mut lately: BTreeMap<(String, String), f32> = BTreeMap::new();
    let mut learnt = WriteSet::default();
    let started = std::time::Instant::now();
    for (k, changed) in changed_lately(repo, store, headers, commit, &mut learnt)
        .into_iter()
        .enumerate()
    {
        let weight = 0.5f32.powf(k as f32 / HALF_LIFE);
        for (path, function) in changed {
            if !function.is_empty() {
                *lately.entry((path, function)).or_default() += weight;
            }
        }
    }
    if !learnt.is_empty() {
        let (n, took) = (learnt.len(), started.elapsed().as_secs_f64());
        if took >= 1.0 {
            crate::notice!("rpg: read what {n} commits changed, in {took:.1}s; kept for next time");
        }
        // A record is only ever worth having: a query that cannot write
        // still ranks.
        let _ = store.apply(learnt);
    }
    for v in lately.values_mut() {
        *v = 1.0 - (-*v).exp();
    }
    lately
}

/// What each of the newest commits that changed code changed, newest
/// first: at most [`WINDOW`] of them, merges and roots left out.
fn changed_lately(
    repo: &Repo,
    store: &Store,
    headers: Lang,
    commit: gix::ObjectId,
    learnt: &mut WriteSet,
) -> Vec<Vec<(String, String)>> {
    let mut out = Vec::new();
    let local = repo.local();
    let order = gix::revision::walk::Sorting::ByCommitTime(Default::default());
    let Ok(walk) = local.rev_walk([commit]).sorting(order).all() else {
        return out;
    };
    for info in walk.take(MAX_SCANNED) {
        let Ok(info) = info else { break };
        if info.parent_ids.len() != 1 {
            continue;
        }
        let hex = info.id.to_string();
        let changed = match store.changed_by(&hex) {
            Ok(Some(c)) => c,
            _ => {
                let Some(frames) = commits::changed_in(repo, headers, info.id, MAX_COMMIT_BYTES)
                else {
                    continue;
                };
                let c: Vec<(String, String)> = frames
                    .into_iter()
                    .map(|f| (f.path, f.function.unwrap_or_default().to_lowercase()))
                    .collect();
                learnt.put_changed_by(&hex, &c);
                c
            }
        };
        if !changed.is_empty() {
            out.push(changed);
            if out.len() == WINDOW {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::git;

    fn commit(root: &std::path::Path, text: &str) {
        std::fs::write(root.join("a.py"), text).unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "change"]);
    }

    const F: &str = "def f():\n    return 1\n";

    #[test]
    fn newer_changes_weigh_more_and_each_commit_is_read_once() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        git(root, &["init", "-q"]);
        commit(root, &format!("{F}def g():\n    return 1\n"));
        commit(root, &format!("{F}def g():\n    return 2\n"));
        commit(root, "def f():\n    return 3\ndef g():\n    return 2\n");
        let repo = Repo::discover(root).unwrap();
        let head = repo.resolve("HEAD").unwrap();
        let kept = tempfile::tempdir().unwrap();
        let store = Store::open(kept.path()).unwrap();
        let at = |r: &BTreeMap<(String, String), f32>, f: &str| {
            r.get(&("a.py".to_string(), f.to_string())).copied()
        };

        let lately = recent_functions(&repo, &store, Lang::C, head);
        // The root commit has no parent to differ from: it changed nothing.
        assert_eq!(lately.len(), 2, "{lately:?}");
        let (f, g) = (at(&lately, "f").unwrap(), at(&lately, "g").unwrap());
        assert!(f > g && g > 0.0 && f < 1.0, "f {f}, g {g}");
        let recorded = store.changed_by(&head.to_string()).unwrap();
        assert_eq!(recorded, Some(vec![("a.py".to_string(), "f".to_string())]));

        // Asked again, a commit's record is believed, not worked out anew.
        let mut w = WriteSet::default();
        w.put_changed_by(&head.to_string(), &[("a.py".into(), "h".into())]);
        store.apply(w).unwrap();
        let again = recent_functions(&repo, &store, Lang::C, head);
        assert_eq!(at(&again, "h"), Some(f));
        assert_eq!(at(&again, "f"), None);
    }

    #[test]
    fn a_commit_git_does_not_hold_has_no_history() {
        let d = tempfile::tempdir().unwrap();
        git(d.path(), &["init", "-q"]);
        commit(d.path(), F);
        let repo = Repo::discover(d.path()).unwrap();
        let kept = tempfile::tempdir().unwrap();
        let store = Store::open(kept.path()).unwrap();
        let unknown = gix::ObjectId::from_hex(b"1234567890123456789012345678901234567890").unwrap();
        assert!(recent_functions(&repo, &store, Lang::C, unknown).is_empty());
    }
}
