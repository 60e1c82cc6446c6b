//! The Action's `update` mode (action/run.sh) end to end: a bare remote,
//! a shallow CI checkout, the real binary, real git pushes.

use crate::common::{commit_zebra, fixture, git, project_root, repo_of, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run action/run.sh in `checkout` as Actions would on a push to main.
fn run_action(checkout: &Path, mode: &str, event: &Path) -> Output {
    Command::new("bash")
        .arg(project_root().join("action/run.sh"))
        .current_dir(checkout)
        .env("RPG_MODE", mode)
        .env("RPG_BIN", env!("CARGO_BIN_EXE_rpg"))
        .env("GITHUB_EVENT_NAME", "push")
        .env("GITHUB_EVENT_PATH", event)
        .env("GITHUB_REF_NAME", "main")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run action/run.sh")
}

/// A fresh shallow clone, as actions/checkout makes with fetch-depth 1.
fn shallow_checkout(remote: &Path, into: &Path) {
    let url = format!("file://{}", remote.display());
    let o = Command::new("git")
        .args(["clone", "-q", "--depth=1", "--branch", "main", &url])
        .arg(into)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        git(into, &["rev-parse", "--is-shallow-repository"]).trim(),
        "true"
    );
}

/// The Python fixture as a developer's clone of a bare `main` remote.
/// Returns the temp dir, the developer's repository and the remote.
fn fixture_with_remote() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = fixture("python-repo.sh");
    let dev = repo_of(&d);
    let remote = d.path().join("remote.git");
    let bare = remote.to_str().unwrap();
    git(d.path(), &["init", "-q", "--bare", "-b", "main", bare]);
    git(&dev, &["branch", "-M", "main"]);
    git(&dev, &["remote", "add", "origin", bare]);
    git(&dev, &["push", "-q", "origin", "main"]);
    (d, dev, remote)
}

fn remote_log(remote: &Path) -> Vec<String> {
    git(remote, &["log", "--format=%an|%s", "main"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn pushes_keep_the_committed_graph_current_without_loops() {
    let (d, dev, remote) = fixture_with_remote();
    let code_push = project_root().join("fixtures/events/push.json");

    // 1. The first run has no graph yet: it builds and commits one.
    let ci = d.path().join("ci1");
    shallow_checkout(&remote, &ci);
    let out = run_action(&ci, "update", &code_push);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let log = remote_log(&remote);
    assert!(
        log[0].starts_with("github-actions[bot]|rpg: update the planning graph to "),
        "{log:?}"
    );
    let files = git(&remote, &["show", "--name-only", "--format=", "main"]);
    assert!(files.lines().any(|l| l == ".rpg/graph.jsonl"), "{files}");
    assert!(
        !files.lines().any(|l| l.starts_with(".rpg/store")),
        "the store is never committed"
    );
    assert!(
        files.lines().all(|l| l.starts_with(".rpg/")),
        "only .rpg/ is committed: {files}"
    );

    // 2. Running again on the same commit is a no-op.
    let out = run_action(&ci, "update", &code_push);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("the committed graph is current"),
        "{}",
        stdout(&out)
    );
    assert_eq!(remote_log(&remote).len(), log.len());

    // A clone at the snapshot commit takes the graph as current: the
    // commit it names differs from HEAD only in .rpg/.
    let clone = d.path().join("clone");
    git(
        d.path(),
        &[
            "clone",
            "-q",
            remote.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    let status = crate::common::rpg(&clone, &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(v["up_to_date"], true, "{v}");
    assert_ne!(v["commit"], v["head"]);
    let located = crate::common::rpg(&clone, &["locate", "split host"]);
    assert!(
        !stderr(&located).contains("warning"),
        "{}",
        stderr(&located)
    );

    // 3. The snapshot commit's own push event is skipped outright.
    let snapshot_push = project_root().join("fixtures/events/push-snapshot-only.json");
    let out = run_action(&ci, "update", &snapshot_push);
    assert!(out.status.success());
    assert!(stdout(&out).contains("nothing to do"), "{}", stdout(&out));

    // 4. A developer pushes code; a fresh shallow checkout (which lacks the
    //    graph's commit) updates the committed graph to it.
    git(&dev, &["pull", "-q", "--ff-only", "origin", "main"]);
    let head = commit_zebra(&dev);
    git(&dev, &["push", "-q", "origin", "main"]);
    let ci2 = d.path().join("ci2");
    shallow_checkout(&remote, &ci2);
    let out = run_action(&ci2, "update", &code_push);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let log = remote_log(&remote);
    assert!(
        log[0].contains(&format!(
            "rpg: update the planning graph to {}",
            &head[..12]
        )),
        "{log:?}"
    );
    let graph = git(&remote, &["show", "main:.rpg/graph.jsonl"]);
    assert!(graph.contains("src/fixpkg/zebra.py:stripe_count"));
    assert!(
        graph.contains(&head),
        "the snapshot names the code commit it reflects"
    );
}

#[test]
fn a_rejected_push_is_retried_on_the_new_tip() {
    let (d, dev, remote) = fixture_with_remote();
    let ci = d.path().join("ci");
    shallow_checkout(&remote, &ci);
    // Someone pushes after the checkout was made: the first push is rejected.
    let head = commit_zebra(&dev);
    git(&dev, &["push", "-q", "origin", "main"]);
    let out = run_action(
        &ci,
        "update",
        &project_root().join("fixtures/events/push.json"),
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("push rejected"), "{}", stderr(&out));
    let graph = git(&remote, &["show", "main:.rpg/graph.jsonl"]);
    assert!(graph.contains(&head), "the graph describes the new tip");
    assert!(graph.contains("src/fixpkg/zebra.py:stripe_count"));
}

#[test]
fn unknown_modes_and_lifters_are_refused() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let ev = project_root().join("fixtures/events/push.json");
    let out = run_action(&repo, "deploy", &ev);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown mode"));
    let out = Command::new("bash")
        .arg(project_root().join("action/run.sh"))
        .current_dir(&repo)
        .env("RPG_MODE", "update")
        .env("RPG_LIFTER", "magic")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("lifter 'magic'"));
}
