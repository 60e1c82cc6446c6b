//! `rpg explore`: walk dependency edges from an entity.

use super::common::*;
use anyhow::Result;
use rpg::search::tools;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// An entity id (path:qualname) or a file path.
    id: String,
    /// Edge kinds to follow, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "invokes,imports,inherits,contains"
    )]
    edges: Vec<String>,
    /// down: what it contains, imports, invokes; up: who uses it.
    #[arg(long, value_enum, default_value_t = tools::Direction::Both)]
    direction: tools::Direction,
    #[arg(long, default_value_t = 2)]
    depth: usize,
    /// Start at this step of the walk: the next page of a long one, as a
    /// truncated answer names it.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let mut kinds = Vec::new();
    for e in &a.edges {
        match rpg::graph::EdgeKind::parse(e.trim()) {
            Some(k) => kinds.push(k),
            None => {
                anyhow::bail!("unknown edge kind {e:?}: use invokes, imports, inherits or contains")
            }
        }
    }
    with_tools(dir, |_, store| {
        let x = tools::explore_page(store, &a.id, &kinds, a.direction, a.depth, a.offset)?;
        emit(a.json, &x, rpg::render::explored)?;
        Ok(true)
    })
}
