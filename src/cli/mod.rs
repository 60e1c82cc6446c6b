//! The command line: flags to library calls, results to stdout, errors as
//! one line on stderr. Exit codes: 0 ok, 1 nothing found, 2 error. One
//! file per command, each with its `Args` and its `run`.

mod bot;
mod common;
mod embed;
mod eval;
mod explore;
mod failure;
mod fetch;
mod hook;
mod init;
mod locate;
mod search;
mod status;
mod symbols;
mod tree;
mod update;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "rpg",
    version,
    about = "Repository Planning Graph: where in the code to look for an issue"
)]
struct Cli {
    /// Run as if started in this directory.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the graph of a commit from git objects and write .rpg/.
    Init(init::Args),
    /// Show which commit the graph reflects, how far behind HEAD it is, and counts.
    Status(status::Args),
    /// Move the graph to a commit (default HEAD), re-parsing and re-lifting only what changed.
    Update(update::Args),
    /// Rank the files and functions an issue most likely concerns.
    Locate(locate::Args),
    /// Find entities by what they do (features) or what their code says (snippets).
    Search(search::Args),
    /// Show an entity (path:qualname), a file or a hierarchy path: metadata,
    /// features, hierarchy and line-numbered source.
    Fetch(fetch::Args),
    /// Walk the graph's edges from an entity.
    Explore(explore::Args),
    /// A file's skeleton: imports, classes, functions and methods with line
    /// ranges and signatures, no bodies.
    Symbols(symbols::Args),
    /// The functional hierarchy: areas, categories and subcategories with
    /// entity counts and the directories they cover.
    Tree(tree::Args),
    /// Benchmark locate on a case file (JSON lines: id, repo, base_commit,
    /// query, gold_files, gold_functions), replaying each repository's
    /// history: init at the first case's commit, update to each later one.
    Eval(eval::Args),
    /// Serve locate, search, fetch, explore, symbols, tree and status to coding
    /// agents over the Model Context Protocol (stdio).
    Mcp,
    /// Compute local embedding vectors for every entity (incremental: only
    /// texts never embedded before). `rpg embed --install` fetches the model
    /// first.
    Embed(embed::Args),
    /// Install, remove or inspect the git hooks that keep the graph current.
    Hook(hook::Args),
    /// GitHub automation: comment located code on issues, the graph delta
    /// on pull requests (reads GITHUB_EVENT_PATH, GITHUB_TOKEN,
    /// GITHUB_REPOSITORY, GITHUB_API_URL and GITHUB_SERVER_URL).
    Bot(bot::Args),
}

pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => failure::Failure::of(e).report(),
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    let dir = match cli.dir {
        Some(d) => d,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    match &cli.command {
        Command::Init(a) => init::run(&dir, a),
        Command::Status(a) => status::run(&dir, a),
        Command::Update(a) => update::run(&dir, a),
        Command::Locate(a) => locate::run(&dir, a),
        Command::Search(a) => search::run(&dir, a),
        Command::Fetch(a) => fetch::run(&dir, a),
        Command::Explore(a) => explore::run(&dir, a),
        Command::Symbols(a) => symbols::run(&dir, a),
        Command::Tree(a) => tree::run(&dir, a),
        Command::Eval(a) => eval::run(a),
        Command::Mcp => {
            rpg::mcp::serve(dir)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Embed(a) => embed::run(&dir, a),
        Command::Hook(a) => hook::run(&dir, a),
        Command::Bot(a) => bot::run(&dir, a),
    }
}
