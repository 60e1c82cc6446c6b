//! `rpg eval`: the localization benchmark over real history.

use anyhow::{bail, Context, Result};
use std::io::IsTerminal;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// A case file; repeatable, to judge or fit on several at once.
    #[arg(long, value_name = "FILE.jsonl", required_unless_present = "history")]
    cases: Vec<PathBuf>,
    /// A clone holding the cases' commits, or a directory of clones;
    /// repeatable. Clones are only read. With --history: the repository
    /// whose history is read (default: the current one).
    #[arg(
        long = "repo",
        value_name = "PATH",
        required_unless_present = "history"
    )]
    repos: Vec<PathBuf>,
    /// Make cases from the newest N fix commits of the repository: each
    /// message, with the names of what it changed masked, is an issue; the
    /// functions it changed are the gold; it is scored at its parent,
    /// beside plain BM25.
    #[arg(
        long,
        value_name = "N",
        conflicts_with_all = ["cases", "cv", "fit"],
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    history: Option<u32>,
    /// With --history: only commits made on or after DATE (YYYY-MM-DD, UTC).
    #[arg(long, value_name = "DATE", requires = "history", value_parser = day)]
    since: Option<i64>,
    /// With --history: also write the cases made to FILE, one JSON line
    /// each, to rerun later with --cases.
    #[arg(long, value_name = "FILE.jsonl", requires = "history")]
    save_cases: Option<PathBuf>,
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
    /// Cross-validate: score each repository under weights fitted on the
    /// other repositories' cases only, beside the shipped weights and an
    /// in-sample fit. With --ablate: one line per component, with its
    /// left-out gain.
    #[arg(long, value_enum, conflicts_with = "misses")]
    cv: Option<CvArg>,
    /// Fit the weights on every case by coordinate ascent and write them,
    /// with this command line, to FILE (the format of
    /// src/search/weights.json).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["ablate", "misses"])]
    fit: Option<PathBuf>,
    /// With --cv or --fit: fit only this weight (a key of
    /// src/search/weights.json), holding the others; repeatable.
    #[arg(long, value_name = "WEIGHT", value_parser = weight_name)]
    tune: Vec<String>,
    /// Rank with the weights in FILE instead of the shipped ones.
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// A weight's name, as `weights.json` spells it.
fn weight_name(s: &str) -> Result<String, String> {
    let names: Vec<&str> = rpg::search::weights::LIMITS.iter().map(|l| l.0).collect();
    if names.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "not a weight; the weights are {}",
            names.join(", ")
        ))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CvArg {
    /// Leave one repository out.
    Repo,
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

/// Seconds since the epoch at the start of a `YYYY-MM-DD` day, UTC.
fn day(s: &str) -> Result<i64, String> {
    let bad = || format!("{s:?} is not a date as YYYY-MM-DD");
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts[..] else {
        return Err(bad());
    };
    let (y, m, d): (i64, i64, i64) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    // Days from the civil calendar (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * 86_400)
}

/// The cases to run and the repositories holding them: the files and
/// clones given, or the cases made from one repository's history.
fn cases_for(a: &Args) -> Result<(Vec<rpg::eval::Case>, Vec<PathBuf>)> {
    let Some(limit) = a.history else {
        let mut list = Vec::new();
        for c in &a.cases {
            list.extend(rpg::eval::load_cases(c)?);
        }
        return Ok((list, a.repos.clone()));
    };
    let dir = match a.repos.as_slice() {
        [] => std::env::current_dir().context("cannot read the current directory")?,
        [one] => one.clone(),
        _ => bail!("--history reads one repository; give --repo once"),
    };
    let repo = rpg::git::Repo::discover(&dir)?;
    let name = repo
        .workdir()
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "repo".into());
    let opts = rpg::eval::history::HistoryOptions {
        limit: limit as usize,
        since: a.since,
    };
    let cases = rpg::eval::history::cases(&repo, &name, opts)?;
    rpg::notice!(
        "{} cases from the history of {}",
        cases.len(),
        repo.workdir().display()
    );
    if let Some(path) = &a.save_cases {
        let mut text = String::new();
        for c in &cases {
            text += &serde_json::to_string(c)?;
            text.push('\n');
        }
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok((cases, vec![repo.workdir().to_path_buf()]))
}

pub fn run(a: &Args) -> Result<ExitCode> {
    let (list, repo_dirs) = cases_for(a)?;
    if list.is_empty() {
        rpg::notice!("no commit qualifies as a case");
        return Ok(ExitCode::from(1));
    }
    let repos: std::collections::BTreeSet<&str> = list.iter().map(|c| c.repo.as_str()).collect();
    if !a.tune.is_empty() && a.cv.is_none() && a.fit.is_none() {
        bail!("--tune chooses what --cv or --fit fits; give one of them");
    }
    if a.cv.is_some() && repos.len() < 2 {
        bail!("--cv repo needs cases from at least two repositories");
    }
    let variants = variants_for(a)?;
    let mut embedder = embedder_for(a)?;
    // A new directory of a random name (/tmp is shared), removed on drop.
    let scratch_dir = tempfile::Builder::new()
        .prefix("rpg-eval-")
        .tempdir()
        .context("cannot create a scratch directory")?;
    let scratch = scratch_dir.path().to_path_buf();
    let progress = EvalProgress {
        on: std::io::stderr().is_terminal(),
    };
    let report = rpg::eval::run(
        &list,
        &repo_dirs,
        &variants,
        &scratch,
        &progress,
        embedder.as_mut(),
        a.cv.is_some() || a.fit.is_some(),
    );
    drop(scratch_dir);
    if progress.on {
        eprint!("\r\x1b[2K");
    }
    print(a, &report?, &variants, &list)
}

/// The variants to run: the full ranker (under `--weights`, if given),
/// then the ablations asked for.
fn variants_for(a: &Args) -> Result<Vec<rpg::eval::Variant>> {
    let mut variants = rpg::eval::ablations();
    if let Some(path) = &a.weights {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let file = rpg::search::WeightsFile::parse(&text)
            .with_context(|| format!("{} is not a weights file", path.display()))?;
        for v in variants.iter_mut() {
            v.switches.w = rpg::search::Weights {
                dense: v.switches.w.dense,
                ..file.weights
            };
        }
        variants[0].switches.w.dense = file.weights.dense;
    }
    if !a.dense {
        variants.retain(|v| !v.name.contains("dense"));
    }
    if a.history.is_some() && !a.ablate {
        variants.retain(|v| v.name == "full" || v.name == rpg::eval::BM25);
    } else if !a.ablate {
        variants.truncate(1);
    }
    Ok(variants)
}

fn embedder_for(a: &Args) -> Result<Option<rpg::embed::Embedder>> {
    if !a.dense {
        return Ok(None);
    }
    let root = std::env::current_dir().context("cannot read the current directory")?;
    let cfg = rpg::config::EmbedConfig {
        text: match a.embed_text {
            EmbedTextArg::Summary => rpg::embed::EmbedText::Summary,
            EmbedTextArg::Code => rpg::embed::EmbedText::Code,
        },
        ..rpg::config::EmbedConfig::default()
    };
    let files = rpg::embed::ModelFiles::find(&cfg, &root)?
        .context("--dense needs the embedding model: run `rpg embed --install`")?;
    Ok(Some(rpg::embed::Embedder::load(
        &files,
        rpg::embed::Use::Bulk,
    )?))
}

fn print(
    a: &Args,
    report: &rpg::eval::Report,
    variants: &[rpg::eval::Variant],
    cases: &[rpg::eval::Case],
) -> Result<ExitCode> {
    let start = variants[0].switches;
    let params = rpg::eval::fit::params_for(&report.samples, &a.tune);
    if let Some(path) = &a.fit {
        return write_fit(report, start, &params, path);
    }
    if a.cv.is_some() && a.ablate {
        let rows = rpg::eval::fit::cross_validate_variants(&report.samples, variants, &params);
        return emit(a.json, &rows, || rpg::render::cv_ablation_text(&rows));
    }
    if a.cv.is_some() {
        let cv = rpg::eval::fit::cross_validate(&report.samples, start, &params);
        return emit(a.json, &cv, || rpg::render::cv_text(&cv));
    }
    if a.history.is_some() && a.json {
        // The cases made ride along, to be saved and rerun with --cases.
        let mut value = serde_json::to_value(report)?;
        value["history_cases"] = serde_json::to_value(cases)?;
        return emit(true, &value, String::new);
    }
    emit(a.json, report, || {
        rpg::render::eval_text(report, a.ablate, a.misses)
    })
}

/// Print `value` as JSON, or as the text `render` makes of it.
fn emit<T: serde::Serialize>(
    json: bool,
    value: &T,
    render: impl FnOnce() -> String,
) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, value)?;
        writeln!(out)?;
    } else {
        out.write_all(render().as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Fit on every case and write the weights with the command that made
/// them.
fn write_fit(
    report: &rpg::eval::Report,
    start: rpg::search::Switches,
    params: &[usize],
    path: &std::path::Path,
) -> Result<ExitCode> {
    let samples = &report.samples;
    let all: Vec<&rpg::eval::fit::Sample> = samples.iter().collect();
    let fitted = rpg::eval::fit::fit(&all, start, params);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = rpg::search::WeightsFile {
        made_by: format!("rpg {}", args.join(" ")),
        weights: fitted.w,
    };
    let text = serde_json::to_string_pretty(&file)? + "\n";
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    rpg::notice!(
        "wrote {} (fitted on {} cases)",
        path.display(),
        samples.len()
    );
    Ok(ExitCode::SUCCESS)
}
