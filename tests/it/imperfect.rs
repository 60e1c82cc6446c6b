//! Repositories that are not whole: a missing object costs the file it
//! belongs to, and nothing more.

use crate::common::{git, indexed_fixture, ok, rpg, stderr, stdout};
use std::fs;
use std::path::{Path, PathBuf};

/// Take a loose object out of the object store, as a partial clone or a
/// mirror without large files would lack it; returns where it was kept.
fn lose_object(repo: &Path, id: &str) -> (PathBuf, Vec<u8>) {
    let path = repo.join(".git/objects").join(&id[..2]).join(&id[2..]);
    let bytes = fs::read(&path).expect("a loose object");
    fs::remove_file(&path).unwrap();
    (path, bytes)
}

fn blob_of(repo: &Path, rev_path: &str) -> String {
    git(repo, &["rev-parse", rev_path]).trim().to_string()
}

fn status(repo: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(rpg(repo, &["status", "--json"]))).unwrap()
}

#[test]
fn init_indexes_everything_but_a_file_whose_blob_is_missing_and_update_retries_it() {
    let d = crate::common::fixture("python-repo.sh");
    let repo = crate::common::repo_of(&d);
    let lost = lose_object(&repo, &blob_of(&repo, "HEAD:src/fixpkg/util.py"));
    let o = rpg(&repo, &["init"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("could not be read from git"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("src/fixpkg/util.py"), "{}", stdout(&o));
    let v = status(&repo);
    assert_eq!(v["unreadable"][0], "src/fixpkg/util.py", "{v}");
    assert!(v["counts"]["files"].as_u64().unwrap() >= 5);
    let o = rpg(&repo, &["symbols", "src/fixpkg/util.py"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The object comes back (a fetch): the next update reads the file.
    fs::write(&lost.0, &lost.1).unwrap();
    ok(rpg(&repo, &["update"]));
    let v = status(&repo);
    assert!(v.get("unreadable").is_none(), "{v}");
    ok(rpg(&repo, &["symbols", "src/fixpkg/util.py"]));
}

#[test]
fn an_update_over_a_missing_data_blob_and_a_missing_code_blob_goes_on() {
    let (_d, repo) = indexed_fixture();
    fs::write(repo.join("data.csv"), "a,b\n1,2\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "data"]);
    ok(rpg(&repo, &["update"]));
    // Then the data changes, a code file is renamed and another edited,
    // and the new blobs of the data and of the edited file are missing.
    fs::write(repo.join("data.csv"), "a,b\n1,2\n3,4\n").unwrap();
    git(
        &repo,
        &["mv", "src/fixpkg/models.py", "src/fixpkg/shapes.py"],
    );
    let util = repo.join("src/fixpkg/util.py");
    let text = fs::read_to_string(&util).unwrap();
    fs::write(&util, text.replace("s.lower()", "s.casefold()")).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "move and edit"]);
    lose_object(&repo, &blob_of(&repo, "HEAD:data.csv"));
    let lost = lose_object(&repo, &blob_of(&repo, "HEAD:src/fixpkg/util.py"));
    let o = rpg(&repo, &["update"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("src/fixpkg/util.py"), "{}", stdout(&o));
    ok(rpg(&repo, &["symbols", "src/fixpkg/shapes.py"]));
    fs::write(&lost.0, &lost.1).unwrap();
    ok(rpg(&repo, &["update"]));
    // Now equal to a fresh init of the same commit.
    let updated = status(&repo)["counts"].clone();
    ok(rpg(&repo, &["init"]));
    let mut fresh = status(&repo)["counts"].clone();
    let mut updated = updated;
    for c in [&mut fresh, &mut updated] {
        c.as_object_mut().unwrap().remove("categories");
    }
    assert_eq!(updated, fresh);
}

#[test]
fn a_blobless_clone_fetches_the_blobs_it_indexes_from_its_promisor_remote() {
    let d = crate::common::fixture("python-repo.sh");
    let src = crate::common::repo_of(&d);
    let remote = crate::common::bare_clone(&d, &src);
    git(&remote, &["config", "uploadpack.allowFilter", "true"]);
    git(
        &remote,
        &["config", "uploadpack.allowAnySHA1InWant", "true"],
    );
    let url = format!("file://{}", remote.display());
    let clone = d.path().join("clone");
    git(
        d.path(),
        &[
            "clone",
            "-q",
            "--filter=blob:none",
            "--no-checkout",
            &url,
            clone.to_str().unwrap(),
        ],
    );
    // Nothing was checked out, so no blob is here yet.
    let o = rpg(&clone, &["init", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["report"]["skipped"].get("unreadable"), None, "{v}");
    assert_eq!(v["counts"]["functions"], 7, "{v}");
    // A commit arrives blobless, and HEAD moves without a checkout.
    let head = crate::common::commit_zebra(&src);
    git(&src, &["push", "-q", remote.to_str().unwrap(), "HEAD"]);
    git(&clone, &["fetch", "-q", "origin"]);
    git(&clone, &["reset", "-q", "--soft", &head]);
    ok(rpg(&clone, &["update"]));
    ok(rpg(&clone, &["symbols", "src/fixpkg/zebra.py"]));
    let found = ok(rpg(
        &clone,
        &["locate", "count the stripes of a zebra", "--json"],
    ));
    assert!(found.contains("stripe_count"), "{found}");
}

/// rpg reads commits, never git's index: an index git itself cannot read
/// (cut short by a crash, or being rewritten) does not stop an update, and
/// the new commit's functions are found.
#[test]
fn a_damaged_git_index_does_not_stop_an_update() {
    let (_d, repo) = indexed_fixture();
    let util = repo.join("src/fixpkg/util.py");
    let mut text = fs::read_to_string(&util).unwrap();
    text.push_str("\ndef added_after_the_index_broke():\n    return 1\n");
    fs::write(&util, text).unwrap();
    git(&repo, &["commit", "-qam", "more"]);
    let index = repo.join(".git/index");
    let whole = fs::read(&index).unwrap();
    fs::write(&index, &whole[..100]).unwrap();
    let o = rpg(&repo, &["update"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("added_after_the_index_broke"),
        "{}",
        stdout(&o)
    );
    ok(rpg(
        &repo,
        &["fetch", "src/fixpkg/util.py:added_after_the_index_broke"],
    ));
}
