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

/// `count` one-line functions, joined on one line.
fn one_line_functions(count: usize) -> String {
    (0..count)
        .map(|i| format!("function f{i}(a,b){{var c=a+b;if(c>{i}){{return g(c)}}return h(a)*b}}"))
        .collect::<Vec<_>>()
        .join(";")
}

#[test]
fn minified_javascript_is_skipped_as_generated() {
    let d = tempfile::tempdir().unwrap();
    let repo = repo_with(
        &d,
        &[
            ("dist2/app.js", format!("{}\n", one_line_functions(500))),
            ("src/app.js", "function start() {\n  return 1;\n}\n".into()),
        ],
    );
    let o = rpg(&repo, &["init", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&crate::common::stdout(&o)).unwrap();
    assert_eq!(v["report"]["skipped"]["generated"], 1, "{v}");
    assert_eq!(v["counts"]["functions"], 1, "{v}");
}

#[test]
fn a_hook_over_its_time_budget_leaves_the_update_pending_and_returns() {
    let (_d, repo) = crate::common::indexed_fixture();
    ok(rpg(&repo, &["hook", "install"]));
    crate::common::commit_normalize_change(&repo);
    let graph_commit = |repo: &Path| -> String {
        let v: serde_json::Value =
            serde_json::from_str(&ok(rpg(repo, &["status", "--json"]))).unwrap();
        v["commit"].as_str().unwrap().to_string()
    };
    let head = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(graph_commit(&repo), head, "within budget, the hook updates");
    fs::write(
        repo.join("src/fixpkg/more.py"),
        "def more():\n    return 1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    let o = crate::common::git_command(&repo)
        .args(["commit", "-qm", "more"])
        .env("RPG_HOOK_BUDGET_MS", "0")
        .env("XDG_CONFIG_HOME", "/nonexistent/rpg-tests-config")
        .output()
        .unwrap();
    assert!(o.status.success());
    let log = fs::read_to_string(repo.join(".rpg/log/hook.log")).unwrap();
    assert!(log.contains("over its 0 ms budget"), "{log}");
    assert!(repo.join(".rpg/pending").exists());
    // The next command catches up.
    let head = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(graph_commit(&repo), head);
    assert!(!repo.join(".rpg/pending").exists());
}

#[test]
fn deep_nesting_costs_in_proportion_and_deeper_code_belongs_to_its_ancestor() {
    let depth = 3000;
    let nest = |open: &dyn Fn(usize) -> String, inner: &str, close: &str| -> String {
        let mut s: String = (0..depth).map(open).collect();
        s.push_str(inner);
        s.push_str(&close.repeat(depth));
        s
    };
    let cases = [
        (
            "a.js",
            format!("var x = {};\n", nest(&|_| "{a:\n".into(), "1", "}\n")),
        ),
        (
            "a.rs",
            nest(&|i| format!("mod m{i} {{\n"), "fn f() { g(); }\n", "}\n"),
        ),
        (
            "A.java",
            nest(
                &|i| format!("class C{i} {{\n"),
                "void f() { g(); }\n",
                "}\n",
            ),
        ),
        (
            "a.cpp",
            nest(
                &|i| format!("struct S{i} {{\n"),
                "void f() { g(); }\n",
                "};\n",
            ),
        ),
        (
            "A.cs",
            nest(
                &|i| format!("class C{i} {{\n"),
                "void F() { G(); }\n",
                "}\n",
            ),
        ),
        (
            "a.php",
            format!(
                "<?php\n{}",
                nest(&|i| format!("function f{i}() {{\n"), "g();\n", "}\n")
            ),
        ),
        (
            "a.rb",
            nest(&|i| format!("module M{i}\n"), "def f\n  g\nend\n", "end\n"),
        ),
        (
            "A.kt",
            nest(&|i| format!("class C{i} {{\n"), "fun f() { g() }\n", "}\n"),
        ),
        (
            "a.swift",
            nest(
                &|i| format!("struct S{i} {{\n"),
                "func f() { g() }\n",
                "}\n",
            ),
        ),
        (
            "a.scala",
            nest(&|i| format!("object O{i} {{\n"), "def f() = g()\n", "}\n"),
        ),
        ("a.sh", nest(&|i| format!("f{i}() {{\n"), "g\n", "}\n")),
    ];
    for (path, text) in cases {
        let d = tempfile::tempdir().unwrap();
        let repo = repo_with(&d, &[(path, text.clone())]);
        let o = rpg(&repo, &["init", "--json"]);
        assert!(o.status.success(), "{path}: {}", stderr(&o));
        let snapshot = fs::metadata(repo.join(".rpg/graph.jsonl")).unwrap().len();
        // Qualnames 3,000 names long, one per level, made this quadratic:
        // tens of megabytes of snapshot for tens of kilobytes of code.
        assert!(
            snapshot < 4 * text.len() as u64 + 64_000,
            "{path}: a {snapshot}-byte snapshot for {} bytes",
            text.len()
        );
        let v: serde_json::Value = serde_json::from_str(&crate::common::stdout(&o)).unwrap();
        let c = &v["counts"];
        let defined = ["classes", "functions", "methods"]
            .iter()
            .map(|k| c[k].as_u64().unwrap())
            .sum::<u64>();
        assert!(
            defined <= 2 * rpg::parse::MAX_NESTING as u64 + 2,
            "{path}: {c}"
        );
    }
}

/// `git <args>` in `repo` with `input` on stdin; its stdout, trimmed.
fn git_in(repo: &Path, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = crate::common::git_command(repo)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "git {args:?}");
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

#[test]
fn one_large_attributes_blob_in_many_directories_is_read_once() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let filler = "*.txt text eol=lf diff=astextplain merge=union\n";
    let mut attributes = filler.repeat((1 << 20) / filler.len() - 1);
    attributes.push_str("gen.py linguist-generated\n");
    let blob = |text: &[u8]| git_in(&repo, &["hash-object", "-w", "--stdin"], text);
    let (attrs, code) = (blob(attributes.as_bytes()), blob(b"def f():\n    pass\n"));
    let dir = git_in(
        &repo,
        &["mktree"],
        format!("100644 blob {attrs}\t.gitattributes\n100644 blob {code}\ta.py\n100644 blob {code}\tgen.py\n").as_bytes(),
    );
    let dirs: String = (0..300)
        .map(|i| format!("040000 tree {dir}\td{i}\n"))
        .collect();
    let top = git_in(&repo, &["mktree"], dirs.as_bytes());
    let commit = git_in(&repo, &["commit-tree", &top, "-m", "bomb"], b"");
    git(&repo, &["update-ref", "HEAD", &commit]);
    // 300 MB of attributes for the price of 1 MB: each copy was parsed on
    // its own (10 GB for 1,100 copies). Under a 1 GB address-space limit:
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -v 1000000; exec {} init --json",
            env!("CARGO_BIN_EXE_rpg")
        ))
        .current_dir(&repo)
        .env("XDG_CONFIG_HOME", "/nonexistent/rpg-tests-config")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&crate::common::stdout(&o)).unwrap();
    assert_eq!(
        v["report"]["skipped"]["excluded"], 300,
        "the marks still hold"
    );
    assert_eq!(v["report"]["files_indexed"], 300);
}

#[test]
fn a_full_disk_fails_init_with_one_line_and_leaves_nothing_behind() {
    let d = tempfile::tempdir().unwrap();
    let code: String = (0..4000)
        .map(|i| format!("def f{i}(x):\n    return g{i}(x)\n\n"))
        .collect();
    let repo = repo_with(&d, &[("a.py", code)]);
    // Writes past 1 MB fail, as on a full disk (EFBIG rather than ENOSPC,
    // by the same path): the snapshot fits, the store does not. The
    // previous rpg hung here in sled's flush, holding the lock, and left
    // its half-built store filling the disk.
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 1000; exec timeout 60 {} init",
            env!("CARGO_BIN_EXE_rpg")
        ))
        .current_dir(&repo)
        .env("XDG_CONFIG_HOME", "/nonexistent/rpg-tests-config")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim_end().lines().count(), 1, "{}", stderr(&o));
    let left: Vec<String> = fs::read_dir(repo.join(".rpg"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("store.") || n.contains(".tmp."))
        .collect();
    assert!(left.is_empty(), "a failed build left {left:?}");
    // The lock was released, and with room the graph is whole.
    ok(rpg(&repo, &["init"]));
    ok(rpg(&repo, &["status"]));
}

#[test]
fn an_update_waiting_for_the_lock_updates_to_the_head_it_finds_after() {
    let (_d, repo) = crate::common::indexed_fixture();
    let held = fs::File::open(repo.join(".rpg")).unwrap();
    held.lock().unwrap();
    let waiting = crate::common::rpg_command(&repo)
        .args(["update", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // While it waits, a commit lands (as a hook holding the lock would
    // index it); then the lock is let go.
    std::thread::sleep(std::time::Duration::from_millis(700));
    let head = crate::common::commit_zebra(&repo);
    drop(held);
    let o = waiting.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    assert_eq!(v["commit"], head.as_str(), "the graph was left behind HEAD");
}

#[test]
fn mcp_answers_a_non_utf8_or_overlong_line_with_a_parse_error_and_goes_on() {
    let (_d, repo) = crate::common::indexed_fixture();
    let mut s = crate::mcp::Session::start(&repo);
    s.initialize();
    s.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"x\":\"\xff\"}\n");
    let r = s.next_reply();
    assert_eq!(r["error"]["code"], -32700, "{r}");
    // A valid request, but one line of 20 MB: refused unread, not parsed.
    let pad = "a".repeat(20 << 20);
    s.send_bytes(
        format!("{{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\",\"params\":{{\"pad\":\"{pad}\"}}}}\n")
            .as_bytes(),
    );
    let r = s.next_reply();
    assert_eq!(
        r["error"]["code"],
        -32700,
        "{}",
        crate::common::clip_json(&r)
    );
    s.send(serde_json::json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}));
    let r = s.next_reply();
    assert_eq!(r["id"], 9, "the session went on: {r}");
    assert!(r["result"]["tools"].is_array());
}
