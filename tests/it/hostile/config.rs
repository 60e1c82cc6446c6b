//! B. What a repository may configure: it may ask for things, never spend
//! the user's key, never merge code, and a change to it is applied.

use crate::common::{git, indexed_fixture, ok, rpg, rpg_command, stderr};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A local endpoint that counts the connections made to it and answers none.
fn counting_endpoint() -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 1024];
            let _ = conn.read(&mut buf);
        }
    });
    (url, seen)
}

fn git_with_key(repo: &Path, url: &str, args: &[&str]) {
    let o = crate::common::git_command(repo)
        .args(args)
        .env("OPENAI_API_KEY", "sk-the-users-own")
        .env("OPENAI_BASE_URL", url)
        .env("XDG_CONFIG_HOME", "/nonexistent/rpg-tests-config")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_committed_config_asks_for_the_model_but_never_spends_the_users_key() {
    let (_d, repo) = indexed_fixture();
    ok(rpg(&repo, &["hook", "install"]));
    let (url, seen) = counting_endpoint();
    std::fs::write(
        repo.join(".rpg/config.toml"),
        "[lift]\nlifter = \"llm\"\nmodel = \"gpt-4o-mini\"\nmax_retries = 4000000000\ntimeout_secs = 9000000000\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("src/fixpkg/more.py"),
        "def more():\n    return 1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    let started = std::time::Instant::now();
    git_with_key(&repo, &url, &["commit", "-qm", "config"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    for args in [&["update"][..], &["init"], &["locate", "more"]] {
        let o = rpg_command(&repo)
            .args(args)
            .env("OPENAI_API_KEY", "sk-the-users-own")
            .env("OPENAI_BASE_URL", &url)
            .output()
            .unwrap();
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "{args:?}: {}",
            stderr(&o)
        );
        if args[0] == "init" {
            assert!(
                stderr(&o).contains("asks for the model lifter"),
                "{args:?}: {}",
                stderr(&o)
            );
        }
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0, "the key was sent");
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    assert_eq!(v["lifter"], "offline/1");
}

#[test]
fn the_hook_never_waits_on_a_model_even_one_the_user_chose() {
    let (d, repo) = indexed_fixture();
    ok(rpg(&repo, &["hook", "install"]));
    let (url, seen) = counting_endpoint();
    let xdg = d.path().join("xdg");
    std::fs::create_dir_all(xdg.join("rpg")).unwrap();
    std::fs::write(
        xdg.join("rpg/config.toml"),
        format!("[lift]\nlifter = \"llm\"\nmodel = \"m\"\nbase_url = \"{url}\"\n"),
    )
    .unwrap();
    std::fs::write(
        repo.join("src/fixpkg/more.py"),
        "def more():\n    return 1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    let o = crate::common::git_command(&repo)
        .args(["commit", "-qm", "more"])
        .env("OPENAI_API_KEY", "sk-the-users-own")
        .env("XDG_CONFIG_HOME", &xdg)
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(seen.load(Ordering::SeqCst), 0, "the hook called the model");
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["status", "--json"]))).unwrap();
    assert_eq!(
        v["commit"],
        git(&repo, &["rev-parse", "HEAD"]).trim(),
        "and still updated the graph"
    );
}

#[test]
fn the_merge_driver_merges_only_the_snapshot_and_code_conflicts_stay_conflicts() {
    let (_d, repo) = indexed_fixture();
    ok(rpg(&repo, &["hook", "install"]));
    std::fs::write(repo.join(".gitattributes"), "*.py merge=rpg\n").unwrap();
    git(&repo, &["add", ".gitattributes"]);
    git(&repo, &["commit", "-qm", "attributes"]);
    let util = repo.join("src/fixpkg/util.py");
    let text = std::fs::read_to_string(&util).unwrap();
    git(&repo, &["checkout", "-qb", "theirs"]);
    std::fs::write(&util, text.replace("s.lower()", "s.casefold()  # theirs")).unwrap();
    git(&repo, &["commit", "-qam", "theirs"]);
    git(&repo, &["checkout", "-q", "-"]);
    std::fs::write(&util, text.replace("s.lower()", "s.upper()  # ours")).unwrap();
    git(&repo, &["commit", "-qam", "ours"]);
    let o = crate::common::git_command(&repo)
        .args(["merge", "-q", "theirs"])
        .output()
        .unwrap();
    assert!(!o.status.success(), "git reports the conflict");
    let merged = std::fs::read_to_string(&util).unwrap();
    assert!(
        merged.contains("# ours") && merged.contains("# theirs"),
        "{merged}"
    );
    assert!(merged.contains("<<<<<<< ours"), "{merged}");
}

#[test]
fn a_config_change_is_applied_by_the_next_update_as_by_init() {
    let (_d, repo) = indexed_fixture();
    std::fs::write(
        repo.join(".rpg/config.toml"),
        "[index]\nexclude = [\"**\"]\n",
    )
    .unwrap();
    git(&repo, &["add", "-f", ".rpg/config.toml"]);
    git(&repo, &["commit", "-qm", "exclude everything"]);
    ok(rpg(&repo, &["update"]));
    let counts = |repo: &Path| {
        let v: serde_json::Value =
            serde_json::from_str(&ok(rpg(repo, &["status", "--json"]))).unwrap();
        let mut c = v["counts"].clone();
        // An edge kind with no edges is counted as 0 or left out; and the
        // hierarchy is the one thing evolution may build otherwise.
        if let Some(edges) = c["edges"].as_object_mut() {
            edges.retain(|_, n| n != 0);
        }
        c.as_object_mut().unwrap().remove("categories");
        c
    };
    let updated = counts(&repo);
    assert_eq!(updated["files"], 0, "{updated}");
    ok(rpg(&repo, &["init"]));
    assert_eq!(counts(&repo), updated);
    // And back: the files return.
    std::fs::write(
        repo.join(".rpg/config.toml"),
        "[index]\nmax_file_bytes = 100000\n",
    )
    .unwrap();
    git(&repo, &["commit", "-qam", "include again"]);
    ok(rpg(&repo, &["update"]));
    let updated = counts(&repo);
    assert!(updated["files"].as_u64().unwrap() > 0, "{updated}");
    ok(rpg(&repo, &["init"]));
    assert_eq!(counts(&repo), updated);
}
