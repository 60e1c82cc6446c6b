//! The model lifter against a mock OpenAI-compatible server: the real
//! async-openai client path, the real binary. The mock answers every key
//! its strict schema asks for, reports usage, and misbehaves on request.

use crate::common::{fixture, git, ok, repo_of, stderr, stdout};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const KEY: &str = "sk-test-key-never-printed";

/// How the mock misbehaves.
#[derive(Clone, Copy, Default)]
struct Faults {
    /// Leave the first requested key out of the first lifting reply.
    drop_first_key: bool,
    /// Answer the first request with prose instead of JSON.
    malformed_first: bool,
    /// Answer every request with this status.
    always_status: Option<u16>,
    /// Delay each answer.
    delay_ms: u64,
    /// Answer the first request with 429 and this `Retry-After` (seconds).
    rate_limit_first: Option<u64>,
    /// The model's verdict on whether a modification changed purpose.
    changed_purpose: bool,
}

#[derive(Default)]
struct Seen {
    bodies: Vec<Value>,
    auth: Vec<String>,
    /// Keys of lifting requests, per request, in arrival order.
    lift_keys: Vec<Vec<String>>,
    /// When each request arrived.
    at: Vec<std::time::Instant>,
}

#[derive(Clone)]
struct Model {
    faults: Faults,
    seen: Arc<Mutex<Seen>>,
}

fn schema_of(body: &Value) -> &Value {
    &body["response_format"]["json_schema"]["schema"]
}

fn system_of(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn required(body: &Value) -> Vec<String> {
    schema_of(body)["required"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|k| k.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The last two words of the code shown for `key`, so features follow
/// edits.
fn last_words(body: &Value, key: &str) -> String {
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    let Some(start) = user.find(&format!("[{key}] ")) else {
        return String::new();
    };
    let rest = &user[start..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    let words: Vec<&str> = rest[..end]
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 3)
        .collect();
    words[words.len().saturating_sub(2)..]
        .join(" ")
        .to_lowercase()
}

/// What a well-behaved model would answer.
fn answer(body: &Value, changed_purpose: bool) -> Value {
    let name = body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or_default();
    let system = system_of(body);
    match name {
        "areas" => json!({"areas": ["Core Logic", "support tools"]}),
        "route" => {
            let options = schema_of(body)["properties"]["choice"]["enum"].clone();
            json!({"choice": options[0]})
        }
        "drift" => json!({"changed_purpose": changed_purpose}),
        _ => {
            let mut m = serde_json::Map::new();
            for k in required(body) {
                let words: String = k
                    .chars()
                    .map(|c| {
                        if c.is_alphanumeric() {
                            c.to_ascii_lowercase()
                        } else {
                            ' '
                        }
                    })
                    .collect();
                let words = words.split_whitespace().collect::<Vec<_>>().join(" ");
                let v = if system.contains("three-level") {
                    json!(format!("core logic/handle {words}/details"))
                } else {
                    json!([
                        format!("compute {words} result"),
                        format!("Validate {words}"),
                        format!("check {}", last_words(body, &k)),
                    ])
                };
                m.insert(k, v);
            }
            Value::Object(m)
        }
    }
}

fn completion(content: &str, body: &Value) -> ResponseTemplate {
    let prompt = body.to_string().len() as u64 / 4;
    let completion = content.len() as u64 / 4;
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": body["model"],
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion
        }
    }))
}

impl Respond for Model {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let mut seen = self.seen.lock().unwrap();
        let first = seen.bodies.is_empty();
        seen.bodies.push(body.clone());
        seen.at.push(std::time::Instant::now());
        seen.auth.push(
            req.headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string(),
        );
        let lifting = system_of(&body).contains("extract semantic features");
        let first_lift = lifting && seen.lift_keys.is_empty();
        if lifting {
            seen.lift_keys.push(required(&body));
        }
        drop(seen);
        let delay = Duration::from_millis(self.faults.delay_ms);
        if let Some(status) = self.faults.always_status {
            // Real servers echo the key they were given.
            let message = format!("mock failure for key {KEY}");
            return ResponseTemplate::new(status)
                .set_body_json(json!({"error": {"message": message, "type": "server_error"}}))
                .set_delay(delay);
        }
        if let Some(secs) = self.faults.rate_limit_first.filter(|_| first) {
            return ResponseTemplate::new(429)
                .insert_header("retry-after", secs.to_string().as_str())
                .set_body_json(json!({"error": {"message": "slow down", "type": "rate_limit"}}));
        }
        if self.faults.malformed_first && first {
            return completion("Sure! Here are the features: parse things", &body).set_delay(delay);
        }
        let mut reply = answer(&body, self.faults.changed_purpose);
        if self.faults.drop_first_key && first_lift {
            if let Some(k) = required(&body).first() {
                reply.as_object_mut().unwrap().remove(k);
            }
        }
        completion(&reply.to_string(), &body).set_delay(delay)
    }
}

async fn model(faults: Faults) -> (MockServer, Arc<Mutex<Seen>>) {
    let server = MockServer::start().await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Model {
            faults,
            seen: seen.clone(),
        })
        .mount(&server)
        .await;
    (server, seen)
}

/// The Python fixture with `[lift]` pointing at the mock.
fn fixture_with_model(server: &MockServer, extra: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    std::fs::create_dir_all(repo.join(".rpg")).unwrap();
    std::fs::write(
        repo.join(".rpg/config.toml"),
        format!("[lift]\nmodel = \"mock-model\"\nmax_retries = 2\ntimeout_secs = 20\n{extra}"),
    )
    .unwrap();
    // Whether the key is spent, and where code and the key go, is the
    // user's choice, never the repository's.
    let user = user_config_home(&repo).join("rpg");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("config.toml"),
        format!(
            "[lift]\nlifter = \"llm\"\nbase_url = \"{}/v1\"\n",
            server.uri()
        ),
    )
    .unwrap();
    (d, repo)
}

/// The fixture's stand-in for `$XDG_CONFIG_HOME`, beside the repository.
fn user_config_home(repo: &Path) -> std::path::PathBuf {
    repo.parent().unwrap().join("xdg-config")
}

fn rpg_llm(repo: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rpg"))
        .args(args)
        .current_dir(repo)
        .env("XDG_CONFIG_HOME", user_config_home(repo))
        .env("OPENAI_API_KEY", KEY)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("RPG_MODEL")
        .output()
        .expect("run rpg")
}

fn json_of(o: Output) -> Value {
    serde_json::from_str(&ok(o)).expect("JSON output")
}

fn graph_entities(repo: &Path) -> Vec<Value> {
    let path = repo.join(".rpg/graph.jsonl");
    let g = rpg::store::snapshot::from_bytes(&std::fs::read(&path).unwrap(), &path).unwrap();
    g.entities
        .values()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

fn requests(seen: &Arc<Mutex<Seen>>) -> usize {
    seen.lock().unwrap().bodies.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_lifts_every_entity_with_strict_schemas_and_reports_usage() {
    let (server, seen) = model(Faults::default()).await;
    let (_d, repo) = fixture_with_model(&server, "");
    let out = json_of(rpg_llm(&repo, &["init", "--json"]));
    let m = &out["model"];
    assert_eq!(m["model"], "mock-model");
    assert_eq!(m["entities_offline"], 0, "{out}");
    assert!(m["entities_lifted"].as_u64().unwrap() > 10, "{out}");
    assert!(m["prompt_tokens"].as_u64().unwrap() > 0);
    assert_eq!(out["lifter"], "llm/mock-model");

    let seen = seen.lock().unwrap();
    for (body, auth) in seen.bodies.iter().zip(&seen.auth) {
        assert_eq!(auth, &format!("Bearer {KEY}"));
        assert_eq!(body["model"], "mock-model");
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(body["response_format"]["json_schema"]["strict"], true);
        let schema = schema_of(body);
        assert_eq!(schema["additionalProperties"], false, "{body}");
    }
    // Every lifting request's schema requires exactly the keys it asks for.
    let lifts: Vec<&Value> = seen
        .bodies
        .iter()
        .filter(|b| system_of(b).contains("extract semantic features"))
        .collect();
    assert!(!lifts.is_empty());
    for b in &lifts {
        let keys = required(b);
        let props: BTreeSet<String> = schema_of(b)["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(props, keys.iter().cloned().collect::<BTreeSet<_>>());
        let user = b["messages"][1]["content"].as_str().unwrap();
        for k in &keys {
            assert!(
                user.contains(&format!("[{k}]")),
                "{k} not shown in the prompt"
            );
        }
        assert_eq!(schema_of(b)["properties"][&keys[0]]["maxItems"], 5);
    }
    // A class travels with its methods.
    let with_request = lifts
        .iter()
        .find(|b| required(b).contains(&"Request".to_string()))
        .expect("Request asked");
    assert!(required(with_request).contains(&"Request.split_host".to_string()));
    // The model reads the code itself, not only names and docstrings.
    let user = with_request["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("return self.url.split(\":\")"), "{user}");
    drop(seen);

    // Features are normalised, every entity says who lifted it, and the
    // hierarchy comes from the model's areas.
    let ents = graph_entities(&repo);
    let split = ents
        .iter()
        .find(|e| e["id"] == "src/fixpkg/models.py:Request.split_host")
        .unwrap();
    assert_eq!(
        split["features"],
        json!([
            "compute request split host result",
            "validate request split host",
            "check url split"
        ])
    );
    assert_eq!(split["lifter"], "llm/mock-model");
    assert!(
        split["leaf"].as_str().unwrap().starts_with("core logic/"),
        "{split}"
    );
    assert!(!stdout(&rpg_llm(&repo, &["status"])).contains(KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_stay_under_the_token_budget_per_request() {
    let (server, seen) = model(Faults::default()).await;
    let (_d, repo) = fixture_with_model(&server, "batch_tokens = 150\nhierarchy = false\n");
    ok(rpg_llm(&repo, &["init"]));
    let seen = seen.lock().unwrap();
    let lifts: Vec<&Vec<String>> = seen.lift_keys.iter().collect();
    assert!(
        lifts.len() >= 3,
        "small budgets make several batches: {lifts:?}"
    );
    // Each key is asked once over all batches.
    let all: Vec<&String> = lifts.iter().flat_map(|k| k.iter()).collect();
    let unique: BTreeSet<&String> = all.iter().copied().collect();
    assert_eq!(all.len(), unique.len(), "{all:?}");
    for b in seen
        .bodies
        .iter()
        .filter(|b| system_of(b).contains("extract semantic features"))
    {
        let user = b["messages"][1]["content"].as_str().unwrap();
        // A batch holds more than one unit only when they fit the budget.
        if required(b).len() > 1 && !user.contains("[Request]") {
            assert!(
                user.len() / 4 <= 150 + 100,
                "batch of {} tokens",
                user.len() / 4
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_init_and_a_no_op_update_ask_nothing() {
    let (server, seen) = model(Faults::default()).await;
    let (_d, repo) = fixture_with_model(&server, "");
    ok(rpg_llm(&repo, &["init"]));
    let first = requests(&seen);
    assert!(first > 0);
    let again = json_of(rpg_llm(&repo, &["init", "--json"]));
    assert_eq!(requests(&seen), first, "re-init asked again");
    assert_eq!(again["model"]["entities_lifted"], 0);
    assert!(again["model"]["entities_cached"].as_u64().unwrap() > 10);
    ok(rpg_llm(&repo, &["update"]));
    assert_eq!(requests(&seen), first, "a no-op update asked");

    // A renamed file keeps its features: nothing to ask.
    git(
        &repo,
        &["mv", "src/fixpkg/util.py", "src/fixpkg/helpers.py"],
    );
    git(&repo, &["commit", "-qm", "rename"]);
    ok(rpg_llm(&repo, &["update"]));
    assert_eq!(requests(&seen), first, "a rename asked again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clone_pays_nothing_for_what_the_committed_snapshot_holds() {
    let (server, seen) = model(Faults::default()).await;
    let (_d, repo) = fixture_with_model(&server, "hierarchy = false\n");
    ok(rpg_llm(&repo, &["init"]));
    let first = requests(&seen);
    assert!(first > 0);
    // What a fresh clone or a CI runner has: the snapshot, no local cache.
    for ignored in ["cache", "store", "vectors", "log"] {
        let _ = std::fs::remove_dir_all(repo.join(".rpg").join(ignored));
    }
    let o = rpg_llm(&repo, &["init", "--json"]);
    assert!(
        stderr(&o).contains("model answers taken from .rpg/graph.jsonl"),
        "{}",
        stderr(&o)
    );
    let again = json_of(o);
    assert_eq!(
        requests(&seen),
        first,
        "paid again for what the snapshot holds"
    );
    assert_eq!(again["model"]["entities_lifted"], 0, "{again}");
    assert_eq!(again["model"]["files_summarized"], 0, "{again}");
    assert!(again["model"]["entities_cached"].as_u64().unwrap() > 10);
    assert!(again["model"]["files_cached"].as_u64().unwrap() > 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_function_commit_lifts_one_entity_and_routes_it() {
    let (server, seen) = model(Faults::default()).await;
    let (_d, repo) = fixture_with_model(&server, "");
    ok(rpg_llm(&repo, &["init"]));
    let before = requests(&seen);
    let util = repo.join("src/fixpkg/util.py");
    let mut text = std::fs::read_to_string(&util).unwrap();
    text.push_str("\n\ndef shout(s):\n    return s.upper()\n");
    std::fs::write(&util, text).unwrap();
    git(&repo, &["commit", "-qam", "shout"]);
    let out = json_of(rpg_llm(&repo, &["update", "--json"]));
    let seen = seen.lock().unwrap();
    let new: Vec<&Value> = seen.bodies[before..].iter().collect();
    let lifted: Vec<&Vec<String>> = seen.lift_keys.iter().rev().take(1).collect();
    assert_eq!(lifted[0], &vec!["shout".to_string()]);
    assert!(new
        .iter()
        .any(|b| b["response_format"]["json_schema"]["name"] == "route"));
    let m = &out["model"];
    assert_eq!(m["entities_lifted"], 1, "{out}");
    assert_eq!(m["routed"], 1, "{out}");
    let ev = out["updates"][0]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "src/fixpkg/util.py:shout")
        .unwrap()
        .clone();
    assert!(
        ev["leaf"].as_str().unwrap().starts_with("core logic/"),
        "{ev}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_with_retry_after_is_waited_out() {
    let (server, seen) = model(Faults {
        rate_limit_first: Some(1),
        ..Faults::default()
    })
    .await;
    let (_d, repo) = fixture_with_model(&server, "concurrency = 1\n");
    let out = json_of(rpg_llm(&repo, &["init", "--json"]));
    assert_eq!(out["model"]["retries"], 1, "{out}");
    assert_eq!(out["model"]["entities_offline"], 0, "{out}");
    // Measured where the server sees it: the retry of the same request
    // came at least the second the server asked for after the 429.
    let s = seen.lock().unwrap();
    assert_eq!(s.bodies[0], s.bodies[1], "the second request is the retry");
    let gap = s.at[1] - s.at[0];
    assert!(gap >= Duration::from_secs(1), "retried after {gap:?}");
    assert!(gap < Duration::from_secs(10), "waited {gap:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_beyond_the_cap_fails_the_request_at_once() {
    let (server, seen) = model(Faults {
        rate_limit_first: Some(3600),
        ..Faults::default()
    })
    .await;
    let (_d, repo) = fixture_with_model(&server, "concurrency = 1\nmax_retry_after_secs = 2\n");
    let started = std::time::Instant::now();
    let o = rpg_llm(&repo, &["init", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "it waited for the hour"
    );
    let s = seen.lock().unwrap();
    assert!(s.at.len() >= 2);
    // The capped request was not retried after any wait worth the name.
    assert!(
        s.at[1] - s.at[0] < Duration::from_secs(2),
        "{:?}",
        s.at[1] - s.at[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_fall_back_offline_and_say_so() {
    let (server, seen) = model(Faults {
        always_status: Some(500),
        ..Faults::default()
    })
    .await;
    let (_d, repo) = fixture_with_model(&server, "concurrency = 1\n");
    let o = rpg_llm(&repo, &["init", "--json"]);
    let err = stderr(&o);
    let out: Value = serde_json::from_str(&ok(o)).unwrap();
    assert!(err.contains("lifted offline"), "{err}");
    assert!(err.contains("HTTP 500"), "{err}");
    assert!(!err.contains(KEY), "{err}");
    assert_eq!(out["model"]["entities_lifted"], 0);
    assert!(out["model"]["entities_offline"].as_u64().unwrap() > 10);
    // Each failed request was retried twice; after three failures in a row
    // the run stops asking.
    assert_eq!(requests(&seen), 3 * 3, "{out}");
    let ents = graph_entities(&repo);
    assert!(ents
        .iter()
        .filter(|e| e["kind"] != "file")
        .all(|e| e["lifter"] == "offline/1"));
    ok(rpg_llm(&repo, &["status"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_gets_one_format_correction() {
    let (server, seen) = model(Faults {
        malformed_first: true,
        ..Faults::default()
    })
    .await;
    let (_d, repo) = fixture_with_model(&server, "concurrency = 1\n");
    let out = json_of(rpg_llm(&repo, &["init", "--json"]));
    assert_eq!(out["model"]["format_retries"], 1, "{out}");
    assert_eq!(out["model"]["entities_offline"], 0, "{out}");
    let seen = seen.lock().unwrap();
    let retry = &seen.bodies[1];
    let msgs = retry["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 4, "{retry}");
    assert_eq!(msgs[2]["role"], "assistant");
    assert!(msgs[3]["content"].as_str().unwrap().contains("JSON"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_entity_is_asked_again_alone() {
    let (server, seen) = model(Faults {
        drop_first_key: true,
        ..Faults::default()
    })
    .await;
    let (_d, repo) = fixture_with_model(&server, "concurrency = 1\n");
    let out = json_of(rpg_llm(&repo, &["init", "--json"]));
    assert_eq!(out["model"]["reasked"], 1, "{out}");
    assert_eq!(out["model"]["entities_offline"], 0, "{out}");
    let seen = seen.lock().unwrap();
    let dropped = seen.lift_keys[0][0].clone();
    assert_eq!(seen.lift_keys[1], vec![dropped]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_budget_is_a_hard_stop_that_leaves_a_valid_graph() {
    let (server, _seen) = model(Faults::default()).await;
    let (_d, repo) = fixture_with_model(&server, "batch_tokens = 150\nconcurrency = 1\n");
    let out = json_of(rpg_llm(
        &repo,
        &["init", "--budget-tokens", "1500", "--json"],
    ));
    let m = &out["model"];
    assert_eq!(m["budget_stopped"], true, "{out}");
    let spent = m["prompt_tokens"].as_u64().unwrap() + m["completion_tokens"].as_u64().unwrap();
    assert!(spent <= 1500, "spent {spent}");
    assert!(m["entities_lifted"].as_u64().unwrap() > 0, "{out}");
    assert!(m["entities_offline"].as_u64().unwrap() > 0, "{out}");
    let ents = graph_entities(&repo);
    let by: BTreeSet<&str> = ents.iter().filter_map(|e| e["lifter"].as_str()).collect();
    assert!(
        by.contains("offline/1") && by.contains("llm/mock-model"),
        "{by:?}"
    );
    // The graph is whole: every entity sits in a leaf, and queries work.
    assert!(ents
        .iter()
        .all(|e| e["leaf"].as_str().unwrap().split('/').count() == 3));
    let found = ok(rpg_llm(&repo, &["locate", "parse a header value"]));
    assert!(
        found.contains("src/fixpkg/models.py:parse_header"),
        "{found}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_estimates_and_sends_nothing() {
    let (server, seen) = model(Faults::default()).await;
    let (_d, repo) = fixture_with_model(&server, "");
    let out = json_of(rpg_llm(&repo, &["init", "--dry-run", "--json"]));
    assert_eq!(requests(&seen), 0);
    let e = &out["estimate"];
    assert!(e["requests"].as_u64().unwrap() >= 3, "{out}");
    assert!(e["prompt_tokens"].as_u64().unwrap() > 100, "{out}");
    assert!(!repo.join(".rpg/graph.jsonl").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_run_resumes_without_reasking_finished_batches() {
    let (server, seen) = model(Faults {
        delay_ms: 300,
        ..Faults::default()
    })
    .await;
    let (_d, repo) = fixture_with_model(
        &server,
        "batch_tokens = 150\nconcurrency = 1\nhierarchy = false\n",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_rpg"))
        .arg("init")
        .current_dir(&repo)
        .env("XDG_CONFIG_HOME", user_config_home(&repo))
        .env("OPENAI_API_KEY", KEY)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill once the third lifting request arrives: the first two batches
    // were answered and persisted before it was sent.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while seen.lock().unwrap().lift_keys.len() < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never got going"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !repo.join(".rpg/graph.jsonl").exists(),
        "killed before writing"
    );
    let finished: BTreeSet<String> = {
        let s = seen.lock().unwrap();
        s.lift_keys[..2].iter().flatten().cloned().collect()
    };
    let asked_before = seen.lock().unwrap().lift_keys.len();
    ok(rpg_llm(&repo, &["init"]));
    let s = seen.lock().unwrap();
    let asked_again: BTreeSet<&String> = s.lift_keys[asked_before..].iter().flatten().collect();
    for k in &finished {
        assert!(!asked_again.contains(k), "{k} was paid for and asked again");
    }
    assert!(!asked_again.is_empty());
}

#[test]
fn without_a_key_or_model_init_explains_and_update_lifts_offline() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    let user = user_config_home(&repo);
    std::fs::create_dir_all(user.join("rpg")).unwrap();
    std::fs::write(user.join("rpg/config.toml"), "[lift]\nlifter = \"llm\"\n").unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rpg"))
            .args(args)
            .current_dir(&repo)
            .env("XDG_CONFIG_HOME", &user)
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("RPG_MODEL")
            .output()
            .unwrap()
    };
    let o = run(&["init"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no model named"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1);
    // An offline graph, then an update with the model unusable: offline,
    // with a notice, exit 0.
    ok(run(&["init", "--lifter", "offline"]));
    std::fs::write(
        repo.join("src/fixpkg/more.py"),
        "def more():\n    return 1\n",
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "more"]);
    let o = run(&["update"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("lifting offline"), "{}", stderr(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_rpg"))
        .args(["init", "--lifter", "llm"])
        .current_dir(&repo)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("RPG_MODEL", "gpt-4o-mini")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("OPENAI_API_KEY is not set"),
        "{}",
        stderr(&o)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_key_or_unknown_model_stops_with_one_line_and_writes_nothing() {
    // 401: bad key; 403: no access to the model; 404: no such model.
    for status in [401u16, 403, 404] {
        let (server, seen) = model(Faults {
            always_status: Some(status),
            ..Faults::default()
        })
        .await;
        let (_d, repo) = fixture_with_model(&server, "concurrency = 1\n");
        let o = rpg_llm(&repo, &["init"]);
        assert_eq!(o.status.code(), Some(2), "{status}");
        let err = stderr(&o);
        assert!(err.contains(&status.to_string()), "{status}: {err}");
        assert!(!err.contains(KEY));
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!repo.join(".rpg/graph.jsonl").exists());
        // A refusal is final: never retried.
        assert_eq!(requests(&seen), 1, "{status}");
    }
}

/// Init with the mock, make the one ambiguous edit to `normalize`, update
/// with `update_args`, and return its event and the run's JSON.
async fn judged_edit(changed_purpose: bool, update_args: &[&str]) -> (Value, Value, Vec<Value>) {
    let (server, seen) = model(Faults {
        changed_purpose,
        ..Faults::default()
    })
    .await;
    let (_d, repo) = fixture_with_model(&server, "");
    ok(rpg_llm(&repo, &["init"]));
    let util = repo.join("src/fixpkg/util.py");
    let text = std::fs::read_to_string(&util)
        .unwrap()
        .replace("return s.lower()", "return s.casefold().rstrip()");
    std::fs::write(&util, text).unwrap();
    git(&repo, &["commit", "-qam", "casefold"]);
    let before = requests(&seen);
    let mut args = vec!["update", "--json"];
    args.extend_from_slice(update_args);
    let out = json_of(rpg_llm(&repo, &args));
    let ev = out["updates"][0]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == "src/fixpkg/util.py:normalize")
        .unwrap()
        .clone();
    let asked = seen.lock().unwrap().bodies[before..]
        .iter()
        .filter(|b| b["response_format"]["json_schema"]["name"] == "drift")
        .cloned()
        .collect();
    (ev, out, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_sees_changed_purpose_relocates_an_edit_below_tau() {
    let (ev, out, asked) = judged_edit(true, &[]).await;
    let d = ev["drift"].as_f64().unwrap();
    // Below τ = 0.5 word overlap alone would modify in place.
    assert!((0.3..=0.5).contains(&d), "not ambiguous below τ: {ev}");
    assert_eq!(ev["event"], "relocate", "the verdict decides: {ev}");
    assert_eq!(out["model"]["drift_judged"], 1, "{out}");
    assert_eq!(asked.len(), 1);
    let user = asked[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("check return lower") && user.contains("check casefold rstrip"),
        "{user}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_sees_the_same_purpose_keeps_an_edit_above_tau_in_place() {
    // τ = 0.2 puts the same edit above τ, where overlap alone would relocate.
    let (ev, out, asked) = judged_edit(false, &["--drift-threshold", "0.2"]).await;
    let d = ev["drift"].as_f64().unwrap();
    assert!((0.2..=0.4).contains(&d), "not ambiguous above τ: {ev}");
    assert_eq!(ev["event"], "modify", "the verdict decides: {ev}");
    assert_eq!(out["model"]["drift_judged"], 1, "{out}");
    assert_eq!(asked.len(), 1);
}
