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
            "Show one entity (path:qualname), file (path) or hierarchy path: kind, line span, signature, docstring, features, hierarchy, and line-numbered source (a skeleton for bodies over 200 lines).",
            schema(json!({
                "type": "object",
                "properties": {"target": {"type": "string"}},
                "required": ["target"],
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "explore",
            "Walk the dependency graph from an entity: down follows what it contains, imports, invokes and inherits; up follows who does so to it.",
            schema(json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "path:qualname, or a file path."},
                    "edges": {"type": "array", "items": {"type": "string", "enum": ["invokes", "imports", "inherits", "contains"]}},
                    "direction": {"type": "string", "enum": ["up", "down", "both"], "default": "both"},
                    "depth": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2}
                },
                "required": ["id"],
                "additionalProperties": false
            })),
        ),
        Tool::new(
            "symbols",
            "A file's skeleton: its imports, then every class, function and method with line range, nesting depth and signature; no bodies.",
            schema(json!({
                "type": "object",
                "properties": {"file": {"type": "string", "description": "A path relative to the repository root."}},
                "required": ["file"],
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
    mode: Option<String>,
    #[serde(default = "ten")]
    top_k: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FetchArgs {
    target: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExploreArgs {
    id: String,
    edges: Option<Vec<String>>,
    direction: Option<String>,
    #[serde(default = "two")]
    depth: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SymbolsArgs {
    file: String,
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

/// Cut the longest lists of `v` in half until it serialises under `limit`
/// characters; say so with `"truncated": true`.
pub fn fit(v: &mut Value, limit: usize) {
    let mut cut = false;
    while serde_json::to_string(v).map(|s| s.len()).unwrap_or(0) > limit {
        let mut best = None;
        longest_list(v, &mut Vec::new(), &mut best);
        let Some((_, path)) = best else { break };
        if let Some(Value::Array(list)) = at(v, &path) {
            let keep = list.len() / 2;
            list.truncate(keep);
            cut = true;
        } else {
            break;
        }
    }
    if cut {
        if let Value::Object(m) = v {
            m.insert("truncated".into(), Value::Bool(true));
        }
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
        let behind = match rpg.open().and_then(|s| s.meta()) {
            Ok(meta) => !repo.graph_describes(&meta.commit, &meta.tree, head),
            Err(_) => return,
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
                Ok(r) => eprintln!("rpg mcp: caught up {} -> {}", short(&r.from), short(&r.to)),
                Err(e) => {
                    eprintln!("rpg mcp: could not catch up with HEAD ({e}); answering from the graph as it is");
                    return;
                }
            }
        }
        *last = Some(stamp);
    }

    fn open(&self) -> Result<(Repo, Store), Failed> {
        let repo = Repo::discover(&self.dir)?;
        let rpg = RpgDir::new(repo.workdir());
        self.catch_up(&repo, &rpg);
        let store = rpg.open()?;
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
                let (_, store) = self.open()?;
                let top_k = a.top_k.clamp(1, 50);
                serde_json::to_value(search::locate(
                    &store,
                    &a.query,
                    Switches::default(),
                    top_k,
                )?)?
            }
            "search" => {
                let a: SearchArgs = args(a)?;
                let mode = match a.mode.as_deref() {
                    None | Some("auto") => tools::Mode::Auto,
                    Some("features") => tools::Mode::Features,
                    Some("snippets") => tools::Mode::Snippets,
                    Some(m) => {
                        return Err(Failed(format!(
                            "bad arguments: unknown mode {m:?}; use features, snippets or auto"
                        )))
                    }
                };
                let (_, store) = self.open()?;
                let reader = search::Reader::open(&store)?;
                serde_json::to_value(tools::search(
                    &store,
                    &reader,
                    &a.query,
                    a.scope.as_deref(),
                    mode,
                    a.top_k,
                    &[],
                )?)?
            }
            "fetch" => {
                let a: FetchArgs = args(a)?;
                let (repo, store) = self.open()?;
                serde_json::to_value(tools::fetch(&store, &repo, &a.target)?)?
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
                let direction = match a.direction.as_deref() {
                    None | Some("both") => tools::Direction::Both,
                    Some("up") => tools::Direction::Up,
                    Some("down") => tools::Direction::Down,
                    Some(d) => {
                        return Err(Failed(format!(
                            "bad arguments: unknown direction {d:?}; use up, down or both"
                        )))
                    }
                };
                let (_, store) = self.open()?;
                serde_json::to_value(tools::explore(&store, &a.id, &kinds, direction, a.depth)?)?
            }
            "symbols" => {
                let a: SymbolsArgs = args(a)?;
                let (repo, store) = self.open()?;
                serde_json::to_value(tools::symbols(&store, &repo, &a.file)?)?
            }
            "status" => {
                let _: StatusArgs = args(a)?;
                let (repo, store) = self.open()?;
                let meta = store.meta()?;
                let head = repo.head_commit().map(|h| h.to_string());
                json!({
                    "commit": meta.commit,
                    "head": head,
                    "up_to_date": head.as_deref() == Some(meta.commit.as_str()),
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

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
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
pub fn serve(dir: PathBuf) -> Result<(), McpError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| McpError::Start(e.to_string()))?;
    runtime.block_on(async move {
        let service = Server::new(dir)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| McpError::Start(e.to_string()))?;
        service
            .waiting()
            .await
            .map_err(|e| McpError::Start(e.to_string()))?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
