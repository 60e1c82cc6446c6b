//! Keeping the index in step with the graph: which files to (re-)index,
//! their documents built two threads at a time, and their postings
//! written into a new segment (a first build) or edited in sled.

use super::docs::{build_file, Built};
use super::*;

/// What one [`sync`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncReport {
    /// Built from nothing rather than updated.
    pub fresh: bool,
    /// Records of an earlier index cleared before a rebuild.
    pub cleared: usize,
    /// Of those, posting-list records kept in sled.
    pub cleared_lists: usize,
    pub files_indexed: usize,
    pub files_removed: usize,
    pub docs: u64,
}

#[derive(Default)]
struct Edits {
    /// File numbers whose entries go.
    gone: BTreeSet<u32>,
    add: Vec<Posting>,
}

/// Posting-list edits collected over a sync, applied once per term.
#[derive(Default)]
struct Pending {
    all: FxHashMap<String, Edits>,
    features: FxHashMap<String, Edits>,
    names: FxHashMap<String, Edits>,
    module: FxHashMap<String, Edits>,
    /// Files that came (with their path) or left (`""`), in order.
    paths: Vec<(u32, String)>,
}

impl Pending {
    /// Take a file's documents out of the index.
    fn retire(
        &mut self,
        store: &Store,
        w: &mut WriteSet,
        meta: &mut IndexMeta,
        slot: &Slot,
    ) -> Result<(), StoreError> {
        match slot.delta {
            true => self.take_out(store, w, slot.num)?,
            // The segment's postings are voided whole: no terms to read.
            false => w.put_search(num_key(VOID, slot.num), Vec::new()),
        }
        if let Some(b) = store.search_get(&num_key(DOCS, slot.num))? {
            let d: FileDocs = decode(store, "docs", &b)?;
            meta.docs -= d.docs.len() as u64;
            meta.total_len -= d.docs.iter().map(|x| x.len as f64).sum::<f64>();
            meta.total_features_len -= d.docs.iter().map(|x| x.features_len as f64).sum::<f64>();
            if d.module_len > 0.0 {
                meta.modules -= 1;
                meta.total_module_len -= d.module_len as f64;
            }
        }
        w.remove_search(num_key(DOCS, slot.num));
        w.remove_search(num_key(OWNERS, slot.num));
        Ok(())
    }

    /// Take file `num`'s postings kept in sled out, term by term, by its
    /// [`FileTerms`] record.
    fn take_out(&mut self, store: &Store, w: &mut WriteSet, num: u32) -> Result<(), StoreError> {
        if let Some(b) = store.search_get(&num_key(TERMS_OF, num))? {
            let t: FileTerms = decode(store, "terms", &b)?;
            for (list, terms) in [
                (&mut self.all, t.all),
                (&mut self.features, t.features),
                (&mut self.names, t.names),
                (&mut self.module, t.module),
            ] {
                for term in terms {
                    edits_of(list, &term).gone.insert(num);
                }
            }
        }
        w.remove_search(num_key(TERMS_OF, num));
        Ok(())
    }
}

/// Bring the index in step with the graph in the store: re-index the files
/// whose blob changed, drop the files that left. A no-op when the index
/// already reflects the graph's tree.
pub fn sync(store: &Store, repo: &Repo) -> Result<SyncReport, StoreError> {
    let graph_tree = store.meta()?.tree;
    let stale: Vec<String> = store
        .search_keys(SEARCH_STALE.as_bytes())?
        .iter()
        .map(|k| String::from_utf8_lossy(&k[SEARCH_STALE.len()..]).into_owned())
        .collect();
    let meta = kept_meta(store, stale.len())?;
    let fresh = meta.is_none();
    let mut meta = meta.unwrap_or_default();
    meta.version = INDEX_VERSION;
    let mut report = SyncReport {
        fresh,
        docs: meta.docs,
        ..SyncReport::default()
    };
    if meta.tree == graph_tree && !graph_tree.is_empty() && stale.is_empty() {
        return Ok(report);
    }
    // An index in step but for the marked files looks at those alone:
    // the hook's cost follows the change, not the tree.
    let (blobs, slots) = match fresh {
        true => (store.blobs()?, BTreeMap::new()),
        false => marked(store, &stale)?,
    };
    if fresh {
        clear(store, &mut report)?;
    }
    let mut w = WriteSet::default();
    for path in &stale {
        w.remove_search(key(SEARCH_STALE, path));
    }
    let mut p = Pending::default();
    for (path, slot) in &slots {
        if !blobs.contains_key(path) {
            p.retire(store, &mut w, &mut meta, slot)?;
            w.remove_search(key(SLOTS, path));
            p.paths.push((slot.num, String::new()));
            meta.free.push(slot.num);
            report.files_removed += 1;
        }
    }
    // Plan first (file numbers, retirements), then build documents on two
    // threads in bounded batches, merged in path order as they come: the
    // same postings whatever the timing.
    let todo = plan(store, &blobs, &slots, &mut p, &mut w, &mut meta)?;
    built_ahead(store, repo, &todo, |batch, built| {
        for ((path, blob, num), built) in batch.iter().zip(built) {
            let Some(built) = built? else { continue };
            let delta = !fresh;
            add_file(&built, path, blob, *num, delta, &mut p, &mut meta, &mut w);
            if !slots.contains_key(*path) {
                p.paths.push((*num, path.to_string()));
            }
            report.files_indexed += 1;
        }
        if fresh {
            // Nothing is trusted before `s/meta`, so a first build can go
            // out as it is made instead of piling up beside the postings.
            store.write_unbatched(std::mem::take(&mut w))?;
        }
        Ok(())
    })?;
    match fresh {
        true => meta.segment = Some(write_segment(store, p, meta.next)?),
        false => write_postings(store, p, &mut w)?,
    }
    meta.tree = graph_tree;
    if meta.docs == 0 {
        meta.total_len = 0.0;
        meta.total_features_len = 0.0;
    }
    if meta.modules == 0 {
        meta.total_module_len = 0.0;
    }
    report.docs = meta.docs;
    commit(store, w, &meta, fresh)?;
    Ok(report)
}

/// The index's meta, when the index can be kept and updated. A record
/// this version cannot read, an index of another version, or one whose
/// segment is not the one it wrote (gone, cut or replaced) is rebuilt
/// rather than trusted; so is one most of whose files changed, since a
/// first build writes a new segment for less than the edits would cost.
fn kept_meta(store: &Store, stale: usize) -> Result<Option<IndexMeta>, StoreError> {
    let Some(b) = store.search_get(META)? else {
        return Ok(None);
    };
    let meta = decode::<IndexMeta>(store, "meta", &b).ok();
    let Some(m) = meta.filter(|m| m.version == INDEX_VERSION) else {
        return Ok(None);
    };
    if !segment_fits(store, &m)? || stale > REBUILD_AFTER.max(m.files() / 2) {
        return Ok(None);
    }
    Ok(Some(m))
}

/// Whatever an earlier or killed build left: without `s/meta` nothing
/// under `s/` is trusted.
fn clear(store: &Store, report: &mut SyncReport) -> Result<(), StoreError> {
    let mut w = WriteSet::default();
    for k in store.search_keys(crate::store::SEARCH.as_bytes())? {
        let lists = [NAMES, POST_MODULE, POST_ALL, POST_FEATURES];
        if lists.iter().any(|p| k.starts_with(p.as_bytes())) {
            report.cleared_lists += 1;
        }
        w.remove_search(k.to_vec());
    }
    report.cleared = w.len();
    store.apply_unbatched(w)
}

/// The files to (re-)index, each with its number: a changed file keeps
/// its own, once its old documents are retired; a new one takes a free
/// number or the next.
#[allow(clippy::type_complexity)]
fn plan<'b>(
    store: &Store,
    blobs: &'b BTreeMap<String, String>,
    slots: &BTreeMap<String, Slot>,
    p: &mut Pending,
    w: &mut WriteSet,
    meta: &mut IndexMeta,
) -> Result<Vec<(&'b String, &'b String, u32)>, StoreError> {
    let mut todo = Vec::new();
    for (path, blob) in blobs {
        let num = match slots.get(path) {
            Some(s) if s.blob == *blob => continue,
            Some(s) => {
                p.retire(store, w, meta, s)?;
                s.num
            }
            None => meta.free.pop().unwrap_or_else(|| {
                meta.next += 1;
                meta.next - 1
            }),
        };
        todo.push((path, blob, num));
    }
    Ok(todo)
}

/// Make the sync's writes durable, `s/meta` with them.
fn commit(store: &Store, mut w: WriteSet, meta: &IndexMeta, fresh: bool) -> Result<(), StoreError> {
    if fresh {
        // A first build is written record by record (see
        // `Store::apply_unbatched`); `s/meta` goes last and makes it valid.
        store.apply_unbatched(w)?;
        let mut last = WriteSet::default();
        last.put_search(META.to_vec(), encode(meta));
        store.apply(last)
    } else {
        w.put_search(META.to_vec(), encode(meta));
        store.apply(w)
    }
}

/// Whether the segment file is the length the meta sealed it at; its map's
/// checksum is checked when a reader opens it.
fn segment_fits(store: &Store, meta: &IndexMeta) -> Result<bool, StoreError> {
    let Some(seal) = &meta.segment else {
        return Ok(false);
    };
    Ok(match store.open_segment()? {
        Some(f) => seal.fits(&f),
        None => false,
    })
}

/// Files an update re-indexes above which (and above half the index) it
/// builds afresh instead.
const REBUILD_AFTER: usize = 2_000;

/// The graph's blobs and the index's slots of the files marked stale.
#[allow(clippy::type_complexity)]
fn marked(
    store: &Store,
    stale: &[String],
) -> Result<(BTreeMap<String, String>, BTreeMap<String, Slot>), StoreError> {
    let (mut blobs, mut slots) = (BTreeMap::new(), BTreeMap::new());
    for path in stale {
        if let Some(blob) = store.blob_of(path)? {
            blobs.insert(path.clone(), blob);
        }
        if let Some(v) = store.search_get(&key(SLOTS, path))? {
            slots.insert(path.clone(), decode(store, "slot", &v)?);
        }
    }
    Ok((blobs, slots))
}

type Todo<'b> = (&'b String, &'b String, u32);

/// Hand `merge` the documents of `todo`'s files batch by batch, in order,
/// while the next batch is built: the merge is serial, and two threads
/// building meanwhile keep both cores busy instead of one.
fn built_ahead<'b>(
    store: &Store,
    repo: &Repo,
    todo: &[Todo<'b>],
    mut merge: impl FnMut(&[Todo<'b>], Vec<Result<Option<Built>, StoreError>>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    std::thread::scope(|scope| {
        // One batch waits built while the next is made: a bounded lead.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        scope.spawn(move || {
            for batch in todo.chunks(BUILD_BATCH) {
                if tx.send(build_batch(store, repo, batch)).is_err() {
                    break; // the merge stopped on an error
                }
            }
        });
        for (batch, built) in todo.chunks(BUILD_BATCH).zip(rx) {
            merge(batch, built)?;
        }
        Ok(())
    })
}

/// Documents of a batch of files, built on two threads that take the next
/// file as they finish one (a batch's files differ in size a hundredfold);
/// in the batch's order, `None` for a file the store no longer holds.
fn build_batch(
    store: &Store,
    repo: &Repo,
    batch: &[Todo<'_>],
) -> Vec<Result<Option<Built>, StoreError>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, Result<Option<Built>, StoreError>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let local = repo.local();
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((path, blob, _)) = batch.get(i) else {
                            return out;
                        };
                        out.push((i, build_one(store, &local, path, blob)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, built)| built).collect()
}

fn build_one(
    store: &Store,
    local: &gix::Repository,
    path: &str,
    blob: &str,
) -> Result<Option<Built>, StoreError> {
    let Some(block) = store.file_block(path)? else {
        return Ok(None);
    };
    // A blob missing from the object database leaves the file findable by
    // name and features, just not by its body.
    let text = gix::ObjectId::from_hex(blob.as_bytes())
        .ok()
        .and_then(|id| Repo::read_blob(local, id).ok())
        .map(|b| {
            String::from_utf8(b)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
        })
        .unwrap_or_default();
    Ok(Some(build_file(&block, &text)))
}

/// Merge one built file into the pending postings, the corpus statistics
/// and the batch: its documents, its terms, its slot.
#[allow(clippy::too_many_arguments)]
fn add_file(
    built: &Built,
    path: &str,
    blob: &str,
    num: u32,
    delta: bool,
    p: &mut Pending,
    meta: &mut IndexMeta,
    w: &mut WriteSet,
) {
    let mut terms = FileTerms::default();
    for (i, d) in built.docs.docs.iter().enumerate() {
        let i = i as u16;
        for (tf, list, seen, len) in [
            (&built.all[i as usize], &mut p.all, &mut terms.all, d.len),
            (
                &built.features[i as usize],
                &mut p.features,
                &mut terms.features,
                d.features_len,
            ),
        ] {
            for (term, f) in &tf.terms {
                edits_of(list, term).add.push((num, i, *f, len));
                if delta {
                    seen.push(term.clone());
                }
            }
        }
        let n = name_key(&d.qualname);
        edits_of(&mut p.names, &n).add.push((num, i, 1.0, 0.0));
        terms.names.push(n);
    }
    let len = built.module.len;
    for (term, f) in &built.module.terms {
        edits_of(&mut p.module, term).add.push((num, 0, *f, len));
        if delta {
            terms.module.push(term.clone());
        }
    }
    if len > 0.0 {
        meta.modules += 1;
        meta.total_module_len += len as f64;
    }
    for t in [
        &mut terms.all,
        &mut terms.features,
        &mut terms.names,
        &mut terms.module,
    ] {
        t.sort();
        t.dedup();
    }
    let docs = &built.docs.docs;
    meta.docs += docs.len() as u64;
    meta.total_len += docs.iter().map(|x| x.len as f64).sum::<f64>();
    meta.total_features_len += docs.iter().map(|x| x.features_len as f64).sum::<f64>();
    w.put_search(num_key(DOCS, num), encode(&built.docs));
    let owners = owners_of(docs);
    if !owners.is_empty() {
        w.put_search(num_key(OWNERS, num), encode(&owners));
    }
    // Postings in the segment are voided whole, not edited term by term.
    if delta {
        w.put_search(num_key(TERMS_OF, num), encode(&terms));
    }
    let slot = Slot {
        num,
        blob: blob.to_string(),
        delta,
    };
    w.put_search(key(SLOTS, path), encode(&slot));
}

/// The pending edits of every list, in key order: the prefixes sort
/// as listed, then the terms.
fn in_key_order(p: Pending) -> impl Iterator<Item = (&'static str, String, Edits)> {
    [
        (NAMES, p.names),
        (POST_MODULE, p.module),
        (POST_ALL, p.all),
        (POST_FEATURES, p.features),
    ]
    .into_iter()
    .flat_map(|(prefix, edits)| {
        let mut edits: Vec<(String, Edits)> = edits.into_iter().collect();
        edits.sort_by(|a, b| a.0.cmp(&b.0));
        edits
            .into_iter()
            .filter(|(term, _)| keyable(term))
            .map(move |(term, e)| (prefix, term, e))
    })
}

/// A first build's postings, each list written once into a new segment.
fn write_segment(store: &Store, mut p: Pending, next: u32) -> Result<Seal, StoreError> {
    let t = std::time::Instant::now();
    let mut table = vec![String::new(); next as usize];
    for (num, path) in std::mem::take(&mut p.paths) {
        table[num as usize] = path;
    }
    let seal = store.write_segment(|out| {
        let mut seg = crate::search::segment::Writer::new(out)?;
        // `s/a` sorts before every list's prefix.
        seg.add(PATHS.as_bytes(), &encode(&table))?;
        for (prefix, term, mut e) in in_key_order(p) {
            e.add.sort_by_key(|p| (p.0, p.1));
            seg.add(&key(prefix, &term), &encode(&e.add))?;
        }
        seg.finish()
    })?;
    crate::timing("index segment", t);
    Ok(seal)
}

/// Apply the pending posting edits to sled, term by term in key order, so
/// the batch (and so the store) is the same every run.
fn write_postings(store: &Store, mut p: Pending, w: &mut WriteSet) -> Result<(), StoreError> {
    for (num, path) in std::mem::take(&mut p.paths) {
        w.put_search(num_key(PATHS_SINCE, num), path.into_bytes());
    }
    for (prefix, term, e) in in_key_order(p) {
        write_shards(store, w, prefix, &term, e)?;
    }
    Ok(())
}

/// One term's edits, shard by shard: only the shards of the files that
/// came or went are read and rewritten.
fn write_shards(
    store: &Store,
    w: &mut WriteSet,
    prefix: &str,
    term: &str,
    e: Edits,
) -> Result<(), StoreError> {
    let mut shards: BTreeMap<u32, Vec<Posting>> = BTreeMap::new();
    for num in &e.gone {
        shards.entry(num / SHARD_FILES).or_default();
    }
    for p in e.add {
        shards.entry(p.0 / SHARD_FILES).or_default().push(p);
    }
    for (shard, add) in shards {
        let k = shard_key(prefix, term, shard);
        let mut list: Vec<Posting> = match store.search_get(&k)? {
            Some(b) => decode(store, "postings", &b)?,
            None => Vec::new(),
        };
        list.retain(|p| !e.gone.contains(&p.0));
        list.extend(add);
        list.sort_by_key(|p| (p.0, p.1));
        if list.is_empty() {
            w.remove_search(k);
        } else {
            w.put_search(k, encode(&list));
        }
    }
    Ok(())
}

/// Files whose documents are built together, two threads at a time.
const BUILD_BATCH: usize = 256;

/// Files indexed in one go above which the store is compacted afterwards.
const COMPACT_AFTER: usize = 256;

/// Bring the index in step with the graph (see [`sync`]); after a large
/// build, compact the store so later opens stay fast.
pub fn ready(rpg: &RpgDir, store: Store, repo: &Repo) -> Result<(Store, SyncReport), StoreError> {
    let t = std::time::Instant::now();
    let report = sync(&store, repo)?;
    crate::timing("index sync", t);
    // A first build is written compactly already, its lists outside sled;
    // a large update, or a rebuild over lists kept in sled, leaves garbage.
    let garbage = !report.fresh || report.cleared_lists >= COMPACT_AFTER;
    if report.files_indexed >= COMPACT_AFTER && garbage {
        let store = rpg.compact(store)?;
        crate::timing("index compact", t);
        return Ok((store, report));
    }
    Ok((store, report))
}

/// The pending edits of `term`'s list, made when first needed: a tree's
/// postings would otherwise copy the term's text once each.
fn edits_of<'p>(list: &'p mut FxHashMap<String, Edits>, term: &str) -> &'p mut Edits {
    if !list.contains_key(term) {
        list.insert(term.to_string(), Edits::default());
    }
    list.get_mut(term).expect("just inserted")
}
