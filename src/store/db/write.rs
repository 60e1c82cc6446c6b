//! Pending writes, gathered in a [`WriteSet`] and applied at once.

use super::*;

/// Files to add to (true) or drop from one dependents list.
pub(super) type FileEdits = BTreeMap<String, bool>;

/// Pending writes, applied all at once by [`Store::apply`].
#[derive(Default)]
pub struct WriteSet {
    /// Key → new value, or `None` to remove; later writes to a key win.
    pub(super) ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    /// Names-index entries to replace: name → its entries (none: gone).
    /// Settled against the stored bucket when applied.
    pub(super) names: BTreeMap<String, Vec<NameRef>>,
    /// Dependents records to edit: (kind's prefix, read) → file → added
    /// (true) or dropped. Settled against the stored bucket when applied.
    pub(super) dep_edits: BTreeMap<(&'static str, String), FileEdits>,
    /// Drop every stored dependents record before the edits.
    pub(super) clear_deps: bool,
}

impl WriteSet {
    pub(super) fn put<T: Serialize>(&mut self, k: Vec<u8>, v: &T) {
        self.ops.push((k, Some(json(v))));
    }
    fn del(&mut self, k: Vec<u8>) {
        self.ops.push((k, None));
    }
    pub fn len(&self) -> usize {
        self.ops.len() + self.names.len() + self.dep_edits.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
            && self.names.is_empty()
            && self.dep_edits.is_empty()
            && !self.clear_deps
    }
    pub fn put_block(&mut self, b: &FileBlock) {
        self.put_fresh_block(b);
        self.mark_stale(&b.file.path);
    }
    fn mark_stale(&mut self, path: &str) {
        self.ops.push((key(SEARCH_STALE, path), Some(Vec::new())));
        self.ops.push((key(SNAPSHOT_STALE, path), Some(Vec::new())));
    }
    /// The snapshot now holds these files as the store does.
    /// The snapshot on disk no longer says what the store holds of `path`:
    /// the next snapshot write serialises it anew (or drops it).
    pub fn snapshot_differs(&mut self, path: &str) {
        self.mark_stale(path);
    }
    pub fn put_unreadable(&mut self, paths: &[String]) {
        match paths.is_empty() {
            true => self.del(UNREADABLE.as_bytes().to_vec()),
            false => self.put(UNREADABLE.as_bytes().to_vec(), &paths),
        }
    }
    /// The (file, function) pairs a commit changed; an empty function
    /// stands for the whole file.
    pub fn put_changed_by(&mut self, commit: &str, changed: &[(String, String)]) {
        self.put(key(CHANGED_BY, commit), &changed);
    }
    pub fn put_adoption(&mut self, a: &Adoption) {
        self.put(ADOPTED.as_bytes().to_vec(), a);
    }
    pub fn snapshot_caught_up(&mut self, paths: &[String]) {
        for p in paths {
            self.del(key(SNAPSHOT_STALE, p));
        }
    }
    /// A block for a store that has no search index yet.
    fn put_fresh_block(&mut self, b: &FileBlock) {
        self.put(key(BLOCK, &b.file.path), b);
        self.put(key(BLOB, &b.file.path), &b.file.blob);
    }
    pub fn remove_block(&mut self, path: &str) {
        self.del(key(BLOCK, path));
        self.del(key(BLOB, path));
        self.mark_stale(path);
    }
    pub fn put_inbound<E: Serialize>(&mut self, path: &str, edges: &[E]) {
        if edges.is_empty() {
            self.del(key(INBOUND, path));
        } else {
            self.put(key(INBOUND, path), &edges);
        }
    }
    /// The names-index entries under one bare name; none removes it.
    pub fn put_named(&mut self, name: &str, refs: &[NameRef]) {
        self.names.insert(name.to_string(), refs.to_vec());
    }
    /// A file's dependency record, or its removal.
    pub fn put_file_deps(&mut self, path: &str, d: Option<&FileDeps>) {
        match d {
            Some(d) => self.ops.push((key(FILE_DEPS, path), Some(packed(d)))),
            None => self.del(key(FILE_DEPS, path)),
        }
    }
    /// Record (or forget) that `file`'s resolution read `read`.
    pub fn dep(&mut self, kind: DepKind, read: &str, file: &str, add: bool) {
        self.dep_edits
            .entry((kind.prefix(), read.to_string()))
            .or_default()
            .insert(file.to_string(), add);
    }
    /// Forget every recorded read, before this set's own edits.
    pub fn clear_deps(&mut self) {
        self.clear_deps = true;
        self.dep_edits.clear();
    }
    /// A whole bucket of records, for a store being built.
    pub(super) fn put_bucket(&mut self, k: Vec<u8>, entries: &[(&str, Vec<u8>)]) {
        self.ops.push((k, Some(buckets::encode_sorted(entries))));
    }
    /// Record every read of `file`'s resolution.
    pub fn deps_of(&mut self, file: &str, d: &Deps, add: bool) {
        for n in &d.names {
            self.dep(DepKind::Name, n, file, add);
        }
        for p in &d.paths {
            self.dep(DepKind::Path, p, file, add);
        }
        for p in &d.lends {
            self.dep(DepKind::Lent, p, file, add);
        }
    }
    pub fn put_category(&mut self, c: &Category) {
        self.put(key(CATEGORY, &c.path), c);
    }
    pub fn remove_category(&mut self, path: &str) {
        self.del(key(CATEGORY, path));
    }
    pub fn put_hier(&mut self, h: &HierState) {
        self.put(HIER.as_bytes().to_vec(), h);
    }
    pub fn put_meta(&mut self, m: &Meta) {
        self.put(META.as_bytes().to_vec(), m);
    }
    pub fn put_counts(&mut self, c: &StoredCounts) {
        self.put(COUNTS.as_bytes().to_vec(), c);
    }
    pub fn put_mirrored(&mut self, m: &Mirrored) {
        self.put(MIRRORED.as_bytes().to_vec(), m);
    }
    pub fn put_seals(&mut self, s: &crate::store::snapshot::Seals) {
        self.ops.push((SEALS.as_bytes().to_vec(), Some(packed(s))));
    }
    pub(super) fn put_layout(&mut self) {
        self.put(LAYOUT.as_bytes().to_vec(), &STORE_LAYOUT);
    }
    pub fn set_deps_ready(&mut self, ready: bool) {
        self.put(DEPS_READY.as_bytes().to_vec(), &ready);
    }
    pub fn push_event(&mut self, seq: u64, log: &EventLog) {
        self.put(key(EVENTS, &format!("{seq:016x}")), log);
    }
    /// The parse of a blob, as resolution and `symbols` read it: without
    /// the docs, signatures and hashes the entity records already hold.
    pub fn put_parsed(&mut self, blob: &str, parsed: &crate::parse::ParsedFile) {
        self.put_stored_parse_owned(blob, StoredParse::of(parsed));
    }
    pub fn put_stored_parse(&mut self, blob: &str, parsed: &StoredParse) {
        self.ops
            .push((key(PARSED, blob), Some(parsed.plain().into_owned())));
    }
    pub fn put_stored_parse_owned(&mut self, blob: &str, parsed: StoredParse) {
        self.ops
            .push((key(PARSED, blob), Some(parsed.into_plain())));
    }
    pub fn remove_parsed(&mut self, blob: &str) {
        self.del(key(PARSED, blob));
    }
    /// A search-index record; `k` must lie under [`SEARCH`].
    pub fn put_search(&mut self, k: Vec<u8>, v: Vec<u8>) {
        debug_assert!(k.starts_with(SEARCH.as_bytes()));
        self.ops.push((k, Some(v)));
    }
    pub fn remove_search(&mut self, k: Vec<u8>) {
        debug_assert!(k.starts_with(SEARCH.as_bytes()));
        self.del(k);
    }
    pub fn remove_event(&mut self, seq: u64) {
        self.del(key(EVENTS, &format!("{seq:016x}")));
    }
}
