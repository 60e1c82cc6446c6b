//! `rpg bot`: the GitHub side, comments on issues and pull requests.

use super::common::*;
use anyhow::{Context, Result};
use rpg::config::Config;
use rpg::git::Repo;
use rpg::store::RpgDir;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: BotAction,
}

#[derive(Clone, clap::Subcommand)]
enum BotAction {
    /// Locate an opened or edited issue and comment the scaffold, editing
    /// the bot's earlier comment when there is one.
    IssueComment {
        /// The event payload (default: $GITHUB_EVENT_PATH).
        #[arg(long)]
        event: Option<PathBuf>,
        #[arg(long, default_value_t = 5, value_parser = at_least_one)]
        top_k: usize,
        /// Issues with this label are left alone.
        #[arg(long, default_value = "rpg-skip")]
        opt_out_label: String,
        /// Print the comment instead of posting it (no token needed).
        #[arg(long)]
        dry_run: bool,
    },
    /// Comment what a pull request changes in the graph: entities inserted,
    /// modified, drifted and deleted, and the categories touched.
    PrComment {
        #[arg(long)]
        event: Option<PathBuf>,
        #[arg(long, default_value = "rpg-skip")]
        opt_out_label: String,
        #[arg(long)]
        dry_run: bool,
    },
    /// Exit 0 when a push event may have changed code, 1 when it only
    /// touched .rpg/ (the snapshot commit itself).
    PushCheck {
        #[arg(long)]
        event: Option<PathBuf>,
    },
}

/// What the bot needs from the Actions environment.
struct BotEnv {
    repository: String,
    api_url: String,
    server_url: String,
}

impl BotEnv {
    fn read() -> Result<BotEnv> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let repository =
            var("GITHUB_REPOSITORY").context("GITHUB_REPOSITORY is not set (owner/name)")?;
        anyhow::ensure!(
            rpg::bot::github::valid_repository(&repository),
            "GITHUB_REPOSITORY must be owner/name, got {repository:?}"
        );
        Ok(BotEnv {
            repository,
            api_url: var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into()),
            server_url: var("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".into()),
        })
    }

    fn client(&self) -> Result<rpg::bot::github::GitHub> {
        let token = std::env::var("GITHUB_TOKEN").unwrap_or_default();
        Ok(rpg::bot::github::GitHub::new(
            &token,
            &self.api_url,
            &self.repository,
            rpg::bot::github::Retry::default(),
        )?)
    }
}

fn event_at(path: Option<PathBuf>) -> Result<rpg::bot::event::Event> {
    let path = match path {
        Some(p) => p,
        None => std::env::var_os("GITHUB_EVENT_PATH")
            .map(PathBuf::from)
            .context("no event: pass --event or set GITHUB_EVENT_PATH")?,
    };
    Ok(rpg::bot::event::Event::read(&path)?)
}

fn bot_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Post `body` under `marker` on issue `number`; with `create` false only
/// an existing comment is edited.
fn post(env: &BotEnv, number: u64, marker: &str, body: &str, create: bool) -> Result<()> {
    use rpg::bot::github::Upsert;
    let rt = bot_runtime()?;
    // The client spawns its connection pool on the runtime it is built in.
    let _in_runtime = rt.enter();
    let gh = env.client()?;
    let done = rt.block_on(gh.upsert_comment(number, marker, body, create))?;
    match done {
        Some(Upsert::Created(id)) => rpg::notice!("rpg: commented on #{number} (comment {id})"),
        Some(Upsert::Updated(id)) => rpg::notice!("rpg: updated comment {id} on #{number}"),
        Some(Upsert::Unchanged(id)) => rpg::notice!("rpg: comment {id} on #{number} is current"),
        None => rpg::notice!("rpg: nothing to say on #{number}; no comment"),
    }
    Ok(())
}

/// Open the graph for the bot; `None` (said on stderr, as an Actions
/// warning) when the repository has none, so no comment is made of nothing.
fn bot_store(dir: &std::path::Path) -> Result<Option<(Repo, rpg::store::Store)>> {
    match open_for_query(dir) {
        Ok(opened) => Ok(Some(opened)),
        Err(e) if super::failure::Failure::kind_of(&e) == super::failure::Kind::NoGraph => {
            rpg::notice!(
                "::warning::rpg: this repository has no graph (.rpg/graph.jsonl); run the action in update mode or `rpg init` and commit .rpg/. Not commenting."
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

pub fn run(dir: &Path, a: &Args) -> Result<ExitCode> {
    let action = a.action.clone();
    use rpg::bot::{comment, event::Event};
    match action {
        BotAction::PushCheck { event } => {
            let e = event_at(event)?;
            let Event::Push { commits, .. } = &e else {
                anyhow::bail!("push-check needs a push event, got a {} event", e.kind());
            };
            if rpg::bot::event::push_touches_code(commits) {
                writeln!(std::io::stdout(), "update")?;
                Ok(ExitCode::SUCCESS)
            } else {
                writeln!(std::io::stdout(), "skip: the push only changed .rpg/")?;
                Ok(ExitCode::from(1))
            }
        }
        BotAction::IssueComment {
            event,
            top_k,
            opt_out_label,
            dry_run,
        } => {
            let e = event_at(event)?;
            let issue = match rpg::bot::issue_to_answer(&e, &opt_out_label) {
                Ok(i) => i,
                Err(skip) => {
                    rpg::notice!("rpg: not commenting: {skip}");
                    return Ok(ExitCode::SUCCESS);
                }
            };
            // A dry run posts nothing, but links like the real comment when
            // the Actions environment says where the repository lives.
            let env = if dry_run {
                BotEnv::read().ok()
            } else {
                Some(BotEnv::read()?)
            };
            let Some((repo, store)) = bot_store(dir)? else {
                return Ok(ExitCode::SUCCESS);
            };
            let located = rpg::bot::locate_issue(&repo, &store, issue, top_k)?;
            drop(store);
            let found = !located.files.is_empty();
            let base = env.as_ref().map(|env| {
                format!(
                    "{}/{}/blob/{}",
                    env.server_url.trim_end_matches('/'),
                    env.repository,
                    located.commit
                )
            });
            let md = rpg::render::markdown(&located.scaffold, base.as_deref());
            let body = comment::locate_body(&md, &located.commit, &opt_out_label);
            match env {
                Some(env) if !dry_run => {
                    post(&env, issue.number, comment::LOCATE_MARKER, &body, found)?
                }
                _ => std::io::stdout().write_all(body.as_bytes())?,
            }
            Ok(ExitCode::SUCCESS)
        }
        BotAction::PrComment {
            event,
            opt_out_label,
            dry_run,
        } => {
            let e = event_at(event)?;
            let pr = match rpg::bot::pull_request_to_describe(&e, &opt_out_label) {
                Ok(p) => p,
                Err(skip) => {
                    rpg::notice!("rpg: not commenting: {skip}");
                    return Ok(ExitCode::SUCCESS);
                }
            };
            let env = if dry_run { None } else { Some(BotEnv::read()?) };
            let repo = Repo::discover(dir)?;
            let rpg = RpgDir::new(repo.workdir())?;
            if !rpg.has_snapshot() {
                rpg::notice!(
                    "::warning::rpg: this repository has no graph (.rpg/graph.jsonl); not commenting."
                );
                return Ok(ExitCode::SUCCESS);
            }
            let sha = |s: &str| {
                gix::ObjectId::from_hex(s.as_bytes())
                    .with_context(|| format!("the event names an invalid commit {s:?}"))
            };
            let (base, head) = (sha(&pr.base.sha)?, sha(&pr.head.sha)?);
            let config = Config::load(repo.workdir())?;
            let report = rpg::bot::pull_request_delta(&repo, &rpg, &config, base, head)
                .context("cannot compute the graph delta (are both commits fetched?)")?;
            let body = comment::delta_body(&report, &pr.base.sha, &pr.head.sha);
            match env {
                None => std::io::stdout().write_all(body.as_bytes())?,
                Some(env) => post(&env, pr.number, comment::DELTA_MARKER, &body, true)?,
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
