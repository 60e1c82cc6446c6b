//! Phase 6 of an update: which files' edges may change, and resolving
//! them again against the store, with the dependency records, inbound
//! index and counts kept in step.

use super::*;
use crate::store::grams;
use rustc_hash::{FxHashMap, FxHashSet};

/// What [`EdgeWork::may_read`] asks of the files that read a changed
/// file: the words of the definitions that changed there, the paths the
/// update touches, and which files' parses were found to hold the words.
struct Lookups<'t> {
    words: BTreeSet<String>,
    touched: &'t FxHashSet<String>,
    holds: FxHashMap<String, bool>,
}

impl Lookups<'_> {
    /// Whether `path`'s parse holds a word, asked once per update: a file
    /// that includes the changed header may be a header others read.
    fn remembered(
        &mut self,
        path: &str,
        ask: impl FnOnce(&Self) -> Result<bool, EvolveError>,
    ) -> Result<bool, EvolveError> {
        if let Some(&held) = self.holds.get(path) {
            return Ok(held);
        }
        let held = ask(self)?;
        self.holds.insert(path.to_string(), held);
        Ok(held)
    }
}

/// Phase 6's inputs: what the update knows when it re-resolves edges.
pub(super) struct EdgeWork<'a> {
    pub(super) store: &'a Store,
    pub(super) repo: &'a Repo,
    pub(super) change: &'a Change,
    pub(super) old: &'a OldState,
    pub(super) sources: &'a [&'a SourceFile],
    /// Each source's parse as the store keeps it, in the same order: its
    /// dependency record's filter and the stored parse are made of it.
    pub(super) packed: Vec<StoredParse>,
    pub(super) crates: &'a BTreeMap<String, String>,
    /// How `.h` files are read.
    pub(super) headers: Lang,
}

impl EdgeWork<'_> {
    /// Files that vanished (deleted, or renamed away).
    fn gone(&self, new_blocks: &BTreeMap<String, FileBlock>) -> BTreeSet<String> {
        self.old
            .blocks
            .keys()
            .filter(|p| !new_blocks.contains_key(*p))
            .cloned()
            .collect()
    }

    /// Slices of the names index the change altered: entries of the
    /// changed files' entities that came, went or changed.
    /// With them, the "many" keys whose answer may flip (see
    /// [`flipped_many`]), counted against every stored entry of each name.
    fn changed_keys(
        &self,
        new_blocks: &BTreeMap<String, FileBlock>,
    ) -> Result<BTreeSet<String>, EvolveError> {
        let before: Vec<(String, NameRef)> =
            self.old.blocks.values().flat_map(block_names).collect();
        let after: Vec<(String, NameRef)> = new_blocks.values().flat_map(block_names).collect();
        let mut keys = changed_keys(&before, &after);
        for (name, changed) in changed_entries(&before, &after) {
            let stored = self.store.named_any(name)?;
            let now: Vec<NameRef> = stored
                .iter()
                .filter(|r| !self.old.blocks.contains_key(&r.path))
                .chain(after.iter().filter(|(n, _)| n == name).map(|(_, r)| r))
                .cloned()
                .collect();
            keys.extend(flipped_many(name, &changed, &stored, &now));
        }
        Ok(keys)
    }

    /// Files whose interface other resolutions may have read differently
    /// now: added, deleted, moved, or edited beyond their bodies; with the
    /// words of the definitions that changed, where [`changed_names`]
    /// can tell them (`None`: any reader may be affected).
    fn changed_paths(&self) -> Result<BTreeMap<String, Option<BTreeSet<String>>>, EvolveError> {
        let mut out = BTreeMap::new();
        for d in &self.change.deltas {
            let new = d.new.as_ref();
            match (&d.old_path, new) {
                (Some(old), Some(n)) if *old == n.path => {
                    let before = self.store.file_deps(old)?;
                    let same = |f: &FileDeps| f.interface == interface_digest(&n.facts);
                    if let Some(f) = before.as_ref().filter(|f| !same(f)) {
                        let old_parse = self.store.parsed(&f.blob)?;
                        let names = old_parse.and_then(|p| changed_names(&p, &n.facts.parsed));
                        out.insert(old.clone(), names);
                    } else if before.is_none() {
                        out.insert(old.clone(), None);
                    }
                }
                _ => {
                    out.extend(d.old_path.iter().map(|p| (p.clone(), None)));
                    // A probe that missed is keyed by a prefix of its path.
                    if let Some(n) = new {
                        out.extend(prefixes(&n.path).map(|p| (p.to_string(), None)));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Whether `file`'s last resolution, which looked into `changed`, may
    /// read it differently now that the definitions named by `words`
    /// changed there: when `file`, or another file it looked into, has
    /// any of the words in its stored parse, or is itself being changed.
    /// Asked of each of the thousands of files that include a header, so
    /// its record is read where the store holds it, not copied.
    fn may_read(&self, file: &str, changed: &str, look: &mut Lookups) -> Result<bool, EvolveError> {
        // Where a file's resolution never passes through one file on to
        // another, it reads a changed definition only where its own text
        // names it. Else a header naming a common function in a macro made
        // every C file that includes both re-resolve: renaming the
        // try_module_get stub in linux/module.h reached 6,388 files, of
        // which 366 name it.
        let through_others = Lang::of(file, self.headers)
            .is_none_or(crate::graph::resolve::deps::reads_through_other_files);
        let answer = self.store.paths_read(file, |own| {
            if file != changed
                && (look.touched.contains(file)
                    || look.remembered(file, |look| self.holds(own.blob, own.grams, look))?)
            {
                return Ok(true);
            }
            if !through_others {
                return Ok(false);
            }
            for &path in own.paths.iter().filter(|p| **p != changed) {
                if look.touched.contains(path)
                    || look.remembered(path, |look| self.header_holds(path, look))?
                {
                    return Ok(true);
                }
            }
            Ok(false)
        })?;
        answer.unwrap_or(Ok(true))
    }

    /// Whether a file's stored parse has any of the changed words. Most
    /// parses lack them, which the filter in its record says unread.
    fn holds(&self, blob: &str, filter: &[u8], look: &Lookups) -> Result<bool, EvolveError> {
        if !look
            .words
            .iter()
            .any(|w| grams::may_hold(filter, w.as_bytes()))
        {
            return Ok(false);
        }
        self.parse_holds(blob, &look.words)
    }

    /// [`Self::holds`] for a file another one looked into (a header read
    /// by thousands of the files that include the changed one), from its
    /// own record, or its parse when it has none.
    fn header_holds(&self, path: &str, look: &Lookups) -> Result<bool, EvolveError> {
        match self
            .store
            .grams_of(path, |v| self.holds(v.blob, v.grams, look))?
        {
            Some(held) => held,
            None => match self.store.blob_of(path)? {
                Some(blob) => self.parse_holds(&blob, &look.words),
                None => Ok(false),
            },
        }
    }

    /// Whether the stored parse of `blob` has any of `words`. Only the
    /// answer is kept: thousands of parses held at once would cost more
    /// memory than reading one again costs time.
    fn parse_holds(&self, blob: &str, words: &BTreeSet<String>) -> Result<bool, EvolveError> {
        Ok(self.store.parsed_bytes(blob)?.is_some_and(|bytes| {
            words
                .iter()
                .any(|w| memchr::memmem::find(&bytes, w.as_bytes()).is_some())
        }))
    }

    /// The paths this update adds, deletes, moves or edits.
    fn touched(&self) -> FxHashSet<String> {
        let old = self.change.deltas.iter().filter_map(|d| d.old_path.clone());
        let new = self
            .change
            .deltas
            .iter()
            .filter_map(|d| Some(d.new.as_ref()?.path.clone()));
        old.chain(new).collect()
    }

    /// The files whose edges may change: the changed ones, and those whose
    /// last resolution read a slice of the names index or a file the change
    /// altered; every file when that is too many, a manifest changed, or
    /// the store does not know what each file read.
    fn affected(
        &self,
        new_blocks: &BTreeMap<String, FileBlock>,
        gone: &BTreeSet<String>,
        ready: bool,
        files: usize,
        opts: &UpdateOptions,
        report: &mut UpdateReport,
    ) -> Result<BTreeSet<String>, EvolveError> {
        let mut affected: BTreeSet<String> = new_blocks.keys().cloned().collect();
        let known = ready && !self.change.crates_changed;
        if known {
            for k in self.changed_keys(new_blocks)? {
                affected.extend(self.store.dependents(DepKind::Name, &k)?);
            }
            let touched = self.touched();
            for (p, words) in self.changed_paths()? {
                let mut look = words.map(|words| Lookups {
                    words,
                    touched: &touched,
                    holds: FxHashMap::default(),
                });
                for file in self.store.dependents(DepKind::Path, &p)? {
                    opts.within_budget()?;
                    let reads = match look.as_mut() {
                        None => true,
                        Some(look) => {
                            !affected.contains(&file) && self.may_read(&file, &p, look)?
                        }
                    };
                    if reads {
                        affected.insert(file);
                    }
                }
            }
        }
        affected.retain(|p| !gone.contains(p) || new_blocks.contains_key(p));
        let extra =
            |a: &BTreeSet<String>| a.iter().filter(|p| !new_blocks.contains_key(*p)).count();
        let most = opts.max_extra_files.max(files / 4);
        if !known || extra(&affected) > most {
            report.full_resolve = true;
            affected.extend(
                self.store
                    .blobs()?
                    .into_keys()
                    .filter(|p| !gone.contains(p)),
            );
        }
        report.extra_files_resolved = extra(&affected);
        Ok(affected)
    }

    /// A file's dependency record after resolving it anew: a changed
    /// file's from its new parse, an unchanged one's (`stored`) kept but
    /// for `deps`.
    fn record_of(
        &self,
        path: &str,
        deps: Deps,
        stored: Option<FileDeps>,
        source: &StoreSource,
    ) -> Result<Option<FileDeps>, EvolveError> {
        if let Some(i) = self.sources.iter().position(|s| s.path == path) {
            let s = self.sources[i];
            return Ok(Some(FileDeps {
                blob: s.blob.to_string(),
                deps,
                grams: self.packed[i].grams(),
                binds: s.facts.binds(),
                interface: interface_digest(&s.facts),
            }));
        }
        let Some(blob) = self.store.blob_of(path)? else {
            return Ok(None);
        };
        let kept = stored.filter(|f| f.blob == blob);
        if let Some(f) = kept {
            return Ok(Some(FileDeps { deps, ..f }));
        }
        let Some(f) = crate::graph::resolve::SymbolSource::facts(source, path) else {
            return Ok(None);
        };
        let grams = self.store.parsed_bytes(&blob)?.map(|b| grams::filter(&b));
        Ok(Some(FileDeps {
            blob,
            deps,
            grams: grams.unwrap_or_default(),
            binds: f.binds(),
            interface: interface_digest(&f),
        }))
    }

    /// Phase 6: re-resolve the affected files' edges, keep the inbound
    /// index and the counts in step, and cache fresh parses. Returns the
    /// counts after the update.
    pub(super) fn reresolve(
        &self,
        new_blocks: &mut BTreeMap<String, FileBlock>,
        opts: &UpdateOptions,
        report: &mut UpdateReport,
        w: &mut WriteSet,
    ) -> Result<StoredCountsOf, EvolveError> {
        let gone = self.gone(new_blocks);
        // Whether the stored reads describe the stored graph; read once.
        let ready = self.store.deps_ready()?;
        let mut counts = self.store.counts()?;
        let affected = self.affected(new_blocks, &gone, ready, counts.files, opts, report)?;
        if report.full_resolve && !ready {
            // What an earlier resolution read, if anything, is stale.
            w.clear_deps();
            for (path, _) in self.store.all_file_deps()? {
                w.put_file_deps(&path, None);
            }
        }
        let new_facts: Vec<Arc<Facts>> = self.sources.iter().map(|s| s.facts.clone()).collect();
        let source = StoreSource::new(
            self.store,
            self.repo,
            &new_facts,
            gone.clone(),
            self.crates,
            self.headers,
        );
        let resolver = Resolver::new(&source);
        let everything = report.full_resolve;
        let (affected, mut resolved) =
            self.resolve_lending(&resolver, affected, &gone, everything, opts)?;
        opts.within_budget()?;
        let mut lent = lent_edges(&mut resolved);
        let mut inbound = InboundDelta::default();
        for path in &affected {
            opts.within_budget()?;
            // The block (a changed file's new one, else the stored one) and
            // the counts that come off for it.
            let (mut block, stored, changed) = match new_blocks.remove(path) {
                Some(b) => (b, self.old.blocks.get(path).map(FileBlock::counts), true),
                None => match self.store.file_block(path)? {
                    Some(b) => {
                        let c = b.counts();
                        (b, Some(c), false)
                    }
                    None => continue,
                },
            };
            // The edges it had: a renamed file's under its old path, a new
            // file's none.
            let old_out: Vec<Edge> = match changed {
                true => self
                    .old
                    .block_before(&self.change.deltas, path)
                    .map(|b| b.out.clone())
                    .unwrap_or_default(),
                false => block.out.clone(),
            };
            let mut out: Vec<Edge> = block
                .out
                .iter()
                .filter(|e| e.kind == EdgeKind::Contains)
                .cloned()
                .collect();
            let (edges, deps) = resolved.remove(path).unwrap_or_default();
            out.extend(edges);
            out.extend(lent.remove(path).unwrap_or_default());
            out.sort();
            out.dedup();
            self.keep_deps(path, deps, ready, &source, w)?;
            inbound.touch(&old_out, &out);
            if let Some(c) = stored {
                counts.apply(&c, -1);
            }
            block.out = out;
            counts.apply(&block.counts(), 1);
            w.put_block(&block);
            new_blocks.insert(path.clone(), block);
        }
        report.files_parsed_on_demand = *source.parsed_on_demand.borrow();
        for (blob, f) in source.fresh.borrow().iter() {
            w.put_parsed(blob, &f.parsed);
        }
        // Cache the changed files' new parses too, and forget their old ones.
        for b in self.old.blocks.values() {
            w.remove_parsed(&b.file.blob);
        }
        for (s, parse) in self.sources.iter().zip(&self.packed) {
            w.put_stored_parse(&s.blob.to_string(), parse);
        }
        for p in &gone {
            if let Some(ob) = self.old.blocks.get(p) {
                counts.apply(&ob.counts(), -1);
                inbound.touch(&ob.out, &[]);
            }
            w.remove_block(p);
            if let Some(d) = self.store.file_deps(p)? {
                w.deps_of(p, &d.deps, false);
            }
            w.put_file_deps(p, None);
        }
        w.set_deps_ready(true);
        inbound.write(self.store, w)?;
        Ok(counts)
    }
}

/// Each resolved file's edges and reads.
type Resolutions = BTreeMap<String, (Vec<Edge>, Deps)>;

/// Take out of each resolution the edges that start in another file,
/// grouped by that file.
fn lent_edges(resolved: &mut Resolutions) -> BTreeMap<String, Vec<Edge>> {
    let mut lent: BTreeMap<String, Vec<Edge>> = BTreeMap::new();
    for (path, (edges, _)) in resolved.iter_mut() {
        let (own, other): (Vec<Edge>, Vec<Edge>) = std::mem::take(edges)
            .into_iter()
            .partition(|e| crate::graph::split_id(&e.src).0 == path);
        *edges = own;
        for e in other {
            let from = crate::graph::split_id(&e.src).0.to_string();
            lent.entry(from).or_default().push(e);
        }
    }
    lent
}

impl EdgeWork<'_> {
    /// Resolve the affected files, and with them every file that lends
    /// edges to one of them or borrowed from one before: a block holds the
    /// edges that start in its file whichever file's resolution gave them,
    /// so it is rebuilt only from all of them at once. `everything`: all
    /// files are affected already.
    fn resolve_lending(
        &self,
        resolver: &Resolver,
        mut affected: BTreeSet<String>,
        gone: &BTreeSet<String>,
        everything: bool,
        opts: &UpdateOptions,
    ) -> Result<(BTreeSet<String>, Resolutions), EvolveError> {
        let mut todo: BTreeSet<String> = affected.clone();
        if !everything {
            todo.extend(gone.iter().cloned());
        }
        let mut out = Resolutions::new();
        let started = std::time::Instant::now();
        while let Some(path) = todo.pop_first() {
            opts.on_pace(started, out.len(), todo.len() + 1)?;
            let mut next = BTreeSet::new();
            if !everything {
                next.extend(self.store.dependents(DepKind::Lent, &path)?);
                if let Some(d) = self.store.file_deps(&path)? {
                    next.extend(d.deps.lends.iter().map(|p| p.to_string()));
                }
            }
            if affected.contains(&path) {
                let (edges, deps) = resolver.edges_and_deps(&path);
                next.extend(deps.lends.iter().map(|p| p.to_string()));
                out.insert(path, (edges, deps));
            }
            for n in next {
                if !gone.contains(&n) && affected.insert(n.clone()) {
                    todo.insert(n);
                }
            }
        }
        Ok((affected, out))
    }

    /// Store what resolving `path` read, touching only the reads that
    /// changed since its last resolution.
    fn keep_deps(
        &self,
        path: &str,
        deps: Deps,
        ready: bool,
        source: &StoreSource,
        w: &mut WriteSet,
    ) -> Result<(), EvolveError> {
        let stored = self.store.file_deps(path)?;
        let none = Deps::default();
        let before = match (&stored, ready) {
            (Some(f), true) => &f.deps,
            _ => &none,
        };
        let gone = before.minus(&deps);
        let came = deps.minus(before);
        w.deps_of(path, &gone, false);
        w.deps_of(path, &came, true);
        let record = self.record_of(path, deps, stored, source)?;
        w.put_file_deps(path, record.as_ref());
        Ok(())
    }
}

type StoredCountsOf = crate::store::StoredCounts;

/// Edges gained and lost, by the file they point into: the inbound index
/// is rewritten only for those files.
#[derive(Default)]
struct InboundDelta(BTreeMap<String, (BTreeSet<Edge>, BTreeSet<Edge>)>);

impl InboundDelta {
    fn touch(&mut self, old: &[Edge], new: &[Edge]) {
        let old: BTreeSet<&Edge> = old.iter().collect();
        let new: BTreeSet<&Edge> = new.iter().collect();
        for e in old.difference(&new) {
            let p = crate::graph::split_id(&e.dst).0.to_string();
            self.0.entry(p).or_default().0.insert((*e).clone());
        }
        for e in new.difference(&old) {
            let p = crate::graph::split_id(&e.dst).0.to_string();
            self.0.entry(p).or_default().1.insert((*e).clone());
        }
    }

    fn write(self, store: &Store, w: &mut WriteSet) -> Result<(), EvolveError> {
        for (p, (removed, added)) in self.0 {
            let mut edges: BTreeSet<Edge> = store.inbound(&p)?.into_iter().collect();
            for e in &removed {
                edges.remove(e);
            }
            edges.extend(added);
            w.put_inbound(&p, &edges.into_iter().collect::<Vec<_>>());
        }
        Ok(())
    }
}
