//! git → parse → graph: build a whole graph from one commit's tree.

use crate::config::Config;
use crate::exclude::{attributes_files, Exclude};
use crate::git::{GitError, Repo};
use crate::graph::hierarchy::{self, FileTerms};
use crate::graph::resolve::deps::interface_digest;
use crate::graph::resolve::{Facts, MemorySource, Resolver};
use crate::graph::{Batched, Edge, Entity, Graph, Interner, Meta, SCHEMA_VERSION};
use crate::lift::{FileLiftInput, FileOutline, LiftError, Lifted, Lifter};
use crate::parse::{self, Lang};
pub use crate::progress::{Progress, Silent};
use crate::store::{FileDeps, Resolved, StoredParse};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error(transparent)]
    Lift(#[from] LiftError),
}

/// Why files were not indexed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub excluded: usize,
    pub generated: usize,
    pub too_large: usize,
    pub binary: usize,
    pub not_utf8: usize,
    pub links: usize,
    /// Paths git's fsck rejects (`.git/…`, `..`): never indexed.
    #[serde(skip_serializing_if = "is_zero")]
    pub unsafe_names: usize,
    /// Files whose blob git could not give (a partial clone, a mirror
    /// without large files, a lost object): see [`EncodeReport::unreadable`].
    #[serde(skip_serializing_if = "is_zero")]
    pub unreadable: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Skipped {
    pub fn total(&self) -> usize {
        self.excluded
            + self.generated
            + self.too_large
            + self.binary
            + self.not_utf8
            + self.links
            + self.unsafe_names
            + self.unreadable
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct EncodeReport {
    pub files_indexed: usize,
    pub lines: u64,
    pub files_with_syntax_errors: usize,
    pub skipped: Skipped,
    /// Tracked files in languages `rpg` does not parse.
    pub other_files: usize,
    /// The files whose blob could not be read: left out, named, and tried
    /// again by the next update.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

/// A parsed source file with the identity git gives it.
pub struct SourceFile {
    pub path: String,
    pub blob: gix::ObjectId,
    pub lang: Lang,
    pub facts: Arc<Facts>,
    /// The file's text, for a lifter that reads code; `None` when it was
    /// not kept, since at monorepo scale every file's text is a large part
    /// of what init holds.
    pub text: Option<Arc<str>>,
}

/// What became of one tracked file.
pub enum Outcome {
    Parsed(SourceFile),
    /// Skipped; the function counts it under its reason.
    Skip(fn(&mut Skipped)),
    /// Not a language `rpg` parses.
    Other,
    /// Its blob could not be read: the file costs itself, nothing more.
    Unreadable,
}

mod entities;
mod read;
mod roots;

pub use entities::*;
use entities::{entity_terms_by_file, file_terms, take_descriptions};
pub use read::*;
pub use roots::*;

/// Build the full graph of `commit`.
pub fn encode(
    repo: &Repo,
    config: &Config,
    commit: gix::ObjectId,
    lifter: &dyn Lifter,
    progress: &dyn Progress,
) -> Result<Encoded, EncodeError> {
    let snapshot = repo.snapshot(commit)?;
    encode_snapshot(repo, config, snapshot, lifter, progress)
}

/// Build the full graph of a listed tree (labelled with its commit).
pub fn encode_snapshot(
    repo: &Repo,
    config: &Config,
    snapshot: crate::git::Snapshot,
    lifter: &dyn Lifter,
    progress: &dyn Progress,
) -> Result<Encoded, EncodeError> {
    let t = std::time::Instant::now();
    crate::malloc::for_large_build(snapshot.files.len());
    repo.fetch_missing_blobs(&wanted_blobs(&snapshot.files));
    let globs = config.excluder()?;
    let attributes = attributes_files(&snapshot.files, &globs);
    let exclude = Exclude::new(globs, &repo.local(), &attributes)?;
    let headers = header_lang(&exclude, &snapshot.files);
    let read = Read {
        exclude: &exclude,
        max_bytes: config.index.max_file_bytes,
        headers: parse::headers_as(headers),
        keep_text: lifter.reads_code(),
    };
    let Parsed {
        sources,
        mut skipped,
        other,
        unreadable,
    } = parse_files(&repo.reopened()?, &snapshot.files, &read, progress)?;
    crate::timing("parse", t);
    skipped.links = snapshot.skipped_links;
    skipped.unsafe_names = snapshot.unsafe_names;
    let crates = crate_roots(repo, &snapshot.files);
    let report = EncodeReport {
        files_indexed: sources.len(),
        lines: sources.iter().map(|s| s.facts.parsed.lines as u64).sum(),
        files_with_syntax_errors: sources.iter().filter(|s| s.facts.parsed.has_errors).count(),
        skipped,
        other_files: other,
        unreadable: unreadable.clone(),
    };
    let (graph, mut resolved) = assemble(
        sources,
        lifter,
        Meta {
            schema: SCHEMA_VERSION,
            commit: snapshot.commit.to_string(),
            tree: snapshot.tree.to_string(),
            lifter: lifter.id().to_string(),
            crates,
            headers,
            attributes: attributes.into_iter().map(|f| f.path).collect(),
            index: config.index.digest(),
        },
    )?;
    resolved.unreadable = unreadable;
    Ok(Encoded {
        graph,
        report,
        resolved,
    })
}

/// A freshly encoded graph with what the store needs beside it.
pub struct Encoded {
    pub graph: Graph,
    pub report: EncodeReport,
    /// What resolving each file read, and the parses, for incremental
    /// re-resolution.
    pub resolved: Resolved,
}

/// Entities, edges, features and hierarchy from parsed sources.
///
/// The entities are made last, from the lift's features, as each parse is
/// packed and freed: at millions of lines, every parse and every entity
/// held at once beside resolution's edges set the peak of `init`.
pub fn assemble(
    sources: Vec<SourceFile>,
    lifter: &dyn Lifter,
    meta: Meta,
) -> Result<(Graph, Resolved), EncodeError> {
    let t = std::time::Instant::now();
    let files = sources
        .iter()
        .map(|s| (s.path.clone(), file_record(s)))
        .collect();
    let lifted = lift_files(&sources, lifter)?;
    crate::timing("lift", t);
    let t = std::time::Instant::now();
    let paths: Vec<String> = sources.iter().map(|s| s.path.clone()).collect();
    // Edges name each entity many times over: one shared text each.
    let mut ids = Interner::default();
    let (mut edges, mut resolved, mut h) =
        resolve_beside_hierarchy(&sources, &lifted, &meta, &mut ids);
    let (mut entities, parsed) =
        into_entities(sources, lifted, &mut edges, &mut resolved.deps, &mut ids);
    drop(ids);
    resolved.parsed = parsed;
    let edges = edges.finish();
    crate::timing("resolve+hierarchy", t);
    let outlines: Vec<FileOutline> = paths
        .iter()
        .map(|path| FileOutline {
            path,
            features: entities
                .get(path)
                .map(|e| e.features.as_slice())
                .unwrap_or(&[]),
            offline_leaf: h.leaf_of_file.get(path).map(String::as_str).unwrap_or(""),
        })
        .collect();
    if let Some(leaf_of_file) = lifter.organize(&outlines)? {
        h.categories =
            hierarchy::categories_for(&entity_terms_by_file(&paths, &entities), &leaf_of_file);
        h.leaf_of_file = leaf_of_file;
    }
    // A leaf holds many entities: one text for all of them.
    let mut leaves = Interner::default();
    for e in entities.values_mut() {
        if let Some(leaf) = h.leaf_of_file.get(&e.path) {
            e.leaf = leaves.id(leaf);
        }
    }
    let graph = Graph {
        meta,
        files,
        entities,
        edges,
        categories: h.categories,
    };
    Ok((graph, resolved))
}

/// What the lifter said of one file: each entity's features in source
/// order, and the file's summary.
struct FileLift {
    code: Vec<Lifted>,
    summary: Lifted,
}

impl FileLift {
    fn features(&self) -> impl Iterator<Item = &Vec<String>> + Clone {
        std::iter::once(&self.summary)
            .chain(&self.code)
            .map(|l| &l.features)
    }
}

/// One lift call for the whole repository, so a model-backed lifter can
/// batch across files; then one summary call.
fn lift_files(sources: &[SourceFile], lifter: &dyn Lifter) -> Result<Vec<FileLift>, LiftError> {
    let all: Vec<&SourceFile> = sources.iter().collect();
    let picks: Vec<(usize, usize)> = sources
        .iter()
        .enumerate()
        .flat_map(|(si, s)| (0..s.facts.parsed.entities.len()).map(move |ei| (si, ei)))
        .collect();
    let mut lifted = lift_all(&all, &picks, lifter)?.into_iter();
    let code: Vec<Vec<Lifted>> = sources
        .iter()
        .map(|s| {
            lifted
                .by_ref()
                .take(s.facts.parsed.entities.len())
                .collect()
        })
        .collect();
    let inputs: Vec<FileLiftInput> = sources
        .iter()
        .zip(&code)
        .map(|(s, c)| file_input(s, c.iter().map(|l| &l.features)))
        .collect();
    let summaries = lifter.summarize_files(&inputs)?;
    drop(inputs);
    Ok(code
        .into_iter()
        .zip(summaries)
        .map(|(code, summary)| FileLift { code, summary })
        .collect())
}

/// The resolved edges and what each file's resolution read, with the
/// offline hierarchy built beside them: the two are independent.
fn resolve_beside_hierarchy(
    sources: &[SourceFile],
    lifted: &[FileLift],
    meta: &Meta,
    ids: &mut Interner,
) -> (Edges, Resolved, hierarchy::Hierarchy) {
    let facts: Vec<Arc<Facts>> = sources.iter().map(|s| s.facts.clone()).collect();
    let symbols = MemorySource::new(&facts, &meta.crates);
    let mut edges = Batched::default();
    let mut resolved = Resolved::default();
    let h = std::thread::scope(|scope| {
        let t = std::time::Instant::now();
        let hierarchy = scope.spawn(move || {
            let terms: Vec<FileTerms> = sources
                .iter()
                .zip(lifted)
                .map(|(s, l)| file_terms(&s.path, l.features()))
                .collect();
            let h = hierarchy::build(&terms);
            // The term bags' pages go back as soon as they are freed, not
            // when resolution is done: held until then, they set init's
            // peak on the Linux tree.
            drop(terms);
            crate::malloc::return_free_pages();
            crate::timing("hierarchy, beside resolution", t);
            h
        });
        let resolver = Resolver::new(&symbols);
        for s in sources {
            let (out, deps) = resolver.edges_and_deps(&s.path);
            edges.extend(out.into_iter().map(|e| ids.edge(e)));
            // The parse's filter is added when the parse is packed.
            let d = FileDeps {
                blob: s.blob.to_string(),
                deps: deps.compacted(),
                grams: Vec::new(),
                binds: s.facts.binds(),
                interface: interface_digest(&s.facts),
            };
            resolved.deps.insert(s.path.clone(), d);
        }
        crate::timing("resolution", t);
        hierarchy
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    });
    (edges, resolved, h)
}

/// Each blob's parse, packed for the store.
type Parses = Vec<(String, StoredParse)>;

/// The graph's edges as they are made.
type Edges = Batched<BTreeSet<Edge>, Edge>;

/// The graph's entities and `contains` edges, made file by file as each
/// parse is packed for the store and freed; each file's dependency record
/// gets the packed parse's filter.
fn into_entities(
    sources: Vec<SourceFile>,
    lifted: Vec<FileLift>,
    edges: &mut Edges,
    deps: &mut BTreeMap<String, FileDeps>,
    ids: &mut Interner,
) -> (BTreeMap<String, Entity>, Parses) {
    let mut entities: Batched<BTreeMap<String, Entity>, _> = Batched::default();
    let mut parsed = Vec::with_capacity(sources.len());
    for (i, (mut s, l)) in sources.into_iter().zip(lifted).enumerate() {
        // The parses were made by the parse threads, in arenas this thread
        // does not allocate from, so what they free here stays resident
        // until it is given back: 0.5 GB on the Linux tree, at its peak.
        if i % 4096 == 4095 {
            crate::malloc::return_free_pages();
        }
        let described = take_descriptions(&mut s);
        let (code, contains) = code_entities(&s, l.code, described);
        edges.extend(contains.into_iter().map(|e| ids.edge(e)));
        let file = file_entity(&s, l.summary);
        entities.push((file.id.clone(), file));
        entities.extend(code.into_iter().map(|e| (e.id.clone(), e)));
        let packed = StoredParse::of(&s.facts.parsed);
        if let Some(d) = deps.get_mut(&s.path) {
            d.grams = packed.grams();
        }
        parsed.push((s.blob.to_string(), packed.shelved()));
    }
    (entities.finish(), parsed)
}
