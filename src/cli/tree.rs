//! `rpg tree`: browse the functional hierarchy.

use super::common::*;
use anyhow::Result;
use rpg::search::tools;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// A hierarchy path (area, area/category, …); everything when omitted.
    path: Option<String>,
    /// Levels to show, counting PATH's own (without PATH: 1 lists the
    /// areas only, 3 everything).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=3))]
    depth: u8,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    with_tools(dir, |_, store| {
        let t = tools::tree(store, a.path.as_deref().unwrap_or(""), usize::from(a.depth))?;
        emit(a.json, &t, rpg::render::tree)?;
        Ok(!t.nodes.is_empty())
    })
}
