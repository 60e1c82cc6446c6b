//! Records kept by name, many names to a key.
//!
//! sled 0.34 keeps a page-table entry per leaf and splits a leaf past 16
//! keys, so opening and closing a store costs in proportion to its key
//! count, whatever the records weigh. On the Linux tree the names index
//! and the dependents lists were 1.44M of 1.9M keys, and every hook and
//! query paid for them before reading anything. Grouped by a hash of
//! their name into at most 65,536 keys per kind, a copy of that store
//! opened in 20–30 ms against 75; a small repository keeps about one name
//! per key, as before.

use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// The key of the bucket holding `name` under `prefix`. CRC-32 because it
/// is stable across platforms and releases, which the keys on disk need,
/// and already linked; the bucket count bounds the keys, not the names.
pub fn key(prefix: &str, name: &str) -> Vec<u8> {
    let b = crc32fast::hash(name.as_bytes()) & 0xffff;
    format!("{prefix}{b:04x}").into_bytes()
}

/// A value already packed, written as one byte string so a lookup can
/// borrow it without decoding its neighbours.
struct Packed<'a>(&'a [u8]);

impl Serialize for Packed<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// The packed value under `name` in a stored bucket: `Err` when the bytes
/// are not a bucket, `Ok(None)` when the name is not in it.
pub fn find<'a>(bytes: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, postcard::Error> {
    let entries: Vec<(&str, &[u8])> = postcard::from_bytes(bytes)?;
    Ok(entries
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()
        .map(|i| entries[i].1))
}

/// One bucket's packed values by name, for an edit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bucket(BTreeMap<String, Vec<u8>>);

impl Bucket {
    /// A stored bucket; `None` when the bytes are not one.
    pub fn decode(bytes: &[u8]) -> Option<Bucket> {
        let entries: Vec<(&str, &[u8])> = postcard::from_bytes(bytes).ok()?;
        // Names are written once each, in order (lookups search them);
        // anything else was not written by this code.
        if entries.windows(2).any(|w| w[0].0 >= w[1].0) {
            return None;
        }
        Some(Bucket(
            entries
                .into_iter()
                .map(|(n, v)| (n.to_string(), v.to_vec()))
                .collect(),
        ))
    }

    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.get(name).map(Vec::as_slice)
    }

    /// Put `name`'s packed value, or take the name out.
    pub fn set(&mut self, name: &str, value: Option<Vec<u8>>) {
        match value {
            Some(v) => self.0.insert(name.to_string(), v),
            None => self.0.remove(name),
        };
    }

    /// The bytes to store, or `None` when the bucket is empty and its key
    /// should go.
    pub fn encode(&self) -> Option<Vec<u8>> {
        let entries: Vec<(&str, &[u8])> = self
            .0
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        (!entries.is_empty()).then(|| encode_sorted(&entries))
    }
}

/// Encode entries in name order, each name once: the bytes a [`Bucket`]
/// holding them encodes to.
pub fn encode_sorted<V: AsRef<[u8]>>(entries: &[(&str, V)]) -> Vec<u8> {
    debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
    let packed: Vec<(&str, Packed)> = entries
        .iter()
        .map(|(n, v)| (*n, Packed(v.as_ref())))
        .collect();
    postcard::to_allocvec(&packed).expect("serialise a bucket")
}

/// Names grouped by the key of their bucket, in key order, each group in
/// name order: how a store being built writes them.
pub fn group<'a, T>(
    prefix: &str,
    by_name: impl IntoIterator<Item = (&'a str, T)>,
) -> BTreeMap<Vec<u8>, Vec<(&'a str, T)>> {
    let mut out: BTreeMap<Vec<u8>, Vec<(&'a str, T)>> = BTreeMap::new();
    for (name, v) in by_name {
        out.entry(key(prefix, name)).or_default().push((name, v));
    }
    for entries in out.values_mut() {
        entries.sort_by(|a, b| a.0.cmp(b.0));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_key_is_the_prefix_and_four_hex_digits_whatever_the_name() {
        for name in ["", "probe", "a much longer name than any bucket key"] {
            let k = String::from_utf8(key("n/", name)).unwrap();
            assert_eq!(k.len(), 6, "{k}");
            assert!(k.starts_with("n/") && k[2..].chars().all(|c| c.is_ascii_hexdigit()));
        }
        // Stable across runs and builds: the key on disk depends on it.
        assert_eq!(key("n/", "probe"), key("n/", "probe"));
        assert_eq!(
            key("dn/", "kfree"),
            format!("dn/{:04x}", crc32fast::hash(b"kfree") & 0xffff).into_bytes()
        );
    }

    #[test]
    fn a_bucket_built_whole_reads_back_as_one_edited_to_the_same_entries() {
        let built = encode_sorted(&[("alpha", &b"1"[..]), ("beta", &b"23"[..])]);
        let mut edited = Bucket::default();
        edited.set("beta", Some(b"23".to_vec()));
        edited.set("alpha", Some(b"1".to_vec()));
        edited.set("gamma", Some(b"4".to_vec()));
        edited.set("gamma", None);
        assert_eq!(edited.encode().unwrap(), built);
        assert_eq!(Bucket::decode(&built), Some(edited));
    }

    #[test]
    fn a_lookup_finds_its_name_and_only_its_name() {
        let names: Vec<String> = (0..40).map(|i| format!("name{i:02}")).collect();
        let entries: Vec<(&str, &[u8])> =
            names.iter().map(|n| (n.as_str(), n.as_bytes())).collect();
        let bytes = encode_sorted(&entries);
        for n in &names {
            assert_eq!(find(&bytes, n).unwrap(), Some(n.as_bytes()));
        }
        assert_eq!(find(&bytes, "name").unwrap(), None);
        assert_eq!(find(&bytes, "name99").unwrap(), None);
    }

    #[test]
    fn an_emptied_bucket_has_no_bytes_and_garbage_is_no_bucket() {
        let mut b = Bucket::default();
        b.set("a", Some(vec![1]));
        b.set("a", None);
        assert_eq!(b.encode(), None);
        assert_eq!(Bucket::decode(&[0xff, 0xff, 0xff]), None);
        assert!(find(&[0xff, 0xff, 0xff], "a").is_err());
        let out_of_order =
            postcard::to_allocvec(&[("b", Packed(b"1")), ("a", Packed(b"2"))]).unwrap();
        assert_eq!(Bucket::decode(&out_of_order), None, "names out of order");
    }

    #[test]
    fn grouping_puts_each_name_in_its_bucket_in_name_order() {
        let names = ["zeta", "alpha", "mid", "beta"];
        let groups = group("n/", names.iter().map(|n| (*n, n.len())));
        let mut seen = 0;
        for (k, entries) in &groups {
            for w in entries.windows(2) {
                assert!(w[0].0 < w[1].0);
            }
            for (n, _) in entries {
                assert_eq!(&key("n/", n), k);
                seen += 1;
            }
        }
        assert_eq!(seen, names.len());
    }

    mod in_the_store {
        use super::super::key;
        use crate::graph::resolve::NameRef;
        use crate::parse::Kind;
        use crate::store::{DepKind, Store, WriteSet};

        /// Another name that lands in `name`'s bucket.
        fn namesake(prefix: &str, name: &str) -> String {
            (0..)
                .map(|i| format!("n{i}"))
                .find(|n| n != name && key(prefix, n) == key(prefix, name))
                .expect("a 16-bit bucket is shared within a few hundred thousand names")
        }

        fn entry(path: &str, name: &str) -> NameRef {
            NameRef {
                path: path.into(),
                qualname: name.into(),
                kind: Kind::Function,
                owner: None,
            }
        }

        fn apply(store: &Store, edit: impl FnOnce(&mut WriteSet)) {
            let mut w = WriteSet::default();
            edit(&mut w);
            store.apply(w).unwrap();
        }

        #[test]
        fn names_sharing_a_bucket_are_kept_changed_and_dropped_one_by_one() {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(dir.path()).unwrap();
            let other = namesake("n/", "probe");
            apply(&store, |w| {
                w.put_named("probe", &[entry("a.c", "probe")]);
                w.put_named(&other, &[entry("b.c", &other)]);
            });
            apply(&store, |w| w.put_named("probe", &[entry("c.c", "probe")]));
            assert_eq!(store.named_any("probe").unwrap(), [entry("c.c", "probe")]);
            assert_eq!(store.named_any(&other).unwrap(), [entry("b.c", &other)]);
            apply(&store, |w| w.put_named("probe", &[]));
            assert!(store.named_any("probe").unwrap().is_empty());
            assert_eq!(store.named_any(&other).unwrap(), [entry("b.c", &other)]);
            apply(&store, |w| w.put_named(&other, &[]));
            assert!(store.named_any(&other).unwrap().is_empty());
        }

        #[test]
        fn dependents_sharing_a_bucket_are_edited_apart_and_cleared_together() {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(dir.path()).unwrap();
            let other = namesake("dn/", "kfree");
            let files = |read: &str| -> Vec<String> {
                store
                    .dependents(DepKind::Name, read)
                    .unwrap()
                    .into_iter()
                    .collect()
            };
            apply(&store, |w| {
                w.dep(DepKind::Name, "kfree", "a.c", true);
                w.dep(DepKind::Name, "kfree", "b.c", true);
                w.dep(DepKind::Name, &other, "c.c", true);
                w.dep(DepKind::Path, "kfree", "d.c", true);
            });
            apply(&store, |w| w.dep(DepKind::Name, "kfree", "a.c", false));
            assert_eq!(files("kfree"), ["b.c"]);
            assert_eq!(files(&other), ["c.c"]);
            let by_path: Vec<String> = store
                .dependents(DepKind::Path, "kfree")
                .unwrap()
                .into_iter()
                .collect();
            assert_eq!(by_path, ["d.c"], "each kind keeps its own buckets");
            apply(&store, |w| {
                w.clear_deps();
                w.dep(DepKind::Name, &other, "e.c", true);
            });
            assert!(files("kfree").is_empty());
            assert_eq!(files(&other), ["e.c"]);
            assert!(store.dependents(DepKind::Path, "kfree").unwrap().is_empty());
        }
    }
}
