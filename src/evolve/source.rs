//! Symbols for an update: the store, with the changed files laid over it.
//! Files outside the change are parsed from their blobs only when the
//! resolver asks about them, so the work follows the change.

use crate::git::Repo;
use crate::graph::resolve::deps::MANY;
use crate::graph::resolve::{bare_name, names_of, Facts, NameRef, Slice, SymbolSource};
use crate::parse::{self, Kind, Lang};
use crate::store::Store;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

pub struct StoreSource<'a> {
    store: &'a Store,
    repo: gix::Repository,
    /// New versions of changed files.
    changed: FxHashMap<String, Arc<Facts>>,
    /// Paths that no longer hold an indexed file.
    gone: BTreeSet<String>,
    /// Name entries of the changed files' new entities.
    added_names: HashMap<(Lang, String), Vec<NameRef>>,
    crates: BTreeMap<String, String>,
    /// How `.h` files are read, for files parsed on demand.
    headers: Lang,
    cache: RefCell<FxHashMap<String, Option<Arc<Facts>>>>,
    /// Stored names-index entries by bare name, every language: one
    /// read per name, however often resolution asks.
    stored_names: RefCell<FxHashMap<String, Arc<Vec<NameRef>>>>,
    /// Directories asked about, each scanned for once: every missed probe
    /// asks about each directory above it.
    dirs: RefCell<FxHashMap<String, bool>>,
    /// Files parsed on demand, for the report.
    pub parsed_on_demand: RefCell<usize>,
    /// Fresh parses worth caching in the store: (blob, facts).
    pub fresh: RefCell<Vec<(String, Arc<Facts>)>>,
}

impl<'a> StoreSource<'a> {
    pub fn new(
        store: &'a Store,
        repo: &Repo,
        changed: &[Arc<Facts>],
        gone: BTreeSet<String>,
        crates: &BTreeMap<String, String>,
        headers: Lang,
    ) -> StoreSource<'a> {
        let added_names = names_of(changed);
        StoreSource {
            store,
            repo: repo.local(),
            changed: changed
                .iter()
                .map(|f| (f.path.clone(), f.clone()))
                .collect(),
            gone,
            added_names,
            crates: crate::graph::resolve::underscored(crates),
            headers,
            cache: RefCell::default(),
            stored_names: RefCell::default(),
            dirs: RefCell::default(),
            parsed_on_demand: RefCell::new(0),
            fresh: RefCell::new(Vec::new()),
        }
    }

    fn touched(&self, path: &str) -> bool {
        self.changed.contains_key(path) || self.gone.contains(path)
    }

    /// Hand each entry [`SymbolSource::named`] answers with to `each`,
    /// unsorted, copying nothing.
    fn visible(&self, lang: Lang, name: &str, slice: Slice, mut each: impl FnMut(&NameRef)) {
        let family = Some(lang.family());
        self.stored(name)
            .iter()
            .filter(|r| slice.holds(r))
            .filter(|r| Lang::from_path(&r.path).map(Lang::family) == family)
            .filter(|r| !self.touched(&r.path))
            .for_each(&mut each);
        if let Some(added) = self.added_names.get(&(lang.family(), name.to_string())) {
            added.iter().filter(|r| slice.holds(r)).for_each(each);
        }
    }

    /// The stored entries under `name`, in every language.
    fn stored(&self, name: &str) -> Arc<Vec<NameRef>> {
        if let Some(hit) = self.stored_names.borrow().get(name) {
            return hit.clone();
        }
        let all = Arc::new(self.store.named_any(name).unwrap_or_default());
        self.stored_names
            .borrow_mut()
            .insert(name.to_string(), all.clone());
        all
    }
}

impl SymbolSource for StoreSource<'_> {
    fn facts(&self, path: &str) -> Option<Arc<Facts>> {
        if let Some(f) = self.changed.get(path) {
            return Some(f.clone());
        }
        if self.gone.contains(path) {
            return None;
        }
        if let Some(hit) = self.cache.borrow().get(path) {
            return hit.clone();
        }
        let facts = (|| {
            let lang = Lang::of(path, self.headers)?;
            let blob = self.store.blob_of(path).ok()??;
            if let Ok(Some(parsed)) = self.store.parsed(&blob) {
                return Some(Arc::new(Facts::new(path.to_string(), lang, parsed)));
            }
            let id = gix::ObjectId::from_hex(blob.as_bytes()).ok()?;
            let data = Repo::read_blob(&self.repo, id).ok()?;
            let text = String::from_utf8(data).ok()?;
            *self.parsed_on_demand.borrow_mut() += 1;
            let f = Arc::new(Facts::new(
                path.to_string(),
                lang,
                parse::parse(lang, path, &text),
            ));
            self.fresh.borrow_mut().push((blob, f.clone()));
            Some(f)
        })();
        self.cache
            .borrow_mut()
            .insert(path.to_string(), facts.clone());
        facts
    }

    fn is_file(&self, path: &str) -> bool {
        if self.changed.contains_key(path) {
            return true;
        }
        if self.gone.contains(path) {
            return false;
        }
        matches!(self.store.blob_of(path), Ok(Some(_)))
    }

    fn is_dir(&self, path: &str) -> bool {
        if let Some(hit) = self.dirs.borrow().get(path) {
            return *hit;
        }
        let under = format!("{path}/");
        let found = self.changed.keys().any(|p| p.starts_with(&under))
            || self
                .store
                .any_file_under(&under, |p| !self.gone.contains(p))
                .unwrap_or(false);
        self.dirs.borrow_mut().insert(path.to_string(), found);
        found
    }

    fn named(&self, lang: Lang, name: &str, slice: Slice) -> Vec<NameRef> {
        let mut out: Vec<NameRef> = Vec::new();
        self.visible(lang, name, slice, |r| out.push(r.clone()));
        // Candidate order must not depend on which files changed.
        out.sort();
        out
    }

    fn named_few(&self, lang: Lang, name: &str, slice: Slice) -> Option<Vec<NameRef>> {
        let mut n = 0;
        self.visible(lang, name, slice, |_| n += 1);
        (n <= MANY).then(|| self.named(lang, name, slice))
    }

    fn crates(&self) -> &BTreeMap<String, String> {
        &self.crates
    }

    fn may_bind(&self, path: &str, name: &str) -> bool {
        if let Some(f) = self.changed.get(path) {
            let b = f.binds();
            return b.contains_key(name) || b.contains_key("*");
        }
        match self.store.file_deps(path) {
            Ok(Some(d)) => d.binds.contains_key(name) || d.binds.contains_key("*"),
            _ => true,
        }
    }

    fn kind_of(&self, path: &str, qualname: &str) -> Option<Kind> {
        let parsed = self
            .changed
            .get(path)
            .cloned()
            .or_else(|| self.cache.borrow().get(path).cloned().flatten());
        if let Some(f) = parsed {
            return f.lookup(qualname).map(|i| f.parsed.entities[i].kind);
        }
        if self.gone.contains(path) {
            return None;
        }
        // The names index answers without parsing the file.
        self.stored(bare_name(qualname))
            .iter()
            .find(|r| r.path == path && r.qualname == qualname)
            .map(|r| r.kind)
    }

    /// The names index holds every entity of a file the update left
    /// alone, as its parse does, so only the changed and gone paths need
    /// asking one by one; the rest are looked for among the few entries
    /// of `qualname` itself.
    fn first_defining(&self, paths: &[String], qualname: &str) -> Option<usize> {
        let stored = self.stored(bare_name(qualname));
        let held: Vec<&str> = stored
            .iter()
            .filter(|r| r.qualname == qualname)
            .map(|r| r.path.as_str())
            .collect();
        paths.iter().position(|p| match self.touched(p) {
            true => self.kind_of(p, qualname).is_some(),
            false => held.contains(&p.as_str()),
        })
    }
}
