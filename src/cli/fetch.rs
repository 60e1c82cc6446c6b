//! `rpg fetch`: one entity, file or hierarchy path, with its source.

use super::common::*;
use anyhow::Result;
use rpg::search::tools;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    target: String,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    with_tools(dir, |repo, store| {
        let f = tools::fetch(store, repo, &a.target)?;
        emit(a.json, &f, rpg::render::fetched)?;
        Ok(true)
    })
}
