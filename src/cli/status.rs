//! `rpg status`: where the graph stands against HEAD.

use super::common::*;
use anyhow::{Context, Result};
use rpg::config::Config;
use rpg::git::Repo;
use rpg::store::{RpgDir, StoredCounts};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
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

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let json = a.json;
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
    out.write_all(counts_text(&counts).as_bytes())?;
    writeln!(out, "lifter: {}", meta.lifter)?;
    Ok(ExitCode::SUCCESS)
}
