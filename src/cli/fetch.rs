//! `rpg fetch`: one entity, file or hierarchy path, with its source.

use super::common::*;
use anyhow::Result;
use rpg::search::tools::{self, Window};
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    target: String,
    /// Show lines A-B of the file (`A-B`, `A-` to the end, or `A`), within
    /// the target's span; a long range is cut and says where to go on.
    #[arg(long, value_name = "A-B", value_parser = parse_lines, conflicts_with = "around")]
    lines: Option<(u32, u32)>,
    /// Show the target's lines holding any of these words, with 3 lines
    /// either side, as `grep -C 3` would.
    #[arg(long, value_name = "WORDS")]
    around: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

fn parse_lines(s: &str) -> Result<(u32, u32), String> {
    let num = |x: &str| {
        x.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{x:?} is not a line number (1 or more)"))
    };
    match s.split_once('-') {
        None => num(s).map(|n| (n, n)),
        Some((a, "")) => Ok((num(a)?, u32::MAX)),
        Some((a, b)) => match (num(a)?, num(b)?) {
            (a, b) if a <= b => Ok((a, b)),
            _ => Err("the range ends before it starts".into()),
        },
    }
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let window = match (&a.lines, &a.around) {
        (Some((x, y)), _) => Window::Lines(*x, *y),
        (None, Some(w)) => Window::Around(w.clone()),
        (None, None) => Window::Whole,
    };
    with_tools(dir, |repo, store| {
        let f = tools::fetch_window(store, repo, &a.target, &window)?;
        emit(a.json, &f, rpg::render::fetched)?;
        Ok(true)
    })
}
