//! `rpg eval`: the localization benchmark over real history.

use anyhow::{Context, Result};
use std::io::IsTerminal;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_name = "FILE.jsonl")]
    cases: PathBuf,
    /// A clone holding the cases' commits, or a directory of clones;
    /// repeatable. Clones are only read.
    #[arg(long = "repo", value_name = "PATH", required = true)]
    repos: Vec<PathBuf>,
    /// Also run BM25 alone and the ranker without each component, and
    /// print each component's gain.
    #[arg(long)]
    ablate: bool,
    /// Also embed entities and issues locally and use dense neighbours
    /// (needs `rpg embed --install`); adds a "without dense" variant.
    #[arg(long)]
    dense: bool,
    /// With --dense: embed entities as `summary` (name, features,
    /// docstring, signature) or as `code` (name and source body).
    #[arg(long, value_enum, default_value = "summary", requires = "dense")]
    embed_text: EmbedTextArg,
    /// Print the cases each variant missed at file or function Hit@5.
    #[arg(long)]
    misses: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EmbedTextArg {
    Summary,
    Code,
}

struct EvalProgress {
    on: bool,
}

impl rpg::eval::Observer for EvalProgress {
    fn case(&self, done: usize, total: usize, case: &rpg::eval::Case) {
        if self.on {
            eprint!("\r\x1b[2K[{}/{}] {}", done + 1, total, case.id);
        }
    }
}

pub fn run(a: &Args) -> Result<ExitCode> {
    let Args {
        ref cases,
        ref repos,
        ablate,
        dense,
        embed_text,
        misses,
        json,
    } = *a;
    let list = rpg::eval::load_cases(cases)?;
    let mut variants = rpg::eval::ablations();
    if !dense {
        variants.retain(|v| !v.name.contains("dense"));
    }
    if !ablate {
        variants.truncate(1);
    }
    let mut embedder = if dense {
        let root = std::env::current_dir().context("cannot read the current directory")?;
        let cfg = rpg::config::EmbedConfig {
            text: match embed_text {
                EmbedTextArg::Summary => rpg::embed::EmbedText::Summary,
                EmbedTextArg::Code => rpg::embed::EmbedText::Code,
            },
            ..rpg::config::EmbedConfig::default()
        };
        let files = rpg::embed::ModelFiles::find(&cfg, &root)?
            .context("--dense needs the embedding model: run `rpg embed --install`")?;
        Some(rpg::embed::Embedder::load(&files, rpg::embed::Use::Bulk)?)
    } else {
        None
    };
    let scratch = std::env::temp_dir().join(format!("rpg-eval-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)
        .with_context(|| format!("cannot create {}", scratch.display()))?;
    let progress = EvalProgress {
        on: std::io::stderr().is_terminal(),
    };
    let report = rpg::eval::run(
        &list,
        repos,
        &variants,
        &scratch,
        &progress,
        embedder.as_mut(),
    );
    let _ = std::fs::remove_dir_all(&scratch);
    if progress.on {
        eprint!("\r\x1b[2K");
    }
    let report = report?;
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    out.write_all(rpg::render::eval_text(&report, ablate, misses).as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
