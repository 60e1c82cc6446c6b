//! The GitHub webhook payloads the bot acts on, as Actions hands them over
//! in `GITHUB_EVENT_PATH`. Only the fields the bot reads are modelled;
//! everything else in the payload is ignored.

use super::BotError;
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub login: String,
    #[serde(rename = "type", default)]
    pub kind: String,
}

impl User {
    /// Bots comment on their own issues often; answering them loops.
    pub fn is_bot(&self) -> bool {
        self.kind.eq_ignore_ascii_case("bot") || self.login.ends_with("[bot]")
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Label {
    pub name: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    pub user: User,
    #[serde(default)]
    pub labels: Vec<Label>,
    /// Present when the "issue" is a pull request (GitHub models pull
    /// requests as issues, and `issue_comment` events carry both).
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Commitish {
    pub sha: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    #[serde(default)]
    pub title: String,
    pub user: User,
    #[serde(default)]
    pub labels: Vec<Label>,
    pub base: Commitish,
    pub head: Commitish,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PushCommit {
    #[serde(default)]
    pub added: Vec<String>,
    #[serde(default)]
    pub removed: Vec<String>,
    #[serde(default)]
    pub modified: Vec<String>,
}

/// One event payload; which kind is told by its fields, since the same
/// file format carries them all.
#[derive(Debug, Clone)]
pub enum Event {
    Issue {
        action: String,
        issue: Issue,
    },
    PullRequest {
        action: String,
        pr: PullRequest,
    },
    Push {
        after: String,
        commits: Vec<PushCommit>,
    },
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    issue: Option<Issue>,
    #[serde(default)]
    pull_request: Option<PullRequest>,
    #[serde(default)]
    after: Option<String>,
    #[serde(default)]
    commits: Option<Vec<PushCommit>>,
}

/// GitHub caps the commits a push payload lists; past that the file lists
/// are incomplete and prove nothing.
const PUSH_COMMITS_LISTED: usize = 20;

impl Event {
    pub fn parse(text: &str) -> Result<Event, BotError> {
        let raw: Raw = serde_json::from_str(text)
            .map_err(|e| BotError::Event(format!("not a GitHub event payload: {e}")))?;
        let action = raw.action.unwrap_or_default();
        if let Some(issue) = raw.issue {
            return Ok(Event::Issue { action, issue });
        }
        if let Some(pr) = raw.pull_request {
            return Ok(Event::PullRequest { action, pr });
        }
        if let (Some(after), Some(commits)) = (raw.after, raw.commits) {
            return Ok(Event::Push { after, commits });
        }
        Err(BotError::Event(
            "the payload is neither an issue, a pull request nor a push event".into(),
        ))
    }

    pub fn read(path: &Path) -> Result<Event, BotError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| BotError::Event(format!("cannot read {}: {e}", path.display())))?;
        Event::parse(&text)
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Event::Issue { .. } => "issue",
            Event::PullRequest { .. } => "pull request",
            Event::Push { .. } => "push",
        }
    }
}

/// Whether a push can have changed the graph: false only when every commit
/// it lists touched nothing but `.rpg/` (the snapshot commit the Action
/// itself pushes), so updating again would only chase its own tail.
pub fn push_touches_code(commits: &[PushCommit]) -> bool {
    let unlisted =
        |c: &PushCommit| c.added.is_empty() && c.removed.is_empty() && c.modified.is_empty();
    if commits.is_empty() || commits.len() >= PUSH_COMMITS_LISTED || commits.iter().any(unlisted) {
        return true;
    }
    commits
        .iter()
        .flat_map(|c| c.added.iter().chain(&c.removed).chain(&c.modified))
        .any(|p| !(p == ".rpg" || p.starts_with(".rpg/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Event {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/events")
            .join(name);
        Event::read(&p).unwrap()
    }

    #[test]
    fn issue_events_carry_number_text_author_and_labels() {
        let Event::Issue { action, issue } = fixture("issues-opened.json") else {
            panic!("not an issue event");
        };
        assert_eq!(action, "opened");
        assert_eq!(issue.number, 7);
        assert!(issue.title.contains("split_host"));
        assert!(issue.body.unwrap().contains("[::1]:8080"));
        assert!(!issue.user.is_bot());
        assert!(issue.pull_request.is_none());
        let Event::Issue { action, issue } = fixture("issues-edited.json") else {
            panic!("not an issue event");
        };
        assert_eq!(action, "edited");
        assert!(issue.body.unwrap().contains("Edit:"));
        let Event::Issue { issue, .. } = fixture("issues-opted-out.json") else {
            panic!("not an issue event");
        };
        assert_eq!(issue.labels[0].name, "rpg-skip");
        let Event::Issue { issue, .. } = fixture("issues-by-bot.json") else {
            panic!("not an issue event");
        };
        assert!(issue.user.is_bot());
        let Event::Issue { issue, .. } = fixture("issue_comment-on-pr.json") else {
            panic!("not an issue event");
        };
        assert!(issue.pull_request.is_some());
    }

    #[test]
    fn pull_request_and_push_events_are_told_apart() {
        let Event::PullRequest { action, pr } = fixture("pull_request-opened.json") else {
            panic!("not a pull request event");
        };
        assert_eq!((action.as_str(), pr.number), ("opened", 8));
        assert_eq!(
            (pr.base.sha.as_str(), pr.head.sha.as_str()),
            ("BASE_SHA", "HEAD_SHA")
        );
        let Event::Push { after, commits } = fixture("push.json") else {
            panic!("not a push event");
        };
        assert_eq!(after, "1".repeat(40));
        assert!(push_touches_code(&commits));
        let Event::Push { commits, .. } = fixture("push-snapshot-only.json") else {
            panic!("not a push event");
        };
        assert!(!push_touches_code(&commits));
    }

    #[test]
    fn pushes_that_list_no_files_are_assumed_to_touch_code() {
        let none = PushCommit {
            added: vec![],
            removed: vec![],
            modified: vec![],
        };
        assert!(push_touches_code(&[]));
        assert!(push_touches_code(&[none]));
    }

    #[test]
    fn other_payloads_are_refused() {
        assert!(Event::parse("{\"zen\": \"hi\"}").is_err());
        assert!(Event::parse("not json").is_err());
    }
}
