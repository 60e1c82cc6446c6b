//! The command line: flags to library calls, results to stdout, errors as
//! one line on stderr. Exit codes: 0 ok, 1 nothing found, 2 error.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use rpg::config::Config;
use rpg::encode::{self, EncodeReport, Progress};
use rpg::git::Repo;
use rpg::lift::llm::{LiftStats, LlmLifter, Settings};
use rpg::lift::offline::OfflineLifter;
use rpg::lift::Lifter;
use rpg::search::tools;
use rpg::store::{RpgDir, StoredCounts};
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "rpg",
    version,
    about = "Repository Planning Graph: where in the code to look for an issue"
)]
struct Cli {
    /// Run as if started in this directory.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the graph of a commit from git objects and write .rpg/.
    Init {
        /// The commit to index.
        #[arg(long, default_value = "HEAD")]
        rev: String,
        /// Who writes features: `offline` (default) or `llm`, an
        /// OpenAI-compatible model (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
        /// `RPG_MODEL`, `[lift]` in .rpg/config.toml or your own config). Defaults to
        /// `[lift] lifter`.
        #[arg(long, value_enum)]
        lifter: Option<LifterArg>,
        /// With the model: stop asking after this many tokens (prompt plus
        /// completion); the rest is lifted offline and marked so.
        #[arg(long, value_name = "N")]
        budget_tokens: Option<u64>,
        /// With the model: estimate the requests and tokens a lift would
        /// take, send nothing and write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show which commit the graph reflects, how far behind HEAD it is, and counts.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Move the graph to a commit (default HEAD), re-parsing and re-lifting only what changed.
    Update {
        /// The commit to move to.
        #[arg(long, default_value = "HEAD")]
        to: String,
        /// Also rewrite the committed snapshot (.rpg/graph.jsonl).
        #[arg(long)]
        snapshot: bool,
        /// Apply each commit in turn instead of one diff, logging events per commit.
        #[arg(long)]
        per_commit: bool,
        /// Drift threshold τ (Jaccard distance of feature words) above which a
        /// modified entity is re-routed in the hierarchy.
        #[arg(long, default_value_t = rpg::evolve::DEFAULT_DRIFT_THRESHOLD)]
        drift_threshold: f32,
        /// With the model: stop asking after this many tokens; the rest is
        /// lifted offline and marked so.
        #[arg(long, value_name = "N")]
        budget_tokens: Option<u64>,
        /// Print the report and events as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rank the files and functions an issue most likely concerns.
    Locate {
        /// The issue text; `-` reads standard input.
        query: Option<String>,
        /// Read the issue text from a file.
        #[arg(long, value_name = "PATH", conflicts_with = "query")]
        query_file: Option<PathBuf>,
        /// How many files and functions to list.
        #[arg(long, default_value_t = 10, value_parser = at_least_one)]
        top_k: usize,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Same as `--format json`.
        #[arg(long)]
        json: bool,
        /// With `--format markdown`: turn paths into links under this URL,
        /// e.g. https://github.com/OWNER/REPO/blob/COMMIT.
        #[arg(long, value_name = "URL")]
        link_base: Option<String>,
        /// Ablation: ignore names the issue mentions.
        #[arg(long)]
        no_names: bool,
        /// Ablation: ignore stack-trace frames.
        #[arg(long)]
        no_frames: bool,
        /// Ablation: no class context.
        #[arg(long)]
        no_context: bool,
        /// Ablation: no call-graph neighbours.
        #[arg(long)]
        no_neighbours: bool,
        /// Ablation: do not down-weight test code.
        #[arg(long)]
        no_test_penalty: bool,
        /// Ablation: ignore paths and path words.
        #[arg(long)]
        no_paths: bool,
        /// Rank lexically only, even when `rpg embed` has computed vectors.
        #[arg(long)]
        no_dense: bool,
        /// Let files gain from the strength of their directory.
        #[arg(long)]
        dirs: bool,
        /// Fuse in the names-and-features ranking (reciprocal rank, k = 60).
        #[arg(long)]
        fusion: bool,
    },
    /// Find entities by what they do (features) or what their code says (snippets).
    Search {
        /// What to look for.
        query: String,
        /// Only inside this hierarchy path (area/category/…) or directory.
        #[arg(long)]
        scope: Option<String>,
        #[arg(long, value_enum, default_value_t = SearchMode::Auto)]
        mode: SearchMode,
        #[arg(long, default_value_t = 10, value_parser = at_least_one)]
        top_k: usize,
        #[arg(long)]
        json: bool,
    },
    /// Show an entity (path:qualname), a file or a hierarchy path: metadata,
    /// features, hierarchy and line-numbered source.
    Fetch {
        target: String,
        #[arg(long)]
        json: bool,
    },
    /// Walk the graph's edges from an entity.
    Explore {
        /// An entity id (path:qualname) or a file path.
        id: String,
        /// Edge kinds to follow, comma-separated.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "invokes,imports,inherits,contains"
        )]
        edges: Vec<String>,
        /// down: what it contains, imports, invokes; up: who uses it.
        #[arg(long, value_enum, default_value_t = ExploreDirection::Both)]
        direction: ExploreDirection,
        #[arg(long, default_value_t = 2)]
        depth: usize,
        #[arg(long)]
        json: bool,
    },
    /// A file's skeleton: imports, classes, functions and methods with line
    /// ranges and signatures, no bodies.
    Symbols {
        file: String,
        #[arg(long)]
        json: bool,
    },
    /// Benchmark locate on a case file (JSON lines: id, repo, base_commit,
    /// query, gold_files, gold_functions), replaying each repository's
    /// history: init at the first case's commit, update to each later one.
    Eval {
        #[arg(long, value_name = "FILE.jsonl")]
        cases: PathBuf,
        /// A clone holding the cases' commits, or a directory of clones;
        /// repeatable. Clones are only read.
        #[arg(long = "repo", value_name = "PATH", required = true)]
        repos: Vec<PathBuf>,
        /// Also run BM25 alone and the ranker without each component, and
        /// print each component's gain.
        #[arg(long)]
        ablate: bool,
        /// Also embed entities and issues locally and use dense neighbours
        /// (needs scripts/setup-embeddings.sh); adds a "without dense" variant.
        #[arg(long)]
        dense: bool,
        /// With --dense: embed entities as `summary` (name, features,
        /// docstring, signature) or as `code` (name and source body).
        #[arg(long, value_enum, default_value = "summary", requires = "dense")]
        embed_text: EmbedTextArg,
        /// Print the cases each variant missed at file or function Hit@5.
        #[arg(long)]
        misses: bool,
        #[arg(long)]
        json: bool,
    },
    /// Serve locate, search, fetch, explore, symbols and status to coding
    /// agents over the Model Context Protocol (stdio).
    Mcp,
    /// Compute local embedding vectors for every entity (incremental: only
    /// texts never embedded before). Needs scripts/setup-embeddings.sh.
    Embed {
        #[arg(long)]
        json: bool,
    },
    /// Install, remove or inspect the git hooks that keep the graph current.
    Hook {
        #[command(subcommand)]
        action: HookAction,
    },
    /// GitHub automation: comment located code on issues, the graph delta
    /// on pull requests (reads GITHUB_EVENT_PATH, GITHUB_TOKEN,
    /// GITHUB_REPOSITORY, GITHUB_API_URL and GITHUB_SERVER_URL).
    Bot {
        #[command(subcommand)]
        action: BotAction,
    },
}

#[derive(Subcommand)]
enum BotAction {
    /// Locate an opened or edited issue and comment the scaffold, editing
    /// the bot's earlier comment when there is one.
    IssueComment {
        /// The event payload (default: $GITHUB_EVENT_PATH).
        #[arg(long)]
        event: Option<PathBuf>,
        #[arg(long, default_value_t = 5, value_parser = at_least_one)]
        top_k: usize,
        /// Issues with this label are left alone.
        #[arg(long, default_value = "rpg-skip")]
        opt_out_label: String,
        /// Print the comment instead of posting it (no token needed).
        #[arg(long)]
        dry_run: bool,
    },
    /// Comment what a pull request changes in the graph: entities inserted,
    /// modified, drifted and deleted, and the categories touched.
    PrComment {
        #[arg(long)]
        event: Option<PathBuf>,
        #[arg(long, default_value = "rpg-skip")]
        opt_out_label: String,
        #[arg(long)]
        dry_run: bool,
    },
    /// Exit 0 when a push event may have changed code, 1 when it only
    /// touched .rpg/ (the snapshot commit itself).
    PushCheck {
        #[arg(long)]
        event: Option<PathBuf>,
    },
}

/// A count that must be positive: `--top-k 0` asks for nothing, which is a
/// usage error rather than an empty answer.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
    Markdown,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SearchMode {
    Features,
    Snippets,
    Auto,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LifterArg {
    Offline,
    Llm,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EmbedTextArg {
    Summary,
    Code,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ExploreDirection {
    Up,
    Down,
    Both,
}

#[derive(Subcommand)]
enum HookAction {
    /// Install post-commit, post-merge, post-rewrite and post-checkout hooks,
    /// chaining any hook already there.
    Install {
        /// Also install a pre-commit hook that commits the snapshot with each commit.
        #[arg(long)]
        snapshot: bool,
        /// Add to a hooks directory that git tracks (husky's .husky/): a
        /// call to `rpg` through PATH, appended to each hook.
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
    },
    /// Remove rpg's hooks and restore the ones they chained to.
    Uninstall {
        #[arg(long)]
        json: bool,
    },
    /// Show which hooks are installed, and whether git would run them.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// git's merge driver for .rpg/graph.jsonl: writes the snapshot of the
    /// merged tree to OURS instead of conflict markers.
    #[command(hide = true)]
    MergeDriver {
        base: PathBuf,
        ours: PathBuf,
        theirs: PathBuf,
        /// The path being merged (git's %P), for messages.
        path: Option<String>,
    },
    /// What an installed hook runs (never fails; errors go to .rpg/log/hook.log).
    #[command(hide = true)]
    Run {
        name: String,
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            // A closed pipe (`rpg locate … | head`) is not an error: stop
            // quietly, as ripgrep does.
            if closed_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            let msg: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            eprintln!("rpg: error: {}", msg.join(": "));
            ExitCode::from(2)
        }
    }
}

/// Whether `e` is a write to a reader that went away. serde_json wraps the
/// io error without exposing it as a source, so it is asked by kind.
fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let kind = c
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| c.downcast_ref::<serde_json::Error>()?.io_error_kind());
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    let start_dir = match cli.dir {
        Some(d) => d,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    match cli.command {
        Command::Init {
            rev,
            lifter,
            budget_tokens,
            dry_run,
            json,
        } => init(&start_dir, &rev, lifter, budget_tokens, dry_run, json),
        Command::Status { json } => status(&start_dir, json),
        Command::Update {
            to,
            snapshot,
            per_commit,
            drift_threshold,
            budget_tokens,
            json,
        } => update(
            &start_dir,
            &to,
            snapshot,
            per_commit,
            drift_threshold,
            budget_tokens,
            json,
        ),
        Command::Hook { action } => hook(&start_dir, action),
        Command::Bot { action } => bot(&start_dir, action),
        Command::Embed { json } => embed(&start_dir, json),
        Command::Locate {
            query,
            query_file,
            top_k,
            format,
            json,
            link_base,
            no_names,
            no_frames,
            no_context,
            no_neighbours,
            no_test_penalty,
            no_paths,
            no_dense,
            dirs,
            fusion,
        } => {
            let text = match (query, query_file) {
                (_, Some(p)) => std::fs::read_to_string(&p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
                (Some(q), None) if q == "-" => {
                    let mut buf = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut buf)
                        .context("cannot read the query from standard input")?;
                    buf
                }
                (Some(q), None) => q,
                (None, None) => {
                    anyhow::bail!("give the issue text, `-` for standard input, or --query-file")
                }
            };
            let sw = rpg::search::Switches {
                w: Default::default(),
                names: !no_names,
                frames: !no_frames,
                context: !no_context,
                neighbours: !no_neighbours,
                test_penalty: !no_test_penalty,
                paths: !no_paths,
                dirs,
                fusion,
                dense: !no_dense,
                dense_rrf: false,
            };
            let format = if json { Format::Json } else { format };
            locate(&start_dir, &text, top_k, format, link_base.as_deref(), sw)
        }
        Command::Search {
            query,
            scope,
            mode,
            top_k,
            json,
        } => {
            let mode = match mode {
                SearchMode::Features => tools::Mode::Features,
                SearchMode::Snippets => tools::Mode::Snippets,
                SearchMode::Auto => tools::Mode::Auto,
            };
            with_tools(&start_dir, |repo, store| {
                let reader = rpg::search::Reader::open(store)?;
                let dense = match mode {
                    tools::Mode::Auto => dense_neighbours(repo, store, &query),
                    _ => Vec::new(),
                };
                let found = tools::search(
                    store,
                    &reader,
                    &query,
                    scope.as_deref(),
                    mode,
                    top_k,
                    &dense,
                )?;
                emit(json, &found, rpg::render::searched)?;
                Ok(!found.results.is_empty())
            })
        }
        Command::Eval {
            cases,
            repos,
            ablate,
            dense,
            embed_text,
            misses,
            json,
        } => eval(&cases, &repos, ablate, dense, embed_text, misses, json),
        Command::Mcp => {
            rpg::mcp::serve(start_dir.clone())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Fetch { target, json } => with_tools(&start_dir, |repo, store| {
            let f = tools::fetch(store, repo, &target)?;
            emit(json, &f, rpg::render::fetched)?;
            Ok(true)
        }),
        Command::Explore {
            id,
            edges,
            direction,
            depth,
            json,
        } => {
            let mut kinds = Vec::new();
            for e in &edges {
                match rpg::graph::EdgeKind::parse(e.trim()) {
                    Some(k) => kinds.push(k),
                    None => anyhow::bail!(
                        "unknown edge kind {e:?}: use invokes, imports, inherits or contains"
                    ),
                }
            }
            let direction = match direction {
                ExploreDirection::Up => tools::Direction::Up,
                ExploreDirection::Down => tools::Direction::Down,
                ExploreDirection::Both => tools::Direction::Both,
            };
            with_tools(&start_dir, |_, store| {
                let x = tools::explore(store, &id, &kinds, direction, depth)?;
                emit(json, &x, rpg::render::explored)?;
                Ok(true)
            })
        }
        Command::Symbols { file, json } => with_tools(&start_dir, |repo, store| {
            let s = tools::symbols(store, repo, &file)?;
            emit(json, &s, rpg::render::symbols)?;
            Ok(true)
        }),
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal.
struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    fn new() -> Bar {
        Bar(std::io::stderr()
            .is_terminal()
            .then(indicatif::ProgressBar::hidden))
    }
}

impl Progress for Bar {
    fn start(&self, what: &str, total: u64) {
        if let Some(b) = &self.0 {
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            b.set_length(total);
            b.set_position(0);
            b.set_message(what.to_string());
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} ({eta})")
            {
                b.set_style(style.progress_chars("=> "));
            }
        }
    }
    fn inc(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.inc(n);
        }
    }
    fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

#[derive(Serialize)]
struct InitJson<'a> {
    commit: &'a str,
    tree: &'a str,
    lifter: &'a str,
    counts: StoredCounts,
    report: &'a EncodeReport,
    seconds: f64,
    snapshot: String,
    snapshot_bytes: u64,
    /// What the model was asked and what it cost, with the model lifter.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<LiftStats>,
}

/// The model-backed lifter, when `--lifter` (else `[lift] lifter`) asks
/// for one. With `strict` (an explicit init) a model that cannot be used
/// is an error; otherwise (updates, hooks) the update lifts offline and
/// says so, since every command must work with no network and no key.
fn model_lifter(
    repo: &Repo,
    config: &Config,
    choice: Option<LifterArg>,
    budget_tokens: Option<u64>,
    dry_run: bool,
    strict: bool,
) -> Result<Option<LlmLifter>> {
    let wanted = match choice {
        Some(c) => c == LifterArg::Llm,
        None => config.lift.lifter == rpg::config::LifterKind::Llm,
    };
    if !wanted {
        if dry_run {
            anyhow::bail!("--dry-run estimates model use: add --lifter llm");
        }
        return Ok(None);
    }
    let made = (|| -> Result<LlmLifter, rpg::lift::LiftError> {
        let mut settings = Settings::from_config(&config.lift, &|k| std::env::var(k).ok())?;
        settings.budget_tokens = budget_tokens;
        settings.estimate_only = dry_run;
        let rpg = RpgDir::new(repo.workdir());
        rpg.ensure()
            .map_err(|e| rpg::lift::LiftError::Settings(e.to_string()))?;
        LlmLifter::new(settings, rpg.path(), Box::new(Bar::new()))
    })();
    match made {
        Ok(l) => Ok(Some(l)),
        Err(e) if strict => Err(e.into()),
        Err(e) => {
            eprintln!("rpg: notice: {e}; lifting offline");
            Ok(None)
        }
    }
}

fn write_model_stats(out: &mut impl Write, s: &LiftStats) -> std::io::Result<()> {
    if let Some(e) = &s.estimate {
        return writeln!(
            out,
            "model {}: would send at most {} requests, about {} prompt tokens and at most {} completion tokens ({} entities and {} files already cached)",
            s.model, e.requests, e.prompt_tokens, e.completion_tokens, s.entities_cached, s.files_cached
        );
    }
    writeln!(
        out,
        "model {}: {} requests ({} retries), {} prompt + {} completion tokens; entities: {} lifted, {} cached, {} offline; files: {} summarised, {} cached, {} offline{}",
        s.model,
        s.requests,
        s.retries,
        s.prompt_tokens,
        s.completion_tokens,
        s.entities_lifted,
        s.entities_cached,
        s.entities_offline,
        s.files_summarized,
        s.files_cached,
        s.files_offline,
        if s.budget_stopped { "; stopped at the token budget" } else { "" }
    )
}

fn init(
    dir: &std::path::Path,
    rev: &str,
    lifter: Option<LifterArg>,
    budget_tokens: Option<u64>,
    dry_run: bool,
    json: bool,
) -> Result<ExitCode> {
    let started = Instant::now();
    let repo = Repo::discover(dir)?;
    let commit = repo.resolve(rev)?;
    let config = Config::load(repo.workdir())?;
    let rpg = RpgDir::new(repo.workdir());
    // One writer at a time: an init must not swap the store under an update.
    let _lock = match dry_run {
        true => None,
        false => Some(rpg.lock(rpg::store::LOCK_WAIT)?),
    };
    let llm = model_lifter(&repo, &config, lifter, budget_tokens, dry_run, true)?;
    if let (Some(l), false) = (&llm, dry_run) {
        // What the committed snapshot holds from this model is not paid for
        // again; a snapshot that cannot be believed seeds nothing.
        if let Ok((committed, _)) = rpg.read_snapshot() {
            let seeded = l.seed(&committed)?;
            if seeded > 0 {
                eprintln!("rpg: {seeded} model answers taken from .rpg/graph.jsonl");
            }
        }
    }
    let chosen: &dyn Lifter = match &llm {
        Some(l) => l,
        None => &OfflineLifter,
    };
    let bar = Bar::new();
    let encode::Encoded {
        graph,
        report,
        mentions,
    } = encode::encode(&repo, &config, commit, chosen, &bar)?;
    let model = llm.as_ref().map(LlmLifter::stats);
    if dry_run {
        let stats = model.unwrap_or_default();
        let mut out = std::io::stdout().lock();
        if json {
            serde_json::to_writer_pretty(&mut out, &stats)?;
            writeln!(out)?;
        } else {
            write_model_stats(&mut out, &stats)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    rpg.save(&graph, &mentions)?;
    let t = Instant::now();
    rpg::search::index::ready(&rpg, rpg.open()?, &repo)?;
    rpg::timing("search index", t);
    let counts = StoredCounts::from(graph.counts());
    let snapshot_bytes = std::fs::metadata(rpg.snapshot_path())
        .map(|m| m.len())
        .unwrap_or(0);
    let seconds = started.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    if json {
        let j = InitJson {
            commit: &graph.meta.commit,
            tree: &graph.meta.tree,
            lifter: &graph.meta.lifter,
            counts,
            report: &report,
            seconds,
            snapshot: rpg.snapshot_path().display().to_string(),
            snapshot_bytes,
            model,
        };
        serde_json::to_writer_pretty(&mut out, &j)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "indexed {} at {}: {} files, {} lines",
            rev,
            short(&graph.meta.commit),
            report.files_indexed,
            report.lines
        )?;
        write_counts(&mut out, &counts)?;
        let s = &report.skipped;
        if s.total() > 0 {
            writeln!(
                out,
                "skipped {} files: {} excluded, {} generated, {} too large, {} binary, {} not UTF-8, {} links",
                s.total(),
                s.excluded,
                s.generated,
                s.too_large,
                s.binary,
                s.not_utf8,
                s.links
            )?;
        }
        if report.files_with_syntax_errors > 0 {
            writeln!(
                out,
                "{} files had syntax errors; indexed what could be recovered",
                report.files_with_syntax_errors
            )?;
        }
        writeln!(
            out,
            "wrote {} ({} bytes) in {:.2}s",
            rpg.snapshot_path()
                .strip_prefix(repo.workdir())
                .unwrap_or(&rpg.snapshot_path())
                .display(),
            snapshot_bytes,
            seconds
        )?;
        if let Some(m) = &model {
            write_model_stats(&mut out, m)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn write_counts(out: &mut impl Write, c: &StoredCounts) -> std::io::Result<()> {
    writeln!(
        out,
        "entities: {} files, {} classes, {} functions, {} methods",
        c.files, c.classes, c.functions, c.methods
    )?;
    let edges: Vec<String> = ["contains", "imports", "invokes", "inherits"]
        .iter()
        .map(|k| format!("{} {}", c.edges.get(*k).copied().unwrap_or(0), k))
        .collect();
    writeln!(out, "edges: {}", edges.join(", "))?;
    writeln!(out, "hierarchy: {} categories", c.categories)
}

#[derive(Serialize)]
struct StatusJson {
    commit: String,
    head: Option<String>,
    /// Commits between the graph's commit and HEAD; null when unknown.
    behind: Option<usize>,
    /// Commits the graph is past HEAD (a checkout of an older commit).
    ahead: Option<usize>,
    up_to_date: bool,
    lifter: String,
    counts: StoredCounts,
}

fn status(dir: &std::path::Path, json: bool) -> Result<ExitCode> {
    let repo = Repo::discover(dir)?;
    let rpg = RpgDir::new(repo.workdir());
    let config = Config::load(repo.workdir())?;
    let store = rpg::evolve::open(&repo, &rpg, &config)?;
    let meta = store.meta()?;
    let counts = store.counts()?;
    let head = repo.head_commit();
    let graph_commit = gix::ObjectId::from_hex(meta.commit.as_bytes())
        .context("the graph names an invalid commit id")?;
    let up_to_date =
        head.is_some_and(|h| rpg::store::graph_describes(&repo, &meta.commit, &meta.tree, h));
    let behind = head.and_then(|h| repo.commits_between(graph_commit, h, 100_000));
    let ahead = head.and_then(|h| repo.commits_between(h, graph_commit, 100_000));
    let mut out = std::io::stdout().lock();
    if json {
        let j = StatusJson {
            commit: meta.commit.clone(),
            head: head.map(|h| h.to_string()),
            behind,
            ahead,
            up_to_date,
            lifter: meta.lifter.clone(),
            counts,
        };
        serde_json::to_writer_pretty(&mut out, &j)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let state = match (up_to_date, behind, ahead) {
        (true, _, _) => "up to date with HEAD".to_string(),
        (false, Some(n), _) if n > 0 => {
            format!("{n} commit{} behind HEAD; run `rpg update`", plural(n))
        }
        (false, _, Some(n)) if n > 0 => format!(
            "{n} commit{} ahead of HEAD (an older commit is checked out); run `rpg update`",
            plural(n)
        ),
        _ => "not an ancestor of HEAD (history rewritten or shallow); run `rpg update`".to_string(),
    };
    writeln!(out, "graph at {}: {}", short(&meta.commit), state)?;
    write_counts(&mut out, &counts)?;
    writeln!(out, "lifter: {}", meta.lifter)?;
    Ok(ExitCode::SUCCESS)
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

fn update(
    dir: &std::path::Path,
    to: &str,
    snapshot: bool,
    per_commit: bool,
    drift_threshold: f32,
    budget_tokens: Option<u64>,
    json: bool,
) -> Result<ExitCode> {
    if !(0.0..=1.0).contains(&drift_threshold) {
        anyhow::bail!("--drift-threshold must be between 0 and 1, got {drift_threshold}");
    }
    let started = Instant::now();
    let repo = Repo::discover(dir)?;
    let target = repo.resolve(to)?;
    let config = Config::load(repo.workdir())?;
    let rpg = RpgDir::new(repo.workdir());
    let opts = rpg::evolve::UpdateOptions {
        drift_threshold,
        ..Default::default()
    };
    let steps: Vec<gix::ObjectId> = if per_commit {
        let from = rpg::evolve::open(&repo, &rpg, &config)?.meta()?.commit;
        let from = gix::ObjectId::from_hex(from.as_bytes())
            .context("the graph names an invalid commit")?;
        repo.first_parent_path(from, target)
            .unwrap_or_else(|| vec![target])
    } else {
        vec![target]
    };
    let graph_tree = rpg::evolve::open(&repo, &rpg, &config)?.meta()?.tree;
    let llm = if graph_tree == repo.tree_of(target)?.to_string().as_str() {
        None // Nothing to lift: no model, no notice.
    } else {
        model_lifter(&repo, &config, None, budget_tokens, false, false)?
    };
    let chosen: &dyn Lifter = match &llm {
        Some(l) => l,
        None => &OfflineLifter,
    };
    let mut reports = Vec::new();
    for step in steps {
        let target = rpg::evolve::Target::commit(&repo, step)?;
        reports.push(rpg::evolve::update(
            &repo, &rpg, &config, target, chosen, &opts,
        )?);
    }
    let model = llm.as_ref().map(LlmLifter::stats);
    let store = rpg::evolve::open(&repo, &rpg, &config)?;
    // The search index follows the graph file by file, so a query right
    // after an update (or from the hook) costs no rebuild.
    let (store, _) = rpg::search::index::ready(&rpg, store, &repo)?;
    let embedded = match sync_vectors_if_used(&repo, &rpg, &store, &config) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rpg: warning: vectors not updated: {e:#}");
            None
        }
    };
    let mut snapshot_kept = false;
    if snapshot {
        snapshot_kept = rpg.write_snapshot_unless_relabel(&store, |old, new| {
            match (
                gix::ObjectId::from_hex(old.as_bytes()),
                gix::ObjectId::from_hex(new.as_bytes()),
            ) {
                (Ok(a), Ok(b)) => rpg::store::same_outside_graph(&repo, a, b),
                _ => false,
            }
        })?;
    }
    drop(store);
    let seconds = started.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    if json {
        #[derive(Serialize)]
        struct UpdateJson<'a> {
            updates: &'a [rpg::evolve::UpdateReport],
            snapshot_written: bool,
            /// The vector sync, when embeddings are in use.
            embedded: Option<rpg::embed::vectors::SyncReport>,
            /// What the model was asked, with the model lifter.
            #[serde(skip_serializing_if = "Option::is_none")]
            model: Option<LiftStats>,
            seconds: f64,
        }
        serde_json::to_writer_pretty(
            &mut out,
            &UpdateJson {
                updates: &reports,
                snapshot_written: snapshot && !snapshot_kept,
                embedded,
                model,
                seconds,
            },
        )?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    for r in &reports {
        if r.from == r.to {
            writeln!(out, "already at {}", short(&r.to))?;
            continue;
        }
        writeln!(
            out,
            "updated {} -> {}: {} files changed, {} more re-resolved{}, {} entities lifted",
            short(&r.from),
            short(&r.to),
            r.files_changed,
            r.extra_files_resolved,
            if r.full_resolve { " (all files)" } else { "" },
            r.entities_lifted
        )?;
        for e in &r.events {
            let kind = serde_json::to_value(e.event).ok();
            let kind = kind.as_ref().and_then(|v| v.as_str()).unwrap_or("?");
            let detail = match (&e.from, &e.leaf, e.drift) {
                (Some(from), _, None) => format!("  (from {from})"),
                (Some(from), Some(leaf), Some(d)) => format!("  (drift {d:.2}: {from} -> {leaf})"),
                (None, Some(leaf), Some(d)) => format!("  (drift {d:.2}, stays in {leaf})"),
                (None, Some(leaf), None) => format!("  [{leaf}]"),
                _ => String::new(),
            };
            writeln!(out, "  {kind:<8} {}{detail}", e.id)?;
        }
        if !r.categories_created.is_empty() || !r.categories_pruned.is_empty() {
            writeln!(
                out,
                "categories: {} created, {} pruned",
                r.categories_created.len(),
                r.categories_pruned.len()
            )?;
        }
    }
    if let Some(e) = &embedded {
        writeln!(
            out,
            "embedded {} new texts for {} entities",
            e.embedded, e.entities
        )?;
    }
    if let Some(m) = &model {
        write_model_stats(&mut out, m)?;
    }
    if snapshot_kept {
        writeln!(
            out,
            "kept .rpg/graph.jsonl: since its commit only .rpg/ changed"
        )?;
    } else if snapshot {
        writeln!(out, "wrote .rpg/graph.jsonl")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn hook(dir: &std::path::Path, action: HookAction) -> Result<ExitCode> {
    match action {
        HookAction::Run { name, args } => return Ok(hook_run(dir, &name, &args)),
        HookAction::MergeDriver {
            base, ours, theirs, ..
        } => return merge_driver(dir, &base, &ours, &theirs),
        _ => {}
    }
    let repo = Repo::discover(dir)?;
    let hooks = rpg::hook::hooks_dir(repo.workdir())?;
    let mut out = std::io::stdout().lock();
    match action {
        HookAction::Install {
            snapshot,
            force,
            json,
        } => {
            let exe = std::env::current_exe().context("cannot locate the rpg executable")?;
            let mut names: Vec<&str> = rpg::hook::STORE_HOOKS.to_vec();
            if snapshot {
                names.push(rpg::hook::SNAPSHOT_HOOK);
            }
            let done = rpg::hook::install(&hooks, &names, &exe, force)?;
            rpg::hook::install_merge_driver(repo.workdir(), &exe)?;
            // Hooks with no graph to keep would only log "no graph" forever.
            let rpg = RpgDir::new(repo.workdir());
            if !rpg.has_snapshot() && rpg.open_store_only().is_err() {
                index_head_for_hooks(&repo, &rpg)?;
            }
            if json {
                serde_json::to_writer_pretty(&mut out, &done)?;
                writeln!(out)?;
            } else {
                for h in &done {
                    let chained = if h.chained {
                        " (chained to the hook that was there)"
                    } else {
                        ""
                    };
                    writeln!(out, "installed {}{}", h.path.display(), chained)?;
                }
            }
        }
        HookAction::Uninstall { json } => {
            let removed = rpg::hook::uninstall(&hooks.path)?;
            rpg::hook::uninstall_merge_driver(repo.workdir())?;
            if json {
                serde_json::to_writer_pretty(&mut out, &removed)?;
                writeln!(out)?;
            } else if removed.is_empty() {
                writeln!(out, "no rpg hooks in {}", hooks.path.display())?;
            } else {
                writeln!(
                    out,
                    "removed {} from {}",
                    removed.join(", "),
                    hooks.path.display()
                )?;
            }
        }
        HookAction::Status { json } => {
            let merge_driver = rpg::hook::merge_driver_installed(repo.workdir());
            hook_status(&mut out, &hooks, merge_driver, json)?
        }
        HookAction::Run { .. } | HookAction::MergeDriver { .. } => unreachable!("handled above"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `hook install` in a repository with no graph indexes HEAD first, with
/// the repository's lifter, saying so on stderr.
fn index_head_for_hooks(repo: &Repo, rpg: &RpgDir) -> Result<()> {
    let config = Config::load(repo.workdir())?;
    let llm = model_lifter(repo, &config, None, None, false, false)?;
    let chosen: &dyn Lifter = match &llm {
        Some(l) => l,
        None => &OfflineLifter,
    };
    let head = repo.resolve("HEAD")?;
    let encoded = encode::encode(repo, &config, head, chosen, &Bar::new())?;
    rpg.save(&encoded.graph, &encoded.mentions)?;
    eprintln!(
        "rpg: there was no graph yet, so indexed HEAD ({} files); commit .rpg/ to share it",
        encoded.report.files_indexed
    );
    Ok(())
}

fn hook_status(
    out: &mut impl Write,
    hooks: &rpg::hook::HooksDir,
    merge_driver: bool,
    json: bool,
) -> Result<()> {
    let states = rpg::hook::status(&hooks.path);
    // Hooks left in the default directory are dead once core.hooksPath points elsewhere.
    let bypassed = hooks.configured
        && hooks.default != hooks.path
        && rpg::hook::status(&hooks.default)
            .iter()
            .any(|h| h.installed);
    let missing_binary = states.iter().any(|h| h.installed && h.runs.is_none());
    if json {
        #[derive(Serialize)]
        struct HookStatusJson<'a> {
            hooks_dir: String,
            core_hooks_path: bool,
            shared: bool,
            bypassed: bool,
            missing_binary: bool,
            merge_driver: bool,
            hooks: &'a [rpg::hook::HookState],
        }
        serde_json::to_writer_pretty(
            &mut *out,
            &HookStatusJson {
                hooks_dir: hooks.path.display().to_string(),
                core_hooks_path: hooks.configured,
                shared: hooks.shared,
                bypassed,
                missing_binary,
                merge_driver,
                hooks: &states,
            },
        )?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "hooks dir: {}{}",
        hooks.path.display(),
        if hooks.configured {
            " (core.hooksPath)"
        } else {
            ""
        }
    )?;
    for h in &states {
        let state = match (h.installed, h.chained) {
            (true, true) => "installed, chained to the previous hook",
            (true, false) => "installed",
            (false, _) => "not installed",
        };
        writeln!(out, "  {:<14} {state}", h.hook)?;
    }
    writeln!(
        out,
        "  {:<14} {}",
        "merge driver",
        if merge_driver {
            "installed"
        } else {
            "not installed"
        }
    )?;
    if bypassed {
        writeln!(
            out,
            "warning: rpg hooks in {} are bypassed because core.hooksPath is set; run `rpg hook install` again",
            hooks.default.display()
        )?;
    }
    if missing_binary {
        writeln!(
            out,
            "warning: the hooks find no rpg (not on PATH, and the binary that installed them is gone); the graph is not kept current. Put rpg on PATH or run `rpg hook install` again"
        )?;
    }
    Ok(())
}

/// git's merge driver for the snapshot. Writes the merged tree's snapshot
/// to `ours`; when that cannot be made (the code itself conflicts, a side
/// is damaged), keeps our side, which is still a true graph of its tree,
/// and says so. Never leaves conflict markers, so exit 0 either way.
fn merge_driver(
    dir: &std::path::Path,
    base: &std::path::Path,
    ours: &std::path::Path,
    theirs: &std::path::Path,
) -> Result<ExitCode> {
    if std::env::var_os(rpg::evolve::merge::NESTED).is_some() {
        return Ok(ExitCode::SUCCESS); // inside our own merge of the trees
    }
    let read = |p: &std::path::Path| {
        std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))
    };
    let (b, o, t) = (read(base)?, read(ours)?, read(theirs)?);
    let merged = (|| -> Result<Vec<u8>> {
        let repo = Repo::discover(dir)?;
        let config = Config::load(repo.workdir())?;
        let llm = model_lifter(&repo, &config, None, None, false, false)?;
        let chosen: &dyn Lifter = match &llm {
            Some(l) => l,
            None => &OfflineLifter,
        };
        Ok(rpg::evolve::merge::merge_snapshots(
            &repo, &config, &b, &o, &t, chosen,
        )?)
    })();
    match merged {
        Ok(bytes) => rpg::store::snapshot::write_atomic(ours, &bytes)?,
        Err(e) => eprintln!(
            "rpg: merge driver kept our .rpg/graph.jsonl ({e:#}); run `rpg update --snapshot` after the merge"
        ),
    }
    Ok(ExitCode::SUCCESS)
}

/// The body of every installed hook. It must never fail or block git:
/// whatever happens is written to .rpg/log/hook.log and the exit code is 0.
fn hook_run(dir: &std::path::Path, name: &str, args: &[String]) -> ExitCode {
    let started = Instant::now();
    let result = (|| -> Result<String> {
        let repo = Repo::discover(dir)?;
        let rpg = RpgDir::new(repo.workdir());
        if !rpg.has_snapshot() && !rpg.path().join("store").exists() {
            return Ok("no graph here yet; run `rpg init`".into());
        }
        if name == "post-checkout" && args.get(2).map(String::as_str) == Some("0") {
            return Ok("file checkout; nothing to do".into());
        }
        // A hook never waits long: git is waiting on it. What it cannot do
        // now, the next command does.
        let _lock = match rpg.lock(std::time::Duration::from_secs(1)) {
            Err(rpg::store::StoreError::Locked(_)) => {
                rpg.mark_pending(name)?;
                return Ok(
                    "another rpg is writing the graph; left it pending for the next command".into(),
                );
            }
            other => other?,
        };
        let config = Config::load(repo.workdir())?;
        let opts = rpg::evolve::UpdateOptions::default();
        let Some(head) = repo.head_commit() else {
            return Ok("no commit yet".into());
        };
        if name == rpg::hook::SNAPSHOT_HOOK {
            let tree = git_stdout(repo.workdir(), &["write-tree"])?;
            let tree = gix::ObjectId::from_hex(tree.trim().as_bytes())
                .context("git write-tree gave no tree id")?;
            let target = rpg::evolve::Target { commit: head, tree };
            let llm = model_lifter(&repo, &config, None, None, false, false)?;
            let chosen: &dyn Lifter = match &llm {
                Some(l) => l,
                None => &OfflineLifter,
            };
            let r = rpg::evolve::update(&repo, &rpg, &config, target, chosen, &opts)?;
            let store = rpg::evolve::open(&repo, &rpg, &config)?;
            rpg.write_snapshot(&store)?;
            drop(store);
            git_stdout(
                repo.workdir(),
                &[
                    "add",
                    "--",
                    ".rpg/graph.jsonl",
                    ".rpg/.gitignore",
                    ".rpg/.gitattributes",
                ],
            )?;
            return Ok(format!("staged snapshot: {} events", r.events.len()));
        }
        let target = rpg::evolve::Target::commit(&repo, head)?;
        let llm = model_lifter(&repo, &config, None, None, false, false)?;
        let chosen: &dyn Lifter = match &llm {
            Some(l) => l,
            None => &OfflineLifter,
        };
        let r = rpg::evolve::update(&repo, &rpg, &config, target, chosen, &opts)?;
        Ok(format!(
            "updated to {}: {} files, {} events",
            short(&r.to),
            r.files_changed,
            r.events.len()
        ))
    })();
    let line = match result {
        Ok(msg) => format!(
            "{name}: {msg} ({:.0} ms)",
            started.elapsed().as_secs_f64() * 1000.0
        ),
        Err(e) => format!("{name}: error: {e:#}"),
    };
    if let Ok(repo) = Repo::discover(dir) {
        rpg::hook::log(RpgDir::new(repo.workdir()).path(), &line);
    }
    ExitCode::SUCCESS
}

/// Run git with fixed arguments (never user text) and return its stdout.
fn git_stdout(dir: &std::path::Path, args: &[&str]) -> Result<String> {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        anyhow::bail!(
            "git {} failed: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

struct EvalProgress {
    on: bool,
}

impl rpg::eval::Observer for EvalProgress {
    fn case(&self, done: usize, total: usize, case: &rpg::eval::Case) {
        if self.on {
            eprint!("\r\x1b[2K[{}/{}] {}", done + 1, total, case.id);
        }
    }
}

fn eval(
    cases: &std::path::Path,
    repos: &[PathBuf],
    ablate: bool,
    dense: bool,
    embed_text: EmbedTextArg,
    misses: bool,
    json: bool,
) -> Result<ExitCode> {
    let list = rpg::eval::load_cases(cases)?;
    let mut variants = rpg::eval::ablations();
    if !dense {
        variants.retain(|v| !v.name.contains("dense"));
    }
    if !ablate {
        variants.truncate(1);
    }
    let mut embedder = if dense {
        let root = std::env::current_dir().context("cannot read the current directory")?;
        let cfg = rpg::config::EmbedConfig {
            text: match embed_text {
                EmbedTextArg::Summary => rpg::embed::EmbedText::Summary,
                EmbedTextArg::Code => rpg::embed::EmbedText::Code,
            },
            ..rpg::config::EmbedConfig::default()
        };
        let files = rpg::embed::ModelFiles::find(&cfg, &root)?
            .context("--dense needs the embedding model: run scripts/setup-embeddings.sh")?;
        Some(rpg::embed::Embedder::load(&files, rpg::embed::Use::Bulk)?)
    } else {
        None
    };
    let scratch = std::env::temp_dir().join(format!("rpg-eval-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let progress = EvalProgress {
        on: std::io::stderr().is_terminal(),
    };
    let report = rpg::eval::run(
        &list,
        repos,
        &variants,
        &scratch,
        &progress,
        embedder.as_mut(),
    );
    let _ = std::fs::remove_dir_all(&scratch);
    if progress.on {
        eprint!("\r\x1b[2K");
    }
    let report = report?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    let full = &report.variants[0];
    writeln!(out, "{} cases", report.cases)?;
    for (level, table) in [("file", &full.file), ("function", &full.function)] {
        writeln!(out, "\n{level} level")?;
        write!(out, "  {:<22} {:>4}", "repository", "n")?;
        for k in rpg::eval::KS {
            write!(out, " {:>7}", format!("hit@{k}"))?;
        }
        for k in rpg::eval::KS {
            write!(out, " {:>7}", format!("acc@{k}"))?;
        }
        writeln!(out, " {:>9} {:>7}", "recall@5", "mrr")?;
        // The overall row first, then each repository.
        let rows = table
            .get_key_value("all")
            .into_iter()
            .chain(table.iter().filter(|(k, _)| k.as_str() != "all"));
        for (repo, s) in rows {
            write!(out, "  {:<22} {:>4}", repo, s.n)?;
            for x in s.mean.hit.iter().chain(&s.mean.acc) {
                write!(out, " {x:>7.3}")?;
            }
            writeln!(out, " {:>9.3} {:>7.3}", s.mean.recall[2], s.mean.mrr)?;
        }
    }
    let l = &full.latency_ms;
    writeln!(
        out,
        "\nranking latency (store open): p50 {:.1} ms, p90 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        l.p50, l.p90, l.p95, l.max
    )?;
    if ablate {
        writeln!(out, "\nablation (all cases; gain = full minus variant)")?;
        writeln!(
            out,
            "  {:<22} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "variant", "file@5", "gain", "func@5", "gain", "func mrr"
        )?;
        let get = |v: &rpg::eval::VariantReport| {
            let f = v.file.get("all").map(|s| s.mean.hit[2]).unwrap_or(0.0);
            let g = v.function.get("all").map(|s| s.mean.hit[2]).unwrap_or(0.0);
            let m = v.function.get("all").map(|s| s.mean.mrr).unwrap_or(0.0);
            (f, g, m)
        };
        let (f0, g0, _) = get(full);
        for v in &report.variants {
            let (f, g, m) = get(v);
            writeln!(
                out,
                "  {:<22} {:>10.3} {:>+10.3} {:>10.3} {:>+10.3} {:>10.3}",
                v.name,
                f,
                f0 - f,
                g,
                g0 - g,
                m
            )?;
        }
    }
    if misses {
        for v in &report.variants {
            for c in &v.cases {
                for (level, s) in [("file", &c.file), ("function", &c.function)] {
                    let Some(s) = s.as_ref().filter(|s| s.hit[2] == 0.0) else {
                        continue;
                    };
                    // MRR is the reciprocal of the first gold rank.
                    let rank = match s.mrr {
                        0.0 => "none".to_string(),
                        m => format!("{:.0}", 1.0 / m),
                    };
                    writeln!(
                        out,
                        "miss [{}] {level} {} (first gold at rank {rank})",
                        v.name, c.id
                    )?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Why a tool call failed: nothing by that name (exit 1) or anything else.
enum ToolFailure {
    Tool(tools::ToolError),
    Other(anyhow::Error),
}

impl From<tools::ToolError> for ToolFailure {
    fn from(e: tools::ToolError) -> Self {
        ToolFailure::Tool(e)
    }
}

impl From<rpg::store::StoreError> for ToolFailure {
    fn from(e: rpg::store::StoreError) -> Self {
        ToolFailure::Tool(e.into())
    }
}

impl From<std::io::Error> for ToolFailure {
    fn from(e: std::io::Error) -> Self {
        ToolFailure::Other(e.into())
    }
}

impl From<serde_json::Error> for ToolFailure {
    fn from(e: serde_json::Error) -> Self {
        ToolFailure::Other(e.into())
    }
}

/// Open the repository, store and index for an agent tool; `run` returns
/// whether it found anything. Unknown names exit 1, bad input exits 2.
/// The repository and a store whose search index is in step, with a
/// notice when the graph lags HEAD: what every query command starts from.
fn open_for_query(dir: &std::path::Path) -> Result<(Repo, rpg::store::Store)> {
    let repo = Repo::discover(dir)?;
    let rpg = RpgDir::new(repo.workdir());
    let config = Config::load(repo.workdir())?;
    let store = rpg::evolve::open(&repo, &rpg, &config)?;
    warn_if_behind(&repo, &store.meta()?);
    let (store, _) = rpg::search::index::ready(&rpg, store, &repo)?;
    Ok((repo, store))
}

fn with_tools(
    dir: &std::path::Path,
    run: impl FnOnce(&Repo, &rpg::store::Store) -> std::result::Result<bool, ToolFailure>,
) -> Result<ExitCode> {
    let (repo, store) = open_for_query(dir)?;
    match run(&repo, &store) {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::from(1)),
        Err(ToolFailure::Tool(e)) if e.is_not_found() => {
            eprintln!("rpg: {e}");
            Ok(ExitCode::from(1))
        }
        Err(ToolFailure::Tool(e)) => Err(e.into()),
        Err(ToolFailure::Other(e)) => Err(e),
    }
}

/// Print `v` as pretty JSON or through its text renderer.
fn emit<T: Serialize>(json: bool, v: &T, text: fn(&T) -> String) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, v)?;
        writeln!(out)
    } else {
        out.write_all(text(v).as_bytes())
    }
}

/// A one-line notice when the graph lags HEAD; answers still come from it.
fn warn_if_behind(repo: &Repo, meta: &rpg::graph::Meta) {
    if let Some(head) = repo.head_commit() {
        if !rpg::store::graph_describes(repo, &meta.commit, &meta.tree, head) {
            let commit = &meta.commit;
            eprintln!(
                "rpg: warning: the graph reflects {}, not HEAD; run `rpg update`",
                short(commit)
            );
        }
    }
}

fn locate(
    dir: &std::path::Path,
    text: &str,
    top_k: usize,
    format: Format,
    link_base: Option<&str>,
    sw: rpg::search::Switches,
) -> Result<ExitCode> {
    let (repo, store) = open_for_query(dir)?;
    let mut q = rpg::search::Query::parse(text);
    if sw.dense {
        q.dense = dense_neighbours(&repo, &store, text);
    }
    let located = rpg::search::locate_query(&store, q, sw, top_k)?;
    let found = !located.files.is_empty();
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &located)?;
            writeln!(out)?;
        }
        Format::Text => out.write_all(rpg::render::text(&located.scaffold).as_bytes())?,
        Format::Markdown => {
            out.write_all(rpg::render::markdown(&located.scaffold, link_base).as_bytes())?
        }
    }
    Ok(if found {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What the bot needs from the Actions environment.
struct BotEnv {
    repository: String,
    api_url: String,
    server_url: String,
}

impl BotEnv {
    fn read() -> Result<BotEnv> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let repository =
            var("GITHUB_REPOSITORY").context("GITHUB_REPOSITORY is not set (owner/name)")?;
        anyhow::ensure!(
            rpg::bot::github::valid_repository(&repository),
            "GITHUB_REPOSITORY must be owner/name, got {repository:?}"
        );
        Ok(BotEnv {
            repository,
            api_url: var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into()),
            server_url: var("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".into()),
        })
    }

    fn client(&self) -> Result<rpg::bot::github::GitHub> {
        let token = std::env::var("GITHUB_TOKEN").unwrap_or_default();
        Ok(rpg::bot::github::GitHub::new(
            &token,
            &self.api_url,
            &self.repository,
            rpg::bot::github::Retry::default(),
        )?)
    }
}

fn event_at(path: Option<PathBuf>) -> Result<rpg::bot::event::Event> {
    let path = match path {
        Some(p) => p,
        None => std::env::var_os("GITHUB_EVENT_PATH")
            .map(PathBuf::from)
            .context("no event: pass --event or set GITHUB_EVENT_PATH")?,
    };
    Ok(rpg::bot::event::Event::read(&path)?)
}

fn bot_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Post `body` under `marker` on issue `number`; with `create` false only
/// an existing comment is edited.
fn post(env: &BotEnv, number: u64, marker: &str, body: &str, create: bool) -> Result<()> {
    use rpg::bot::github::Upsert;
    let rt = bot_runtime()?;
    // The client spawns its connection pool on the runtime it is built in.
    let _in_runtime = rt.enter();
    let gh = env.client()?;
    let done = rt.block_on(gh.upsert_comment(number, marker, body, create))?;
    match done {
        Some(Upsert::Created(id)) => eprintln!("rpg: commented on #{number} (comment {id})"),
        Some(Upsert::Updated(id)) => eprintln!("rpg: updated comment {id} on #{number}"),
        Some(Upsert::Unchanged(id)) => eprintln!("rpg: comment {id} on #{number} is current"),
        None => eprintln!("rpg: nothing to say on #{number}; no comment"),
    }
    Ok(())
}

/// Whether `e` says there is no graph yet, however deep it was raised.
fn is_no_graph(e: &anyhow::Error) -> bool {
    use rpg::store::StoreError;
    e.chain().any(|c| {
        matches!(c.downcast_ref::<StoreError>(), Some(StoreError::NoGraph))
            || matches!(
                c.downcast_ref::<rpg::evolve::EvolveError>(),
                Some(rpg::evolve::EvolveError::Store(StoreError::NoGraph))
            )
    })
}

/// Open the graph for the bot; `None` (said on stderr, as an Actions
/// warning) when the repository has none, so no comment is made of nothing.
fn bot_store(dir: &std::path::Path) -> Result<Option<rpg::store::Store>> {
    match open_for_query(dir) {
        Ok((_, store)) => Ok(Some(store)),
        Err(e) if is_no_graph(&e) => {
            eprintln!(
                "::warning::rpg: this repository has no graph (.rpg/graph.jsonl); run the action in update mode or `rpg init` and commit .rpg/. Not commenting."
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn bot(dir: &std::path::Path, action: BotAction) -> Result<ExitCode> {
    use rpg::bot::{comment, event::Event};
    match action {
        BotAction::PushCheck { event } => {
            let e = event_at(event)?;
            let Event::Push { commits, .. } = &e else {
                anyhow::bail!("push-check needs a push event, got a {} event", e.kind());
            };
            if rpg::bot::event::push_touches_code(commits) {
                writeln!(std::io::stdout(), "update")?;
                Ok(ExitCode::SUCCESS)
            } else {
                writeln!(std::io::stdout(), "skip: the push only changed .rpg/")?;
                Ok(ExitCode::from(1))
            }
        }
        BotAction::IssueComment {
            event,
            top_k,
            opt_out_label,
            dry_run,
        } => {
            let e = event_at(event)?;
            let issue = match rpg::bot::issue_to_answer(&e, &opt_out_label) {
                Ok(i) => i,
                Err(skip) => {
                    eprintln!("rpg: not commenting: {skip}");
                    return Ok(ExitCode::SUCCESS);
                }
            };
            let env = if dry_run { None } else { Some(BotEnv::read()?) };
            let Some(store) = bot_store(dir)? else {
                return Ok(ExitCode::SUCCESS);
            };
            let located = rpg::bot::locate_issue(&store, issue, top_k)?;
            drop(store);
            let found = !located.files.is_empty();
            let base = env.as_ref().map(|env| {
                format!(
                    "{}/{}/blob/{}",
                    env.server_url.trim_end_matches('/'),
                    env.repository,
                    located.commit
                )
            });
            let md = rpg::render::markdown(&located.scaffold, base.as_deref());
            let body = comment::locate_body(&md, &located.commit, &opt_out_label);
            match env {
                None => std::io::stdout().write_all(body.as_bytes())?,
                Some(env) => post(&env, issue.number, comment::LOCATE_MARKER, &body, found)?,
            }
            Ok(ExitCode::SUCCESS)
        }
        BotAction::PrComment {
            event,
            opt_out_label,
            dry_run,
        } => {
            let e = event_at(event)?;
            let pr = match rpg::bot::pull_request_to_describe(&e, &opt_out_label) {
                Ok(p) => p,
                Err(skip) => {
                    eprintln!("rpg: not commenting: {skip}");
                    return Ok(ExitCode::SUCCESS);
                }
            };
            let env = if dry_run { None } else { Some(BotEnv::read()?) };
            let repo = Repo::discover(dir)?;
            let rpg = RpgDir::new(repo.workdir());
            if !rpg.has_snapshot() {
                eprintln!(
                    "::warning::rpg: this repository has no graph (.rpg/graph.jsonl); not commenting."
                );
                return Ok(ExitCode::SUCCESS);
            }
            let sha = |s: &str| {
                gix::ObjectId::from_hex(s.as_bytes())
                    .with_context(|| format!("the event names an invalid commit {s:?}"))
            };
            let (base, head) = (sha(&pr.base.sha)?, sha(&pr.head.sha)?);
            let config = Config::load(repo.workdir())?;
            let report = rpg::bot::pull_request_delta(&repo, &rpg, &config, base, head)
                .context("cannot compute the graph delta (are both commits fetched?)")?;
            let body = comment::delta_body(&report, &pr.base.sha, &pr.head.sha);
            match env {
                None => std::io::stdout().write_all(body.as_bytes())?,
                Some(env) => post(&env, pr.number, comment::DELTA_MARKER, &body, true)?,
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn embed(dir: &std::path::Path, json: bool) -> Result<ExitCode> {
    use rpg::embed::{vectors::Vectors, Embedder, ModelFiles};
    let repo = Repo::discover(dir)?;
    let config = Config::load(repo.workdir())?;
    let Some(files) = ModelFiles::find(&config.embed, repo.workdir())? else {
        anyhow::bail!(
            "no embedding model installed: run scripts/setup-embeddings.sh, or set [embed] model, tokenizer and runtime in ~/.config/rpg/config.toml"
        );
    };
    let rpg = RpgDir::new(repo.workdir());
    let _lock = rpg.lock(rpg::store::LOCK_WAIT)?;
    let store = rpg::evolve::open(&repo, &rpg, &config)?;
    let mut embedder = Embedder::load(&files, rpg::embed::Use::Bulk)?;
    let vectors = Vectors::open(&rpg)?;
    let report = vectors.sync(&store, &repo, &mut embedder, &Bar::new())?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "embedded {} texts ({} entities in {} changed files, {} cached) with model {} in {:.1}s",
            report.embedded,
            report.entities,
            report.files_changed,
            report.cached,
            report.model,
            report.seconds
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Keep entity vectors current once the user has computed them
/// (`rpg embed`); `None` when embeddings are not in use here.
fn sync_vectors_if_used(
    repo: &Repo,
    rpg: &RpgDir,
    store: &rpg::store::Store,
    config: &Config,
) -> Result<Option<rpg::embed::vectors::SyncReport>> {
    let used = rpg::embed::vectors::in_use(rpg, &config.embed, rpg::embed::Use::Query)?;
    let Some((vectors, mut embedder)) = used else {
        return Ok(None);
    };
    Ok(Some(vectors.sync(
        store,
        repo,
        &mut embedder,
        &Bar::new(),
    )?))
}

/// The entities nearest `text` in embedding space, once `rpg embed` has
/// been run here; empty (with a one-line notice when vectors exist but the
/// model cannot be used) otherwise, so the caller ranks lexically.
fn dense_neighbours(repo: &Repo, store: &rpg::store::Store, text: &str) -> Vec<(String, f32)> {
    let rpg = RpgDir::new(repo.workdir());
    let found = (|| -> Result<Vec<(String, f32)>> {
        let config = Config::load(repo.workdir())?;
        let used = rpg::embed::vectors::in_use(&rpg, &config.embed, rpg::embed::Use::Query)?;
        let Some((vectors, mut embedder)) = used else {
            return Ok(Vec::new());
        };
        // Entities changed since the last sync are embedded now; usually few.
        let t = Instant::now();
        vectors.sync(store, repo, &mut embedder, &Bar::new())?;
        rpg::timing("dense sync", t);
        let near = rpg::embed::vectors::neighbours(&vectors, &mut embedder, text)?;
        rpg::timing("dense neighbours", t);
        Ok(near)
    })();
    found.unwrap_or_else(|e| {
        eprintln!("rpg: notice: {e:#}; ranking lexically");
        Vec::new()
    })
}
