//! The dependents lists: for each read (a slice of the names index, a
//! file looked into or probed for, a file lent edges), the files whose
//! resolution made it.
//!
//! A list sits in its bucket (see [`buckets`]) until it holds [`LONG`]
//! files. Then the bucket keeps an empty list to mark it, and the files
//! go to [`PARTS`] records of their own, split by a hash of their path,
//! so a file that comes, goes or moves rewrites a part of each list it is
//! in, not the whole. On the Linux tree a probe that misses, such as
//! `arch/arm/include/linux`, is read by 28,000 files (a 1.1 MB list),
//! and moving one driver rewrote 31 MB of lists, 18 MB of them in 54
//! such.

use super::*;

/// Files from which a list is split into parts.
pub(super) const LONG: usize = 1024;
/// Parts of a long list.
const PARTS: u32 = 32;

/// The key of part `part` of the long lists of reads in `read`'s bucket:
/// the kind's prefix with `+` for `/`, so parts sort after the buckets.
fn part_key(prefix: &str, read: &str, part: u32) -> Vec<u8> {
    let kind = prefix.trim_end_matches('/');
    let bucket = crc32fast::hash(read.as_bytes()) & 0xffff;
    format!("{kind}+{bucket:04x}{part:02x}").into_bytes()
}

/// The part of a long list that holds `file`.
fn part_of(file: &str) -> u32 {
    crc32fast::hash(file.as_bytes()) % PARTS
}

/// The key prefix of every part of one kind, for clearing them.
fn parts_prefix(prefix: &str) -> String {
    format!("{}+", prefix.trim_end_matches('/'))
}

/// What a bucket holds under a long list's read: an empty list, which a
/// short one never is (an emptied list is taken out).
pub(super) fn long_mark() -> Vec<u8> {
    packed(&Vec::<String>::new())
}

/// Files to put into (true) or take out of each list, by read, per key.
type PartEdits = BTreeMap<Vec<u8>, BTreeMap<String, Vec<(String, bool)>>>;

impl Store {
    /// The files whose resolution read `read`.
    pub fn dependents(&self, kind: DepKind, read: &str) -> Result<BTreeSet<String>, StoreError> {
        let files: Option<Vec<String>> = self.get_named(kind.prefix(), read)?;
        match files {
            // The mark: a stored list is never empty otherwise.
            Some(files) if files.is_empty() => self.parts(kind.prefix(), read),
            files => Ok(files.unwrap_or_default().into_iter().collect()),
        }
    }

    /// A long list, from its parts.
    fn parts(&self, prefix: &str, read: &str) -> Result<BTreeSet<String>, StoreError> {
        let mut out = BTreeSet::new();
        for part in 0..PARTS {
            let files: Option<Vec<String>> = self.get_in(&part_key(prefix, read, part), read)?;
            out.extend(files.unwrap_or_default());
        }
        Ok(out)
    }

    /// The bucket at `k` to edit: empty after a clear, whatever is stored.
    fn bucket_to_edit(&self, k: &[u8], clear: bool) -> Result<Bucket, StoreError> {
        match clear {
            true => Ok(Bucket::default()),
            false => self.bucket(k),
        }
    }

    /// [`Store::settle`] for dependents: each edit adds a file to, or
    /// drops it from, the list of one read; after `clear_deps`, the lists
    /// are the edits' additions alone.
    pub(super) fn settle_deps(&self, w: &mut WriteSet) -> Result<(), StoreError> {
        let clear = std::mem::take(&mut w.clear_deps);
        let edits = std::mem::take(&mut w.dep_edits);
        let mut parts: PartEdits = BTreeMap::new();
        let mut written = BTreeSet::new();
        for kind in [DEP_LENT, DEP_NAME, DEP_PATH] {
            let of_kind = edits.iter().filter(move |((p, _), _)| *p == kind);
            let by_bucket = buckets::group(kind, of_kind.map(|((_, read), e)| (read.as_str(), e)));
            for (k, reads) in by_bucket {
                let mut b = self.bucket_to_edit(&k, clear)?;
                for (read, e) in reads {
                    self.settle_list(&mut b, kind, read, e, &mut parts)
                        .map_err(|_| self.bad_record(&k))?;
                }
                written.insert(k.clone());
                w.ops.push((k, b.encode()));
            }
        }
        for (k, reads) in parts {
            let mut b = self.bucket_to_edit(&k, clear)?;
            for (read, e) in reads {
                let files = edited(b.get(&read), e).map_err(|_| self.bad_record(&k))?;
                b.set(&read, (!files.is_empty()).then(|| packed(&files)));
            }
            written.insert(k.clone());
            w.ops.push((k, b.encode()));
        }
        if clear {
            for kind in [DEP_NAME, DEP_PATH, DEP_LENT] {
                for prefix in [kind.to_string(), parts_prefix(kind)] {
                    for k in self.db.scan_prefix(prefix.as_bytes()).keys() {
                        let k = k.map_err(self.sled_err())?;
                        if !written.contains(k.as_ref()) {
                            w.ops.push((k.to_vec(), None));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Edit one read's list in its bucket `b`, or pass the edits on to its
    /// parts when it is long or grows long now.
    fn settle_list(
        &self,
        b: &mut Bucket,
        kind: &str,
        read: &str,
        e: &FileEdits,
        parts: &mut PartEdits,
    ) -> Result<(), postcard::Error> {
        let mark = long_mark();
        let mut to_parts = |files: Vec<(String, bool)>| {
            for (f, add) in files {
                let k = part_key(kind, read, part_of(&f));
                let list = parts.entry(k).or_default().entry(read.to_string());
                list.or_default().push((f, add));
            }
        };
        let edits: Vec<(String, bool)> = e.iter().map(|(f, add)| (f.clone(), *add)).collect();
        if b.get(read) == Some(mark.as_slice()) {
            to_parts(edits);
            return Ok(());
        }
        let files = edited(b.get(read), edits)?;
        if files.len() < LONG {
            b.set(read, (!files.is_empty()).then(|| packed(&files)));
            return Ok(());
        }
        b.set(read, Some(mark));
        to_parts(files.into_iter().map(|f| (f, true)).collect());
        Ok(())
    }
}

/// A stored list (or none) with files put in and taken out, in order.
fn edited(stored: Option<&[u8]>, e: Vec<(String, bool)>) -> Result<Vec<String>, postcard::Error> {
    let mut files: BTreeSet<String> = match stored {
        Some(v) => postcard::from_bytes::<Vec<String>>(v)?
            .into_iter()
            .collect(),
        None => BTreeSet::new(),
    };
    for (f, add) in e {
        match add {
            true => files.insert(f),
            false => files.remove(&f),
        };
    }
    Ok(files.into_iter().collect())
}

/// A long list's files grouped into its parts, for a store being built:
/// the key of each part and the files of `read` in it, in order.
pub(super) fn split<'a>(
    prefix: &str,
    read: &str,
    files: &[&'a str],
) -> BTreeMap<Vec<u8>, Vec<&'a str>> {
    let mut out: BTreeMap<Vec<u8>, Vec<&'a str>> = BTreeMap::new();
    for f in files {
        out.entry(part_key(prefix, read, part_of(f)))
            .or_default()
            .push(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(store: &Store, read: &str) -> Vec<String> {
        let got = store.dependents(DepKind::Path, read).unwrap();
        got.into_iter().collect()
    }

    fn stored_bytes(store: &Store, prefix: &str) -> Vec<(Vec<u8>, usize)> {
        let kv = store.db.scan_prefix(prefix.as_bytes());
        kv.map(|kv| kv.unwrap())
            .map(|(k, v)| (k.to_vec(), v.len()))
            .collect()
    }

    #[test]
    fn a_list_grown_long_is_kept_in_parts_and_a_moved_file_rewrites_two_of_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let readers: Vec<String> = (0..LONG + 10)
            .map(|i| format!("drivers/x{i:04}.c"))
            .collect();
        let mut w = WriteSet::default();
        for f in &readers {
            w.dep(DepKind::Path, "include/linux/kernel.h", f, true);
        }
        w.dep(DepKind::Path, "include/linux/list.h", "lib/list.c", true);
        store.apply(w).unwrap();
        assert_eq!(files(&store, "include/linux/kernel.h"), readers);
        assert_eq!(files(&store, "include/linux/list.h"), ["lib/list.c"]);
        // The bucket holds a mark, not 1,034 paths.
        let buckets = stored_bytes(&store, DEP_PATH);
        assert!(buckets.iter().all(|(_, n)| *n < 100), "{buckets:?}");
        assert!(stored_bytes(&store, "dp+").len() > 1);

        let mut w = WriteSet::default();
        w.dep(
            DepKind::Path,
            "include/linux/kernel.h",
            "drivers/x0007.c",
            false,
        );
        w.dep(DepKind::Path, "include/linux/kernel.h", "net/moved.c", true);
        store.settle(&mut w).unwrap();
        let parts = w.ops.iter().filter(|(k, _)| k.starts_with(b"dp+"));
        assert!(parts.count() <= 2);
        store.apply(w).unwrap();
        let mut want: BTreeSet<String> = readers.iter().cloned().collect();
        want.remove("drivers/x0007.c");
        want.insert("net/moved.c".to_string());
        let got: BTreeSet<String> = files(&store, "include/linux/kernel.h")
            .into_iter()
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn clearing_the_lists_clears_their_parts() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut w = WriteSet::default();
        for i in 0..LONG {
            w.dep(DepKind::Path, "linux", &format!("f{i}.c"), true);
        }
        store.apply(w).unwrap();
        assert_eq!(files(&store, "linux").len(), LONG);
        let mut w = WriteSet::default();
        w.clear_deps();
        w.dep(DepKind::Path, "linux", "only.c", true);
        store.apply(w).unwrap();
        assert_eq!(files(&store, "linux"), ["only.c"]);
        assert!(stored_bytes(&store, "dp+").is_empty());
    }
}
