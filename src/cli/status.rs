//! `rpg status`: where the graph stands against HEAD.

use super::common::*;
use anyhow::{Context, Result};
use rpg::config::Config;
use rpg::git::Repo;
use rpg::store::RpgDir;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let json = a.json;
    let repo = Repo::discover(dir)?;
    let rpg = RpgDir::new(repo.workdir())?;
    let config = Config::load(repo.workdir())?;
    let store = rpg::evolve::open(&repo, &rpg, &config)?;
    let meta = store.meta()?;
    let counts = store.counts()?;
    let head = repo.head_commit();
    let shown = rpg::store::shown_commit(&repo, &meta.commit, &meta.tree);
    let graph_commit = gix::ObjectId::from_hex(shown.as_bytes())
        .context("the graph names an invalid commit id")?;
    let up_to_date =
        head.is_some_and(|h| rpg::store::graph_describes(&repo, &meta.commit, &meta.tree, h));
    let behind = head.and_then(|h| repo.commits_between(graph_commit, h, 100_000));
    let ahead = head.and_then(|h| repo.commits_between(h, graph_commit, 100_000));
    let status = rpg::render::Status {
        commit: shown,
        head: head.map(|h| h.to_string()),
        behind,
        ahead,
        up_to_date,
        lifter: meta.lifter.clone(),
        counts,
        adopted: store.adoption()?,
        unreadable: store.unreadable()?,
    };
    emit(json, &status, rpg::render::status_text)?;
    if !json && !snapshot_committed(&repo) {
        writeln!(std::io::stdout(), "{}", rpg::render::COMMIT_HINT)?;
    }
    Ok(ExitCode::SUCCESS)
}
