//! Dependency resolution: imports to files, calls and base classes to the
//! exact entities they name. Every edge starts at the entity that contains
//! the call; nothing is attached by bare name unless the name is unique.
//!
//! The resolver reads symbols through [`SymbolSource`], so the same rules
//! run over a whole tree in memory (`init`) and over the store plus the
//! changed files (`update`).

use super::{Edge, EdgeKind};
use crate::parse::{Call, Import, Kind, Lang, ParsedEntity, ParsedFile};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::Arc;

/// A parsed file as the resolver sees it.
#[derive(Debug)]
pub struct Facts {
    pub path: String,
    pub lang: Lang,
    pub parsed: ParsedFile,
    qualnames: HashMap<String, usize>,
}

impl Facts {
    pub fn new(path: String, lang: Lang, parsed: ParsedFile) -> Facts {
        let qualnames = parsed
            .entities
            .iter()
            .enumerate()
            .map(|(i, e)| (e.qualname.clone(), i))
            .collect();
        Facts {
            path,
            lang,
            parsed,
            qualnames,
        }
    }

    pub fn lookup(&self, qualname: &str) -> Option<usize> {
        self.qualnames.get(qualname).copied()
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

    /// Every name this file looks up while resolving: an edit that adds,
    /// removes or renames one of these may change this file's edges.
    pub fn mentions(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut add_call = |c: &Call| match c {
            Call::Name(n) | Call::SelfMethod(n) | Call::Macro(n) => {
                out.insert(n.clone());
            }
            Call::Attr { recv, name } => {
                out.insert(name.clone());
                if !recv.is_empty() {
                    out.insert(recv.clone());
                }
            }
            Call::Path(segs) => out.extend(segs.iter().cloned()),
            Call::Typed { ty, name } => {
                out.extend(ty.iter().cloned());
                out.insert(name.clone());
            }
        };
        for c in &self.parsed.file_calls {
            add_call(c);
        }
        for e in &self.parsed.entities {
            for c in &e.calls {
                add_call(c);
            }
        }
        for e in &self.parsed.entities {
            for b in &e.bases {
                out.extend(b.iter().cloned());
            }
        }
        for i in &self.parsed.impls {
            out.insert(i.self_type.clone());
            out.extend(i.trait_path.iter().cloned());
        }
        for imp in &self.parsed.imports {
            match imp {
                Import::Python {
                    module,
                    names,
                    alias,
                    ..
                } => {
                    out.extend(module.iter().cloned());
                    for (n, b) in names {
                        out.insert(n.clone());
                        out.insert(b.clone());
                    }
                    out.extend(alias.iter().cloned());
                }
                Import::RustUse { path, bound_as, .. } => {
                    out.extend(path.iter().cloned());
                    out.insert(bound_as.clone());
                }
                Import::RustMod { name, .. } => {
                    out.insert(name.clone());
                }
                Import::Go { path, alias } => {
                    out.extend(path.split('/').map(str::to_string));
                    out.extend(alias.iter().cloned());
                }
                Import::Java { path, .. } | Import::JavaPackage { path } => {
                    out.extend(path.iter().cloned())
                }
                Import::Include { path, .. } => out.extend(
                    path.split('/')
                        .map(|s| s.split('.').next().unwrap_or(s).to_string()),
                ),
                Import::Js {
                    source,
                    names,
                    namespace,
                } => {
                    // A module answers to its stem or, for `index.*`, its
                    // directory: both are path segments here.
                    out.extend(
                        source
                            .split('/')
                            .map(|s| s.split('.').next().unwrap_or(s).to_string()),
                    );
                    for (n, b) in names {
                        out.insert(n.clone());
                        out.insert(b.clone());
                    }
                    out.extend(namespace.iter().cloned());
                }
            }
        }
        out.retain(|n| !n.is_empty() && n != "*" && n != "self" && n != "super" && n != "crate");
        out
    }
}

/// An entity as the names index knows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NameRef {
    pub path: String,
    pub qualname: String,
    pub kind: Kind,
    /// For methods: the owning type's bare name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
        .filter(|(_, k)| *k != Kind::File)
        .map(|(q, k)| {
            (
                bare_name(q).to_string(),
                NameRef {
                    path: path.to_string(),
                    qualname: q.clone(),
                    kind: *k,
                    owner: (*k == Kind::Method).then(|| owner_of(q).unwrap_or("").to_string()),
                },
            )
        })
        .collect()
}

/// Where the resolver reads symbols from.
pub trait SymbolSource {
    fn facts(&self, path: &str) -> Option<Arc<Facts>>;
    /// An indexed source file exists at `path`.
    fn is_file(&self, path: &str) -> bool;
    /// Every entity whose bare name is `name`, in a file of language `lang`
    /// or one of its [family](Lang::family).
    fn named(&self, lang: Lang, name: &str) -> Vec<NameRef>;
    /// Cargo package names (underscored) → their `src` directory.
    fn crates(&self) -> &BTreeMap<String, String>;
    /// The kind of entity `qualname` in `path`, if it exists. Sources that
    /// can answer without parsing the file should.
    fn kind_of(&self, path: &str, qualname: &str) -> Option<Kind> {
        let f = self.facts(path)?;
        f.lookup(qualname).map(|i| f.parsed.entities[i].kind)
    }
    /// Whether `path` might bind `name` by import (re-export it). `false`
    /// lets the resolver skip parsing the file.
    fn may_bind(&self, _path: &str, _name: &str) -> bool {
        true
    }
}

/// All files of a tree, in memory.
pub struct MemorySource {
    files: HashMap<String, Arc<Facts>>,
    names: HashMap<(Lang, String), Vec<NameRef>>,
    crates: BTreeMap<String, String>,
}

impl MemorySource {
    pub fn new(facts: &[Arc<Facts>], crates: &BTreeMap<String, String>) -> MemorySource {
        MemorySource {
            files: facts.iter().map(|f| (f.path.clone(), f.clone())).collect(),
            names: names_of(facts),
            crates: underscored(crates),
        }
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
        .map(|(k, v)| match k.starts_with(GO_MODULE) {
            _ if k.starts_with(TS_PATHS) => (k.clone(), v.clone()),
            true => (k.clone(), v.clone()),
            false => (k.replace('-', "_"), v.clone()),
        })
        .collect()
}

impl SymbolSource for MemorySource {
    fn facts(&self, path: &str) -> Option<Arc<Facts>> {
        self.files.get(path).cloned()
    }
    fn is_file(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }
    fn named(&self, lang: Lang, name: &str) -> Vec<NameRef> {
        self.names
            .get(&(lang.family(), name.to_string()))
            .cloned()
            .unwrap_or_default()
    }
    fn crates(&self) -> &BTreeMap<String, String> {
        &self.crates
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

/// Resolves the edges of files against a [`SymbolSource`].
pub struct Resolver<'s> {
    src: &'s dyn SymbolSource,
    bindings: RefCell<HashMap<String, Rc<Bindings>>>,
    symbols: RefCell<HashMap<(String, String), Option<Target>>>,
}

#[derive(Default)]
struct Bindings {
    names: HashMap<String, Target>,
    globs: Vec<String>,
    /// Packages whose names are all in scope: Go dot imports (a
    /// directory), Java wildcard imports (a directory suffix, `a/b`).
    packages: Vec<String>,
    /// A Java file's own package, as a directory suffix.
    own_package: Option<String>,
    imported_files: BTreeSet<String>,
}

impl<'s> Resolver<'s> {
    pub fn new(src: &'s dyn SymbolSource) -> Resolver<'s> {
        Resolver {
            src,
            bindings: RefCell::new(HashMap::new()),
            symbols: RefCell::new(HashMap::new()),
        }
    }

    /// The file a dotted Python module names, under the root, `src/` or `lib/`.
    fn py_module(&self, dotted: &str) -> Option<String> {
        if dotted.is_empty() {
            return None;
        }
        let rel = dotted.replace('.', "/");
        for root in ["", "src/", "lib/"] {
            for cand in [
                format!("{root}{rel}.py"),
                format!("{root}{rel}/__init__.py"),
                format!("{root}{rel}.pyi"),
                format!("{root}{rel}/__init__.pyi"),
            ] {
                if self.src.is_file(&cand) {
                    return Some(cand);
                }
            }
        }
        None
    }

    /// A Python file's own dotted name (layout prefix stripped).
    fn py_file_mod(&self, path: &str) -> Option<Vec<String>> {
        let stem = path
            .strip_suffix(".py")
            .or_else(|| path.strip_suffix(".pyi"))?;
        let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
        if parts.last().is_some_and(|p| p == "__init__") {
            parts.pop();
        }
        if parts.len() > 1 && matches!(parts[0].as_str(), "src" | "lib") {
            parts.remove(0);
        }
        (!parts.is_empty()).then_some(parts)
    }

    /// The file of Rust module `modpath` in the crate rooted at `krate`.
    fn rs_module(&self, krate: &str, modpath: &[String]) -> Option<String> {
        let base = if krate == "." {
            String::new()
        } else {
            format!("{krate}/")
        };
        let cands: Vec<String> = if modpath.is_empty() {
            vec![format!("{base}lib.rs"), format!("{base}main.rs")]
        } else {
            let rel = modpath.join("/");
            vec![format!("{base}{rel}.rs"), format!("{base}{rel}/mod.rs")]
        };
        cands.into_iter().find(|c| self.src.is_file(c))
    }

    fn rs_file_mod(&self, path: &str) -> Option<(String, Vec<String>)> {
        path.ends_with(".rs").then(|| rust_module_of(path))
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
        let Some(f) = self.src.facts(path) else {
            return Vec::new();
        };
        let f = &*f;
        let mut out = BTreeSet::new();
        let bindings = self.bindings(path, 4);
        for target in &bindings.imported_files {
            if target != path {
                out.insert(Edge {
                    src: path.to_string(),
                    kind: EdgeKind::Imports,
                    dst: target.clone(),
                });
            }
        }
        let id_of = |loc: &Loc| -> Option<String> { Some(crate::graph::entity_id(&loc.0, &loc.1)) };
        let own_id = |i: usize| crate::graph::entity_id(path, &f.parsed.entities[i].qualname);
        for call in &f.parsed.file_calls {
            if let Some(loc) = self.resolve_call(f, None, call, &bindings) {
                if let Some(dst) = id_of(&loc) {
                    out.insert(Edge {
                        src: path.to_string(),
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

    /// Go and Java wildcard imports name packages, not files: the edge goes
    /// to each file of an imported package that this file's code uses.
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
        if packages.is_empty() {
            return;
        }
        let used: BTreeSet<String> = out
            .iter()
            .filter(|e| e.kind != EdgeKind::Imports)
            .map(|e| crate::graph::split_id(&e.dst).0.to_string())
            .filter(|p| p != path && packages.iter().any(|d| in_package(lang, p, d)))
            .collect();
        out.extend(used.into_iter().map(|dst| Edge {
            src: path.to_string(),
            kind: EdgeKind::Imports,
            dst,
        }));
    }

    // ---- bindings -------------------------------------------------------

    fn bindings(&self, path: &str, depth: u32) -> Rc<Bindings> {
        if let Some(b) = self.bindings.borrow().get(path) {
            return b.clone();
        }
        // Seed an empty entry so import cycles terminate.
        self.bindings
            .borrow_mut()
            .insert(path.to_string(), Rc::new(Bindings::default()));
        let b = Rc::new(self.compute_bindings(path, depth));
        self.bindings
            .borrow_mut()
            .insert(path.to_string(), b.clone());
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
        }
    }

    fn bind_python(
        &self,
        path: &str,
        imp: &Import,
        depth: u32,
        b: &mut Bindings,
        only: Option<&str>,
    ) {
        let Import::Python {
            level,
            module,
            names,
            alias,
        } = imp
        else {
            return;
        };
        let Some(base) = self.py_absolute(path, *level, module) else {
            return;
        };
        if names.is_empty() {
            let bound = alias.clone().unwrap_or_else(|| base[0].clone());
            if !wants(only, &bound) {
                return;
            }
            // `import a.b.c` binds `a`; `import a.b as c` binds c to a.b.
            if let Some(file) = self.py_module(&base.join(".")) {
                b.imported_files.insert(file.to_string());
            }
            match alias {
                Some(a) => {
                    if let Some(file) = self.py_module(&base.join(".")) {
                        b.names.insert(a.clone(), Target::Module(file.to_string()));
                    }
                }
                None => {
                    if let Some(file) = self.py_module(&base[0]) {
                        b.names
                            .insert(base[0].clone(), Target::Module(file.to_string()));
                    }
                }
            }
            return;
        }
        let module_file = self.py_module(&base.join("."));
        for (name, bound) in names {
            if name != "*" && !wants(only, bound) {
                continue;
            }
            if name == "*" {
                if let Some(m) = &module_file {
                    b.imported_files.insert(m.to_string());
                    b.globs.push(m.to_string());
                }
                continue;
            }
            let mut sub = base.clone();
            sub.push(name.clone());
            if let Some(file) = self.py_module(&sub.join(".")) {
                b.imported_files.insert(file.to_string());
                b.names
                    .insert(bound.clone(), Target::Module(file.to_string()));
            } else if let Some(m) = &module_file {
                b.imported_files.insert(m.to_string());
                if let Some(t) = self.symbol_in(m, name, depth) {
                    b.names.insert(bound.clone(), t);
                }
            }
        }
    }

    fn bind_rust_use(
        &self,
        path: &str,
        imp: &Import,
        depth: u32,
        b: &mut Bindings,
        only: Option<&str>,
    ) {
        let Import::RustUse {
            path: segs,
            bound_as,
            glob,
            mod_scope,
        } = imp
        else {
            return;
        };
        if !*glob && !wants(only, bound_as) {
            return;
        }
        let Some(t) = self.rust_path(path, mod_scope, segs, depth) else {
            return;
        };
        let file = match &t {
            Target::Module(m) | Target::Package(m) => m.clone(),
            Target::Entity(p, _) => p.clone(),
        };
        b.imported_files.insert(file);
        if *glob {
            if let Target::Module(m) = t {
                b.globs.push(m);
            }
        } else if bound_as != "self" && bound_as != "_" {
            b.names.insert(bound_as.clone(), t);
        }
    }

    fn bind_rust_mod(&self, path: &str, imp: &Import, b: &mut Bindings, only: Option<&str>) {
        let Import::RustMod { name, mod_scope } = imp else {
            return;
        };
        if !wants(only, name) {
            return;
        }
        if let Some((crate_src, file_mod)) = self.rs_file_mod(path) {
            let mut m = file_mod.clone();
            m.extend(mod_scope.iter().cloned());
            m.push(name.clone());
            // A crate root outside src/ (tests/it.rs) declares
            // siblings, not children.
            let sibling = {
                let mut s = file_mod[..file_mod.len().saturating_sub(1)].to_vec();
                s.push(name.clone());
                s
            };
            let found = [m, sibling]
                .into_iter()
                .find_map(|m| self.rs_module(&crate_src, &m));
            if let Some(file) = found {
                b.imported_files.insert(file.to_string());
                b.names
                    .insert(name.clone(), Target::Module(file.to_string()));
            }
        }
    }

    fn bind_go(&self, imp: &Import, b: &mut Bindings, only: Option<&str>) {
        let Import::Go { path: ip, alias } = imp else {
            return;
        };
        let bound = go_package_name(ip, alias.as_deref());
        if bound == "_" || (bound != "." && !wants(only, &bound)) {
            return;
        }
        let Some(dir) = self.go_package_dir(ip) else {
            return;
        };
        if bound == "." {
            b.packages.push(dir);
        } else {
            b.names.insert(bound, Target::Package(dir));
        }
    }

    fn bind_js(&self, path: &str, imp: &Import, depth: u32, b: &mut Bindings, only: Option<&str>) {
        let Import::Js {
            source,
            names,
            namespace,
        } = imp
        else {
            return;
        };
        let Some(file) = self.js_module(path, source) else {
            return;
        };
        if names.is_empty() && namespace.is_none() && only.is_none() {
            b.imported_files.insert(file.clone());
        }
        if let Some(ns) = namespace.as_ref().filter(|n| wants(only, n)) {
            b.imported_files.insert(file.clone());
            b.names.insert(ns.clone(), Target::Module(file.clone()));
        }
        for (n, bound) in names {
            if n == "*" {
                b.imported_files.insert(file.clone());
                b.globs.push(file.clone());
                continue;
            }
            if !wants(only, bound) {
                continue;
            }
            b.imported_files.insert(file.clone());
            // A default export is found by the name it is bound to.
            let name = if n == "default" { bound } else { n };
            let t = self.symbol_in(&file, name, depth);
            b.names
                .insert(bound.clone(), t.unwrap_or(Target::Module(file.clone())));
        }
    }

    fn bind_java(&self, imp: &Import, b: &mut Bindings, only: Option<&str>) {
        let Import::Java {
            path: segs,
            wildcard,
            is_static,
        } = imp
        else {
            return;
        };
        if *wildcard {
            if !*is_static {
                b.packages.push(segs.join("/"));
            }
            return;
        }
        let Some(last) = segs.last().filter(|l| wants(only, l)) else {
            return;
        };
        if let Some((p, q)) = self.java_import(segs) {
            b.imported_files.insert(p.clone());
            b.names.insert(last.clone(), Target::Entity(p, q));
        }
    }

    /// The file a relative JavaScript/TypeScript specifier names, by Node's
    /// rules: as written, with each extension, or as a directory's
    /// `index.*`. A `.js` specifier may name the `.ts` source it compiles
    /// from. Bare package names stay external.
    fn js_module(&self, from: &str, spec: &str) -> Option<String> {
        if !(spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == "..") {
            return self.ts_mapped(from, spec);
        }
        self.js_file(crate::graph::join_rel(crate::graph::dir_of(from), spec)?)
    }

    /// A bare specifier through the nearest `tsconfig.json` above `from`:
    /// its `paths` patterns (longest prefix first), then its `baseUrl`.
    fn ts_mapped(&self, from: &str, spec: &str) -> Option<String> {
        let mut entries: Vec<(&str, &str, &str)> = self
            .src
            .crates()
            .iter()
            .filter_map(|(k, v)| {
                let (dir, pattern) = k.strip_prefix(TS_PATHS)?.split_once('\u{1}')?;
                let under = dir == "." || from.starts_with(&format!("{dir}/"));
                under.then_some((dir, pattern, v.as_str()))
            })
            .collect();
        let nearest = entries.iter().map(|e| e.0.len()).max()?;
        entries.retain(|e| e.0.len() == nearest);
        // Exact patterns, then wildcards by longest prefix, then baseUrl.
        entries.sort_by_key(|(_, p, _)| match p.split_once('*') {
            None if p.is_empty() => (2, 0),
            None => (0, 0),
            Some((pre, _)) => (1, usize::MAX - pre.len()),
        });
        entries.into_iter().find_map(|(_, pattern, target)| {
            let mapped = match pattern.split_once('*') {
                _ if pattern.is_empty() => format!("{target}/{spec}"),
                None => (pattern == spec).then(|| target.to_string())?,
                Some((pre, post)) => {
                    let mid = spec.strip_prefix(pre)?.strip_suffix(post)?;
                    target.replace('*', mid)
                }
            };
            self.js_file(crate::graph::join_rel(".", &mapped)?)
        })
    }

    /// The source file a module path names, by Node's resolution.
    fn js_file(&self, base: String) -> Option<String> {
        const EXTS: &[&str] = &[".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
        let stem = [".js", ".jsx", ".mjs", ".cjs"]
            .iter()
            .find_map(|e| base.strip_suffix(e))
            .unwrap_or(&base);
        std::iter::once(base.clone())
            .chain(EXTS.iter().map(|e| format!("{base}{e}")))
            .chain(EXTS.iter().map(|e| format!("{stem}{e}")))
            .chain(EXTS.iter().map(|e| format!("{base}/index{e}")))
            .find(|c| !c.is_empty() && self.src.is_file(c))
    }

    /// The repository file an `#include` names: beside the including file,
    /// then under each directory above it, then under `include/` or
    /// `src/` at the root.
    fn c_include(&self, from: &str, inc: &str) -> Option<String> {
        let mut dirs: Vec<&str> = Vec::new();
        let mut d = crate::graph::dir_of(from);
        loop {
            dirs.push(d);
            if d == "." {
                break;
            }
            d = crate::graph::dir_of(d);
        }
        dirs.extend(["include", "src"]);
        dirs.into_iter().find_map(|dir| {
            let cand = crate::graph::join_rel(dir, inc)?;
            self.src.is_file(&cand).then_some(cand)
        })
    }

    /// The directory of a Go import path inside this repository, through
    /// the `go.mod` module it falls under (the longest module path wins).
    fn go_package_dir(&self, ip: &str) -> Option<String> {
        let (module, dir) = self
            .src
            .crates()
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(GO_MODULE)?, v)))
            .filter(|(m, _)| ip == *m || ip.starts_with(&format!("{m}/")))
            .max_by_key(|(m, _)| m.len())?;
        let rest = ip[module.len()..].trim_start_matches('/');
        Some(match (dir.as_str(), rest) {
            (".", "") => ".".to_string(),
            (".", r) => r.to_string(),
            (d, "") => d.to_string(),
            (d, r) => format!("{d}/{r}"),
        })
    }

    /// The class (or, for a static import, member) a Java import names:
    /// the longest package prefix whose next segment is a file's class.
    fn java_import(&self, segs: &[String]) -> Option<Loc> {
        let last = segs.last()?;
        for k in (1..=segs.len()).rev() {
            let file = format!("{}.java", segs[..k].join("/"));
            let qual = segs[k - 1..].join(".");
            let mut hits: Vec<NameRef> = self
                .src
                .named(Lang::Java, last)
                .into_iter()
                .filter(|r| r.qualname == qual && is_path_suffix(&r.path, &file))
                .collect();
            hits.sort();
            if let Some(h) = hits.into_iter().next() {
                return Some((h.path, h.qualname));
            }
        }
        None
    }

    /// The first (in path order) entity named `name` in package `pkg` whose
    /// kind `want` accepts. Build-tagged variants of one function are one
    /// package member; path order picks one deterministically.
    fn package_member(
        &self,
        lang: Lang,
        pkg: &str,
        name: &str,
        want: impl Fn(Kind) -> bool,
    ) -> Option<Loc> {
        let mut hits: Vec<NameRef> = self
            .src
            .named(lang, name)
            .into_iter()
            .filter(|r| want(r.kind) && in_package(lang, &r.path, pkg))
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
        let key = (m.to_string(), name.to_string());
        if let Some(hit) = self.symbols.borrow().get(&key) {
            return hit.clone();
        }
        // Seed the cache so a re-export cycle ends.
        self.symbols.borrow_mut().insert(key.clone(), None);
        let found = (|| {
            let f = self.src.facts(m)?;
            let mut b = Bindings::default();
            for imp in &f.parsed.imports {
                self.bind_import(m, imp, depth - 1, &mut b, Some(name));
                if let Some(t) = b.names.get(name) {
                    return Some(t.clone());
                }
            }
            b.globs.iter().find_map(|g| {
                self.lookup_qualname(g, name)
                    .map(|q| Target::Entity(g.clone(), q))
            })
        })();
        self.symbols.borrow_mut().insert(key, found.clone());
        found
    }

    fn py_absolute(&self, path: &str, level: usize, module: &[String]) -> Option<Vec<String>> {
        if level == 0 {
            return (!module.is_empty()).then(|| module.to_vec());
        }
        let own = self.py_file_mod(path)?;
        let is_init = path.ends_with("__init__.py") || path.ends_with("__init__.pyi");
        let mut package: Vec<String> = if is_init {
            own.clone()
        } else {
            own[..own.len().saturating_sub(1)].to_vec()
        };
        for _ in 1..level {
            package.pop()?;
        }
        package.extend(module.iter().cloned());
        (!package.is_empty()).then_some(package)
    }

    /// Resolve a Rust path as written in `path` inside inline modules `scope`.
    fn rust_path(
        &self,
        path: &str,
        scope: &[String],
        segs: &[String],
        depth: u32,
    ) -> Option<Target> {
        let (crate_src, file_mod) = self.rs_file_mod(path)?;
        let mut current = file_mod.clone();
        current.extend(scope.iter().cloned());
        let first = segs.first()?.as_str();
        let starts: Vec<(String, Vec<String>, &[String])> = match first {
            "crate" => vec![(crate_src.clone(), vec![], &segs[1..])],
            "self" => vec![(crate_src.clone(), current, &segs[1..])],
            "super" => {
                let ups = segs.iter().take_while(|s| *s == "super").count();
                let keep = current.len().checked_sub(ups)?;
                vec![(crate_src.clone(), current[..keep].to_vec(), &segs[ups..])]
            }
            _ => {
                let mut v = vec![
                    (crate_src.clone(), current.clone(), segs),
                    (crate_src.clone(), vec![], segs),
                ];
                if let Some(dir) = self.src.crates().get(first) {
                    v.insert(0, (dir.clone(), vec![], &segs[1..]));
                }
                v
            }
        };
        for (krate, base, rest) in starts {
            if let Some(t) = self.rust_path_from(&krate, &base, rest, depth) {
                return Some(t);
            }
        }
        None
    }

    fn rust_path_from(
        &self,
        krate: &str,
        base: &[String],
        rest: &[String],
        depth: u32,
    ) -> Option<Target> {
        // Longest prefix of `rest` that is a module file; the remainder is a
        // qualname inside it (inline modules, types, methods).
        for split in (0..=rest.len()).rev() {
            let mut m = base.to_vec();
            m.extend(rest[..split].iter().cloned());
            let Some(file) = self.rs_module(krate, &m) else {
                continue;
            };
            let remainder = &rest[split..];
            if remainder.is_empty() {
                return Some(Target::Module(file.to_string()));
            }
            let qual = remainder.join("::");
            if let Some(i) = self.lookup_qualname(&file, &qual) {
                return Some(Target::Entity(file.to_string(), i));
            }
            if remainder.len() == 1 && depth > 0 {
                return self.symbol_in(&file, &remainder[0], depth - 1);
            }
            return None;
        }
        None
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
            Call::Name(n) => self.resolve_name(f, caller, n, b),
            Call::SelfMethod(n) => self.resolve_self_method(f, caller?, n),
            Call::Attr { recv, name } => self.resolve_attr(f, caller, recv, name, b),
            Call::Path(segs) => self.resolve_rust_call_path(f, caller, segs, b),
            Call::Macro(n) => self.resolve_macro(f, n, b),
            Call::Typed { ty, name } => self.resolve_typed(f, caller, ty, name, b),
        }
    }

    /// A Java call with no receiver: a method of an enclosing class or
    /// its supertypes, a static import, then a method unique by name.
    fn java_unqualified(
        &self,
        f: &Facts,
        caller: Option<usize>,
        n: &str,
        b: &Bindings,
    ) -> Option<Loc> {
        let ents = &f.parsed.entities;
        let mut scope = caller;
        while let Some(s) = scope {
            if ents[s].kind == Kind::Class {
                if let Some(m) = self.python_method(&f.path, &ents[s].qualname, n, 0) {
                    return Some(m);
                }
            }
            scope = ents[s].parent;
        }
        if let Some(Target::Entity(p, q)) = b.names.get(n) {
            return Some((p.clone(), q.clone()));
        }
        if GENERIC_METHODS.contains(&n) {
            return None;
        }
        self.unique(
            self.src
                .named(f.lang, n)
                .into_iter()
                .filter(|r| r.kind == Kind::Method),
        )
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
                self.unique(self.src.named(f.lang, name).into_iter().filter(|r| {
                    r.qualname == full || r.qualname.ends_with(&tail) || r.qualname == *name
                }))
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

    /// The package directory and name of a Go type as written.
    fn go_type(&self, f: &Facts, ty: &[String], b: &Bindings) -> Option<(String, String)> {
        match ty {
            [t] => Some((crate::graph::dir_of(&f.path).to_string(), t.clone())),
            [p, t] => match b.names.get(p) {
                Some(Target::Package(d)) => Some((d.clone(), t.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    /// Method `n` of Go type `t` in package `dir`, or promoted from a type
    /// it embeds.
    fn go_method(&self, dir: &str, t: &str, n: &str, depth: u32) -> Option<Loc> {
        let mut hits: Vec<NameRef> = self
            .src
            .named(Lang::Go, n)
            .into_iter()
            .filter(|r| {
                r.kind == Kind::Method
                    && r.owner.as_deref() == Some(t)
                    && in_package(Lang::Go, &r.path, dir)
            })
            .collect();
        hits.sort();
        if let Some(h) = hits.into_iter().next() {
            return Some((h.path, h.qualname));
        }
        if depth >= 4 {
            return None;
        }
        let (path, q) = self.package_member(Lang::Go, dir, t, |k| k == Kind::Class)?;
        let class = self.entity(&path, &q)?;
        let f = self.src.facts(&path)?;
        let b = self.bindings(&path, 4);
        class.bases.iter().find_map(|base| {
            let (d, bt) = self.go_type(&f, base, &b)?;
            self.go_method(&d, &bt, n, depth + 1)
        })
    }

    /// A Java type as written (`T`, `Outer.Inner`) seen from `at`.
    fn java_type(&self, f: &Facts, at: Option<usize>, ty: &[String], b: &Bindings) -> Option<Loc> {
        let (first, rest) = ty.split_first()?;
        let (p, q) = self.resolve_name(f, at, first, b)?;
        if !self.is_class(&(p.clone(), q.clone())) {
            return None;
        }
        if rest.is_empty() {
            return Some((p, q));
        }
        let q = format!("{q}.{}", rest.join("."));
        self.lookup_qualname(&p, &q).map(|q| (p, q))
    }

    /// `n!(…)`: the file's own `macro_rules! n` (at any module depth), then
    /// a name imported into the file (`use crate::n;`), then the one
    /// `#[macro_export]`ed macro of that name in the repository. Only macro
    /// entities answer, never a function that shares the name.
    fn resolve_macro(&self, f: &Facts, n: &str, b: &Bindings) -> Option<Loc> {
        if let Some(e) = f
            .parsed
            .entities
            .iter()
            .find(|e| e.kind == Kind::Macro && e.name == n)
        {
            return Some((f.path.to_string(), e.qualname.clone()));
        }
        if let Some(Target::Entity(p, q)) = b.names.get(n) {
            if self.src.kind_of(p, q) == Some(Kind::Macro) {
                return Some((p.clone(), q.clone()));
            }
        }
        let exported = self.src.named(f.lang, n).into_iter().filter(|r| {
            r.kind == Kind::Macro
                && self.entity(&r.path, &r.qualname).is_some_and(|e| {
                    e.facts.parsed.entities[e.idx].flavor == crate::parse::MACRO_EXPORT
                })
        });
        self.unique(exported)
    }

    /// Same scope, then imported names, then a repository-unique name.
    fn resolve_name(&self, f: &Facts, caller: Option<usize>, n: &str, b: &Bindings) -> Option<Loc> {
        let ents = &f.parsed.entities;
        // Enclosing scopes, innermost first. Python class bodies are not
        // enclosing scopes for names used inside methods.
        let mut scope = caller;
        while let Some(s) = scope {
            let e = &ents[s];
            // Go declares nothing inside functions, and a type's methods
            // are never called by bare name.
            let encloses = match f.lang {
                Lang::Python | Lang::JavaScript | Lang::TypeScript => e.kind != Kind::Class,
                Lang::Go => false,
                Lang::Rust | Lang::Java | Lang::C | Lang::Cpp => true,
            };
            if encloses {
                let q = format!("{}{}{}", e.qualname, f.lang.separator(), n);
                if let Some(i) = self.lookup_qualname(&f.path, &q) {
                    return Some((f.path.to_string(), i));
                }
            }
            scope = e.parent;
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
        for g in &b.globs {
            if let Some(i) = self.lookup_qualname(g, n) {
                return Some((g.clone(), i));
            }
        }
        if matches!(f.lang, Lang::Go | Lang::Java) {
            let not_method = |k: Kind| k != Kind::Method;
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
        self.unique(
            self.src
                .named(f.lang, n)
                .into_iter()
                .filter(|r| !matches!(r.kind, Kind::Method | Kind::Macro)),
        )
    }

    /// The inline-module prefix of a Rust entity's qualname.
    fn module_prefix(&self, f: &Facts, idx: usize) -> String {
        if f.lang != Lang::Rust {
            return String::new();
        }
        let ents = &f.parsed.entities;
        let mut top = idx;
        while let Some(p) = ents[top].parent {
            top = p;
        }
        let e = &ents[top];
        let mut segs: Vec<&str> = e.qualname.split("::").collect();
        segs.pop();
        if e.kind == Kind::Method {
            segs.pop();
        }
        segs.join("::")
    }

    fn resolve_self_method(&self, f: &Facts, caller: usize, n: &str) -> Option<Loc> {
        let ents = &f.parsed.entities;
        // The nearest enclosing method tells the type.
        let mut cur = Some(caller);
        let mut owner = None;
        while let Some(c) = cur {
            if let Some(t) = &ents[c].owner_type {
                owner = Some(t.clone());
                break;
            }
            cur = ents[c].parent;
        }
        let owner = owner?;
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
        }
    }

    /// `n` as a member of the type owning the caller (an in-class or an
    /// out-of-line `A::f` definition): its own method, then its bases'.
    fn owner_method(&self, f: &Facts, caller: usize, n: &str) -> Option<Loc> {
        let ents = &f.parsed.entities;
        let mut cur = Some(caller);
        while let Some(c) = cur {
            if let Some(owner) = &ents[c].owner_type {
                let short = owner.rsplit("::").next().unwrap_or(owner);
                if let Some(m) = self.typed_method(f.lang, &f.path, short, n) {
                    return Some(m);
                }
                let class = self.cpp_class(f, owner)?;
                return self.python_method(&class.0, &class.1, n, 0);
            }
            cur = ents[c].parent;
        }
        None
    }

    /// A C++ class by its name as written (`A`, `ns::A`): in this file,
    /// else the one class whose qualname ends so.
    fn cpp_class(&self, f: &Facts, written: &str) -> Option<Loc> {
        if let Some(q) = self.lookup_qualname(&f.path, written) {
            return self
                .is_class(&(f.path.clone(), q.clone()))
                .then(|| (f.path.clone(), q));
        }
        let short = written.rsplit("::").next().unwrap_or(written);
        let tail = format!("::{written}");
        let classes = || {
            self.src
                .named(f.lang, short)
                .into_iter()
                .filter(|r| r.kind == Kind::Class)
        };
        // Namespaces are not part of ids: `detail::buffer` may be `buffer`.
        self.unique(classes().filter(|r| r.qualname == written || r.qualname.ends_with(&tail)))
            .or_else(|| self.unique(classes().filter(|r| r.qualname == short)))
    }

    /// Method `n` of class `(path, class)` or, failing that, of its bases.
    fn python_method(&self, path: &str, class: &str, n: &str, depth: u32) -> Option<Loc> {
        let sep = Lang::from_path(path).map_or(".", Lang::separator);
        let q = format!("{class}{sep}{n}");
        if let Some(i) = self.lookup_qualname(path, &q) {
            return Some((path.to_string(), i));
        }
        if depth >= 6 {
            return None;
        }
        // Only now do the class's bases matter, and only now is its file parsed.
        let cls = self.entity(path, class)?;
        let f = self.src.facts(path)?;
        let f = &*f;
        let b = self.bindings(path, 4);
        for base in &cls.bases {
            if let Some((bp, bq)) = self.resolve_type_path(f, Some(cls.idx), base, &b) {
                if let Some(found) = self.python_method(&bp, &bq, n, depth + 1) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// `Type::n`, preferring an impl in `path`, then a unique one.
    fn rust_method(&self, path: &str, ty: &str, n: &str) -> Option<Loc> {
        self.typed_method(Lang::Rust, path, ty, n)
    }

    /// Method `n` whose owning type is named `ty`: the one in `path`, else
    /// the one in the repository.
    fn typed_method(&self, lang: Lang, path: &str, ty: &str, n: &str) -> Option<Loc> {
        let cands: Vec<NameRef> = self
            .src
            .named(lang, n)
            .into_iter()
            .filter(|r| r.kind == Kind::Method && r.owner.as_deref() == Some(ty))
            .collect();
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
                    return self.package_member(f.lang, dir, name, |k| k != Kind::Method);
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
                        };
                    }
                }
                None => {
                    if matches!(f.lang, Lang::Python | Lang::Java) || f.lang.is_js() {
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
        let methods: Vec<NameRef> = self
            .src
            .named(f.lang, name)
            .into_iter()
            .filter(|r| r.kind == Kind::Method)
            .collect();
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

    fn resolve_rust_call_path(
        &self,
        f: &Facts,
        caller: Option<usize>,
        segs: &[String],
        b: &Bindings,
    ) -> Option<Loc> {
        let (name, prefix) = segs.split_last()?;
        if prefix.len() == 1 {
            let ty = prefix[0].as_str();
            // A type the caller can see: bound by `use`, or defined here.
            let ty_loc = match b.names.get(ty) {
                Some(Target::Entity(p, q)) => Some((p.clone(), q.clone())),
                _ => self.resolve_name(f, caller, ty, b),
            };
            if let Some(loc) = ty_loc {
                if self.is_class(&loc) {
                    if let Some(m) = self.rust_method(&loc.0, bare_name(&loc.1), name) {
                        return Some(m);
                    }
                }
            }
            if let Some(m) = self.rust_method(&f.path, ty, name) {
                return Some(m);
            }
        }
        let scope = caller
            .map(|c| {
                let p = self.module_prefix(f, c);
                if p.is_empty() {
                    Vec::new()
                } else {
                    p.split("::").map(str::to_string).collect()
                }
            })
            .unwrap_or_default();
        // `module::f()` where `module` was brought in by `use`.
        if let Some(Target::Module(m)) = b.names.get(&segs[0]) {
            let qual = segs[1..].join("::");
            if let Some(i) = self.lookup_qualname(m, &qual) {
                return Some((m.clone(), i));
            }
        }
        match self.rust_path(&f.path, &scope, segs, 3) {
            Some(Target::Entity(p, i)) => Some((p, i)),
            _ => None,
        }
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
                Lang::Rust => match self.rust_path(&f.path, &[], segs, 3) {
                    Some(Target::Entity(p, i)) => Some((p, i)),
                    _ => None,
                },
                Lang::Go => match b.names.get(&segs[0]) {
                    Some(Target::Package(d)) if segs.len() == 2 => {
                        self.package_member(Lang::Go, d, &segs[1], |k| k == Kind::Class)
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
            },
        }
    }

    /// `rest` inside Python module file `m`: a submodule chain or a symbol.
    fn py_dotted_in(&self, m: &str, rest: &[String]) -> Option<Loc> {
        if let Some(i) = self.lookup_qualname(m, &rest.join(".")) {
            return Some((m.to_string(), i));
        }
        let own = self.py_file_mod(m)?;
        for split in (1..rest.len()).rev() {
            let mut module = own.clone();
            module.extend(rest[..split].iter().cloned());
            if let Some(file) = self.py_module(&module.join(".")) {
                let q = rest[split..].join(".");
                return self
                    .lookup_qualname(&file, &q)
                    .map(|i| (file.to_string(), i));
            }
        }
        match self.symbol_in(m, &rest[0], 3) {
            Some(Target::Entity(p, i)) if rest.len() == 1 => Some((p, i)),
            Some(Target::Module(sub)) => self.py_dotted_in(&sub, &rest[1..]),
            _ => None,
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

/// The key prefix of a `tsconfig.json` mapping in the manifests map:
/// `ts:<dir>\u{1}<pattern>` → target, where an empty pattern is `baseUrl`.
pub const TS_PATHS: &str = "ts:";

/// The key prefix of a Go module in the manifests map: `go:<module path>`.
pub const GO_MODULE: &str = "go:";

/// The name a Go import binds: its alias, else the path's last element,
/// skipping a `/vN` major-version suffix.
pub fn go_package_name(path: &str, alias: Option<&str>) -> String {
    if let Some(a) = alias {
        return a.to_string();
    }
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or(path);
    let is_version =
        last.len() > 1 && last.starts_with('v') && last[1..].bytes().all(|c| c.is_ascii_digit());
    match parts.next() {
        Some(prev) if is_version => prev.to_string(),
        _ => last.to_string(),
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

/// `path` is `suffix` or ends with `/suffix`.
fn is_path_suffix(path: &str, suffix: &str) -> bool {
    path == suffix || path.strip_suffix(suffix).is_some_and(|p| p.ends_with('/'))
}

/// A Rust file's crate source directory and module path, from its location.
pub fn rust_module_of(path: &str) -> (String, Vec<String>) {
    let parts: Vec<&str> = path.split('/').collect();
    let (crate_src, rest): (String, Vec<&str>) = match parts
        .iter()
        .rposition(|p| *p == "src")
        .filter(|i| *i + 1 < parts.len())
    {
        Some(i) => (parts[..=i].join("/"), parts[i + 1..].to_vec()),
        // tests/, examples/, benches/: every file is its own crate root,
        // so key them by their top directory.
        None if parts.len() > 1 => (parts[0].to_string(), parts[1..].to_vec()),
        None => (".".to_string(), parts.clone()),
    };
    let mut modpath: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
    if let Some(last) = modpath.last_mut() {
        if let Some(stem) = last.strip_suffix(".rs") {
            *last = stem.to_string();
        }
    }
    let drop_last = match modpath.last().map(String::as_str) {
        Some("mod") => true,
        Some("lib") | Some("main") => modpath.len() == 1,
        _ => false,
    };
    if drop_last {
        modpath.pop();
    }
    (crate_src, modpath)
}

#[cfg(test)]
mod tests {
    use super::rust_module_of;

    #[test]
    fn rust_modules_follow_the_file_layout() {
        assert_eq!(rust_module_of("src/lib.rs"), ("src".into(), vec![]));
        assert_eq!(
            rust_module_of("crates/core/src/flags/mod.rs"),
            ("crates/core/src".into(), vec!["flags".to_string()])
        );
        assert_eq!(
            rust_module_of("src/a/b.rs"),
            ("src".into(), vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(
            rust_module_of("tests/common/mod.rs"),
            ("tests".into(), vec!["common".to_string()])
        );
    }
}
