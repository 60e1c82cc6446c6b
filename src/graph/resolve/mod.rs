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
//! submodule. What they share: a parsed file's facts (`facts`), where
//! symbols are read from (`source`), the call and attribute walk with the
//! unique-name fallback (`calls`), and here, bindings, imports and base
//! classes.

mod calls;
mod cfamily;
pub mod deps;
mod facts;
mod go;
mod java;
mod js;
mod members;
mod python;
mod rust;
mod source;

pub use cfamily::{include_dirs, is_c_build_file, C_INCLUDE};
pub use go::{go_package_name, GO_MODULE};
pub use js::TS_PATHS;
pub use rust::rust_module_of;

pub use deps::Slice;
use deps::{Deps, Recorded};
pub(crate) use facts::name_ref;
pub use facts::{bare_name, indexed_name, name_refs, owner_of, Facts, NameRef};
pub use source::{names_of, underscored, MemorySource, SymbolSource};

use super::{Edge, EdgeKind, Id};
use crate::parse::{Import, Kind, Lang, ParsedEntity};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

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
