//! `rpg update`: move the graph to a commit, work following the change.

use super::common::*;
use anyhow::{Context, Result};
use rpg::config::Config;
use rpg::git::Repo;
use rpg::lift::llm::{LiftStats, LlmLifter};
use rpg::store::RpgDir;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
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
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let Args {
        ref to,
        snapshot,
        per_commit,
        drift_threshold,
        budget_tokens,
        json,
    } = *a;
    if !(0.0..=1.0).contains(&drift_threshold) {
        anyhow::bail!("--drift-threshold must be between 0 and 1, got {drift_threshold}");
    }
    let started = Instant::now();
    let repo = Repo::discover(dir)?;
    let config = Config::load(repo.workdir())?;
    let rpg = RpgDir::new(repo.workdir())?;
    // The whole update is one writer's, and the target is read once the
    // lock is held: read before, it could be the commit a hook holding the
    // lock was moving past, and the update would rewind the graph to it.
    let _lock = rpg.lock(rpg::store::LOCK_WAIT)?;
    let target = repo.resolve(to)?;
    let opts = rpg::evolve::UpdateOptions {
        drift_threshold,
        ..Default::default()
    };
    // Opened once, under the lock, for every step: at a large tree's size
    // each open is tens of milliseconds.
    let store = rpg::evolve::open(&repo, &rpg, &config)?;
    let meta = store.meta()?;
    let steps: Vec<gix::ObjectId> = if per_commit {
        let from = gix::ObjectId::from_hex(meta.commit.as_bytes())
            .context("the graph names an invalid commit")?;
        repo.first_parent_path(from, target)
            .unwrap_or_else(|| vec![target])
    } else {
        vec![target]
    };
    let llm = if meta.tree == repo.tree_of(target)?.to_string().as_str() {
        None // Nothing to lift: no model, no notice.
    } else {
        model_lifter(&repo, &config, None, budget_tokens, false, false)?
    };
    let chosen = lifter_of(&llm);
    let mut reports = Vec::new();
    for step in steps {
        let target = rpg::evolve::Target::commit(&repo, step)?;
        reports.push(rpg::evolve::update_open(
            &repo, &rpg, &store, &config, target, chosen, &opts,
        )?);
    }
    let model = llm.as_ref().map(LlmLifter::stats);
    // The search index follows the graph file by file, so a query right
    // after an update (or from the hook) costs no rebuild.
    let (store, _) = rpg::search::index::ready(&rpg, store, &repo)?;
    let embedded = match sync_vectors_if_used(&repo, &rpg, &store, &config) {
        Ok(r) => r,
        Err(e) => {
            rpg::notice!("rpg: warning: vectors not updated: {e:#}");
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
    if store.wants_compacting() {
        rpg::notice!("rpg: compacting the store: every open was rewriting its free space");
        drop(rpg.compact(store)?);
    } else {
        drop(store);
    }
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
        out.write_all(rpg::render::update_text(r).as_bytes())?;
    }
    if let Some(e) = &embedded {
        writeln!(
            out,
            "embedded {} new texts for {} entities",
            e.embedded, e.entities
        )?;
    }
    if let Some(m) = &model {
        out.write_all(model_stats_text(m).as_bytes())?;
    }
    out.write_all(rpg::render::snapshot_written_text(snapshot, snapshot_kept).as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
