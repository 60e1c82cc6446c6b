//! Hooks in a temporary repository: installed over existing hooks and under
//! core.hooksPath, updating the store on commit, restored on uninstall.

use crate::common::{
    fixture, git, ok, plant_free_space, repo_of, rewritten_at_open, rpg, rpg_command, snapshot_has,
};
use rpg::store::RpgDir;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn graph_commit(repo: &Path) -> String {
    RpgDir::new(repo)
        .unwrap()
        .open()
        .unwrap()
        .meta()
        .unwrap()
        .commit
}

fn head(repo: &Path) -> String {
    git(repo, &["rev-parse", "HEAD"]).trim().to_string()
}

fn change_code(repo: &Path, n: u32) {
    let p = repo.join("src/fixpkg/util.py");
    let t = fs::read_to_string(&p).unwrap();
    fs::write(p, format!("{t}\n\ndef added_{n}():\n    return {n}\n")).unwrap();
    git(repo, &["add", "src/fixpkg/util.py"]);
    git(repo, &["commit", "-qm", &format!("change {n}")]);
}

#[test]
fn install_chains_an_existing_hook_updates_on_commit_and_uninstall_restores_it() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    git(&repo, &["add", ".rpg"]);
    git(&repo, &["commit", "-qm", "graph"]);
    let hooks = repo.join(".git/hooks");
    fs::create_dir_all(&hooks).unwrap();
    let original = "#!/bin/sh\necho ran >> \"$(git rev-parse --show-toplevel)/../user-hook-ran\"\n";
    fs::write(hooks.join("post-commit"), original).unwrap();
    fs::set_permissions(hooks.join("post-commit"), fs::Permissions::from_mode(0o750)).unwrap();

    let out = ok(rpg(&repo, &["hook", "install"]));
    assert!(out.contains("chained"), "{out}");
    let status = ok(rpg(&repo, &["hook", "status", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(v["bypassed"], false);
    assert!(v["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|h| h["hook"] == "post-commit" && h["chained"] == true));

    change_code(&repo, 1);
    assert_eq!(
        graph_commit(&repo),
        head(&repo),
        "the hook updated the store"
    );
    assert!(
        d.path().join("user-hook-ran").exists(),
        "the chained hook ran"
    );
    assert_eq!(
        git(&repo, &["status", "--porcelain"]),
        "",
        "the working tree stays clean"
    );
    let store = RpgDir::new(&repo).unwrap().open().unwrap();
    assert!(store
        .entity("src/fixpkg/util.py:added_1")
        .unwrap()
        .is_some());
    drop(store);

    ok(rpg(&repo, &["hook", "uninstall"]));
    assert_eq!(
        fs::read_to_string(hooks.join("post-commit")).unwrap(),
        original
    );
    let mode = fs::metadata(hooks.join("post-commit"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o750, "restored exactly, mode included");
    assert!(!hooks.join("post-merge").exists());
    assert!(!hooks.join("post-commit.rpg-prev").exists());
}

#[test]
fn hooks_follow_core_hooks_path_and_status_reports_bypass() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    // Installed in .git/hooks, then a tool like husky redirects hooks.
    ok(rpg(&repo, &["hook", "install"]));
    git(&repo, &["config", "core.hooksPath", ".husky"]);
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["hook", "status", "--json"]))).unwrap();
    assert_eq!(v["core_hooks_path"], true);
    assert_eq!(v["bypassed"], true);
    let text = ok(rpg(&repo, &["hook", "status"]));
    assert!(text.contains("bypassed"), "{text}");

    ok(rpg(&repo, &["hook", "install"]));
    assert!(repo.join(".husky/post-commit").exists());
    change_code(&repo, 2);
    assert_eq!(graph_commit(&repo), head(&repo));
}

#[test]
fn a_failing_update_never_blocks_a_commit() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    ok(rpg(&repo, &["hook", "install"]));
    // Break the update: the hook must still let the commit through.
    fs::write(repo.join(".rpg/config.toml"), "[index\n").unwrap();
    change_code(&repo, 3);
    let log = fs::read_to_string(repo.join(".rpg/log/hook.log")).unwrap();
    assert!(log.contains("post-commit: error:"), "{log}");
    assert!(log.contains("config.toml"), "{log}");
}

/// A hook that cannot finish within its budget does not keep git waiting
/// for the rest, nor leave it to the user's next command: a process of
/// its own finishes the update, and the hooks after it, while the update
/// is pending, hand theirs to the same kind of process.
#[test]
fn a_hook_over_its_budget_finishes_the_update_in_the_background() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let run_hook = || {
        let out = rpg_command(&repo)
            .env("RPG_HOOK_BUDGET_MS", "0")
            .args(["hook", "run", "post-commit"])
            .output()
            .unwrap();
        assert!(out.status.success());
    };
    let log = || fs::read_to_string(repo.join(".rpg/log/hook.log")).unwrap_or_default();
    let caught_up = |head: &str| {
        // Polled: the background process is the thing under test.
        for _ in 0..600 {
            if log().contains(&format!("catch-up: updated to {}", &head[..12]))
                && !repo.join(".rpg/pending").exists()
            {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        false
    };
    change_code(&repo, 7);
    run_hook();
    assert!(
        log().contains("post-commit: over its 0 ms budget; finishing in the background"),
        "{}",
        log()
    );
    assert!(caught_up(&head(&repo)), "{}", log());
    assert_eq!(graph_commit(&repo), head(&repo));
    fs::write(repo.join(".rpg/pending"), "post-commit").unwrap();
    change_code(&repo, 8);
    run_hook();
    assert!(
        log().contains("post-commit: an update is pending; finishing it in the background"),
        "{}",
        log()
    );
    assert!(caught_up(&head(&repo)), "{}", log());
    assert_eq!(graph_commit(&repo), head(&repo));
}

/// The fixture with its graph committed and the hooks installed in
/// snapshot mode.
fn snapshot_mode() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    git(&repo, &["add", ".rpg"]);
    git(&repo, &["commit", "-qm", "graph"]);
    ok(rpg(&repo, &["hook", "install", "--snapshot"]));
    (d, repo)
}

#[test]
fn snapshot_mode_commits_the_graph_with_each_commit() {
    let (_d, repo) = snapshot_mode();
    change_code(&repo, 4);
    // The commit itself carries a snapshot that knows the new function.
    let committed = git(&repo, &["show", "HEAD:.rpg/graph.jsonl"]);
    assert!(snapshot_has(&committed, "src/fixpkg/util.py:added_4"));
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    assert_eq!(graph_commit(&repo), head(&repo));
}

/// `git` with hooks switched off, for history the hooks must not see.
fn git_quiet(repo: &Path, args: &[&str]) {
    let mut all = vec!["-c", "core.hooksPath=/nonexistent"];
    all.extend_from_slice(args);
    git(repo, &all);
}

/// Install the hooks, then keep only `keep`, so whatever moves the graph
/// afterwards was that hook.
fn only_hook(repo: &Path, keep: &str) {
    ok(rpg(repo, &["hook", "install"]));
    for h in rpg::hook::STORE_HOOKS {
        if *h != keep {
            fs::remove_file(repo.join(".git/hooks").join(h)).unwrap();
        }
    }
}

/// A branch `other` one commit ahead (made with hooks off), HEAD on main.
fn branch_ahead(repo: &Path) {
    git_quiet(repo, &["checkout", "-qb", "other"]);
    let p = repo.join("src/fixpkg/util.py");
    let t = fs::read_to_string(&p).unwrap();
    fs::write(&p, format!("{t}\n\ndef on_other():\n    return 1\n")).unwrap();
    git_quiet(repo, &["commit", "-qam", "other"]);
    git_quiet(repo, &["checkout", "-q", "main"]);
}

fn indexed() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    (d, repo)
}

#[test]
fn the_post_checkout_hook_follows_a_branch_switch() {
    let (_d, repo) = indexed();
    branch_ahead(&repo);
    only_hook(&repo, "post-checkout");
    git(&repo, &["checkout", "-q", "other"]);
    assert_eq!(graph_commit(&repo), head(&repo));
}

#[test]
fn the_post_merge_hook_follows_a_merge() {
    let (_d, repo) = indexed();
    branch_ahead(&repo);
    fs::write(
        repo.join("src/fixpkg/main_only.py"),
        "def main_only():\n    return 2\n",
    )
    .unwrap();
    git_quiet(&repo, &["add", "src"]);
    git_quiet(&repo, &["commit", "-qm", "main"]);
    only_hook(&repo, "post-merge");
    git(&repo, &["merge", "-q", "--no-edit", "other"]);
    assert_eq!(graph_commit(&repo), head(&repo));
}

#[test]
fn the_post_rewrite_hook_follows_an_amend_and_a_rebase() {
    let (_d, repo) = indexed();
    only_hook(&repo, "post-rewrite");
    let p = repo.join("src/fixpkg/util.py");
    let t = fs::read_to_string(&p).unwrap();
    fs::write(&p, format!("{t}\n\ndef amended():\n    return 1\n")).unwrap();
    git(&repo, &["commit", "-qa", "--amend", "--no-edit"]);
    assert_eq!(graph_commit(&repo), head(&repo), "after the amend");
    branch_ahead(&repo);
    git_quiet(&repo, &["checkout", "-qb", "topic"]);
    fs::write(
        repo.join("src/fixpkg/topic.py"),
        "def topic():\n    return 3\n",
    )
    .unwrap();
    git_quiet(&repo, &["add", "src"]);
    git_quiet(&repo, &["commit", "-qm", "topic"]);
    git(&repo, &["rebase", "-q", "other"]);
    assert_eq!(graph_commit(&repo), head(&repo), "after the rebase");
}

#[test]
fn the_hook_keeps_the_search_index_in_step_so_the_next_query_rebuilds_nothing() {
    let (_d, repo) = indexed();
    ok(rpg(&repo, &["locate", "normalize a string"]));
    ok(rpg(&repo, &["hook", "install"]));
    change_code(&repo, 7);
    assert_eq!(graph_commit(&repo), head(&repo));
    let r = rpg::git::Repo::discover(&repo).unwrap();
    let store = RpgDir::new(&repo).unwrap().open().unwrap();
    let report = rpg::search::index::sync(&store, &r).unwrap();
    assert_eq!(
        report.files_indexed, 0,
        "the hook already indexed the change"
    );
    assert!(!report.fresh);
}

/// Hooks need a graph, and a graph needs a commit: in a repository with
/// none yet, `hook install` says so and installs nothing, instead of
/// failing after installing hooks that would do nothing.
#[test]
fn hook_install_before_the_first_commit_installs_nothing_and_says_why() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let o = rpg(&repo, &["hook", "install"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        crate::common::stderr(&o),
        "rpg: error: this repository has no commits yet; commit once, then run `rpg hook install`\n"
    );
    assert!(!repo.join(".git/hooks/post-commit").exists());
    let config = fs::read_to_string(repo.join(".git/config")).unwrap();
    assert!(!config.contains("merge"), "{config}");
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["hook", "status", "--json"]))).unwrap();
    assert!(
        v["hooks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["installed"] == false),
        "{v}"
    );
}

/// A snapshot the pre-commit hook wrote names the parent (the new commit's
/// id does not exist yet); a clone identifies it by its tree, so status,
/// locate and fetch show the commit it describes, and the bot links lines
/// there.
#[test]
fn a_pre_commit_snapshot_is_shown_at_the_commit_it_describes() {
    let (d, repo) = snapshot_mode();
    let parent = head(&repo);
    change_code(&repo, 5);
    let committed = git(&repo, &["show", "HEAD:.rpg/graph.jsonl"]);
    assert!(committed.contains(&parent), "the header names the parent");
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
    let tip = head(&clone);
    assert_ne!(tip, parent);
    let status: serde_json::Value =
        serde_json::from_str(&ok(rpg(&clone, &["status", "--json"]))).unwrap();
    assert_eq!(status["commit"], tip.as_str());
    assert_eq!(status["up_to_date"], true);
    assert_eq!(status["behind"], 0);
    let located: serde_json::Value = serde_json::from_str(&ok(rpg(
        &clone,
        &["locate", "normalize a string", "--json"],
    )))
    .unwrap();
    assert_eq!(located["commit"], tip.as_str());
    let fetched: serde_json::Value = serde_json::from_str(&ok(rpg(
        &clone,
        &["fetch", "src/fixpkg/util.py:added_5", "--json"],
    )))
    .unwrap();
    assert_eq!(fetched["commit"], tip.as_str());
}

/// A command that finds an update pending while another writer holds the
/// lock (the hook's background process, which may be waiting for this
/// command's hold on the store) lets go and waits for that writer, and
/// answers from the graph it leaves, not from the one before.
#[test]
fn a_command_that_meets_a_writer_finishing_a_pending_update_answers_after_it() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    change_code(&repo, 9);
    let rpg_dir = RpgDir::new(&repo).unwrap();
    rpg_dir.mark_pending("post-commit").unwrap();
    let writer = rpg_dir.lock(std::time::Duration::ZERO).unwrap();
    let status = rpg_command(&repo)
        .args(["status", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The command meets the lock held; this process is that writer.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let r = rpg::git::Repo::discover(&repo).unwrap();
    let target = rpg::evolve::Target::commit(&r, r.resolve("HEAD").unwrap()).unwrap();
    rpg::evolve::update(
        &r,
        &rpg_dir,
        &rpg::config::Config::default(),
        target,
        &rpg::lift::offline::OfflineLifter,
        &rpg::evolve::UpdateOptions::default(),
    )
    .unwrap();
    rpg_dir.clear_pending(&r);
    drop(writer);
    let out = status.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["commit"].as_str().unwrap(), head(&repo));
}

/// sled overwrites each free segment of its log at every open, so a store
/// that a burst of writes left mostly free costs every later command. A
/// hook that finds one hands it to a process of its own, which compacts
/// it; git does not wait for the copy.
#[test]
fn a_hook_compacts_a_store_whose_free_space_every_open_rewrites() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    plant_free_space(&repo);
    let before = rewritten_at_open(&repo);
    assert!(before >= 4 << 20, "free space {before}");
    let run_hook = |floor_mb: &str| {
        // A loaded machine must not send the update itself to the
        // background: the compaction's hand-off is what is under test.
        let out = rpg_command(&repo)
            .env("RPG_COMPACT_WASTE_MB", floor_mb)
            .env("RPG_HOOK_BUDGET_MS", "120000")
            .args(["hook", "run", "post-commit"])
            .output()
            .unwrap();
        assert!(out.status.success());
    };
    let log = || fs::read_to_string(repo.join(".rpg/log/hook.log")).unwrap_or_default();

    // Under the floor, nothing is compacted.
    change_code(&repo, 1);
    run_hook("1000");
    assert!(!log().contains("compact"), "{}", log());

    change_code(&repo, 2);
    run_hook("4");
    assert!(
        log().contains("; compacting the store in the background"),
        "{}",
        log()
    );
    let compacted = (0..600).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(100));
        log().contains("; compacted the store")
    });
    assert!(compacted, "{}", log());
    let after = rewritten_at_open(&repo);
    assert!(after < before / 4, "free space {before} → {after}");
    assert_eq!(graph_commit(&repo), head(&repo));
    let found = ok(rpg(&repo, &["locate", "added_2", "--json"]));
    assert!(found.contains("util.py:added_2"), "{found}");
}

/// While another process builds a store to swap in (a compaction a hook
/// left running, an adoption), it holds the live one: a query waits for
/// it, saying so, instead of failing three seconds in.
#[test]
fn a_query_waits_for_a_store_another_process_is_rewriting() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let rewriting = repo
        .join(".rpg")
        .join(format!("store.new.{}.x", std::process::id()));
    fs::create_dir(&rewriting).unwrap();
    let held = sled::open(repo.join(".rpg/store")).unwrap();
    let query = rpg_command(&repo)
        .args(["locate", "split host", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(4500));
    drop(held);
    fs::remove_dir(&rewriting).unwrap();
    let out = query.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("another rpg is rewriting the store; waiting"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("split_host"));
}
