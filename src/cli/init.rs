//! `rpg init`: build the graph of a commit from git objects.

use super::common::*;
use anyhow::Result;
use rpg::config::Config;
use rpg::encode::{self, EncodeReport};
use rpg::git::Repo;
use rpg::lift::llm::{LiftStats, LlmLifter};
use rpg::store::{RpgDir, StoredCounts};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
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

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let Args {
        ref rev,
        lifter,
        budget_tokens,
        dry_run,
        json,
    } = *a;
    rpg::malloc::return_large_blocks();
    let started = Instant::now();
    let repo = Repo::discover(dir)?;
    let config = Config::load(repo.workdir())?;
    let rpg = RpgDir::new(repo.workdir())?;
    rpg::evolve::refuse_tracked_store(&repo)?;
    // One writer at a time: an init must not swap the store under an update.
    // The revision is read once the lock is held: a hook that held it may
    // have moved HEAD meanwhile.
    let _lock = match dry_run {
        true => None,
        false => Some(rpg.lock(rpg::store::LOCK_WAIT)?),
    };
    let commit = repo.resolve(rev)?;
    let llm = model_lifter(&repo, &config, lifter, budget_tokens, dry_run, true)?;
    if let (Some(l), false) = (&llm, dry_run) {
        // What the committed snapshot holds from this model is not paid for
        // again; a snapshot that cannot be believed seeds nothing.
        if let Ok((committed, _)) = rpg.read_snapshot() {
            let seeded = l.seed(&committed)?;
            if seeded > 0 {
                rpg::notice!("rpg: {seeded} model answers taken from .rpg/graph.jsonl");
            }
        }
    }
    let chosen = lifter_of(&llm);
    let bar = Bar::with_lines();
    let encode::Encoded {
        graph,
        report,
        resolved,
    } = encode::encode(&repo, &config, commit, chosen, &bar)?;
    // The parses are packed and freed: give their pages back before the
    // store is written beside the graph.
    rpg::malloc::return_free_pages();
    let model = llm.as_ref().map(LlmLifter::stats);
    if dry_run {
        let stats = model.unwrap_or_default();
        let mut out = std::io::stdout().lock();
        if json {
            serde_json::to_writer_pretty(&mut out, &stats)?;
            writeln!(out)?;
        } else {
            out.write_all(model_stats_text(&stats).as_bytes())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    // The store takes the parses and frees them as it writes them.
    rpg.save(&graph, resolved)?;
    // The index is built from the store: the graph need not sit in memory
    // beside its postings.
    let counts = StoredCounts::from(graph.counts());
    let meta = graph.meta.clone();
    drop(graph);
    // And the graph's, before the search index allocates differently.
    rpg::malloc::return_free_pages();
    rpg::malloc::purge_lazily();
    let t = Instant::now();
    rpg::search::index::ready(&rpg, rpg.open()?, &repo)?;
    rpg::timing("search index", t);
    let snapshot_bytes = std::fs::metadata(rpg.snapshot_path())
        .map(|m| m.len())
        .unwrap_or(0);
    let seconds = started.elapsed().as_secs_f64();
    let mut out = std::io::stdout().lock();
    if json {
        let j = InitJson {
            commit: &meta.commit,
            tree: &meta.tree,
            lifter: &meta.lifter,
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
        let written = rpg.snapshot_path();
        let written = written.strip_prefix(repo.workdir()).unwrap_or(&written);
        out.write_all(rpg::render::init_text(rev, &meta.commit, &report, &counts).as_bytes())?;
        writeln!(
            out,
            "wrote {} ({} bytes) in {:.2}s",
            written.display(),
            snapshot_bytes,
            seconds
        )?;
        if let Some(m) = &model {
            out.write_all(model_stats_text(m).as_bytes())?;
        }
        if !snapshot_committed(&repo) {
            writeln!(out, "{}", rpg::render::COMMIT_HINT)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
