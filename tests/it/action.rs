//! The Action's `update` mode (action/run.sh) end to end: a bare remote,
//! a shallow CI checkout, the real binary, real git pushes.

use crate::common::{
    commit_zebra, fixture, git, project_root, repo_of, snapshot_has, stderr, stdout,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run action/run.sh in `checkout` as Actions would on a push to main.
fn run_action(checkout: &Path, mode: &str, event: &Path) -> Output {
    Command::new("bash")
        .arg(project_root().join("action/run.sh"))
        .current_dir(checkout)
        .env("RPG_MODE", mode)
        .env("RPG_BIN", env!("CARGO_BIN_EXE_rpg"))
        .env("GITHUB_EVENT_NAME", "push")
        .env("GITHUB_EVENT_PATH", event)
        .env("GITHUB_REF_NAME", "main")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run action/run.sh")
}

/// A fresh shallow clone, as actions/checkout makes with fetch-depth 1.
fn shallow_checkout(remote: &Path, into: &Path) {
    let url = format!("file://{}", remote.display());
    let o = Command::new("git")
        .args(["clone", "-q", "--depth=1", "--branch", "main", &url])
        .arg(into)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        git(into, &["rev-parse", "--is-shallow-repository"]).trim(),
        "true"
    );
}

/// The Python fixture as a developer's clone of a bare `main` remote.
/// Returns the temp dir, the developer's repository and the remote.
fn fixture_with_remote() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = fixture("python-repo.sh");
    let dev = repo_of(&d);
    let remote = d.path().join("remote.git");
    let bare = remote.to_str().unwrap();
    git(d.path(), &["init", "-q", "--bare", "-b", "main", bare]);
    git(&dev, &["branch", "-M", "main"]);
    git(&dev, &["remote", "add", "origin", bare]);
    git(&dev, &["push", "-q", "origin", "main"]);
    (d, dev, remote)
}

fn remote_log(remote: &Path) -> Vec<String> {
    git(remote, &["log", "--format=%an|%s", "main"])
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn pushes_keep_the_committed_graph_current_without_loops() {
    let (d, dev, remote) = fixture_with_remote();
    let code_push = project_root().join("fixtures/events/push.json");

    // 1. The first run has no graph yet: it builds and commits one.
    let ci = d.path().join("ci1");
    shallow_checkout(&remote, &ci);
    let out = run_action(&ci, "update", &code_push);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let log = remote_log(&remote);
    assert!(
        log[0].starts_with("github-actions[bot]|rpg: update the planning graph to "),
        "{log:?}"
    );
    let files = git(&remote, &["show", "--name-only", "--format=", "main"]);
    assert!(files.lines().any(|l| l == ".rpg/graph.jsonl"), "{files}");
    assert!(
        !files.lines().any(|l| l.starts_with(".rpg/store")),
        "the store is never committed"
    );
    assert!(
        files.lines().all(|l| l.starts_with(".rpg/")),
        "only .rpg/ is committed: {files}"
    );

    // 2. Running again on the same commit is a no-op.
    let out = run_action(&ci, "update", &code_push);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("the committed graph is current"),
        "{}",
        stdout(&out)
    );
    assert_eq!(remote_log(&remote).len(), log.len());

    // A clone at the snapshot commit takes the graph as current: the
    // commit it names differs from HEAD only in .rpg/.
    let clone = d.path().join("clone");
    git(
        d.path(),
        &[
            "clone",
            "-q",
            remote.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    let status = crate::common::rpg(&clone, &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(v["up_to_date"], true, "{v}");
    // Shown at the commit whose code it describes: HEAD.
    assert_eq!(v["commit"], v["head"]);
    let located = crate::common::rpg(&clone, &["locate", "split host"]);
    assert!(
        !stderr(&located).contains("warning"),
        "{}",
        stderr(&located)
    );

    // 3. The snapshot commit's own push event is skipped outright.
    let snapshot_push = project_root().join("fixtures/events/push-snapshot-only.json");
    let out = run_action(&ci, "update", &snapshot_push);
    assert!(out.status.success());
    assert!(stdout(&out).contains("nothing to do"), "{}", stdout(&out));

    // 4. A developer pushes code; a fresh shallow checkout (which lacks the
    //    graph's commit) updates the committed graph to it.
    git(&dev, &["pull", "-q", "--ff-only", "origin", "main"]);
    let head = commit_zebra(&dev);
    git(&dev, &["push", "-q", "origin", "main"]);
    let ci2 = d.path().join("ci2");
    shallow_checkout(&remote, &ci2);
    let out = run_action(&ci2, "update", &code_push);
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    let log = remote_log(&remote);
    assert!(
        log[0].contains(&format!(
            "rpg: update the planning graph to {}",
            &head[..12]
        )),
        "{log:?}"
    );
    let graph = git(&remote, &["show", "main:.rpg/graph.jsonl"]);
    assert!(snapshot_has(&graph, "src/fixpkg/zebra.py:stripe_count"));
    assert!(
        graph.contains(&head),
        "the snapshot names the code commit it reflects"
    );
}

#[test]
fn a_rejected_push_is_retried_on_the_new_tip() {
    let (d, dev, remote) = fixture_with_remote();
    let ci = d.path().join("ci");
    shallow_checkout(&remote, &ci);
    // Someone pushes after the checkout was made: the first push is rejected.
    let head = commit_zebra(&dev);
    git(&dev, &["push", "-q", "origin", "main"]);
    let out = run_action(
        &ci,
        "update",
        &project_root().join("fixtures/events/push.json"),
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("push rejected"), "{}", stderr(&out));
    let graph = git(&remote, &["show", "main:.rpg/graph.jsonl"]);
    assert!(graph.contains(&head), "the graph describes the new tip");
    assert!(snapshot_has(&graph, "src/fixpkg/zebra.py:stripe_count"));
}

#[test]
fn a_push_refused_without_a_race_fails_at_once_saying_why() {
    let (d, _dev, remote) = fixture_with_remote();
    let ci = d.path().join("ci");
    shallow_checkout(&remote, &ci);
    // What a protected branch looks like from git: every push declined.
    let hook = remote.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'protected branch hook declined' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run_action(
        &ci,
        "update",
        &project_root().join("fixtures/events/push.json"),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("nobody pushed meanwhile"), "{said}");
    assert!(said.contains("protected"), "{said}");
    assert!(!said.contains("retrying"), "{said}");
}

#[test]
fn unknown_modes_and_lifters_are_refused() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let ev = project_root().join("fixtures/events/push.json");
    let out = run_action(&repo, "deploy", &ev);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown mode"));
    let out = Command::new("bash")
        .arg(project_root().join("action/run.sh"))
        .current_dir(&repo)
        .env("RPG_MODE", "update")
        .env("RPG_LIFTER", "magic")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("lifter 'magic'"));
}

/// Run action/fetch-binary.sh for `url`, pinned to `sha`; returns the run
/// and what it wrote to `$GITHUB_ENV`.
fn fetch_binary(dir: &Path, url: &str, sha: &str) -> (Output, String) {
    let env_file = dir.join("github-env");
    let _ = std::fs::remove_file(&env_file);
    let out = Command::new("bash")
        .arg(project_root().join("action/fetch-binary.sh"))
        .args([url, sha])
        .arg(dir.join("bin"))
        .env("GITHUB_ENV", &env_file)
        .output()
        .unwrap();
    (out, std::fs::read_to_string(&env_file).unwrap_or_default())
}

/// A release archive holding the real binary, as a release would.
fn release_archive(dir: &Path) -> Vec<u8> {
    let stage = dir.join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_rpg"), stage.join("rpg")).unwrap();
    let tgz = dir.join("rpg.tar.gz");
    let o = Command::new("tar")
        .arg("-czf")
        .arg(&tgz)
        .arg("-C")
        .arg(&stage)
        .arg("rpg")
        .output()
        .unwrap();
    assert!(o.status.success());
    std::fs::read(&tgz).unwrap()
}

fn sha256_hex(bytes: &[u8]) -> String {
    rpg::store::digest(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_action_runs_a_pinned_binary_only_when_its_checksum_matches() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let d = tempfile::tempdir().unwrap();
    let bytes = release_archive(d.path());
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/rpg.tar.gz"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(bytes.clone()))
        .mount(&server)
        .await;
    let url = format!("{}/rpg.tar.gz", server.uri());

    let (out, env) = fetch_binary(d.path(), &url, &sha256_hex(&bytes));
    assert!(out.status.success(), "{}", stderr(&out));
    let bin = env.trim().strip_prefix("RPG_BIN=").expect("RPG_BIN is set");
    let version = Command::new(bin).arg("--version").output().unwrap();
    assert!(
        stdout(&version).starts_with("rpg "),
        "the unpacked binary runs"
    );

    let wrong = sha256_hex(b"something else");
    let (out, env) = fetch_binary(d.path(), &url, &wrong);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("expected"), "{}", stderr(&out));
    assert_eq!(env, "", "a binary that fails its check is never used");

    let (out, env) = fetch_binary(d.path(), &format!("{}/missing", server.uri()), &wrong);
    assert!(!out.status.success());
    assert_eq!(env, "");
    let (out, _) = fetch_binary(d.path(), &url, "not-a-sha");
    assert_eq!(out.status.code(), Some(2));
}

/// run.sh in `checkout` for an issue or pull-request event against a mock
/// GitHub at `api`.
fn run_comment_mode(
    checkout: &Path,
    mode: &str,
    event: &Path,
    api: &str,
    shas: (&str, &str),
) -> Output {
    Command::new("bash")
        .arg(project_root().join("action/run.sh"))
        .current_dir(checkout)
        .env("RPG_MODE", mode)
        .env("RPG_BIN", env!("CARGO_BIN_EXE_rpg"))
        .env("GITHUB_EVENT_PATH", event)
        .env("GITHUB_TOKEN", "ghs_token")
        .env("GITHUB_REPOSITORY", "octo-org/fixpkg")
        .env("GITHUB_API_URL", api)
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env("RPG_BASE_SHA", shas.0)
        .env("RPG_HEAD_SHA", shas.1)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run action/run.sh")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_comment_modes_post_from_a_shallow_checkout() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let (d, dev, remote) = fixture_with_remote();
    // The repository commits its graph; a pull request adds a module.
    crate::common::ok(crate::common::rpg(&dev, &["init"]));
    git(&dev, &["add", ".rpg"]);
    git(&dev, &["commit", "-qm", "graph"]);
    git(&dev, &["push", "-q", "origin", "main"]);
    let base = git(&dev, &["rev-parse", "HEAD"]).trim().to_string();
    git(&dev, &["checkout", "-qb", "feature"]);
    let head = commit_zebra(&dev);
    git(&dev, &["push", "-q", "origin", "feature"]);
    let ci = d.path().join("ci");
    shallow_checkout(&remote, &ci);

    let gh = MockServer::start().await;
    for n in [7, 8] {
        let comments = format!("/repos/octo-org/fixpkg/issues/{n}/comments");
        Mock::given(method("GET"))
            .and(path(comments.as_str()))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!([])))
            .mount(&gh)
            .await;
        Mock::given(method("POST"))
            .and(path(comments.as_str()))
            .respond_with(ResponseTemplate::new(201).set_body_json(serde_json::json!({"id": n})))
            .expect(1)
            .mount(&gh)
            .await;
    }
    let issue = project_root().join("fixtures/events/issues-opened.json");
    let out = run_comment_mode(&ci, "issue-comment", &issue, &gh.uri(), ("", ""));
    assert!(out.status.success(), "{}", stderr(&out));
    // The issue's ranking reads recent history, which the shallow
    // checkout lacked: the action fetched it.
    let count = |r: &Path| git(r, &["rev-list", "--count", "HEAD"]).trim().to_string();
    assert_eq!(
        count(&ci),
        git(&dev, &["rev-list", "--count", "main"]).trim()
    );

    let pr =
        std::fs::read_to_string(project_root().join("fixtures/events/pull_request-opened.json"))
            .unwrap()
            .replace("BASE_SHA", &base)
            .replace("HEAD_SHA", &head);
    let pr_event = d.path().join("pr.json");
    std::fs::write(&pr_event, pr).unwrap();
    let out = run_comment_mode(&ci, "pr-comment", &pr_event, &gh.uri(), (&base, &head));
    assert!(out.status.success(), "{}", stderr(&out));
    let posts: Vec<String> = gh
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == "POST")
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert_eq!(posts.len(), 2);
    assert!(posts[0].contains("Request.split_host"), "{}", posts[0]);
    assert!(posts[1].contains("zebra.py:stripe_count"), "{}", posts[1]);
}

/// Run action/cache-key.sh on `dir`; returns what it wrote to `$GITHUB_OUTPUT`.
fn cache_key(dir: &Path) -> String {
    let out_file = dir.join("github-output");
    let _ = std::fs::remove_file(&out_file);
    let out = Command::new("bash")
        .arg(project_root().join("action/cache-key.sh"))
        .arg(dir)
        .env("GITHUB_OUTPUT", &out_file)
        .env("RUNNER_OS", "Linux")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::read_to_string(&out_file).unwrap()
}

#[test]
fn the_build_cache_key_follows_the_actions_own_cargo_lock() {
    // hashFiles() cannot see the action's directory; the key must still
    // change when rpg's dependencies do.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("Cargo.lock"), "version = 4\n").unwrap();
    let first = cache_key(d.path());
    assert_eq!(
        first,
        format!("key=rpg-Linux-{}\n", sha256_hex(b"version = 4\n"))
    );
    assert_eq!(cache_key(d.path()), first);
    std::fs::write(d.path().join("Cargo.lock"), "version = 4\n# bumped\n").unwrap();
    assert_ne!(cache_key(d.path()), first);
    // Without a lock file there is nothing to key on: an error, not "".
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(project_root().join("action/cache-key.sh"))
        .arg(empty.path())
        .env("GITHUB_OUTPUT", empty.path().join("o"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // The action uses it rather than hashFiles on its own path.
    let action = std::fs::read_to_string(project_root().join("action.yml")).unwrap();
    assert!(action.contains("action/cache-key.sh"));
    assert!(!action.contains("hashFiles"));
}

/// The release asset the Action looks for on this machine.
fn host_asset() -> String {
    let target = match std::env::consts::ARCH {
        "aarch64" => "aarch64-unknown-linux-gnu",
        _ => "x86_64-unknown-linux-gnu",
    };
    format!("rpg-{target}.tar.gz")
}

/// Run action/fetch-release.sh for `repo@git_ref` against `base`; returns
/// the run, what it wrote to `$GITHUB_ENV` and to `$GITHUB_OUTPUT`.
fn fetch_release(dir: &Path, base: &str, git_ref: &str) -> (Output, String, String) {
    let env_file = dir.join("github-env");
    let out_file = dir.join("github-output");
    let _ = std::fs::remove_file(&env_file);
    let _ = std::fs::remove_file(&out_file);
    let out = Command::new("bash")
        .arg(project_root().join("action/fetch-release.sh"))
        .args(["someone/rpg", git_ref])
        .arg(dir.join("bin"))
        .env("RPG_RELEASE_BASE", base)
        .env("GITHUB_ENV", &env_file)
        .env("GITHUB_OUTPUT", &out_file)
        .output()
        .unwrap();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (out, read(&env_file), read(&out_file))
}

/// A release as GitHub serves it: `SHA256SUMS` and the archives it lists.
async fn serve_release(
    server: &wiremock::MockServer,
    tag: &str,
    assets: &[(&str, Vec<u8>)],
    sums: &str,
) {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    let dir = format!("/someone/rpg/releases/download/{tag}");
    Mock::given(method("GET"))
        .and(path(format!("{dir}/SHA256SUMS")))
        .respond_with(ResponseTemplate::new(200).set_body_string(sums))
        .mount(server)
        .await;
    for (name, bytes) in assets {
        Mock::given(method("GET"))
            .and(path(format!("{dir}/{name}")))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(bytes.clone()))
            .mount(server)
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_action_uses_the_release_for_its_ref_and_builds_only_without_one() {
    let d = tempfile::tempdir().unwrap();
    let bytes = release_archive(d.path());
    let asset = host_asset();
    let server = wiremock::MockServer::start().await;
    let good = format!("{}  {asset}\n", sha256_hex(&bytes));
    serve_release(&server, "v1.0.0", &[(&asset, bytes.clone())], &good).await;
    let bad = format!("{}  {asset}\n", sha256_hex(b"another build"));
    serve_release(&server, "v1.0.1", &[(&asset, bytes.clone())], &bad).await;
    serve_release(&server, "v1.0.2", &[], &good).await;

    // The release for the ref, checked, unpacked and used.
    let (out, env, found) = fetch_release(d.path(), &server.uri(), "v1.0.0");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(found, "found=true\n");
    let bin = env.trim().strip_prefix("RPG_BIN=").expect("RPG_BIN is set");
    let version = Command::new(bin).arg("--version").output().unwrap();
    assert!(
        stdout(&version).starts_with("rpg "),
        "the released binary runs"
    );

    // A checksum that differs is refused, and not built around.
    let (out, env, found) = fetch_release(d.path(), &server.uri(), "v1.0.1");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!((env.as_str(), found.as_str()), ("", ""));

    // No asset, no release, or a ref that is no release: build from source.
    for git_ref in [
        "v1.0.2",
        "v9.9.9",
        "main",
        "0123456789abcdef0123456789abcdef01234567",
    ] {
        let (out, env, found) = fetch_release(d.path(), &server.uri(), git_ref);
        assert!(out.status.success(), "{git_ref}: {}", stderr(&out));
        assert_eq!(found, "found=false\n", "{git_ref}");
        assert_eq!(env, "", "{git_ref}");
        assert!(
            stderr(&out).contains("building rpg from source"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn the_action_builds_from_source_only_when_no_binary_was_found() {
    let action = std::fs::read_to_string(project_root().join("action.yml")).unwrap();
    assert!(action.contains("action/fetch-release.sh"));
    // Every build step waits on the release step's verdict.
    for step in [
        "Key the rpg build cache",
        "Cache the rpg build",
        "Install a Rust toolchain",
        "Build rpg",
    ] {
        let at = action.find(&format!("- name: {step}")).expect(step);
        let cond = action[at..]
            .lines()
            .find(|l| l.trim_start().starts_with("if:"))
            .unwrap();
        assert!(
            cond.contains("steps.rpg-release.outputs.found != 'true'"),
            "{step}: {cond}"
        );
    }
    // The release publishes every asset the Action looks for.
    let release =
        std::fs::read_to_string(project_root().join(".github/workflows/release.yml")).unwrap();
    let script = std::fs::read_to_string(project_root().join("action/fetch-release.sh")).unwrap();
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(
            script.contains(&format!(") target={target} ;;")),
            "{target}"
        );
        assert!(release.contains(&format!("target: {target},")), "{target}");
    }
    assert!(release.contains("sha256sum rpg-* > SHA256SUMS"));
}

/// The action advertises only inputs it honours: every input it declares
/// is used, every input it uses is declared, and none asks for a model it
/// would refuse (the Action lifts offline).
#[test]
fn the_action_declares_exactly_the_inputs_it_uses() {
    let action = std::fs::read_to_string(project_root().join("action.yml")).unwrap();
    let block = &action[action.find("\ninputs:\n").unwrap()..action.find("\nruns:\n").unwrap()];
    let declared: std::collections::BTreeSet<&str> = block
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && l.ends_with(':'))
        .map(|l| l.trim().trim_end_matches(':'))
        .collect();
    let used: std::collections::BTreeSet<&str> = action
        .match_indices("inputs.")
        .map(|(i, _)| {
            let rest = &action[i + "inputs.".len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .unwrap();
            &rest[..end]
        })
        .collect();
    assert_eq!(declared, used);
    for gone in ["lifter", "model", "base-url"] {
        assert!(!declared.contains(gone), "{gone}");
    }
}
