//! The model-backed lifter (RPG-Encoder, A.1 and A.2): features in batches
//! under a token budget, file summaries, domain discovery and file
//! assignment, routing of insertions, and drift judgement, all through any
//! OpenAI-compatible chat API.
//!
//! Every answer is validated, cached by content and flushed as it arrives.
//! Whatever the model cannot answer (a failed API, a spent budget, a reply
//! that never validates) falls back to the offline path, is announced, and
//! is recorded per entity (`lifter`), so a later run can upgrade it.

pub mod cache;
pub mod client;
pub mod prompt;

use super::offline;
use super::{FileLiftInput, FileOutline, LiftError, LiftInput, Lifted, Lifter, RouteInput};
use crate::config::LiftConfig;
use crate::graph::{dir_of, Category};
use crate::parse::Kind;
use crate::progress::Progress;
use crate::store::digest;
use cache::{Cache, Kind as CacheKind};
use client::{CallError, Chat, Endpoint, Turn};
use futures::StreamExt;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

const OPENAI: &str = "https://api.openai.com/v1";
/// Reply tokens allowed per entity: five short phrases and the key.
const TOKENS_PER_ANSWER: u32 = 80;
/// Longest slice of one entity's code put in a prompt, in bytes.
const CODE_BYTES: usize = 3000;

/// How the model is reached and used.
#[derive(Debug, Clone)]
pub struct Settings {
    pub endpoint: Endpoint,
    pub batch_tokens: usize,
    pub concurrency: usize,
    pub rounds: u32,
    pub hierarchy: bool,
    pub routing: bool,
    pub drift: bool,
    /// Hard stop on prompt plus completion tokens for this run.
    pub budget_tokens: Option<u64>,
    /// Count what would be asked; ask nothing.
    pub estimate_only: bool,
}

impl Settings {
    /// Settings from `[lift]` and the environment (`OPENAI_API_KEY`,
    /// `OPENAI_BASE_URL`, `RPG_MODEL`), read through `env`.
    pub fn from_config(
        cfg: &LiftConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, LiftError> {
        let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let model = set("RPG_MODEL")
            .or_else(|| cfg.model.clone())
            .ok_or_else(|| {
                LiftError::Settings(
                    "no model named: set [lift] model in .rpg/config.toml or RPG_MODEL".into(),
                )
            })?;
        let base_url = set("OPENAI_BASE_URL")
            .or_else(|| cfg.base_url.clone())
            .unwrap_or_else(|| OPENAI.to_string());
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(LiftError::Settings(format!(
                "the model API address must start with http:// or https://, not {base_url:?}"
            )));
        }
        let api_key = set("OPENAI_API_KEY");
        Ok(Settings {
            endpoint: Endpoint {
                base_url,
                api_key,
                model,
                timeout: Duration::from_secs(cfg.timeout_secs.max(1)),
                max_retries: cfg.max_retries,
                max_retry_after: Duration::from_secs(cfg.max_retry_after_secs),
            },
            batch_tokens: cfg.batch_tokens.max(100),
            concurrency: cfg.concurrency.clamp(1, 64),
            rounds: cfg.rounds.min(5),
            hierarchy: cfg.hierarchy,
            routing: cfg.routing,
            drift: cfg.drift,
            budget_tokens: None,
            estimate_only: false,
        })
    }
}

/// What the model was asked and what it cost.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LiftStats {
    pub model: String,
    pub requests: u64,
    pub retries: u64,
    pub format_retries: u64,
    /// Entities or files asked again because a reply left them out.
    pub reasked: u64,
    /// Keys in replies that nobody asked about, dropped.
    pub dropped_keys: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub entities_lifted: u64,
    pub entities_cached: u64,
    pub entities_offline: u64,
    pub files_summarized: u64,
    pub files_cached: u64,
    pub files_offline: u64,
    /// `model`, `cached`, `offline` or empty when not asked.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub hierarchy: String,
    pub paths_repaired: u64,
    pub routed: u64,
    pub drift_judged: u64,
    pub budget_stopped: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// With `estimate_only`: what a real run would send, at most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Estimate>,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Estimate {
    pub requests: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Default)]
struct State {
    stats: LiftStats,
    /// Tokens spent and tokens reserved by requests in flight.
    used: u64,
    reserved: u64,
    /// Calls that got a reply, and calls that failed after their retries.
    replies: u64,
    failed: u64,
}

/// Calls failing in a row, with none ever answered, after which the run
/// stops asking: the service is down or unreachable.
const GIVE_UP_AFTER: u64 = 3;

/// What one call came to.
enum Called {
    Reply(String),
    /// No reply: the reason, already recorded.
    Failed,
    OverBudget,
}

/// One thing to ask about, rendered for the prompt.
struct Job {
    /// The key the reply answers under.
    key: String,
    /// The cache key of the answer.
    input: String,
    text: String,
}

pub struct LlmLifter {
    id: crate::graph::Id,
    settings: Settings,
    chat: Chat,
    cache: Cache,
    rt: tokio::runtime::Runtime,
    state: Mutex<State>,
    /// Set once the API refused us; the remaining work stops asking.
    refused: AtomicBool,
    progress: Box<dyn Progress>,
}

impl LlmLifter {
    /// A lifter answering through `settings`, caching under `rpg_dir`.
    pub fn new(
        settings: Settings,
        rpg_dir: &Path,
        progress: Box<dyn Progress>,
    ) -> Result<LlmLifter, LiftError> {
        if !settings.estimate_only
            && settings.endpoint.api_key.is_none()
            && settings.endpoint.base_url.starts_with(OPENAI)
        {
            return Err(LiftError::Settings(
                "OPENAI_API_KEY is not set (a local server needs OPENAI_BASE_URL instead)".into(),
            ));
        }
        let model = settings.endpoint.model.clone();
        let chat = Chat::new(settings.endpoint.clone()).map_err(LiftError::Settings)?;
        let cache = Cache::open(rpg_dir, &model, prompt::VERSION)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| LiftError::Settings(format!("cannot start the async runtime: {e}")))?;
        Ok(LlmLifter {
            id: format!("llm/{model}").into(),
            state: Mutex::new(State {
                stats: LiftStats {
                    model,
                    ..LiftStats::default()
                },
                ..State::default()
            }),
            settings,
            chat,
            cache,
            rt,
            refused: AtomicBool::new(false),
            progress,
        })
    }

    /// What this run asked and spent so far.
    pub fn stats(&self) -> LiftStats {
        let mut s = self.lock().stats.clone();
        s.retries = self.chat.retries();
        s
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fail(&self, why: String) {
        let mut st = self.lock();
        if st.stats.failures.len() < 5 && !st.stats.failures.contains(&why) {
            st.stats.failures.push(why);
        }
    }

    /// One request, inside the budget, with its usage accounted.
    async fn call(
        &self,
        system: &str,
        turns: &[Turn],
        schema_name: &str,
        schema: &Value,
        max_tokens: u32,
    ) -> Result<Called, LiftError> {
        if self.refused.load(Ordering::Relaxed) {
            return Ok(Called::Failed);
        }
        let prompt_chars: usize = system.len()
            + schema.to_string().len()
            + turns
                .iter()
                .map(|t| match t {
                    Turn::User(s) | Turn::Assistant(s) => s.len(),
                })
                .sum::<usize>();
        // Reserve generously (three characters a token) so the budget is a
        // hard stop even when the estimate runs short.
        let reserve = prompt_chars.div_ceil(3) as u64 + u64::from(max_tokens);
        {
            let mut st = self.lock();
            if self.settings.estimate_only {
                let e = st.stats.estimate.get_or_insert_with(Estimate::default);
                e.requests += 1;
                e.prompt_tokens += prompt_chars.div_ceil(4) as u64;
                e.completion_tokens += u64::from(max_tokens);
                return Ok(Called::Failed);
            }
            if st.replies == 0 && st.failed >= GIVE_UP_AFTER {
                return Ok(Called::Failed);
            }
            if let Some(limit) = self.settings.budget_tokens {
                if st.used + st.reserved + reserve > limit {
                    st.stats.budget_stopped = true;
                    return Ok(Called::OverBudget);
                }
            }
            st.reserved += reserve;
            st.stats.requests += 1;
        }
        let result = self
            .chat
            .ask(system, turns, schema_name, schema.clone(), max_tokens)
            .await;
        let mut st = self.lock();
        st.reserved -= reserve;
        match result {
            Ok(reply) => {
                st.replies += 1;
                st.used += reply.usage.prompt + reply.usage.completion;
                st.stats.prompt_tokens += reply.usage.prompt;
                st.stats.completion_tokens += reply.usage.completion;
                Ok(Called::Reply(reply.content))
            }
            Err(CallError::Refused { status, message }) => {
                self.refused.store(true, Ordering::Relaxed);
                Err(LiftError::Refused {
                    base: self.settings.endpoint.base_url.clone(),
                    status,
                    message,
                })
            }
            Err(CallError::Failed(why)) => {
                st.failed += 1;
                drop(st);
                self.fail(why);
                Ok(Called::Failed)
            }
        }
    }

    /// Ask once for a JSON object, with one format-correction retry.
    async fn ask_object(
        &self,
        system: &str,
        user: String,
        schema_name: &str,
        schema: &Value,
        max_tokens: u32,
    ) -> Result<Option<serde_json::Map<String, Value>>, LiftError> {
        let mut turns = vec![Turn::User(user)];
        for attempt in 0..2 {
            let content = match self
                .call(system, &turns, schema_name, schema, max_tokens)
                .await?
            {
                Called::Reply(c) => c,
                Called::Failed | Called::OverBudget => return Ok(None),
            };
            match prompt::parse_object(&content) {
                Ok(m) => return Ok(Some(m)),
                Err(why) if attempt == 0 => {
                    self.lock().stats.format_retries += 1;
                    turns.push(Turn::Assistant(content.chars().take(2000).collect()));
                    turns.push(Turn::User(format!(
                        "{why}. Reply again with only the JSON object the schema describes."
                    )));
                }
                Err(why) => self.fail(why),
            }
        }
        Ok(None)
    }

    /// Ask about `jobs` in one batch, re-asking for what a reply left out,
    /// and return the accepted answers by job key.
    async fn ask_keyed(
        &self,
        system: &str,
        intro: &str,
        jobs: &[Job],
        item: &Value,
        accept: &(dyn Fn(&Value) -> bool + Sync),
    ) -> Result<BTreeMap<String, Value>, LiftError> {
        let mut answered = BTreeMap::new();
        let mut pending: Vec<&Job> = jobs.iter().collect();
        for round in 0..=self.settings.rounds {
            if pending.is_empty() {
                break;
            }
            if round > 0 {
                self.lock().stats.reasked += pending.len() as u64;
            }
            let keys: Vec<String> = pending.iter().map(|j| j.key.clone()).collect();
            let schema = prompt::keyed_schema(&keys, item);
            let mut user = String::from(intro);
            for j in &pending {
                user.push_str("\n\n");
                user.push_str(&j.text);
            }
            user.push_str("\n\nKeys to answer: ");
            user.push_str(&serde_json::to_string(&keys).unwrap_or_default());
            let max_tokens = TOKENS_PER_ANSWER * pending.len() as u32 + 64;
            let Some(reply) = self
                .ask_object(system, user, "answers", &schema, max_tokens)
                .await?
            else {
                break;
            };
            let wanted: BTreeSet<&str> = pending.iter().map(|j| j.key.as_str()).collect();
            for (k, v) in reply {
                if wanted.contains(k.as_str()) && accept(&v) {
                    answered.insert(k, v);
                } else if !wanted.contains(k.as_str()) {
                    self.lock().stats.dropped_keys += 1;
                }
            }
            pending.retain(|j| !answered.contains_key(&j.key));
        }
        Ok(answered)
    }

    /// Ask about `batches` concurrently. Each answer `read` accepts is
    /// cached under its job's input as soon as its batch arrives, so a
    /// killed run keeps what it paid for; the accepted answers come back by
    /// input.
    fn ask_cached<T: serde::Serialize + Send>(
        &self,
        kind: CacheKind,
        system: &str,
        intro: &str,
        batches: Vec<Vec<Job>>,
        item: &Value,
        read: &(dyn Fn(&Value) -> Option<T> + Sync),
    ) -> Result<BTreeMap<String, T>, LiftError> {
        let got: Mutex<BTreeMap<String, T>> = Mutex::new(BTreeMap::new());
        let accept = |v: &Value| read(v).is_some();
        let work = futures::stream::iter(batches.iter().map(|b| {
            let (got, accept) = (&got, &accept);
            async move {
                let answers = self.ask_keyed(system, intro, b, item, accept).await?;
                let entries: Vec<(String, T)> = b
                    .iter()
                    .filter_map(|j| Some((j.input.clone(), read(answers.get(&j.key)?)?)))
                    .collect();
                self.cache.put_all(kind, &entries)?;
                if matches!(kind, CacheKind::Entity) {
                    // Only entity lifting is long enough to show a bar.
                    self.progress.inc(b.len() as u64);
                }
                got.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(entries);
                Ok::<(), LiftError>(())
            }
        }))
        .buffer_unordered(self.settings.concurrency);
        let results: Vec<Result<(), LiftError>> = self.rt.block_on(work.collect());
        results.into_iter().collect::<Result<(), LiftError>>()?;
        Ok(got.into_inner().unwrap_or_else(|p| p.into_inner()))
    }

    /// Greedy packing of units (which stay together) under the batch budget.
    fn pack(&self, units: Vec<Vec<Job>>) -> Vec<Vec<Job>> {
        let mut out: Vec<Vec<Job>> = Vec::new();
        let mut size = 0;
        for unit in units {
            let t: usize = unit.iter().map(|j| prompt::tokens(&j.text)).sum();
            if out.is_empty() || size + t > self.settings.batch_tokens {
                out.push(Vec::new());
                size = 0;
            }
            size += t;
            out.last_mut().expect("pushed").extend(unit);
        }
        out
    }

    fn notice(&self, what: &str, count: u64) {
        if count == 0 || self.settings.estimate_only {
            return;
        }
        let st = self.lock();
        let why = if st.stats.budget_stopped {
            "the token budget ran out".to_string()
        } else if let Some(f) = st.stats.failures.first() {
            format!("the model API failed: {f}")
        } else {
            "the model gave no valid answer".to_string()
        };
        crate::notice!(
            "rpg: notice: {count} {what} lifted offline ({why}); they are marked offline and a later `rpg init --lifter llm` asks only for them"
        );
    }
}

fn cut(text: &str, max: usize) -> &str {
    crate::text::prefix(text, max)
}

/// How an entity appears in a lifting prompt. A class shows its header and
/// method names; its methods travel with it and show their code.
fn render(key: &str, item: &LiftInput, methods: &[&str]) -> String {
    let mut out = format!("[{key}] {} in {}\n", item.kind.as_str(), item.path);
    if item.kind == Kind::Class {
        out.push_str(item.signature);
        if !item.doc.is_empty() {
            out.push_str("\n\"\"\"");
            out.push_str(cut(item.doc, 600));
            out.push_str("\"\"\"");
        }
        if !methods.is_empty() {
            out.push_str("\nmethods: ");
            out.push_str(&methods.join(", "));
        }
    } else {
        let code = cut(item.code, CODE_BYTES);
        out.push_str(code);
        if code.len() < item.code.len() {
            out.push_str("\n…");
        }
    }
    out
}

/// What domain discovery reads: one line per directory with what its files
/// do, bounded so that a large repository still fits one request.
fn directory_listing(files: &[FileOutline], batch_tokens: usize) -> String {
    let mut by_dir: BTreeMap<&str, Vec<&FileOutline>> = BTreeMap::new();
    for f in files {
        by_dir.entry(dir_of(f.path)).or_default().push(f);
    }
    let per_dir = (batch_tokens * 4 / by_dir.len().max(1)).clamp(80, 600);
    let mut listing = String::new();
    for (dir, fs) in &by_dir {
        let mut line = format!("{dir}/ ({} files):", fs.len());
        for f in fs {
            if let Some(feat) = f.features.first() {
                line.push(' ');
                line.push_str(feat);
                line.push(';');
            }
            if line.len() > per_dir {
                break;
            }
        }
        listing.push_str(cut(&line, per_dir));
        listing.push('\n');
    }
    listing
}

/// What a file summary is asked from: the docstring's first line and the
/// first feature of up to eight top-level entities, and the cache key
/// they make. The path gives the model context but is not part of the
/// key: a renamed file is not summarised again.
fn summary_input<'a>(f: &FileLiftInput<'a>) -> (&'a str, Vec<&'a str>, String) {
    let tops: Vec<&str> = f
        .top_features
        .iter()
        .filter_map(|fs| fs.first().map(String::as_str))
        .take(8)
        .collect();
    let doc = f.doc.lines().next().unwrap_or("").trim();
    let input = digest(format!("{doc}\n{}", tops.join("; ")).as_bytes());
    (doc, tops, input)
}

impl LlmLifter {
    /// Seed the cache with what this model already wrote into a graph (the
    /// committed snapshot): its entity features by content hash, its file
    /// summaries by their input. What a clone or CI runner holds in the
    /// snapshot is never paid for again. Returns how many answers were new.
    pub fn seed(&self, g: &crate::graph::Graph) -> Result<usize, LiftError> {
        let mine = |e: &&crate::graph::Entity| e.lifter == self.id;
        let entities: Vec<(String, Vec<String>)> = g
            .entities
            .values()
            .filter(mine)
            .filter(|e| e.kind != Kind::File && !e.hash.is_empty())
            .map(|e| (e.hash.clone(), e.features.clone()))
            .collect();
        let mut files = Vec::new();
        for f in g
            .entities
            .values()
            .filter(mine)
            .filter(|e| e.kind == Kind::File)
        {
            let mut tops: Vec<&crate::graph::Entity> = g
                .edges
                .range(
                    crate::graph::Edge {
                        src: f.id.as_str().into(),
                        kind: crate::graph::EdgeKind::Contains,
                        dst: crate::graph::Id::default(),
                    }..,
                )
                .take_while(|e| e.src == f.id && e.kind == crate::graph::EdgeKind::Contains)
                .filter_map(|e| g.entities.get(e.dst.as_str()))
                .collect();
            // Source order, then largest first, as encode::file_input does.
            tops.sort_by_key(|e| e.start_line);
            tops.sort_by_key(|e| std::cmp::Reverse(e.end_line - e.start_line));
            let input = FileLiftInput {
                path: &f.path,
                doc: &f.doc,
                top_features: tops.iter().map(|e| e.features.as_slice()).collect(),
            };
            files.push((summary_input(&input).2, f.features.clone()));
        }
        Ok(self.cache.seed(CacheKind::Entity, &entities)?
            + self.cache.seed(CacheKind::File, &files)?)
    }
}

impl Lifter for LlmLifter {
    fn id(&self) -> &str {
        &self.id
    }

    fn lift(&self, items: &[LiftInput]) -> Result<Vec<Lifted>, LiftError> {
        let mut out: Vec<Option<Lifted>> = vec![None; items.len()];
        // Identical code is asked about once.
        let mut need: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, it) in items.iter().enumerate() {
            let cached: Option<Vec<String>> = if it.hash.is_empty() {
                None
            } else {
                self.cache.get(CacheKind::Entity, it.hash)?
            };
            match cached {
                Some(features) => {
                    out[i] = Some(Lifted {
                        features,
                        by: self.id.clone(),
                    });
                    self.lock().stats.entities_cached += 1;
                }
                None if it.hash.is_empty() => out[i] = Some(offline::lift(it)),
                None => need.entry(it.hash).or_default().push(i),
            }
        }
        // Units: a top-level entity with everything nested in it.
        let mut units: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
        for idx in need.values() {
            let it = &items[idx[0]];
            let root = it.qualname.split(['.', ':']).next().unwrap_or(it.qualname);
            units.entry((it.path, root)).or_default().push(idx[0]);
        }
        let mut key_count: BTreeMap<&str, usize> = BTreeMap::new();
        for members in units.values() {
            for &i in members {
                *key_count.entry(items[i].qualname).or_default() += 1;
            }
        }
        let unit_jobs: Vec<Vec<Job>> = units
            .values()
            .map(|members| {
                members
                    .iter()
                    .map(|&i| {
                        let it = &items[i];
                        let key = if key_count[it.qualname] > 1 {
                            crate::graph::entity_id(it.path, it.qualname)
                        } else {
                            it.qualname.to_string()
                        };
                        let methods: Vec<&str> = members
                            .iter()
                            .map(|&m| &items[m])
                            .filter(|m| m.owner == Some(it.name) && m.kind != Kind::Class)
                            .map(|m| m.name)
                            .collect();
                        Job {
                            text: render(&key, it, &methods),
                            key,
                            input: it.hash.to_string(),
                        }
                    })
                    .collect()
            })
            .collect();
        let total: usize = unit_jobs.iter().map(Vec::len).sum();
        self.progress.start("lifting with the model", total as u64);
        let result = self.ask_cached(
            CacheKind::Entity,
            &prompt::lift_system(),
            "Entities:",
            self.pack(unit_jobs),
            &prompt::lift_item(),
            &|v| Some(prompt::features(v, prompt::MAX_FEATURES)).filter(|f| !f.is_empty()),
        );
        self.progress.finish();
        let got = result?;
        let mut offline_count = 0;
        for (hash, idx) in need {
            for i in idx {
                out[i] = Some(match got.get(hash) {
                    Some(f) => Lifted {
                        features: f.clone(),
                        by: self.id.clone(),
                    },
                    None => {
                        offline_count += 1;
                        offline::lift(&items[i])
                    }
                });
            }
        }
        {
            let mut st = self.lock();
            st.stats.entities_offline += offline_count;
            st.stats.entities_lifted += (got.len() as u64).min(total as u64);
        }
        self.notice("entities", offline_count);
        Ok(out
            .into_iter()
            .zip(items)
            .map(|(o, it)| o.unwrap_or_else(|| offline::lift(it)))
            .collect())
    }

    fn summarize_files(&self, files: &[FileLiftInput]) -> Result<Vec<Lifted>, LiftError> {
        let mut out: Vec<Option<Lifted>> = vec![None; files.len()];
        let mut inputs: Vec<String> = Vec::with_capacity(files.len());
        let mut jobs: Vec<Vec<Job>> = Vec::new();
        for (i, f) in files.iter().enumerate() {
            let (doc, tops, input) = summary_input(f);
            inputs.push(input.clone());
            if let Some(features) = self.cache.get(CacheKind::File, &input)? {
                out[i] = Some(Lifted {
                    features,
                    by: self.id.clone(),
                });
                self.lock().stats.files_cached += 1;
                continue;
            }
            if tops.is_empty() && doc.is_empty() {
                // Nothing to summarise: not worth a model's time.
                out[i] = Some(offline::summarize(f));
                continue;
            }
            let mut text = format!("[{}]", f.path);
            if !doc.is_empty() {
                text.push_str(&format!("\ndocstring: {}", cut(doc, 300)));
            }
            if !tops.is_empty() {
                text.push_str(&format!("\nentities do: {}", tops.join("; ")));
            }
            jobs.push(vec![Job {
                key: f.path.to_string(),
                input,
                text,
            }]);
        }
        let got = self.ask_cached(
            CacheKind::File,
            &prompt::summary_system(),
            "Files:",
            self.pack(jobs),
            &prompt::summary_item(),
            &|v| Some(prompt::features(v, prompt::MAX_FILE_FEATURES)).filter(|f| !f.is_empty()),
        )?;
        let (mut summarized, mut offline_count) = (0, 0);
        let out: Vec<Lifted> = out
            .into_iter()
            .zip(files)
            .zip(&inputs)
            .map(|((o, f), input)| {
                o.unwrap_or_else(|| match got.get(input) {
                    Some(features) => {
                        summarized += 1;
                        Lifted {
                            features: features.clone(),
                            by: self.id.clone(),
                        }
                    }
                    None => {
                        offline_count += 1;
                        offline::summarize(f)
                    }
                })
            })
            .collect();
        {
            let mut st = self.lock();
            st.stats.files_summarized += summarized;
            st.stats.files_offline += offline_count;
        }
        self.notice("file summaries", offline_count);
        Ok(out)
    }

    fn organize(
        &self,
        files: &[FileOutline],
    ) -> Result<Option<BTreeMap<String, String>>, LiftError> {
        if !self.settings.hierarchy || files.is_empty() {
            return Ok(None);
        }
        let listing = directory_listing(files, self.settings.batch_tokens);
        let areas_key = digest(listing.as_bytes());
        let cached_areas: Option<Vec<String>> = self.cache.get(CacheKind::Areas, &areas_key)?;
        let areas = match cached_areas {
            Some(a) => a,
            None => {
                let reply = self.rt.block_on(self.ask_object(
                    &prompt::areas_system(),
                    format!("Directories and what their files do:\n{listing}"),
                    "areas",
                    &prompt::areas_schema(),
                    400,
                ))?;
                let mut areas: Vec<String> = Vec::new();
                if let Some(list) = reply
                    .as_ref()
                    .and_then(|m| m.get("areas"))
                    .and_then(Value::as_array)
                {
                    for a in list
                        .iter()
                        .filter_map(Value::as_str)
                        .filter_map(prompt::label)
                    {
                        if !areas.contains(&a) && areas.len() < 10 {
                            areas.push(a);
                        }
                    }
                }
                if self.settings.estimate_only {
                    // A stand-in, so the estimate counts what assignment costs.
                    vec!["area".to_string()]
                } else if areas.is_empty() {
                    crate::notice!("rpg: notice: the model proposed no functional areas; keeping the offline hierarchy");
                    return Ok(None);
                } else {
                    self.cache
                        .put_all(CacheKind::Areas, &[(areas_key, areas.clone())])?;
                    areas
                }
            }
        };
        let mut leaf_of: BTreeMap<String, String> = BTreeMap::new();
        let mut asked: Vec<(&str, String)> = Vec::new();
        let mut jobs: Vec<Vec<Job>> = Vec::new();
        let area_list = areas.join("|");
        for f in files {
            let text = format!("[{}] {}", f.path, f.features.join("; "));
            let input = digest(format!("{area_list}\n{text}").as_bytes());
            if let Some(leaf) = self.cache.get::<String>(CacheKind::Assign, &input)? {
                leaf_of.insert(f.path.to_string(), leaf);
                continue;
            }
            asked.push((f.path, input.clone()));
            jobs.push(vec![Job {
                key: f.path.to_string(),
                input,
                text,
            }]);
        }
        let cached_all = jobs.is_empty();
        // A path counts only when its area is one of the discovered ones (or
        // shares words with one); anything else is asked again.
        let got = self.ask_cached(
            CacheKind::Assign,
            &prompt::assign_system(&areas),
            "Files and what they do:",
            self.pack(jobs),
            &prompt::assign_item(),
            &|v| {
                let [a, c, s] = v.as_str().and_then(prompt::leaf)?;
                Some(format!("{}/{c}/{s}", nearest_area(&a, &areas)?))
            },
        )?;
        for (path, input) in asked {
            if let Some(leaf) = got.get(&input) {
                leaf_of.insert(path.to_string(), leaf.clone());
            }
        }
        if self.settings.estimate_only {
            return Ok(None);
        }
        if leaf_of.len() * 2 < files.len() {
            crate::notice!(
                "rpg: notice: the model placed only {} of {} files; keeping the offline hierarchy",
                leaf_of.len(),
                files.len()
            );
            return Ok(None);
        }
        // Repair: a file the model did not place joins the leaf most of its
        // directory went to, else keeps its offline leaf.
        let mut dir_votes: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
        for f in files {
            if let Some(l) = leaf_of.get(f.path) {
                *dir_votes
                    .entry(dir_of(f.path))
                    .or_default()
                    .entry(l.as_str())
                    .or_default() += 1;
            }
        }
        let mut repaired: Vec<(String, String)> = Vec::new();
        for f in files.iter().filter(|f| !leaf_of.contains_key(f.path)) {
            let leaf = dir_votes
                .get(dir_of(f.path))
                .and_then(|v| v.iter().max_by_key(|(l, n)| (**n, std::cmp::Reverse(*l))))
                .map(|(l, _)| l.to_string())
                .unwrap_or_else(|| f.offline_leaf.to_string());
            repaired.push((f.path.to_string(), leaf));
        }
        {
            let mut st = self.lock();
            st.stats.paths_repaired += repaired.len() as u64;
            st.stats.hierarchy = if cached_all { "cached" } else { "model" }.to_string();
        }
        leaf_of.extend(repaired);
        leaf_of.retain(|_, l| l.split('/').count() == 3);
        for f in files {
            leaf_of
                .entry(f.path.to_string())
                .or_insert_with(|| f.offline_leaf.to_string());
        }
        Ok(Some(leaf_of))
    }

    fn route(
        &self,
        categories: &BTreeMap<String, Category>,
        item: &RouteInput,
    ) -> Result<Option<String>, LiftError> {
        if !self.settings.routing || item.features.is_empty() {
            return Ok(None);
        }
        let mut current = String::new();
        for depth in 0..3 {
            let prefix = if current.is_empty() {
                String::new()
            } else {
                format!("{current}/")
            };
            let children: Vec<&Category> = categories
                .range(prefix.clone()..)
                .take_while(|(p, _)| p.starts_with(&prefix))
                .filter(|(p, _)| !p[prefix.len()..].contains('/'))
                .map(|(_, c)| c)
                .collect();
            if children.is_empty() {
                break;
            }
            let labels: Vec<String> = children
                .iter()
                .map(|c| crate::text::file_name(&c.path).to_string())
                .collect();
            let mut user = format!(
                "The code: {}\nWhat it does: {}\nCategories under {}:",
                item.id,
                item.features.join("; "),
                if current.is_empty() {
                    "the root"
                } else {
                    current.as_str()
                }
            );
            for (l, c) in labels.iter().zip(&children) {
                let terms: Vec<&str> = c.terms.iter().take(8).map(String::as_str).collect();
                user.push_str(&format!("\n- {l}: {}", terms.join(", ")));
            }
            let input = digest(user.as_bytes());
            let choice = match self.cache.get::<String>(CacheKind::Route, &input)? {
                Some(c) => Some(c),
                None => {
                    let reply = self.rt.block_on(self.ask_object(
                        &prompt::route_system(),
                        user,
                        "route",
                        &prompt::route_schema(&labels),
                        40,
                    ))?;
                    let c = reply
                        .as_ref()
                        .and_then(|m| m.get("choice"))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .filter(|c| c == "none" || labels.contains(c));
                    if let Some(c) = &c {
                        self.cache
                            .put_all(CacheKind::Route, &[(input, c.clone())])?;
                    }
                    c
                }
            };
            match choice {
                Some(c) if c != "none" => current = format!("{prefix}{c}"),
                Some(_) => break,
                // No usable answer: offline routing decides, unless the
                // model already chose a branch.
                None if depth == 0 => return Ok(None),
                None => break,
            }
        }
        self.lock().stats.routed += 1;
        Ok(Some(current))
    }

    fn judge_drift(
        &self,
        id: &str,
        old: &[String],
        new: &[String],
    ) -> Result<Option<bool>, LiftError> {
        if !self.settings.drift {
            return Ok(None);
        }
        let user = format!(
            "The code: {id}\nBefore, it did: {}\nAfter, it does: {}",
            old.join("; "),
            new.join("; ")
        );
        let input = digest(user.as_bytes());
        if let Some(b) = self.cache.get::<bool>(CacheKind::Drift, &input)? {
            return Ok(Some(b));
        }
        let reply = self.rt.block_on(self.ask_object(
            &prompt::drift_system(),
            user,
            "drift",
            &prompt::drift_schema(),
            20,
        ))?;
        let verdict = reply
            .as_ref()
            .and_then(|m| m.get("changed_purpose"))
            .and_then(Value::as_bool);
        if let Some(b) = verdict {
            self.cache.put_all(CacheKind::Drift, &[(input, b)])?;
            self.lock().stats.drift_judged += 1;
        }
        Ok(verdict)
    }
}

/// The discovered area a reply's first label names: itself, or the one
/// sharing most words with it.
fn nearest_area(label: &str, areas: &[String]) -> Option<String> {
    if areas.iter().any(|a| a == label) {
        return Some(label.to_string());
    }
    let words: BTreeSet<&str> = label.split(' ').collect();
    areas
        .iter()
        .map(|a| (a.split(' ').filter(|w| words.contains(w)).count(), a))
        .filter(|(n, _)| *n > 0)
        .max_by_key(|(n, a)| (*n, std::cmp::Reverse(a.as_str())))
        .map(|(_, a)| a.clone())
}
