use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Build a fixture repository with its script under `fixtures/`.
pub fn fixture(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("repo");
    let status = Command::new("bash")
        .arg(project_root().join("fixtures").join(script))
        .arg(&repo)
        .status()
        .expect("run fixture script");
    assert!(status.success(), "fixture script {script} failed");
    dir
}

pub fn repo_of(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("repo")
}

/// The real `rpg` binary, run in `dir`, with no user config file (a
/// developer's own `~/.config/rpg` must not change what tests see).
pub fn rpg_command(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rpg"));
    c.current_dir(dir)
        .env("XDG_CONFIG_HOME", "/nonexistent/rpg-tests-config")
        .env_remove("RUST_BACKTRACE");
    c
}

/// Run the real `rpg` binary in `dir`.
pub fn rpg(dir: &Path, args: &[&str]) -> Output {
    rpg_command(dir).args(args).output().expect("run rpg")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Assert success and return stdout.
pub fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "rpg failed ({:?}):\nstdout: {}\nstderr: {}",
        o.status.code(),
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// `git` in `dir` with a fixed identity and no user or system config.
pub fn git_command(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    c
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = git_command(dir).args(args).output().expect("run git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Run `rpg <args>` in `dir`, dying at the named failpoint (debug builds
/// only; see `rpg::failpoint`). Asserts it did die there: by a signal.
pub fn rpg_dying_at(dir: &Path, point: &str, args: &[&str]) {
    let o = rpg_command(dir)
        .args(args)
        .env("RPG_FAILPOINT", point)
        .output()
        .expect("run rpg");
    assert_eq!(
        o.status.code(),
        None,
        "rpg {args:?} should have died at {point}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Every category is grounded to the trie LCAs of its members' directories.
pub fn assert_groundings(g: &rpg::graph::Graph) {
    for c in g.categories.values() {
        let prefix = format!("{}/", c.path);
        let members: Vec<&str> = g
            .entities
            .values()
            .filter(|e| e.leaf == c.path || e.leaf.starts_with(&prefix))
            .map(|e| e.path.as_str())
            .collect();
        assert_eq!(
            c.scopes,
            rpg::graph::hierarchy::ground(&members),
            "{}",
            c.path
        );
    }
}

/// Add `src/fixpkg/zebra.py` (one function, `stripe_count`) to the Python
/// fixture, commit everything pending, and return the new HEAD.
pub fn commit_zebra(repo: &Path) -> String {
    std::fs::write(
        repo.join("src/fixpkg/zebra.py"),
        "def stripe_count(zebra):\n    \"\"\"Count the stripes of a zebra.\"\"\"\n    return len(zebra.stripes)\n",
    )
    .unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-qm", "zebra"]);
    git(repo, &["rev-parse", "HEAD"]).trim().to_string()
}

/// The Python fixture with its graph built.
pub fn indexed_fixture() -> (tempfile::TempDir, PathBuf) {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    (d, repo)
}

/// `rpg <args>` in `repo` with no embedding model to be found.
pub fn rpg_without_models(d: &tempfile::TempDir, repo: &Path, args: &[&str]) -> Output {
    let empty = d.path().join("no-models");
    std::fs::create_dir_all(&empty).unwrap();
    rpg_command(repo)
        .args(args)
        .env("RPG_EMBED_DIR", &empty)
        .env_remove("ORT_DYLIB_PATH")
        .output()
        .expect("run rpg")
}

/// Whether a snapshot's text holds an entity with this id. Ids are not
/// written out (a group's path and a qualname make them), so parse it.
pub fn snapshot_has(text: &str, id: &str) -> bool {
    let g = rpg::store::snapshot::from_bytes(text.as_bytes(), Path::new("graph.jsonl"))
        .expect("a whole snapshot");
    g.entities.contains_key(id)
}

/// Copy the rpg under test to `to`, ready to run. A test thread forking
/// while the copy is open for writing lends its child the descriptor until
/// that child execs, and running the copy meanwhile fails with "Text file
/// busy"; this waits that out, so the copy's first real run cannot.
pub fn copy_rpg_to(to: &Path) {
    std::fs::copy(env!("CARGO_BIN_EXE_rpg"), to).unwrap();
    for _ in 0..250 {
        match Command::new(to).arg("--version").output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            r => {
                assert!(r.unwrap().status.success());
                return;
            }
        }
    }
    panic!("{} stayed busy for 5 s", to.display());
}

/// Change `normalize` in the Python fixture and commit it; the commit's id.
pub fn commit_normalize_change(repo: &Path) -> String {
    let util = repo.join("src/fixpkg/util.py");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, text.replace("s.lower()", "s.strip().lower()")).unwrap();
    git(repo, &["commit", "-qam", "trim first"]);
    git(repo, &["rev-parse", "HEAD"]).trim().to_string()
}

/// A bare remote of the fixture repository in `d`, indexed, with its
/// snapshot committed.
pub fn bare_remote_with_graph(d: &tempfile::TempDir) -> PathBuf {
    let repo = repo_of(d);
    ok(rpg(&repo, &["init"]));
    git(&repo, &["add", ".rpg"]);
    git(&repo, &["commit", "-qm", "graph"]);
    bare_clone(d, &repo)
}

/// A bare clone of `src` at `d/remote.git`.
pub fn bare_clone(d: &tempfile::TempDir, src: &Path) -> PathBuf {
    let remote = d.path().join("remote.git");
    let (from, to) = (src.to_str().unwrap(), remote.to_str().unwrap());
    git(d.path(), &["clone", "-q", "--bare", from, to]);
    remote
}

/// A JSON value as text, cut for an assertion message.
pub fn clip_json(v: &serde_json::Value) -> String {
    rpg::text::clip(&v.to_string(), 500).into_owned()
}

/// A burst of writes to the store that left nothing behind: sled frees
/// the segments they filled, and rewrites them at every open after. Tens
/// of megabytes, so the writes of an update or two, which sled puts into
/// free segments first, leave most of it free.
pub fn plant_free_space(repo: &Path) {
    let db = sled::open(repo.join(".rpg/store")).unwrap();
    let key = |i: u32| [b"~junk".as_slice(), &i.to_be_bytes()].concat();
    for round in 0..5u8 {
        for i in 0..6000u32 {
            db.insert(key(i), vec![round; 2000]).unwrap();
        }
        db.flush().unwrap();
    }
    for i in 0..6000u32 {
        db.remove(key(i)).unwrap();
    }
    db.flush().unwrap();
}

/// Bytes the store's open wrote (see `Store::rewritten_at_open`). Linux
/// counts them for the whole process, and the tests run as threads of one
/// process, so another test's writes during an open can only add: the
/// least of three opens is this store's own.
pub fn rewritten_at_open(repo: &Path) -> u64 {
    (0..3)
        .map(|_| {
            let store = rpg::store::RpgDir::new(repo).unwrap().open().unwrap();
            store
                .rewritten_at_open()
                .expect("Linux counts a process's writes")
        })
        .min()
        .unwrap_or(0)
}
