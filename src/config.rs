//! `.rpg/config.toml`: the committed settings. Every field has a default, so
//! the file is optional.

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub index: IndexConfig,
    pub embed: EmbedConfig,
    pub lift: LiftConfig,
}

/// Which lifter writes features, and how a model is used when one is
/// configured. The API key never lives here: it comes from
/// `OPENAI_API_KEY`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LiftConfig {
    pub lifter: LifterKind,
    /// Model name; `RPG_MODEL` overrides it.
    pub model: Option<String>,
    /// An OpenAI-compatible endpoint; `OPENAI_BASE_URL` overrides it.
    pub base_url: Option<String>,
    /// Estimated prompt tokens per lifting request.
    pub batch_tokens: usize,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Seconds before one request is abandoned (and retried).
    pub timeout_secs: u64,
    /// Retries of one request on 429, 5xx, timeouts and lost connections.
    pub max_retries: u32,
    /// Longest `Retry-After` waited out, in seconds; a longer one fails
    /// the request.
    pub max_retry_after_secs: u64,
    /// Rounds of re-asking for entities a reply left out.
    pub rounds: u32,
    /// Use the model for domain discovery and file assignment at init.
    pub hierarchy: bool,
    /// Use the model to route insertions during updates.
    pub routing: bool,
    /// Ask the model about modifications whose drift is ambiguous.
    pub drift: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LifterKind {
    #[default]
    Offline,
    Llm,
}

impl Default for LiftConfig {
    fn default() -> Self {
        LiftConfig {
            lifter: LifterKind::Offline,
            model: None,
            base_url: None,
            batch_tokens: 6000,
            concurrency: 4,
            timeout_secs: 120,
            max_retries: 5,
            max_retry_after_secs: 60,
            rounds: 2,
            hierarchy: true,
            routing: true,
            drift: true,
        }
    }
}

/// Where the local embedding model lives. Unset paths fall back to the
/// cache directory `scripts/setup-embeddings.sh` fills.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// An ONNX sentence-embedding model (inputs `input_ids`,
    /// `attention_mask` and optionally `token_type_ids`; output per-token
    /// states or a pooled vector).
    pub model: Option<String>,
    /// The model's Hugging Face `tokenizer.json`.
    pub tokenizer: Option<String>,
    /// `libonnxruntime.so`; `ORT_DYLIB_PATH` overrides it.
    pub runtime: Option<String>,
    /// Tokens per input; longer texts are cut.
    pub max_tokens: Option<usize>,
    /// What stands for an entity: `summary` (name, features, docstring,
    /// signature) or `code` (name and source body).
    pub text: EmbedText,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedText {
    #[default]
    Summary,
    Code,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// Files larger than this many bytes are skipped.
    pub max_file_bytes: u64,
    /// Globs of paths never indexed (vendored or generated code), matched
    /// against repository-relative paths.
    pub exclude: Vec<String>,
    /// Extra globs added to `exclude`, so a user can extend the defaults
    /// without restating them.
    pub extra_exclude: Vec<String>,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            max_file_bytes: 1024 * 1024,
            exclude: [
                "**/vendor/**",
                "**/vendored/**",
                "**/_vendor/**",
                "**/third_party/**",
                "**/third-party/**",
                "**/node_modules/**",
                "**/site-packages/**",
                "**/target/**",
                "**/build/lib/**",
                "**/*_pb2.py",
                "**/*_pb2_grpc.py",
                "**/*.pb.rs",
                "**/*.generated.rs",
                ".rpg/**",
            ]
            .map(String::from)
            .to_vec(),
            extra_exclude: Vec::new(),
        }
    }
}

impl Config {
    /// Load `.rpg/config.toml` under `root`; a missing file means defaults.
    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let path = root.join(".rpg").join("config.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(e) => {
                return Err(ConfigError::Invalid {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })
            }
        };
        toml::from_str(&text).map_err(|e| ConfigError::Invalid {
            path: path.display().to_string(),
            message: e.message().to_string(),
        })
    }

    pub fn excluder(&self) -> Result<GlobSet, ConfigError> {
        let mut builder = GlobSetBuilder::new();
        for pattern in self.index.exclude.iter().chain(&self.index.extra_exclude) {
            let glob = Glob::new(pattern).map_err(|e| ConfigError::Invalid {
                path: ".rpg/config.toml".into(),
                message: format!("bad exclude glob '{pattern}': {e}"),
            })?;
            builder.add(glob);
        }
        builder.build().map_err(|e| ConfigError::Invalid {
            path: ".rpg/config.toml".into(),
            message: e.to_string(),
        })
    }
}
