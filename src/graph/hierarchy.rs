//! The offline functional hierarchy: `<area>/<category>/<subcategory>`.
//!
//! Directory structure proposes units; term statistics over the lifted
//! features merge them into functional groups and name them. Every node is
//! grounded to the directory scopes it covers (RPG-Encoder, Algorithm 1).

use super::{dir_of, Category};
use crate::text::words::{is_stop, is_verb};
use std::collections::{BTreeMap, BTreeSet};

/// A file and the terms its features, names and docs use.
#[derive(Debug, Clone)]
pub struct FileTerms {
    pub path: String,
    pub terms: BTreeMap<String, f32>,
    /// What the file is about, as phrases people would say: the objects of
    /// its features' verb–object phrases, and its module's name.
    pub topics: BTreeMap<String, f32>,
}

/// Module names that say nothing of what a file does.
const GENERIC_MODULES: &[&str] = &[
    "init", "mod", "lib", "main", "index", "setup", "conftest", "version",
];

/// [`FileTerms::topics`] for a file: each feature's object ("send prepared
/// request" gives "prepared request"), and the module's own name, weighing
/// a quarter of all the rest (at least two).
pub fn file_topics<'a>(
    path: &str,
    features: impl IntoIterator<Item = &'a Vec<String>>,
) -> BTreeMap<String, f32> {
    let mut topics: BTreeMap<String, f32> = BTreeMap::new();
    for f in features.into_iter().flatten() {
        if let Some(t) = feature_object(f) {
            *topics.entry(t).or_default() += 1.0;
        }
    }
    let stem = crate::text::file_name(path);
    let stem = stem.split('.').next().unwrap_or(stem);
    let words: Vec<String> = crate::text::words::split_identifier(stem)
        .into_iter()
        .filter(|w| !is_stop(w))
        .collect();
    if !words.is_empty()
        && words.len() <= 3
        && words
            .iter()
            .all(|w| topic_word(w) && !GENERIC_MODULES.contains(&w.as_str()))
    {
        // A module's name stands for all it holds.
        let held: f32 = topics.values().sum();
        *topics.entry(words.join(" ")).or_default() += (held * 0.25).max(2.0);
    }
    topics
}

/// The object of a verb–object feature, up to its first small word:
/// "parse date to datetime" gives "date". None unless it starts with a verb.
fn feature_object(feature: &str) -> Option<String> {
    let words = crate::text::words::prose_words(feature);
    let (verb, rest) = words.split_first()?;
    if !is_verb(verb) {
        return None;
    }
    let object: Vec<&str> = rest
        .iter()
        .map(String::as_str)
        .take_while(|w| !is_stop(w))
        .collect();
    let ok = !object.is_empty() && object.len() <= 3 && object.iter().all(|w| topic_word(w));
    ok.then(|| object.join(" "))
}

/// A word fit for a label: a plain lowercase word, not filler. An object
/// may look like a verb ("request", "process"); its place says it is not.
fn topic_word(w: &str) -> bool {
    w.len() >= 3 && w.chars().all(|c| c.is_ascii_lowercase()) && !is_stop(w)
}

/// The hierarchy: which leaf each file sits in, and every category node.
#[derive(Debug, Clone, Default)]
pub struct Hierarchy {
    pub leaf_of_file: BTreeMap<String, String>,
    pub categories: BTreeMap<String, Category>,
}

const MAX_AREAS: usize = 8;
const MAX_CATEGORIES: usize = 6;
const MAX_SUBCATEGORIES: usize = 5;

/// How many groups `n` files warrant: about √(n/2), within `1..=max`, so a
/// tiny repository is not split into one group per file.
fn group_budget(n: usize, max: usize) -> usize {
    (((n as f32) / 2.0).sqrt().round() as usize).clamp(1, max)
}
const ROUTING_TERMS: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Core,
    Testing,
    Docs,
    Tooling,
}

impl Role {
    fn of(path: &str) -> Role {
        let comps: Vec<&str> = path.split('/').collect();
        let file = comps.last().copied().unwrap_or("");
        let dirs = &comps[..comps.len() - 1];
        let has = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
        if super::is_test_path(path) {
            Role::Testing
        } else if super::is_sample_path(path) || has(&["docs", "doc"]) {
            Role::Docs
        } else if has(&[
            "scripts",
            "tools",
            "ci",
            ".github",
            "xtask",
            "build_tools",
            "ci_scripts",
        ]) || matches!(file, "setup.py" | "build.rs" | "noxfile.py" | "fabfile.py")
        {
            Role::Tooling
        } else {
            Role::Core
        }
    }

    fn label(self) -> Option<&'static str> {
        match self {
            Role::Core => None,
            Role::Testing => Some("testing and verification"),
            Role::Docs => Some("documentation and examples"),
            Role::Tooling => Some("build and tooling"),
        }
    }
}

/// Build the hierarchy over `files`. Deterministic: same input, same output.
pub fn build(files: &[FileTerms]) -> Hierarchy {
    let mut by_role: BTreeMap<Role, Vec<&FileTerms>> = BTreeMap::new();
    for f in files {
        by_role.entry(Role::of(&f.path)).or_default().push(f);
    }
    // Areas: core code is split functionally; the other roles are one area each.
    let mut areas: Vec<(Option<&'static str>, Vec<&FileTerms>)> = Vec::new();
    for (role, group) in by_role {
        match role.label() {
            None => {
                let budget = group_budget(group.len(), MAX_AREAS - 1);
                for g in cluster(group, budget) {
                    areas.push((None, g));
                }
            }
            Some(label) => areas.push((Some(label), group)),
        }
    }
    let no_words = BTreeSet::new();
    let area_labels = label_siblings(
        &areas.iter().map(|(_, g)| g.as_slice()).collect::<Vec<_>>(),
        &no_words,
    );
    let mut h = Hierarchy::default();
    let mut used_area_labels = BTreeSet::new();
    for ((fixed, group), auto) in areas.into_iter().zip(area_labels) {
        let area = unique_label(
            fixed.map(str::to_string).unwrap_or(auto),
            &mut used_area_labels,
        );
        let area_words = words_of(&[&area]);
        let cats = cluster(group.clone(), group_budget(group.len(), MAX_CATEGORIES));
        let cat_labels = label_siblings(
            &cats.iter().map(Vec::as_slice).collect::<Vec<_>>(),
            &area_words,
        );
        let mut used_cat = BTreeSet::new();
        for (cat_files, cat_label) in cats.into_iter().zip(cat_labels) {
            let cat_label = unique_label(cat_label, &mut used_cat);
            let cat = format!("{area}/{cat_label}");
            let upper_words = words_of(&[&area, &cat_label]);
            let budget = group_budget(cat_files.len() * 2, MAX_SUBCATEGORIES);
            let subs = cluster(cat_files, budget);
            let sub_labels = label_siblings(
                &subs.iter().map(Vec::as_slice).collect::<Vec<_>>(),
                &upper_words,
            );
            let mut used_sub = BTreeSet::new();
            for (sub_files, sub_label) in subs.into_iter().zip(sub_labels) {
                let leaf = format!("{}/{}", cat, unique_label(sub_label, &mut used_sub));
                for f in sub_files {
                    h.leaf_of_file.insert(f.path.clone(), leaf.clone());
                }
            }
        }
    }
    h.categories = categories_for(files, &h.leaf_of_file);
    h
}

/// Category records (scopes and routing terms) for a leaf assignment.
pub fn categories_for(
    files: &[FileTerms],
    leaf_of_file: &BTreeMap<String, String>,
) -> BTreeMap<String, Category> {
    let mut members: BTreeMap<String, Vec<&FileTerms>> = BTreeMap::new();
    for f in files {
        let Some(leaf) = leaf_of_file.get(&f.path) else {
            continue;
        };
        let mut prefix = String::new();
        for seg in leaf.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(seg);
            members.entry(prefix.clone()).or_default().push(f);
        }
    }
    members
        .into_iter()
        .map(|(path, fs)| {
            let paths: Vec<&str> = fs.iter().map(|f| f.path.as_str()).collect();
            let cat = Category {
                scopes: ground(&paths),
                terms: top_terms(&fs, ROUTING_TERMS),
                path: path.clone(),
            };
            (path, cat)
        })
        .collect()
}

/// Directory scopes covering `paths`, by trie branching analysis: descend
/// from each top-level directory until the trie branches or a directory holds
/// files itself. Unrelated modules never collapse into the root.
pub fn ground(paths: &[&str]) -> Vec<String> {
    ground_dirs(paths.iter().map(|p| dir_of(p)))
}

/// [`ground`] over directories (`.` for the root).
pub fn ground_dirs<'a>(dirs: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    #[derive(Default)]
    struct Node {
        children: BTreeMap<String, Node>,
        terminal: bool,
    }
    let mut root = Node::default();
    for dir in dirs {
        if dir == "." {
            root.terminal = true;
            continue;
        }
        let mut n = &mut root;
        for comp in dir.split('/') {
            n = n.children.entry(comp.to_string()).or_default();
        }
        n.terminal = true;
    }
    let mut scopes = Vec::new();
    if root.terminal {
        scopes.push(".".to_string());
    }
    for (name, child) in &root.children {
        let mut path = name.clone();
        let mut n = child;
        while !n.terminal && n.children.len() == 1 {
            let (next_name, next) = n.children.iter().next().expect("one child");
            path = format!("{path}/{next_name}");
            n = next;
        }
        scopes.push(path);
    }
    scopes
}

/// Split files into at most `max` groups: directories propose units, and
/// the smallest group merges into its most similar sibling until few enough.
fn cluster(files: Vec<&FileTerms>, max: usize) -> Vec<Vec<&FileTerms>> {
    if files.is_empty() {
        return Vec::new();
    }
    // Units: children of the files' deepest common directory. While there
    // are fewer units than groups wanted, the largest directory unit is
    // opened up into its own children, so `crates/*` or `pkg/*` become
    // separate units instead of one.
    let mut units: Vec<Vec<&FileTerms>> = split_units(files);
    loop {
        if units.len() >= max {
            break;
        }
        let Some((largest, _)) = units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.len() > 1)
            .max_by(|(ia, a), (ib, b)| a.len().cmp(&b.len()).then(ib.cmp(ia)))
        else {
            break;
        };
        let parts = split_units(units[largest].clone());
        if parts.len() < 2 || units.len() - 1 + parts.len() > max * 3 {
            break;
        }
        units.splice(largest..=largest, parts);
    }
    let mut groups: Vec<(Vec<&FileTerms>, Sparse)> = units
        .into_iter()
        .map(|fs| {
            let v = Sparse::of(&fs);
            (fs, v)
        })
        .collect();
    while groups.len() > max {
        // The smallest group (ties: the later one) joins its nearest sibling.
        let (small, _) = groups
            .iter()
            .enumerate()
            .min_by(|(ia, a), (ib, b)| a.0.len().cmp(&b.0.len()).then(ib.cmp(ia)))
            .expect("non-empty");
        let (fs, v) = groups.remove(small);
        let mut best = 0;
        let mut best_sim = f32::MIN;
        for (i, (gfs, gv)) in groups.iter().enumerate() {
            let sim = v.cosine(gv);
            let better = sim > best_sim + 1e-6
                || ((sim - best_sim).abs() <= 1e-6 && gfs.len() > groups[best].0.len());
            if better {
                best = i;
                best_sim = sim;
            }
        }
        let target = &mut groups[best];
        target.0.extend(fs);
        target.1.add(&v);
    }
    let mut out: Vec<Vec<&FileTerms>> = groups.into_iter().map(|(fs, _)| fs).collect();
    for g in &mut out {
        g.sort_by(|a, b| a.path.cmp(&b.path));
    }
    out.sort_by(|a, b| a[0].path.cmp(&b[0].path));
    out
}

/// Group files by the child of their deepest common directory they sit
/// under; a file directly in that directory is a unit of its own.
fn split_units(files: Vec<&FileTerms>) -> Vec<Vec<&FileTerms>> {
    let dirs: Vec<Vec<&str>> = files
        .iter()
        .map(|f| {
            let mut c: Vec<&str> = f.path.split('/').collect();
            c.pop();
            c
        })
        .collect();
    let Some(first) = dirs.first() else {
        return Vec::new();
    };
    let mut common = first.len();
    for d in &dirs[1..] {
        common = common.min(d.iter().zip(first).take_while(|(a, b)| a == b).count());
    }
    let mut units: BTreeMap<String, Vec<&FileTerms>> = BTreeMap::new();
    for (f, d) in files.iter().zip(&dirs) {
        let key = match d.get(common) {
            Some(sub) => format!("d:{sub}"),
            None => format!("f:{}", f.path),
        };
        units.entry(key).or_default().push(f);
    }
    units.into_values().collect()
}

/// A group's term vector: borrowed keys, ordered iteration (so float sums
/// are reproducible), and a cached norm.
struct Sparse<'a> {
    terms: BTreeMap<&'a str, f32>,
    norm: f32,
}

impl<'a> Sparse<'a> {
    fn from_terms(terms: &'a BTreeMap<String, f32>) -> Sparse<'a> {
        let mut s = Sparse {
            terms: terms.iter().map(|(t, w)| (t.as_str(), *w)).collect(),
            norm: 0.0,
        };
        s.renorm();
        s
    }

    fn from_list(terms: &'a [String]) -> Sparse<'a> {
        let mut s = Sparse {
            terms: terms.iter().map(|t| (t.as_str(), 1.0)).collect(),
            norm: 0.0,
        };
        s.renorm();
        s
    }

    fn of(files: &[&'a FileTerms]) -> Sparse<'a> {
        let mut terms: BTreeMap<&'a str, f32> = BTreeMap::new();
        for f in files {
            let norm: f32 = f
                .terms
                .values()
                .map(|w| w * w)
                .sum::<f32>()
                .sqrt()
                .max(1e-6);
            for (t, w) in &f.terms {
                *terms.entry(t.as_str()).or_default() += w / norm;
            }
        }
        let mut s = Sparse { terms, norm: 0.0 };
        s.renorm();
        s
    }

    fn renorm(&mut self) {
        self.norm = self.terms.values().map(|w| w * w).sum::<f32>().sqrt();
    }

    fn add(&mut self, other: &Sparse<'a>) {
        for (t, w) in &other.terms {
            *self.terms.entry(t).or_default() += w;
        }
        self.renorm();
    }

    fn cosine(&self, other: &Sparse) -> f32 {
        if self.norm == 0.0 || other.norm == 0.0 {
            return 0.0;
        }
        let (small, large) = if self.terms.len() <= other.terms.len() {
            (self, other)
        } else {
            (other, self)
        };
        let dot: f32 = small
            .terms
            .iter()
            .filter_map(|(t, w)| large.terms.get(t).map(|x| x * w))
            .sum();
        dot / (self.norm * other.norm)
    }
}

fn words_of(labels: &[&str]) -> BTreeSet<String> {
    labels
        .iter()
        .flat_map(|l| l.split(' '))
        .map(str::to_string)
        .collect()
}

/// Name each group by the topics that carry most of its weight and its
/// siblings' do not, avoiding words its ancestors' labels already use: one phrase, or
/// two joined by "and" when a second, unrelated one is nearly as telling.
/// A group with no topic is named after its directory.
fn label_siblings(groups: &[&[&FileTerms]], taken: &BTreeSet<String>) -> Vec<String> {
    // Per group: each topic's share of everything its files are about, so
    // a large module speaks louder than a small one.
    let stats: Vec<BTreeMap<&str, f32>> = groups
        .iter()
        .map(|g| {
            let mut m: BTreeMap<&str, f32> = BTreeMap::new();
            for f in g.iter() {
                for (t, w) in &f.topics {
                    if !t.split(' ').any(|w| taken.contains(w)) {
                        *m.entry(t.as_str()).or_default() += w;
                    }
                }
            }
            let total: f32 = m.values().sum::<f32>().max(1.0);
            m.values_mut().for_each(|w| *w /= total);
            m
        })
        .collect();
    let mut df: BTreeMap<&str, usize> = BTreeMap::new();
    for m in &stats {
        for t in m.keys() {
            *df.entry(t).or_default() += 1;
        }
    }
    let n = groups.len() as f32;
    stats
        .iter()
        .zip(groups)
        .map(|(m, g)| {
            let mut scored: Vec<(f32, &str)> = m
                .iter()
                // What every sibling is about sets none apart.
                .filter(|(t, _)| groups.len() == 1 || df[*t] < groups.len())
                .map(|(t, share)| (share * (1.0 + n / df[t] as f32).ln(), *t))
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            let Some(&(best, first)) = scored.first() else {
                return directory_label(g, taken);
            };
            let first_words: BTreeSet<&str> = first.split(' ').collect();
            let second = scored.iter().skip(1).find(|(score, t)| {
                *score >= best * 0.6 && t.split(' ').all(|w| !first_words.contains(w))
            });
            match second {
                Some((_, second)) => format!("{first} and {second}"),
                None => first.to_string(),
            }
        })
        .collect()
}

/// Directory names that say where code sits, not what it does.
const GENERIC_DIRS: &[&str] = &["src", "lib", "source", "include", "internal", "pkg", "app"];

/// The name of the directory a group's files share, as words, skipping
/// names such as `src` that say nothing of what the code does.
fn directory_label(group: &[&FileTerms], taken: &BTreeSet<String>) -> String {
    let dirs: Vec<&str> = group.iter().map(|f| dir_of(&f.path)).collect();
    let scopes = ground_dirs(dirs.iter().copied());
    let [scope] = scopes.as_slice() else {
        return "general".to_string();
    };
    for name in scope.rsplit('/').filter(|d| !GENERIC_DIRS.contains(d)) {
        let words: Vec<String> = crate::text::words::split_identifier(name)
            .into_iter()
            .filter(|w| topic_word(w) && !taken.contains(w))
            .collect();
        if !words.is_empty() {
            return words.join(" ");
        }
    }
    "general".to_string()
}

fn unique_label(label: String, used: &mut BTreeSet<String>) -> String {
    let mut candidate = label.clone();
    let mut n = 2;
    while used.contains(&candidate) {
        candidate = format!("{label} {n}");
        n += 1;
    }
    used.insert(candidate.clone());
    candidate
}

fn top_terms(files: &[&FileTerms], k: usize) -> Vec<String> {
    let v = Sparse::of(files);
    let mut scored: Vec<(&str, f32)> = v.terms.into_iter().filter(|(t, _)| !is_stop(t)).collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
    scored
        .into_iter()
        .take(k)
        .map(|(t, _)| t.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ft(path: &str, terms: &[&str]) -> FileTerms {
        FileTerms {
            path: path.into(),
            terms: terms.iter().map(|t| (t.to_string(), 1.0)).collect(),
            topics: file_topics(path, &[vec![terms.join(" ")]]),
        }
    }

    /// A file whose entities have these features.
    fn with_features(path: &str, features: &[&str]) -> FileTerms {
        let features: Vec<Vec<String>> = features.iter().map(|f| vec![f.to_string()]).collect();
        FileTerms {
            path: path.into(),
            terms: BTreeMap::new(),
            topics: file_topics(path, &features),
        }
    }

    #[test]
    fn a_features_object_is_the_phrase_after_its_verb() {
        assert_eq!(
            feature_object("send prepared request").as_deref(),
            Some("prepared request")
        );
        assert_eq!(
            feature_object("parse date to datetime").as_deref(),
            Some("date")
        );
        assert_eq!(feature_object("version dict"), None, "no verb, no object");
        assert_eq!(feature_object("return"), None);
    }

    #[test]
    fn groups_are_named_by_what_most_of_their_code_is_about() {
        let sessions = with_features(
            "pkg/sessions.py",
            &[
                "send prepared request",
                "send prepared request",
                "return response",
                "merge settings",
            ],
        );
        let cookies = with_features(
            "pkg/cookies.py",
            &[
                "extract cookies",
                "merge cookies",
                "return response",
                "create cookie jar",
            ],
        );
        let init = with_features("pkg/__init__.py", &[]);
        let groups: [&[&FileTerms]; 3] = [&[&sessions], &[&cookies], &[&init]];
        let labels = label_siblings(&groups, &BTreeSet::new());
        // The module's name and its commonest distinct object; what every
        // sibling does ("return response") names none of them; a file with
        // nothing to say is named after its directory.
        assert_eq!(
            labels,
            ["prepared request and sessions", "cookies", "general"]
        );
        // Words an ancestor's label already uses are not repeated.
        let taken: BTreeSet<String> = ["cookies".to_string()].into();
        let labels = label_siblings(&groups[..2], &taken);
        assert_eq!(labels, ["prepared request and sessions", "cookie jar"]);
    }

    #[test]
    fn grounding_keeps_branching_points_not_the_root() {
        assert_eq!(
            ground(&[
                "src/flask/json/tag.py",
                "src/flask/json/provider.py",
                "tests/test_json.py"
            ]),
            ["src/flask/json", "tests"]
        );
        assert_eq!(
            ground(&["setup.py", "pkg/a/x.py", "pkg/b/y.py"]),
            [".", "pkg"]
        );
    }

    #[test]
    fn every_file_lands_in_exactly_one_three_level_leaf() {
        let files: Vec<FileTerms> = (0..30)
            .map(|i| {
                ft(
                    &format!("pkg/m{}/f{}.py", i % 7, i),
                    &["parse", "header", &format!("t{}", i % 3)],
                )
            })
            .chain([ft("tests/test_a.py", &["check", "header"])])
            .collect();
        let h = build(&files);
        assert_eq!(h.leaf_of_file.len(), files.len());
        for leaf in h.leaf_of_file.values() {
            assert_eq!(leaf.split('/').count(), 3, "{leaf}");
            assert!(h.categories.contains_key(leaf));
        }
        assert!(h.leaf_of_file["tests/test_a.py"].starts_with("testing and verification/"));
        let areas = h.categories.keys().filter(|k| !k.contains('/')).count();
        assert!(areas <= MAX_AREAS);
    }
}

/// Where routing put an entity, and the categories it had to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routed {
    pub leaf: String,
    pub created: Vec<String>,
}

/// Route an entity top-down (RPG-Encoder, Algorithm 4, offline): at each
/// level take the child category whose terms best match the entity's,
/// favouring children whose scopes cover its directory and the leaf its
/// file already sits in; stop when no child fits about as well as the
/// current node. Below where routing stopped, new categories named after
/// the entity's own terms complete the three levels.
pub fn route(
    categories: &BTreeMap<String, Category>,
    terms: &BTreeMap<String, f32>,
    dir: &str,
    prior_leaf: Option<&str>,
) -> Routed {
    let entity = Sparse::from_terms(terms);
    let mut current = String::new();
    let mut current_score = 0.0f32;
    let mut depth = 0;
    while depth < 3 {
        let prefix = if current.is_empty() {
            String::new()
        } else {
            format!("{current}/")
        };
        let mut best: Option<(f32, &str)> = None;
        for (path, c) in categories.range(prefix.clone()..) {
            if !path.starts_with(&prefix) {
                break;
            }
            if path[prefix.len()..].contains('/') {
                continue;
            }
            let covers = c
                .scopes
                .iter()
                .any(|s| s == "." && dir == "." || dir == s || dir.starts_with(&format!("{s}/")));
            let on_prior =
                prior_leaf.is_some_and(|p| p == path || p.starts_with(&format!("{path}/")));
            let score = entity.cosine(&Sparse::from_list(&c.terms))
                + if covers { 0.25 } else { 0.0 }
                + if on_prior { 0.5 } else { 0.0 };
            if best.is_none_or(|(b, _)| score > b + 1e-6) {
                best = Some((score, path));
            }
        }
        match best {
            Some((score, path)) if score > 0.0 && (depth == 0 || score >= current_score * 0.75) => {
                current = path.to_string();
                current_score = score;
                depth += 1;
            }
            _ => break,
        }
    }
    complete(categories, terms, current)
}

/// The leaf below `under` (an existing category, or `""`): below where
/// routing stopped, categories named after the entity's own terms complete
/// the three levels.
pub fn complete(
    categories: &BTreeMap<String, Category>,
    terms: &BTreeMap<String, f32>,
    under: String,
) -> Routed {
    let mut current = under;
    let mut depth = if current.is_empty() {
        0
    } else {
        current.split('/').count().min(3)
    };
    let mut created = Vec::new();
    let mut own: Vec<(&String, &f32)> = terms
        .iter()
        .filter(|(t, _)| topic_word(t) && !is_verb(t))
        .collect();
    own.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
    let words: Vec<&str> = own.iter().map(|(t, _)| t.as_str()).collect();
    while depth < 3 {
        let taken: BTreeSet<&str> = current.split(['/', ' ']).collect();
        let fresh: Vec<&str> = words
            .iter()
            .copied()
            .filter(|w| !taken.contains(w))
            .take(1)
            .collect();
        let base = if fresh.is_empty() {
            "general".to_string()
        } else {
            fresh.join(" ")
        };
        // An existing category of that name is where such entities go.
        current = if current.is_empty() {
            base
        } else {
            format!("{current}/{base}")
        };
        if !categories.contains_key(&current) {
            created.push(current.clone());
        }
        depth += 1;
    }
    Routed {
        leaf: current,
        created,
    }
}

/// Terms describing a new category, from the entity that founded it.
pub fn terms_of(terms: &BTreeMap<String, f32>) -> Vec<String> {
    let mut v: Vec<(&String, &f32)> = terms.iter().filter(|(t, _)| !is_stop(t)).collect();
    v.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
    v.into_iter()
        .take(ROUTING_TERMS)
        .map(|(t, _)| t.clone())
        .collect()
}
