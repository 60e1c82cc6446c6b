//! Java's rules: imports and packages through the source roots, and
//! calls through declared types.

use super::*;

/// The public types of `java.lang`, which every compilation unit imports
/// after its own package.
pub(super) static JAVA_LANG: NameList = NameList::new(include_str!("names/java_lang.txt"));

impl Resolver<'_> {
    pub(super) fn bind_java(&self, imp: &Import, b: &mut Bindings, only: Option<&str>) {
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
            } else if let Some(class) = self.java_import(segs) {
                b.imported_files.insert(class.0.clone());
                b.static_classes.push(class);
            }
            return;
        }
        let Some(last) = segs.last().filter(|l| wants(only, l)) else {
            return;
        };
        match self.java_import(segs) {
            Some((p, q)) => {
                b.imported_files.insert(p.clone());
                b.names.insert(last.clone(), Target::Entity(p, q));
            }
            // A single-type import names its class exactly; one no source
            // root holds is a dependency's (`java.util.List`).
            None if !*is_static => {
                b.external.insert(last.clone());
            }
            None => {}
        }
    }

    /// The class (or, for a static import, member) a Java import names:
    /// the longest package prefix whose next segment is a file's class.
    pub(super) fn java_import(&self, segs: &[String]) -> Option<Loc> {
        let last = segs.last()?;
        for k in (1..=segs.len()).rev() {
            let file = format!("{}.java", segs[..k].join("/"));
            let qual = segs[k - 1..].join(".");
            let mut hits: Vec<NameRef> = self
                .src
                .named(Lang::Java, last, Slice::All)
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

    /// A Java call with no receiver: a method of an enclosing class or
    /// its supertypes, a static import, a class imported `static …*`, then
    /// a method unique by name.
    pub(super) fn java_unqualified(
        &self,
        f: &Facts,
        caller: Option<usize>,
        n: &str,
        b: &Bindings,
    ) -> Option<Loc> {
        let ents = &f.parsed.entities;
        let own = super::enclosing_classes(ents, caller)
            .find_map(|s| self.python_method(&f.path, &ents[s].qualname, n, 0));
        if own.is_some() {
            return own;
        }
        if let Some(Target::Entity(p, q)) = b.names.get(n) {
            return Some((p.clone(), q.clone()));
        }
        for (p, q) in &b.static_classes {
            if let Some(m) = self.python_method(p, q, n, 0) {
                return Some(m);
            }
        }
        if GENERIC_METHODS.contains(&n) {
            return None;
        }
        self.unique(self.src.named_few(f.lang, n, Slice::Methods)?.into_iter())
    }

    /// A Java type as written (`T`, `Outer.Inner`) seen from `at`.
    pub(super) fn java_type(
        &self,
        f: &Facts,
        at: Option<usize>,
        ty: &[String],
        b: &Bindings,
    ) -> Option<Loc> {
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
}
