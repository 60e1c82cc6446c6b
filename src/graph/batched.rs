//! Sorted collections filled a batch at a time.
//!
//! A `BTreeMap` collected from an iterator fills its nodes, where inserts
//! one by one leave them about 60% full; but collecting holds every item
//! twice for a moment, once in the input and once in the tree. On the
//! Linux tree that moment was the peak of `init`: 965k entities at 304
//! bytes each, held twice. Here each batch is collected and appended
//! (appending builds from sorted input too, and frees the old nodes as
//! it goes), so only one batch is ever held beside the collection.
//!
//! Appending costs both collections' size, so appending every batch to
//! one growing collection cost the square of the input over the batch:
//! the Linux tree's 3.2M edges came in 24 batches and each edge was moved
//! 12 times on average. The batches are kept instead as sorted runs that
//! are merged when two are of a size, as a binary counter carries, so an
//! item is moved about log2(batches) times and the runs still hold each
//! item once.

use std::collections::{BTreeMap, BTreeSet};

/// Items held before they are sorted into the collection. Appending costs
/// the collection's size, so fewer, larger batches cost less time; this
/// keeps the extra memory to a few tens of megabytes.
const BATCH: usize = 1 << 17;

/// A collection [`Batched`] can fill: its own `append`, and its size.
pub trait Append: Default {
    fn append_all(&mut self, other: &mut Self);
    fn items(&self) -> usize;
}

impl<T: Ord> Append for BTreeSet<T> {
    fn append_all(&mut self, other: &mut Self) {
        self.append(other);
    }
    fn items(&self) -> usize {
        self.len()
    }
}

impl<K: Ord, V> Append for BTreeMap<K, V> {
    fn append_all(&mut self, other: &mut Self) {
        self.append(other);
    }
    fn items(&self) -> usize {
        self.len()
    }
}

/// Fills `C` with `T`s; equal keys keep the last, as `collect` does.
pub struct Batched<C, T> {
    /// Sorted runs, oldest first, each more than twice the next.
    runs: Vec<C>,
    batch: Vec<T>,
}

impl<C: Append + FromIterator<T>, T> Default for Batched<C, T> {
    fn default() -> Self {
        Batched {
            runs: Vec::new(),
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
        let sorted: C = std::mem::take(&mut self.batch).into_iter().collect();
        self.runs.push(sorted);
        while let [.., older, newer] = &mut self.runs[..] {
            if older.items() > 2 * newer.items() {
                break;
            }
            older.append_all(newer);
            self.runs.pop();
        }
    }

    pub fn finish(mut self) -> C {
        self.flush();
        // Newest into older, so the newer wins on equal keys, and the
        // small runs merge before the large.
        self.runs
            .into_iter()
            .rev()
            .reduce(|mut newer, mut older| {
                older.append_all(&mut newer);
                older
            })
            .unwrap_or_default()
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

    #[test]
    fn runs_double_so_an_item_is_merged_log_times() {
        let mut set: Batched<BTreeSet<usize>, usize> = Batched::default();
        for batches in 1..=40usize {
            set.extend((batches - 1) * BATCH..batches * BATCH);
            assert!(set.runs.len() <= 1 + batches.ilog2() as usize);
            let sizes: Vec<usize> = set.runs.iter().map(|r| r.len()).collect();
            assert!(sizes.windows(2).all(|w| w[0] > 2 * w[1]), "{sizes:?}");
        }
        assert_eq!(set.finish().len(), 40 * BATCH);
    }
}
