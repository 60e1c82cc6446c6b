//! The agent tools — search, fetch, explore, symbols — on the fixtures, and
//! how they treat hostile ids and paths.

use crate::common::{fixture, git, ok, repo_of, rpg, stderr, stdout};
use serde_json::Value;

fn json(repo: &std::path::Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    serde_json::from_str(&ok(rpg(repo, &a))).unwrap()
}

fn ids(v: &Value, list: &str) -> Vec<String> {
    v[list]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn search_finds_entities_by_features_or_code_and_honours_scope() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let v = json(&repo, &["search", "normalize a string for comparison"]);
    assert_eq!(ids(&v, "results")[0], "src/fixpkg/util.py:normalize");
    let r = &v["results"][0];
    assert_eq!(r["kind"], "function");
    assert_eq!(r["start_line"], 6);
    assert!(r["features"]
        .as_array()
        .unwrap()
        .contains(&Value::from("normalize string for comparison")));
    assert!(!r["leaf"].as_str().unwrap().is_empty());
    // Features mode sees names and features, not bodies: `lower` appears
    // only in the body of normalize.
    let body = json(&repo, &["search", "lower", "--mode", "snippets"]);
    assert_eq!(ids(&body, "results")[0], "src/fixpkg/util.py:normalize");
    let o = rpg(&repo, &["search", "lower", "--mode", "features"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    // A directory scope keeps only what lies under it.
    let all = json(&repo, &["search", "parse header"]);
    assert!(ids(&all, "results")
        .iter()
        .any(|id| !id.starts_with("src/fixpkg/models.py")));
    let v = json(
        &repo,
        &["search", "parse header", "--scope", "src/fixpkg/models.py"],
    );
    let scoped = ids(&v, "results");
    assert!(!scoped.is_empty());
    assert!(
        scoped
            .iter()
            .all(|id| id.starts_with("src/fixpkg/models.py:")),
        "{scoped:?}"
    );
    // A hierarchy scope keeps only that subtree.
    let leaf = r["leaf"].as_str().unwrap().to_string();
    let v = json(&repo, &["search", "normalize", "--scope", &leaf]);
    for x in v["results"].as_array().unwrap() {
        assert_eq!(x["leaf"], leaf.as_str());
    }
    let o = rpg(&repo, &["search", "x", "--scope", "no/such/place"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no hierarchy path or directory"));
}

#[test]
fn fetch_shows_metadata_features_hierarchy_and_numbered_source() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let text = ok(rpg(&repo, &["fetch", "src/fixpkg/util.py:normalize"]));
    assert!(text.starts_with("[FUNCTION] src/fixpkg/util.py:normalize  L6-8\nsignature: def normalize(s):\ndoc: Normalize a string for comparison.\nfeatures: normalize; normalize string for comparison\nhierarchy: "), "{text}");
    assert!(text.ends_with("source:\n6  def normalize(s):\n7      \"\"\"Normalize a string for comparison.\"\"\"\n8      return s.lower()\n"), "{text}");
    let v = json(&repo, &["fetch", "src/fixpkg/util.py:normalize"]);
    assert_eq!(v["entity"]["hierarchy"].as_array().unwrap().len(), 3);
    assert_eq!(
        v["source"][0],
        serde_json::json!({"n": 6, "text": "def normalize(s):"})
    );
    assert_eq!(v["skeleton"], false);
    // A whole file, and a hierarchy path with its members.
    let f = json(&repo, &["fetch", "src/fixpkg/util.py"]);
    assert_eq!(f["entity"]["kind"], "file");
    assert_eq!(f["source"].as_array().unwrap().len(), 8);
    let leaf = v["entity"]["hierarchy"][2].as_str().unwrap().to_string();
    let c = json(&repo, &["fetch", &leaf]);
    assert!(c["category"]["members"]
        .as_array()
        .unwrap()
        .contains(&Value::from("src/fixpkg/util.py:normalize")));
}

#[test]
fn fetch_shows_a_c_or_cpp_definition_with_its_declaration_in_an_included_header() {
    let d = fixture("c-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let text = ok(rpg(&repo, &["fetch", "src/jv.c:jv_free"]));
    assert!(
        text.ends_with("13  }\ndeclared: src/jv.h  L9-9\n9  void jv_free(int v);\n"),
        "{text}"
    );
    // Through an include directory, and through a header's own include.
    let v = json(&repo, &["fetch", "lib/util/src/str.c:util_len"]);
    assert_eq!(v["declared"]["path"], "lib/util/include/util/str.h");
    assert_eq!(v["declared"]["start_line"], 2);
    let v = json(&repo, &["fetch", "src/kind.c:kind_of"]);
    assert_eq!(v["declared"]["path"], "src/jv.h");
    assert_eq!(
        v["declared"]["source"][0],
        serde_json::json!({"n": 17, "text": "int kind_of(int v);"})
    );
    // A definition no header declares has no declaration.
    let v = json(&repo, &["fetch", "src/jv.h:jv_is_valid"]);
    assert!(v.get("declared").is_none(), "{v}");

    let d = fixture("cpp-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    // Out of line, the declaration is the one in its class.
    let v = json(
        &repo,
        &["fetch", "include/fmt/format.h:basic_writer::write"],
    );
    assert_eq!(v["declared"]["path"], "include/fmt/core.h");
    assert_eq!(v["declared"]["source"][0]["text"], "  void write(T value);");
    let v = json(
        &repo,
        &["fetch", "include/fmt/format.h:detail::buffer::reserve"],
    );
    assert_eq!(v["declared"]["start_line"], 9);
}

#[test]
fn fetch_turns_a_very_large_body_into_a_skeleton() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let mut src = String::from("def huge(x):\n");
    for i in 0..400 {
        src.push_str(&format!("    x = x + {i}\n"));
        if i == 200 {
            src.push_str("    def inner(y):\n        return y\n");
        }
    }
    src.push_str("    return x\n");
    std::fs::write(repo.join("src/fixpkg/huge.py"), src).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "huge"]);
    ok(rpg(&repo, &["init"]));
    let v = json(&repo, &["fetch", "src/fixpkg/huge.py:huge"]);
    assert_eq!(v["skeleton"], true);
    let lines = v["source"].as_array().unwrap();
    assert!(lines.len() < 40, "{}", lines.len());
    assert!(lines.iter().any(|l| l["text"] == "    def inner(y):"));
    assert!(lines
        .iter()
        .any(|l| l["n"] == 0 && l["text"].as_str().unwrap().contains("lines …")));
    assert_eq!(lines.last().unwrap()["text"], "    return x");
}

#[test]
fn explore_walks_chosen_edges_in_a_direction_to_a_depth() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let text = ok(rpg(
        &repo,
        &[
            "explore",
            "src/shapes.rs:Circle::radius",
            "--edges",
            "invokes",
            "--direction",
            "up",
        ],
    ));
    assert_eq!(
        text,
        "src/shapes.rs:Circle::radius\n  (callers 1)\n  <- invokes src/shapes.rs:Circle::diameter\n    <- invokes tests/integration.rs:circle_diameter\n"
    );
    let v = json(
        &repo,
        &[
            "explore",
            "src/shapes.rs:Circle::radius",
            "--edges",
            "invokes",
            "--direction",
            "up",
            "--depth",
            "1",
        ],
    );
    assert_eq!(
        v["steps"],
        serde_json::json!([{"id": "src/shapes.rs:Circle::diameter", "depth": 1, "from": "src/shapes.rs:Circle::radius", "edge": "invokes", "direction": "up"}])
    );
    let v = json(
        &repo,
        &[
            "explore",
            "src/shapes.rs:Circle::diameter",
            "--direction",
            "down",
            "--edges",
            "invokes",
        ],
    );
    assert_eq!(ids(&v, "steps"), ["src/shapes.rs:Circle::radius"]);
    for bad in [
        vec!["explore", "src/shapes.rs:Circle::radius", "--depth", "0"],
        vec![
            "explore",
            "src/shapes.rs:Circle::radius",
            "--edges",
            "calls",
        ],
    ] {
        let o = rpg(&repo, &bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(stderr(&o).starts_with("rpg: error: "), "{}", stderr(&o));
    }
}

#[test]
fn symbols_lists_a_skeleton_without_bodies() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let text = ok(rpg(&repo, &["symbols", "src/fixpkg/util.py"]));
    assert_eq!(
        text,
        "src/fixpkg/util.py  (8 lines)\n    L1-3  Base  class Base:\n      L2-3  Base.base_method  def base_method(self):\n    L6-8  normalize  def normalize(s):\n"
    );
    let v = json(&repo, &["symbols", "src/fixpkg/models.py"]);
    assert_eq!(
        v["imports"],
        serde_json::json!([
            "import os",
            "from .util import normalize, Base as Root",
            "import json"
        ])
    );
    let deep = v["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["qualname"] == "Request.Meta.Inner.deep")
        .unwrap();
    assert_eq!(deep["depth"], 3);
    assert!(!text.contains("lower()"));
}

/// Ids and paths are untrusted: nothing outside the graph is read, and the
/// refusal is one clear line.
#[test]
fn hostile_ids_and_paths_are_refused() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    for (args, code) in [
        (vec!["fetch", "../../etc/passwd:x"], 2),
        (vec!["fetch", "/etc/passwd"], 2),
        (vec!["fetch", "src/../../../etc/passwd"], 2),
        (vec!["fetch", "C:\\Windows\\win.ini"], 2),
        (vec!["symbols", "/etc/passwd"], 2),
        (vec!["symbols", "./src/fixpkg/util.py"], 2),
        (vec!["explore", "../x.py:f"], 2),
        (vec!["fetch", "src/fixpkg/util.py:normalize\u{1b}[31m"], 2),
        // `link.py` is a tracked symlink: never followed, so not in the graph.
        (vec!["fetch", "link.py"], 1),
        (vec!["symbols", "link.py"], 1),
        (vec!["fetch", "src/fixpkg/nope.py:f"], 1),
        (vec!["fetch", "src/fixpkg/util.py:nope"], 1),
    ] {
        let o = rpg(&repo, &args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("root:"), "{args:?} leaked a file: {err}");
    }
}

#[test]
fn tree_lists_the_hierarchy_in_reading_order_with_counts_that_add_up() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let t = json(&repo, &["tree"]);
    let nodes = t["nodes"].as_array().unwrap();
    let path = |n: &Value| n["path"].as_str().unwrap().to_string();
    let count = |n: &Value| n["entities"].as_u64().unwrap();
    // Every node comes after its parent, and a parent counts what its
    // children hold.
    for (i, n) in nodes.iter().enumerate() {
        let p = path(n);
        assert_eq!(n["depth"], p.split('/').count());
        let kids: Vec<&Value> = nodes
            .iter()
            .filter(|k| path(k).rsplit_once('/').map(|(up, _)| up) == Some(p.as_str()))
            .collect();
        if !kids.is_empty() {
            assert_eq!(kids.iter().map(|k| count(k)).sum::<u64>(), count(n), "{p}");
        }
        if let Some((up, _)) = p.rsplit_once('/') {
            assert!(nodes[..i].iter().any(|u| path(u) == up), "{p} before {up}");
        }
    }
    // Areas cover every file, class, function and method the graph holds.
    let status = json(&repo, &["status"]);
    let c = &status["counts"];
    let areas: u64 = nodes.iter().filter(|n| n["depth"] == 1).map(count).sum();
    let entities = ["files", "classes", "functions", "methods"]
        .iter()
        .map(|k| c[k].as_u64().unwrap_or(0))
        .sum::<u64>();
    assert_eq!(areas, entities, "{status}");

    // `fetch /` is the root: the same areas, the same total.
    let root = json(&repo, &["fetch", "/"]);
    let area_paths: Vec<String> = nodes.iter().filter(|n| n["depth"] == 1).map(path).collect();
    assert_eq!(root["category"]["children"], serde_json::json!(area_paths));
    assert_eq!(root["category"]["members_total"], areas);

    // One subtree, one level deep: the area and its categories only.
    let area = nodes
        .iter()
        .find(|n| n["depth"] == 1 && count(n) > 3)
        .unwrap();
    let sub = json(&repo, &["tree", &path(area), "--depth", "2"]);
    let got: Vec<String> = sub["nodes"].as_array().unwrap().iter().map(path).collect();
    assert_eq!(got[0], path(area));
    assert!(
        got.len() > 1 && got[1..].iter().all(|p| p.split('/').count() == 2),
        "{got:?}"
    );
    let areas = ok(rpg(&repo, &["tree", "--depth", "1"]));
    assert!(areas.lines().all(|l| !l.starts_with(' ')));
    // Counts read as words: "1 entity", "2 entities".
    for l in areas.lines() {
        let n: usize = l
            .split("  (")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let noun = if n == 1 { "entity;" } else { "entities;" };
        assert!(l.contains(&format!("({n} {noun}")), "{l}");
    }

    let missing = rpg(&repo, &["tree", "no such area"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("no hierarchy path"),
        "{}",
        stderr(&missing)
    );
    assert_eq!(rpg(&repo, &["tree", "--depth", "0"]).status.code(), Some(2));

    // Agents get the same answer over MCP.
    let mut s = crate::mcp::Session::start(&repo);
    s.initialize();
    let (err, text) = s.call("tree", serde_json::json!({}));
    assert!(!err, "{text}");
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), t);
}

/// `symbols` prints each definition's qualified name as its id spells it,
/// overload suffix and all, so every line it prints can be fetched.
#[test]
fn symbols_prints_names_that_fetch_takes_overloads_included() {
    let d = fixture("java-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let path = "src/main/java/com/fix/core/Parser.java";
    let text = ok(rpg(&repo, &["symbols", path]));
    assert!(
        text.contains("  L12-12  Parser.Parser#2  public Parser(Lexer lexer)\n"),
        "{text}"
    );
    let f = json(&repo, &["fetch", &format!("{path}:Parser.Parser#2")]);
    assert_eq!(f["entity"]["start_line"], 12);
}

/// A long function is read in windows: `--lines A-B` within its span (cut
/// at 200 lines, with the line to go on from), and `--around WORDS`, the
/// lines holding the words with three either side, gaps marked.
#[test]
fn fetch_shows_a_window_of_lines_or_the_lines_around_words() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let mut body = String::from("def main(argv):\n");
    for i in 2..=400 {
        let line = match i {
            100 => "    level = parse_compression_level(argv)".to_string(),
            300 => "    return write_frame(level)".to_string(),
            _ => format!("    step_{i} = {i}"),
        };
        body.push_str(&line);
        body.push('\n');
    }
    std::fs::write(repo.join("cli.py"), &body).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "cli"]);
    ok(rpg(&repo, &["init"]));
    let whole = json(&repo, &["fetch", "cli.py:main"]);
    assert_eq!(whole["skeleton"], true);
    let numbers = |v: &Value| -> Vec<u64> {
        v["source"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["n"].as_u64().unwrap())
            .collect()
    };
    let w = json(&repo, &["fetch", "cli.py:main", "--lines", "99-101"]);
    assert_eq!(numbers(&w), [99, 100, 101]);
    assert_eq!(
        w["source"][1]["text"],
        "    level = parse_compression_level(argv)"
    );
    assert!(w.get("next_line").is_none());
    // A long range is cut, and says where to go on.
    let w = json(&repo, &["fetch", "cli.py:main", "--lines", "150-"]);
    assert_eq!(numbers(&w).len(), 200);
    assert_eq!(w["next_line"], 350);
    let text = ok(rpg(&repo, &["fetch", "cli.py:main", "--lines", "150-"]));
    assert!(
        text.ends_with("next: rpg fetch cli.py:main --lines 350-400\n"),
        "{text}"
    );
    // Around the words, as grep -C 3 shows them.
    let a = json(
        &repo,
        &["fetch", "cli.py:main", "--around", "COMPRESSION frame"],
    );
    let mut expected: Vec<u64> = (97..=103).collect();
    expected.push(0);
    expected.extend(297..=303);
    assert_eq!(numbers(&a), expected);
    assert_eq!(a["source"][7]["text"], "… 193 lines …");
    // Outside the span, no match, or a backwards range: said in one line.
    let o = rpg(&repo, &["fetch", "cli.py:main", "--lines", "500-510"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cli.py:main holds lines 1-400"),
        "{}",
        stderr(&o)
    );
    let o = rpg(&repo, &["fetch", "cli.py:main", "--around", "zebra"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "rpg: no line of cli.py:main holds zebra\n");
    let o = rpg(&repo, &["fetch", "cli.py:main", "--lines", "9-3"]);
    assert_eq!(o.status.code(), Some(2));
    let o = rpg(
        &repo,
        &["fetch", "cli.py:main", "--lines", "1-2", "--around", "x"],
    );
    assert_eq!(o.status.code(), Some(2));
}

/// An id that names nothing suggests the ids it may mean: a bare name's
/// entities in every file, a prefix's, or near spellings in the file.
#[test]
fn a_mistyped_or_bare_id_gets_a_did_you_mean() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let said = |id: &str| {
        let o = rpg(&repo, &["fetch", id]);
        assert_eq!(o.status.code(), Some(1), "{id}");
        stderr(&o)
    };
    assert!(
        said("normalize").contains("did you mean src/fixpkg/util.py:normalize?"),
        "{}",
        said("normalize")
    );
    assert!(said("normali").contains("did you mean src/fixpkg/util.py:normalize?"));
    assert!(
        said("src/fixpkg/util.py:normalise").contains("did you mean src/fixpkg/util.py:normalize"),
        "{}",
        said("src/fixpkg/util.py:normalise")
    );
    assert!(!said("qqqqzz").contains("did you mean"));
    let o = rpg(&repo, &["explore", "normalize"]);
    assert!(
        stderr(&o).contains("did you mean src/fixpkg/util.py:normalize"),
        "{}",
        stderr(&o)
    );
}

/// Suggestions after updates are those an index built from nothing makes:
/// names a change took away are skipped, however many sort first.
#[test]
fn suggestions_after_a_rename_are_a_fresh_index_s() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let gone: String = (1..=8)
        .map(|i| format!("def zq_a{i}():\n    return {i}\n\n"))
        .collect();
    std::fs::write(repo.join("src/fixpkg/gone.py"), &gone).unwrap();
    std::fs::write(
        repo.join("src/fixpkg/kept.py"),
        "def zq_b():\n    return 0\n",
    )
    .unwrap();
    git(&repo, &["add", "-A", "src"]);
    git(&repo, &["commit", "-qm", "zq"]);
    ok(rpg(&repo, &["init"]));
    let renamed = gone.replace("zq_a", "other_a");
    std::fs::write(repo.join("src/fixpkg/gone.py"), renamed).unwrap();
    git(&repo, &["commit", "-qam", "renamed"]);
    ok(rpg(&repo, &["update", "--snapshot"]));
    let said = || stderr(&rpg(&repo, &["fetch", "zq_"]));
    let kept = said();
    assert!(
        kept.contains("did you mean src/fixpkg/kept.py:zq_b"),
        "{kept}"
    );
    std::fs::remove_dir_all(repo.join(".rpg/store")).unwrap();
    assert_eq!(said(), kept);
}

/// By default `explore` answers what a reader asks first: callers, then
/// callees, each path keeping its way (callers of callers, callees of
/// callees), and the file and its siblings last; the root's edges are
/// counted however many the walk shows.
#[test]
fn explore_shows_callers_and_callees_before_siblings_with_counts() {
    let d = fixture("rust-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let v = json(&repo, &["explore", "src/shapes.rs:Circle::diameter"]);
    let steps: Vec<(String, String, String)> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].as_str().unwrap().to_string();
            (f("edge"), f("direction"), f("id"))
        })
        .collect();
    let first_contains = steps.iter().position(|s| s.0 == "contains").unwrap();
    assert!(
        steps[..first_contains].iter().all(|s| s.0 == "invokes"),
        "{steps:?}"
    );
    assert_eq!(
        steps[..2],
        [
            (
                "invokes".into(),
                "up".into(),
                "tests/integration.rs:circle_diameter".into()
            ),
            (
                "invokes".into(),
                "down".into(),
                "src/shapes.rs:Circle::radius".into()
            ),
        ]
    );
    // radius is reached down; its other caller (diameter itself) is not
    // walked back up into.
    assert_eq!(first_contains, 2, "{steps:?}");
    assert!(steps[first_contains..]
        .iter()
        .any(|s| s.2 == "src/shapes.rs:Circle::new"));
    assert_eq!(
        v["counts"],
        serde_json::json!([
            {"edge": "invokes", "direction": "up", "n": 1},
            {"edge": "invokes", "direction": "down", "n": 1},
            {"edge": "contains", "direction": "up", "n": 1}
        ])
    );
    let text = ok(rpg(&repo, &["explore", "src/shapes.rs:Circle::diameter"]));
    assert!(
        text.starts_with("src/shapes.rs:Circle::diameter\n  (callers 1, callees 1, inside 1)\n  <- invokes tests/integration.rs:circle_diameter\n  -> invokes src/shapes.rs:Circle::radius\n"),
        "{text}"
    );
}

/// Every bounded list pages: a file of 600 definitions answers 500 and
/// the offset of the rest; a walk of 250 callers answers 200 and the
/// offset of the rest; the pages together are the whole, once each.
#[test]
fn symbols_and_explore_answer_in_pages_that_add_up_to_the_whole() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let mut text = String::from("def target():\n    return 1\n");
    for i in 0..599 {
        text.push_str(&format!("\n\ndef caller_{i:03}():\n    return target()\n"));
    }
    std::fs::write(repo.join("many.py"), &text).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "many"]);
    ok(rpg(&repo, &["init"]));
    let first = json(&repo, &["symbols", "many.py"]);
    assert_eq!(first["symbols"].as_array().unwrap().len(), 500);
    assert_eq!(first["truncated"], true);
    assert_eq!(first["next_offset"], 500);
    let text = ok(rpg(&repo, &["symbols", "many.py"]));
    assert!(
        text.ends_with("next: rpg symbols many.py --offset 500\n"),
        "{text}"
    );
    let second = json(&repo, &["symbols", "many.py", "--offset", "500"]);
    let rest = second["symbols"].as_array().unwrap();
    assert_eq!(rest.len(), 100);
    assert_eq!(rest[99]["qualname"], "caller_598");
    assert_eq!(second["truncated"], false);
    assert!(second.get("next_offset").is_none());
    let o = rpg(&repo, &["symbols", "many.py", "--offset", "600"]);
    assert_eq!(o.status.code(), Some(2));

    fn args(offset: &str) -> [&str; 8] {
        let to = "many.py:target";
        [
            "explore", to, "--edges", "invokes", "--depth", "1", "--offset", offset,
        ]
    }
    let walk = |offset: &str| json(&repo, &args(offset));
    let page = walk("0");
    assert_eq!(page["steps"].as_array().unwrap().len(), 200);
    assert_eq!(page["next_offset"], 200);
    assert_eq!(page["counts"][0]["n"], 599);
    let mut all: Vec<String> = Vec::new();
    let mut offset = 0;
    loop {
        let p = walk(&offset.to_string());
        all.extend(
            p["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_string()),
        );
        match p["next_offset"].as_u64() {
            Some(n) => offset = n,
            None => break,
        }
    }
    assert_eq!(all.len(), 599);
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 599);
    let later = ok(rpg(&repo, &args("200")));
    assert!(
        later.contains("  [depth 1] many.py:target <- invokes many.py:caller_200\n"),
        "{later}"
    );
    assert!(
        later.ends_with(
            "… more steps: the same command with --offset 400, or narrow --edges or --depth\n"
        ),
        "{later}"
    );
}
