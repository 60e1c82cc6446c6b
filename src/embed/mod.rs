//! Local sentence embeddings: ONNX Runtime through `ort` (the library is
//! loaded at run time, so nothing is downloaded at build time), a Hugging
//! Face tokenizer, mean pooling over the attention mask and L2
//! normalisation. Absent files are not an error: callers fall back to
//! lexical search.

pub mod install;
pub mod vectors;

use crate::config::EmbedConfig;
pub use crate::config::EmbedText;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::Tensor;
use std::path::{Path, PathBuf};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("cannot load the ONNX Runtime library {path}: {reason}")]
    Runtime { path: PathBuf, reason: String },
    #[error("cannot load the embedding model {path}: {reason}")]
    Model { path: PathBuf, reason: String },
    #[error("cannot load the tokenizer {path}: {reason}")]
    Tokenizer { path: PathBuf, reason: String },
    #[error("{path} is set in your rpg config but does not exist")]
    Missing { path: PathBuf },
    #[error("the embedding model is not installed (`rpg embed --install`)")]
    NotInstalled,
    #[error("embedding failed: {0}")]
    Inference(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    #[error("the vector store {path}: {reason}")]
    Vectors { path: PathBuf, reason: String },
}

/// The three files an embedder needs.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    pub runtime: PathBuf,
    pub model: PathBuf,
    pub tokenizer: PathBuf,
    pub max_tokens: usize,
    pub text: EmbedText,
}

/// Where `rpg embed --install` (and scripts/setup-embeddings.sh) install.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("RPG_EMBED_DIR") {
        return Some(PathBuf::from(d));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("rpg").join("embed"))
}

/// all-MiniLM-L6-v2 was trained on 256-token inputs.
const DEFAULT_MAX_TOKENS: usize = 256;

impl ModelFiles {
    /// The configured files, else the cache directory's. `Ok(None)` when
    /// nothing is installed; an explicitly configured file that is missing
    /// is an error, since the user asked for it.
    pub fn find(cfg: &EmbedConfig, root: &Path) -> Result<Option<ModelFiles>, EmbedError> {
        let cache = cache_dir();
        let pick = |configured: &Option<String>,
                    default: Option<PathBuf>|
         -> Result<Option<PathBuf>, EmbedError> {
            match configured {
                Some(p) => {
                    let p = root.join(p);
                    if p.is_file() {
                        Ok(Some(p))
                    } else {
                        Err(EmbedError::Missing { path: p })
                    }
                }
                None => Ok(default.filter(|p| p.is_file())),
            }
        };
        let runtime = match std::env::var_os("ORT_DYLIB_PATH") {
            Some(p) => Some(PathBuf::from(p)).filter(|p| p.is_file()),
            None => pick(
                &cfg.runtime,
                cache.as_ref().map(|c| c.join("libonnxruntime.so")),
            )?,
        };
        let model_dir = cache.map(|c| c.join("all-MiniLM-L6-v2"));
        let model = pick(&cfg.model, model_dir.as_ref().map(|d| d.join("model.onnx")))?;
        let tokenizer = pick(&cfg.tokenizer, model_dir.map(|d| d.join("tokenizer.json")))?;
        Ok(match (runtime, model, tokenizer) {
            (Some(runtime), Some(model), Some(tokenizer)) => Some(ModelFiles {
                runtime,
                model,
                tokenizer,
                max_tokens: cfg.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).clamp(8, 8192),
                text: cfg.text,
            }),
            _ => None,
        })
    }
}

/// What a model is loaded for, which decides how much to optimise it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Embedding many entities.
    Bulk,
    /// Embedding one query, and perhaps a few changed entities.
    Query,
}

/// A loaded model, ready to embed batches of text.
pub struct Embedder {
    session: Session,
    tokenizer: Tokenizer,
    /// Names vectors in the store: the model's content hash, the token
    /// limit and what is embedded, so a different model or setting never
    /// reuses them.
    pub id: String,
    pub text: EmbedText,
    inputs: Vec<String>,
    output: String,
    model: PathBuf,
}

impl Embedder {
    pub fn load(files: &ModelFiles, use_: Use) -> Result<Embedder, EmbedError> {
        let runtime_err = |reason: String| EmbedError::Runtime {
            path: files.runtime.clone(),
            reason,
        };
        let model_err = |reason: String| EmbedError::Model {
            path: files.model.clone(),
            reason,
        };
        let t = std::time::Instant::now();
        let env = environment(&files.runtime).map_err(runtime_err)?;
        crate::timing("embed runtime", t);
        let bytes = std::fs::read(&files.model).map_err(|e| model_err(e.to_string()))?;
        let digest = crate::store::digest(&bytes)[..16].to_string();
        crate::timing("embed model read", t);
        let builder = Session::builder(env)
            .map_err(|e| model_err(e.to_string()))?
            .with_intra_threads(2)
            .map_err(|e| model_err(e.to_string()))?;
        // Optimising the graph takes ~0.3 s: worth it for thousands of
        // inputs, not for the one query of a `locate`.
        let level = match use_ {
            Use::Bulk => GraphOptimizationLevel::Level3,
            Use::Query => GraphOptimizationLevel::Disable,
        };
        let mut builder = builder
            .with_optimization_level(level)
            .map_err(|e| model_err(e.to_string()))?;
        let session = builder
            .commit_from_memory(&bytes)
            .map_err(|e| model_err(e.to_string()))?;
        crate::timing("embed session", t);
        let inputs: Vec<String> = session
            .inputs()
            .iter()
            .map(|i| i.name().to_string())
            .collect();
        for name in &inputs {
            if !matches!(
                name.as_str(),
                "input_ids" | "attention_mask" | "token_type_ids"
            ) {
                return Err(model_err(format!(
                    "unexpected input {name:?}; a sentence-embedding model takes input_ids, attention_mask and token_type_ids"
                )));
            }
        }
        if !inputs.iter().any(|i| i == "input_ids") {
            return Err(model_err("the model has no input_ids input".into()));
        }
        let outputs: Vec<String> = session
            .outputs()
            .iter()
            .map(|o| o.name().to_string())
            .collect();
        let output = [
            "sentence_embedding",
            "last_hidden_state",
            "token_embeddings",
        ]
        .iter()
        .find(|n| outputs.iter().any(|o| o == *n))
        .map(|n| n.to_string())
        .or_else(|| outputs.first().cloned())
        .ok_or_else(|| model_err("the model has no outputs".into()))?;
        let mut tokenizer =
            Tokenizer::from_file(&files.tokenizer).map_err(|e| EmbedError::Tokenizer {
                path: files.tokenizer.clone(),
                reason: e.to_string(),
            })?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: files.max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer {
                path: files.tokenizer.clone(),
                reason: e.to_string(),
            })?;
        crate::timing("embed tokenizer", t);
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        Ok(Embedder {
            session,
            tokenizer,
            id: match files.text {
                EmbedText::Summary => format!("{digest}-t{}", files.max_tokens),
                EmbedText::Code => format!("{digest}-t{}-code", files.max_tokens),
            },
            text: files.text,
            inputs,
            output,
            model: files.model.clone(),
        })
    }

    /// Unit vectors for `texts`, in order.
    pub fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let enc = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Inference(format!("tokenizing: {e}")))?;
        let n = enc.len();
        let len = enc
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(0)
            .max(1);
        let column = |f: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> Vec<i64> {
            let mut out = vec![0i64; n * len];
            for (row, e) in enc.iter().enumerate() {
                for (i, v) in f(e).iter().enumerate().take(len) {
                    out[row * len + i] = i64::from(*v);
                }
            }
            out
        };
        let ids = column(&|e| e.get_ids());
        let mask = column(&|e| e.get_attention_mask());
        let types = column(&|e| e.get_type_ids());
        let inference = |e: ort::Error| EmbedError::Inference(e.to_string());
        let mut feed: Vec<(String, ort::session::SessionInputValue<'_>)> = Vec::new();
        for name in &self.inputs {
            let data = match name.as_str() {
                "input_ids" => ids.clone(),
                "attention_mask" => mask.clone(),
                _ => types.clone(),
            };
            let t = Tensor::from_array(([n, len], data)).map_err(inference)?;
            feed.push((name.clone(), t.into()));
        }
        let outputs = self.session.run(feed).map_err(inference)?;
        let value = outputs.get(&self.output).ok_or_else(|| {
            EmbedError::Inference(format!(
                "{} gave no output {:?}",
                self.model.display(),
                self.output
            ))
        })?;
        let (shape, data) = value.try_extract_tensor::<f32>().map_err(inference)?;
        let dims: Vec<usize> = shape.iter().map(|d| *d as usize).collect();
        match dims.as_slice() {
            [b, s, d] if *b == n && *s == len => Ok(mean_pool(data, n, len, *d, &mask)),
            [b, d] if *b == n => Ok(data.chunks(*d).map(normalised).collect()),
            other => Err(EmbedError::Inference(format!(
                "{} output {:?} has shape {other:?}; expected [batch, tokens, dim] or [batch, dim]",
                self.model.display(),
                self.output
            ))),
        }
    }
}

/// ONNX Runtime allows one environment per process; every embedder shares
/// it. The first library loaded stays loaded.
fn environment(runtime: &Path) -> Result<&'static ort::environment::Environment, String> {
    static ENV: std::sync::OnceLock<ort::environment::Environment> = std::sync::OnceLock::new();
    static INIT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INIT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(env) = ENV.get() {
        return Ok(env);
    }
    let env = ort::init_from(runtime)
        .map_err(|e| e.to_string())?
        .with_name("rpg")
        .build()
        .map_err(|e| e.to_string())?;
    Ok(ENV.get_or_init(|| env))
}

/// Mean of each row's token states where `mask` is 1, L2-normalised.
pub fn mean_pool(
    hidden: &[f32],
    batch: usize,
    seq: usize,
    dim: usize,
    mask: &[i64],
) -> Vec<Vec<f32>> {
    (0..batch)
        .map(|b| {
            let mut sum = vec![0f32; dim];
            let mut count = 0f32;
            for t in 0..seq {
                if mask[b * seq + t] == 0 {
                    continue;
                }
                count += 1.0;
                let row = &hidden[(b * seq + t) * dim..(b * seq + t + 1) * dim];
                for (s, x) in sum.iter_mut().zip(row) {
                    *s += x;
                }
            }
            let count = count.max(1e-9);
            let mean: Vec<f32> = sum.into_iter().map(|s| s / count).collect();
            normalised(&mean)
        })
        .collect()
}

fn normalised(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter().map(|x| x / norm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_averages_only_unmasked_tokens_then_normalises() {
        // Two rows of three tokens, dim 2; the second row's last token is padding.
        let hidden = [
            1.0, 0.0, 3.0, 0.0, 2.0, 0.0, //
            0.0, 3.0, 0.0, 1.0, 100.0, 100.0,
        ];
        let mask = [1, 1, 1, 1, 1, 0];
        let v = mean_pool(&hidden, 2, 3, 2, &mask);
        assert_eq!(v[0], vec![1.0, 0.0]);
        assert_eq!(v[1], vec![0.0, 1.0]);
        let w = mean_pool(&[3.0, 4.0], 1, 1, 2, &[1]);
        assert!((w[0][0] - 0.6).abs() < 1e-6 && (w[0][1] - 0.8).abs() < 1e-6);
    }
}
