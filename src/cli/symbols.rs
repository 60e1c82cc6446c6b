//! `rpg symbols`: a file's skeleton.

use super::common::*;
use anyhow::Result;
use rpg::search::tools;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    file: String,
    /// Start at this definition: the next page of a long file, as a
    /// truncated answer names it.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    with_tools(dir, |repo, store| {
        let s = tools::symbols_page(store, repo, &a.file, a.offset)?;
        emit(a.json, &s, rpg::render::symbols)?;
        Ok(true)
    })
}
