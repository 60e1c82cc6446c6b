//! Settings, from two files of different trust. Every field has a
//! default, so both files are optional.
//!
//! - `.rpg/config.toml` is committed with the repository, so it is written
//!   by whoever wrote the repository. It may set only data keys: what to
//!   index, limits, thresholds, the model's *name*. It may ask for the
//!   model lifter, but only the user's own config or a flag spends the
//!   user's key on it; and every limit, from either file, is clamped to
//!   rpg's own [`maxima`].
//! - The user's own `$XDG_CONFIG_HOME/rpg/config.toml` (else
//!   `~/.config/rpg/config.toml`) may set everything, including the keys
//!   that load native code, read files outside the repository, or decide
//!   where source code and credentials are sent ([`USER_ONLY`]). The same
//!   keys in the repository's file are ignored with a notice.

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use std::path::{Path, PathBuf};

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
    /// The repository's own file set `lifter = "llm"`, which is a request,
    /// not a choice: see [`Config::load`].
    #[serde(skip)]
    pub repository_asks_for_model: bool,
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
/// cache directory `rpg embed --install` fills.
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
                // Built, bundled and declaration-only JavaScript/TypeScript;
                // `.d.ts` files repeat the API of the code beside them.
                "**/*.min.js",
                "**/*.bundle.js",
                "**/*.d.ts",
                "**/*.d.mts",
                "**/*.d.cts",
                "**/{dist,build,coverage}/**/*.{js,jsx,mjs,cjs,ts,tsx,mts,cts}",
                // Generated C# and vendored Swift; globbed by extension so
                // the other languages' files there keep their meaning.
                "**/*.{Designer,designer,g,g.i}.cs",
                "**/obj/**/*.cs",
                "**/{Pods,Carthage}/**/*.swift",
                ".rpg/**",
            ]
            .map(String::from)
            .to_vec(),
            extra_exclude: Vec::new(),
        }
    }
}

impl IndexConfig {
    /// A digest of what decides which files are indexed, or `None` for the
    /// defaults (so a graph made with them records nothing).
    pub fn digest(&self) -> Option<String> {
        let default = IndexConfig::default();
        let same = self.exclude == default.exclude
            && self.extra_exclude.is_empty()
            && self.max_file_bytes == default.max_file_bytes;
        if same {
            return None;
        }
        let mut text = format!("max_file_bytes={}\n", self.max_file_bytes);
        for (list, globs) in [
            ("exclude", &self.exclude),
            ("extra_exclude", &self.extra_exclude),
        ] {
            for g in globs.iter() {
                text.push_str(&format!("{list}={}\n", g.escape_debug()));
            }
        }
        Some(crate::text::prefix(&crate::text::digest(text.as_bytes()), 16).to_string())
    }
}

/// Keys (`section.key`) only the user may set: they pick native code to
/// load, files to read, or where code and the API key go.
pub const USER_ONLY: &[&str] = &[
    "embed.runtime",
    "embed.model",
    "embed.tokenizer",
    "lift.base_url",
];

/// The greatest value any config may give each limit: a repository's file
/// asking for four billion retries or a timeout of centuries gets these.
pub mod maxima {
    pub const MAX_RETRIES: u32 = 10;
    pub const TIMEOUT_SECS: u64 = 600;
    pub const MAX_RETRY_AFTER_SECS: u64 = 300;
    pub const CONCURRENCY: usize = 32;
    pub const BATCH_TOKENS: usize = 100_000;
    pub const ROUNDS: u32 = 5;
    pub const MAX_FILE_BYTES: u64 = 16 << 20;
    pub const EMBED_TOKENS: usize = 8192;
}

impl Config {
    /// Every limit brought within [`maxima`], and counts of at least one.
    fn clamped(mut self) -> Config {
        let l = &mut self.lift;
        l.max_retries = l.max_retries.min(maxima::MAX_RETRIES);
        l.timeout_secs = l.timeout_secs.clamp(1, maxima::TIMEOUT_SECS);
        l.max_retry_after_secs = l.max_retry_after_secs.min(maxima::MAX_RETRY_AFTER_SECS);
        l.concurrency = l.concurrency.clamp(1, maxima::CONCURRENCY);
        l.batch_tokens = l.batch_tokens.clamp(1, maxima::BATCH_TOKENS);
        l.rounds = l.rounds.min(maxima::ROUNDS);
        self.index.max_file_bytes = self.index.max_file_bytes.min(maxima::MAX_FILE_BYTES);
        self.embed.max_tokens = self
            .embed
            .max_tokens
            .map(|t| t.clamp(1, maxima::EMBED_TOKENS));
        self
    }
}

/// The user's own config file, when a home or config directory is known.
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some(base.join("rpg").join("config.toml"))
}

impl Config {
    /// The repository's `.rpg/config.toml` under `root`, limited to data
    /// keys, over the user's own config file. Missing files mean defaults.
    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let user = match user_config_path() {
            Some(p) => read_table(&p, Source::User)?.map(|t| absolutize(t, &p)),
            None => None,
        };
        let repo_path = root.join(".rpg").join("config.toml");
        let mut asks_for_model = false;
        let repo = read_table(&repo_path, Source::Repository)?.map(|t| {
            let (kept, refused) = without_user_only(t);
            announce_refused(&refused);
            let (kept, asked) = without_lifter_choice(kept);
            asks_for_model = asked == Some(LifterKind::Llm);
            kept
        });
        let mut merged = user.unwrap_or_default();
        for (section, value) in repo.unwrap_or_default() {
            match (merged.get_mut(&section), value) {
                (Some(toml::Value::Table(mine)), toml::Value::Table(theirs)) => mine.extend(theirs),
                (_, value) => {
                    merged.insert(section, value);
                }
            }
        }
        let mut config: Config =
            toml::Value::Table(merged)
                .try_into()
                .map_err(|e: toml::de::Error| ConfigError::Invalid {
                    path: repo_path.display().to_string(),
                    message: e.message().to_string(),
                })?;
        config.repository_asks_for_model = asks_for_model;
        Ok(config.clamped())
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

/// Where a config file comes from, which decides how it is opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The user's own file, which may be a link (dotfile managers make them).
    User,
    /// `.rpg/config.toml`, which a commit wrote: never followed if it is a
    /// link, and ignored with a notice when it cannot be read as a file.
    Repository,
}

/// A TOML file as a table; `None` when it does not exist.
fn read_table(path: &Path, source: Source) -> Result<Option<toml::Table>, ConfigError> {
    let invalid = |message: String| ConfigError::Invalid {
        path: path.display().to_string(),
        message,
    };
    let read = match source {
        Source::User => std::fs::File::open(path).and_then(|f| {
            use std::io::Read;
            let mut text = String::new();
            f.take(crate::files::cap::CONFIG + 1)
                .read_to_string(&mut text)?;
            match text.len() as u64 > crate::files::cap::CONFIG {
                true => Err(std::io::Error::other("larger than 1 MB")),
                false => Ok(Some(text)),
            }
        }),
        Source::Repository => crate::files::read_text_capped(path, crate::files::cap::CONFIG),
    };
    let text = match read {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if source == Source::Repository => {
            crate::notice!("rpg: notice: {} not read: {e}", path.display());
            return Ok(None);
        }
        Err(e) => return Err(invalid(e.to_string())),
    };
    let table: toml::Table = toml::from_str(&text).map_err(|e| invalid(e.message().to_string()))?;
    // Check the file on its own, so an error names the file that has it.
    toml::Value::Table(table.clone())
        .try_into::<Config>()
        .map_err(|e| invalid(e.message().to_string()))?;
    Ok(Some(table))
}

/// `table` without its `[lift] lifter`, and what that asked for. A
/// repository may ask for the model lifter; only the user's own config or
/// a flag spends the user's key on it.
fn without_lifter_choice(mut table: toml::Table) -> (toml::Table, Option<LifterKind>) {
    let asked = match table.get_mut("lift") {
        Some(toml::Value::Table(t)) => t.remove("lifter"),
        _ => None,
    };
    let asked = asked.and_then(|v| v.try_into::<LifterKind>().ok());
    (table, asked)
}

/// `table` without the [`USER_ONLY`] keys, and the keys it had.
fn without_user_only(mut table: toml::Table) -> (toml::Table, Vec<&'static str>) {
    let mut refused = Vec::new();
    for key in USER_ONLY {
        let (section, name) = key.split_once('.').unwrap_or((key, ""));
        if let Some(toml::Value::Table(t)) = table.get_mut(section) {
            if t.remove(name).is_some() {
                refused.push(*key);
            }
        }
    }
    (table, refused)
}

/// Paths in the user's file are relative to that file, never to whatever
/// repository rpg happens to run in.
fn absolutize(mut table: toml::Table, file: &Path) -> toml::Table {
    let dir = file.parent().unwrap_or(Path::new("/"));
    if let Some(toml::Value::Table(embed)) = table.get_mut("embed") {
        for key in ["runtime", "model", "tokenizer"] {
            if let Some(toml::Value::String(p)) = embed.get_mut(key) {
                *p = dir.join(&*p).display().to_string();
            }
        }
    }
    table
}

/// One notice per refused key per process: the hook and query paths load
/// the config more than once.
fn announce_refused(keys: &[&'static str]) {
    static SAID: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    for key in keys {
        if !said.contains(key) {
            said.push(key);
            let (section, name) = key.split_once('.').unwrap_or((key, ""));
            crate::notice!(
                "rpg: notice: ignoring [{section}] {name} in .rpg/config.toml: only your own config ({}), the environment or flags may set it",
                user_config_path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "~/.config/rpg/config.toml".into())
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_csharp_and_vendored_swift_are_excluded_by_default() {
        let globs = Config::default().excluder().unwrap();
        for p in [
            "src/Forms/Main.Designer.cs",
            "src/Api.g.cs",
            "src/App/obj/Debug/AssemblyInfo.cs",
            "Pods/Alamofire/Source/Session.swift",
            "Carthage/Checkouts/X/Y.swift",
        ] {
            assert!(globs.is_match(p), "{p}");
        }
        for p in [
            "src/Main.cs",
            "Sources/App/Pods.swift",
            "Pods/A/a.h",
            "obj/x.py",
        ] {
            assert!(!globs.is_match(p), "{p}");
        }
    }

    #[test]
    fn the_repository_file_loses_every_user_only_key_and_keeps_data_keys() {
        let table: toml::Table = toml::from_str(
            "[embed]\nruntime = \"x.so\"\nmodel = \"m\"\ntokenizer = \"t\"\nmax_tokens = 64\n[lift]\nbase_url = \"http://evil\"\nmodel = \"small\"\n[index]\nmax_file_bytes = 10\n",
        )
        .unwrap();
        let (kept, refused) = without_user_only(table);
        assert_eq!(refused, USER_ONLY);
        let c: Config = toml::Value::Table(kept).try_into().unwrap();
        assert_eq!(c.embed.runtime, None);
        assert_eq!(c.embed.model, None);
        assert_eq!(c.embed.max_tokens, Some(64));
        assert_eq!(c.lift.base_url, None);
        assert_eq!(c.lift.model.as_deref(), Some("small"));
        assert_eq!(c.index.max_file_bytes, 10);
    }
}
