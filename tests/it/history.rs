//! `rpg eval --history`: cases made from a repository's own fixes, and
//! replayed at each fix's parent.

use crate::common::{git, git_command, ok, rpg, stderr};
use serde_json::{json, Value};
use std::path::Path;

const CART: &str = "\
class Cart:
    def apply_discount(self, price, percent):
        return price + price * percent / 100

def add_item(cart, item):
    cart.items.append(item)

def total_price(cart):
    return sum(i.price for i in cart.items)
";

/// Write `files` (path, text; empty text deletes), and commit them all
/// with `message` at `day` (so the history's order is fixed).
fn commit(repo: &Path, day: u32, message: &str, files: &[(&str, &str)]) -> String {
    for (path, text) in files {
        let p = repo.join(path);
        if text.is_empty() {
            std::fs::remove_file(p).unwrap();
        } else {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }
    git(repo, &["add", "-A"]);
    let date = format!("2024-01-{day:02}T12:00:00Z");
    let o = git_command(repo)
        .args(["commit", "-qm", message])
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    git(repo, &["rev-parse", "HEAD"]).trim().to_string()
}

/// A shop whose history holds two fixes that qualify, and one commit for
/// each reason a commit does not.
fn shop(repo: &Path) -> (String, String) {
    std::fs::create_dir_all(repo).unwrap();
    git(repo, &["init", "-q", "-b", "main"]);
    let base = commit(
        repo,
        1,
        "Start the shop",
        &[
            ("src/shop/cart.py", CART),
            ("src/shop/tax.py", "def tax_rate(region):\n    return 0.2\n"),
            ("tests/test_cart.py", "def test_total():\n    assert True\n"),
            (
                "examples/demo.py",
                "def show_cart(cart):\n    print(cart)\n",
            ),
        ],
    );
    let total_fixed = CART.replace("i.price for", "round(i.price, 2) for");
    let first = commit(
        repo,
        2,
        "Fix total_price rounding of cheap items (#7)\n\nThe total in cart.py drifts by a \
         cent; see https://example.com/7.\n\nSigned-off-by: A <a@example.com>",
        &[("src/shop/cart.py", &total_fixed)],
    );
    commit(
        repo,
        3,
        "Add a wishlist",
        &[("src/shop/wish.py", "def wish():\n    pass\n")],
    );
    commit(
        repo,
        4,
        "Fix flaky test of the total price",
        &[("tests/test_cart.py", "def test_total():\n    assert 1\n")],
    );
    let sweep: Vec<(String, String)> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| {
            (
                format!("src/shop/{n}.py"),
                format!("def {n}():\n    return 1\n"),
            )
        })
        .collect();
    let sweep: Vec<(&str, &str)> = sweep
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    commit(repo, 5, "Fix the crash in every module at once", &sweep);
    commit(
        repo,
        6,
        "Fix missing tax for exports by adding a rate",
        &[(
            "src/shop/tax.py",
            "def tax_rate(region):\n    return 0.2\n\ndef export_rate():\n    return 0\n",
        )],
    );
    commit(
        repo,
        6,
        "Fix the demo crashing on an empty cart",
        &[(
            "examples/demo.py",
            "def show_cart(cart):\n    print(cart or 'empty')\n",
        )],
    );
    commit(
        repo,
        7,
        "fix typo",
        &[(
            "src/shop/tax.py",
            "def tax_rate(region):\n    return 0.25\n\ndef export_rate():\n    return 0\n",
        )],
    );
    let discount_fixed = total_fixed.replace("price + price", "price - price");
    let second = commit(
        repo,
        8,
        "Fix the wrong sign in Cart.apply_discount\n\nA discount raised the price.",
        &[("src/shop/cart.py", &discount_fixed)],
    );
    // A merge whose message reads as a fix is not one.
    git(repo, &["checkout", "-q", "-b", "side", &base]);
    commit(repo, 9, "Side work", &[("docs/x.md", "x\n")]);
    git(repo, &["checkout", "-q", "main"]);
    let o = git_command(repo)
        .args([
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Fix merge of the side branch",
            "side",
        ])
        .env("GIT_COMMITTER_DATE", "2024-01-10T12:00:00Z")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (first, second)
}

#[test]
fn history_makes_masked_cases_of_fixes_and_replays_them_at_each_parent() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("shop");
    let (first, second) = shop(&repo);
    let out = ok(rpg(&repo, &["eval", "--history", "10", "--json"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    let parent = |c: &str| {
        git(&repo, &["rev-parse", &format!("{c}^")])
            .trim()
            .to_string()
    };
    // Newest first; the sweep, the test-only and example-only fixes, the
    // added function, the two-word message, the merge and the non-fixes
    // are not cases.
    assert_eq!(
        v["history_cases"],
        json!([
            {"id": format!("shop@{}", &second[..12]), "repo": "shop",
             "base_commit": parent(&second),
             "query": "Fix the wrong sign in ….…\n\nA discount raised the price.",
             "gold_files": ["src/shop/cart.py"],
             "gold_functions": ["src/shop/cart.py:Cart.apply_discount"],
             "fix_commit": second},
            {"id": format!("shop@{}", &first[..12]), "repo": "shop",
             "base_commit": parent(&first),
             "query": "Fix … rounding of cheap items (#7)\n\nThe total in ….py drifts by a cent; see",
             "gold_files": ["src/shop/cart.py"],
             "gold_functions": ["src/shop/cart.py:total_price"],
             "fix_commit": first},
        ])
    );
    // Replayed: both cases scored, the ranker beside plain BM25.
    let names: Vec<&str> = v["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["full", "bm25 only"]);
    assert_eq!(v["variants"][0]["file"]["all"]["n"], 2);
    assert_eq!(v["variants"][0]["file"]["all"]["hit"][0], 1.0);
    assert!(!repo.join(".rpg").exists(), "the repository was only read");

    // The text table has the BM25 line; --history 1 takes the newest.
    let text = ok(rpg(&repo, &["eval", "--history", "1"]));
    assert!(text.starts_with("1 cases\n"), "{text}");
    assert!(text.contains("  plain BM25 (all)          1 "), "{text}");
}

#[test]
fn saved_history_cases_rerun_with_cases_and_since_can_leave_none() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("shop");
    shop(&repo);
    let saved = d.path().join("cases.jsonl");
    let made = ok(rpg(
        &repo,
        &[
            "eval",
            "--history",
            "5",
            "--save-cases",
            saved.to_str().unwrap(),
            "--json",
        ],
    ));
    let again = ok(rpg(
        d.path(),
        &[
            "eval",
            "--cases",
            saved.to_str().unwrap(),
            "--repo",
            repo.to_str().unwrap(),
            "--json",
        ],
    ));
    let (made, again): (Value, Value) = (
        serde_json::from_str(&made).unwrap(),
        serde_json::from_str(&again).unwrap(),
    );
    assert_eq!(std::fs::read_to_string(&saved).unwrap().lines().count(), 2);
    assert_eq!(
        made["variants"][0]["function"],
        again["variants"][0]["function"]
    );

    // Only the newer fix was made on or after Jan 8th; none after the 9th.
    let since = ok(rpg(
        &repo,
        &["eval", "--history", "5", "--since", "2024-01-08", "--json"],
    ));
    let since: Value = serde_json::from_str(&since).unwrap();
    assert_eq!(since["history_cases"].as_array().unwrap().len(), 1);
    let none = rpg(&repo, &["eval", "--history", "5", "--since", "2024-01-09"]);
    assert_eq!(none.status.code(), Some(1), "{}", stderr(&none));
    assert!(
        stderr(&none).contains("no commit qualifies"),
        "{}",
        stderr(&none)
    );
    for bad in [
        &["--history", "5", "--since", "Jan 8"][..],
        &["--history", "0"],
    ] {
        let o = rpg(&repo, &[&["eval"][..], bad].concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
    }
}

#[test]
fn a_fix_to_a_redefined_function_is_gold_under_the_id_the_ranking_lists() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("shop");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    // The second `checkout_total` replaces the first: the graph holds
    // `checkout_total` and `checkout_total#2`, the ranking lists both as
    // `checkout_total`.
    let twice = "def checkout_total(cart):\n    return 0\n\n\
                 def checkout_total(cart):\n    return sum(i.price for i in cart.items)\n";
    commit(&repo, 1, "Start the shop", &[("src/shop/sums.py", twice)]);
    let fixed = twice.replace("i.price for", "i.price * i.count for");
    let fix = commit(
        &repo,
        2,
        "Fix checkout_total ignoring the item count\n\nEvery item counted once in the sum.",
        &[("src/shop/sums.py", &fixed)],
    );
    let v: Value =
        serde_json::from_str(&ok(rpg(&repo, &["eval", "--history", "5", "--json"]))).unwrap();
    let case = &v["history_cases"][0];
    assert_eq!(case["fix_commit"], fix.as_str());
    assert_eq!(
        case["gold_functions"],
        json!(["src/shop/sums.py:checkout_total"])
    );
    assert_eq!(v["variants"][0]["function"]["all"]["n"], 1);
    assert_eq!(v["variants"][0]["function"]["all"]["hit"][2], 1.0);
}
