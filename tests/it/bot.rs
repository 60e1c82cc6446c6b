//! `rpg bot` against a mock GitHub REST server: the real octocrab client,
//! real event payloads from fixtures/events, the real binary.

use crate::common::{
    bare_remote_with_graph, commit_normalize_change, commit_zebra, fixture, git, indexed_fixture,
    ok, project_root, repo_of, rpg, stderr, stdout,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use wiremock::matchers::{body_string_contains, method, path, query_param};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const TOKEN: &str = "ghs_s3cr3t-token-never-printed";
const COMMENTS: &str = "/repos/octo-org/fixpkg/issues/7/comments";

fn event(name: &str) -> PathBuf {
    project_root().join("fixtures/events").join(name)
}

/// `rpg bot <args>` in `repo` with the Actions environment pointing at `api`.
fn bot(repo: &Path, api: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rpg"))
        .arg("bot")
        .args(args)
        .current_dir(repo)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", "octo-org/fixpkg")
        .env("GITHUB_API_URL", api)
        .env("GITHUB_SERVER_URL", "https://github.example")
        .env_remove("GITHUB_EVENT_PATH")
        .output()
        .expect("run rpg bot")
}

fn issue_comment(repo: &Path, api: &str, event_file: &str) -> Output {
    let e = event(event_file);
    bot(
        repo,
        api,
        &["issue-comment", "--event", e.to_str().unwrap()],
    )
}

/// GitHub lists no comments on the issue at `comments`.
async fn no_comments_yet(gh: &MockServer, comments: &str) {
    Mock::given(method("GET"))
        .and(path(comments))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!([])))
        .mount(gh)
        .await;
}

/// GitHub expects exactly one new comment at `comments`, and names it `id`.
async fn expects_one_new_comment(gh: &MockServer, comments: &str, id: u64) {
    Mock::given(method("POST"))
        .and(path(comments))
        .respond_with(ResponseTemplate::new(201).set_body_json(serde_json::json!({ "id": id })))
        .expect(1)
        .mount(gh)
        .await;
}

fn comment_json(id: u64, body: &str, login: &str, kind: &str) -> serde_json::Value {
    serde_json::json!({"id": id, "body": body, "user": {"login": login, "type": kind}})
}

fn requests_to(reqs: &[Request], verb: &str) -> Vec<Request> {
    reqs.iter()
        .filter(|r| r.method.as_str() == verb)
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_issue_gets_one_new_comment_with_the_scaffold() {
    let (_d, repo) = indexed_fixture();
    let gh = MockServer::start().await;
    no_comments_yet(&gh, COMMENTS).await;
    expects_one_new_comment(&gh, COMMENTS, 99).await;
    let out = issue_comment(&repo, &gh.uri(), "issues-opened.json");
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = gh.received_requests().await.unwrap();
    let post = &requests_to(&reqs, "POST")[0];
    assert_eq!(
        post.headers.get("authorization").unwrap().to_str().unwrap(),
        format!("Bearer {TOKEN}")
    );
    let body: serde_json::Value = serde_json::from_slice(&post.body).unwrap();
    let body = body["body"].as_str().unwrap();
    assert!(body.starts_with("<!-- rpg:locate -->\n"), "{body}");
    assert!(body.contains("src/fixpkg/models.py"));
    assert!(body.contains("Request.split_host"));
    // Links point at the graph's commit on the configured server.
    let head = git(&repo, &["rev-parse", "HEAD"]);
    assert!(body.contains(&format!(
        "https://github.example/octo-org/fixpkg/blob/{}/src/fixpkg/models.py#L",
        head.trim()
    )));
    // The comment quotes no line of the issue (whose own "@maintainer" and
    // "<img>" would ping and render), and every name it shows, the ones
    // the issue cites included, sits in a code span: the live text holds
    // none. Hostile names from the repository are tested in
    // hostile_names_from_the_repository_never_ping_or_render_as_html.
    let issue: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            crate::common::project_root().join("fixtures/events/issues-opened.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for line in issue["issue"]["body"].as_str().unwrap().lines() {
        assert!(
            line.trim().is_empty() || !body.contains(line.trim()),
            "quoted: {line}"
        );
    }
    let live = live_text(body);
    assert!(
        !live.contains("split_host") && !live.contains('@'),
        "{live}"
    );
    assert!(!stderr(&out).contains(TOKEN) && !stdout(&out).contains(TOKEN));
}

/// What GitHub would render live: table cells split at pipes, code spans
/// (balanced backticks) removed.
fn live_text(md: &str) -> String {
    md.lines()
        .flat_map(|l| l.split('|'))
        .map(|cell| {
            let parts: Vec<&str> = cell.split('`').collect();
            if parts.len().is_multiple_of(2) {
                return cell.to_string();
            }
            parts
                .iter()
                .step_by(2)
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn hostile_names_from_the_repository_never_ping_or_render_as_html() {
    let (_d, repo) = indexed_fixture();
    let hostile = "src/fixpkg/a|b`@maintainer <img src=x onerror=alert(1)>`.py";
    std::fs::write(
        repo.join(hostile),
        "def split_host_ipv6(url):\n    \"\"\"Split an IPv6 host @maintainer <b>bold</b>.\"\"\"\n    return url\n",
    )
    .unwrap();
    git(&repo, &["add", "-A", "--", "src"]);
    git(&repo, &["commit", "-qm", "hostile"]);
    ok(rpg(&repo, &["update"]));
    let e = event("issues-opened.json");
    // The dry run prints exactly the body a real run posts.
    let body = ok(bot(
        &repo,
        "http://127.0.0.1:9",
        &["issue-comment", "--event", e.to_str().unwrap(), "--dry-run"],
    ));
    assert!(
        body.contains("split_host_ipv6"),
        "the hostile file is in the comment: {body}"
    );
    let live = live_text(&body);
    assert!(!live.contains("@maintainer"), "{live}");
    assert!(!live.contains("<img") && !live.contains("<b>"), "{live}");
}

#[test]
fn hostile_names_in_a_pr_delta_never_ping_or_render_as_html() {
    use rpg::evolve::{Event, EventKind, UpdateReport};
    let r = UpdateReport {
        events: vec![Event {
            event: EventKind::Relocate,
            id: "src/a|b`@maintainer <img src=x onerror=alert(1)>`.py:f".into(),
            kind: rpg::parse::Kind::Function,
            from: Some("x|@team <b>/y/z".into()),
            leaf: Some("a/b/@everyone <script>".into()),
            drift: Some(0.9),
        }],
        ..UpdateReport::default()
    };
    let live = live_text(&rpg::bot::comment::delta_body(&r, "a", "b"));
    for bad in [
        "@maintainer",
        "@team",
        "@everyone",
        "<img",
        "<b>",
        "<script",
    ] {
        assert!(!live.contains(bad), "{bad} is live in:\n{live}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issue_that_matches_nothing_gets_no_comment() {
    let (d, repo) = indexed_fixture();
    let gh = MockServer::start().await;
    no_comments_yet(&gh, COMMENTS).await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(201).set_body_json(serde_json::json!({"id": 1})))
        .expect(0)
        .mount(&gh)
        .await;
    let mut ev: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(event("issues-opened.json")).unwrap())
            .unwrap();
    ev["issue"]["title"] = "zzqx vvkq".into();
    ev["issue"]["body"] = "qqzv".into();
    let file = d.path().join("nothing.json");
    std::fs::write(&file, ev.to_string()).unwrap();
    let out = bot(
        &repo,
        &gh.uri(),
        &["issue-comment", "--event", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing to say"), "{}", stderr(&out));
    assert!(requests_to(&gh.received_requests().await.unwrap(), "POST").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_retried_three_times_then_reported() {
    let (_d, repo) = indexed_fixture();
    let gh = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(502).insert_header("retry-after", "0"))
        .mount(&gh)
        .await;
    let out = issue_comment(&repo, &gh.uri(), "issues-opened.json");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out)
            .trim()
            .lines()
            .last()
            .map(|l| l.contains("502")),
        Some(true),
        "{}",
        stderr(&out)
    );
    // The first try and three retries, no more.
    assert_eq!(gh.received_requests().await.unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_issue_updates_the_marker_comment_found_on_page_two() {
    let (_d, repo) = indexed_fixture();
    let gh = MockServer::start().await;
    let page2 = format!("{}{COMMENTS}?per_page=100&page=2", gh.uri());
    // A human quoting the marker is not the bot's comment.
    let page1: Vec<_> = (1..=100)
        .map(|i| {
            comment_json(
                i,
                "<!-- rpg:locate --> quoted by a human",
                "octocat",
                "User",
            )
        })
        .collect();
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .and(query_param("page", "2"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(serde_json::json!([comment_json(
                4242,
                "<!-- rpg:locate -->\nold answer",
                "github-actions[bot]",
                "Bot"
            )])),
        )
        .mount(&gh)
        .await;
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("link", format!("<{page2}>; rel=\"next\"").as_str())
                .set_body_json(serde_json::json!(page1)),
        )
        .mount(&gh)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/octo-org/fixpkg/issues/comments/4242"))
        .and(body_string_contains("rpg:locate"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": 4242})))
        .expect(1)
        .mount(&gh)
        .await;
    let out = issue_comment(&repo, &gh.uri(), "issues-edited.json");
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = gh.received_requests().await.unwrap();
    assert!(
        requests_to(&reqs, "POST").is_empty(),
        "a duplicate was posted"
    );
    assert!(stderr(&out).contains("updated comment 4242"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opted_out_bot_authored_and_pull_request_events_get_no_comment() {
    let (_d, repo) = indexed_fixture();
    let gh = MockServer::start().await;
    for (file, why) in [
        ("issues-opted-out.json", "opt-out label"),
        ("issues-by-bot.json", "bot account"),
        ("issue_comment-on-pr.json", "is a pull request"),
        ("pull_request-opened.json", "pull request event"),
        ("push.json", "push event"),
    ] {
        let out = issue_comment(&repo, &gh.uri(), file);
        assert!(out.status.success(), "{file}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{file}: {}", stderr(&out));
    }
    assert!(gh.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_without_a_graph_gets_no_comment() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let gh = MockServer::start().await;
    let out = issue_comment(&repo, &gh.uri(), "issues-opened.json");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("no graph"));
    assert!(gh.received_requests().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_clear_errors_that_never_print_the_token() {
    let (_d, repo) = indexed_fixture();
    for (status, expect) in [
        (401, "token is missing, expired or invalid (HTTP 401)"),
        (403, "`issues: write` and `pull-requests: write` (HTTP 403)"),
        (404, "(HTTP 404)"),
        (422, "refused the content (HTTP 422)"),
    ] {
        let gh = MockServer::start().await;
        no_comments_yet(&gh, COMMENTS).await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(status)
                    .set_body_json(serde_json::json!({"message": "Bad credentials or so"})),
            )
            .mount(&gh)
            .await;
        let out = issue_comment(&repo, &gh.uri(), "issues-opened.json");
        assert_eq!(out.status.code(), Some(2), "{status}");
        let err = stderr(&out);
        assert!(err.contains(expect), "{status}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!err.contains(TOKEN));
        // Refusals are final: one attempt each.
        assert_eq!(
            requests_to(&gh.received_requests().await.unwrap(), "POST").len(),
            1
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_rpg"))
        .args(["bot", "issue-comment", "--event"])
        .arg(event("issues-opened.json"))
        .current_dir(&repo)
        .env_remove("GITHUB_TOKEN")
        .env("GITHUB_REPOSITORY", "octo-org/fixpkg")
        .env("GITHUB_API_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no GitHub token"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_and_server_errors_are_retried_as_github_asks() {
    let (_d, repo) = indexed_fixture();
    let gh = MockServer::start().await;
    // First a primary rate limit, then a flaky 502, then the answer.
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("retry-after", "1")
                .insert_header("x-ratelimit-remaining", "0")
                .set_body_json(serde_json::json!({"message": "API rate limit exceeded"})),
        )
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&gh)
        .await;
    Mock::given(method("GET"))
        .and(path(COMMENTS))
        .respond_with(ResponseTemplate::new(502).insert_header("retry-after", "0"))
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&gh)
        .await;
    no_comments_yet(&gh, COMMENTS).await;
    expects_one_new_comment(&gh, COMMENTS, 1).await;
    let started = std::time::Instant::now();
    let out = issue_comment(&repo, &gh.uri(), "issues-opened.json");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(1),
        "Retry-After ignored"
    );
    let reqs = gh.received_requests().await.unwrap();
    assert_eq!(requests_to(&reqs, "GET").len(), 3);
    assert!(stderr(&out).contains("answered 403; retrying in 1s"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_that_outlasts_the_run_is_reported_not_waited_out() {
    let (_d, repo) = indexed_fixture();
    let gh = MockServer::start().await;
    let reset = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(403)
                .insert_header("x-ratelimit-remaining", "0")
                .insert_header("x-ratelimit-reset", reset.to_string().as_str()),
        )
        .mount(&gh)
        .await;
    let out = issue_comment(&repo, &gh.uri(), "issues-opened.json");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("rate limit holds"),
        "{}",
        stderr(&out)
    );
    assert_eq!(gh.received_requests().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_gets_its_graph_delta() {
    let (_d, repo) = indexed_fixture();
    // The committed graph describes the base; the PR adds a module.
    ok(rpg(&repo, &["update", "--snapshot"]));
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "graph"]);
    let base = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    let head = commit_zebra(&repo);
    git(&repo, &["checkout", "-q", &base]);
    let text = std::fs::read_to_string(event("pull_request-opened.json"))
        .unwrap()
        .replace("BASE_SHA", &base)
        .replace("HEAD_SHA", &head);
    let ev = repo.join("../event.json");
    std::fs::write(&ev, text).unwrap();
    let gh = MockServer::start().await;
    let pr_comments = "/repos/octo-org/fixpkg/issues/8/comments";
    no_comments_yet(&gh, pr_comments).await;
    expects_one_new_comment(&gh, pr_comments, 5).await;
    let snapshot_before = std::fs::read(repo.join(".rpg/graph.jsonl")).unwrap();
    let out = bot(
        &repo,
        &gh.uri(),
        &["pr-comment", "--event", ev.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = gh.received_requests().await.unwrap();
    let body: serde_json::Value =
        serde_json::from_slice(&requests_to(&reqs, "POST")[0].body).unwrap();
    let body = body["body"].as_str().unwrap();
    assert!(body.starts_with("<!-- rpg:pr-delta -->\n"), "{body}");
    assert!(
        body.contains("| inserted | `src/fixpkg/zebra.py:stripe_count` |"),
        "{body}"
    );
    assert!(
        body.contains("1 files changed; 2 inserted, 0 modified, 0 drifted, 0 moved, 0 deleted"),
        "{body}"
    );
    assert!(body.contains("**Categories touched:**"), "{body}");
    // The repository's own graph is left as it was.
    assert_eq!(
        std::fs::read(repo.join(".rpg/graph.jsonl")).unwrap(),
        snapshot_before
    );
}

#[test]
fn push_check_skips_pushes_that_only_changed_the_snapshot() {
    let (_d, repo) = indexed_fixture();
    let check = |file: &str| {
        Command::new(env!("CARGO_BIN_EXE_rpg"))
            .args(["bot", "push-check", "--event"])
            .arg(event(file))
            .current_dir(&repo)
            .output()
            .unwrap()
    };
    assert_eq!(check("push.json").status.code(), Some(0));
    assert_eq!(check("push-snapshot-only.json").status.code(), Some(1));
    let wrong = check("issues-opened.json");
    assert_eq!(wrong.status.code(), Some(2));
    assert!(stderr(&wrong).contains("needs a push event"));
}

#[test]
fn malformed_events_and_environments_are_one_line_errors() {
    let (d, repo) = indexed_fixture();
    let junk = d.path().join("junk.json");
    std::fs::write(&junk, "{\"zen\": \"Keep it logically awesome.\"}").unwrap();
    let out = rpg(
        &repo,
        &[
            "bot",
            "issue-comment",
            "--dry-run",
            "--event",
            junk.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("neither an issue"),
        "{}",
        stderr(&out)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_rpg"))
        .args(["bot", "issue-comment", "--event"])
        .arg(event("issues-opened.json"))
        .current_dir(&repo)
        .env("GITHUB_TOKEN", TOKEN)
        .env("GITHUB_REPOSITORY", "../../etc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("owner/name"), "{}", stderr(&out));
}

#[test]
fn a_dry_run_links_like_the_real_comment_when_the_environment_says_where() {
    let (_d, repo) = indexed_fixture();
    let e = event("issues-opened.json");
    let body = ok(bot(
        &repo,
        "http://127.0.0.1:9",
        &["issue-comment", "--event", e.to_str().unwrap(), "--dry-run"],
    ));
    let head = git(&repo, &["rev-parse", "HEAD"]);
    assert!(
        body.contains(&format!(
            "https://github.example/octo-org/fixpkg/blob/{}/src/fixpkg/models.py#L",
            head.trim()
        )),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_the_issue_cites_is_fetched_into_a_shallow_checkout() {
    // A developer changes normalize, then commits more and the graph.
    let d = fixture("python-repo.sh");
    let cited = commit_normalize_change(&repo_of(&d));
    commit_zebra(&repo_of(&d));
    let remote = bare_remote_with_graph(&d);
    // CI checks out one commit.
    let ci = d.path().join("ci");
    let url = format!("file://{}", remote.display());
    git(
        d.path(),
        &["clone", "-q", "--depth=1", &url, ci.to_str().unwrap()],
    );
    assert!(!Command::new("git")
        .args(["cat-file", "-e", &cited])
        .current_dir(&ci)
        .status()
        .unwrap()
        .success());

    let mut event: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(event("issues-opened.json")).unwrap())
            .unwrap();
    event["issue"]["title"] = "Something broke".into();
    event["issue"]["body"] = format!("It worked before {cited}.").into();
    let event_file = d.path().join("cites.json");
    std::fs::write(&event_file, event.to_string()).unwrap();
    let gh = MockServer::start().await;
    no_comments_yet(&gh, COMMENTS).await;
    expects_one_new_comment(&gh, COMMENTS, 99).await;
    let out = bot(
        &ci,
        &gh.uri(),
        &["issue-comment", "--event", event_file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = gh.received_requests().await.unwrap();
    let body: serde_json::Value =
        serde_json::from_slice(&requests_to(&reqs, "POST")[0].body).unwrap();
    assert!(
        body["body"].as_str().unwrap().contains("normalize"),
        "{body}"
    );
}
