//! Calls: from a call's shape (a bare name, `self.m()`, `x.m()`, a path,
//! a macro) to the one entity it names, or to nothing.

use super::{
    bare_name, java, js, members, python, rust, scopes, Bindings, Facts, Loc, NameRef, Resolver,
    Slice, Target, GENERIC_METHODS, REEXPORT_DEPTH,
};
use crate::parse::{Call, Kind, Lang};

impl<'s> Resolver<'s> {
    pub(super) fn resolve_call(
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
    pub(super) fn resolve_typed(
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
    pub(super) fn resolve_name(
        &self,
        f: &Facts,
        caller: Option<usize>,
        n: &str,
        b: &Bindings,
    ) -> Option<Loc> {
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
    pub(super) fn resolve_outside(&self, f: &Facts, n: &str, b: &Bindings) -> Option<Loc> {
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

    pub(super) fn resolve_self_method(&self, f: &Facts, caller: usize, n: &str) -> Option<Loc> {
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
    pub(super) fn owner_method(&self, f: &Facts, caller: usize, n: &str) -> Option<Loc> {
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
    pub(super) fn typed_method(&self, lang: Lang, path: &str, ty: &str, n: &str) -> Option<Loc> {
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

    pub(super) fn resolve_attr(
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
    pub(super) fn resolve_type_path(
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
    pub(super) fn type_loc(
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
    pub(super) fn unique(&self, mut cands: impl Iterator<Item = NameRef>) -> Option<Loc> {
        let one = cands.next()?;
        if cands.next().is_some() {
            return None;
        }
        self.lookup_qualname(&one.path, &one.qualname)
            .map(|i| (one.path, i))
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
