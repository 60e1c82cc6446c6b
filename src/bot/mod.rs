//! The GitHub side: read the event Actions hands over, decide whether to
//! act, and comment the located scaffold on issues or the graph delta on
//! pull requests. Event text is untrusted: it only ever becomes a query,
//! never a path, a shell word or a git argument.

pub mod comment;
pub mod event;
pub mod github;

use crate::evolve::{Target, UpdateOptions, UpdateReport};
use crate::git::Repo;
use crate::lift::offline::OfflineLifter;
use crate::search::{Located, Switches};
use crate::store::{RpgDir, Store};
use event::{Event, Issue, PullRequest};

#[derive(Debug, thiserror::Error)]
pub enum BotError {
    #[error("{0}")]
    Event(String),
    #[error("{0}")]
    Config(String),
    #[error("{message}")]
    Status { status: u16, message: String },
    #[error("{0}")]
    RateLimited(String),
    #[error("{0}")]
    Http(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Evolve(#[from] crate::evolve::EvolveError),
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
}

/// Why the bot leaves an event alone. Not an error: the run succeeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    WrongEvent(&'static str),
    Action(String),
    PullRequest,
    BotAuthor(String),
    OptedOut(String),
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::WrongEvent(k) => write!(f, "this is a {k} event"),
            Skip::Action(a) => write!(f, "nothing to do when an issue is {a:?}"),
            Skip::PullRequest => write!(f, "this issue is a pull request"),
            Skip::BotAuthor(l) => write!(f, "opened by the bot account {l}"),
            Skip::OptedOut(l) => write!(f, "the issue carries the opt-out label {l:?}"),
        }
    }
}

fn opted_out(labels: &[event::Label], opt_out: &str) -> bool {
    labels.iter().any(|l| l.name.eq_ignore_ascii_case(opt_out))
}

/// The issue to answer, or why not.
pub fn issue_to_answer<'e>(e: &'e Event, opt_out: &str) -> Result<&'e Issue, Skip> {
    let Event::Issue { action, issue } = e else {
        return Err(Skip::WrongEvent(e.kind()));
    };
    if issue.pull_request.is_some() {
        return Err(Skip::PullRequest);
    }
    if !matches!(
        action.as_str(),
        "opened" | "edited" | "reopened" | "labeled" | "unlabeled"
    ) {
        return Err(Skip::Action(action.clone()));
    }
    if issue.user.is_bot() {
        return Err(Skip::BotAuthor(issue.user.login.clone()));
    }
    if opted_out(&issue.labels, opt_out) {
        return Err(Skip::OptedOut(opt_out.to_string()));
    }
    Ok(issue)
}

/// The pull request to describe, or why not.
pub fn pull_request_to_describe<'e>(e: &'e Event, opt_out: &str) -> Result<&'e PullRequest, Skip> {
    let Event::PullRequest { action, pr } = e else {
        return Err(Skip::WrongEvent(e.kind()));
    };
    if !matches!(
        action.as_str(),
        "opened" | "synchronize" | "reopened" | "edited"
    ) {
        return Err(Skip::Action(action.clone()));
    }
    if pr.user.is_bot() {
        return Err(Skip::BotAuthor(pr.user.login.clone()));
    }
    if opted_out(&pr.labels, opt_out) {
        return Err(Skip::OptedOut(opt_out.to_string()));
    }
    Ok(pr)
}

/// Issues can be huge; locate reads enough of them to rank.
const QUERY_LIMIT: usize = 64 * 1024;

/// Locate the issue's title and body in `store`.
pub fn locate_issue(
    repo: &Repo,
    store: &Store,
    issue: &Issue,
    top_k: usize,
) -> Result<Located, BotError> {
    let mut text = format!("{}\n{}", issue.title, issue.body.as_deref().unwrap_or(""));
    text.truncate(crate::text::prefix(&text, QUERY_LIMIT).len());
    // Only a full id can be asked of a server.
    let cited: Vec<gix::ObjectId> = crate::search::Query::parse(&text)
        .commits
        .iter()
        .filter_map(|c| gix::ObjectId::from_hex(c.as_bytes()).ok())
        .collect();
    repo.fetch_missing(&cited);
    Ok(crate::search::locate_issue(
        repo,
        store,
        &text,
        Switches::default(),
        top_k,
    )?)
}

/// The graph delta between two commits, computed on a scratch copy of the
/// committed snapshot so the repository's own store stays as it was.
pub fn pull_request_delta(
    repo: &Repo,
    rpg: &RpgDir,
    config: &crate::config::Config,
    base: gix::ObjectId,
    head: gix::ObjectId,
) -> Result<UpdateReport, BotError> {
    // A new directory of a random name: /tmp is shared.
    let scratch = tempfile::Builder::new()
        .prefix("rpg-pr-delta-")
        .tempdir()
        .map_err(|e| BotError::Config(format!("cannot create a scratch directory: {e}")))?;
    let copy = RpgDir::new(scratch.path())?;
    copy.ensure()?;
    std::fs::copy(rpg.snapshot_path(), copy.snapshot_path())
        .map_err(|e| BotError::Config(format!("cannot copy the snapshot: {e}")))?;
    let opts = UpdateOptions::default();
    (|| {
        crate::evolve::update(
            repo,
            &copy,
            config,
            Target::commit(repo, base)?,
            &OfflineLifter,
            &opts,
        )?;
        Ok(crate::evolve::update(
            repo,
            &copy,
            config,
            Target::commit(repo, head)?,
            &OfflineLifter,
            &opts,
        )?)
    })()
}
