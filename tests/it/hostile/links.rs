//! A. rpg never writes, or reads unboundedly, through a link the
//! repository committed; and what the repository names reaches a terminal
//! or a log only escaped.

use crate::common::{git, indexed_fixture, ok, rpg, stderr, stdout};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

/// Stage `paths`, ignored or not (an attacker's `git add -f`), and commit.
fn commit_forced(repo: &Path, paths: &[&str], message: &str) {
    git(repo, &[&["add", "-f", "--"][..], paths].concat());
    git(repo, &["commit", "-qm", message]);
}

/// `rpg <args>` in `repo`, killed and failed if it runs past `limit`.
fn rpg_within(repo: &Path, args: &[&str], limit: Duration) -> std::process::Output {
    let mut child = crate::common::rpg_command(repo)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("rpg {args:?} ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_committed_log_link_and_a_config_error_with_a_payload_never_reach_the_users_files() {
    let (d, repo) = indexed_fixture();
    ok(rpg(&repo, &["hook", "install"]));
    git(&repo, &["add", ".rpg"]);
    git(&repo, &["commit", "-qm", "graph"]);
    let victim = d.path().join("bashrc");
    fs::write(&victim, "# the user's shell\n").unwrap();
    git(&repo, &["checkout", "-qb", "attack"]);
    let log = repo.join(".rpg/log/hook.log");
    fs::create_dir_all(log.parent().unwrap()).unwrap();
    let _ = fs::remove_file(&log);
    symlink("../../../bashrc", &log).unwrap();
    fs::write(
        repo.join(".rpg/config.toml"),
        "[lift]\nlifter = \"x\\ntouch /tmp/PWNED #\\n\"\n",
    )
    .unwrap();
    commit_forced(&repo, &[".rpg/log/hook.log", ".rpg/config.toml"], "attack");
    // The user pulls it: the checkout runs the hooks, which fail on the config.
    git(&repo, &["checkout", "-q", "-"]);
    git(&repo, &["checkout", "-q", "attack"]);
    assert_eq!(fs::read_to_string(&victim).unwrap(), "# the user's shell\n");
    // Where the log is a real file, the error is logged on one line.
    fs::remove_file(&log).unwrap();
    fs::write(
        repo.join("src/fixpkg/more.py"),
        "def more():\n    return 1\n",
    )
    .unwrap();
    git(&repo, &["add", "src"]);
    git(&repo, &["commit", "-qm", "more"]);
    let text = fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("touch /tmp/PWNED"),
        "the error was logged: {text}"
    );
    for line in text.lines() {
        assert!(line.starts_with("20"), "each entry is one line: {text}");
    }
}

#[test]
fn a_committed_rpg_link_is_refused_and_nothing_lands_where_it_points() {
    let d = crate::common::fixture("python-repo.sh");
    let repo = crate::common::repo_of(&d);
    let victim = d.path().join("victim");
    fs::create_dir_all(&victim).unwrap();
    symlink("../victim", repo.join(".rpg")).unwrap();
    commit_forced(&repo, &[".rpg"], "link");
    for args in [
        &["init"][..],
        &["update"],
        &["update", "--snapshot"],
        &["hook", "install"],
        &["status"],
        &["locate", "normalize a string"],
    ] {
        let o = rpg(&repo, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("symbolic link"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    assert_eq!(
        fs::read_dir(&victim).unwrap().count(),
        0,
        "nothing was written there"
    );
}

/// The pids the next processes on this machine will most likely get.
fn likely_pids(n: u32) -> impl Iterator<Item = u32> {
    let read = |p: &str| fs::read_to_string(p).ok()?.trim().parse::<u32>().ok();
    let last = read("/proc/sys/kernel/ns_last_pid").unwrap_or(1);
    let max = read("/proc/sys/kernel/pid_max").unwrap_or(32768);
    (1..=n).map(move |i| (last + i) % max)
}

#[test]
fn links_planted_at_every_temporary_name_are_never_written_through() {
    let (d, repo) = indexed_fixture();
    let victim = d.path().join("victim");
    fs::write(&victim, "precious\n").unwrap();
    for pid in likely_pids(3000) {
        for name in [
            "graph.tmp",
            "graph.jsonl.tmp",
            ".gitignore.tmp",
            "pending.tmp",
        ] {
            let _ = symlink(&victim, repo.join(format!(".rpg/{name}.{pid}")));
        }
    }
    crate::common::commit_zebra(&repo);
    ok(rpg(&repo, &["update", "--snapshot"]));
    ok(rpg(&repo, &["init"]));
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    let snapshot = repo.join(".rpg/graph.jsonl");
    assert!(fs::symlink_metadata(&snapshot).unwrap().is_file());
    assert!(crate::common::snapshot_has(
        &fs::read_to_string(&snapshot).unwrap(),
        "src/fixpkg/zebra.py:stripe_count"
    ));
}

#[test]
fn files_under_rpg_linked_to_dev_zero_cost_a_notice_not_all_memory() {
    for name in ["config.toml", "graph.jsonl", "pending", ".gitignore"] {
        let (_d, repo) = indexed_fixture();
        let path = repo.join(".rpg").join(name);
        let _ = fs::remove_file(&path);
        symlink("/dev/zero", &path).unwrap();
        for args in [
            &["status"][..],
            &["locate", "normalize a string"],
            &["update"],
        ] {
            let o = rpg_within(&repo, args, Duration::from_secs(60));
            assert!(
                o.status.code().is_some_and(|c| c < 2),
                "{name} {args:?}: {}",
                stderr(&o)
            );
        }
        if name == "graph.jsonl" {
            let o = rpg(&repo, &["status"]);
            assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
        }
    }
}

#[test]
fn a_store_or_lock_link_is_never_followed_and_tracked_files_are_never_deleted() {
    let (d, repo) = indexed_fixture();
    // The store: refused, and nothing created where it points.
    let elsewhere = d.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    symlink(&elsewhere, repo.join(".rpg/store")).unwrap();
    let o = rpg(&repo, &["status"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    fs::remove_file(repo.join(".rpg/store")).unwrap();
    // The lock: its target is never created.
    let target = d.path().join("lock-target");
    symlink(&target, repo.join(".rpg/lock")).unwrap();
    crate::common::commit_zebra(&repo);
    ok(rpg(&repo, &["update"]));
    assert!(!target.exists());
    fs::remove_file(repo.join(".rpg/lock")).unwrap();
    // A tracked `pending` and a tracked `lock` directory: every command
    // works, and neither is touched.
    fs::write(repo.join(".rpg/pending"), "from a commit\n").unwrap();
    fs::create_dir_all(repo.join(".rpg/lock")).unwrap();
    fs::write(repo.join(".rpg/lock/keep"), "").unwrap();
    git(&repo, &["add", "-f", ".rpg/pending", ".rpg/lock"]);
    git(&repo, &["commit", "-qm", "tracked local files"]);
    for args in [
        &["update"][..],
        &["status"],
        &["locate", "normalize a string"],
    ] {
        ok(rpg(&repo, args));
    }
    assert_eq!(
        fs::read_to_string(repo.join(".rpg/pending")).unwrap(),
        "from a commit\n"
    );
    let dirty = git(
        &repo,
        &["status", "--porcelain", "--", ".rpg/pending", ".rpg/lock"],
    );
    assert_eq!(dirty, "", "tracked files left as committed");
}

#[test]
fn names_and_text_from_the_repository_reach_the_terminal_escaped() {
    let (_d, repo) = indexed_fixture();
    let name = "src/fixpkg/evil\nnext: rpg fetch pwned.py";
    fs::write(repo.join(name), "def normalize_evil(s):\n    return s\n").unwrap();
    fs::write(
        repo.join("src/fixpkg/ansi.py"),
        "def normalize_ansi(s):\n    \"\"\"Normalize \x1b[2J\x1b]0;owned\x07 evil text.\"\"\"\n    return s\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "evil"]);
    ok(rpg(&repo, &["update"]));
    for args in [
        vec!["locate", "normalize evil text"],
        vec!["locate", "normalize evil text", "--format", "markdown"],
        vec!["search", "normalize evil"],
        vec!["fetch", "src/fixpkg/ansi.py:normalize_ansi"],
        vec!["symbols", "src/fixpkg/ansi.py"],
        vec!["explore", "src/fixpkg/ansi.py:normalize_ansi"],
        vec!["tree"],
    ] {
        let o = rpg(&repo, &args);
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "{args:?}: {}",
            stderr(&o)
        );
        let out = stdout(&o);
        assert!(
            !out.contains('\x1b') && !out.contains('\x07'),
            "{args:?}: {out:?}"
        );
        assert!(
            !out.lines()
                .any(|l| l.starts_with("next: rpg fetch pwned.py")),
            "{args:?} forged a line: {out}"
        );
    }
}

#[test]
fn tree_entries_git_fsck_rejects_are_never_indexed() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    let hash = |input: &str, args: &[&str]| -> String {
        let mut c = crate::common::git_command(&repo);
        c.args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped());
        let mut child = c.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let blob = hash("def evil():\n    pass\n", &["hash-object", "-w", "--stdin"]);
    let inner = hash(&format!("100644 blob {blob}\tok.py\n"), &["mktree"]);
    let top = hash(
        &format!("040000 tree {inner}\t.git\n040000 tree {inner}\t.GIT\n040000 tree {inner}\t..\n100644 blob {blob}\tfine.py\n"),
        &["mktree", "--missing"],
    );
    let commit = hash("crafted\n", &["commit-tree", &top]);
    git(&repo, &["update-ref", "HEAD", &commit]);
    let o = rpg(&repo, &["init", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["report"]["skipped"]["unsafe_names"], 3, "{v}");
    let found = ok(rpg(&repo, &["locate", "evil", "--json"]));
    assert!(found.contains("fine.py"), "{found}");
    assert!(
        !found.contains(".git/") && !found.contains(".GIT/") && !found.contains("../"),
        "{found}"
    );
}
