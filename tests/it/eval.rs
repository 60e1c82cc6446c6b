//! `rpg eval` on a tiny hand-made case file whose answers are known.

use crate::common::{commit_zebra, fixture, git, ok, repo_of, rpg, stderr};
use serde_json::{json, Value};

/// `rpg eval --cases FILE --repo REPO [EXTRA…]`, run from the fixture's
/// directory.
fn eval(
    d: &tempfile::TempDir,
    cases: &std::path::Path,
    repo: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "eval",
        "--cases",
        cases.to_str().unwrap(),
        "--repo",
        repo.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    rpg(d.path(), &args)
}

#[test]
fn eval_replays_history_and_computes_known_metrics() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let first = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    let second = commit_zebra(&repo);
    // Listed newest first: eval sorts by commit date, indexes the older
    // commit and evolves to the newer one.
    let cases = [
        json!({"id": "b", "repo": "fix/py", "base_commit": second,
               "query": "zebra stripes are miscounted",
               "gold_files": ["src/fixpkg/zebra.py", "src/fixpkg/never.py"],
               "gold_functions": ["src/fixpkg/zebra.py:stripe_count"]}),
        json!({"id": "a", "repo": "fix/py", "base_commit": first,
               "query": "Request.split_host breaks on IPv6 hosts",
               "gold_files": ["src/fixpkg/models.py"],
               "gold_functions": ["src/fixpkg/models.py:Request.split_host"]}),
    ];
    let file = d.path().join("cases.jsonl");
    std::fs::write(
        &file,
        cases.iter().map(|c| format!("{c}\n")).collect::<String>(),
    )
    .unwrap();
    let out = ok(eval(&d, &file, &repo, &["--json"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    let full = &v["variants"][0];
    assert_eq!(full["name"], "full");
    let f = &full["file"]["all"];
    assert_eq!(f["n"], 2);
    // Both cases rank a gold file first; only case a has all its gold.
    assert_eq!(f["hit"], json!([1.0, 1.0, 1.0, 1.0]));
    assert_eq!(f["acc"], json!([0.5, 0.5, 0.5, 0.5]));
    assert_eq!(f["recall"], json!([0.75, 0.75, 0.75, 0.75]));
    assert_eq!(f["mrr"], 1.0);
    assert_eq!(full["function"]["all"]["hit"][0], 1.0);
    assert_eq!(full["function"]["fix/py"]["n"], 2);
    assert!(full["latency_ms"]["p50"].as_f64().unwrap() > 0.0);
    // The clone was only read.
    assert!(!repo.join(".rpg").exists());

    let text = ok(eval(&d, &file, d.path(), &["--ablate"]));
    assert!(text.starts_with("2 cases\n\nfile level\n"), "{text}");
    for variant in [
        "bm25 only",
        "without names",
        "without frames",
        "without context",
        "without neighbours",
        "without test penalty",
        "without paths",
        "with directories",
        "with fusion",
    ] {
        assert!(text.contains(&format!("  {variant} ")), "{variant}: {text}");
    }
}

#[test]
fn eval_rejects_bad_case_files_with_the_line() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let file = d.path().join("cases.jsonl");
    std::fs::write(&file, "{\"id\": \"x\"}\n").unwrap();
    let o = eval(&d, &file, &repo, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cases.jsonl, line 1: missing field"),
        "{}",
        stderr(&o)
    );
    std::fs::write(
        &file,
        format!("{}\n", json!({"id": "x", "repo": "r", "base_commit": "0123456789012345678901234567890123456789", "query": "q"})),
    )
    .unwrap();
    let o = eval(&d, &file, &repo, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "no repository given holds commit 0123456789012345678901234567890123456789 of case x"
        ),
        "{}",
        stderr(&o)
    );
}

/// Three cases on one clone, filed under two repositories so that each
/// can be left out. Case c's words point at the zebra; only its stack
/// frame names the gold, so the frames component decides it.
fn two_repo_cases(d: &tempfile::TempDir, repo: &std::path::Path) -> std::path::PathBuf {
    let first = git(repo, &["rev-parse", "HEAD"]).trim().to_string();
    let second = commit_zebra(repo);
    let cases = [
        json!({"id": "a", "repo": "fix/one", "base_commit": first,
               "query": "Request.split_host breaks on IPv6 hosts",
               "gold_files": ["src/fixpkg/models.py"],
               "gold_functions": ["src/fixpkg/models.py:Request.split_host"]}),
        json!({"id": "b", "repo": "fix/two", "base_commit": second,
               "query": "zebra stripes are miscounted",
               "gold_files": ["src/fixpkg/zebra.py"],
               "gold_functions": ["src/fixpkg/zebra.py:stripe_count"]}),
        json!({"id": "c", "repo": "fix/two", "base_commit": second,
               "query": "zebra stripes are miscounted\n\nTraceback (most recent call last):\n  File \"src/fixpkg/util.py\", line 8, in normalize\nValueError: bad stripes",
               "gold_files": ["src/fixpkg/util.py"],
               "gold_functions": ["src/fixpkg/util.py:normalize"]}),
    ];
    let file = d.path().join("cases.jsonl");
    let text: String = cases.iter().map(|c| format!("{c}\n")).collect();
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn eval_cv_scores_each_repository_under_weights_fitted_without_it() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let cases = two_repo_cases(&d, &repo);
    let v: Value =
        serde_json::from_str(&ok(eval(&d, &cases, &repo, &["--cv", "repo", "--json"]))).unwrap();
    assert_eq!(v["cases"], 3);
    let folds = v["folds"].as_array().unwrap();
    let held: Vec<&str> = folds.iter().map(|f| f["repo"].as_str().unwrap()).collect();
    assert_eq!(held, ["fix/one", "fix/two"]);
    assert_eq!(v["cross_validated"]["file"]["all"]["n"], 3);
    assert_eq!(v["cross_validated"]["function"]["fix/one"]["n"], 1);
    // The case file is the set: its stem names the per-set rows.
    assert_eq!(v["cross_validated_by_set"]["function"]["cases"]["n"], 3);
    assert!(v["shipped_by_set"]["file"]["cases"]["acc"].is_array());
    let text = ok(eval(&d, &cases, &repo, &["--cv", "repo"]));
    assert!(text.contains("left out"), "{text}");
    assert!(text.contains("fix/two"), "{text}");
    assert!(text.contains("per case set (95% CI)"), "{text}");
    for level in ["file", "function"] {
        let row = format!("  cases                     3  {level:<8}  left out   ");
        assert!(text.contains(&row), "{row:?} in {text}");
    }

    // With --ablate: one line per component the evidence can score.
    let text = ok(eval(&d, &cases, &repo, &["--cv", "repo", "--ablate"]));
    assert!(text.contains("gain left out"), "{text}");
    for variant in ["full", "bm25 only", "without names", "with directories"] {
        assert!(text.contains(&format!("  {variant} ")), "{variant}: {text}");
    }
    assert!(!text.contains("with fusion"), "{text}");
}

#[test]
fn eval_fit_writes_weights_that_eval_weights_reads_back() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let cases = two_repo_cases(&d, &repo);
    let out = d.path().join("w.json");
    ok(eval(&d, &cases, &repo, &["--fit", out.to_str().unwrap()]));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        file["made_by"]
            .as_str()
            .unwrap()
            .starts_with("rpg eval --cases"),
        "{file}"
    );
    assert!(file["weights"]["alpha"].is_number(), "{file}");
    let scored = ok(eval(
        &d,
        &cases,
        &repo,
        &["--weights", out.to_str().unwrap(), "--json"],
    ));
    let v: Value = serde_json::from_str(&scored).unwrap();
    assert_eq!(v["variants"][0]["file"]["all"]["n"], 3);
}

/// Case `id`'s function MRR under variant `name` of a `--json` report.
fn case_mrr(v: &Value, name: &str, id: &str) -> f64 {
    let variant = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == name)
        .unwrap_or_else(|| panic!("no variant {name}"));
    let case = variant["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap();
    case["function"]["mrr"].as_f64().unwrap()
}

/// The shipped weights, with some set otherwise, written to `name`.
fn weights_with(d: &tempfile::TempDir, name: &str, set: &[(&str, f64)]) -> std::path::PathBuf {
    let mut w: Value = serde_json::from_str(include_str!("../../src/search/weights.json")).unwrap();
    for (k, x) in set {
        w["weights"][*k] = json!(x);
    }
    let path = d.path().join(name);
    std::fs::write(&path, w.to_string()).unwrap();
    path
}

#[test]
fn ablation_measures_what_each_component_is_worth() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let cases = two_repo_cases(&d, &repo);
    let v: Value =
        serde_json::from_str(&ok(eval(&d, &cases, &repo, &["--ablate", "--json"]))).unwrap();
    assert_eq!(case_mrr(&v, "full", "c"), 1.0);
    assert!(case_mrr(&v, "without frames", "c") < 1.0, "{v}");
    assert!(case_mrr(&v, "bm25 only", "c") < 1.0, "{v}");
    assert_eq!(
        case_mrr(&v, "without frames", "b"),
        1.0,
        "frames are not all"
    );
}

#[test]
fn weights_given_are_the_weights_ranked_with_and_fit_moves_the_ones_tuned() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let cases = two_repo_cases(&d, &repo);
    // Too weak a frame weight for case c; and the zebra commit's change
    // held out of it, which would take a larger step of the fit to beat.
    let frameless = weights_with(
        &d,
        "frameless.json",
        &[
            ("frame_function", 0.2),
            ("frame_file", 0.0),
            ("recent", 0.0),
        ],
    );
    let v: Value = serde_json::from_str(&ok(eval(
        &d,
        &cases,
        &repo,
        &["--weights", frameless.to_str().unwrap(), "--json"],
    )))
    .unwrap();
    assert!(
        case_mrr(&v, "full", "c") < 1.0,
        "the frames still counted: {v}"
    );
    // Fitting frame_function from there raises it until the frame counts.
    let out = d.path().join("fitted.json");
    let args = [
        "--weights",
        frameless.to_str().unwrap(),
        "--fit",
        out.to_str().unwrap(),
        "--tune",
        "frame_function",
    ];
    ok(eval(&d, &cases, &repo, &args));
    let fitted: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        fitted["weights"]["frame_function"].as_f64().unwrap() > 0.2,
        "{fitted}"
    );
    assert_eq!(
        fitted["weights"]["frame_file"], 0.0,
        "an untuned weight moved"
    );
    let v: Value = serde_json::from_str(&ok(eval(
        &d,
        &cases,
        &repo,
        &["--weights", out.to_str().unwrap(), "--json"],
    )))
    .unwrap();
    assert_eq!(case_mrr(&v, "full", "c"), 1.0, "{v}");
}

#[test]
fn eval_fit_with_tune_writes_the_shipped_weights_but_those_it_names() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let cases = two_repo_cases(&d, &repo);
    let out = d.path().join("w.json");
    let args = [
        "--fit",
        out.to_str().unwrap(),
        "--tune",
        "name",
        "--tune",
        "size",
    ];
    ok(eval(&d, &cases, &repo, &args));
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let shipped: Value =
        serde_json::from_str(include_str!("../../src/search/weights.json")).unwrap();
    for (k, v) in file["weights"].as_object().unwrap() {
        if k != "name" && k != "size" {
            assert_eq!(shipped["weights"][k.as_str()], *v, "{k}");
        }
    }
}

#[test]
fn eval_refuses_an_unknown_weight_to_tune_and_tune_without_a_fit() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let cases = two_repo_cases(&d, &repo);
    let o = eval(&d, &cases, &repo, &["--cv", "repo", "--tune", "nmae"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a weight; the weights are name,"),
        "{}",
        stderr(&o)
    );
    let o = eval(&d, &cases, &repo, &["--tune", "name"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--tune chooses what --cv or --fit fits"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn eval_refuses_bad_weights_and_cv_over_one_repository() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let cases = two_repo_cases(&d, &repo);
    let bad = d.path().join("bad.json");
    let shipped = include_str!("../../src/search/weights.json");
    std::fs::write(&bad, shipped.replace("\"alpha\": 0.", "\"alpha\": 7.")).unwrap();
    let o = eval(&d, &cases, &repo, &["--weights", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("bad.json is not a weights file"), "{err}");
    assert!(err.contains("weight alpha is 7"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let one = d.path().join("one.jsonl");
    let first = std::fs::read_to_string(&cases).unwrap();
    std::fs::write(&one, first.lines().next().unwrap()).unwrap();
    let o = eval(&d, &one, &repo, &["--cv", "repo"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("at least two repositories"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_case_that_cannot_be_run_is_counted_said_and_passed() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let first = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    // The second commit's new directory tree is lost (a broken mirror).
    std::fs::create_dir_all(repo.join("src/lost")).unwrap();
    std::fs::write(repo.join("src/lost/gone.py"), "def gone():\n    return 1\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "lost"]);
    let broken = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    let tree = git(&repo, &["rev-parse", "HEAD:src/lost"])
        .trim()
        .to_string();
    git(&repo, &["rm", "-rq", "src/lost"]);
    git(&repo, &["commit", "-qm", "gone again"]);
    let third = commit_zebra(&repo);
    std::fs::remove_file(repo.join(".git/objects").join(&tree[..2]).join(&tree[2..])).unwrap();
    let case = |id: &str, commit: &str| {
        json!({"id": id, "repo": "fix/py", "base_commit": commit,
               "query": "zebra stripes are miscounted",
               "gold_files": ["src/fixpkg/zebra.py"], "gold_functions": []})
    };
    let file = d.path().join("cases.jsonl");
    let lines = [case("a", &first), case("b", &broken), case("c", &third)];
    std::fs::write(
        &file,
        lines.iter().map(|c| format!("{c}\n")).collect::<String>(),
    )
    .unwrap();
    let o = eval(&d, &file, &repo, &["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&crate::common::stdout(&o)).unwrap();
    assert_eq!(v["errors"][0]["id"], "b", "{v}");
    assert!(!v["errors"][0]["why"].as_str().unwrap().is_empty());
    assert_eq!(
        v["variants"][0]["file"]["all"]["n"], 2,
        "a and c were scored"
    );
    let o = eval(&d, &file, &repo, &[]);
    assert!(
        crate::common::stdout(&o).contains("1 could not be run"),
        "{}",
        crate::common::stdout(&o)
    );
}
