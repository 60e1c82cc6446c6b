//! `rpg locate`: rank the files and functions an issue concerns.

use super::common::*;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The issue text; `-` reads standard input.
    query: Option<String>,
    /// Read the issue text from a file.
    #[arg(long, value_name = "PATH", conflicts_with = "query")]
    query_file: Option<PathBuf>,
    /// How many files and functions to list.
    #[arg(long, default_value_t = 10, value_parser = at_least_one)]
    top_k: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Same as `--format json`.
    #[arg(long)]
    json: bool,
    /// With `--format markdown`: turn paths into links under this URL,
    /// e.g. https://github.com/OWNER/REPO/blob/COMMIT.
    #[arg(long, value_name = "URL")]
    link_base: Option<String>,
    /// Ablation: ignore names the issue mentions.
    #[arg(long)]
    no_names: bool,
    /// Ablation: ignore stack-trace frames.
    #[arg(long)]
    no_frames: bool,
    /// Ablation: no class context.
    #[arg(long)]
    no_context: bool,
    /// Ablation: no call-graph neighbours.
    #[arg(long)]
    no_neighbours: bool,
    /// Ablation: do not down-weight test code.
    #[arg(long)]
    no_test_penalty: bool,
    /// Ablation: ignore paths and path words.
    #[arg(long)]
    no_paths: bool,
    /// Ablation: ignore the text outside functions.
    #[arg(long)]
    no_modules: bool,
    /// Ablation: match only the words the issue spells, never another
    /// inflection of a word no code holds, nor two of its words run
    /// together as the code spells them.
    #[arg(long)]
    no_variants: bool,
    /// Ablation: rank functions without the prior for their length.
    #[arg(long)]
    no_size: bool,
    /// Never search the sources for the issue's text as written when no
    /// indexed word matches.
    #[arg(long)]
    no_literal: bool,
    /// Rank lexically only, even when `rpg embed` has computed vectors.
    #[arg(long)]
    no_dense: bool,
    /// Ablation: ignore which functions the newest commits changed.
    #[arg(long)]
    no_recent: bool,
    /// Ablation: score files by their entities and module text only, not
    /// as one document each.
    #[arg(long)]
    no_whole_file: bool,
    /// Let files gain from the strength of their directory.
    #[arg(long)]
    dirs: bool,
    /// Fuse in the names-and-features ranking (reciprocal rank, k = 60).
    #[arg(long)]
    fusion: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
    Markdown,
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let text = match (&a.query, &a.query_file) {
        (_, Some(p)) => {
            std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?
        }
        (Some(q), None) if q == "-" => {
            let mut buf = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut buf)
                .context("cannot read the query from standard input")?;
            buf
        }
        (Some(q), None) => q.clone(),
        (None, None) => {
            anyhow::bail!("give the issue text, `-` for standard input, or --query-file")
        }
    };
    // Nothing to look for is a mistake in the call, not an answer.
    if text.trim().is_empty() {
        anyhow::bail!("the issue text is empty; give its title and body");
    }
    let sw = rpg::search::Switches {
        w: Default::default(),
        names: !a.no_names,
        frames: !a.no_frames,
        context: !a.no_context,
        neighbours: !a.no_neighbours,
        test_penalty: !a.no_test_penalty,
        paths: !a.no_paths,
        modules: !a.no_modules,
        variants: !a.no_variants,
        size: !a.no_size,
        literal: !a.no_literal,
        dirs: a.dirs,
        fusion: a.fusion,
        dense: !a.no_dense,
        dense_rrf: false,
        recent: !a.no_recent,
        whole_files: !a.no_whole_file,
    };
    let format = if a.json { Format::Json } else { a.format };
    rank(dir, &text, a.top_k, format, a.link_base.as_deref(), sw)
}

fn rank(
    dir: &std::path::Path,
    text: &str,
    top_k: usize,
    format: Format,
    link_base: Option<&str>,
    sw: rpg::search::Switches,
) -> Result<ExitCode> {
    let (repo, store) = open_for_query(dir)?;
    let located = rpg::search::locate_issue(&repo, &store, text, sw, top_k)?;
    let found = !located.files.is_empty();
    let mut out = std::io::stdout().lock();
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &located)?;
            writeln!(out)?;
        }
        Format::Text => {
            let text = rpg::render::text(&located.scaffold);
            out.write_all(rpg::text::printable(&text).as_bytes())?
        }
        Format::Markdown => {
            let md = rpg::render::markdown(&located.scaffold, link_base);
            out.write_all(rpg::text::printable(&md).as_bytes())?
        }
    }
    Ok(if found {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
