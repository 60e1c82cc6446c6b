//! The real binary: init, status, determinism, store rebuilds and errors.

use crate::common::{fixture, git, ok, repo_of, rpg, stderr, stdout};
use std::fs;

#[test]
fn init_then_status_reports_the_commit_and_counts() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let out = ok(rpg(&repo, &["init"]));
    assert!(out.contains("6 files"), "{out}");
    assert!(out.contains("skipped 4 files"), "{out}");
    let status: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    let head = git(&repo, &["rev-parse", "HEAD"]);
    assert_eq!(status["commit"], head.trim());
    assert_eq!(status["up_to_date"], true);
    assert_eq!(status["behind"], 0);
    assert_eq!(status["counts"]["files"], 6);
    assert_eq!(status["counts"]["classes"], 5);
    assert_eq!(status["counts"]["functions"], 7);
    assert_eq!(status["counts"]["methods"], 9);
    assert_eq!(status["counts"]["edges"]["invokes"], 8);

    fs::write(repo.join("new.py"), "def added():\n    pass\n").unwrap();
    git(&repo, &["add", "new.py"]);
    git(&repo, &["commit", "-qm", "more"]);
    let text = ok(rpg(&repo, &["status"]));
    assert!(text.contains("1 commit behind HEAD"), "{text}");
}

#[test]
fn init_json_reports_skips_and_snapshot_size() {
    let d = fixture("rust-repo.sh");
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo_of(&d), &["init", "--json"]))).unwrap();
    assert_eq!(v["report"]["files_indexed"], 4);
    assert_eq!(v["counts"]["methods"], 7);
    assert!(v["snapshot_bytes"].as_u64().unwrap() > 1000);
}

#[test]
fn snapshot_is_byte_identical_across_runs_clones_and_store_rebuilds() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let snap = repo.join(".rpg/graph.jsonl");
    let first = fs::read(&snap).unwrap();

    // Delete the sled store: the next command rebuilds it from the snapshot.
    fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    ok(rpg(&repo, &["status"]));
    assert!(repo.join(".rpg/store").is_dir(), "store rebuilt");
    assert_eq!(
        fs::read(&snap).unwrap(),
        first,
        "status never rewrites the snapshot"
    );

    ok(rpg(&repo, &["init"]));
    assert_eq!(fs::read(&snap).unwrap(), first, "re-init is byte-identical");

    // A fresh clone of the same commit encodes to the same bytes.
    let other = d.path().join("clone");
    git(
        d.path(),
        &[
            "clone",
            "-q",
            repo.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    ok(rpg(&other, &["init"]));
    assert_eq!(fs::read(other.join(".rpg/graph.jsonl")).unwrap(), first);
}

#[test]
fn a_committed_snapshot_serves_a_fresh_clone_without_reindexing() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    git(&repo, &["add", ".rpg"]);
    git(&repo, &["commit", "-qm", "add graph"]);
    // Only the snapshot and git metadata are tracked; the store is ignored.
    let tracked = git(&repo, &["ls-files", ".rpg"]);
    assert_eq!(
        tracked,
        ".rpg/.gitattributes\n.rpg/.gitignore\n.rpg/graph.jsonl\n"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");

    let clone = d.path().join("clone");
    git(
        d.path(),
        &[
            "clone",
            "-q",
            repo.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    assert!(!clone.join(".rpg/store").exists());
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&clone, &["status", "--json"]))).unwrap();
    assert_eq!(v["counts"]["methods"], 7);
    // The graph reflects the commit before the one that added it.
    assert_eq!(v["behind"], 1);
    assert!(clone.join(".rpg/store").is_dir());
}

#[test]
fn a_snapshot_changed_underneath_the_store_is_adopted() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let snap = repo.join(".rpg/graph.jsonl");
    // Simulate a pull that brings a (sealed) snapshot with one entity fewer.
    let mut g = rpg::store::snapshot::from_bytes(&fs::read(&snap).unwrap(), &snap).unwrap();
    let gone = "src/util.rs:inner::helper";
    g.entities.remove(gone).unwrap();
    g.edges.retain(|e| e.src != gone && e.dst != gone);
    fs::write(&snap, rpg::store::snapshot::to_bytes(&g)).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    // seven functions in the fixture, one dropped
    assert_eq!(v["counts"]["functions"], 6);
}

#[test]
fn errors_are_one_line_with_exit_code_2() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: Vec<(std::path::PathBuf, Vec<&str>, &str)> = {
        let not_repo = tmp.path().join("plain");
        fs::create_dir_all(&not_repo).unwrap();
        let empty = tmp.path().join("empty");
        fs::create_dir_all(&empty).unwrap();
        git(&empty, &["init", "-q"]);
        vec![
            (not_repo.clone(), vec!["init"], "not a git repository"),
            (not_repo, vec!["status"], "not a git repository"),
            (empty.clone(), vec!["init"], "no commits yet"),
            (empty, vec!["status"], "run `rpg init` first"),
        ]
    };
    for (dir, args, needle) in cases {
        let o = rpg(&dir, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(!err.contains("panicked"));
        assert_eq!(stdout(&o), "");
    }
    let d = fixture("rust-repo.sh");
    let o = rpg(&repo_of(&d), &["init", "--rev", "no-such-branch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown revision 'no-such-branch'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_corrupt_snapshot_is_named_with_its_line_and_the_graph_rebuilt_from_git() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let snap = repo.join(".rpg/graph.jsonl");
    let mut lines: Vec<String> = fs::read_to_string(&snap)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines[2] = "{\"t\":\"entity\",\"id\":".into();
    fs::write(&snap, lines.join("\n")).unwrap();
    fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    // Never built from the damaged file: rebuilt from git, and said so.
    let o = rpg(&repo, &["status", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("graph.jsonl, line 3"), "{err}");
    assert!(err.contains("rpg update --snapshot"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["counts"]["functions"], 7);
}

#[test]
fn an_unwritable_rpg_dir_fails_cleanly() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    // A file where the directory should be: unwritable even for root.
    fs::write(repo.join(".rpg"), "not a directory").unwrap();
    let o = rpg(&repo, &["init"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains(".rpg"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn a_killed_init_leaves_the_previous_graph_usable() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let snap = repo.join(".rpg/graph.jsonl");
    let good = fs::read(&snap).unwrap();
    for delay_ms in [0u64, 5, 10, 20, 40, 60, 80, 120] {
        crate::common::kill_after(&repo, "init", delay_ms);
        // Whatever happened, the snapshot is whole and commands work.
        assert_eq!(
            fs::read(&snap).unwrap(),
            good,
            "after kill at {delay_ms} ms"
        );
        let v: serde_json::Value =
            serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
        assert_eq!(v["counts"]["methods"], 9, "after kill at {delay_ms} ms");
    }
}
