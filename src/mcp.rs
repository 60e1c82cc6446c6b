//! `rpg mcp`: the agent tools over the Model Context Protocol (stdio),
//! through rmcp, the official Rust SDK.
//!
//! Only JSON-RPC goes to stdout; notes go to stderr. Arguments are
//! untrusted and checked exactly as the CLI checks them; a bad call is a
//! tool error, never a crash. Before answering, the graph catches up with
//! HEAD when HEAD moved since the last check.

use crate::config::Config;
use crate::evolve::{self, Target, UpdateOptions};
use crate::git::Repo;
use crate::graph::EdgeKind;
use crate::lift::offline::OfflineLifter;
use crate::search::{self, index, tools, Switches};
use crate::store::{FileStamp, RpgDir, Store};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerInfo, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// A tool result stays under this many characters; longer ones are cut,
/// list by list, and marked `"truncated": true`.
pub const MAX_RESULT_CHARS: usize = 20_000;

#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start the MCP server: {0}")]
    Start(String),
}

/// What identifies HEAD cheaply: the files git rewrites when it moves.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HeadStamp(Vec<Option<FileStamp>>);

impl HeadStamp {
    fn of(git_dir: &std::path::Path) -> HeadStamp {
        let stamp = |p: PathBuf| FileStamp::of(&p);
        let head = std::fs::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
        let mut files = vec![
            stamp(git_dir.join("HEAD")),
            stamp(git_dir.join("packed-refs")),
        ];
        if let Some(r) = head.strip_prefix("ref: ") {
            let r = r.trim();
            // Only plain ref names; HEAD's content is not trusted as a path.
            if r.starts_with("refs/") && !r.split('/').any(|c| c == ".." || c.is_empty()) {
                files.push(stamp(git_dir.join(r)));
            }
        }
        HeadStamp(files)
    }
}

/// The server: one repository, opened per call so hooks are not locked out.
#[derive(Clone)]
pub struct Server {
    dir: PathBuf,
    last_head: Arc<Mutex<Option<HeadStamp>>>,
}

fn schema(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

fn tool_list() -> Vec<Tool> {
    vec![
        Tool::new(
            "locate",
            "Rank the files and functions an issue most likely concerns. Give the issue's text (title first); returns ranked files, ranked functions (id = path:qualname, with line spans) and a file-centred scaffold.",
            schema(json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "The issue text."},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
                },
                "required": ["query"],
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "search",
            "Find code entities by what they do (mode features: names and lifted features) or by what their code says (mode snippets), or both fused (auto). Optionally only inside a hierarchy path or directory.",
            schema(json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "scope": {"type": "string", "description": "A hierarchy path (area/category/subcategory) or a directory."},
                    "mode": {"type": "string", "enum": ["features", "snippets", "auto"], "default": "auto"},
                    "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
                },
                "required": ["query"],
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "fetch",
            "Show one entity (path:qualname), file (path) or hierarchy path: kind, line span, signature, docstring, features, hierarchy, and line-numbered source (a skeleton for bodies over 200 lines). start_line/end_line show those lines of the file within the target (a cut window gives next_line to go on from); around shows the lines holding any of its words, 3 lines either side.",
            schema(json!({
                "type": "object",
                "properties": {
                    "target": {"type": "string"},
                    "start_line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1},
                    "around": {"type": "string", "description": "Words; lines holding any of them are shown with their context."}
                },
                "required": ["target"],
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "explore",
            "Walk the dependency graph from an entity: down follows what it contains, imports, invokes and inherits; up follows who does so to it. Callers and callees come first (each path keeping its way), the file and siblings last; counts gives the entity's own edges of each kind.",
            schema(json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "path:qualname, or a file path."},
                    "edges": {"type": "array", "items": {"type": "string", "enum": ["invokes", "imports", "inherits", "contains"]}},
                    "direction": {"type": "string", "enum": ["up", "down", "both"], "default": "both"},
                    "depth": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
                    "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "A truncated walk's next_offset: the next page of up to 200 steps."}
                },
                "required": ["id"],
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "symbols",
            "A file's skeleton: its imports, then every class, function and method with line range, nesting depth and signature; no bodies. At most 500 definitions per page: a truncated answer gives next_offset, to pass as offset.",
            schema(json!({
                "type": "object",
                "properties": {
                    "file": {"type": "string", "description": "A path relative to the repository root."},
                    "offset": {"type": "integer", "minimum": 0, "default": 0}
                },
                "required": ["file"],
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "tree",
            "The functional hierarchy: areas, categories and subcategories in reading order, each with its entity count and the directories it covers. Give a path to see one subtree.",
            schema(json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A hierarchy path (area or area/category); omit for everything."},
                    "depth": {"type": "integer", "minimum": 1, "maximum": 3, "default": 3}
                },
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "status",
            "Which commit the graph reflects, HEAD, whether it is up to date, the lifter, and entity and edge counts.",
            schema(json!({"type": "object", "properties": {}, "additionalProperties": false})),
        ),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LocateArgs {
    query: String,
    #[serde(default = "ten")]
    top_k: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    scope: Option<String>,
    #[serde(default)]
    mode: tools::Mode,
    #[serde(default = "ten")]
    top_k: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FetchArgs {
    target: String,
    start_line: Option<u32>,
    end_line: Option<u32>,
    around: Option<String>,
}

impl FetchArgs {
    fn window(&self) -> Result<tools::Window, Failed> {
        match (self.start_line, self.end_line, &self.around) {
            (None, None, None) => Ok(tools::Window::Whole),
            (None, None, Some(w)) => Ok(tools::Window::Around(w.clone())),
            (s, e, None) => Ok(tools::Window::Lines(s.unwrap_or(1), e.unwrap_or(u32::MAX))),
            _ => Err(Failed(
                "give start_line/end_line or around, not both".into(),
            )),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExploreArgs {
    id: String,
    edges: Option<Vec<String>>,
    #[serde(default)]
    direction: tools::Direction,
    #[serde(default = "two")]
    depth: usize,
    #[serde(default)]
    offset: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SymbolsArgs {
    file: String,
    #[serde(default)]
    offset: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TreeArgs {
    #[serde(default)]
    path: String,
    #[serde(default = "three")]
    depth: usize,
}

fn three() -> usize {
    3
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusArgs {}

fn ten() -> usize {
    10
}
fn two() -> usize {
    2
}

/// One step from a JSON value to a child.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path to the list (of two or more items) that serialises longest.
fn longest_list(v: &Value, here: &mut Vec<Step>, best: &mut Option<(usize, Vec<Step>)>) {
    match v {
        Value::Array(a) => {
            let len = serde_json::to_string(a).map(|s| s.len()).unwrap_or(0);
            if a.len() > 1 && best.as_ref().is_none_or(|(l, _)| len > *l) {
                *best = Some((len, here.clone()));
            }
            for (i, x) in a.iter().enumerate() {
                here.push(Step::Index(i));
                longest_list(x, here, best);
                here.pop();
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                here.push(Step::Key(k.clone()));
                longest_list(x, here, best);
                here.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, step| match step {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

use crate::text::CUT_MARK;

/// Cut the longest lists of `v` in half, then the longest strings, until it
/// serialises under `limit` characters; say so with `"truncated": true`.
/// Every field is bounded this way, so no name, feature or source line a
/// repository holds can make a reply unbounded.
pub fn fit(v: &mut Value, limit: usize) {
    let size = |v: &Value| serde_json::to_string(v).map(|s| s.len()).unwrap_or(0);
    let mut cut = cap_strings(v, limit / 2);
    while size(v) > limit {
        let mut best = None;
        longest_list(v, &mut Vec::new(), &mut best);
        let list = best.and_then(|(len, path)| {
            // A list that is mostly one long string is cut by its string.
            (len > longest_string(v) / 2).then_some(path)
        });
        match list.and_then(|path| at(v, &path)) {
            Some(Value::Array(list)) => {
                let keep = list.len() / 2;
                list.truncate(keep);
            }
            _ => {
                if !halve_longest_string(v) {
                    break;
                }
            }
        }
        cut = true;
    }
    if cut {
        if let Value::Object(m) = v {
            m.insert("truncated".into(), Value::Bool(true));
        }
    }
}

/// Cut every string longer than `max` bytes; whether any was.
fn cap_strings(v: &mut Value, max: usize) -> bool {
    match v {
        Value::String(s) if s.len() > max => {
            cut_string(s, max);
            true
        }
        Value::Array(a) => a.iter_mut().fold(false, |c, x| cap_strings(x, max) | c),
        Value::Object(m) => m.values_mut().fold(false, |c, x| cap_strings(x, max) | c),
        _ => false,
    }
}

fn cut_string(s: &mut String, max: usize) {
    *s = crate::text::clip(s, max).into_owned();
}

fn longest_string(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Array(a) => a.iter().map(longest_string).max().unwrap_or(0),
        Value::Object(m) => m.values().map(longest_string).max().unwrap_or(0),
        _ => 0,
    }
}

/// Halve the longest string in `v`; false when none is worth cutting.
fn halve_longest_string(v: &mut Value) -> bool {
    let longest = longest_string(v);
    if longest <= CUT_MARK.len() * 2 {
        return false;
    }
    fn find(v: &mut Value, len: usize) -> Option<&mut String> {
        match v {
            Value::String(s) if s.len() == len => Some(s),
            Value::Array(a) => a.iter_mut().find_map(|x| find(x, len)),
            Value::Object(m) => m.values_mut().find_map(|x| find(x, len)),
            _ => None,
        }
    }
    match find(v, longest) {
        Some(s) => {
            cut_string(s, longest / 2);
            true
        }
        None => false,
    }
}

/// A failed call: the message goes back to the agent as a tool error.
struct Failed(String);

impl<E: std::fmt::Display> From<E> for Failed {
    fn from(e: E) -> Self {
        Failed(e.to_string())
    }
}

fn args<T: for<'de> Deserialize<'de>>(a: Option<JsonObject>) -> Result<T, Failed> {
    serde_json::from_value(Value::Object(a.unwrap_or_default()))
        .map_err(|e| Failed(format!("bad arguments: {e}")))
}

impl Server {
    pub fn new(dir: PathBuf) -> Server {
        Server {
            dir,
            last_head: Arc::new(Mutex::new(None)),
        }
    }

    /// Catch the graph up with HEAD, unless HEAD has not moved since the
    /// last check. Failing to catch up is noted and the current graph used.
    fn catch_up(&self, repo: &Repo, rpg: &RpgDir) {
        let stamp = HeadStamp::of(&repo.git_dir());
        let mut last = self.last_head.lock().unwrap_or_else(|p| p.into_inner());
        if last.as_ref() == Some(&stamp) {
            return;
        }
        let Some(head) = repo.head_commit() else {
            return;
        };
        let Ok(config) = Config::load(repo.workdir()) else {
            return;
        };
        let behind = match evolve::open(repo, rpg, &config).map(|s| s.meta()) {
            Ok(Ok(meta)) => !crate::store::graph_describes(repo, &meta.commit, &meta.tree, head),
            _ => return,
        };
        if behind {
            let result = Config::load(repo.workdir())
                .map_err(|e| e.to_string())
                .and_then(|config| {
                    let target = Target::commit(repo, head).map_err(|e| e.to_string())?;
                    evolve::update(
                        repo,
                        rpg,
                        &config,
                        target,
                        &OfflineLifter,
                        &UpdateOptions::default(),
                    )
                    .map_err(|e| e.to_string())
                });
            match result {
                Ok(r) => crate::notice!(
                    "rpg mcp: caught up {} -> {}",
                    crate::text::short_id(&r.from),
                    crate::text::short_id(&r.to)
                ),
                Err(e) => {
                    crate::notice!("rpg mcp: could not catch up with HEAD ({e}); answering from the graph as it is");
                    return;
                }
            }
        }
        *last = Some(stamp);
    }

    fn open(&self) -> Result<(Repo, Store), Failed> {
        let repo = Repo::discover(&self.dir)?;
        let rpg = RpgDir::new(repo.workdir())?;
        self.catch_up(&repo, &rpg);
        let store = evolve::open(&repo, &rpg, &Config::load(repo.workdir())?)?;
        let (store, _) = index::ready(&rpg, store, &repo)?;
        Ok((repo, store))
    }

    /// Run one tool call to a JSON value.
    pub fn call(&self, name: &str, arguments: Option<JsonObject>) -> Result<Value, String> {
        self.call_inner(name, arguments).map_err(|Failed(m)| m)
    }

    fn call_inner(&self, name: &str, a: Option<JsonObject>) -> Result<Value, Failed> {
        let value = match name {
            "locate" => {
                let a: LocateArgs = args(a)?;
                if a.query.trim().is_empty() {
                    return Err(Failed("the query is empty; give the issue's text".into()));
                }
                let (repo, store) = self.open()?;
                let top_k = a.top_k.clamp(1, 50);
                serde_json::to_value(search::locate_issue(
                    &repo,
                    &store,
                    &a.query,
                    Switches::default(),
                    top_k,
                )?)?
            }
            "search" => {
                let a: SearchArgs = args(a)?;
                let (repo, store) = self.open()?;
                serde_json::to_value(tools::search_issue(
                    &repo,
                    &store,
                    &a.query,
                    a.scope.as_deref(),
                    a.mode,
                    a.top_k,
                )?)?
            }
            "fetch" => {
                let a: FetchArgs = args(a)?;
                let window = a.window()?;
                let (repo, store) = self.open()?;
                serde_json::to_value(tools::fetch_window(&store, &repo, &a.target, &window)?)?
            }
            "explore" => {
                let a: ExploreArgs = args(a)?;
                let kinds = match &a.edges {
                    None => vec![
                        EdgeKind::Invokes,
                        EdgeKind::Imports,
                        EdgeKind::Inherits,
                        EdgeKind::Contains,
                    ],
                    Some(list) => list
                        .iter()
                        .map(|e| {
                            EdgeKind::parse(e).ok_or_else(|| {
                                Failed(format!("bad arguments: unknown edge kind {e:?}"))
                            })
                        })
                        .collect::<Result<_, _>>()?,
                };
                let (_, store) = self.open()?;
                let v = serde_json::to_value(tools::explore_page(
                    &store,
                    &a.id,
                    &kinds,
                    a.direction,
                    a.depth,
                    a.offset,
                )?)?;
                return Ok(fit_page(v, "steps", a.offset));
            }
            "symbols" => {
                let a: SymbolsArgs = args(a)?;
                let (repo, store) = self.open()?;
                let v =
                    serde_json::to_value(tools::symbols_page(&store, &repo, &a.file, a.offset)?)?;
                return Ok(fit_page(v, "symbols", a.offset));
            }
            "tree" => {
                let a: TreeArgs = args(a)?;
                let (_, store) = self.open()?;
                serde_json::to_value(tools::tree(&store, &a.path, a.depth)?)?
            }
            "status" => {
                let _: StatusArgs = args(a)?;
                let (repo, store) = self.open()?;
                let meta = store.meta()?;
                let head = repo.head_commit().map(|h| h.to_string());
                json!({
                    "commit": meta.commit,
                    "head": head,
                    "up_to_date": repo
                        .head_commit()
                        .is_some_and(|h| crate::store::graph_describes(&repo, &meta.commit, &meta.tree, h)),
                    "lifter": meta.lifter,
                    "counts": store.counts()?,
                })
            }
            other => return Err(Failed(format!("unknown tool {other:?}"))),
        };
        let mut value = value;
        fit(&mut value, MAX_RESULT_CHARS);
        Ok(value)
    }
}

/// [`fit`] a page of `list` that began at `offset`: when the reply had to
/// lose part of the page, the next page starts after what it kept, so
/// paging by `next_offset` still visits every item once.
fn fit_page(mut v: Value, list: &str, offset: usize) -> Value {
    let len = |v: &Value| v[list].as_array().map_or(0, Vec::len);
    let before = len(&v);
    fit(&mut v, MAX_RESULT_CHARS);
    let kept = len(&v);
    if kept < before {
        if let Value::Object(m) = &mut v {
            m.insert("next_offset".into(), Value::from(offset + kept));
        }
    }
    v
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("rpg", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Repository Planning Graph of this git repository. Start with `locate` on the issue text, then `fetch` candidates, `explore` their callers and callees, and `symbols` for a file's outline.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        if !tool_list().iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            ));
        }
        let server = self.clone();
        let name = request.name.to_string();
        let result = tokio::task::spawn_blocking(move || server.call(&name, request.arguments))
            .await
            .unwrap_or_else(|e| Err(format!("the tool failed: {e}")));
        Ok(match result {
            Ok(v) => CallToolResult::success(vec![ContentBlock::text(
                serde_json::to_string(&v).unwrap_or_default(),
            )]),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        })
    }
}

/// Serve MCP on stdin/stdout until the client closes stdin.
///
/// Every line from the client passes [`Gate`] first, so malformed JSON,
/// calls before `initialize` and messages that are not MCP get JSON-RPC
/// errors instead of ending the session. One task owns stdout, so replies
/// from the gate and from the server never interleave.
pub fn serve(dir: PathBuf) -> Result<(), McpError> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| McpError::Start(e.to_string()))?;
    runtime.block_on(async move {
        let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, from_server) = tokio::io::duplex(1 << 16);
        let (lines_tx, mut lines_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let writer = tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            while let Some(line) = lines_rx.recv().await {
                let written = async {
                    stdout.write_all(line.as_bytes()).await?;
                    stdout.write_all(b"\n").await?;
                    stdout.flush().await
                };
                if written.await.is_err() {
                    break; // the client went away
                }
            }
        });
        let relay_tx = lines_tx.clone();
        let relay = tokio::spawn(async move {
            let mut lines = BufReader::new(from_server).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if relay_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let gate = tokio::spawn(async move {
            let mut gate = Gate::default();
            let mut stdin = BufReader::new(tokio::io::stdin());
            while let Ok(Some(line)) = next_line(&mut stdin, MAX_LINE).await {
                let (admitted, line) = match line {
                    ClientLine::Text(text) => (gate.admit(&text), text),
                    ClientLine::NotUtf8 => (
                        rpc_error(Value::Null, -32700, "parse error: not UTF-8"),
                        String::new(),
                    ),
                    ClientLine::TooLong => {
                        let why = format!("parse error: a line over {} MB", MAX_LINE >> 20);
                        (rpc_error(Value::Null, -32700, why), String::new())
                    }
                };
                match admitted {
                    Admit::Forward => {
                        let sent = async {
                            to_server.write_all(line.as_bytes()).await?;
                            to_server.write_all(b"\n").await
                        };
                        if sent.await.is_err() {
                            break;
                        }
                    }
                    Admit::Reply(reply) => {
                        let _ = lines_tx.send(reply.to_string());
                    }
                    Admit::Drop => {}
                }
            }
            // Dropping the pipe tells the server the client is gone.
        });
        let service = match Server::new(dir).serve((server_in, server_out)).await {
            Ok(s) => s,
            // The client left before initializing: nothing went wrong here.
            Err(_) if gate.is_finished() => return Ok(()),
            Err(e) => return Err(McpError::Start(e.to_string())),
        };
        let done = service.waiting().await;
        let _ = gate.await;
        let _ = relay.await;
        let _ = writer.await;
        done.map(|_| ()).map_err(|e| McpError::Start(e.to_string()))
    })
}

/// The longest line a client may send: a tool call is a few hundred bytes.
const MAX_LINE: usize = 4 << 20;

/// One line from the client, as read.
enum ClientLine {
    Text(String),
    NotUtf8,
    /// Longer than the cap; the rest of it was read past, never held.
    TooLong,
}

/// The next line of `r`, without its newline, holding at most `max`
/// bytes of it; `None` at the end of input.
async fn next_line<R: tokio::io::AsyncBufRead + Unpin>(
    r: &mut R,
    max: usize,
) -> std::io::Result<Option<ClientLine>> {
    use tokio::io::AsyncBufReadExt;
    let (mut line, mut too_long, mut any) = (Vec::new(), false, false);
    loop {
        let buf = r.fill_buf().await?;
        if buf.is_empty() {
            break;
        }
        any = true;
        let (part, used, end) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        if !too_long && line.len() + part.len() <= max {
            line.extend_from_slice(part);
        } else {
            too_long = true;
            line = Vec::new();
        }
        r.consume(used);
        if end {
            break;
        }
    }
    if !any {
        return Ok(None);
    }
    Ok(Some(match (too_long, String::from_utf8(line)) {
        (true, _) => ClientLine::TooLong,
        (false, Ok(text)) => ClientLine::Text(text),
        (false, Err(_)) => ClientLine::NotUtf8,
    }))
}

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
enum Admit {
    Forward,
    Reply(Value),
    Drop,
}

/// The session's state as the client's lines move it.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
enum Phase {
    #[default]
    New,
    /// `initialize` was sent; `notifications/initialized` has not come.
    Initializing,
    Ready,
}

/// Checks each line before the server sees it: the JSON-RPC errors a
/// server owes a client that sends something wrong.
#[derive(Debug, Default)]
struct Gate {
    phase: Phase,
}

fn rpc_error(id: Value, code: i64, message: impl Into<String>) -> Admit {
    Admit::Reply(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": crate::text::clip(&message.into(), 300)},
    }))
}

impl Gate {
    fn admit(&mut self, line: &str) -> Admit {
        if line.trim().is_empty() {
            return Admit::Drop;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return rpc_error(Value::Null, -32700, format!("parse error: {e}")),
        };
        let id = value.get("id").cloned();
        let Some(method) = value.get("method").and_then(Value::as_str) else {
            // A response to something the server asked, or not JSON-RPC.
            return match (value.get("result").or(value.get("error")), &id) {
                (Some(_), Some(_)) if self.phase == Phase::Ready => Admit::Forward,
                (Some(_), Some(_)) => Admit::Drop,
                _ => rpc_error(id.unwrap_or(Value::Null), -32600, "invalid request"),
            };
        };
        if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return rpc_error(
                id.unwrap_or(Value::Null),
                -32600,
                "invalid request: jsonrpc must be \"2.0\"",
            );
        }
        if serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value.clone()).is_err() {
            return match id {
                Some(id) => rpc_error(
                    id,
                    -32602,
                    format!("invalid request or params for {method:?}"),
                ),
                None => Admit::Drop,
            };
        }
        match (self.phase, method, id) {
            (_, "ping", Some(id)) if self.phase != Phase::Ready => {
                Admit::Reply(json!({"jsonrpc": "2.0", "id": id, "result": {}}))
            }
            (Phase::New, "initialize", Some(_)) => {
                self.phase = Phase::Initializing;
                Admit::Forward
            }
            (Phase::Initializing, "notifications/initialized", None) => {
                self.phase = Phase::Ready;
                Admit::Forward
            }
            (Phase::Ready, "initialize", Some(id)) => {
                rpc_error(id, -32600, "the session is already initialized")
            }
            (Phase::Ready, _, _) => Admit::Forward,
            (_, _, Some(id)) => rpc_error(
                id,
                -32002,
                "server not initialized: send initialize, then notifications/initialized",
            ),
            (_, _, None) => Admit::Drop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_answers_what_the_server_must_not_see() {
        let mut g = Gate::default();
        let code = |a: Admit| match a {
            Admit::Reply(v) => v["error"]["code"].as_i64(),
            _ => None,
        };
        assert_eq!(code(g.admit("{not json")), Some(-32700));
        assert_eq!(code(g.admit("[1,2]")), Some(-32600));
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"status"}}"#;
        assert_eq!(code(g.admit(call)), Some(-32002));
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        assert_eq!(g.admit(init), Admit::Forward);
        assert_eq!(code(g.admit(call)), Some(-32002));
        assert_eq!(
            g.admit(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Admit::Forward
        );
        assert_eq!(g.admit(call), Admit::Forward);
        assert_eq!(code(g.admit(init)), Some(-32600));
        let bad = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"oops"}"#;
        assert_eq!(code(g.admit(bad)), Some(-32602));
    }

    #[test]
    fn fit_cuts_one_huge_string_with_a_marker() {
        let mut v = json!({"entity": {"features": ["x".repeat(50_000_000)]}, "source": [{"n": 1, "text": "a"}]});
        fit(&mut v, MAX_RESULT_CHARS);
        let text = serde_json::to_string(&v).unwrap();
        assert!(text.len() <= MAX_RESULT_CHARS, "{}", text.len());
        assert!(text.contains(CUT_MARK));
        assert_eq!(v["truncated"], true);
    }

    #[test]
    fn fit_halves_the_longest_list_and_marks_it() {
        let mut v = json!({"a": (0..1000).collect::<Vec<_>>(), "b": [1, 2]});
        fit(&mut v, 500);
        assert!(serde_json::to_string(&v).unwrap().len() <= 500);
        assert_eq!(v["truncated"], true);
        assert_eq!(v["b"], json!([1, 2]));
        let mut small = json!({"a": [1, 2, 3]});
        fit(&mut small, 500);
        assert!(small.get("truncated").is_none());
    }
}
