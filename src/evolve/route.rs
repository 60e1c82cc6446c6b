//! Phase 5: the hierarchy after an update: old placements out, waiting
//! entities routed down, emptied categories pruned, scopes regrounded.

use super::*;

/// Phase 5's result: the hierarchy after routing and pruning.
pub(super) struct HierChange {
    pub(super) cats: BTreeMap<String, Category>,
    pub(super) cats_before: BTreeMap<String, Category>,
    pub(super) hier: HierState,
    pub(super) created: Vec<String>,
    pub(super) pruned: Vec<String>,
}

/// Phase 5: take the old placements out, route what waits (entities of a
/// new file join the file's leaf), put the new placements in, prune what
/// emptied and re-ground what changed.
pub(super) fn route_pending(
    store: &Store,
    lifter: &dyn Lifter,
    old: &OldState,
    placed: &mut Placed,
) -> Result<HierChange, EvolveError> {
    let mut cats = store.categories()?;
    let mut hier = store.hier()?;
    let cats_before = cats.clone();
    for e in old.blocks.values().flat_map(|b| &b.entities) {
        hier_remove(&mut hier, &e.leaf, dir_of(&e.path));
    }
    let mut routed: BTreeMap<String, String> = BTreeMap::new();
    for (id, terms, use_file_prior, features) in &placed.pending {
        let (path, _) = crate::graph::split_id(id);
        let file_leaf = routed.get(path).cloned().or_else(|| {
            placed
                .new_blocks
                .get(path)
                .and_then(|b| b.entities.first())
                .map(|f| f.leaf.to_string())
                .filter(|l| !l.is_empty())
        });
        let in_new_file = !crate::graph::is_file_id(id) && routed.contains_key(path);
        let leaf = if in_new_file {
            file_leaf.unwrap_or_default()
        } else {
            let prior = file_leaf.filter(|_| *use_file_prior);
            let item = crate::lift::RouteInput { id, features };
            let r = match lifter.route(&cats, &item)? {
                Some(under) => hierarchy::complete(&cats, terms, under),
                None => hierarchy::route(&cats, terms, dir_of(path), prior.as_deref()),
            };
            for c in &r.created {
                let category = Category {
                    path: c.clone(),
                    scopes: Vec::new(),
                    terms: hierarchy::terms_of(terms),
                };
                cats.insert(c.clone(), category);
            }
            r.leaf
        };
        routed.insert(id.clone(), leaf);
    }
    for e in placed.new_blocks.values_mut().flat_map(|b| &mut b.entities) {
        if let Some(l) = routed.get(&e.id) {
            e.leaf = l.as_str().into();
        }
    }
    for ev in placed.events.iter_mut().filter(|ev| ev.leaf.is_none()) {
        ev.leaf = routed.get(&ev.id).cloned();
    }
    for e in placed.new_blocks.values().flat_map(|b| &b.entities) {
        hier_add(&mut hier, &e.leaf, dir_of(&e.path));
    }
    let pruned = prune(&mut cats, &hier);
    regroundings(&mut cats, &hier);
    let created = cats
        .keys()
        .filter(|c| !cats_before.contains_key(*c))
        .cloned()
        .collect();
    Ok(HierChange {
        cats,
        cats_before,
        hier,
        created,
        pruned,
    })
}

/// Jaccard distance between the word sets of two feature lists.
pub(super) fn drift(old: &[String], new: &[String]) -> f32 {
    let words = |fs: &[String]| -> BTreeSet<String> {
        fs.iter()
            .flat_map(|f| prose_words(f))
            .filter(|w| !is_stop(w))
            .collect()
    };
    let (a, b) = (words(old), words(new));
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let inter = a.intersection(&b).count() as f32;
    let union = a.union(&b).count() as f32;
    1.0 - inter / union
}

pub(super) fn round(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

pub(super) fn hier_remove(h: &mut HierState, leaf: &str, dir: &str) {
    if let Some(dirs) = h.leaf_dirs.get_mut(leaf) {
        if let Some(n) = dirs.get_mut(dir) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                dirs.remove(dir);
            }
        }
        if dirs.is_empty() {
            h.leaf_dirs.remove(leaf);
        }
    }
}

pub(super) fn hier_add(h: &mut HierState, leaf: &str, dir: &str) {
    *h.leaf_dirs
        .entry(leaf.to_string())
        .or_default()
        .entry(dir.to_string())
        .or_default() += 1;
}

/// Remove categories with no entities below them, bottom-up (Algorithm 2).
pub(super) fn prune(cats: &mut BTreeMap<String, Category>, h: &HierState) -> Vec<String> {
    let mut pruned = Vec::new();
    // Deepest first, so an emptied parent is seen after its children went.
    let mut paths: Vec<String> = cats.keys().cloned().collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
    for p in paths {
        let has_members = h.leaf_dirs.contains_key(&p);
        let prefix = format!("{p}/");
        let has_children = cats
            .range(prefix.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&prefix));
        if !has_members && !has_children {
            cats.remove(&p);
            pruned.push(p);
        }
    }
    pruned.sort();
    pruned
}

/// Recompute every category's scopes from the directories of its leaves.
pub(super) fn regroundings(cats: &mut BTreeMap<String, Category>, h: &HierState) {
    let mut dirs: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (leaf, ds) in &h.leaf_dirs {
        let mut prefix = String::new();
        for seg in leaf.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(seg);
            dirs.entry(prefix.clone())
                .or_default()
                .extend(ds.keys().map(String::as_str));
        }
    }
    for (path, c) in cats.iter_mut() {
        if let Some(ds) = dirs.get(path) {
            c.scopes = hierarchy::ground_dirs(ds.iter().copied());
        }
    }
}
