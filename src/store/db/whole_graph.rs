//! The whole graph in and out of the store: `init` writes it in slices,
//! `load_graph` reads it back.

use super::*;

impl Store {
    /// Load the whole graph into memory.
    pub fn load_graph(&self) -> Result<Graph, StoreError> {
        let meta = self.meta()?;
        let mut files = BTreeMap::new();
        let mut entities = BTreeMap::new();
        let mut edges = BTreeSet::new();
        for (_, b) in self.scan::<FileBlock>(BLOCK)? {
            for e in b.entities {
                entities.insert(e.id.clone(), e);
            }
            edges.extend(b.out);
            files.insert(b.file.path.clone(), b.file);
        }
        Ok(Graph {
            meta,
            files,
            entities,
            edges,
            categories: self.categories()?,
        })
    }

    /// Write a whole graph into an empty store, with what resolving each
    /// file read and, when given, its parse; files without deps are
    /// resolved again on the next update.
    ///
    /// Records go in in key order. sled rewrites a leaf, large values and
    /// all, as keys are added to it; keys written in order only ever join
    /// the last leaf, so a large record is rewritten a few times at most.
    /// Written out of order, 20k small keys that sorted just before one
    /// file's large inbound record rewrote it at every step: 44 s and 3 GB
    /// of writes for a 2 MB file.
    ///
    /// So what only the store keeps is freed where its keys fall, not
    /// first: the dependency records after `fd/`, each parse as it is
    /// written, last (at millions of lines they were a quarter of the heap
    /// `init` peaks at, until they waited deflated: see
    /// [`StoredParse::shelved`]). Parses written first, under a key that
    /// sorts first, lowered the Linux tree's peak by 40 MB but left sled 278
    /// free segments instead of 45, and sled overwrites every free
    /// segment at every open: 139 MB of writes and 50 ms more for every
    /// hook and query.
    pub fn write_graph(
        &self,
        g: &Graph,
        resolved: Resolved,
        mirrored: &Mirrored,
    ) -> Result<(), StoreError> {
        let mut w = Slices {
            store: self,
            w: WriteSet::default(),
        };
        let Resolved {
            deps,
            parsed,
            unreadable,
        } = resolved;
        for f in g.files.values() {
            w.next()?.put(key(BLOB, &f.path), &f.blob);
        }
        for c in g.categories.values() {
            w.next()?.put_category(c);
        }
        w.next()?.put_counts(&StoredCounts::from(g.counts()));
        let t = std::time::Instant::now();
        let ready = self.write_deps(g, &deps, &mut w)?;
        w.next()?.set_deps_ready(ready);
        crate::timing("store: dependents", t);
        let mut hier = HierState::default();
        for b in blocks_of(g) {
            for e in &b.entities {
                *hier
                    .leaf_dirs
                    .entry(e.leaf.to_string())
                    .or_default()
                    .entry(crate::graph::dir_of(&e.path).to_string())
                    .or_default() += 1;
            }
            w.next()?.put(key(BLOCK, &b.file.path), &b);
        }
        for (path, d) in deps_of(g, &deps) {
            w.next()?.put_file_deps(path, Some(d));
        }
        drop(deps);
        w.next()?.put_hier(&hier);
        crate::timing("store: blocks and dependencies", t);
        self.write_inbound(g, &mut w)?;
        crate::timing("store: inbound edges", t);
        w.next()?.put_layout();
        w.next()?.put_meta(&g.meta);
        w.next()?.put_mirrored(mirrored);
        self.write_names(g, &mut w)?;
        crate::timing("store: names", t);
        for (blob, parsed) in parsed {
            w.next()?.put_stored_parse_owned(&blob, parsed);
        }
        w.next()?.put_unreadable(&unreadable);
        self.apply_unbatched(w.w)
    }

    /// [`Store::write_graph`]'s inbound edges, by the file they point into.
    fn write_inbound(&self, g: &Graph, w: &mut Slices) -> Result<(), StoreError> {
        // Borrowed, not cloned: a second copy of every edge was a large
        // share of a big init's peak memory.
        let mut inbound: BTreeMap<&str, Vec<&Edge>> = BTreeMap::new();
        for e in &g.edges {
            inbound
                .entry(crate::graph::split_id(&e.dst).0)
                .or_default()
                .push(e);
        }
        for (path, edges) in inbound {
            w.next()?.put_inbound(path, &edges);
        }
        Ok(())
    }

    /// [`Store::write_graph`]'s names index, borrowing the entities in the
    /// order blocks list them.
    fn write_names(&self, g: &Graph, w: &mut Slices) -> Result<(), StoreError> {
        let mut names: BTreeMap<&str, Vec<&Entity>> = BTreeMap::new();
        for f in g.files.values() {
            for e in entities_of(g, &f.path) {
                if let Some(n) = indexed_name(&e.qualname, e.kind) {
                    names.entry(n).or_default().push(e);
                }
            }
        }
        for (k, entries) in buckets::group(NAMES, names) {
            let packed: Vec<(&str, Vec<u8>)> = entries
                .into_iter()
                .map(|(n, ents)| {
                    let refs: Vec<NameRef> = ents
                        .iter()
                        .map(|e| name_ref(&e.path, &e.qualname, e.kind))
                        .collect();
                    (n, packed(&refs))
                })
                .collect();
            w.next()?.put_bucket(k, &packed);
        }
        Ok(())
    }

    /// [`Store::write_graph`]'s lists of the files that read each name,
    /// path and lent item. Whether every file had its reads recorded.
    fn write_deps(
        &self,
        g: &Graph,
        deps: &BTreeMap<String, FileDeps>,
        w: &mut Slices,
    ) -> Result<bool, StoreError> {
        // Files by number, not by `&str`: the Linux tree has 17M (name,
        // file) pairs, and at 16 bytes each they raised init's peak.
        let paths: Vec<&str> = deps_of(g, deps).map(|(path, _)| path).collect();
        let named =
            |files: &[u32]| -> Vec<&str> { files.iter().map(|&f| paths[f as usize]).collect() };
        // One kind at a time, in the order of their keys: the lists are
        // built beside the whole graph, at init's peak.
        for kind in [DepKind::Lent, DepKind::Name, DepKind::Path] {
            let mut by_read: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
            for (file, (_, d)) in deps_of(g, deps).enumerate() {
                let reads = match kind {
                    DepKind::Lent => &d.deps.lends,
                    DepKind::Name => &d.deps.names,
                    DepKind::Path => &d.deps.paths,
                };
                for r in reads {
                    by_read.entry(r).or_default().push(file as u32);
                }
            }
            // Files were visited in order, so each list is sorted already.
            for (k, entries) in buckets::group(kind.prefix(), by_read.iter().map(|(r, f)| (*r, f)))
            {
                let mut kept = Vec::with_capacity(entries.len());
                // A long list's parts hold only reads of this bucket, in
                // order: written with it, none is held past it.
                let mut parts: BTreeMap<Vec<u8>, Vec<(&str, Vec<u8>)>> = BTreeMap::new();
                for (read, files) in entries {
                    if files.len() < dependents::LONG {
                        kept.push((read, packed(&named(files))));
                        continue;
                    }
                    kept.push((read, dependents::long_mark()));
                    for (pk, in_part) in dependents::split(kind.prefix(), read, &named(files)) {
                        parts.entry(pk).or_default().push((read, packed(&in_part)));
                    }
                }
                w.next()?.put_bucket(k, &kept);
                for (pk, entries) in parts {
                    w.next()?.put_bucket(pk, &entries);
                }
            }
        }
        Ok(paths.len() == g.files.len())
    }
}

/// Each file's recorded reads, when they were made of the blob it holds.
fn deps_of<'g>(
    g: &'g Graph,
    deps: &'g BTreeMap<String, FileDeps>,
) -> impl Iterator<Item = (&'g str, &'g FileDeps)> {
    g.files.iter().filter_map(|(path, f)| {
        let d = deps.get(path).filter(|d| d.blob == f.blob)?;
        Some((path.as_str(), d))
    })
}

/// A write set applied in slices as it fills: a fresh store is invisible
/// until swapped in, so it can be written in parts, which keeps memory
/// flat on large trees.
struct Slices<'s> {
    store: &'s Store,
    w: WriteSet,
}

impl Slices<'_> {
    /// The set to add the next record to, after writing out a full one.
    fn next(&mut self) -> Result<&mut WriteSet, StoreError> {
        if self.w.len() >= 1024 {
            self.store.apply_unbatched(std::mem::take(&mut self.w))?;
        }
        Ok(&mut self.w)
    }
}
