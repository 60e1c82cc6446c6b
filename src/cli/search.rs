//! `rpg search`: entities by what they do or what their code says.

use super::common::*;
use anyhow::Result;
use rpg::search::tools;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// What to look for.
    query: String,
    /// Only inside this hierarchy path (area/category/…) or directory.
    #[arg(long)]
    scope: Option<String>,
    #[arg(long, value_enum, default_value_t = tools::Mode::Auto)]
    mode: tools::Mode,
    #[arg(long, default_value_t = 10, value_parser = at_least_one)]
    top_k: usize,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    with_tools(dir, |repo, store| {
        let found =
            tools::search_issue(repo, store, &a.query, a.scope.as_deref(), a.mode, a.top_k)?;
        emit(a.json, &found, rpg::render::searched)?;
        Ok(!found.results.is_empty())
    })
}
