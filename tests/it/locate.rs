//! `rpg locate` on the fixtures: ranking, JSON shape, inputs, exit codes.

use crate::common::{
    commit_normalize_change, commit_zebra, fixture, git, ok, repo_of, rpg, stderr, stdout,
};
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
fn a_permalink_points_at_the_entity_holding_its_lines() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let range = "Crash on startup\n\nThe culprit: https://github.com/o/fixpkg/blob/0123abc/src/fixpkg/util.py#L2-L3";
    let v = locate_json(&repo, range);
    assert_eq!(
        v["functions"][0]["id"],
        "src/fixpkg/util.py:Base.base_method"
    );
    let one_line = "Crash on startup, see [here](https://github.com/o/fixpkg/blob/main/src/fixpkg/util.py#L8).";
    let v = locate_json(&repo, one_line);
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

/// Empty issue text is a mistake in the call (exit 2), not an answer;
/// text that begins with `--` is read after `--`, or from standard input.
#[test]
fn empty_text_is_a_usage_error_and_dashes_pass_after_a_double_dash() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    for args in [&["locate", ""][..], &["locate", " \n\t"]] {
        let o = rpg(&repo, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(
            stderr(&o),
            "rpg: error: the issue text is empty; give its title and body\n"
        );
    }
    let q = "--radius of a circle is wrong";
    let v: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["locate", "--json", "--", q]))).unwrap();
    assert_eq!(v["functions"][0]["id"], "src/shapes.rs:Circle::radius");
    let mut child = crate::common::rpg_command(&repo)
        .args(["locate", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(q.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    let w: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(w["functions"], v["functions"]);
}

#[test]
fn nothing_found_exits_1() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let o = rpg(&repo, &["locate", "qqqq zzzz"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "nothing in the graph matches this text\n");
    let o = rpg(&repo, &["locate", "qqqq zzzz", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["files"], serde_json::json!([]));
}

/// The scaffold layout, exactly: directories in the order of their best
/// file, the top three files expanded with importers, anchors (with their
/// same-file calls and the lines that hold the issue's words) and a
/// glimpse of siblings, the next two only listed; then the head of the
/// function ranking as the targets, each not shown as an anchor with its
/// lines that hold the issue's words.
#[test]
fn the_text_scaffold_has_a_fixed_layout() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let text = ok(rpg(&repo, &["locate", "radius of a circle"]));
    assert_eq!(
        text,
        "\
[DIR] src/  (6 matching symbols)
  [FILE] src/shapes.rs  (#1, score 2.11, 5 matching symbols)
    imports-by: src/lib.rs, tests/integration.rs
    [ANCHORS]
      Circle::radius  method L36-38
        invoked-by: Circle::diameter
           36| fn radius(&self) -> f64 {
      Circle::diameter  method L32-34
        invokes: Circle::radius
           33| self.radius() * 2.0
    [GLIMPSE]
      Circle::new  method L28-30
      Circle::area  method L42-44
      Shape  class L5-10
  [FILE] src/lib.rs  (#2, score 0.60, 1 matching symbols)
    [ANCHORS]
      total_area  function L8-10
        invoked-by: tests::parses_flags
            8| pub fn total_area(shapes: &[Circle]) -> f64 {
      tests::parses_flags  function L26-29
        invokes: total_area
    [GLIMPSE]
      platform  function L12-15
  [FILE] src/util.rs  (#4, score 0.05, 0 matching symbols)
[DIR] tests/  (1 matching symbols)
  [FILE] tests/integration.rs  (#3, score 0.37, 1 matching symbols)
    [ANCHORS]
      circle_diameter  function L3-7
            4| fn circle_diameter() {
            5| let c = Circle::new(1.0);
[CANDIDATE_TARGETS]
  src/shapes.rs:Circle::radius
  src/shapes.rs:Circle::diameter
  src/shapes.rs:Circle::new
       29| Circle { r }
  src/lib.rs:total_area
  src/shapes.rs:Circle::area
next: rpg fetch src/shapes.rs:Circle::radius
"
    );
}

/// The bot's format: every repository name in a code span, links to the
/// exact lines when a link base is given, candidate targets' too.
#[test]
fn the_markdown_scaffold_links_lines_and_quotes_names() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let md = ok(rpg(
        &repo,
        &[
            "locate",
            "radius of a circle",
            "--format",
            "markdown",
            "--link-base",
            "https://github.com/o/r/blob/abc",
        ],
    ));
    assert!(md.starts_with("- 📁 `src/` (6 matching symbols)\n  - [`src/shapes.rs`](https://github.com/o/r/blob/abc/src/shapes.rs) — 1st, 5 matching symbols; imported by `src/lib.rs` and 1 more\n    - **anchor** [`Circle::radius`](https://github.com/o/r/blob/abc/src/shapes.rs#L36-L38) (method L36-38); invoked by `Circle::diameter`\n"), "{md}");
    assert!(
        md.ends_with("\n**Next:** `rpg fetch src/shapes.rs:Circle::radius`\n"),
        "{md}"
    );
    // Each candidate target links to its lines, as anchors do.
    assert!(
        md.contains("\n**Candidate targets:**\n- [`src/shapes.rs:Circle::radius`](https://github.com/o/r/blob/abc/src/shapes.rs#L36-L38)\n"),
        "{md}"
    );
    assert!(
        md.contains(
            "\n- [`src/lib.rs:total_area`](https://github.com/o/r/blob/abc/src/lib.rs#L8-L10)\n"
        ),
        "{md}"
    );
    let plain = ok(rpg(
        &repo,
        &["locate", "radius of a circle", "--format", "markdown"],
    ));
    assert!(!plain.contains("https://"), "{plain}");
}

/// The search index follows updates file by file; what it answers after
/// edits equals what an index built from nothing over the same graph
/// answers (the store rebuilt from the committed snapshot).
#[test]
fn the_index_kept_by_updates_answers_like_a_fresh_one() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let models = repo.join("src/fixpkg/models.py");
    let text = std::fs::read_to_string(&models).unwrap();
    std::fs::write(
        &models,
        text.replace("def split_host", "def parse_netloc_zebra"),
    )
    .unwrap();
    commit_zebra(&repo);
    ok(rpg(&repo, &["update", "--snapshot"]));
    let queries = [
        "zebra stripes are miscounted",
        "parse_netloc_zebra fails",
        "split_host breaks on IPv6",
        // Words the code does not spell, matched through indexed words
        // that share their stem, some only in the renamed function.
        "splitting hosts with zebras",
    ];
    let kept: Vec<String> = queries
        .iter()
        .map(|q| stdout(&rpg(&repo, &["locate", q, "--json"])))
        .collect();
    assert!(
        kept[0].contains("src/fixpkg/zebra.py:stripe_count"),
        "{}",
        kept[0]
    );
    assert!(kept[1].contains("src/fixpkg/models.py:Request.parse_netloc_zebra"));
    // No entity of that name is left; a caller's line may still say it.
    let v: serde_json::Value = serde_json::from_str(&kept[2]).unwrap();
    let ids = v["functions"].as_array().unwrap().iter();
    assert!(
        !ids.map(|f| f["id"].as_str().unwrap())
            .any(|id| id.contains("split_host")),
        "{}",
        kept[2]
    );
    std::fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    for (q, k) in queries.iter().zip(&kept) {
        assert_eq!(&stdout(&rpg(&repo, &["locate", q, "--json"])), k, "{q}");
    }
}

/// A first build keeps its posting lists in one segment file in the
/// store; a segment cut short or gone is rebuilt by the next query, and
/// one whose lists' bytes changed is refused in one line, never misread.
#[test]
fn a_cut_or_missing_search_segment_is_rebuilt_and_a_damaged_one_refused() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let seg = repo.join(".rpg/store/search.seg");
    let q = ["locate", "split_host breaks on IPv6", "--json"];
    let before = ok(rpg(&repo, &q));
    assert!(before.contains("Request.split_host"), "{before}");
    let bytes = std::fs::read(&seg).unwrap();
    std::fs::write(&seg, &bytes[..bytes.len() / 2]).unwrap();
    assert_eq!(ok(rpg(&repo, &q)), before);
    std::fs::remove_file(&seg).unwrap();
    assert_eq!(ok(rpg(&repo, &q)), before);
    // Every byte of the lists (between the header and the key map whose
    // offset the trailer gives) changed, the length kept.
    let mut bytes = std::fs::read(&seg).unwrap();
    let trailer = bytes.len() - 24;
    let map_at = u64::from_le_bytes(bytes[trailer..trailer + 8].try_into().unwrap()) as usize;
    for b in &mut bytes[8..map_at] {
        *b ^= 0x5a;
    }
    std::fs::write(&seg, &bytes).unwrap();
    let out = rpg(&repo, &q);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("search segment") && err.contains("rebuild"),
        "{err}"
    );
    std::fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    assert_eq!(ok(rpg(&repo, &q)), before);
    // A link in its place is never followed, nor written through.
    let outside = d.path().join("outside");
    std::fs::write(&outside, "keep").unwrap();
    std::fs::remove_file(&seg).unwrap();
    std::os::unix::fs::symlink(&outside, &seg).unwrap();
    for args in [&q[..], &["update"]] {
        let out = rpg(&repo, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
}

/// Opt-in components are wired to their flags: fusion scores functions by
/// reciprocal rank, so no score can exceed 2/61.
/// Function ids (qualnames) and file paths `locate` ranks, in order.
fn ranking(repo: &std::path::Path, query: &str, switch: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut args = vec!["locate", query, "--json", "--top-k", "10"];
    args.extend_from_slice(switch);
    let v: serde_json::Value = serde_json::from_str(&ok(rpg(repo, &args))).unwrap();
    let list = |k: &str, f: &str| -> Vec<String> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| {
                x[f].as_str()
                    .unwrap()
                    .rsplit(':')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    (list("functions", "id"), list("files", "path"))
}

/// Every switch docs/locate.md lists changes the order it names, on a query
/// where that component matters; scores alone would not show it.
#[test]
fn each_ranking_switch_changes_the_order() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let fns = |q: &str, s: &[&str]| ranking(&repo, q, s).0;
    let files = |q: &str, s: &[&str]| ranking(&repo, q, s).1;
    // Names the issue mentions: still_here is named, ok only called.
    let q = "still_here calls ok";
    assert_eq!(fns(q, &["--no-size"])[0], "AfterError.still_here");
    assert_eq!(fns(q, &["--no-size", "--no-names"])[0], "ok");
    // Size: see the_length_prior_favours_long_functions_but_pythons.
    // Recent changes: see a_function_changed_lately_ranks_above_its_twin.
    // Frames: a line-only frame points at normalize's lines.
    let framed = "host wrong\nat src/fixpkg/util.py:8";
    assert_eq!(fns(framed, &[])[0], "normalize");
    assert_eq!(fns(framed, &["--no-frames"])[0], "Request.host");
    // The test penalty keeps code above the test that names it.
    assert_eq!(fns("test_host fails", &[])[0], "Request.host");
    assert_eq!(
        fns("test_host fails", &["--no-test-penalty"])[0],
        "test_host"
    );
    assert_eq!(
        files("test_host fails", &["--no-test-penalty"])[0],
        "tests/test_models.py"
    );
    // Neighbours: callers of normalize join it.
    let lower = "lower case comparison of strings";
    assert!(fns(lower, &[]).len() > 1);
    assert_eq!(fns(lower, &["--no-neighbours"]), ["normalize"]);
    // Class context lifts the class's own members over the test.
    assert_eq!(fns("Request host property", &[])[2], "Request.__init__");
    assert_eq!(
        fns("Request host property", &["--no-context"])[2],
        "test_host"
    );
    // Paths: the traceback's path words favour the package's own files
    // over docs/conf.py (which, as the documentation's code, comes last
    // with them).
    let trace = "Traceback (most recent call last):\n  File \"src/fixpkg/models.py\", line 24, in split_host\n    return self.url.split(\":\")\nValueError";
    let plain = ["--no-modules"];
    assert_eq!(files(trace, &[])[2], "src/fixpkg/util.py");
    assert_eq!(files(trace, &[]).last().unwrap(), "docs/conf.py");
    let pathless = files(trace, &["--no-paths"]);
    assert_eq!(
        pathless[3..],
        ["src/fixpkg/util.py", "docs/conf.py", "src/fixpkg/broken.py"]
    );
    // Modules: the test file's imports hold the traceback's
    // words outside any function.
    assert_eq!(files(trace, &[])[1], "tests/test_models.py");
    assert_eq!(files(trace, &plain)[1], "src/fixpkg/util.py");
    // Opt-in: directory strength lifts the test, alone in tests/, over
    // models.py, whose directory's other files match weakly; fusion
    // reorders.
    let host = "host wrong";
    let unpenalised = ["--no-test-penalty"];
    assert_eq!(files(host, &unpenalised)[0], "src/fixpkg/models.py");
    assert_eq!(
        files(host, &["--no-test-penalty", "--dirs"])[0],
        "tests/test_models.py"
    );
    let q = "Request host property";
    assert_eq!(fns(q, &[])[3], "test_host");
    assert_eq!(fns(q, &["--fusion"])[3], "Request.fallback");
}

/// A locale table or a constant is often what an issue is about, and no
/// function holds it: the text outside functions finds its file, and
/// updates keep it current.
#[test]
fn a_file_found_only_by_text_outside_functions_ranks_first() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path();
    let locale = |lang: &str, code: &str, day: &str| {
        format!("// {lang} [{code}]\nimport dayjs from 'dayjs'\n\nconst locale = {{\n  name: '{code}',\n  weekdays: '{day}'.split('_'),\n  ordinal: n => `${{n}}.`,\n}}\n\nexport default locale\n")
    };
    std::fs::create_dir_all(repo.join("src/locale")).unwrap();
    let write = |p: &str, text: &str| std::fs::write(repo.join(p), text).unwrap();
    write(
        "src/locale/hu.js",
        &locale("Hungarian", "hu", "vasárnap_hétfő"),
    );
    write(
        "src/locale/de.js",
        &locale("German", "de", "Sonntag_Montag"),
    );
    write(
        "src/format.js",
        "export function formatDay(d, table) {\n  return table.weekdays[d.getDay()]\n}\n",
    );
    git(repo, &["init", "-q"]);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "locales"]);
    ok(rpg(repo, &["init"]));
    let files = |q: &str| ranking(repo, q, &[]).1;
    let code = |q: &str, s: &[&str]| {
        let mut args = vec!["locate", q];
        args.extend_from_slice(s);
        rpg(repo, &args).status.code()
    };
    let issue = "The Hungarian translation is wrong";
    assert_eq!(files(issue)[0], "src/locale/hu.js");
    assert_eq!(code(issue, &["--no-modules", "--no-literal"]), Some(1));
    write(
        "src/locale/hu.js",
        &locale("Magyar", "hu", "vasárnap_hétfő"),
    );
    git(repo, &["commit", "-qam", "magyar"]);
    ok(rpg(repo, &["update"]));
    assert_eq!(code(issue, &[]), Some(1));
    assert_eq!(
        files("The Magyar translation is wrong")[0],
        "src/locale/hu.js"
    );
}

#[test]
fn a_node_frame_from_the_installed_package_names_its_source_function() {
    let d = fixture("js-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    // Published builds put `src/plugin/utc/index.js` at `plugin/utc.js`.
    // Without the frame, the method the title names would rank first.
    let issue = "`Dayjs.year` crashes\n\nTypeError: x is undefined\n    \
                 at Object.utc (/home/ci/app/node_modules/fix/plugin/utc.js:1:412)\n";
    let v = locate_json(&repo, issue);
    assert_eq!(
        v["functions"][0]["id"], "src/plugin/utc/index.js:dayjs.utc",
        "{v}"
    );
}

#[test]
fn an_inflection_the_code_never_spells_finds_the_word_it_does() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    // The code says `normalize`, never `normalizing`.
    let issue = "Normalizing fails on mixed-case strings";
    let v = locate_json(&repo, issue);
    assert_eq!(v["functions"][0]["id"], "src/fixpkg/util.py:normalize");
    let exact = rpg(&repo, &["locate", issue, "--json", "--no-variants"]);
    assert_eq!(exact.status.code(), Some(1), "{}", stdout(&exact));
}

#[test]
fn two_words_the_code_runs_together_find_the_name_that_does() {
    let d = tempfile::tempdir().unwrap();
    let repo = repo_of_files(
        &d,
        &[
            (
                "deploy/proxmoxve.sh",
                "proxmoxve_deploy() {\n  _proxmoxve_api=\"$1\"\n  _post \"$_proxmoxve_api\"\n}\n",
            ),
            (
                "deploy/other.sh",
                "other_deploy() {\n  # read the response\n  _post \"$url\"\n}\n",
            ),
            ("deploy/ssh.sh", "ssh_deploy() {\n  scp \"$1\" \"$2\"\n}\n"),
        ],
    );
    // The code writes `proxmoxve`; the issue, `Proxmox VE`.
    let issue = "Proxmox VE response is wrong";
    let v = locate_json(&repo, issue);
    assert_eq!(
        v["functions"][0]["id"], "deploy/proxmoxve.sh:proxmoxve_deploy",
        "{v}"
    );
    let apart = rpg(&repo, &["locate", issue, "--json", "--no-variants"]);
    let apart: serde_json::Value = serde_json::from_slice(&apart.stdout).unwrap();
    assert_eq!(
        apart["functions"][0]["id"], "deploy/other.sh:other_deploy",
        "{apart}"
    );
}

#[test]
fn a_cited_commit_points_at_the_functions_it_changed() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let sha = commit_normalize_change(&repo);
    commit_zebra(&repo);
    ok(rpg(&repo, &["init"]));

    let v = locate_json(&repo, &format!("Something broke after {}", &sha[..10]));
    assert_eq!(v["functions"][0]["id"], "src/fixpkg/util.py:normalize");
    assert_eq!(v["files"][0]["path"], "src/fixpkg/util.py");
    // A commit the repository does not hold is no evidence at all.
    let out = rpg(
        &repo,
        &["locate", "Something broke after 1a2b3c4d5e", "--json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
}

/// A small repository of `files`, committed and initialised.
fn repo_of_files(d: &tempfile::TempDir, files: &[(&str, &str)]) -> std::path::PathBuf {
    let repo = d.path().join("repo");
    for (p, text) in files {
        let p = repo.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "files"]);
    ok(rpg(&repo, &["init"]));
    repo
}

/// What the scaffold tells a reader to open next is the head of the
/// function ranking, in its order: the second-best function lives in the
/// second file, and is second, not after the first file's other anchor.
#[test]
fn candidate_targets_are_the_head_of_the_function_ranking() {
    let d = tempfile::tempdir().unwrap();
    let repo = repo_of_files(
        &d,
        &[
            (
                "cache.py",
                "def evict_cache_entries_by_policy(cache, policy):\n    \"\"\"Evict cache entries by the eviction policy.\"\"\"\n    return policy.evict(cache)\n\n\ndef cache_size(cache):\n    \"\"\"The size of a cache.\"\"\"\n    return len(cache)\n",
            ),
            (
                "policy.py",
                "def eviction_policy(name):\n    \"\"\"The eviction policy called name.\"\"\"\n    return name\n",
            ),
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&ok(rpg(
        &repo,
        &["locate", "cache eviction policy", "--json", "--top-k", "20"],
    )))
    .unwrap();
    let functions: Vec<&str> = v["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        functions,
        [
            "cache.py:evict_cache_entries_by_policy",
            "policy.py:eviction_policy",
            "cache.py:cache_size"
        ]
    );
    assert_eq!(
        v["scaffold"]["candidate_targets"],
        serde_json::json!(functions)
    );
    let text = ok(rpg(&repo, &["locate", "cache eviction policy"]));
    assert!(
        text.contains("[CANDIDATE_TARGETS]\n  cache.py:evict_cache_entries_by_policy\n  policy.py:eviction_policy\n  cache.py:cache_size\n"),
        "{text}"
    );
}

/// Under each anchor, the lines of it that hold most of the issue's
/// words, numbered as in the file, so siblings can be told apart without
/// opening them; in JSON too.
#[test]
fn each_anchor_shows_its_lines_that_hold_the_issue_words() {
    let d = tempfile::tempdir().unwrap();
    let body = "def render(page, theme):\n    \"\"\"Render a page.\"\"\"\n    width = page.width\n    height = page.height\n    colour = theme.background_colour(page)\n    return draw(width, height, colour)\n";
    let repo = repo_of_files(&d, &[("render.py", body)]);
    let q = "wrong background colour of the rendered page";
    let text = ok(rpg(&repo, &["locate", q]));
    assert!(
        text.contains("      render  function L1-6\n            1| def render(page, theme):\n            2| \"\"\"Render a page.\"\"\"\n            5| colour = theme.background_colour(page)\n"),
        "{text}"
    );
    let v = locate_json(&repo, q);
    let lines = &v["scaffold"]["dirs"][0]["files"][0]["anchors"][0]["lines"];
    assert_eq!(lines[2]["n"], 5);
    assert_eq!(lines[2]["text"], "colour = theme.background_colour(page)");
    let md = ok(rpg(&repo, &["locate", q, "--format", "markdown"]));
    assert!(
        md.contains("      - L5: `colour = theme.background_colour(page)`\n"),
        "{md}"
    );
}

/// A file's third matching function is a candidate target but not an
/// anchor: the targets list shows its lines that hold the issue's words
/// beneath it, so the five can be told apart where they are listed.
#[test]
fn a_candidate_target_beyond_the_anchors_shows_its_lines_too() {
    let d = tempfile::tempdir().unwrap();
    let body = "def paint_background(page):\n    colour = page.background_colour\n    return fill(page, colour)\n\n\ndef paint_border(page):\n    colour = page.border_colour\n    return stroke(page, colour)\n\n\ndef paint_title(page):\n    width = page.width\n    colour = page.title_colour\n    return write(page.title, width, colour)\n";
    let repo = repo_of_files(&d, &[("paint.py", body)]);
    let q = "wrong paint colour for the page title";
    let text = ok(rpg(&repo, &["locate", q]));
    assert!(
        text.contains(
            "      paint_background  function L1-3\n            1| def paint_background(page):\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("[CANDIDATE_TARGETS]\n  paint.py:paint_title\n  paint.py:paint_background\n  paint.py:paint_border\n        6| def paint_border(page):\n        7| colour = page.border_colour\n        8| return stroke(page, colour)\nnext: rpg fetch paint.py:paint_title\n"),
        "{text}"
    );
    let v = locate_json(&repo, q);
    let lines = &v["scaffold"]["target_lines"];
    assert_eq!(lines["paint.py:paint_border"][1]["n"], 7, "{v}");
    assert_eq!(
        lines["paint.py:paint_border"][1]["text"],
        "colour = page.border_colour"
    );
    assert!(lines.get("paint.py:paint_title").is_none(), "{v}");
    let md = ok(rpg(&repo, &["locate", q, "--format", "markdown"]));
    assert!(
        md.contains("- `paint.py:paint_border`\n  - L6: `def paint_border(page):`\n"),
        "{md}"
    );
}

/// When no indexed word matches, `locate` searches the indexed sources for
/// the issue's text as written, and says so: the index drops `import` as
/// noise and `@` as punctuation, yet a file that handles `@import` is
/// what the issue is about. Text no source holds is still "nothing".
#[test]
fn when_no_indexed_word_matches_the_text_as_written_is_searched() {
    let d = tempfile::tempdir().unwrap();
    let sheet = "export function loadSheet(text) {\n  const rules = []\n  for (const line of text.split('\\n')) {\n    if (line.startsWith('@import')) {\n      rules.push(fetchSheet(line.slice(8)))\n    }\n  }\n  return rules\n}\n\nexport function fetchSheet(url) {\n  return fetch(url)\n}\n";
    let paint = "export function paint(el) {\n  el.style.color = 'red'\n}\n";
    let repo = repo_of_files(&d, &[("src/sheet.js", sheet), ("src/paint.js", paint)]);
    let issue = "tab hangs on circular @import";
    let text = ok(rpg(&repo, &["locate", issue]));
    assert!(
        text.starts_with("[LITERAL] no indexed word matches; these files hold the text as written: @import\n[DIR] src/  (1 matching symbols)\n  [FILE] src/sheet.js  (#1,"),
        "{text}"
    );
    assert!(
        text.contains("      loadSheet  function L1-9\n        invokes: fetchSheet\n            4| if (line.startsWith('@import')) {\n"),
        "{text}"
    );
    assert!(
        text.contains("next: rpg fetch src/sheet.js:loadSheet\n"),
        "{text}"
    );
    let v = locate_json(&repo, issue);
    assert_eq!(v["files"][0]["path"], "src/sheet.js");
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    assert_eq!(v["functions"][0]["id"], "src/sheet.js:loadSheet");
    assert_eq!(v["scaffold"]["literals"], serde_json::json!(["@import"]));
    // Plain words the index cannot use are searched when nothing else is.
    let v = locate_json(&repo, "circular import");
    assert_eq!(v["files"][0]["path"], "src/sheet.js");
    // A match the index makes needs no literal search.
    let v = locate_json(&repo, "paint the element red");
    assert!(v["scaffold"].get("literals").is_none());
    let o = rpg(&repo, &["locate", "hangs on @font-face"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

/// An example that drives the product with the issue's very words still
/// ranks below the product code they describe: fixes land in examples
/// as rarely as in tests, and both are weighed down alike.
#[test]
fn examples_and_benchmarks_weigh_like_tests() {
    let d = tempfile::tempdir().unwrap();
    let repo = repo_of_files(
        &d,
        &[
            (
                "src/parser.py",
                "def parse_flag(argv):\n    \"\"\"Read one flag.\"\"\"\n    return argv[0]\n",
            ),
            (
                "examples/flags.py",
                "def main():\n    \"\"\"Parse a flag from argv and print the flag value.\"\"\"\n    flag = parse_flag(argv)\n    print(flag, value)\n",
            ),
            (
                "benches/flags.py",
                "def bench_parse_flag_value(argv):\n    \"\"\"Parse the flag value from argv, many times.\"\"\"\n    return parse_flag(argv)\n",
            ),
        ],
    );
    let (functions, files) = ranking(&repo, "parse flag value from argv", &[]);
    assert_eq!(functions[0], "parse_flag", "{functions:?}");
    assert_eq!(files[0], "src/parser.py", "{files:?}");
    let (unweighed, _) = ranking(&repo, "parse flag value from argv", &["--no-test-penalty"]);
    assert_ne!(unweighed[0], "parse_flag", "{unweighed:?}");
}

/// Twins that match alike, one ten times the other's length: the longer
/// is the likelier home of a fix and ranks first, bar in Python, whose
/// functions go without the length prior (it lost on Python's left-out
/// dev repositories and on unseen Python issues).
#[test]
fn the_length_prior_favours_long_functions_but_pythons() {
    let d = tempfile::tempdir().unwrap();
    let steps = |fmt: &dyn Fn(usize) -> String| (0..30).map(fmt).collect::<Vec<_>>().join("\n");
    let long_rs = format!(
        "/// Merge the config layers.\npub fn merge_layers(a: u8) -> u8 {{\n{}\n    a\n}}\n",
        steps(&|i| format!("    let step_{i} = {i} + {i};"))
    );
    let long_py = format!(
        "def merge_layers(a):\n    \"\"\"Merge the config layers.\"\"\"\n{}\n    return a\n",
        steps(&|i| format!("    step_{i} = {i} + {i}"))
    );
    let repo = repo_of_files(
        &d,
        &[
            (
                "src/short.rs",
                "/// Merge the config layers.\npub fn merge_layers(a: u8) -> u8 {\n    a\n}\n",
            ),
            ("src/long.rs", &long_rs),
            (
                "src/short.py",
                "def merge_layers(a):\n    \"\"\"Merge the config layers.\"\"\"\n    return a\n",
            ),
            ("src/long.py", &long_py),
        ],
    );
    let order = |switch: &[&str]| {
        let mut args = vec!["locate", "merge config layers", "--json"];
        args.extend_from_slice(switch);
        let v: serde_json::Value = serde_json::from_str(&ok(rpg(&repo, &args))).unwrap();
        let ids: Vec<String> = v["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect();
        let at = |p: &str| ids.iter().position(|x| x == p).unwrap();
        (
            at("src/long.rs") < at("src/short.rs"),
            at("src/long.py") < at("src/short.py"),
        )
    };
    assert_eq!(
        order(&[]),
        (true, false),
        "Rust long first, Python short first"
    );
    assert_eq!(order(&["--no-size"]), (false, false));
}

/// Of two functions the issue's words match alike, the one the newest
/// commits changed ranks first.
#[test]
fn a_function_changed_lately_ranks_above_its_twin() {
    let d = tempfile::tempdir().unwrap();
    let twin = |name: &str, note: &str| {
        format!("def {name}(config):\n    # {note}\n    return parse_value(config)\n")
    };
    let repo = repo_of_files(
        &d,
        &[
            ("a.py", &twin("read_alpha", "one")),
            ("b.py", &twin("read_beta", "one")),
        ],
    );
    std::fs::write(repo.join("b.py"), twin("read_beta", "two")).unwrap();
    git(&repo, &["commit", "-qam", "tweak beta"]);
    ok(rpg(&repo, &["update"]));

    let issue = "parse_value of the config is wrong";
    let fns = |switch: &[&str]| ranking(&repo, issue, switch).0;
    assert_eq!(fns(&[])[..2], ["read_beta", "read_alpha"]);
    assert_eq!(fns(&["--no-recent"])[..2], ["read_alpha", "read_beta"]);
}

/// A generated concatenation of the sources (an amalgamation, a built
/// plugin file) holds every function twice. The ranking lists each
/// function once, as the copy in the smaller file, which a fix edits, and
/// names the other copies, in JSON and beside the candidate targets a
/// reader opens next; a function that only shares a name is its own.
#[test]
fn a_function_and_its_copy_in_a_built_file_are_listed_once() {
    let d = tempfile::tempdir().unwrap();
    let strip = "def strip_stripes(zebra):\n    return [s for s in zebra.stripes if s]\n";
    let count = "def count_stripes(zebra):\n    return len(zebra.stripes)\n";
    let other = "def paint(zebra):\n    return zebra\n";
    let bundle = format!("{strip}\n{count}\n{other}");
    let lookalike = "def strip_stripes(zebra):\n    return zebra.stripes[1:]\n";
    let repo = repo_of_files(
        &d,
        &[
            ("src/stripes.py", &format!("{strip}\n{count}")),
            ("dist/bundle.py", &bundle),
            ("legacy/zebra.py", lookalike),
        ],
    );
    let v = locate_json(&repo, "strip_stripes drops the zebra stripes");
    let fns = v["functions"].as_array().unwrap();
    let ids: Vec<&str> = fns.iter().map(|f| f["id"].as_str().unwrap()).collect();
    let at = |id: &str| ids.iter().position(|x| *x == id);
    let source = at("src/stripes.py:strip_stripes").expect("the source copy is listed");
    assert_eq!(
        fns[source]["copies"],
        serde_json::json!(["dist/bundle.py:strip_stripes"])
    );
    assert_eq!(at("dist/bundle.py:strip_stripes"), None, "{ids:?}");
    assert!(at("legacy/zebra.py:strip_stripes").is_some(), "{ids:?}");
    assert!(at("src/stripes.py:count_stripes").is_some(), "{ids:?}");
    assert_eq!(at("dist/bundle.py:count_stripes"), None, "{ids:?}");
    assert_eq!(
        v["scaffold"]["target_copies"]["src/stripes.py:strip_stripes"],
        serde_json::json!(["dist/bundle.py:strip_stripes"])
    );

    let text = ok(rpg(
        &repo,
        &["locate", "strip_stripes drops the zebra stripes"],
    ));
    let targets = text
        .split("[CANDIDATE_TARGETS]")
        .nth(1)
        .expect("targets listed");
    assert!(
        targets.contains("src/stripes.py:strip_stripes  (copies: dist/bundle.py:strip_stripes)"),
        "{text}"
    );
    assert!(
        !targets.contains("legacy/zebra.py:strip_stripes  (copies"),
        "{text}"
    );
    let markdown = ok(rpg(
        &repo,
        &[
            "locate",
            "--format",
            "markdown",
            "strip_stripes drops the zebra stripes",
        ],
    ));
    assert!(
        markdown
            .contains("`src/stripes.py:strip_stripes` (copies: `dist/bundle.py:strip_stripes`)"),
        "{markdown}"
    );
}

/// An interface's documented declarations match an issue's words best,
/// but a fix lands where they are implemented: a file of declarations
/// alone ranks below the file that implements them.
#[test]
fn a_file_of_declarations_ranks_below_the_file_that_implements_them() {
    let first_two = |files: &[(&str, &str)], issue: &str| {
        let d = tempfile::tempdir().unwrap();
        let files = ranking(&repo_of_files(&d, files), issue, &[]).1;
        files[..2].to_vec()
    };
    let csharp = [
        (
            "src/IShapeStore.cs",
            "namespace Shapes\n{\n    /// <summary>Saves a shape to the store, replacing a saved shape of the same name.</summary>\n    public interface IShapeStore\n    {\n        /// <summary>Save the shape, replacing the saved shape of the same name.</summary>\n        void Save(Shape shape, bool replace = true);\n        /// <summary>The saved shape of this name.</summary>\n        Shape Load(string name);\n        int Count { get; }\n    }\n}\n",
        ),
        (
            "src/ShapeStore.cs",
            "namespace Shapes\n{\n    public class ShapeStore : IShapeStore\n    {\n        private readonly Dictionary<string, Shape> _saved = new();\n        public void Save(Shape shape, bool replace = true)\n        {\n            if (replace || !_saved.ContainsKey(shape.Name))\n                _saved[shape.Name] = shape;\n        }\n        public Shape Load(string name)\n        {\n            return _saved[name];\n        }\n        public int Count => _saved.Count;\n    }\n}\n",
        ),
    ];
    assert_eq!(
        first_two(&csharp, "saving a shape does not replace the saved shape"),
        ["src/ShapeStore.cs", "src/IShapeStore.cs"]
    );
    // One declaration is enough: a callback's interface.
    let kotlin = [
        (
            "src/ScopeCallback.kt",
            "package scope\n\n/** Called when a scope closes, before its instances are dropped. */\ninterface ScopeCallback {\n    /** The scope closes: drop what it holds. */\n    fun onScopeClose(scope: Scope)\n}\n",
        ),
        (
            "src/ScopeRegistry.kt",
            "package scope\n\nclass ScopeRegistry {\n    private val scopes = mutableMapOf<String, Scope>()\n    fun close(scope: Scope) {\n        scopes.remove(scope.id)\n        scope.callbacks.forEach { it.onScopeClose(scope) }\n    }\n}\n",
        ),
    ];
    assert_eq!(
        first_two(&kotlin, "closing a scope does not drop its instances"),
        ["src/ScopeRegistry.kt", "src/ScopeCallback.kt"]
    );
}

/// A short message's words are often spread over a file's functions, one
/// each, while another file holds a few of them in one function: the file
/// that holds them all ranks first, as one document.
#[test]
fn a_file_holding_the_issue_words_across_its_functions_ranks_first() {
    let d = tempfile::tempdir().unwrap();
    let repo = repo_of_files(
        &d,
        &[
            (
                "src/retry.py",
                "import random\nimport time\n\n\ndef next_delay(attempt):\n    backoff = 2 ** attempt\n    return backoff\n\n\ndef add_jitter(delay):\n    jitter = random.random()\n    return delay + jitter\n\n\ndef within_deadline(start, deadline):\n    return time.time() - start < deadline\n\n\ndef spend(budget, cost):\n    return budget - cost\n",
            ),
            (
                "src/client.py",
                "def send(request, deadline):\n    budget = deadline - request.started\n    if budget <= 0:\n        raise TimeoutError(deadline)\n    return request.transport(budget)\n",
            ),
        ],
    );
    let issue = "Retries ignore the deadline when backoff jitter exceeds the budget";
    assert_eq!(ranking(&repo, issue, &[]).1[0], "src/retry.py");
    let apart = ranking(&repo, issue, &["--no-whole-file"]).1;
    assert_eq!(apart[0], "src/client.py");
}
