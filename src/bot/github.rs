//! The few GitHub REST calls the bot makes, through octocrab, with the
//! retries GitHub asks clients for: `Retry-After` and the rate-limit reset
//! on 403/429, backoff on 5xx, both bounded.

use super::BotError;
use octocrab::Octocrab;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;

/// How hard to try before giving up.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub attempts: u32,
    /// First backoff after a 5xx without `Retry-After`; doubles each time.
    pub base: Duration,
    /// A rate limit that resets later than this is reported, not waited out.
    pub max_wait: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            attempts: 4,
            base: Duration::from_secs(1),
            max_wait: Duration::from_secs(120),
        }
    }
}

pub struct GitHub {
    octo: Octocrab,
    api: String,
    repo: String,
    retry: Retry,
}

#[derive(Debug, Deserialize)]
struct Comment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    user: Option<super::event::User>,
}

/// What [`GitHub::upsert_comment`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upsert {
    Created(u64),
    Updated(u64),
    Unchanged(u64),
}

/// `owner/name` as GitHub allows them; anything else is refused before it
/// reaches a URL.
pub fn valid_repository(s: &str) -> bool {
    let ok = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    matches!(s.split_once('/'), Some((o, n)) if ok(o) && ok(n))
}

impl GitHub {
    pub fn new(token: &str, api_url: &str, repo: &str, retry: Retry) -> Result<GitHub, BotError> {
        if token.trim().is_empty() {
            return Err(BotError::Config(
                "no GitHub token: set GITHUB_TOKEN (the action's github-token input)".into(),
            ));
        }
        if !valid_repository(repo) {
            return Err(BotError::Config(format!(
                "GITHUB_REPOSITORY must be owner/name, got {repo:?}"
            )));
        }
        let api = api_url.trim_end_matches('/').to_string();
        let octo = Octocrab::builder()
            .personal_token(token.trim().to_string())
            .base_uri(api.as_str())
            .map_err(|_| BotError::Config(format!("GITHUB_API_URL is not a URL: {api_url:?}")))?
            .set_connect_timeout(Some(Duration::from_secs(15)))
            .set_read_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(|e| BotError::Config(format!("cannot set up the GitHub client: {e}")))?;
        Ok(GitHub {
            octo,
            api,
            repo: repo.to_string(),
            retry,
        })
    }

    /// One request, retried as GitHub asks; the body and `Link` header of
    /// the first success, or a typed failure.
    async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        what: &str,
    ) -> Result<(String, Option<String>), BotError> {
        let mut backoff = self.retry.base;
        for attempt in 1..=self.retry.attempts {
            let sent = match method {
                Method::Get => self.octo._get(url).await,
                Method::Post => self.octo._post(url, body).await,
                Method::Patch => self.octo._patch(url, body).await,
            };
            let resp = match sent {
                Ok(r) => r,
                Err(e) if attempt < self.retry.attempts => {
                    crate::notice!("rpg: {what}: {e}; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff *= 2;
                    continue;
                }
                Err(e) => return Err(BotError::Http(format!("{what}: {e}"))),
            };
            let status = resp.status().as_u16();
            let header = |name: &str| {
                resp.headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let retry_after = header("retry-after").and_then(|v| v.trim().parse::<u64>().ok());
            let remaining = header("x-ratelimit-remaining");
            let reset = header("x-ratelimit-reset").and_then(|v| v.trim().parse::<u64>().ok());
            let link = header("link");
            let text = self.octo.body_to_string(resp).await.unwrap_or_default();
            if (200..300).contains(&status) {
                return Ok((text, link));
            }
            let limited = status == 429
                || (status == 403 && (retry_after.is_some() || remaining.as_deref() == Some("0")));
            let wait = if limited {
                Some(match (retry_after, reset) {
                    (Some(s), _) => Duration::from_secs(s),
                    (None, Some(at)) => Duration::from_secs(at.saturating_sub(now_secs()) + 1),
                    // A secondary limit without headers: GitHub says wait a minute.
                    (None, None) => Duration::from_secs(60),
                })
            } else if status >= 500 {
                Some(retry_after.map(Duration::from_secs).unwrap_or(backoff))
            } else {
                None
            };
            match wait {
                Some(w) if attempt < self.retry.attempts && w <= self.retry.max_wait => {
                    crate::notice!(
                        "rpg: {what}: GitHub answered {status}; retrying in {}s ({attempt}/{})",
                        w.as_secs(),
                        self.retry.attempts - 1
                    );
                    tokio::time::sleep(w + jitter()).await;
                    backoff *= 2;
                }
                Some(w) if limited => {
                    return Err(BotError::RateLimited(format!(
                        "{what}: GitHub's rate limit holds for {}s more; try again later",
                        w.as_secs()
                    )))
                }
                _ => return Err(failure(status, what, &text)),
            }
        }
        Err(BotError::Http(format!(
            "{what}: no answer after {} attempts",
            self.retry.attempts
        )))
    }

    fn repo_url(&self, rest: &str) -> String {
        format!("{}/repos/{}/{rest}", self.api, self.repo)
    }

    /// The bot's earlier comment on `number`: one that starts with
    /// `marker` and was written by a bot account, across every page.
    async fn find_comment(
        &self,
        number: u64,
        marker: &str,
    ) -> Result<Option<(u64, String)>, BotError> {
        let mut url = Some(self.repo_url(&format!("issues/{number}/comments?per_page=100")));
        let mut pages = 0;
        while let Some(u) = url.take() {
            pages += 1;
            if pages > 100 {
                break;
            }
            let (text, link) = self.send(Method::Get, &u, None, "listing comments").await?;
            let comments: Vec<Comment> = serde_json::from_str(&text)
                .map_err(|e| BotError::Http(format!("listing comments: unexpected reply: {e}")))?;
            if let Some(c) = comments.into_iter().find(|c| {
                c.body.as_deref().is_some_and(|b| b.starts_with(marker))
                    && c.user.as_ref().is_some_and(|u| u.is_bot())
            }) {
                return Ok(Some((c.id, c.body.unwrap_or_default())));
            }
            url = link
                .as_deref()
                .and_then(next_link)
                .filter(|n| self.same_api(n));
        }
        Ok(None)
    }

    /// Pagination links must lead back to the API we were pointed at; a
    /// forged header must not send the token elsewhere.
    fn same_api(&self, url: &str) -> bool {
        url.starts_with(&format!("{}/", self.api))
    }

    /// Edit the marker comment on `number`, or create one when `create`;
    /// `None` when there was none and none was to be made.
    pub async fn upsert_comment(
        &self,
        number: u64,
        marker: &str,
        body: &str,
        create: bool,
    ) -> Result<Option<Upsert>, BotError> {
        let payload = serde_json::json!({ "body": body });
        let done = match self.find_comment(number, marker).await? {
            Some((id, old)) if old == body => Upsert::Unchanged(id),
            Some((id, _)) => {
                let url = self.repo_url(&format!("issues/comments/{id}"));
                self.send(Method::Patch, &url, Some(&payload), "editing the comment")
                    .await?;
                Upsert::Updated(id)
            }
            None if !create => return Ok(None),
            None => {
                let url = self.repo_url(&format!("issues/{number}/comments"));
                let (text, _) = self
                    .send(Method::Post, &url, Some(&payload), "creating the comment")
                    .await?;
                let id = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| v["id"].as_u64())
                    .unwrap_or(0);
                Upsert::Created(id)
            }
        };
        Ok(Some(done))
    }
}

/// The requests the bot makes: it reads, creates and edits comments.
#[derive(Debug, Clone, Copy)]
enum Method {
    Get,
    Post,
    Patch,
}

/// The `rel="next"` target of a `Link` header.
fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, rel) = part.split_once(';')?;
        rel.contains("rel=\"next\"").then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Up to 250 ms, so many runners limited together do not retry in step.
fn jitter() -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    Duration::from_millis(u64::from(nanos % 250))
}

/// A clear, one-line reason for a status GitHub will not change its mind on.
fn failure(status: u16, what: &str, body: &str) -> BotError {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v["message"]
                .as_str()
                .map(|m| m.chars().take(200).collect::<String>())
        })
        .unwrap_or_default();
    let hint = match status {
        401 => "the token is missing, expired or invalid",
        403 => "the token may not do this; the workflow needs `issues: write` and `pull-requests: write`",
        404 => "no such repository, issue or comment, or the token cannot see it",
        422 => "GitHub refused the content",
        _ => "unexpected answer",
    };
    let sep = if message.is_empty() { "" } else { ": " };
    BotError::Status {
        status,
        message: format!("{what}: {hint} (HTTP {status}){sep}{message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_links_are_read_from_the_link_header() {
        let h = r#"<https://api.github.com/repositories/1/issues/2/comments?page=2>; rel="next", <https://api.github.com/repositories/1/issues/2/comments?page=5>; rel="last""#;
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repositories/1/issues/2/comments?page=2")
        );
        assert_eq!(next_link(r#"<https://x/?page=1>; rel="prev""#), None);
    }

    #[test]
    fn repository_names_are_checked() {
        assert!(valid_repository("psf/requests"));
        assert!(valid_repository("a-b/c.d_e"));
        for bad in ["psf", "a/b/c", "../x", "a/..", "a b/c", "a/c?x=1", "/x"] {
            assert!(!valid_repository(bad), "{bad}");
        }
    }
}
