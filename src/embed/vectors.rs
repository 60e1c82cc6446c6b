//! Entity vectors, kept beside the store in `.rpg/vectors` (a sled
//! database of its own, so rebuilding the store from a pulled snapshot or a
//! re-init never throws away what took minutes to compute).
//!
//! Keys, each under the embedder's id so models never mix:
//! - `c/<model>/<sha256 of text>`: the cache; a text is embedded once.
//! - `e/<model>/<entity id>`: the vector of each current entity.
//! - `f/<model>/<path>`: which blob (and lifter) a file's vectors reflect,
//!   and its entity ids, so a sync touches only changed files.

use super::{EmbedError, EmbedText, Embedder};
use crate::git::Repo;
use crate::graph::Entity;
use crate::parse::Kind;
use crate::progress::Progress;
use crate::store::{digest, RpgDir, Store};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// Inputs per model call: 8–16 is the sweet spot on two cores; larger
/// batches pad more and use far more memory.
const BATCH: usize = 16;

/// What a sync will embed and record (see [`Vectors::plan`]).
pub struct Plan {
    started: std::time::Instant,
    model: String,
    known: BTreeMap<String, FileRec>,
    gone: Vec<String>,
    per_file: Vec<Changed>,
    /// Text digests no vector is cached for, with their texts.
    todo: BTreeMap<String, String>,
    report: SyncReport,
}

/// A changed file: its path, its stamp, and each entity's id and text
/// digest.
struct Changed {
    path: String,
    stamp: String,
    ents: Vec<(String, String)>,
}

fn cache_key(model: &str, digest: &str) -> String {
    format!("c/{model}/{digest}")
}

pub struct Vectors {
    db: sled::Db,
    path: PathBuf,
}

#[derive(Serialize, Deserialize)]
struct FileRec {
    stamp: String,
    ids: Vec<String>,
}

/// What a sync did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncReport {
    pub model: String,
    pub files_changed: usize,
    pub entities: usize,
    pub embedded: usize,
    pub cached: usize,
    pub seconds: f64,
}

/// What an entity is embedded as: its name in words, what it does, and
/// what its docstring and signature say. Short, and in the words issues
/// use, unlike code bodies.
pub fn text_of(e: &Entity) -> String {
    let mut words = crate::text::words::split_identifier(&e.qualname).join(" ");
    let stem = crate::text::file_name(&e.path);
    let stem = stem.split('.').next().unwrap_or(stem);
    words.push_str(" in ");
    words.push_str(&crate::text::words::split_identifier(stem).join(" "));
    let mut out = format!("{words}: {}", e.features.join("; "));
    if !e.doc.is_empty() {
        out.push_str(". ");
        out.push_str(&e.doc);
    }
    if !e.signature.is_empty() {
        out.push_str(". ");
        out.push_str(&e.signature);
    }
    out
}

/// An entity as its name followed by its source lines, for
/// [`EmbedText::Code`]. The tokenizer keeps the first tokens; the cut here
/// only spares it from reading whole modules.
pub fn code_text_of(e: &Entity, source: &str) -> String {
    let mut out = crate::text::words::split_identifier(&e.qualname).join(" ");
    out.push_str(":\n");
    let start = e.start_line.saturating_sub(1) as usize;
    let span = e.end_line.saturating_sub(e.start_line) as usize + 1;
    for line in source.lines().skip(start).take(span) {
        if out.len() > 4000 {
            break;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_bytes(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

impl Vectors {
    pub fn path(rpg: &RpgDir) -> PathBuf {
        rpg.path().join("vectors")
    }

    pub fn exists(rpg: &RpgDir) -> bool {
        crate::files::real_dir(&Self::path(rpg)).is_ok_and(|e| e == crate::files::Entry::Dir)
    }

    pub fn open(rpg: &RpgDir) -> Result<Vectors, EmbedError> {
        let path = Self::path(rpg);
        crate::files::check_store_dir(&path).map_err(|e| EmbedError::Vectors {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        let db = sled::Config::new()
            .path(&path)
            .open()
            .map_err(|e| EmbedError::Vectors {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        Ok(Vectors { db, path })
    }

    fn err(&self) -> impl Fn(sled::Error) -> EmbedError + '_ {
        move |e| EmbedError::Vectors {
            path: self.path.clone(),
            reason: e.to_string(),
        }
    }

    /// Bring the vectors of `model` in line with the graph in `store`,
    /// embedding only texts never seen before. Each batch is written as it
    /// is computed, so an interrupted run resumes where it stopped.
    pub fn sync(
        &self,
        store: &Store,
        repo: &Repo,
        embedder: &mut Embedder,
        progress: &dyn Progress,
    ) -> Result<SyncReport, EmbedError> {
        let plan = self.plan(store, repo, embedder)?;
        self.apply(plan, embedder, progress)
    }

    /// What [`Vectors::sync`] must embed and record, read from the graph:
    /// everything it needs of `store`, so the store can be let go before
    /// the slow part (see [`Vectors::apply`]).
    pub fn plan(
        &self,
        store: &Store,
        repo: &Repo,
        embedder: &Embedder,
    ) -> Result<Plan, EmbedError> {
        let started = std::time::Instant::now();
        let model = embedder.id.clone();
        let lifter = store.meta()?.lifter;
        let blobs = store.blobs()?;
        let mut known: BTreeMap<String, FileRec> = BTreeMap::new();
        let prefix = format!("f/{model}/");
        for kv in self.db.scan_prefix(&prefix) {
            let (k, v) = kv.map_err(self.err())?;
            let path = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
            if let Ok(rec) = postcard::from_bytes::<FileRec>(&v) {
                known.insert(path, rec);
            }
        }
        let stamp_of = |blob: &str| format!("{blob}/{lifter}");
        let changed: Vec<&String> = blobs
            .iter()
            .filter(|(p, b)| {
                known
                    .get(*p)
                    .map(|r| r.stamp != stamp_of(b))
                    .unwrap_or(true)
            })
            .map(|(p, _)| p)
            .collect();
        let gone: Vec<String> = known
            .keys()
            .filter(|p| !blobs.contains_key(*p))
            .cloned()
            .collect();

        let local = repo.local();
        let mut report = SyncReport {
            model: model.clone(),
            files_changed: changed.len() + gone.len(),
            ..SyncReport::default()
        };
        // The changed files' entities as (id, digest of text), and the
        // texts no vector is cached for.
        let mut per_file: Vec<Changed> = Vec::new();
        let mut todo: BTreeMap<String, String> = BTreeMap::new();
        for path in &changed {
            let Some(block) = store.file_block(path)? else {
                continue;
            };
            let source = match embedder.text {
                EmbedText::Summary => String::new(),
                EmbedText::Code => {
                    let blob =
                        gix::ObjectId::from_hex(block.file.blob.as_bytes()).map_err(|_| {
                            EmbedError::Inference(format!("the graph names a bad blob for {path}"))
                        })?;
                    let bytes = Repo::read_blob(&local, blob)?;
                    String::from_utf8_lossy(&bytes).into_owned()
                }
            };
            let mut ents = Vec::new();
            for e in block.entities.iter().filter(|e| e.kind != Kind::File) {
                let text = match embedder.text {
                    EmbedText::Summary => text_of(e),
                    EmbedText::Code => code_text_of(e, &source),
                };
                let d = digest(text.as_bytes());
                report.entities += 1;
                if todo.contains_key(&d)
                    || self
                        .db
                        .contains_key(cache_key(&model, &d))
                        .map_err(self.err())?
                {
                    report.cached += 1;
                } else {
                    todo.insert(d.clone(), text);
                }
                ents.push((e.id.clone(), d));
            }
            per_file.push(Changed {
                path: (*path).clone(),
                stamp: stamp_of(&blobs[*path]),
                ents,
            });
        }
        Ok(Plan {
            started,
            model,
            known,
            gone,
            per_file,
            todo,
            report,
        })
    }

    /// Embed what `plan` found new and point every entity at its vector;
    /// the graph's store is not needed, so readers keep it meanwhile.
    pub fn apply(
        &self,
        plan: Plan,
        embedder: &mut Embedder,
        progress: &dyn Progress,
    ) -> Result<SyncReport, EmbedError> {
        let Plan {
            started,
            model,
            known,
            gone,
            per_file,
            todo,
            mut report,
        } = plan;
        crate::pausepoint("embed-apply");
        // Similar lengths together: less padding per batch.
        let mut queue: Vec<(String, String)> = todo.into_iter().collect();
        queue.sort_by(|a, b| a.1.len().cmp(&b.1.len()).then(a.0.cmp(&b.0)));
        progress.start("embedding", queue.len() as u64);
        for chunk in queue.chunks(BATCH) {
            let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
            let vecs = embedder.embed(&texts)?;
            let mut batch = sled::Batch::default();
            for ((d, _), v) in chunk.iter().zip(&vecs) {
                batch.insert(cache_key(&model, d).as_bytes(), to_bytes(v));
            }
            self.db.apply_batch(batch).map_err(self.err())?;
            report.embedded += chunk.len();
            progress.inc(chunk.len() as u64);
        }
        progress.finish();

        // Point each entity at its vector; forget what left.
        let mut batch = sled::Batch::default();
        for path in &gone {
            for id in &known[path].ids {
                batch.remove(format!("e/{model}/{id}").as_bytes());
            }
            batch.remove(format!("f/{model}/{path}").as_bytes());
        }
        for Changed { path, stamp, ents } in &per_file {
            let now: BTreeSet<&String> = ents.iter().map(|(id, _)| id).collect();
            if let Some(old) = known.get(path) {
                for id in old.ids.iter().filter(|id| !now.contains(id)) {
                    batch.remove(format!("e/{model}/{id}").as_bytes());
                }
            }
            for (id, d) in ents {
                let v = self
                    .db
                    .get(cache_key(&model, d))
                    .map_err(self.err())?
                    .ok_or_else(|| EmbedError::Inference(format!("no vector cached for {id}")))?;
                batch.insert(format!("e/{model}/{id}").as_bytes(), v);
            }
            let rec = FileRec {
                stamp: stamp.clone(),
                ids: ents.iter().map(|(id, _)| id.clone()).collect(),
            };
            let bytes =
                postcard::to_stdvec(&rec).map_err(|e| EmbedError::Inference(e.to_string()))?;
            batch.insert(format!("f/{model}/{path}").as_bytes(), bytes);
        }
        self.db.apply_batch(batch).map_err(self.err())?;
        self.db.flush().map_err(self.err())?;
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// The `k` entities whose vectors are nearest `query` (cosine; all
    /// vectors are unit length), best first.
    pub fn nearest(
        &self,
        model: &str,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<(String, f32)>, EmbedError> {
        let prefix = format!("e/{model}/");
        let mut all: Vec<(String, f32)> = Vec::new();
        for kv in self.db.scan_prefix(&prefix) {
            let (key, v) = kv.map_err(self.err())?;
            let v = from_bytes(&v);
            if v.len() != query.len() {
                continue;
            }
            let score: f32 = v.iter().zip(query).map(|(a, b)| a * b).sum();
            all.push((
                String::from_utf8_lossy(&key[prefix.len()..]).into_owned(),
                score,
            ));
        }
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        all.truncate(k);
        Ok(all)
    }
}

/// The vectors and a model to keep them current, once `rpg embed` has run
/// here: `Ok(None)` when it has not, an error when it has but the model
/// cannot be used.
pub fn in_use(
    rpg: &RpgDir,
    cfg: &crate::config::EmbedConfig,
    use_: super::Use,
) -> Result<Option<(Vectors, Embedder)>, EmbedError> {
    if !Vectors::exists(rpg) {
        return Ok(None);
    }
    let root = rpg.path().parent().unwrap_or(rpg.path());
    let files = super::ModelFiles::find(cfg, root)?.ok_or(EmbedError::NotInstalled)?;
    let embedder = Embedder::load(&files, use_)?;
    Ok(Some((Vectors::open(rpg)?, embedder)))
}

/// How many embedding neighbours a query carries into ranking.
pub const NEIGHBOURS: usize = 100;

/// The entities nearest `text` (an issue), for [`crate::search::Query::dense`].
pub fn neighbours(
    vectors: &Vectors,
    embedder: &mut Embedder,
    text: &str,
) -> Result<Vec<(String, f32)>, EmbedError> {
    // The model reads 256 tokens at most; the title and opening say most.
    let v = embedder.embed(&[crate::text::prefix(text, 4000)])?;
    vectors.nearest(&embedder.id, &v[0], NEIGHBOURS)
}

/// The entities nearest `text` in embedding space, once `rpg embed` has run
/// here; empty otherwise, and empty with a one-line notice when vectors
/// exist but the model cannot be used, so the caller ranks lexically.
/// Entities changed since the last sync are embedded first; usually few.
pub fn dense_neighbours(
    repo: &crate::git::Repo,
    store: &crate::store::Store,
    text: &str,
) -> Vec<(String, f32)> {
    let found = (|| -> Result<Vec<(String, f32)>, String> {
        let rpg = RpgDir::new(repo.workdir()).map_err(|e| e.to_string())?;
        let config = crate::config::Config::load(repo.workdir()).map_err(|e| e.to_string())?;
        let used = in_use(&rpg, &config.embed, super::Use::Query).map_err(|e| e.to_string())?;
        let Some((vectors, mut embedder)) = used else {
            return Ok(Vec::new());
        };
        let t = std::time::Instant::now();
        vectors
            .sync(store, repo, &mut embedder, &crate::progress::Silent)
            .map_err(|e| e.to_string())?;
        crate::timing("dense sync", t);
        let near = neighbours(&vectors, &mut embedder, text).map_err(|e| e.to_string())?;
        crate::timing("dense neighbours", t);
        Ok(near)
    })();
    found.unwrap_or_else(|e| {
        crate::notice!("rpg: notice: {e}; ranking lexically");
        Vec::new()
    })
}
