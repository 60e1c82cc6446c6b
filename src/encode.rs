//! git → parse → graph: build a whole graph from one commit's tree.

use crate::config::Config;
use crate::exclude::{attributes_files, Exclude};
use crate::git::{GitError, Repo, TreeFile};
use crate::graph::hierarchy::{self, FileTerms};
use crate::graph::resolve::deps::interface_digest;
use crate::graph::resolve::{Facts, MemorySource, Resolver};
use crate::graph::{
    Batched, Edge, EdgeKind, Entity, FileRecord, Graph, Id, Interner, Meta, SCHEMA_VERSION,
};
use crate::lift::{FileLiftInput, FileOutline, LiftError, LiftInput, Lifted, Lifter, LineStarts};
use crate::parse::{self, Call, Kind, Lang};
pub use crate::progress::{Progress, Silent};
use crate::store::{FileDeps, Resolved, StoredParse};
use crate::text::words::{is_stop, prose_words, split_identifier};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

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

/// How many threads parse: one a core, at most eight.
pub fn parse_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(8)
}

/// How the tree's `.h` files are read, judged from the files not excluded.
pub fn header_lang(exclude: &Exclude, files: &[TreeFile]) -> Option<Lang> {
    parse::header_lang(
        files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| !exclude.is_match(p)),
    )
}

/// Parse every indexable file of `files`, in parallel, as `read` says.
pub fn parse_files(
    repo: &Repo,
    files: &[TreeFile],
    read: &Read,
    progress: &dyn Progress,
) -> Result<Parsed, EncodeError> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::with_capacity(files.len()));
    let error: Mutex<Option<GitError>> = Mutex::new(None);
    let threads = parse_threads();
    progress.start("parsing", files.len() as u64);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let local = repo.local();
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = files.get(i) else { break };
                    match classify(&local, f, read) {
                        Ok(o) => mine.push((i, o)),
                        Err(e) => {
                            *error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                            break;
                        }
                    }
                    progress.inc(1);
                }
                results
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(mine);
            });
        }
    });
    progress.finish();
    if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e.into());
    }
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, _)| *i);
    let mut out = Parsed::default();
    for (i, o) in results {
        match o {
            Outcome::Parsed(p) => out.sources.push(p),
            Outcome::Skip(count) => count(&mut out.skipped),
            Outcome::Other => out.other += 1,
            Outcome::Unreadable => {
                out.skipped.unreadable += 1;
                out.unreadable.push(files[i].path.clone());
            }
        }
    }
    Ok(out)
}

/// What [`parse_files`] made of a tree's files.
#[derive(Default)]
pub struct Parsed {
    pub sources: Vec<SourceFile>,
    pub skipped: Skipped,
    /// Files in languages rpg does not read.
    pub other: usize,
    /// Files whose blob could not be read, in tree order.
    pub unreadable: Vec<String>,
}

/// How tracked files are filtered and read.
pub struct Read<'a> {
    pub exclude: &'a Exclude,
    pub max_bytes: u64,
    /// The language `.h` files are parsed as.
    pub headers: Lang,
    pub keep_text: bool,
}

/// Read, filter and parse one tracked file.
pub fn classify(repo: &gix::Repository, f: &TreeFile, read: &Read) -> Result<Outcome, GitError> {
    let Some(lang) = Lang::of(&f.path, read.headers) else {
        return Ok(Outcome::Other);
    };
    if read.exclude.is_match(&f.path) {
        return Ok(Outcome::Skip(|s| s.excluded += 1));
    }
    let Ok(data) = Repo::read_blob(repo, f.blob) else {
        return Ok(Outcome::Unreadable);
    };
    if data.len() as u64 > read.max_bytes {
        return Ok(Outcome::Skip(|s| s.too_large += 1));
    }
    if data[..data.len().min(8000)].contains(&0) {
        return Ok(Outcome::Skip(|s| s.binary += 1));
    }
    let Ok(text) = String::from_utf8(data) else {
        return Ok(Outcome::Skip(|s| s.not_utf8 += 1));
    };
    if is_generated(&text) || (lang.is_js() && is_minified(&text)) {
        return Ok(Outcome::Skip(|s| s.generated += 1));
    }
    Ok(Outcome::Parsed(SourceFile {
        path: f.path.clone(),
        blob: f.blob,
        lang,
        facts: Arc::new(Facts::new(
            f.path.clone(),
            lang,
            parse::parse(lang, &f.path, &text),
        )),
        text: read.keep_text.then(|| Arc::from(text)),
    }))
}

/// Generated files announce themselves in their first lines. A
/// single-file copy of a library (SQLite's and Catch2's amalgamations,
/// Catch2's older `single_include/catch.hpp`), or a scanner or parser
/// that flex or Bison wrote from a grammar people edit instead, says so in
/// its banner, a few lines further down.
fn is_generated(text: &str) -> bool {
    let said = |l: &str| {
        l.contains("@generated")
            || l.contains("DO NOT EDIT")
            || l.contains("Code generated by")
            // webpack's bundle prelude
            || l.starts_with("/******/")
    };
    let merged = |l: &str| {
        let l = l.trim_start();
        let comment = l.starts_with('/') && l[1..].starts_with(['/', '*']) || l.starts_with('*');
        comment
            && [
                "is an amalgamation",
                "merged from multiple",
                "generated by flex",
                "made by GNU Bison",
            ]
            .iter()
            .any(|s| l.contains(s))
    };
    text.lines().take(5).any(said) || text.lines().take(20).any(merged)
}

/// Minified JavaScript, as linguist tells it: lines of more than 110
/// characters on average. Nobody edits it; its source sits beside it.
fn is_minified(text: &str) -> bool {
    let lines = text.lines().count().max(1);
    text.len() / lines > 110
}

/// The blobs indexing `files` reads: code, attributes and manifests (what
/// a partial clone must fetch first).
pub fn wanted_blobs(files: &[TreeFile]) -> Vec<gix::ObjectId> {
    files
        .iter()
        .filter(|f| {
            Lang::from_path(&f.path).is_some()
                || crate::exclude::is_attributes(&f.path)
                || is_manifest(&f.path)
        })
        .map(|f| f.blob)
        .collect()
}

/// Whether a path is a manifest that says how code is named across
/// directories: a `Cargo.toml`, a `go.mod`, a `tsconfig.json`, or a C/C++
/// build file naming include directories.
pub fn is_manifest(path: &str) -> bool {
    let name = crate::text::file_name(path);
    name == "Cargo.toml"
        || name == "go.mod"
        || is_tsconfig(name)
        || crate::graph::resolve::is_c_build_file(path)
}

/// `tsconfig.json`, or a config one extends (`tsconfig.base.json`).
fn is_tsconfig(name: &str) -> bool {
    name.starts_with("tsconfig") && name.ends_with(".json")
}

/// Cargo package names → their `src` directory, `cinc:<dir>` → an include
/// directory of the build files, and `go:<module path>` →
/// the module's directory, from the tree's manifests.
pub fn crate_roots(repo: &Repo, files: &[TreeFile]) -> BTreeMap<String, String> {
    let local = repo.local();
    let mut out = BTreeMap::new();
    // Path → blob, built only if a manifest looks at other files.
    let mut tree: Option<BTreeMap<&str, gix::ObjectId>> = None;
    for f in files.iter().filter(|f| is_manifest(&f.path)) {
        let Ok(data) = Repo::read_blob(&local, f.blob) else {
            continue;
        };
        let Ok(text) = String::from_utf8(data) else {
            continue;
        };
        let index = || files.iter().map(|f| (&*f.path, f.blob)).collect();
        if crate::graph::resolve::is_c_build_file(&f.path) {
            let tree = tree.get_or_insert_with(index);
            for dir in crate::graph::resolve::include_dirs(&f.path, &text, tree) {
                out.insert(format!("{}{dir}", crate::graph::resolve::C_INCLUDE), dir);
            }
            continue;
        }
        let name = crate::text::file_name(&f.path);
        if is_tsconfig(name) {
            // Other tsconfigs only lend options to those that extend them.
            if name == "tsconfig.json" {
                let tree = tree.get_or_insert_with(index);
                let read = |path: &str| {
                    let blob = *tree.get(path)?;
                    String::from_utf8(Repo::read_blob(&local, blob).ok()?).ok()
                };
                out.extend(tsconfig_paths(&f.path, &text, &read));
            }
            continue;
        }
        if f.path.ends_with("go.mod") {
            if let Some(module) = go_module_path(&text) {
                let dir = crate::graph::dir_of(&f.path).to_string();
                out.insert(format!("{}{module}", crate::graph::resolve::GO_MODULE), dir);
            }
            continue;
        }
        let Ok(doc) = text.parse::<toml::Table>() else {
            continue;
        };
        let Some(name) = doc
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
        else {
            continue;
        };
        let dir = crate::graph::dir_of(&f.path);
        let src = if dir == "." {
            "src".to_string()
        } else {
            format!("{dir}/src")
        };
        out.insert(name.to_string(), src);
    }
    out
}

/// A tsconfig's `baseUrl` and `paths`, its own or those of the configs
/// it `extends` (relative ones only: a package's config is not in the
/// repository), each resolved against the config that sets it.
#[derive(Default)]
struct TsOptions {
    base_url: Option<String>,
    /// The patterns, and the directory of the config that set them.
    paths: Option<(serde_json::Map<String, serde_json::Value>, String)>,
}

fn ts_options(
    path: &str,
    text: &str,
    read: &dyn Fn(&str) -> Option<String>,
    hops: u32,
) -> TsOptions {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&relaxed_json(text)) else {
        return TsOptions::default();
    };
    let dir = crate::graph::dir_of(path);
    let options = &v["compilerOptions"];
    let mut own = TsOptions {
        base_url: options["baseUrl"]
            .as_str()
            .and_then(|b| crate::graph::join_rel(dir, b)),
        paths: options["paths"]
            .as_object()
            .map(|p| (p.clone(), dir.to_string())),
    };
    let parents: Vec<&str> = match &v["extends"] {
        serde_json::Value::String(e) => vec![e.as_str()],
        serde_json::Value::Array(a) => a.iter().filter_map(|e| e.as_str()).collect(),
        _ => Vec::new(),
    };
    // Later parents override earlier ones, and the config itself all.
    for e in parents
        .iter()
        .rev()
        .filter(|e| e.starts_with("./") || e.starts_with("../"))
    {
        let Some(mut ext) = crate::graph::join_rel(dir, e) else {
            continue;
        };
        if !ext.ends_with(".json") {
            ext.push_str(".json");
        }
        let Some(text) = (hops > 0).then(|| read(&ext)).flatten() else {
            continue;
        };
        let parent = ts_options(&ext, &text, read, hops - 1);
        own.base_url = own.base_url.or(parent.base_url);
        own.paths = own.paths.or(parent.paths);
    }
    own
}

/// A `tsconfig.json`'s `baseUrl` and `paths` as manifest entries (see
/// [`TS_PATHS`](crate::graph::resolve::TS_PATHS)), targets made relative
/// to the repository root. tsconfig allows comments and trailing commas.
fn tsconfig_paths(
    path: &str,
    text: &str,
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let dir = crate::graph::dir_of(path);
    let options = ts_options(path, text, read, 4);
    let key = |pattern: &str| format!("{}{dir}\u{1}{pattern}", crate::graph::resolve::TS_PATHS);
    let mut out = Vec::new();
    if let Some(base) = &options.base_url {
        out.push((key(""), crate::graph::dir_or_root(base.clone())));
    }
    if let Some((paths, set_in)) = &options.paths {
        let base = options.base_url.clone().unwrap_or_else(|| set_in.clone());
        for (pattern, targets) in paths {
            let first = targets
                .as_array()
                .and_then(|t| t.first())
                .and_then(|t| t.as_str());
            if let Some(target) = first.and_then(|t| crate::graph::join_rel(&base, t)) {
                out.push((key(pattern), target));
            }
        }
    }
    out
}

/// JSON with `//` and `/* */` comments and trailing commas removed.
fn relaxed_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            (',', _) => {
                let rest: String = chars.clone().take_while(|n| n.is_whitespace()).collect();
                let next = chars.clone().nth(rest.chars().count());
                if !matches!(next, Some('}') | Some(']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The `module` line of a go.mod.
fn go_module_path(text: &str) -> Option<&str> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        let m = rest.split("//").next()?.trim().trim_matches('"');
        (!m.is_empty() && rest.starts_with([' ', '\t'])).then_some(m)
    })
}

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

/// The stored record of a parsed file.
pub fn file_record(s: &SourceFile) -> FileRecord {
    FileRecord {
        path: s.path.clone(),
        blob: s.blob.to_string(),
        lang: s.lang,
        lines: s.facts.parsed.lines,
        has_errors: s.facts.parsed.has_errors,
    }
}

/// What an entity says of itself beside its name: signature, docstring
/// and content hash.
pub struct Description {
    signature: String,
    doc: String,
    hash: String,
}

/// The descriptions of `s`'s entities, taken out of its parse when nothing
/// else holds it. Resolution and the store read none of them, and at
/// millions of lines a second copy in the graph was tens of megabytes.
fn take_descriptions(s: &mut SourceFile) -> Option<Vec<Description>> {
    let facts = Arc::get_mut(&mut s.facts)?;
    let take = |e: &mut crate::parse::ParsedEntity| Description {
        signature: std::mem::take(&mut e.signature),
        doc: std::mem::take(&mut e.doc),
        hash: std::mem::take(&mut e.hash),
    };
    Some(facts.parsed.entities.iter_mut().map(take).collect())
}

/// A file's code entities (no hierarchy leaf yet) and their `contains`
/// edges, with what the lifter said of each, in source order; with
/// `described`, the entities' descriptions, else copies of the parse's.
pub fn code_entities(
    s: &SourceFile,
    lifted: Vec<Lifted>,
    described: Option<Vec<Description>>,
) -> (Vec<Entity>, Vec<Edge>) {
    let ents = &s.facts.parsed.entities;
    let ids: Vec<Id> = ents
        .iter()
        .map(|e| crate::graph::entity_id(&s.path, &e.qualname).into())
        .collect();
    let file = Id::from(&s.path);
    let mut described = described.map(Vec::into_iter);
    let mut out = Vec::with_capacity(ents.len());
    let mut contains = Vec::with_capacity(ents.len());
    // An entity the lifter said nothing of still enters the graph.
    let mut lifted = lifted.into_iter();
    for (i, e) in ents.iter().enumerate() {
        let l = lifted.next().unwrap_or_default();
        let parent = e.parent.map_or_else(|| file.clone(), |p| ids[p].clone());
        contains.push(Edge {
            src: parent,
            kind: EdgeKind::Contains,
            dst: ids[i].clone(),
        });
        let d = described
            .as_mut()
            .and_then(Iterator::next)
            .unwrap_or_else(|| Description {
                signature: e.signature.clone(),
                doc: e.doc.clone(),
                hash: e.hash.clone(),
            });
        out.push(Entity {
            id: ids[i].to_string(),
            kind: e.kind,
            path: s.path.clone(),
            qualname: e.qualname.clone(),
            flavor: Id::common(&e.flavor),
            start_line: e.start_line,
            end_line: e.end_line,
            signature: d.signature,
            doc: d.doc,
            hash: d.hash,
            features: l.features,
            lifter: l.by,
            leaf: Id::default(),
        });
    }
    (out, contains)
}

/// What a lifter summarises a file from: its docstring and the features
/// of its top-level entities, largest first.
pub fn file_input<'a>(
    s: &'a SourceFile,
    features: impl IntoIterator<Item = &'a Vec<String>>,
) -> FileLiftInput<'a> {
    let mut tops: Vec<(u32, &[String])> = s
        .facts
        .parsed
        .entities
        .iter()
        .zip(features)
        .filter(|(e, _)| e.parent.is_none())
        .map(|(e, f)| (e.end_line - e.start_line, f.as_slice()))
        .collect();
    tops.sort_by_key(|t| std::cmp::Reverse(t.0));
    FileLiftInput {
        path: &s.path,
        doc: &s.facts.parsed.doc,
        top_features: tops.into_iter().map(|(_, f)| f).collect(),
    }
}

/// The file entity, with its summary features.
pub fn file_entity(s: &SourceFile, summary: Lifted) -> Entity {
    Entity {
        id: s.path.clone(),
        kind: Kind::File,
        path: s.path.clone(),
        qualname: String::new(),
        flavor: Id::default(),
        start_line: 1,
        end_line: s.facts.parsed.lines.max(1),
        signature: String::new(),
        doc: s.facts.parsed.doc.clone(),
        hash: String::new(),
        features: summary.features,
        lifter: summary.by,
        leaf: Id::default(),
    }
}

/// The lifter's view of entity `i` of `s`, whose `lines` are found once
/// for all its entities.
pub fn lift_input<'s>(s: &'s SourceFile, lines: &LineStarts, i: usize) -> LiftInput<'s> {
    let e = &s.facts.parsed.entities[i];
    LiftInput {
        path: &s.path,
        qualname: &e.qualname,
        hash: &e.hash,
        code: s
            .text
            .as_deref()
            .map_or("", |t| lines.cut(t, e.start_line, e.end_line)),
        lang: s.lang,
        kind: e.kind,
        name: &e.name,
        owner: e.owner_type.as_deref(),
        flavor: &e.flavor,
        signature: &e.signature,
        doc: &e.doc,
        callees: e
            .calls
            .iter()
            .map(|c| match c {
                Call::Name(n) | Call::SelfMethod(n) | Call::Macro(n) => n.as_str(),
                Call::Attr { name, .. } | Call::Typed { name, .. } => name.as_str(),
                Call::Path(p) => p.last().map(String::as_str).unwrap_or(""),
            })
            .collect(),
    }
}

/// Lift entity `picks[k] = (source, entity index)` of `sources` in one
/// call; results in the same order.
pub fn lift_all(
    sources: &[&SourceFile],
    picks: &[(usize, usize)],
    lifter: &dyn Lifter,
) -> Result<Vec<Lifted>, LiftError> {
    // Picks come grouped by file: find a file's lines once per run of it.
    let mut lines = (usize::MAX, LineStarts::default());
    let mut inputs: Vec<LiftInput> = Vec::with_capacity(picks.len());
    for &(si, ei) in picks {
        if lines.0 != si {
            lines = (
                si,
                LineStarts::of(sources[si].text.as_deref().unwrap_or("")),
            );
        }
        inputs.push(lift_input(sources[si], &lines.1, ei));
    }
    lifter.lift(&inputs)
}

/// An entity's feature words, the one rule by which init and updates weigh
/// entities for the hierarchy: words of three characters or more with a
/// letter in them (`utf8` and `v2` count, `100` does not), stop words out.
pub fn entity_terms(e: &Entity) -> BTreeMap<String, f32> {
    let mut t = BTreeMap::new();
    add_feature_terms(&mut t, &e.features);
    t
}

fn add_feature_terms(bag: &mut BTreeMap<String, f32>, features: &[String]) {
    for f in features {
        for w in prose_words(f) {
            if w.len() >= 3 && w.chars().any(|c| c.is_alphabetic()) && !is_stop(&w) {
                *bag.entry(w).or_default() += 1.0;
            }
        }
    }
}

/// A file's term bag: the feature words of its entities (the file's own
/// included), and its name's words, which weigh double.
pub fn file_bag<'a>(
    path: &str,
    features: impl IntoIterator<Item = &'a Vec<String>>,
) -> BTreeMap<String, f32> {
    let mut terms = BTreeMap::new();
    for f in features {
        add_feature_terms(&mut terms, f);
    }
    let stem = crate::text::file_name(path);
    for w in split_identifier(stem.split('.').next().unwrap_or(stem)) {
        if !is_stop(&w) {
            *terms.entry(w).or_default() += 2.0;
        }
    }
    terms
}

/// A file's terms for the hierarchy, from its entities' features (the
/// file's own included), by [`file_bag`].
fn file_terms<'a>(
    path: &str,
    features: impl Iterator<Item = &'a Vec<String>> + Clone,
) -> FileTerms {
    FileTerms {
        path: path.to_string(),
        terms: file_bag(path, features.clone()),
        topics: hierarchy::file_topics(path, features),
    }
}

/// [`file_terms`] of each of `paths`, from the graph's entities.
fn entity_terms_by_file(paths: &[String], entities: &BTreeMap<String, Entity>) -> Vec<FileTerms> {
    let mut by_file: BTreeMap<&str, Vec<&Vec<String>>> = BTreeMap::new();
    for e in entities.values() {
        by_file
            .entry(e.path.as_str())
            .or_default()
            .push(&e.features);
    }
    paths
        .iter()
        .map(|path| {
            let features = by_file.remove(path.as_str()).unwrap_or_default();
            file_terms(path, features.into_iter())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::is_generated;

    #[test]
    fn a_single_file_copy_announced_in_its_banner_is_generated() {
        let banner = "//              Copyright Catch2 Authors\n//\n//\n//\n\n// SPDX-License-Identifier: BSL-1.0\n\n//  Catch v3.5.3\n//  Generated: 2024-03-01 22:05:55.031514\n//  ----------------------------------------------------------\n//  This file is an amalgamation of multiple different files.\n//  You probably shouldn't edit it directly.\n";
        assert!(is_generated(banner));
        let old = "/*\n *  Catch v2.13.0\n *  Generated: 2020-07-12 20:07:49.015950\n *  ----------------------------------------------------------\n *  This file has been merged from multiple headers. Please don't edit it directly\n */\n";
        assert!(is_generated(old));
        let flex = "#line 1 \"src/lexer.c\"\n\n#line 3 \"src/lexer.c\"\n\n#define  YY_INT_ALIGNED short int\n\n/* A lexical scanner generated by flex */\n";
        assert!(is_generated(flex));
        assert!(is_generated(
            "/* A Bison parser, made by GNU Bison 3.8.2.  */\n"
        ));
        // Code that talks about amalgamation is not announcing itself.
        let code = "int f() {\n  return amalgamate(\"this file is an amalgamation\");\n}\n";
        assert!(!is_generated(code));
    }
}
