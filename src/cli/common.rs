//! What the commands share: opening the graph for a query, choosing the
//! lifter, progress on stderr, printing JSON or text.

use anyhow::Result;
use rpg::config::Config;
use rpg::git::Repo;
use rpg::lift::llm::{LlmLifter, Settings};
use rpg::lift::offline::OfflineLifter;
use rpg::lift::Lifter;
use rpg::progress::Progress;
pub(super) use rpg::render::model_stats_text;
use rpg::store::RpgDir;
pub(super) use rpg::text::short_id as short;
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// A count that must be positive: `--top-k 0` asks for nothing, which is a
/// usage error rather than an empty answer.
pub(super) fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum LifterArg {
    Offline,
    Llm,
}

/// Progress on stderr: a bar when stderr is a terminal; otherwise nothing,
/// or, for long work, a plain line every few seconds (a CI log or a pipe
/// should not sit silent for minutes).
pub(super) enum Bar {
    Off,
    Drawn(indicatif::ProgressBar),
    Lines(std::sync::Mutex<Lines>),
}

pub(super) struct Lines {
    what: String,
    total: u64,
    done: u64,
    last: std::time::Instant,
    every: std::time::Duration,
    said: bool,
}

/// How often plain progress lines are written; `RPG_PROGRESS_EVERY_MS`
/// changes it (0 writes one per step). Read once per bar, not per step.
fn line_every() -> std::time::Duration {
    let ms = std::env::var("RPG_PROGRESS_EVERY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000);
    std::time::Duration::from_millis(ms)
}

impl Bar {
    pub(super) fn new() -> Bar {
        match std::io::stderr().is_terminal() {
            true => Bar::Drawn(indicatif::ProgressBar::hidden()),
            false => Bar::Off,
        }
    }

    /// For work that can take minutes: plain lines when there is no terminal.
    pub(super) fn with_lines() -> Bar {
        match Bar::new() {
            Bar::Off => Bar::Lines(std::sync::Mutex::new(Lines {
                what: String::new(),
                total: 0,
                done: 0,
                last: std::time::Instant::now(),
                every: line_every(),
                said: false,
            })),
            drawn => drawn,
        }
    }
}

impl Progress for Bar {
    fn start(&self, what: &str, total: u64) {
        match self {
            Bar::Drawn(b) => {
                b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                b.set_length(total);
                b.set_position(0);
                b.set_message(what.to_string());
                if let Ok(style) = indicatif::ProgressStyle::with_template(
                    "{msg:>10} [{bar:30}] {pos}/{len} ({eta})",
                ) {
                    b.set_style(style.progress_chars("=> "));
                }
            }
            Bar::Lines(l) => {
                let mut l = l.lock().unwrap_or_else(|p| p.into_inner());
                l.what = what.to_string();
                l.total = total;
                l.done = 0;
                l.last = std::time::Instant::now();
                l.said = false;
            }
            Bar::Off => {}
        }
    }
    fn inc(&self, n: u64) {
        match self {
            Bar::Drawn(b) => b.inc(n),
            Bar::Lines(l) => {
                let mut l = l.lock().unwrap_or_else(|p| p.into_inner());
                l.done += n;
                if l.last.elapsed() >= l.every {
                    rpg::notice!("rpg: {}: {}/{}", l.what, l.done, l.total);
                    l.last = std::time::Instant::now();
                    l.said = true;
                }
            }
            Bar::Off => {}
        }
    }
    fn finish(&self) {
        match self {
            Bar::Drawn(b) => b.finish_and_clear(),
            Bar::Lines(l) => {
                let l = l.lock().unwrap_or_else(|p| p.into_inner());
                if l.said {
                    rpg::notice!("rpg: {}: {}/{} done", l.what, l.done, l.total);
                }
            }
            Bar::Off => {}
        }
    }
}

/// The model-backed lifter, when `--lifter` (else `[lift] lifter`) asks
/// for one. With `strict` (an explicit init) a model that cannot be used
/// is an error; otherwise (updates, hooks) the update lifts offline and
/// says so, since every command must work with no network and no key.
pub(super) fn model_lifter(
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
        if config.repository_asks_for_model && choice.is_none() {
            rpg::notice!(
                "rpg: notice: .rpg/config.toml asks for the model lifter; it runs only when you choose it (--lifter llm, or lifter = \"llm\" in your own config), since it spends your key"
            );
        }
        if dry_run {
            anyhow::bail!("--dry-run estimates model use: add --lifter llm");
        }
        return Ok(None);
    }
    let made = (|| -> Result<LlmLifter, rpg::lift::LiftError> {
        let mut settings = Settings::from_config(&config.lift, &|k| std::env::var(k).ok())?;
        settings.budget_tokens = budget_tokens;
        settings.estimate_only = dry_run;
        let rpg = RpgDir::new(repo.workdir())
            .and_then(|rpg| rpg.ensure().map(|_| rpg))
            .map_err(|e| rpg::lift::LiftError::Settings(e.to_string()))?;
        LlmLifter::new(settings, rpg.path(), Box::new(Bar::with_lines()))
    })();
    match made {
        Ok(l) => Ok(Some(l)),
        Err(e) if strict => Err(e.into()),
        Err(e) => {
            rpg::notice!("rpg: notice: {e}; lifting offline");
            Ok(None)
        }
    }
}

/// Open the repository, store and index for an agent tool; `run` returns
/// whether it found anything. Unknown names exit 1, bad input exits 2.
/// The repository and a store whose search index is in step, with a
/// notice when the graph lags HEAD: what every query command starts from.
pub(super) fn open_for_query(dir: &std::path::Path) -> Result<(Repo, rpg::store::Store)> {
    let repo = Repo::discover(dir)?;
    let rpg = RpgDir::new(repo.workdir())?;
    let config = Config::load(repo.workdir())?;
    let store = rpg::evolve::open(&repo, &rpg, &config)?;
    warn_if_behind(&repo, &store.meta()?);
    let (store, _) = rpg::search::index::ready(&rpg, store, &repo)?;
    Ok((repo, store))
}

/// Run a query command on the opened graph; `run` says whether it found
/// anything (exit 1 when not). A name not in the graph reaches the edge as
/// a failure of kind "nothing found", exit 1 too.
pub(super) fn with_tools(
    dir: &std::path::Path,
    run: impl FnOnce(&Repo, &rpg::store::Store) -> Result<bool>,
) -> Result<ExitCode> {
    let (repo, store) = open_for_query(dir)?;
    Ok(match run(&repo, &store)? {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}

/// Whether HEAD carries a committed snapshot: a graph only this clone has
/// is worth a reminder, since clones and CI would have to rebuild it.
pub(super) fn snapshot_committed(repo: &Repo) -> bool {
    repo.head_commit()
        .and_then(|h| repo.tree_of(h).ok())
        .and_then(|t| repo.blob_at(t, ".rpg/graph.jsonl").ok().flatten())
        .is_some()
}

/// Print `v` as pretty JSON or through its text renderer; text passes
/// [`rpg::text::printable`], so no escape sequence a repository holds
/// reaches the terminal (JSON escapes them itself).
pub(super) fn emit<T: Serialize>(json: bool, v: &T, text: fn(&T) -> String) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, v)?;
        writeln!(out)
    } else {
        out.write_all(rpg::text::printable(&text(v)).as_bytes())
    }
}

/// A one-line notice when the graph lags HEAD; answers still come from it.
pub(super) fn warn_if_behind(repo: &Repo, meta: &rpg::graph::Meta) {
    if let Some(head) = repo.head_commit() {
        if !rpg::store::graph_describes(repo, &meta.commit, &meta.tree, head) {
            let commit = &meta.commit;
            rpg::notice!(
                "rpg: warning: the graph reflects {}, not HEAD; run `rpg update`",
                short(commit)
            );
        }
    }
}

/// Keep entity vectors current once the user has computed them
/// (`rpg embed`); `None` when embeddings are not in use here.
pub(super) fn sync_vectors_if_used(
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

/// The lifter a command uses: the model when one was set up, else offline.
pub(super) fn lifter_of(llm: &Option<LlmLifter>) -> &dyn Lifter {
    match llm {
        Some(l) => l,
        None => &OfflineLifter,
    }
}
