//! The chat client: async-openai against any OpenAI-compatible endpoint,
//! with a retry policy that honours `Retry-After` and backs off with jitter
//! on 429, 5xx, timeouts and lost connections.

use async_openai::config::OpenAIConfig;
use async_openai::error::OpenAIError;
use async_openai::middleware::{HttpRequestFactory, ReqwestService};
use async_openai::types::chat::{
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestMessage,
    ChatCompletionRequestSystemMessage, ChatCompletionRequestUserMessage,
    CreateChatCompletionRequest, ResponseFormat, ResponseFormatJsonSchema,
};
use async_openai::Client;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Where and how to reach the model.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    pub timeout: Duration,
    pub max_retries: u32,
    pub max_retry_after: Duration,
}

/// Why a call produced no reply.
#[derive(Debug, Clone)]
pub enum CallError {
    /// No retry can fix it: a bad key, an unknown model, a refused request.
    Refused { status: u16, message: String },
    /// Retries ran out, or the reply was not a chat completion.
    Failed(String),
}

/// Token counts a reply reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt: u64,
    pub completion: u64,
}

pub struct Reply {
    pub content: String,
    pub usage: Usage,
}

/// One chat turn the caller keeps for a format-correction retry.
pub enum Turn {
    User(String),
    Assistant(String),
}

pub struct Chat {
    client: Client<OpenAIConfig>,
    pub endpoint: Endpoint,
    retries: Arc<AtomicU64>,
}

impl Chat {
    pub fn new(endpoint: Endpoint) -> Result<Chat, String> {
        // reqwest is built without a TLS provider of its own; ring is the
        // one this binary links (main installs it too; this keeps library
        // callers from panicking).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(endpoint.timeout)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        let retries = Arc::new(AtomicU64::new(0));
        let policy = Backoff {
            max_retries: endpoint.max_retries,
            max_retry_after: endpoint.max_retry_after,
            attempt: 0,
            counter: retries.clone(),
        };
        let service = tower::ServiceBuilder::new()
            .layer(tower::retry::RetryLayer::new(policy))
            .service(ReqwestService::new(http));
        let mut config = OpenAIConfig::new().with_api_base(endpoint.base_url.trim_end_matches('/'));
        if let Some(key) = &endpoint.api_key {
            config = config.with_api_key(key);
        }
        let client = Client::with_config(config).with_http_service(service);
        Ok(Chat {
            client,
            endpoint,
            retries,
        })
    }

    /// Servers echo credentials in error messages; ours never reach a
    /// terminal or a log.
    fn redact(&self, e: CallError) -> CallError {
        let Some(key) = self.endpoint.api_key.as_deref().filter(|k| k.len() >= 4) else {
            return e;
        };
        match e {
            CallError::Refused { status, message } => CallError::Refused {
                status,
                message: message.replace(key, "[redacted]"),
            },
            CallError::Failed(m) => CallError::Failed(m.replace(key, "[redacted]")),
        }
    }

    /// Retries made so far, over all calls.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Ask for a JSON reply under a strict schema.
    pub async fn ask(
        &self,
        system: &str,
        turns: &[Turn],
        schema_name: &str,
        schema: serde_json::Value,
        max_tokens: u32,
    ) -> Result<Reply, CallError> {
        let mut messages = vec![ChatCompletionRequestMessage::System(
            ChatCompletionRequestSystemMessage::from(system),
        )];
        for t in turns {
            messages.push(match t {
                Turn::User(s) => ChatCompletionRequestMessage::User(
                    ChatCompletionRequestUserMessage::from(s.as_str()),
                ),
                Turn::Assistant(s) => ChatCompletionRequestMessage::Assistant(
                    ChatCompletionRequestAssistantMessage::from(s.as_str()),
                ),
            });
        }
        let request = CreateChatCompletionRequest {
            model: self.endpoint.model.clone(),
            messages,
            temperature: Some(0.0),
            max_completion_tokens: Some(max_tokens),
            response_format: Some(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    description: None,
                    name: schema_name.to_string(),
                    schema,
                    strict: Some(true),
                },
            }),
            ..Default::default()
        };
        let response = self
            .client
            .chat()
            .create(request)
            .await
            .map_err(|e| self.redact(classify(e)))?;
        let usage = response
            .usage
            .map(|u| Usage {
                prompt: u64::from(u.prompt_tokens),
                completion: u64::from(u.completion_tokens),
            })
            .unwrap_or_default();
        let content = response
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .unwrap_or_default();
        Ok(Reply { content, usage })
    }
}

fn classify(e: OpenAIError) -> CallError {
    match e {
        OpenAIError::ApiError(api) => {
            let status = api.status_code.as_u16();
            let message = one_line(&api.api_error.message);
            if matches!(status, 400 | 401 | 403 | 404 | 422) {
                CallError::Refused { status, message }
            } else {
                CallError::Failed(format!("HTTP {status}: {message}"))
            }
        }
        OpenAIError::Reqwest(e) if e.is_timeout() => CallError::Failed("timed out".into()),
        OpenAIError::Reqwest(e) if e.is_connect() => {
            CallError::Failed("cannot connect to the model API".into())
        }
        other => CallError::Failed(one_line(&other.to_string())),
    }
}

/// A server's message on one line, cut short: it ends up in a terminal.
fn one_line(s: &str) -> String {
    let flat: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    flat.trim().to_string()
}

/// Retry policy: `Retry-After` (or `retry-after-ms`) when the server gives
/// one and it is not too long, else exponential backoff from 0.5 s with
/// jitter, capped at 20 s.
#[derive(Clone)]
struct Backoff {
    max_retries: u32,
    max_retry_after: Duration,
    attempt: u32,
    counter: Arc<AtomicU64>,
}

impl Backoff {
    fn delay(&self, server: Option<Duration>) -> Duration {
        if let Some(d) = server {
            return d;
        }
        let base = Duration::from_millis(500).saturating_mul(1 << self.attempt.min(6));
        let base = base.min(Duration::from_secs(20));
        // Jitter spreads concurrent retries; it only moves timing, never
        // what ends up in the graph.
        let n = self.counter.load(Ordering::Relaxed) ^ u64::from(self.attempt);
        let mix = n
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(17)
            .wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let frac = 0.5 + (mix % 1000) as f64 / 2000.0;
        base.mul_f64(frac)
    }
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    get("retry-after")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.max(0.0)))
}

type Wait = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

impl tower::retry::Policy<HttpRequestFactory, reqwest::Response, OpenAIError> for Backoff {
    type Future = Wait;

    fn retry(
        &mut self,
        _req: &mut HttpRequestFactory,
        result: &mut Result<reqwest::Response, OpenAIError>,
    ) -> Option<Self::Future> {
        if self.attempt >= self.max_retries {
            return None;
        }
        let server = match result {
            Ok(r) if r.status().as_u16() == 429 || r.status().is_server_error() => {
                let wait = retry_after(r.headers());
                if wait.is_some_and(|w| w > self.max_retry_after) {
                    // Waiting that long is the caller's call, not ours.
                    return None;
                }
                wait
            }
            Ok(_) => return None,
            Err(OpenAIError::Reqwest(e)) if e.is_timeout() || e.is_connect() => None,
            Err(_) => return None,
        };
        let delay = self.delay(server);
        self.attempt += 1;
        self.counter.fetch_add(1, Ordering::Relaxed);
        Some(Box::pin(tokio::time::sleep(delay)))
    }

    fn clone_request(&mut self, req: &HttpRequestFactory) -> Option<HttpRequestFactory> {
        Some(req.clone())
    }
}
