//! `rpg symbols`: a file's skeleton.

use super::common::*;
use anyhow::Result;
use rpg::search::tools;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    file: String,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    with_tools(dir, |repo, store| {
        let s = tools::symbols(store, repo, &a.file)?;
        emit(a.json, &s, rpg::render::symbols)?;
        Ok(true)
    })
}
