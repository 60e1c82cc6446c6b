//! Sorted collections filled a batch at a time.
//!
//! A `BTreeMap` collected from an iterator fills its nodes, where inserts
//! one by one leave them about 60% full; but collecting holds every item
//! twice for a moment, once in the input and once in the tree. On the
//! Linux tree that moment was the peak of `init`: 965k entities at 304
//! bytes each, held twice. Here each batch is collected and appended
//! (appending builds from sorted input too, and frees the old nodes as
//! it goes), so only one batch is ever held beside the collection.

use std::collections::{BTreeMap, BTreeSet};

/// Items held before they are sorted into the collection. Appending costs
/// the collection's size, so fewer, larger batches cost less time; this
/// keeps the extra memory to a few tens of megabytes.
const BATCH: usize = 1 << 17;

/// A collection [`Batched`] can fill: its own `append`.
pub trait Append: Default {
    fn append_all(&mut self, other: &mut Self);
}

impl<T: Ord> Append for BTreeSet<T> {
    fn append_all(&mut self, other: &mut Self) {
        self.append(other);
    }
}

impl<K: Ord, V> Append for BTreeMap<K, V> {
    fn append_all(&mut self, other: &mut Self) {
        self.append(other);
    }
}

/// Fills `C` with `T`s; equal keys keep the last, as `collect` does.
pub struct Batched<C, T> {
    done: C,
    batch: Vec<T>,
}

impl<C: Append + FromIterator<T>, T> Default for Batched<C, T> {
    fn default() -> Self {
        Batched {
            done: C::default(),
            batch: Vec::new(),
        }
    }
}

impl<C: Append + FromIterator<T>, T> Batched<C, T> {
    pub fn push(&mut self, item: T) {
        self.batch.push(item);
        if self.batch.len() >= BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let mut sorted: C = std::mem::take(&mut self.batch).into_iter().collect();
        self.done.append_all(&mut sorted);
    }

    pub fn finish(mut self) -> C {
        self.flush();
        self.done
    }
}

impl<C: Append + FromIterator<T>, T> Extend<T> for Batched<C, T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        for item in items {
            self.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_make_the_collection_collect_would() {
        // More items than a batch, out of order, with repeats.
        let items = |n: u64| (0..n).map(move |i| (i * 7919 % n, i));
        let n = 3 * BATCH as u64 + 5;
        let mut map: Batched<BTreeMap<u64, u64>, (u64, u64)> = Batched::default();
        map.extend(items(n).chain(items(n).map(|(k, v)| (k, v + 1))));
        let expected: BTreeMap<u64, u64> =
            items(n).chain(items(n).map(|(k, v)| (k, v + 1))).collect();
        assert_eq!(map.finish(), expected);
        let mut set: Batched<BTreeSet<u64>, u64> = Batched::default();
        set.extend(items(n).map(|(k, _)| k / 2));
        assert_eq!(set.finish(), items(n).map(|(k, _)| k / 2).collect());
    }
}
