//! `rpg embed`: local embedding vectors for every entity.

use super::common::*;
use anyhow::Result;
use rpg::config::Config;
use rpg::git::Repo;
use rpg::store::RpgDir;
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
    let report = vectors.sync(&store, &repo, &mut embedder, &Bar::with_lines())?;
    emit(json, &report, rpg::render::embed_text)?;
    Ok(ExitCode::SUCCESS)
}
