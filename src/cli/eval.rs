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
    /// (needs scripts/setup-embeddings.sh); adds a "without dense" variant.
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
            .context("--dense needs the embedding model: run scripts/setup-embeddings.sh")?;
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
    let full = &report.variants[0];
    writeln!(out, "{} cases", report.cases)?;
    for (level, table) in [("file", &full.file), ("function", &full.function)] {
        writeln!(out, "\n{level} level")?;
        write!(out, "  {:<22} {:>4}", "repository", "n")?;
        for k in rpg::eval::KS {
            write!(out, " {:>7}", format!("hit@{k}"))?;
        }
        for k in rpg::eval::KS {
            write!(out, " {:>7}", format!("acc@{k}"))?;
        }
        writeln!(out, " {:>9} {:>7}", "recall@5", "mrr")?;
        // The overall row first, then each repository.
        let rows = table
            .get_key_value("all")
            .into_iter()
            .chain(table.iter().filter(|(k, _)| k.as_str() != "all"));
        for (repo, s) in rows {
            write!(out, "  {:<22} {:>4}", repo, s.n)?;
            for x in s.mean.hit.iter().chain(&s.mean.acc) {
                write!(out, " {x:>7.3}")?;
            }
            writeln!(out, " {:>9.3} {:>7.3}", s.mean.recall[2], s.mean.mrr)?;
        }
    }
    let l = &full.latency_ms;
    writeln!(
        out,
        "\nranking latency (store open): p50 {:.1} ms, p90 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        l.p50, l.p90, l.p95, l.max
    )?;
    if ablate {
        writeln!(out, "\nablation (all cases; gain = full minus variant)")?;
        writeln!(
            out,
            "  {:<22} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "variant", "file@5", "gain", "func@5", "gain", "func mrr"
        )?;
        let get = |v: &rpg::eval::VariantReport| {
            let f = v.file.get("all").map(|s| s.mean.hit[2]).unwrap_or(0.0);
            let g = v.function.get("all").map(|s| s.mean.hit[2]).unwrap_or(0.0);
            let m = v.function.get("all").map(|s| s.mean.mrr).unwrap_or(0.0);
            (f, g, m)
        };
        let (f0, g0, _) = get(full);
        for v in &report.variants {
            let (f, g, m) = get(v);
            writeln!(
                out,
                "  {:<22} {:>10.3} {:>+10.3} {:>10.3} {:>+10.3} {:>10.3}",
                v.name,
                f,
                f0 - f,
                g,
                g0 - g,
                m
            )?;
        }
    }
    if misses {
        for v in &report.variants {
            for c in &v.cases {
                for (level, s) in [("file", &c.file), ("function", &c.function)] {
                    let Some(s) = s.as_ref().filter(|s| s.hit[2] == 0.0) else {
                        continue;
                    };
                    // MRR is the reciprocal of the first gold rank.
                    let rank = match s.mrr {
                        0.0 => "none".to_string(),
                        m => format!("{:.0}", 1.0 / m),
                    };
                    writeln!(
                        out,
                        "miss [{}] {level} {} (first gold at rank {rank})",
                        v.name, c.id
                    )?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
