//! Rust's rules: crate and module paths from the file layout, `use`
//! trees, inline modules, `macro_rules!` and inherent and trait methods.

use super::*;

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

/// Rust's standard prelude (2021 edition) and its primitive types, which
/// every file sees after its own items and its `use`s.
pub(super) static PRELUDE: NameList = NameList::new(include_str!("names/rust_prelude.txt"));

/// The crates every toolchain ships, which no repository defines.
fn is_toolchain_crate(root: &str) -> bool {
    matches!(root, "std" | "core" | "alloc" | "proc_macro" | "test")
}

impl Resolver<'_> {
    /// The file of Rust module `modpath` in the crate rooted at `krate`.
    pub(super) fn rs_module(&self, krate: &str, modpath: &[String]) -> Option<String> {
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

    pub(super) fn rs_file_mod(&self, path: &str) -> Option<(String, Vec<String>)> {
        path.ends_with(".rs").then(|| rust_module_of(path))
    }

    pub(super) fn bind_rust_use(
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
            if !*glob && segs.first().is_some_and(|s| is_toolchain_crate(s)) {
                b.external.insert(bound_as.clone());
            }
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

    pub(super) fn bind_rust_mod(
        &self,
        path: &str,
        imp: &Import,
        b: &mut Bindings,
        only: Option<&str>,
    ) {
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

    /// Resolve a Rust path as written in `path` inside inline modules `scope`.
    pub(super) fn rust_path(
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

    pub(super) fn rust_path_from(
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

    /// `n!(…)`: the file's own `macro_rules! n` (at any module depth), then
    /// a name imported into the file (`use crate::n;`), then the one
    /// `#[macro_export]`ed macro of that name in the repository. Only macro
    /// entities answer, never a function that shares the name.
    pub(super) fn resolve_macro(&self, f: &Facts, n: &str, b: &Bindings) -> Option<Loc> {
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
        let exported = self
            .src
            .named(f.lang, n, Slice::Macros)
            .into_iter()
            .filter(|r| {
                self.entity(&r.path, &r.qualname).is_some_and(|e| {
                    e.facts.parsed.entities[e.idx].flavor == crate::parse::MACRO_EXPORT
                })
            });
        self.unique(exported)
    }

    /// The inline-module prefix of a Rust entity's qualname.
    pub(super) fn module_prefix(&self, f: &Facts, idx: usize) -> String {
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

    /// `Type::n`, preferring an impl in `path`, then a unique one.
    pub(super) fn rust_method(&self, path: &str, ty: &str, n: &str) -> Option<Loc> {
        self.typed_method(Lang::Rust, path, ty, n)
    }

    pub(super) fn resolve_rust_call_path(
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
        match self.rust_path(&f.path, &scope, segs, REEXPORT_DEPTH) {
            Some(Target::Entity(p, i)) => Some((p, i)),
            _ => None,
        }
    }
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
