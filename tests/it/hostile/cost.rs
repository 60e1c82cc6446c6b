//! D. Every input has a cost bound: what rpg spends on a file grows with
//! the file, never with its square. Costs are checked by what they leave
//! behind (bytes written, records kept), not by the clock.

use crate::common::{git, ok, rpg, stderr};
use std::fs;
use std::path::Path;

/// A fresh repository in `d` holding `files`, committed.
fn repo_with(d: &tempfile::TempDir, files: &[(&str, String)]) -> std::path::PathBuf {
    let repo = d.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    for (path, text) in files {
        let p = repo.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "input"]);
    repo
}

fn bytes_under(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| match e.file_type().unwrap().is_dir() {
            true => bytes_under(&e.path()),
            false => e.metadata().unwrap().len(),
        })
        .sum()
}

#[test]
fn many_distinct_unresolved_calls_cost_the_store_in_proportion() {
    let d = tempfile::tempdir().unwrap();
    let code: String = (0..4000)
        .map(|i| format!("def f{i}():\n    return undefined_name_{i}()\n\n"))
        .collect();
    let repo = repo_with(&d, &[("a.py", code)]);
    ok(rpg(&repo, &["init"]));
    let store = bytes_under(&repo.join(".rpg/store"));
    let snapshot = fs::metadata(repo.join(".rpg/graph.jsonl")).unwrap().len();
    // Written out of key order, sled rewrote the file's large records at
    // every small key added beside them: 558 MB for this 0.5 MB snapshot.
    assert!(
        store < 50 * snapshot,
        "the store took {store} bytes for a {snapshot}-byte snapshot"
    );
    let o = rpg(&repo, &["status"]);
    assert!(o.status.success(), "{}", stderr(&o));
}
