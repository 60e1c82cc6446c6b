//! Where the resolver reads symbols from: the trait, and its in-memory
//! implementation over a whole parsed tree (`init`).

use super::deps::{self, Slice};
use super::facts::{bare_name, indexed_name, name_ref, name_refs, owner_of, qualname_hash};
use super::{Facts, NameRef, C_INCLUDE, GO_MODULE, TS_PATHS};
use crate::parse::{Kind, Lang};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

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
