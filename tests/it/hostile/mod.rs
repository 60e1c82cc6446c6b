//! Hostile input: what a cloned repository, a teammate's commit or an agent
//! hands rpg. Each test reproduces one way in and pins the safe behaviour;
//! every later change runs them. The submodules hold issue 43's items:
//! links under `.rpg/`, what a repository may configure, what a snapshot
//! may claim, and the cost bound on every input.

mod claims;
mod config;
mod cost;
mod links;

use crate::common::{
    bare_remote_with_graph, git, indexed_fixture, ok, rpg, rpg_command, stderr, stdout,
};
use std::path::Path;

/// A shared library whose constructor leaves `marker` behind when loaded.
fn booby_trapped_library(dir: &Path, marker: &Path) -> std::path::PathBuf {
    let src = dir.join("helper.c");
    std::fs::write(
        &src,
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void pwn(void) {{ FILE *f = fopen(\"{}\", \"w\"); if (f) fclose(f); }}\n",
            marker.display()
        ),
    )
    .unwrap();
    let lib = dir.join("libhelper.so");
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .expect("a C compiler (cc) builds the test library");
    assert!(built.success());
    lib
}

#[test]
fn a_committed_config_cannot_load_native_code_or_pick_the_model_endpoint() {
    let (d, repo) = indexed_fixture();
    let marker = d.path().join("constructor-ran");
    let lib = booby_trapped_library(d.path(), &marker);
    std::fs::create_dir_all(repo.join("tools")).unwrap();
    std::fs::copy(&lib, repo.join("tools/libhelper.so")).unwrap();
    std::fs::write(
        repo.join(".rpg/config.toml"),
        "[embed]\nruntime = \"tools/libhelper.so\"\nmodel = \"/etc/passwd\"\n[lift]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"named-by-the-repo\"\n",
    )
    .unwrap();
    // Vectors exist, so queries try to load the embedding runtime.
    std::fs::create_dir_all(repo.join(".rpg/vectors")).unwrap();
    for args in [
        &["locate", "parse the date"][..],
        &["search", "date"],
        &["update"],
    ] {
        let o = rpg_command(&repo)
            .args(args)
            .env("RPG_EMBED_DIR", d.path().join("no-models"))
            .env_remove("ORT_DYLIB_PATH")
            .output()
            .unwrap();
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "{args:?}: {}",
            stderr(&o)
        );
        let err = stderr(&o);
        assert!(
            err.contains("ignoring [embed] runtime in .rpg/config.toml"),
            "{args:?}: {err}"
        );
        assert!(err.contains("ignoring [lift] base_url"), "{err}");
        assert!(!marker.exists(), "{args:?} loaded the repository's library");
    }
}

#[test]
fn the_users_own_config_may_set_the_endpoint_and_the_repository_the_model_name() {
    let (d, repo) = indexed_fixture();
    let xdg = d.path().join("xdg");
    std::fs::create_dir_all(xdg.join("rpg")).unwrap();
    std::fs::write(
        xdg.join("rpg/config.toml"),
        "[lift]\nlifter = \"llm\"\nbase_url = \"ftp://not-http\"\n",
    )
    .unwrap();
    std::fs::write(
        repo.join(".rpg/config.toml"),
        "[lift]\nmodel = \"from-the-repo\"\n",
    )
    .unwrap();
    // The user's endpoint is the one checked: proof it was read.
    let o = rpg_command(&repo)
        .args(["init", "--dry-run"])
        .env("XDG_CONFIG_HOME", &xdg)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("RPG_MODEL")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("ftp://not-http"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("notice"), "{}", stderr(&o));
}

fn snapshot_of(repo: &Path) -> rpg::graph::Graph {
    let path = repo.join(".rpg/graph.jsonl");
    rpg::store::snapshot::from_bytes(&std::fs::read(&path).unwrap(), &path).unwrap()
}

fn write_snapshot(repo: &Path, g: &rpg::graph::Graph) {
    std::fs::write(
        repo.join(".rpg/graph.jsonl"),
        rpg::store::snapshot::to_bytes(g),
    )
    .unwrap();
}

fn counts(repo: &Path) -> serde_json::Value {
    serde_json::from_str::<serde_json::Value>(&ok(rpg(repo, &["status", "--json"]))).unwrap()
        ["counts"]
        .clone()
}

#[test]
fn a_snapshot_cut_at_a_line_boundary_is_never_taken_as_the_graph() {
    let (_d, repo) = indexed_fixture();
    let whole = counts(&repo);
    let snap = repo.join(".rpg/graph.jsonl");
    let text = std::fs::read_to_string(&snap).unwrap();
    let cut: String = text.lines().take(12).map(|l| format!("{l}\n")).collect();
    std::fs::write(&snap, &cut).unwrap();
    // With the local store: kept, and the damage named on every command.
    let o = rpg(&repo, &["locate", "split the host of a request"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be used"), "{}", stderr(&o));
    assert!(stderr(&o).contains("records"), "{}", stderr(&o));
    // A fresh clone (no store) rebuilds from git, never from the file.
    std::fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    assert_eq!(counts(&repo), whole);
    // `update --snapshot` rewrites it whole, and the notice goes away.
    let o = rpg(&repo, &["update", "--snapshot"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(snapshot_of(&repo).entities.len() > 12);
    let o = rpg(&repo, &["status"]);
    assert_eq!(stderr(&o), "");
}

#[test]
fn a_file_record_naming_another_blob_never_serves_that_blob() {
    let (_d, repo) = indexed_fixture();
    let fake = repo.join("fake.py");
    std::fs::write(&fake, "def normalize(s):\n    steal_secrets()\n").unwrap();
    let forged = git(&repo, &["hash-object", "-w", "fake.py"])
        .trim()
        .to_string();
    std::fs::remove_file(&fake).unwrap();
    let honest = counts(&repo);
    // A resealed snapshot whose record for util.py names the forged blob,
    // as a hostile commit could carry.
    let mut g = snapshot_of(&repo);
    g.files.get_mut("src/fixpkg/util.py").unwrap().blob = forged;
    write_snapshot(&repo, &g);
    std::fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    for _ in 0..2 {
        let o = rpg(&repo, &["fetch", "src/fixpkg/util.py:normalize"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!stdout(&o).contains("steal_secrets"), "{}", stdout(&o));
        assert!(stdout(&o).contains("def normalize"), "{}", stdout(&o));
        let o = rpg(&repo, &["symbols", "src/fixpkg/util.py"]);
        assert!(o.status.success(), "{}", stderr(&o));
        // And it stays so after an update.
        ok(rpg(&repo, &["update"]));
    }
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    assert_eq!(v["counts"], honest, "the graph is git's");
}

#[test]
fn adopting_a_forged_record_says_so_and_reparses_from_git() {
    let (_d, repo) = indexed_fixture();
    // A real blob of the repository, but never committed at this path.
    let other = git(&repo, &["rev-parse", "HEAD:src/fixpkg/models.py"])
        .trim()
        .to_string();
    let mut g = snapshot_of(&repo);
    g.files.get_mut("src/fixpkg/util.py").unwrap().blob = other;
    write_snapshot(&repo, &g);
    std::fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    let o = rpg(&repo, &["fetch", "src/fixpkg/util.py"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("do not match git (first: src/fixpkg/util.py)"),
        "{}",
        stderr(&o)
    );
    let real = git(&repo, &["show", "HEAD:src/fixpkg/util.py"]);
    let first_line = real.lines().next().unwrap();
    assert!(stdout(&o).contains(first_line), "{}", stdout(&o));
}

#[test]
fn a_snapshot_with_conflict_markers_is_named_and_rewritten_by_update_snapshot() {
    let (_d, repo) = indexed_fixture();
    let snap = repo.join(".rpg/graph.jsonl");
    let text = std::fs::read_to_string(&snap).unwrap();
    let ours: String = text.lines().take(5).map(|l| format!("{l}\n")).collect();
    std::fs::write(
        &snap,
        format!("<<<<<<< HEAD\n{ours}=======\n{text}>>>>>>> theirs\n"),
    )
    .unwrap();
    let o = rpg(&repo, &["status"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("graph.jsonl has merge conflict markers; run `rpg update --snapshot`"),
        "{}",
        stderr(&o)
    );
    ok(rpg(&repo, &["update", "--snapshot"]));
    assert_eq!(std::fs::read_to_string(&snap).unwrap(), text);
    // Without a local store too.
    std::fs::write(
        &snap,
        format!("<<<<<<< HEAD\n{ours}=======\n{text}>>>>>>> x\n"),
    )
    .unwrap();
    std::fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    ok(rpg(&repo, &["update", "--snapshot"]));
    assert_eq!(std::fs::read_to_string(&snap).unwrap(), text);
}

/// Hold the writer lock (on `.rpg/` itself) as another rpg process would,
/// until the guard drops.
fn hold_lock(repo: &Path) -> std::fs::File {
    let f = std::fs::File::open(repo.join(".rpg")).unwrap();
    f.lock().unwrap();
    f
}

#[test]
fn one_writer_at_a_time_and_a_blocked_hook_leaves_the_graph_pending() {
    let (_d, repo) = indexed_fixture();
    let before = std::fs::read(repo.join(".rpg/graph.jsonl")).unwrap();
    let held = hold_lock(&repo);
    let started = std::time::Instant::now();
    let o = rpg(&repo, &["init"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("in use by another rpg process"),
        "{}",
        stderr(&o)
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(2),
        "it waited first"
    );
    assert_eq!(
        std::fs::read(repo.join(".rpg/graph.jsonl")).unwrap(),
        before
    );
    // A hook that cannot get the lock leaves a mark instead of waiting.
    ok(rpg(&repo, &["hook", "install"]));
    let head = crate::common::commit_zebra(&repo);
    assert!(repo.join(".rpg/pending").exists());
    let log = std::fs::read_to_string(repo.join(".rpg/log/hook.log")).unwrap();
    assert!(log.contains("left it pending"), "{log}");
    drop(held);
    // The next command, even a query, catches up.
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    assert_eq!(v["commit"], head.as_str());
    assert!(!repo.join(".rpg/pending").exists());
}

#[test]
fn hooks_installed_from_a_linked_worktree_run_there() {
    let (d, repo) = indexed_fixture();
    let wt = d.path().join("wt");
    git(&repo, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    ok(rpg(&wt, &["init"]));
    ok(rpg(&wt, &["hook", "install"]));
    let common_hooks = repo.join(".git/hooks/post-commit");
    assert!(common_hooks.exists(), "hooks go where git runs them");
    let head = crate::common::commit_zebra(&wt);
    let v: serde_json::Value = serde_json::from_str(&ok(rpg(&wt, &["status", "--json"]))).unwrap();
    assert_eq!(v["commit"], head.as_str());
}

#[test]
fn a_tracked_hooks_directory_is_changed_only_with_force_and_only_portably() {
    let (_d, repo) = indexed_fixture();
    std::fs::create_dir_all(repo.join(".husky")).unwrap();
    let original = "#!/bin/sh\necho lint\n";
    std::fs::write(repo.join(".husky/post-commit"), original).unwrap();
    git(&repo, &["add", ".husky"]);
    git(&repo, &["commit", "-qm", "husky"]);
    git(&repo, &["config", "core.hooksPath", ".husky"]);
    let o = rpg(&repo, &["hook", "install"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(repo.join(".husky/post-commit")).unwrap(),
        original
    );
    ok(rpg(&repo, &["hook", "install", "--force"]));
    let hook = std::fs::read_to_string(repo.join(".husky/post-commit")).unwrap();
    assert!(hook.starts_with(original), "the team's hook stays: {hook}");
    let exe = env!("CARGO_BIN_EXE_rpg");
    assert!(
        !hook.contains(exe),
        "no machine's path in a shared file: {hook}"
    );
    assert!(!repo.join(".husky/post-commit.rpg-prev").exists());
    ok(rpg(&repo, &["hook", "uninstall"]));
    assert_eq!(
        std::fs::read_to_string(repo.join(".husky/post-commit")).unwrap(),
        original
    );
}

#[test]
fn hooks_find_rpg_on_path_first_and_status_reports_a_missing_binary() {
    let (d, repo) = indexed_fixture();
    // Installed by a copy of rpg that is later deleted (an upgrade).
    let old = d.path().join("old-rpg");
    crate::common::copy_rpg_to(&old);
    let o = std::process::Command::new(&old)
        .args(["hook", "install"])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_file(&old).unwrap();
    let o = rpg_command(&repo)
        .args(["hook", "status"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(stdout(&o).contains("find no rpg"), "{}", stdout(&o));
    // A commit now says in the log what is wrong, instead of nothing.
    commit_file_with_path(&repo, "src/fixpkg/zebra.py", "/usr/bin:/bin");
    let log = std::fs::read_to_string(repo.join(".rpg/log/hook.log")).unwrap();
    assert!(log.contains("rpg is neither on PATH nor at"), "{log}");
    // With rpg on PATH the same hooks work again.
    let bin = d.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    crate::common::copy_rpg_to(&bin.join("rpg"));
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let o = rpg_command(&repo)
        .args(["hook", "status", "--json"])
        .env("PATH", &path)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["missing_binary"], false);
    commit_file_with_path(&repo, "src/fixpkg/more.py", &path);
    let head = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    assert_eq!(v["commit"], head.as_str());
}

/// Commit a new one-function file with `PATH` set to `path`, so the hooks
/// git runs see only what that `PATH` holds.
fn commit_file_with_path(repo: &Path, file: &str, path: &str) {
    std::fs::write(repo.join(file), "def added():\n    return 1\n").unwrap();
    git(repo, &["add", "src"]);
    let o = crate::common::git_command(repo)
        .args(["commit", "-qm", file])
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn hook_install_without_a_graph_builds_one_first() {
    let d = crate::common::fixture("python-repo.sh");
    let repo = crate::common::repo_of(&d);
    let o = rpg(&repo, &["hook", "install"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("commit .rpg/"), "{}", stderr(&o));
    let head = crate::common::commit_zebra(&repo);
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    assert_eq!(v["commit"], head.as_str());
}

#[test]
fn a_path_with_a_colon_gets_ids_every_tool_resolves() {
    let (_d, repo) = indexed_fixture();
    std::fs::write(
        repo.join("src/fixpkg/a:b.py"),
        "def colon_fn():\n    \"\"\"Live in a file with a colon.\"\"\"\n    return 1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "colon"]);
    ok(rpg(&repo, &["update"]));
    let id = "src/fixpkg/a:b.py:colon_fn";
    let fetched = ok(rpg(&repo, &["fetch", id, "--json"]));
    let v: serde_json::Value = serde_json::from_str(&fetched).unwrap();
    assert_eq!(v["entity"]["id"], id);
    assert_eq!(v["entity"]["path"], "src/fixpkg/a:b.py");
    let file = ok(rpg(&repo, &["fetch", "src/fixpkg/a:b.py"]));
    assert!(file.contains("def colon_fn"), "{file}");
    let explored = ok(rpg(&repo, &["explore", id, "--json"]));
    let v: serde_json::Value = serde_json::from_str(&explored).unwrap();
    assert_eq!(v["root"], id, "{v}");
    let sym = ok(rpg(&repo, &["symbols", "src/fixpkg/a:b.py", "--json"]));
    assert!(sym.contains("colon_fn"), "{sym}");
    let mut s = crate::mcp::Session::start(&repo);
    s.initialize();
    let (err, text) = s.call("fetch", serde_json::json!({"target": id}));
    assert!(!err, "{text}");
}

#[test]
fn mcp_answers_bad_input_with_json_rpc_errors_and_bounded_results() {
    let (_d, repo) = indexed_fixture();
    let mut g = snapshot_of(&repo);
    // Features a model is said to have written: the snapshot keeps those.
    let normalize = g.entities.get_mut("src/fixpkg/util.py:normalize").unwrap();
    normalize.features = vec!["x".repeat(50 * 1024 * 1024)];
    normalize.lifter = "llm/hostile".into();
    write_snapshot(&repo, &g);
    let mut s = crate::mcp::Session::start(&repo);
    s.send_line("{this is not json");
    let r = s.next_reply();
    assert_eq!(r["error"]["code"], -32700, "{r}");
    let r = s.request(
        "tools/call",
        serde_json::json!({"name": "status", "arguments": {}}),
    );
    assert_eq!(r["error"]["code"], -32002, "{r}");
    s.initialize();
    let (err, text) = s.call(
        "fetch",
        serde_json::json!({"target": "src/fixpkg/util.py:normalize"}),
    );
    assert!(!err, "{}", &text[..text.len().min(300)]);
    assert!(text.len() <= rpg::mcp::MAX_RESULT_CHARS, "{}", text.len());
    let (err, _) = s.call("status", serde_json::json!({}));
    assert!(!err, "the server is still serving");
    // The CLI bounds the same field, and says why the file was refused.
    let o = rpg(&repo, &["fetch", "src/fixpkg/util.py:normalize"]);
    assert!(o.stdout.len() < 20_000, "{}", o.stdout.len());
    assert!(
        stderr(&o).contains("a feature is too long"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_closed_pipe_ends_quietly_and_bad_counts_are_usage_errors() {
    let (_d, repo) = indexed_fixture();
    let mut child = rpg_command(&repo)
        .args(["locate", "split the host", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // `| head` that has read enough
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    for args in [
        &["locate", "x", "--top-k", "0"][..],
        &["search", "x", "--top-k", "0"],
    ] {
        let o = rpg(&repo, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("at least 1"), "{}", stderr(&o));
    }
}

#[test]
fn read_only_commands_without_a_graph_write_nothing() {
    let d = crate::common::fixture("python-repo.sh");
    let repo = crate::common::repo_of(&d);
    for args in [
        &["status"][..],
        &["locate", "x"],
        &["fetch", "a.py"],
        &["symbols", "a.py"],
        &["search", "x"],
    ] {
        let o = rpg(&repo, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("rpg init"), "{}", stderr(&o));
        assert!(!repo.join(".rpg").exists(), "{args:?} wrote .rpg/");
    }
}

#[test]
fn status_says_ahead_when_an_older_commit_is_checked_out() {
    let (_d, repo) = indexed_fixture();
    crate::common::commit_zebra(&repo);
    ok(rpg(&repo, &["update"]));
    git(&repo, &["checkout", "-q", "HEAD~1"]);
    let o = ok(rpg(&repo, &["status"]));
    assert!(o.contains("1 commit ahead of HEAD"), "{o}");
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    assert_eq!(v["ahead"], 1);
    assert_eq!(v["behind"], 0);
}

/// A clone of `from` in `d`, named `name`.
fn clone_of(from: &Path, d: &tempfile::TempDir, name: &str) -> std::path::PathBuf {
    let dir = d.path().join(name);
    git(
        d.path(),
        &["clone", "-q", from.to_str().unwrap(), dir.to_str().unwrap()],
    );
    dir
}

/// Commit a new function in `file`, then its snapshot in a second commit,
/// as CI or a person running `rpg update --snapshot` does.
fn commit_code_then_snapshot(clone: &Path, file: &str, function: &str) {
    let p = clone.join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, format!("{text}\n\ndef {function}():\n    return 1\n")).unwrap();
    git(clone, &["commit", "-qam", function]);
    ok(rpg(clone, &["update", "--snapshot"]));
    git(clone, &["add", ".rpg"]);
    git(clone, &["commit", "-qm", "graph"]);
}

/// Entity ids and edges: what must equal a fresh init of the same tree.
fn code_of(g: &rpg::graph::Graph) -> (Vec<String>, Vec<rpg::graph::Edge>) {
    (
        g.entities.keys().cloned().collect(),
        g.edges.iter().cloned().collect(),
    )
}

fn fresh_init_of_head(clone: &Path, d: &tempfile::TempDir, name: &str) -> rpg::graph::Graph {
    let other = clone_of(clone, d, name);
    std::fs::remove_dir_all(other.join(".rpg")).unwrap();
    ok(rpg(&other, &["init"]));
    snapshot_of(&other)
}

/// Two clones of one remote: `a` pushed a function and its snapshot; `b`
/// (with the merge driver when `driver`) committed another function and
/// its snapshot, and has not pulled yet.
fn diverged_clones(driver: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    let d = crate::common::fixture("python-repo.sh");
    let remote = bare_remote_with_graph(&d);
    let (a, b) = (clone_of(&remote, &d, "a"), clone_of(&remote, &d, "b"));
    if driver {
        ok(rpg(&b, &["hook", "install"]));
    }
    commit_code_then_snapshot(&a, "src/fixpkg/util.py", "added_by_a");
    git(&a, &["push", "-q", "origin", "HEAD"]);
    commit_code_then_snapshot(&b, "src/fixpkg/models.py", "added_by_b");
    (d, b)
}

/// Both sides' functions are in `b`'s snapshot, which equals a fresh init.
fn assert_holds_both_sides(b: &Path, d: &tempfile::TempDir) {
    let g = snapshot_of(b);
    assert!(g.entities.contains_key("src/fixpkg/util.py:added_by_a"));
    assert!(g.entities.contains_key("src/fixpkg/models.py:added_by_b"));
    assert_eq!(code_of(&g), code_of(&fresh_init_of_head(b, d, "fresh")));
}

#[test]
fn the_merge_driver_writes_the_snapshot_of_the_merged_tree() {
    let (d, b) = diverged_clones(true);
    git(
        &b,
        &["pull", "-q", "--no-rebase", "--no-edit", "origin", "HEAD"],
    );
    let merged = std::fs::read_to_string(b.join(".rpg/graph.jsonl")).unwrap();
    assert!(!merged.contains("<<<<<<<"), "no conflict markers");
    assert_holds_both_sides(&b, &d);
    let o = rpg(&b, &["status", "--json"]);
    assert_eq!(stderr(&o), "", "the merged snapshot is adopted as it is");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["up_to_date"], true);
}

#[test]
fn the_merge_driver_resolves_a_rebase_too() {
    let (d, b) = diverged_clones(true);
    git(&b, &["pull", "-q", "--rebase", "origin", "HEAD"]);
    assert_holds_both_sides(&b, &d);
}

#[test]
fn without_the_driver_a_conflicted_merge_is_named_and_regenerated() {
    let (d, b) = diverged_clones(false);
    let o = crate::common::git_command(&b)
        .args(["pull", "-q", "--no-rebase", "--no-edit", "origin", "HEAD"])
        .output()
        .unwrap();
    assert!(
        !o.status.success(),
        "the snapshot conflicts without the driver"
    );
    let o = rpg(&b, &["status"]);
    assert!(
        stderr(&o).contains("merge conflict markers"),
        "{}",
        stderr(&o)
    );
    // As advised: regenerate, which resolves the file, then commit the
    // merge, then bring the snapshot to the merge.
    ok(rpg(&b, &["update", "--snapshot"]));
    snapshot_of(&b);
    git(&b, &["add", ".rpg/graph.jsonl"]);
    git(&b, &["commit", "-q", "--no-edit"]);
    ok(rpg(&b, &["update", "--snapshot"]));
    assert_holds_both_sides(&b, &d);
}

/// Any process that starts a child briefly shares its open files with it,
/// and with them any lock it holds: a store that looks locked for a
/// moment is waited for, never mistaken for a broken one and rebuilt from
/// the older snapshot.
#[test]
fn a_store_locked_for_a_moment_is_waited_for_not_rebuilt() {
    let (_d, repo) = indexed_fixture();
    let head = crate::common::commit_zebra(&repo);
    ok(rpg(&repo, &["update"])); // the store is now ahead of the snapshot
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spawner = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::process::Command::new("true").status();
            }
        })
    };
    let rpg_dir = rpg::store::RpgDir::new(&repo).unwrap();
    for _ in 0..500 {
        // Anything but the store as it is (adopting the older snapshot
        // instead, above all) is an error here.
        let store = rpg_dir.open().unwrap();
        assert_eq!(store.meta().unwrap().commit, head);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spawner.join().unwrap();
}
