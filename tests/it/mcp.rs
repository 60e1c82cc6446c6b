//! `rpg mcp` spoken to over its stdin and stdout, as an agent would.

use crate::common::{commit_zebra, fixture, ok, repo_of, rpg};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

pub struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Every line the server wrote to stdout.
    seen: Vec<String>,
    next_id: u64,
}

impl Session {
    pub fn start(repo: &std::path::Path) -> Session {
        let mut child = crate::common::rpg_command(repo)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn rpg mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            next_id: 1,
        }
    }

    /// Send one raw line, as a client with bugs might.
    pub fn send_line(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send raw bytes, newline included: what no well-behaved client sends.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line the server writes, as JSON.
    pub fn next_reply(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a reply within a minute");
        serde_json::from_str(&line).expect("stdout carries only JSON-RPC")
    }

    /// `initialize`, then `notifications/initialized`.
    pub fn initialize(&mut self) {
        self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    pub fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("a reply within a minute");
            self.seen.push(line.clone());
            let v: Value = serde_json::from_str(&line).expect("stdout carries only JSON-RPC");
            if v["id"] == id {
                return v;
            }
        }
    }

    pub fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let r = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &r["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        (result["isError"] == true, text)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_agent_can_initialize_list_and_call_every_tool() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let mut s = Session::start(&repo);
    let init = s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "rpg");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = s.request("tools/list", json!({}));
    let mut names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["explore", "fetch", "locate", "search", "status", "symbols", "tree"]
    );
    for t in list["result"]["tools"].as_array().unwrap() {
        assert!(t["description"].as_str().unwrap().len() > 40);
        assert_eq!(t["inputSchema"]["type"], "object");
    }

    let (err, text) = s.call(
        "locate",
        json!({"query": "Request.split_host breaks on IPv6", "top_k": 3}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["functions"][0]["id"],
        "src/fixpkg/models.py:Request.split_host"
    );
    assert!(v["functions"].as_array().unwrap().len() <= 3);
    assert!(v["scaffold"]["dirs"].is_array());

    let (err, text) = s.call(
        "search",
        json!({"query": "normalize a string", "mode": "features"}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["results"][0]["id"], "src/fixpkg/util.py:normalize");

    let (err, text) = s.call("fetch", json!({"target": "src/fixpkg/util.py:normalize"}));
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["source"][0]["text"], "def normalize(s):");
    // Windows: lines of the file within the target, and lines around words.
    let (err, text) = s.call(
        "fetch",
        json!({"target": "src/fixpkg/models.py", "start_line": 2, "end_line": 3}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let numbers: Vec<u64> = v["source"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["n"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, [2, 3]);
    let (err, text) = s.call(
        "fetch",
        json!({"target": "src/fixpkg/util.py:normalize", "around": "LOWER"}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(
        v["source"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["text"].as_str().unwrap().contains("lower()")),
        "{text}"
    );
    let (err, text) = s.call(
        "fetch",
        json!({"target": "src/fixpkg/util.py:normalize", "around": "x", "start_line": 1}),
    );
    assert!(err && text.contains("not both"), "{text}");
    let (err, text) = s.call(
        "symbols",
        json!({"file": "src/fixpkg/util.py", "offset": 1}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["symbols"][0]["qualname"], "Base.base_method");
    let (err, text) = s.call("locate", json!({"query": "   "}));
    assert!(err && text.contains("the query is empty"), "{text}");

    let (err, text) = s.call(
        "explore",
        json!({"id": "src/fixpkg/models.py:Request.host", "edges": ["invokes"], "direction": "down", "depth": 1}),
    );
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["steps"][0]["id"],
        "src/fixpkg/models.py:Request.split_host"
    );

    let (err, text) = s.call("symbols", json!({"file": "src/fixpkg/util.py"}));
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["symbols"][0]["qualname"], "Base");

    let (err, text) = s.call("status", json!({}));
    assert!(!err, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["up_to_date"], true);

    // Bad calls are tool errors, and the server keeps serving.
    for (tool, args, says) in [
        ("locate", json!({}), "missing field `query`"),
        (
            "fetch",
            json!({"target": "../../etc/passwd"}),
            "invalid path",
        ),
        ("symbols", json!({"file": "/etc/passwd"}), "invalid path"),
        (
            "explore",
            json!({"id": "src/fixpkg/util.py:normalize", "depth": 9}),
            "between 1 and 5",
        ),
        (
            "search",
            json!({"query": "x", "mode": "telepathy"}),
            "unknown variant `telepathy`",
        ),
        (
            "fetch",
            json!({"target": "src/fixpkg/util.py:nope"}),
            "no entity",
        ),
        ("status", json!({"surprise": 1}), "unknown field"),
    ] {
        let (err, text) = s.call(tool, args);
        assert!(err, "{tool}: {text}");
        assert!(text.contains(says), "{tool}: {text}");
    }
    let unknown = s.request("tools/call", json!({"name": "rm_rf", "arguments": {}}));
    assert!(unknown["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown tool"));
    let (err, _) = s.call("status", json!({}));
    assert!(!err);

    // Nothing but protocol messages on stdout.
    for line in &s.seen {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
    }
}

#[test]
fn the_server_catches_up_with_head_before_answering() {
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    ok(rpg(&repo, &["init"]));
    let mut s = Session::start(&repo);
    s.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    );
    s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let (_, text) = s.call("search", json!({"query": "zebra stripes"}));
    assert!(!text.contains("stripe_count"));
    let head = commit_zebra(&repo);
    let (err, text) = s.call("search", json!({"query": "zebra stripes"}));
    assert!(!err, "{text}");
    assert!(text.contains("src/fixpkg/zebra.py:stripe_count"), "{text}");
    let (_, text) = s.call("status", json!({}));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["commit"], head.as_str());
    assert_eq!(v["up_to_date"], true);
}

/// `rpg mcp` driven by rmcp's own client over stdio, as a coding agent
/// drives it: initialize, list the tools, call each, page through a
/// truncated result, and read a window of a fetched function.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_client_initializes_lists_calls_pages_and_reads_a_window() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::ServiceExt;
    let d = fixture("python-repo.sh");
    let repo = repo_of(&d);
    // A file with more definitions than one page holds.
    let many: String = (0..600)
        .map(|i| format!("def f_{i:03}():\n    return {i}\n\n\n"))
        .collect();
    std::fs::write(repo.join("src/fixpkg/many.py"), many).unwrap();
    crate::common::git(&repo, &["add", "-A"]);
    crate::common::git(&repo, &["commit", "-qm", "many"]);
    ok(rpg(&repo, &["init"]));
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rpg"))
        .arg("mcp")
        .current_dir(&repo)
        .env("XDG_CONFIG_HOME", "/nonexistent/rpg-tests-config")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let io = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve(io).await.expect("initialize");
    assert_eq!(client.peer_info().unwrap().server_info.name, "rpg");
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["explore", "fetch", "locate", "search", "status", "symbols", "tree"]
    );
    let call = |name: &'static str, args: Value| {
        let client = &client;
        async move {
            let params =
                CallToolRequestParams::new(name).with_arguments(args.as_object().unwrap().clone());
            let r = serde_json::to_value(client.call_tool(params).await.unwrap()).unwrap();
            assert_ne!(r["isError"], true, "{name}: {r}");
            let text = r["content"][0]["text"].as_str().unwrap().to_string();
            serde_json::from_str::<Value>(&text).unwrap()
        }
    };
    let located = call(
        "locate",
        json!({"query": "Request.split_host breaks on IPv6"}),
    )
    .await;
    let first = located["functions"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(first, "src/fixpkg/models.py:Request.split_host");
    let lines = &located["scaffold"]["dirs"][0]["files"][0]["anchors"][0]["lines"];
    let n = lines[0]["n"].as_u64().unwrap();
    // The matched line, read as a window of the function.
    let window = call(
        "fetch",
        json!({"target": first, "start_line": n, "end_line": n}),
    )
    .await;
    assert_eq!(window["source"][0]["n"], n);
    assert_eq!(
        window["source"][0]["text"].as_str().unwrap().trim(),
        lines[0]["text"]
    );
    let around = call("fetch", json!({"target": first, "around": "split"})).await;
    assert!(!around["source"].as_array().unwrap().is_empty());
    let found = call("search", json!({"query": "normalize a string"})).await;
    assert!(!found["results"].as_array().unwrap().is_empty());
    let walked = call("explore", json!({"id": first, "depth": 1})).await;
    assert!(walked["counts"].is_array());
    assert!(call("tree", json!({})).await["nodes"].is_array());
    assert_eq!(call("status", json!({})).await["up_to_date"], true);
    // Page through a truncated answer by the offset it gives.
    let mut names: Vec<String> = Vec::new();
    let mut offset = json!(0);
    loop {
        let p = call(
            "symbols",
            json!({"file": "src/fixpkg/many.py", "offset": offset}),
        )
        .await;
        let list = p["symbols"].as_array().unwrap();
        names.extend(
            list.iter()
                .map(|s| s["qualname"].as_str().unwrap().to_string()),
        );
        match p.get("next_offset") {
            Some(n) => {
                assert_eq!(p["truncated"], true);
                offset = n.clone();
            }
            None => break,
        }
    }
    let expected: Vec<String> = (0..600).map(|i| format!("f_{i:03}")).collect();
    assert_eq!(names, expected);
    client.cancel().await.unwrap();
}
