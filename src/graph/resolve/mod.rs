//! Dependency resolution: imports to files, calls and base classes to the
//! exact entities they name. Every edge starts at the entity that contains
//! the call; nothing is attached by bare name unless the name is unique.
//!
//! The resolver reads symbols through [`SymbolSource`], so the same rules
//! run over a whole tree in memory (`init`) and over the store plus the
//! changed files (`update`).
//!
//! Each language's own rules (how an import names a file or package, and
//! which module, receiver or type a call goes through) live in its
//! submodule; this one holds what they share: bindings, the call and
//! attribute walk, base classes, and the unique-name fallback.

mod cfamily;
pub mod deps;
mod go;
mod java;
mod js;
mod members;
mod python;
mod rust;

pub use cfamily::{include_dirs, is_c_build_file, C_INCLUDE};
pub use go::{go_package_name, GO_MODULE};
pub use js::TS_PATHS;
pub use rust::rust_module_of;

pub use deps::Slice;
use deps::{Deps, Recorded};

use super::{Edge, EdgeKind, Id};
use crate::parse::{Call, Import, Kind, Lang, ParsedEntity, ParsedFile};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::BuildHasher;
use std::rc::Rc;
use std::sync::Arc;

/// A parsed file as the resolver sees it.
#[derive(Debug)]
pub struct Facts {
    pub path: String,
    pub lang: Lang,
    pub parsed: ParsedFile,
    /// Entity indexes by a hash of their qualname, in hash order: a
    /// lookup compares integers, not qualnames (C's calls look into every
    /// included header, and string compares were a fifth of resolution),
    /// without a second copy of every qualname.
    by_qualname: Vec<(u32, u32)>,
}

/// The hash [`Facts::lookup`] sorts by; collisions are told apart by the
/// qualname itself.
fn qualname_hash(qualname: &str) -> u32 {
    rustc_hash::FxBuildHasher.hash_one(qualname) as u32
}

impl Facts {
    pub fn new(path: String, lang: Lang, parsed: ParsedFile) -> Facts {
        let ents = &parsed.entities;
        let mut by_qualname: Vec<(u32, u32)> = (0..ents.len() as u32)
            .map(|i| (qualname_hash(&ents[i as usize].qualname), i))
            .collect();
        by_qualname.sort_unstable();
        Facts {
            path,
            lang,
            parsed,
            by_qualname,
        }
    }

    /// The first entity named `qualname`, in source order.
    pub fn lookup(&self, qualname: &str) -> Option<usize> {
        self.lookup_hashed(qualname_hash(qualname), qualname)
    }

    /// [`Facts::lookup`] with the qualname's hash already made, for a
    /// name asked of many files.
    fn lookup_hashed(&self, h: u32, qualname: &str) -> Option<usize> {
        let from = self.by_qualname.partition_point(|&(x, _)| x < h);
        self.by_qualname[from..]
            .iter()
            .take_while(|&&(x, _)| x == h)
            .map(|&(_, i)| i as usize)
            .find(|&i| self.parsed.entities[i].qualname == qualname)
    }

    /// The names this file binds by import, each with a description of
    /// what it is bound to; a glob import appears as `*`.
    pub fn binds(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for imp in &self.parsed.imports {
            match imp {
                Import::Python {
                    level,
                    module,
                    names,
                    alias,
                } => {
                    let m = format!("{}{}", ".".repeat(*level), module.join("."));
                    for (n, b) in names {
                        if n == "*" {
                            out.insert("*".to_string(), format!("from {m} import *"));
                        } else {
                            out.insert(b.clone(), format!("from {m} import {n}"));
                        }
                    }
                    match (alias, module.first()) {
                        (Some(a), _) => {
                            out.insert(a.clone(), format!("import {m}"));
                        }
                        (None, Some(first)) if names.is_empty() => {
                            out.insert(first.clone(), format!("import {first}"));
                        }
                        _ => {}
                    }
                }
                Import::RustUse {
                    path,
                    bound_as,
                    glob,
                    ..
                } => {
                    let key = if *glob {
                        "*".to_string()
                    } else {
                        bound_as.clone()
                    };
                    out.insert(key, format!("use {}", path.join("::")));
                }
                Import::RustMod { name, .. } => {
                    out.insert(name.clone(), "mod".into());
                }
                Import::Go { path, alias } => {
                    out.insert(
                        go_package_name(path, alias.as_deref()),
                        format!("import {path}"),
                    );
                }
                Import::Java { path, wildcard, .. } => {
                    let key = match (wildcard, path.last()) {
                        (false, Some(last)) => last.clone(),
                        _ => "*".to_string(),
                    };
                    out.insert(key, format!("import {}", path.join(".")));
                }
                Import::JavaPackage { .. } => {}
                Import::Include { path, .. } => {
                    out.insert("*".to_string(), format!("#include {path}"));
                }
                Import::File { path, .. } => {
                    out.insert("*".to_string(), format!("require {path}"));
                }
                Import::Qualified {
                    path,
                    alias,
                    wildcard,
                } => {
                    let key = match (wildcard, alias, path.last()) {
                        (true, _, _) | (_, None, None) => "*".to_string(),
                        (false, Some(a), _) => a.clone(),
                        (false, None, Some(last)) => last.clone(),
                    };
                    out.insert(key, format!("import {}", path.join(".")));
                }
                Import::Js {
                    source,
                    names,
                    namespace,
                } => {
                    for (n, b) in names {
                        let key = if n == "*" { "*" } else { b.as_str() };
                        out.insert(key.to_string(), format!("import {n} from {source}"));
                    }
                    if let Some(ns) = namespace {
                        out.insert(ns.clone(), format!("import * from {source}"));
                    }
                }
            }
        }
        out
    }
}

/// An entity as the names index knows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NameRef {
    pub path: String,
    pub qualname: String,
    pub kind: Kind,
    /// For methods: the owning type's bare name. Always serialised: the
    /// names index is postcard, which cannot skip fields.
    pub owner: Option<String>,
}

/// The bare name an entity is called by: the last segment of its qualname,
/// without a collision suffix.
pub fn bare_name(qualname: &str) -> &str {
    let last = qualname.rsplit(['.', ':']).next().unwrap_or(qualname);
    last.split('#').next().unwrap_or(last)
}

/// The owning type's bare name of a method, from its qualname.
pub fn owner_of(qualname: &str) -> Option<&str> {
    let cut = qualname.rfind(['.', ':'])?;
    let parent = qualname[..cut].trim_end_matches(':');
    Some(parent.rsplit(['.', ':']).next().unwrap_or(parent))
}

/// The names-index entries of one file's entities.
pub fn name_refs(path: &str, entities: &[(String, Kind)]) -> Vec<(String, NameRef)> {
    entities
        .iter()
        .filter_map(|(q, k)| Some((indexed_name(q, *k)?.to_string(), name_ref(path, q, *k))))
        .collect()
}

/// The name an entity is filed under in the names index: its bare name;
/// files are not in the index.
pub fn indexed_name(qualname: &str, kind: Kind) -> Option<&str> {
    (kind != Kind::File).then(|| bare_name(qualname))
}

/// The names-index entry of one entity.
pub(crate) fn name_ref(path: &str, qualname: &str, kind: Kind) -> NameRef {
    NameRef {
        path: path.to_string(),
        qualname: qualname.to_string(),
        kind,
        owner: (kind == Kind::Method).then(|| owner_of(qualname).unwrap_or("").to_string()),
    }
}

/// Where the resolver reads symbols from.
pub trait SymbolSource {
    fn facts(&self, path: &str) -> Option<Arc<Facts>>;
    /// An indexed source file exists at `path`.
    fn is_file(&self, path: &str) -> bool;
    /// Some indexed source file lies under the directory `path`.
    fn is_dir(&self, path: &str) -> bool;
    /// Every entity in `slice` whose bare name is `name`, in a file of
    /// language `lang` or one of its [family](Lang::family). Sources filter
    /// before they copy: `new` has thousands of entries, `Foo`'s a few.
    fn named(&self, lang: Lang, name: &str, slice: Slice) -> Vec<NameRef>;
    /// [`SymbolSource::named`], or `None` when that holds more than
    /// [`deps::MANY`] entries. Sources should count before they copy.
    fn named_few(&self, lang: Lang, name: &str, slice: Slice) -> Option<Vec<NameRef>> {
        let all = self.named(lang, name, slice);
        (all.len() <= deps::MANY).then_some(all)
    }
    /// Cargo package names (underscored) → their `src` directory.
    fn crates(&self) -> &BTreeMap<String, String>;
    /// The kind of entity `qualname` in `path`, if it exists. Sources that
    /// can answer without parsing the file should.
    fn kind_of(&self, path: &str, qualname: &str) -> Option<Kind> {
        let f = self.facts(path)?;
        f.lookup(qualname).map(|i| f.parsed.entities[i].kind)
    }
    /// The first of `paths` that defines `qualname`, as
    /// [`SymbolSource::kind_of`] asked of each in turn would say. A C file
    /// asks this of its few dozen headers for each of its hundreds of
    /// calls, so sources that can answer all at once should.
    fn first_defining(&self, paths: &[String], qualname: &str) -> Option<usize> {
        paths
            .iter()
            .position(|p| self.kind_of(p, qualname).is_some())
    }
    /// Whether `path` might bind `name` by import (re-export it). `false`
    /// lets the resolver skip parsing the file.
    fn may_bind(&self, _path: &str, _name: &str) -> bool {
        true
    }
}

/// All files of a tree, in memory. The names index points into the
/// parses rather than copying their paths and qualnames: at a million
/// lines those copies were a tenth of what init held.
pub struct MemorySource {
    facts: Vec<Arc<Facts>>,
    files: FxHashMap<String, u32>,
    /// Every directory holding a file, at any depth.
    dirs: FxHashSet<String>,
    /// Language family → bare name → entries, in file and source order.
    names: FxHashMap<Lang, FxHashMap<String, Vec<Slot>>>,
    /// Language family → bare name → owning type → method entries.
    methods: FxHashMap<Lang, FxHashMap<String, FxHashMap<String, Vec<Slot>>>>,
    crates: BTreeMap<String, String>,
}

/// Entity `.1` of file `.0` of a [`MemorySource`], and its kind, which
/// most lookups filter on.
type Slot = (u32, u32, Kind);

impl MemorySource {
    pub fn new(facts: &[Arc<Facts>], crates: &BTreeMap<String, String>) -> MemorySource {
        let mut names: FxHashMap<Lang, FxHashMap<String, Vec<Slot>>> = FxHashMap::default();
        let mut methods: FxHashMap<Lang, FxHashMap<String, FxHashMap<String, Vec<Slot>>>> =
            FxHashMap::default();
        for (fi, f) in facts.iter().enumerate() {
            let family = f.lang.family();
            for (ei, e) in f.parsed.entities.iter().enumerate() {
                let slot = (fi as u32, ei as u32, e.kind);
                let name = bare_name(&e.qualname);
                if e.kind == Kind::Method {
                    methods
                        .entry(family)
                        .or_default()
                        .entry(name.to_string())
                        .or_default()
                        .entry(owner_of(&e.qualname).unwrap_or("").to_string())
                        .or_default()
                        .push(slot);
                }
                if let Some(name) = indexed_name(&e.qualname, e.kind) {
                    let by_name = names.entry(family).or_default();
                    match by_name.get_mut(name) {
                        Some(v) => v.push(slot),
                        None => {
                            by_name.insert(name.to_string(), vec![slot]);
                        }
                    }
                }
            }
        }
        let mut dirs = FxHashSet::default();
        for f in facts {
            let mut p = f.path.as_str();
            while let Some((d, _)) = p.rsplit_once('/') {
                if !dirs.insert(d.to_string()) {
                    break;
                }
                p = d;
            }
        }
        MemorySource {
            files: facts
                .iter()
                .enumerate()
                .map(|(i, f)| (f.path.clone(), i as u32))
                .collect(),
            facts: facts.to_vec(),
            dirs,
            names,
            methods,
            crates: underscored(crates),
        }
    }

    fn name_ref(&self, (fi, ei, _): Slot) -> NameRef {
        let f = &self.facts[fi as usize];
        let e = &f.parsed.entities[ei as usize];
        name_ref(&f.path, &e.qualname, e.kind)
    }

    fn admits(&self, slice: Slice, (fi, ei, kind): Slot) -> bool {
        if kind != Kind::Method || !matches!(slice, Slice::MethodsOf(_)) {
            return slice.admits(kind, None);
        }
        let e = &self.facts[fi as usize].parsed.entities[ei as usize];
        slice.admits(kind, Some(owner_of(&e.qualname).unwrap_or("")))
    }
}

/// The names index of some parsed files, keyed by language and bare name.
pub fn names_of(facts: &[Arc<Facts>]) -> HashMap<(Lang, String), Vec<NameRef>> {
    let mut names: HashMap<(Lang, String), Vec<NameRef>> = HashMap::new();
    for f in facts {
        let ents: Vec<(String, Kind)> = f
            .parsed
            .entities
            .iter()
            .map(|e| (e.qualname.clone(), e.kind))
            .collect();
        for (n, r) in name_refs(&f.path, &ents) {
            names.entry((f.lang.family(), n)).or_default().push(r);
        }
    }
    names
}

/// Crate names as `use` paths spell them.
pub fn underscored(crates: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    crates
        .iter()
        .map(|(k, v)| {
            // Only Cargo's own entries are crate names; the others are tagged.
            let tagged = [GO_MODULE, TS_PATHS, C_INCLUDE]
                .iter()
                .any(|t| k.starts_with(t));
            let k = if tagged {
                k.clone()
            } else {
                k.replace('-', "_")
            };
            (k, v.clone())
        })
        .collect()
}

impl SymbolSource for MemorySource {
    fn facts(&self, path: &str) -> Option<Arc<Facts>> {
        self.files
            .get(path)
            .map(|&i| self.facts[i as usize].clone())
    }
    fn is_file(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }
    fn is_dir(&self, path: &str) -> bool {
        self.dirs.contains(path)
    }
    fn named(&self, lang: Lang, name: &str, slice: Slice) -> Vec<NameRef> {
        let family = lang.family();
        if let Slice::MethodsOf(owner) = slice {
            let of = self.methods.get(&family).and_then(|m| m.get(name));
            let slots = of.and_then(|m| m.get(owner)).into_iter().flatten();
            return slots.map(|&s| self.name_ref(s)).collect();
        }
        let all = self.names.get(&family).and_then(|m| m.get(name));
        all.into_iter()
            .flatten()
            .filter(|&&s| self.admits(slice, s))
            .map(|&s| self.name_ref(s))
            .collect()
    }
    fn named_few(&self, lang: Lang, name: &str, slice: Slice) -> Option<Vec<NameRef>> {
        let all = self.names.get(&lang.family()).and_then(|m| m.get(name));
        let admitted = all
            .into_iter()
            .flatten()
            .filter(|&&s| self.admits(slice, s));
        // Counting stops past the bound: a common name (`probe`, `init`)
        // has more entries the larger the tree, and each caller asks.
        if admitted.clone().take(deps::MANY + 1).count() > deps::MANY {
            return None;
        }
        match slice {
            Slice::MethodsOf(_) => Some(self.named(lang, name, slice)),
            _ => Some(admitted.map(|&s| self.name_ref(s)).collect()),
        }
    }
    fn crates(&self) -> &BTreeMap<String, String> {
        &self.crates
    }
    fn first_defining(&self, paths: &[String], qualname: &str) -> Option<usize> {
        let h = qualname_hash(qualname);
        paths.iter().position(|p| {
            self.files
                .get(p.as_str())
                .is_some_and(|&i| self.facts[i as usize].lookup_hashed(h, qualname).is_some())
        })
    }
}

/// What a name or path refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Module(String),
    /// (path, qualname)
    Entity(String, String),
    /// A Go package: its directory.
    Package(String),
}

/// An entity as (path, qualname).
type Loc = (String, String);

/// A borrowed view of one entity of a shared [`Facts`].
struct EntRef {
    facts: Arc<Facts>,
    idx: usize,
}

impl std::ops::Deref for EntRef {
    type Target = ParsedEntity;
    fn deref(&self) -> &ParsedEntity {
        &self.facts.parsed.entities[self.idx]
    }
}

/// A fixed list of names kept as data, one per line (`names/*.txt`),
/// looked up through a set built on first use.
struct NameList {
    text: &'static str,
    set: std::sync::OnceLock<HashSet<&'static str>>,
}

impl NameList {
    const fn new(text: &'static str) -> NameList {
        NameList {
            text,
            set: std::sync::OnceLock::new(),
        }
    }

    fn contains(&self, name: &str) -> bool {
        self.set
            .get_or_init(|| self.text.lines().collect())
            .contains(name)
    }
}

/// Whether a bare name the file neither defines nor imports is one the
/// language gives every file: Rust's prelude, Python's builtins,
/// `java.lang`, JavaScript's globals. Such a name is never another file's
/// item of the same name (another crate's `struct From`, a module's
/// `def str`), however unique that item is.
fn provided_by_language(lang: Lang, name: &str) -> bool {
    match lang {
        Lang::Rust => rust::PRELUDE.contains(name),
        Lang::Python => python::BUILTINS.contains(name),
        Lang::Java => java::JAVA_LANG.contains(name),
        Lang::JavaScript | Lang::TypeScript => js::GLOBALS.contains(name),
        // A C program may define its own `malloc`; Go returns earlier.
        Lang::Go | Lang::C | Lang::Cpp => false,
        l => members::provided(l).is_some_and(|list| list.contains(name)),
    }
}

/// How many re-exports deep a file's imports are followed: a Rust crate
/// root re-exports a module that re-exports a submodule's item, and a
/// chain longer than this is more likely a cycle's echo than an API.
const REEXPORT_DEPTH: u32 = 6;

/// Method names too generic to link by uniqueness alone: a receiver of an
/// unknown type calling `get` is almost never the repository's one `get`.
#[rustfmt::skip]
const GENERIC_METHODS: &[&str] = &[
    "add", "append", "as_ref", "as_str", "clear", "clone", "close", "collect", "contains", "copy",
    "count", "decode", "default", "encode", "endswith", "expect", "extend", "find", "flush",
    "format", "from", "get", "index", "insert", "into", "is_empty", "items", "iter", "join",
    "keys", "len", "lower", "map", "new", "next", "open", "pop", "push", "read", "remove",
    "replace", "run", "send", "setdefault", "sort", "split", "startswith", "strip", "to_owned",
    "to_string", "unwrap", "update", "upper", "values", "write",
];

/// Resolves the edges of files against a [`SymbolSource`]. Steps shared
/// between files (a file's bindings, a name looked up in a module) are
/// cached with the reads they made, so each file's [`Deps`] stay whole.
pub struct Resolver<'s> {
    src: Recorded<'s>,
    bindings: Cached<String, Rc<Bindings>>,
    symbols: Cached<(String, String, u32), Option<Target>>,
    /// A directory, and the files its `#include`s name by the path
    /// written: the files of a directory include the same headers, and
    /// each lookup probes every directory above it. One directory at a
    /// time, as files come in path order, so the cache stays small.
    includes: ForOne<(Option<String>, Rc<Deps>)>,
    /// The file being resolved, and [`Resolver::resolve_outside`]'s
    /// answers for it. Its reads are in that file's frame from the first
    /// time each name is asked, so later askings need not make them again.
    outside: ForOne<Option<Loc>>,
}

/// Answers by key, each with the reads that made it.
type Cached<K, V> = RefCell<HashMap<K, (V, Rc<Deps>)>>;

/// Answers by key for one file or directory at a time, named first.
type ForOne<V> = RefCell<(String, FxHashMap<String, V>)>;

#[derive(Default)]
struct Bindings {
    names: HashMap<String, Target>,
    globs: Vec<String>,
    /// Packages whose names are all in scope: Go dot imports (a
    /// directory), Java wildcard imports (a directory suffix, `a/b`).
    packages: Vec<String>,
    /// A Java file's own package, as a directory suffix.
    own_package: Option<String>,
    /// Namespaces a wildcard import brings into scope, dotted: C#'s
    /// `using Shop.Util;`, Kotlin's and Scala's `import shop.util.*`,
    /// Swift's `import Shop`.
    namespaces: Vec<String>,
    /// Classes whose static members are all in scope: Java's
    /// `import static a.B.*`.
    static_classes: Vec<Loc>,
    imported_files: BTreeSet<String>,
    /// Names imported from outside the repository (`use std::ffi::OsStr`,
    /// `import java.util.List`): never a repository item.
    external: HashSet<String>,
}

/// `caller` and the entities around it, innermost first.
fn scopes(ents: &[ParsedEntity], caller: Option<usize>) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(caller, move |&s| ents[s].parent)
}

/// The classes among [`scopes`], innermost first.
fn enclosing_classes(
    ents: &[ParsedEntity],
    caller: Option<usize>,
) -> impl Iterator<Item = usize> + '_ {
    scopes(ents, caller).filter(move |&s| ents[s].kind == Kind::Class)
}

impl<'s> Resolver<'s> {
    pub fn new(src: &'s dyn SymbolSource) -> Resolver<'s> {
        Resolver {
            src: Recorded::new(src),
            bindings: RefCell::new(HashMap::new()),
            symbols: RefCell::new(HashMap::new()),
            includes: RefCell::default(),
            outside: RefCell::default(),
        }
    }

    /// The parsed entity, when its details (bases, parent) are needed.
    fn entity(&self, path: &str, qualname: &str) -> Option<EntRef> {
        let facts = self.src.facts(path)?;
        let idx = facts.lookup(qualname)?;
        Some(EntRef { facts, idx })
    }

    /// `qualname` if `path` defines it.
    fn lookup_qualname(&self, path: &str, qualname: &str) -> Option<String> {
        self.src
            .kind_of(path, qualname)
            .map(|_| qualname.to_string())
    }

    fn is_class(&self, loc: &Loc) -> bool {
        self.src.kind_of(&loc.0, &loc.1) == Some(Kind::Class)
    }

    /// All edges that start in `path`: imports, invokes, inherits (not contains).
    pub fn edges_of(&self, path: &str) -> Vec<Edge> {
        self.edges_and_deps(path).0
    }

    /// [`Resolver::edges_of`], with what resolving them read. The files the
    /// edges point into count as read: a file pointing into one that moves
    /// or loses the target must look again.
    pub fn edges_and_deps(&self, path: &str) -> (Vec<Edge>, Deps) {
        self.src.push();
        let edges = self.resolve_file(path);
        let mut deps = self.src.pop();
        for e in &edges {
            deps.paths
                .insert(self.src.intern(crate::graph::split_id(&e.dst).0));
            let from = crate::graph::split_id(&e.src).0;
            if from != path {
                deps.lends.insert(self.src.intern(from));
            }
        }
        (edges, deps)
    }

    fn resolve_file(&self, path: &str) -> Vec<Edge> {
        let Some(f) = self.src.facts(path) else {
            return Vec::new();
        };
        let f = &*f;
        let mut out = BTreeSet::new();
        {
            let mut memo = self.outside.borrow_mut();
            memo.0 = path.to_string();
            memo.1.clear();
        }
        let bindings = self.bindings(path);
        let file = Id::from(path);
        for target in &bindings.imported_files {
            if target != path {
                out.insert(Edge {
                    src: file.clone(),
                    kind: EdgeKind::Imports,
                    dst: target.into(),
                });
            }
        }
        let id_of =
            |loc: &Loc| -> Option<Id> { Some(crate::graph::entity_id(&loc.0, &loc.1).into()) };
        let own_id = |i: usize| {
            Id::from(crate::graph::entity_id(
                path,
                &f.parsed.entities[i].qualname,
            ))
        };
        for call in &f.parsed.file_calls {
            if let Some(loc) = self.resolve_call(f, None, call, &bindings) {
                if let Some(dst) = id_of(&loc) {
                    out.insert(Edge {
                        src: file.clone(),
                        kind: EdgeKind::Invokes,
                        dst,
                    });
                }
            }
        }
        for (i, e) in f.parsed.entities.iter().enumerate() {
            let src = own_id(i);
            for call in &e.calls {
                if let Some(loc) = self.resolve_call(f, Some(i), call, &bindings) {
                    if loc.0 == path && loc.1 == e.qualname {
                        continue;
                    }
                    if let Some(dst) = id_of(&loc) {
                        out.insert(Edge {
                            src: src.clone(),
                            kind: EdgeKind::Invokes,
                            dst,
                        });
                    }
                }
            }
            for base in &e.bases {
                if let Some(loc) = self.resolve_type_path(f, Some(i), base, &bindings) {
                    if let Some(dst) = id_of(&loc).filter(|d| *d != src) {
                        out.insert(Edge {
                            src: src.clone(),
                            kind: EdgeKind::Inherits,
                            dst,
                        });
                    }
                }
            }
        }
        for imp in &f.parsed.impls {
            let ty = vec![imp.self_type.clone()];
            let (Some(t), Some(tr)) = (
                self.resolve_type_path(f, None, &ty, &bindings),
                self.resolve_type_path(f, None, &imp.trait_path, &bindings),
            ) else {
                continue;
            };
            if self.is_class(&t) && self.is_class(&tr) && t != tr {
                if let (Some(src), Some(dst)) = (id_of(&t), id_of(&tr)) {
                    out.insert(Edge {
                        src,
                        kind: EdgeKind::Inherits,
                        dst,
                    });
                }
            }
        }
        self.package_imports(path, &bindings, &mut out);
        out.into_iter().collect()
    }

    /// Go and Java wildcard imports name packages, and C#, Kotlin and Scala
    /// ones namespaces, not files: the edge goes to each file of an
    /// imported package or namespace that this file's code uses.
    fn package_imports(&self, path: &str, b: &Bindings, out: &mut BTreeSet<Edge>) {
        let Some(lang) = Lang::from_path(path) else {
            return;
        };
        let packages: Vec<&String> = b
            .names
            .values()
            .filter_map(|t| match t {
                Target::Package(d) => Some(d),
                _ => None,
            })
            .chain(&b.packages)
            .collect();
        if packages.is_empty() && b.namespaces.is_empty() {
            return;
        }
        // Each namespace also as the directories it is laid out in, once.
        let namespaces: Vec<(&str, String)> = b
            .namespaces
            .iter()
            .map(|ns| (ns.as_str(), ns.replace('.', "/")))
            .collect();
        let imported = |(p, q): (&str, &str)| {
            p != path
                && (packages.iter().any(|d| in_package(lang, p, d))
                    || namespaces
                        .iter()
                        .any(|(ns, dir)| in_namespace(p, q, ns, dir)))
        };
        let used: BTreeSet<String> = out
            .iter()
            .filter(|e| e.kind != EdgeKind::Imports)
            .map(|e| crate::graph::split_id(&e.dst))
            .filter(|&target| imported(target))
            .map(|(p, _)| p.to_string())
            .collect();
        out.extend(used.into_iter().map(|dst| Edge {
            src: path.into(),
            kind: EdgeKind::Imports,
            dst: dst.into(),
        }));
    }

    // ---- bindings -------------------------------------------------------

    fn bindings(&self, path: &str) -> Rc<Bindings> {
        if let Some((b, d)) = self.bindings.borrow().get(path) {
            self.src.reuse(d);
            return b.clone();
        }
        // Seed an empty entry so import cycles terminate.
        let seed = (Rc::new(Bindings::default()), Rc::new(Deps::default()));
        self.bindings.borrow_mut().insert(path.to_string(), seed);
        self.src.push();
        let b = Rc::new(self.compute_bindings(path, REEXPORT_DEPTH));
        let d = Rc::new(self.src.pop());
        self.bindings
            .borrow_mut()
            .insert(path.to_string(), (b.clone(), d));
        b
    }

    fn compute_bindings(&self, path: &str, depth: u32) -> Bindings {
        let mut b = Bindings::default();
        let Some(f) = self.src.facts(path) else {
            return b;
        };
        for imp in &f.parsed.imports {
            self.bind_import(path, imp, depth, &mut b, None);
        }
        b
    }

    /// Resolve one import of `path` into `b`; with `only`, just the binding
    /// of that name (and glob imports, which might provide it).
    fn bind_import(
        &self,
        path: &str,
        imp: &Import,
        depth: u32,
        b: &mut Bindings,
        only: Option<&str>,
    ) {
        // Each language's import, as its rules bind it.
        match imp {
            Import::Python { .. } => self.bind_python(path, imp, depth, b, only),
            Import::RustUse { .. } => self.bind_rust_use(path, imp, depth, b, only),
            Import::RustMod { .. } => self.bind_rust_mod(path, imp, b, only),
            Import::Go { .. } => self.bind_go(imp, b, only),
            Import::JavaPackage { path: segs } => {
                b.own_package = Some(segs.join("/"));
            }
            // What a header defines is in scope where it is included.
            Import::Include { path: inc, .. } => {
                if let Some(file) = self.c_include(path, inc) {
                    b.imported_files.insert(file.clone());
                    b.globs.push(file);
                }
            }
            Import::Js { .. } => self.bind_js(path, imp, depth, b, only),
            Import::Java { .. } => self.bind_java(imp, b, only),
            Import::File {
                path: file,
                relative,
            } => self.bind_file(path, file, *relative, b),
            Import::Qualified { .. } => {
                if let Some(lang) = Lang::from_path(path) {
                    self.bind_qualified(lang, imp, b, only);
                }
            }
        }
    }

    /// The first (in path order) entity named `name` in package `pkg` whose
    /// kind `want` accepts. Build-tagged variants of one function are one
    /// package member; path order picks one deterministically.
    fn package_member(&self, lang: Lang, pkg: &str, name: &str, want: Slice) -> Option<Loc> {
        let mut hits: Vec<NameRef> = self
            .src
            .named(lang, name, want)
            .into_iter()
            .filter(|r| in_package(lang, &r.path, pkg))
            .collect();
        hits.sort();
        let h = hits.into_iter().next()?;
        Some((h.path, h.qualname))
    }

    /// A top-level name of module file `m`, following re-exports. Only the
    /// import that binds `name` is resolved, so asking about one name never
    /// resolves (or parses) everything `m` imports.
    fn symbol_in(&self, m: &str, name: &str, depth: u32) -> Option<Target> {
        if let Some(q) = self.lookup_qualname(m, name) {
            return Some(Target::Entity(m.to_string(), q));
        }
        if depth == 0 || !self.src.may_bind(m, name) {
            return None;
        }
        // By depth too: an answer cut short by a shallow search must not
        // stand for a deeper one, or edges would depend on the order in
        // which files are resolved.
        let key = (m.to_string(), name.to_string(), depth);
        if let Some((hit, d)) = self.symbols.borrow().get(&key) {
            self.src.reuse(d);
            return hit.clone();
        }
        // Seed the cache so a re-export cycle ends.
        let seed = (None, Rc::new(Deps::default()));
        self.symbols.borrow_mut().insert(key.clone(), seed);
        self.src.push();
        let found = (|| {
            let f = self.src.facts(m)?;
            let mut b = Bindings::default();
            for imp in &f.parsed.imports {
                self.bind_import(m, imp, depth - 1, &mut b, Some(name));
                if let Some(t) = b.names.get(name) {
                    return Some(t.clone());
                }
            }
            let g = self.src.first_defining(&b.globs, name)?;
            Some(Target::Entity(b.globs[g].clone(), name.to_string()))
        })();
        let d = Rc::new(self.src.pop());
        self.symbols.borrow_mut().insert(key, (found.clone(), d));
        found
    }

    // ---- calls ----------------------------------------------------------

    fn resolve_call(
        &self,
        f: &Facts,
        caller: Option<usize>,
        call: &Call,
        b: &Bindings,
    ) -> Option<Loc> {
        match call {
            Call::Name(n) if f.lang == Lang::Java => self.java_unqualified(f, caller, n, b),
            Call::Name(n) if f.lang.is_c() => caller
                .and_then(|c| self.owner_method(f, c, n))
                .or_else(|| self.resolve_name(f, caller, n, b)),
            Call::Name(n) if members::calls_members_by_name(f.lang) => {
                self.member_or_name(f, caller, n, b)
            }
            Call::Name(n) => self.resolve_name(f, caller, n, b),
            Call::SelfMethod(n) => self.resolve_self_method(f, caller?, n),
            Call::Attr { recv, name } => self.resolve_attr(f, caller, recv, name, b),
            Call::Path(segs) => self.resolve_rust_call_path(f, caller, segs, b),
            Call::Macro(n) => self.resolve_macro(f, n, b),
            Call::Typed { ty, name } => self.resolve_typed(f, caller, ty, name, b),
        }
    }

    /// `x.name()` where `x` is declared as `ty`.
    fn resolve_typed(
        &self,
        f: &Facts,
        caller: Option<usize>,
        ty: &[String],
        name: &str,
        b: &Bindings,
    ) -> Option<Loc> {
        match f.lang {
            l if members::is_member_language(l) => self.member_of_type(f, caller, ty, name, b),
            Lang::Go => {
                let (dir, t) = self.go_type(f, ty, b)?;
                self.go_method(&dir, &t, name, 0)
            }
            // `x.f()` with `x` declared `T`, `T::f()`, `ns::f()`, `new T`.
            Lang::C | Lang::Cpp => {
                let written = ty.join("::");
                let short = ty.last()?;
                if let Some(m) = self.typed_method(f.lang, &f.path, short, name) {
                    return Some(m);
                }
                if let Some((p, q)) = self.cpp_class(f, &written) {
                    // `new T(…)` is T's constructor, or T when it has none.
                    let ctor = name == short;
                    return self
                        .python_method(&p, &q, name, 0)
                        .or(ctor.then_some((p, q)));
                }
                // A namespace-qualified free function.
                let full = format!("{written}::{name}");
                let tail = format!("::{full}");
                self.unique(
                    self.src
                        .named(f.lang, name, Slice::All)
                        .into_iter()
                        .filter(|r| {
                            r.qualname == full || r.qualname.ends_with(&tail) || r.qualname == *name
                        }),
                )
            }
            // `new C()`: C's constructor, else C itself (a class, or an
            // ES5 constructor function).
            Lang::JavaScript | Lang::TypeScript => {
                let (p, q) = self.type_loc(f, caller, ty, b)?;
                match self.src.kind_of(&p, &q)? {
                    Kind::Class => self.python_method(&p, &q, name, 0).or(Some((p, q))),
                    Kind::Function => Some((p, q)),
                    _ => None,
                }
            }
            _ => {
                let (p, q) = self.java_type(f, caller, ty, b)?;
                self.python_method(&p, &q, name, 0)
            }
        }
    }

    /// Same scope, then imported names, then what the language provides,
    /// then a repository-unique name.
    fn resolve_name(&self, f: &Facts, caller: Option<usize>, n: &str, b: &Bindings) -> Option<Loc> {
        let ents = &f.parsed.entities;
        // Enclosing scopes, innermost first. Python class bodies are not
        // enclosing scopes for names used inside methods.
        for e in scopes(ents, caller).map(|s| &ents[s]) {
            // Go declares nothing inside functions, and a type's methods
            // are never called by bare name.
            let encloses = match f.lang {
                Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Php => {
                    e.kind != Kind::Class
                }
                Lang::Go => false,
                Lang::Rust | Lang::Java | Lang::C | Lang::Cpp => true,
                Lang::CSharp | Lang::Ruby | Lang::Kotlin | Lang::Swift | Lang::Scala => true,
                Lang::Bash => true,
            };
            if encloses {
                let q = format!("{}{}{}", e.qualname, f.lang.separator(), n);
                if let Some(i) = self.lookup_qualname(&f.path, &q) {
                    return Some((f.path.to_string(), i));
                }
            }
        }
        // Module level (for Rust, the inline module the caller sits in).
        let module_prefix = caller.map(|c| self.module_prefix(f, c)).unwrap_or_default();
        let q = if module_prefix.is_empty() {
            n.to_string()
        } else {
            format!("{module_prefix}::{n}")
        };
        if let Some(i) = self.lookup_qualname(&f.path, &q) {
            return Some((f.path.to_string(), i));
        }
        // Only the file being resolved, asked in its own frame, may reuse
        // an answer: a cached step's frame must make its reads itself.
        let memo = self.src.depth() == 1 && self.outside.borrow().0 == f.path;
        if !memo {
            return self.resolve_outside(f, n, b);
        }
        if let Some(hit) = self.outside.borrow().1.get(n) {
            return hit.clone();
        }
        let hit = self.resolve_outside(f, n, b);
        self.outside
            .borrow_mut()
            .1
            .insert(n.to_string(), hit.clone());
        hit
    }

    /// `n` where the file being resolved does not define it: what it
    /// imports, then what the language provides, then a repository-unique
    /// name. This depends on the file and the name alone, and a file calls
    /// the same names again and again (a C file's calls each look into
    /// every included header), so [`Resolver::resolve_name`] asks it once
    /// a name per file.
    fn resolve_outside(&self, f: &Facts, n: &str, b: &Bindings) -> Option<Loc> {
        if let Some(t) = b.names.get(n) {
            return match t {
                Target::Entity(p, i) => Some((p.clone(), i.clone())),
                // `const Layer = require('./layer')`: the module's own Layer.
                Target::Module(m) if f.lang.is_js() => {
                    self.lookup_qualname(m, n).map(|i| (m.clone(), i))
                }
                Target::Module(_) | Target::Package(_) => None,
            };
        }
        // An explicit import shadows globs and any same-named item.
        if b.external.contains(n) {
            return None;
        }
        if let Some(g) = self.src.first_defining(&b.globs, n) {
            return Some((b.globs[g].clone(), n.to_string()));
        }
        if matches!(f.lang, Lang::Go | Lang::Java) {
            let not_method = Slice::Free;
            let own = crate::graph::dir_of(&f.path).to_string();
            let found = std::iter::once(&own)
                .chain(&b.own_package)
                .chain(&b.packages)
                .find_map(|pkg| self.package_member(f.lang, pkg, n, not_method));
            // A Go name is its package's or a dot import's, never another's.
            if found.is_some() || f.lang == Lang::Go {
                return found;
            }
        }
        if provided_by_language(f.lang, n) {
            return None;
        }
        // A macro is called as a function is.
        let free = if f.lang.is_c() {
            Slice::FreeOrMacro
        } else {
            Slice::Free
        };
        let mut found = self.src.named_few(f.lang, n, free)?;
        if members::is_member_language(f.lang) && found.len() > 1 {
            found.sort();
            return self.one_type(&found);
        }
        self.unique(found.into_iter())
    }

    fn resolve_self_method(&self, f: &Facts, caller: usize, n: &str) -> Option<Loc> {
        let ents = &f.parsed.entities;
        // The nearest enclosing method tells the type.
        let owner = scopes(ents, Some(caller)).find_map(|c| ents[c].owner_type.clone())?;
        match f.lang {
            Lang::Python | Lang::Java => {
                let class = self.lookup_qualname(&f.path, &owner)?;
                self.python_method(&f.path, &class, n, 0)
            }
            // `this.n()` in a class method, or in `proto.m`: a sibling.
            Lang::JavaScript | Lang::TypeScript => match self.lookup_qualname(&f.path, &owner) {
                Some(class) => self.python_method(&f.path, &class, n, 0),
                None => self
                    .lookup_qualname(&f.path, &format!("{owner}.{n}"))
                    .map(|q| (f.path.clone(), q)),
            },
            Lang::Rust => {
                let short = owner.rsplit("::").next().unwrap_or(&owner);
                self.rust_method(&f.path, short, n)
            }
            Lang::Go => self.go_method(crate::graph::dir_of(&f.path), &owner, n, 0),
            Lang::C | Lang::Cpp => self.owner_method(f, caller, n),
            // `this.n()`, `self.n`, `$this->n()`: the type's own or its
            // bases', else one written apart (an extension, a partial class).
            _ => match self.lookup_qualname(&f.path, &owner) {
                Some(class) => self.own_member(f.lang, &f.path, &class, n),
                None => self.typed_method(f.lang, &f.path, bare_name(&owner), n),
            },
        }
    }

    /// `n` as a member of the type owning the caller (an in-class or an
    /// out-of-line `A::f` definition): its own method, then its bases'.
    fn owner_method(&self, f: &Facts, caller: usize, n: &str) -> Option<Loc> {
        let ents = &f.parsed.entities;
        let owner = scopes(ents, Some(caller)).find_map(|c| ents[c].owner_type.as_ref())?;
        let short = owner.rsplit("::").next().unwrap_or(owner);
        if let Some(m) = self.typed_method(f.lang, &f.path, short, n) {
            return Some(m);
        }
        let class = self.cpp_class(f, owner)?;
        self.python_method(&class.0, &class.1, n, 0)
    }

    /// Method `n` whose owning type is named `ty`: the one in `path`, else
    /// the one in the repository.
    fn typed_method(&self, lang: Lang, path: &str, ty: &str, n: &str) -> Option<Loc> {
        let mut cands: Vec<NameRef> = self.src.named(lang, n, Slice::MethodsOf(ty));
        // Sources list candidates in their own order; of several in this
        // file (C++ nests many an `Impl`), the first in id order, as
        // `package_member` picks.
        cands.sort();
        if let Some(c) = cands.iter().find(|c| c.path == path) {
            return self
                .lookup_qualname(&c.path, &c.qualname)
                .map(|i| (c.path.clone(), i));
        }
        self.unique(cands.into_iter())
    }

    fn resolve_attr(
        &self,
        f: &Facts,
        caller: Option<usize>,
        recv: &str,
        name: &str,
        b: &Bindings,
    ) -> Option<Loc> {
        if !recv.is_empty() && f.lang.is_js() {
            // `utils.f()` on an object literal or namespace this file defines.
            if let Some(q) = self.lookup_qualname(&f.path, &format!("{recv}.{name}")) {
                return Some((f.path.clone(), q));
            }
        }
        if !recv.is_empty() {
            // A member of something imported from outside the repository
            // (a Go package, a Python standard module) is no repository
            // item, however its name is spelt.
            if b.external.contains(recv) && !b.names.contains_key(recv) {
                return None;
            }
            match b.names.get(recv) {
                Some(Target::Module(m)) => {
                    let found = self.lookup_qualname(m, name).or_else(|| {
                        // `const app = require('./app')` where the module
                        // exports the object it calls `app`.
                        f.lang
                            .is_js()
                            .then(|| self.lookup_qualname(m, &format!("{recv}.{name}")))
                            .flatten()
                    });
                    return found.map(|i| (m.clone(), i));
                }
                Some(Target::Package(dir)) => {
                    return self.package_member(f.lang, dir, name, Slice::Free);
                }
                Some(Target::Entity(p, q)) => {
                    if self.src.kind_of(p, q) == Some(Kind::Class) {
                        return match f.lang {
                            Lang::Python
                            | Lang::Java
                            | Lang::JavaScript
                            | Lang::TypeScript
                            | Lang::C
                            | Lang::Cpp => self.python_method(p, q, name, 0),
                            Lang::Rust => self.rust_method(p, bare_name(q), name),
                            Lang::Go => {
                                self.go_method(crate::graph::dir_of(p), bare_name(q), name, 0)
                            }
                            _ => self.own_member(f.lang, p, q, name),
                        };
                    }
                }
                None => {
                    let by_name = matches!(f.lang, Lang::Python | Lang::Java)
                        || f.lang.is_js()
                        || members::is_member_language(f.lang);
                    if by_name {
                        if let Some(c) = self.resolve_name(f, caller, recv, b) {
                            if self.is_class(&c) {
                                return self.python_method(&c.0, &c.1, name, 0);
                            }
                        }
                    }
                }
            }
        }
        if GENERIC_METHODS.contains(&name) || name.starts_with("__") {
            return None;
        }
        let methods: Vec<NameRef> = self.src.named_few(f.lang, name, Slice::Methods)?;
        if methods.len() < 2 {
            return self.unique(methods.into_iter());
        }
        // A trait's required method only declares what its impls define: a
        // call goes to the one definition, if there is one.
        self.unique(methods.into_iter().filter(|r| {
            self.entity(&r.path, &r.qualname)
                .is_none_or(|e| e.facts.parsed.entities[e.idx].flavor != crate::parse::REQUIRED)
        }))
    }

    /// A base class or trait path, resolved to a class entity.
    fn resolve_type_path(
        &self,
        f: &Facts,
        at: Option<usize>,
        segs: &[String],
        b: &Bindings,
    ) -> Option<Loc> {
        let parent = at.and_then(|i| f.parsed.entities[i].parent);
        let loc = self.type_loc(f, parent, segs, b)?;
        self.is_class(&loc).then_some(loc)
    }

    /// What a type path names, seen from scope `at`, class or not.
    fn type_loc(
        &self,
        f: &Facts,
        parent: Option<usize>,
        segs: &[String],
        b: &Bindings,
    ) -> Option<Loc> {
        match segs {
            [] => None,
            [one] => self.resolve_name(f, parent, one, b),
            _ => match f.lang {
                Lang::Python => match b.names.get(&segs[0]) {
                    Some(Target::Module(m)) => {
                        let rest = &segs[1..];
                        self.py_dotted_in(m, rest)
                    }
                    _ => None,
                },
                Lang::Rust => match self.rust_path(&f.path, &[], segs, REEXPORT_DEPTH) {
                    Some(Target::Entity(p, i)) => Some((p, i)),
                    _ => None,
                },
                Lang::Go => match b.names.get(&segs[0]) {
                    Some(Target::Package(d)) if segs.len() == 2 => {
                        self.package_member(Lang::Go, d, &segs[1], Slice::Classes)
                    }
                    _ => None,
                },
                Lang::Java => self.java_type(f, parent, segs, b),
                Lang::JavaScript | Lang::TypeScript => match b.names.get(&segs[0]) {
                    Some(Target::Module(m)) => {
                        let q = segs[1..].join(".");
                        self.lookup_qualname(m, &q).map(|q| (m.clone(), q))
                    }
                    _ => None,
                },
                Lang::C | Lang::Cpp => self.cpp_class(f, &segs.join("::")),
                _ => self.java_type(f, parent, segs, b),
            },
        }
    }

    /// The one candidate, when there is exactly one.
    fn unique(&self, mut cands: impl Iterator<Item = NameRef>) -> Option<Loc> {
        let one = cands.next()?;
        if cands.next().is_some() {
            return None;
        }
        self.lookup_qualname(&one.path, &one.qualname)
            .map(|i| (one.path, i))
    }
}

/// Whether a binding of `n` is wanted: every one, or just `only`.
fn wants(only: Option<&str>, n: &str) -> bool {
    only.is_none_or(|o| o == n)
}

/// Whether `path` lies in package `pkg`: the directory itself (Go), or a
/// directory ending in the package's path (Java's source roots vary).
fn in_package(lang: Lang, path: &str, pkg: &str) -> bool {
    let dir = crate::graph::dir_of(path);
    dir == pkg
        || (lang == Lang::Java && dir.ends_with(pkg) && dir[..dir.len() - pkg.len()].ends_with('/'))
}

/// Whether the entity `qualname` of `path` is in namespace `ns` (dotted,
/// and as directories `dir`): its qualname says so (C# names carry their
/// namespace), or its file lies in those directories (Kotlin, Scala and
/// Swift lay packages and modules out so).
fn in_namespace(path: &str, qualname: &str, ns: &str, dir: &str) -> bool {
    let named = qualname
        .strip_prefix(ns)
        .is_some_and(|rest| rest.starts_with('.'));
    named || is_path_suffix(crate::graph::dir_of(path), dir)
}

/// `path` is `suffix` or ends with `/suffix`.
fn is_path_suffix(path: &str, suffix: &str) -> bool {
    path == suffix || path.strip_suffix(suffix).is_some_and(|p| p.ends_with('/'))
}

#[cfg(test)]
mod name_list_tests {
    use super::*;

    #[test]
    fn each_language_list_is_one_distinct_name_a_line() {
        for list in [
            &rust::PRELUDE,
            &python::BUILTINS,
            &java::JAVA_LANG,
            &js::GLOBALS,
            &members::CSHARP,
            &members::PHP,
            &members::RUBY,
            &members::KOTLIN,
            &members::SWIFT,
            &members::SCALA,
            &members::BASH,
        ] {
            let lines: Vec<&str> = list.text.lines().collect();
            let set: HashSet<&str> = lines.iter().copied().collect();
            assert_eq!(set.len(), lines.len(), "a name listed twice");
            assert!(lines.iter().all(|l| !l.is_empty() && l.trim() == *l));
        }
        assert!(rust::PRELUDE.contains("Ok") && rust::PRELUDE.contains("bool"));
        assert!(python::BUILTINS.contains("__import__") && !python::BUILTINS.contains("unicode"));
        assert!(java::JAVA_LANG.contains("String") && js::GLOBALS.contains("setTimeout"));
    }
}

#[cfg(test)]
mod lookup_tests {
    use super::*;

    #[test]
    fn every_qualname_of_a_file_is_found_at_its_entity_and_no_other_name_is() {
        let src: String = (0..3_000)
            .map(|i| format!("class C{i}:\n    def m(self):\n        pass\n"))
            .collect();
        let parsed = crate::parse::parse(Lang::Python, "a.py", &src);
        let f = Facts::new("a.py".into(), Lang::Python, parsed.clone());
        assert_eq!(parsed.entities.len(), 6_000);
        for (i, e) in parsed.entities.iter().enumerate() {
            assert_eq!(f.lookup(&e.qualname), Some(i), "{}", e.qualname);
        }
        for absent in ["C3000", "C1.n", "m", "", "C1.m.x"] {
            assert_eq!(f.lookup(absent), None, "{absent}");
        }
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    const TREE: &[(&str, &str)] = &[
        (
            "include/linux/list.h",
            "#define LIST_MAX 4\nstatic inline void list_add(int x) { }\n",
        ),
        ("drivers/net/local.h", "static void helper(void) { }\n"),
        (
            "drivers/net/a.c",
            "#include <linux/list.h>\n#include \"local.h\"\n\
             void a_probe(void) { list_add(1); list_add(LIST_MAX); helper(); missing(); }\n",
        ),
        (
            "drivers/net/b.c",
            "#include <linux/list.h>\nvoid b_probe(void) { list_add(3); missing(); a_probe(); }\n",
        ),
        (
            "drivers/net/sub/c.c",
            "#include <linux/list.h>\n#include \"../local.h\"\n\
             void c_probe(void) { helper(); a_probe(); missing(); }\n",
        ),
        (
            "kernel/d.c",
            "#include <linux/list.h>\nvoid d(void) { list_add(4); b_probe(); }\n",
        ),
        (
            "pkg/base.py",
            "def helper():\n    pass\n\nclass Base:\n    def run(self):\n        helper()\n",
        ),
        (
            "pkg/child.py",
            "from pkg.base import Base\n\nclass Child(Base):\n    def go(self):\n        self.run()\n        helper()\n",
        ),
    ];

    /// The resolver keeps answers between files (bindings, includes, a
    /// file's names); each must come with the reads that made it, or an
    /// update would miss a file whose edges a change can alter.
    #[test]
    fn a_file_reads_the_same_whether_resolved_alone_or_after_its_neighbours() {
        let facts: Vec<Arc<Facts>> = TREE
            .iter()
            .map(|(path, text)| {
                let lang = Lang::from_path(path).expect("a source file");
                let parsed = crate::parse::parse(lang, path, text);
                Arc::new(Facts::new(path.to_string(), lang, parsed))
            })
            .collect();
        let src = MemorySource::new(&facts, &BTreeMap::new());
        let shared = Resolver::new(&src);
        for (path, _) in TREE {
            let after = shared.edges_and_deps(path);
            let alone = Resolver::new(&src).edges_and_deps(path);
            assert_eq!(after, alone, "{path}");
        }
        let (edges, deps) = Resolver::new(&src).edges_and_deps("drivers/net/b.c");
        let dst: Vec<&str> = edges.iter().map(|e| &*e.dst).collect();
        assert!(dst.contains(&"include/linux/list.h:list_add"), "{dst:?}");
        assert!(dst.contains(&"drivers/net/a.c:a_probe"), "{dst:?}");
        // The miss beside the file is a read: a header added there wins.
        assert!(
            deps.paths.iter().any(|p| &**p == "drivers/net/linux"),
            "{deps:?}"
        );
    }
}
