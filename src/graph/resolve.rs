//! Dependency resolution: imports to files, calls and base classes to the
//! exact entities they name. Every edge starts at the entity that contains
//! the call; nothing is attached by bare name unless the name is unique.

use super::{Edge, EdgeKind};
use crate::parse::{Call, Import, Kind, Lang, ParsedFile};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A parsed file as the resolver sees it.
pub struct FileFacts<'a> {
    pub path: &'a str,
    pub lang: Lang,
    pub parsed: &'a ParsedFile,
}

/// What a name or path refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Module(String),
    /// (path, entity index)
    Entity(String, usize),
}

type Loc = (String, usize);

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

/// Symbol tables over every file of a tree.
pub struct Resolver<'a> {
    files: BTreeMap<&'a str, &'a FileFacts<'a>>,
    /// Dotted module name → file, under the repository root and `src/`, `lib/`.
    py_modules: HashMap<String, &'a str>,
    /// A Python file's own dotted name (layout prefix stripped).
    py_file_mod: HashMap<&'a str, Vec<String>>,
    /// (crate source dir, `a::b`) → file.
    rs_modules: HashMap<(String, String), &'a str>,
    rs_file_mod: HashMap<&'a str, (String, Vec<String>)>,
    /// Crate name (underscored) → crate source dir.
    crates: BTreeMap<String, String>,
    /// Per file: qualname → entity index.
    qualnames: HashMap<&'a str, HashMap<&'a str, usize>>,
    /// Non-method definitions by bare name.
    by_name: HashMap<(Lang, &'a str), Vec<Loc>>,
    /// Methods by bare name.
    methods: HashMap<(Lang, &'a str), Vec<Loc>>,
    /// (owner type, method name) → methods.
    type_methods: HashMap<(Lang, &'a str, &'a str), Vec<Loc>>,
    bindings: RefCell<HashMap<String, std::rc::Rc<Bindings>>>,
}

#[derive(Default)]
struct Bindings {
    names: HashMap<String, Target>,
    globs: Vec<String>,
    imported_files: BTreeSet<String>,
}

impl<'a> Resolver<'a> {
    /// `crates` maps Cargo package names to their `src` directory.
    pub fn new(facts: &'a [FileFacts<'a>], crates: BTreeMap<String, String>) -> Resolver<'a> {
        let mut r = Resolver {
            files: BTreeMap::new(),
            py_modules: HashMap::new(),
            py_file_mod: HashMap::new(),
            rs_modules: HashMap::new(),
            rs_file_mod: HashMap::new(),
            crates: crates
                .into_iter()
                .map(|(k, v)| (k.replace('-', "_"), v))
                .collect(),
            qualnames: HashMap::new(),
            by_name: HashMap::new(),
            methods: HashMap::new(),
            type_methods: HashMap::new(),
            bindings: RefCell::new(HashMap::new()),
        };
        for f in facts {
            r.files.insert(f.path, f);
            match f.lang {
                Lang::Python => r.index_python_module(f.path),
                Lang::Rust => r.index_rust_module(f.path),
            }
            let mut q = HashMap::new();
            for (i, e) in f.parsed.entities.iter().enumerate() {
                q.insert(e.qualname.as_str(), i);
                let loc = (f.path.to_string(), i);
                match e.kind {
                    Kind::Method => {
                        r.methods
                            .entry((f.lang, &e.name))
                            .or_default()
                            .push(loc.clone());
                        if let Some(t) = &e.owner_type {
                            let t = t.rsplit(['.', ':']).next().unwrap_or(t);
                            r.type_methods
                                .entry((f.lang, t, &e.name))
                                .or_default()
                                .push(loc);
                        }
                    }
                    _ => r.by_name.entry((f.lang, &e.name)).or_default().push(loc),
                }
            }
            r.qualnames.insert(f.path, q);
        }
        r
    }

    fn index_python_module(&mut self, path: &'a str) {
        let Some(stem) = path
            .strip_suffix(".py")
            .or_else(|| path.strip_suffix(".pyi"))
        else {
            return;
        };
        let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
        if parts.last().is_some_and(|p| p == "__init__") {
            parts.pop();
        }
        if parts.is_empty() {
            return;
        }
        self.py_modules.entry(parts.join(".")).or_insert(path);
        let own = if matches!(parts[0].as_str(), "src" | "lib") && parts.len() > 1 {
            let stripped = parts[1..].to_vec();
            self.py_modules.entry(stripped.join(".")).or_insert(path);
            stripped
        } else {
            parts
        };
        self.py_file_mod.insert(path, own);
    }

    fn index_rust_module(&mut self, path: &'a str) {
        let (crate_src, modpath) = rust_module_of(path);
        self.rs_modules
            .entry((crate_src.clone(), modpath.join("::")))
            .or_insert(path);
        self.rs_file_mod.insert(path, (crate_src, modpath));
    }

    fn entity(&self, path: &str, idx: usize) -> Option<&'a crate::parse::ParsedEntity> {
        self.files
            .get(path)
            .and_then(|f| f.parsed.entities.get(idx))
    }

    fn lookup_qualname(&self, path: &str, qualname: &str) -> Option<usize> {
        self.qualnames.get(path)?.get(qualname).copied()
    }

    /// All edges that start in `path`: imports, invokes, inherits (not contains).
    pub fn edges_of(&self, path: &str) -> Vec<Edge> {
        let Some(f) = self.files.get(path) else {
            return Vec::new();
        };
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
        let id_of = |loc: &Loc| -> Option<String> {
            self.entity(&loc.0, loc.1)
                .map(|e| format!("{}:{}", loc.0, e.qualname))
        };
        let own_id = |i: usize| format!("{}:{}", path, f.parsed.entities[i].qualname);
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
                    if loc.0 == path && loc.1 == i {
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
            let is_class = |loc: &Loc| {
                self.entity(&loc.0, loc.1)
                    .is_some_and(|e| e.kind == Kind::Class)
            };
            if is_class(&t) && is_class(&tr) && t != tr {
                if let (Some(src), Some(dst)) = (id_of(&t), id_of(&tr)) {
                    out.insert(Edge {
                        src,
                        kind: EdgeKind::Inherits,
                        dst,
                    });
                }
            }
        }
        out.into_iter().collect()
    }

    // ---- bindings -------------------------------------------------------

    fn bindings(&self, path: &str, depth: u32) -> std::rc::Rc<Bindings> {
        if let Some(b) = self.bindings.borrow().get(path) {
            return b.clone();
        }
        // Seed an empty entry so import cycles terminate.
        self.bindings
            .borrow_mut()
            .insert(path.to_string(), std::rc::Rc::new(Bindings::default()));
        let b = std::rc::Rc::new(self.compute_bindings(path, depth));
        self.bindings
            .borrow_mut()
            .insert(path.to_string(), b.clone());
        b
    }

    fn compute_bindings(&self, path: &str, depth: u32) -> Bindings {
        let mut b = Bindings::default();
        let Some(f) = self.files.get(path) else {
            return b;
        };
        for imp in &f.parsed.imports {
            match imp {
                Import::Python {
                    level,
                    module,
                    names,
                    alias,
                } => {
                    let Some(base) = self.py_absolute(path, *level, module) else {
                        continue;
                    };
                    if names.is_empty() {
                        // `import a.b.c` binds `a`; `import a.b as c` binds c to a.b.
                        if let Some(file) = self.py_modules.get(&base.join(".")) {
                            b.imported_files.insert(file.to_string());
                        }
                        match alias {
                            Some(a) => {
                                if let Some(file) = self.py_modules.get(&base.join(".")) {
                                    b.names.insert(a.clone(), Target::Module(file.to_string()));
                                }
                            }
                            None => {
                                if let Some(file) = self.py_modules.get(&base[0]) {
                                    b.names
                                        .insert(base[0].clone(), Target::Module(file.to_string()));
                                }
                            }
                        }
                        continue;
                    }
                    let module_file = self.py_modules.get(&base.join(".")).copied();
                    for (name, bound) in names {
                        if name == "*" {
                            if let Some(m) = module_file {
                                b.imported_files.insert(m.to_string());
                                b.globs.push(m.to_string());
                            }
                            continue;
                        }
                        let mut sub = base.clone();
                        sub.push(name.clone());
                        if let Some(file) = self.py_modules.get(&sub.join(".")) {
                            b.imported_files.insert(file.to_string());
                            b.names
                                .insert(bound.clone(), Target::Module(file.to_string()));
                        } else if let Some(m) = module_file {
                            b.imported_files.insert(m.to_string());
                            if let Some(t) = self.symbol_in(m, name, depth) {
                                b.names.insert(bound.clone(), t);
                            }
                        }
                    }
                }
                Import::RustUse {
                    path: segs,
                    bound_as,
                    glob,
                    mod_scope,
                } => {
                    let Some(t) = self.rust_path(path, mod_scope, segs, depth) else {
                        continue;
                    };
                    let file = match &t {
                        Target::Module(m) => m.clone(),
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
                Import::RustMod { name, mod_scope } => {
                    if let Some((crate_src, file_mod)) = self.rs_file_mod.get(path) {
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
                            .find_map(|m| self.rs_modules.get(&(crate_src.clone(), m.join("::"))));
                        if let Some(file) = found {
                            b.imported_files.insert(file.to_string());
                            b.names
                                .insert(name.clone(), Target::Module(file.to_string()));
                        }
                    }
                }
            }
        }
        b
    }

    /// A top-level name of module file `m`, following re-exports.
    fn symbol_in(&self, m: &str, name: &str, depth: u32) -> Option<Target> {
        if let Some(i) = self.lookup_qualname(m, name) {
            return Some(Target::Entity(m.to_string(), i));
        }
        if depth == 0 {
            return None;
        }
        let b = self.bindings(m, depth - 1);
        if let Some(t) = b.names.get(name) {
            return Some(t.clone());
        }
        b.globs.iter().find_map(|g| {
            self.lookup_qualname(g, name)
                .map(|i| Target::Entity(g.clone(), i))
        })
    }

    fn py_absolute(&self, path: &str, level: usize, module: &[String]) -> Option<Vec<String>> {
        if level == 0 {
            return (!module.is_empty()).then(|| module.to_vec());
        }
        let own = self.py_file_mod.get(path)?;
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
        let (crate_src, file_mod) = self.rs_file_mod.get(path)?;
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
                if let Some(dir) = self.crates.get(first) {
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
            let Some(file) = self.rs_modules.get(&(krate.to_string(), m.join("::"))) else {
                continue;
            };
            let remainder = &rest[split..];
            if remainder.is_empty() {
                return Some(Target::Module(file.to_string()));
            }
            let qual = remainder.join("::");
            if let Some(i) = self.lookup_qualname(file, &qual) {
                return Some(Target::Entity(file.to_string(), i));
            }
            if remainder.len() == 1 && depth > 0 {
                return self.symbol_in(file, &remainder[0], depth - 1);
            }
            return None;
        }
        None
    }

    // ---- calls ----------------------------------------------------------

    fn resolve_call(
        &self,
        f: &FileFacts,
        caller: Option<usize>,
        call: &Call,
        b: &Bindings,
    ) -> Option<Loc> {
        match call {
            Call::Name(n) => self.resolve_name(f, caller, n, b),
            Call::SelfMethod(n) => self.resolve_self_method(f, caller?, n),
            Call::Attr { recv, name } => self.resolve_attr(f, caller, recv, name, b),
            Call::Path(segs) => self.resolve_rust_call_path(f, caller, segs, b),
        }
    }

    /// Same scope, then imported names, then a repository-unique name.
    fn resolve_name(
        &self,
        f: &FileFacts,
        caller: Option<usize>,
        n: &str,
        b: &Bindings,
    ) -> Option<Loc> {
        let ents = &f.parsed.entities;
        // Enclosing function scopes, innermost first. Python class bodies are
        // not enclosing scopes for names used inside methods.
        let mut scope = caller;
        while let Some(s) = scope {
            let e = &ents[s];
            if e.kind != Kind::Class || f.lang == Lang::Rust {
                let q = format!("{}{}{}", e.qualname, f.lang.separator(), n);
                if let Some(i) = self.lookup_qualname(f.path, &q) {
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
        if let Some(i) = self.lookup_qualname(f.path, &q) {
            return Some((f.path.to_string(), i));
        }
        if let Some(t) = b.names.get(n) {
            return match t {
                Target::Entity(p, i) => Some((p.clone(), *i)),
                Target::Module(_) => None,
            };
        }
        for g in &b.globs {
            if let Some(i) = self.lookup_qualname(g, n) {
                return Some((g.clone(), i));
            }
        }
        self.unique(self.by_name.get(&(f.lang, n)))
    }

    /// The inline-module prefix of a Rust entity's qualname.
    fn module_prefix(&self, f: &FileFacts, idx: usize) -> String {
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

    fn resolve_self_method(&self, f: &FileFacts, caller: usize, n: &str) -> Option<Loc> {
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
            Lang::Python => {
                let class = self.lookup_qualname(f.path, &owner)?;
                self.python_method(f.path, class, n, 0)
            }
            Lang::Rust => {
                let short = owner.rsplit("::").next().unwrap_or(&owner);
                self.rust_method(f.path, short, n)
            }
        }
    }

    /// Method `n` of class `(path, class)` or, failing that, of its bases.
    fn python_method(&self, path: &str, class: usize, n: &str, depth: u32) -> Option<Loc> {
        let cls = self.entity(path, class)?;
        let q = format!("{}.{}", cls.qualname, n);
        if let Some(i) = self.lookup_qualname(path, &q) {
            return Some((path.to_string(), i));
        }
        if depth >= 6 {
            return None;
        }
        let f = self.files.get(path)?;
        let b = self.bindings(path, 4);
        for base in &cls.bases {
            if let Some((bp, bi)) = self.resolve_type_path(f, Some(class), base, &b) {
                if let Some(found) = self.python_method(&bp, bi, n, depth + 1) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// `Type::n`, preferring an impl in `path`, then a unique one.
    fn rust_method(&self, path: &str, ty: &str, n: &str) -> Option<Loc> {
        let cands = self.type_methods.get(&(Lang::Rust, ty, n))?;
        if let Some(c) = cands.iter().find(|c| c.0 == path) {
            return Some(c.clone());
        }
        self.unique(Some(cands))
    }

    fn resolve_attr(
        &self,
        f: &FileFacts,
        caller: Option<usize>,
        recv: &str,
        name: &str,
        b: &Bindings,
    ) -> Option<Loc> {
        if !recv.is_empty() {
            match b.names.get(recv) {
                Some(Target::Module(m)) => {
                    return self.lookup_qualname(m, name).map(|i| (m.clone(), i));
                }
                Some(Target::Entity(p, i)) => {
                    if let Some(e) = self.entity(p, *i) {
                        if e.kind == Kind::Class {
                            return match f.lang {
                                Lang::Python => self.python_method(p, *i, name, 0),
                                Lang::Rust => self.rust_method(p, &e.name, name),
                            };
                        }
                    }
                }
                None => {
                    if f.lang == Lang::Python {
                        if let Some(c) = self.resolve_name(f, caller, recv, b) {
                            if self
                                .entity(&c.0, c.1)
                                .is_some_and(|e| e.kind == Kind::Class)
                            {
                                return self.python_method(&c.0, c.1, name, 0);
                            }
                        }
                    }
                }
            }
        }
        if GENERIC_METHODS.contains(&name) || name.starts_with("__") {
            return None;
        }
        self.unique(self.methods.get(&(f.lang, name)))
    }

    fn resolve_rust_call_path(
        &self,
        f: &FileFacts,
        caller: Option<usize>,
        segs: &[String],
        b: &Bindings,
    ) -> Option<Loc> {
        let (name, prefix) = segs.split_last()?;
        if prefix.len() == 1 {
            let ty = prefix[0].as_str();
            // A type the caller can see: bound by `use`, or defined here.
            let ty_loc = match b.names.get(ty) {
                Some(Target::Entity(p, i)) => Some((p.clone(), *i)),
                _ => self.resolve_name(f, caller, ty, b),
            };
            if let Some((p, i)) = ty_loc {
                if let Some(e) = self.entity(&p, i) {
                    if e.kind == Kind::Class {
                        if let Some(m) = self.rust_method(&p, &e.name, name) {
                            return Some(m);
                        }
                    }
                }
            }
            if let Some(m) = self.rust_method(f.path, ty, name) {
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
        match self.rust_path(f.path, &scope, segs, 3) {
            Some(Target::Entity(p, i)) => Some((p, i)),
            _ => None,
        }
    }

    /// A base class or trait path, resolved to a class entity.
    fn resolve_type_path(
        &self,
        f: &FileFacts,
        at: Option<usize>,
        segs: &[String],
        b: &Bindings,
    ) -> Option<Loc> {
        let scope_of = |i: usize| {
            self.files
                .get(f.path)
                .and_then(|ff| ff.parsed.entities[i].parent)
        };
        let parent = at.and_then(scope_of);
        let loc = match segs {
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
                Lang::Rust => match self.rust_path(f.path, &[], segs, 3) {
                    Some(Target::Entity(p, i)) => Some((p, i)),
                    _ => None,
                },
            },
        }?;
        self.entity(&loc.0, loc.1)
            .filter(|e| e.kind == Kind::Class)
            .map(|_| loc)
    }

    /// `rest` inside Python module file `m`: a submodule chain or a symbol.
    fn py_dotted_in(&self, m: &str, rest: &[String]) -> Option<Loc> {
        if let Some(i) = self.lookup_qualname(m, &rest.join(".")) {
            return Some((m.to_string(), i));
        }
        let own = self.py_file_mod.get(m)?;
        for split in (1..rest.len()).rev() {
            let mut module = own.clone();
            module.extend(rest[..split].iter().cloned());
            if let Some(file) = self.py_modules.get(&module.join(".")) {
                let q = rest[split..].join(".");
                return self
                    .lookup_qualname(file, &q)
                    .map(|i| (file.to_string(), i));
            }
        }
        match self.symbol_in(m, &rest[0], 3) {
            Some(Target::Entity(p, i)) if rest.len() == 1 => Some((p, i)),
            Some(Target::Module(sub)) => self.py_dotted_in(&sub, &rest[1..]),
            _ => None,
        }
    }

    fn unique(&self, cands: Option<&Vec<Loc>>) -> Option<Loc> {
        match cands.map(|c| c.as_slice()) {
            Some([one]) => Some(one.clone()),
            _ => None,
        }
    }
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
