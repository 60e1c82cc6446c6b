//! `rpg locate` on the fixtures: ranking, JSON shape, inputs, exit codes.

use crate::common::{fixture, ok, repo_of, rpg, stdout};
use std::io::Write;
use std::process::{Command, Stdio};

fn locate_json(repo: &std::path::Path, query: &str) -> serde_json::Value {
    serde_json::from_str(&ok(rpg(repo, &["locate", query, "--json"]))).unwrap()
}

#[test]
fn a_named_method_and_its_file_rank_first() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let v = locate_json(
        &repo,
        "Request.split_host breaks on IPv6 hosts with many colons",
    );
    assert_eq!(
        v["functions"][0]["id"],
        "src/fixpkg/models.py:Request.split_host"
    );
    assert_eq!(v["files"][0]["path"], "src/fixpkg/models.py");
    // The documented schema.
    let f = &v["functions"][0];
    for key in [
        "id",
        "path",
        "qualname",
        "kind",
        "start_line",
        "end_line",
        "score",
    ] {
        assert!(!f[key].is_null(), "missing {key}");
    }
    assert_eq!(f["start_line"], 22);
    assert!(v["commit"].as_str().unwrap().len() == 40);
}

#[test]
fn stack_trace_frames_point_at_the_failing_function() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let issue = "Crash on startup\n\nTraceback (most recent call last):\n  File \"/opt/venv/lib/python3.11/site-packages/fixpkg/util.py\", line 8, in normalize\n    return s.lower()\nAttributeError: 'NoneType' object has no attribute 'lower'\n";
    let v = locate_json(&repo, issue);
    assert_eq!(v["functions"][0]["id"], "src/fixpkg/util.py:normalize");
}

#[test]
fn queries_come_from_an_argument_stdin_or_a_file_and_top_k_limits() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let q = "circle diameter is wrong for negative radius";
    let a = ok(rpg(&repo, &["locate", q, "--json", "--top-k", "2"]));
    let mut child = Command::new(env!("CARGO_BIN_EXE_rpg"))
        .args(["locate", "-", "--json", "--top-k", "2"])
        .current_dir(&repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(q.as_bytes()).unwrap();
    let b = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let file = d.path().join("issue.txt");
    std::fs::write(&file, q).unwrap();
    let c = ok(rpg(
        &repo,
        &[
            "locate",
            "--query-file",
            file.to_str().unwrap(),
            "--json",
            "--top-k",
            "2",
        ],
    ));
    assert_eq!(a, b);
    assert_eq!(a, c);
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert!(v["functions"].as_array().unwrap().len() <= 2);
    assert_eq!(v["functions"][0]["id"], "src/shapes.rs:Circle::diameter");
    // A 50 kB issue is fine.
    let big = format!("{q} {}", "lorem ipsum dolor sit amet ".repeat(2000));
    ok(rpg(&repo, &["locate", &big, "--json"]));
}

#[test]
fn nothing_found_exits_1_and_the_text_scaffold_names_targets() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let o = rpg(&repo, &["locate", "qqqq zzzz"]);
    assert_eq!(o.status.code(), Some(1));
    let text = ok(rpg(&repo, &["locate", "square of a number"]));
    assert!(text.starts_with("[FILE] src/util.rs"), "{text}");
    assert!(
        text.contains("[CANDIDATE_TARGETS]\n  src/util.rs:square"),
        "{text}"
    );
    assert!(stdout(&rpg(&repo, &["locate", "square", "--json"])).contains("\"functions\""));
    // Anchors show their same-file call neighbours.
    let text = ok(rpg(&repo, &["locate", "radius of a circle"]));
    assert!(
        text.contains("  [ANCHOR] Circle::radius  L36-38\n      invoked-by: Circle::diameter\n"),
        "{text}"
    );
}
