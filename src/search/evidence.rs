//! What the index says about one query before any weight is applied: per
//! document, what each component of the ranker found. Reading the index
//! is the slow part of a query; scoring the evidence under a set of
//! weights ([`super::score`]) is pure and cheap, which is what lets
//! `rpg eval --fit` try thousands of weightings on real cases.

use super::index::{name_key, DocKey, Field, Reader, SearchError};
use super::query::{Frame, Query};
use super::{bm25, path_matches, Scored, Switches, CONTEXT_MIN, NEIGHBOUR_SOURCES};
use crate::graph::EdgeKind;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::HashMap;

/// How many of the best documents, under the weights evidence for fitting
/// is gathered with, have their call neighbours read: enough that other
/// weightings find most of their sources too.
const FITTING_POOL: usize = 3 * NEIGHBOUR_SOURCES;
/// How many documents by BM25 alone evidence for fitting keeps, beside
/// every document with another signal.
const FITTING_KEEP: usize = 1000;

/// What each component found for one document.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Signals {
    /// BM25 of the chosen field, the best document scoring 1.
    pub bm25: f32,
    /// How many of the bare identifiers name it.
    pub names: u16,
    /// How many dotted identifiers spell its qualified name.
    pub dotted: u16,
    /// Its file is a path the issue mentions.
    pub mentioned: bool,
    /// Frames pointing into its file.
    pub frame_files: u16,
    /// Frames naming it, or giving lines it holds.
    pub frame_functions: u16,
    /// Its embedding cosine relative to the nearest neighbour's, at least 0.
    pub dense: f32,
    /// How much it changed lately, in [0, 1) (see [`super::recent`]).
    pub recent: f32,
}

/// One file a touched document lives in.
#[derive(Debug, Clone, PartialEq)]
pub struct FileFacts {
    pub path: String,
    /// A test, example or benchmark: what the test penalty weighs down.
    pub is_test: bool,
    /// Words of its path the issue uses.
    pub path_words: u16,
    /// Declarations without bodies only (an interface's file).
    pub hollow: bool,
}

/// Everything [`super::score`] needs for one query.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub docs: FxHashMap<DocKey, Signals>,
    /// Members of every class that could lend context.
    pub children: FxHashMap<DocKey, Vec<DocKey>>,
    /// Callers and callees of every document that could lend to them.
    pub neighbours: FxHashMap<DocKey, Vec<DocKey>>,
    pub files: FxHashMap<u32, FileFacts>,
    /// BM25 of files' module text, by file number, the best scoring 1.
    pub modules: FxHashMap<u32, f32>,
    /// BM25 of whole files, by file number, the best scoring 1.
    pub whole: FxHashMap<u32, f32>,
    /// The words bodies were matched with, and their worth.
    pub terms: super::passage::TermWeights,
}

impl Evidence {
    /// Read what `q` touches in the index: exactly what ranking under
    /// `sw` needs.
    pub fn gather(
        r: &Reader,
        q: &Query,
        sw: Switches,
        field: Field,
        names: &mut dyn Namer,
    ) -> Result<Evidence, SearchError> {
        Self::gather_pooled(r, q, sw, field, names, NEIGHBOUR_SOURCES)
    }

    /// Evidence to score under many weightings near `sw`'s, with the names
    /// it needs: neighbours are read for a wider pool, and documents
    /// BM25 alone ranks too low to matter are dropped. Under `sw` itself it
    /// ranks as [`Evidence::gather`] does, bar the dropped tail.
    pub fn gather_for_fitting(
        r: &Reader,
        q: &Query,
        sw: Switches,
    ) -> Result<(Evidence, FxHashMap<DocKey, Scored>), SearchError> {
        let mut names = Names::new(r);
        let mut ev = Self::gather_pooled(r, q, sw, Field::All, &mut names, FITTING_POOL)?;
        ev.prune(FITTING_KEEP);
        let keys = ev.keys();
        Ok((ev, names.read_all(&keys)?))
    }

    fn gather_pooled(
        r: &Reader,
        q: &Query,
        sw: Switches,
        field: Field,
        names: &mut dyn Namer,
        pool: usize,
    ) -> Result<Evidence, SearchError> {
        let mut ev = Evidence::default();
        let spell = bm25::Spellings {
            variants: sw.variants,
            compound: if sw.variants {
                bm25::COMPOUND_WEIGHT
            } else {
                0.0
            },
        };
        let lists = bm25::entity_lists(r, q, field, spell)?;
        let (lexical, worth) = bm25::entities(r, field, &lists);
        ev.terms = worth;
        for (k, s) in lexical {
            ev.docs.entry(k).or_default().bm25 = s;
        }
        let whole = sw.whole_files && matches!(field, Field::All);
        let modules = match sw.modules || whole {
            true => bm25::module_lists(r, q, spell)?,
            false => Vec::new(),
        };
        if sw.modules {
            ev.modules = bm25::modules(r, &modules);
        }
        if whole {
            ev.whole = bm25::files(r, &lists, &modules)?;
        }
        ev.add_names(r, q)?;
        if !q.frames.is_empty() || !q.paths.is_empty() {
            ev.add_frames_and_paths(r, q)?;
        }
        ev.add_dense(r, q)?;
        ev.add_children(r)?;
        ev.add_neighbours(r, sw, names, pool)?;
        ev.add_files(r, q)?;
        ev.add_recent(r, q)?;
        Ok(ev)
    }

    fn add_names(&mut self, r: &Reader, q: &Query) -> Result<(), SearchError> {
        for ident in &q.identifiers {
            let ident = ident.replace("::", ".").to_lowercase();
            match ident.rsplit_once('.') {
                None if ident.len() > 3 => {
                    for k in r.named(&ident)? {
                        self.docs.entry(k).or_default().names += 1;
                    }
                }
                Some((_, last)) if !last.is_empty() => {
                    for k in r.named(last)? {
                        let f = r.file(k.0)?;
                        let qual = f.docs[k.1 as usize].qualname.replace("::", ".");
                        if qual.to_lowercase() == ident {
                            self.docs.entry(k).or_default().dotted += 1;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Every entity of a file a frame points into or the issue names, and
    /// the entity a frame names (or whose lines it gives).
    fn add_frames_and_paths(&mut self, r: &Reader, q: &Query) -> Result<(), SearchError> {
        for (num, path) in r.paths()?.iter() {
            let frames: Vec<&Frame> = q
                .frames
                .iter()
                .filter(|f| path_matches(&f.path, path))
                .collect();
            let mentioned = q
                .paths
                .iter()
                .any(|p| path_matches(p.split(':').next().unwrap_or(p), path));
            if frames.is_empty() && !mentioned {
                continue;
            }
            let f = r.file(num)?;
            let targets: Vec<Vec<usize>> =
                frames.iter().map(|fr| frame_targets(&f.docs, fr)).collect();
            for i in 0..f.docs.len() {
                let s = self.docs.entry((num, i as u16)).or_default();
                s.mentioned |= mentioned;
                for t in &targets {
                    s.frame_files += 1;
                    if t.contains(&i) {
                        s.frame_functions += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Embedding neighbours, each with its cosine relative to the best one.
    fn add_dense(&mut self, r: &Reader, q: &Query) -> Result<(), SearchError> {
        let best = q
            .dense
            .iter()
            .map(|d| d.1)
            .fold(f32::MIN, f32::max)
            .max(1e-6);
        for (id, cos) in &q.dense {
            if let Some(k) = r.doc_of(id)? {
                self.docs.entry(k).or_default().dense += (cos / best).max(0.0);
            }
        }
        Ok(())
    }

    /// Members of the classes that could reach [`CONTEXT_MIN`] under any
    /// weights: every signal but BM25 comes with a weight of its own.
    fn add_children(&mut self, r: &Reader) -> Result<(), SearchError> {
        let mut lenders: Vec<DocKey> = self
            .docs
            .iter()
            .filter(|(_, s)| {
                s.bm25 >= CONTEXT_MIN
                    || s.names + s.dotted + s.frame_files > 0
                    || s.mentioned
                    || s.dense > 0.0
            })
            .map(|(k, _)| *k)
            .collect();
        lenders.sort_unstable();
        let mut owners: Option<(u32, super::index::Owners)> = None;
        for (num, local) in lenders {
            if owners.as_ref().is_none_or(|(n, _)| *n != num) {
                owners = Some((num, r.owners(num)?));
            }
            let Some((_, classes)) = &owners else {
                continue;
            };
            if let Ok(i) = classes.binary_search_by_key(&local, |c| c.0) {
                let members = classes[i].1.iter().map(|m| (num, *m)).collect();
                self.children.insert((num, local), members);
            }
        }
        Ok(())
    }

    /// Callers and callees of the `pool` best documents under `sw`'s
    /// weights.
    fn add_neighbours(
        &mut self,
        r: &Reader,
        sw: Switches,
        names: &mut dyn Namer,
        pool: usize,
    ) -> Result<(), SearchError> {
        if !sw.neighbours {
            return Ok(());
        }
        let Some(scores) = super::context_scores(self, sw) else {
            return Ok(());
        };
        let mut out: HashMap<String, Vec<crate::graph::Edge>> = HashMap::new();
        let mut inbound: HashMap<String, Vec<crate::graph::Edge>> = HashMap::new();
        for k in super::top_docs(&scores, names, pool)? {
            let Some(s) = names.name(k)?.cloned() else {
                continue;
            };
            if !out.contains_key(&s.path) {
                let block = r.store.file_block(&s.path)?;
                out.insert(s.path.clone(), block.map(|b| b.out).unwrap_or_default());
                inbound.insert(s.path.clone(), r.store.inbound(&s.path)?);
            }
            let calls = out[&s.path]
                .iter()
                .filter(|e| e.kind == EdgeKind::Invokes && e.src == s.id)
                .map(|e| &e.dst);
            let callers = inbound[&s.path]
                .iter()
                .filter(|e| e.kind == EdgeKind::Invokes && e.dst == s.id)
                .map(|e| &e.src);
            let mut near = Vec::new();
            let mut seen = FxHashSet::default();
            for id in calls.chain(callers) {
                if let Some(n) = r.doc_of(id)? {
                    if seen.insert(n) {
                        near.push(n);
                    }
                }
            }
            self.neighbours.insert(k, near);
        }
        Ok(())
    }

    /// How much each function found changed lately: only reorders what
    /// matched, so it is read for the files already touched.
    fn add_recent(&mut self, r: &Reader, q: &Query) -> Result<(), SearchError> {
        if q.recent.is_empty() {
            return Ok(());
        }
        let mut nums: Vec<u32> = self.docs.keys().map(|k| k.0).collect();
        nums.sort_unstable();
        nums.dedup();
        let paths = r.paths()?;
        for num in nums {
            let Some(path) = paths.get(num) else { continue };
            let from = (path.to_string(), String::new());
            let changed = q.recent.range(from..).take_while(|((p, _), _)| p == path);
            let changed: FxHashMap<&str, f32> =
                changed.map(|((_, f), w)| (f.as_str(), *w)).collect();
            if changed.is_empty() {
                continue;
            }
            for (i, d) in r.file(num)?.docs.iter().enumerate() {
                let Some(w) = changed.get(name_key(&d.qualname).as_str()) else {
                    continue;
                };
                if let Some(s) = self.docs.get_mut(&(num, i as u16)) {
                    s.recent = *w;
                }
            }
        }
        Ok(())
    }

    /// Path facts for every file a touched document lives in.
    fn add_files(&mut self, r: &Reader, q: &Query) -> Result<(), SearchError> {
        // Whether a file is all declarations is read from its documents,
        // which only the files the words matched have had read already.
        let matched: FxHashSet<u32> = self.docs.keys().map(|k| k.0).collect();
        let mut nums = matched.clone();
        nums.extend(self.neighbours.values().flatten().map(|k| k.0));
        nums.extend(self.children.values().flatten().map(|k| k.0));
        nums.extend(self.modules.keys());
        nums.extend(self.whole.keys());
        let paths = r.paths()?;
        // Path words are the parts of an identifier, lowercased: an ASCII
        // name none of the words is in has none of them.
        let terms = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(q.terms.keys())
            .ok();
        let may_hold = |s: &str| !s.is_ascii() || terms.as_ref().is_none_or(|t| t.is_match(s));
        // Thousands of touched files share a few hundred directories, and
        // an issue has a few words: count, rather than collect, a file's.
        let mut by_dir: FxHashMap<&str, Vec<String>> = FxHashMap::default();
        for num in nums {
            let Some(path) = paths.get(num) else {
                continue;
            };
            let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
            let in_dir = by_dir.entry(dir).or_insert_with(|| match may_hold(dir) {
                true => super::index::dir_words(dir)
                    .into_iter()
                    .filter(|w| q.terms.contains_key(w))
                    .collect(),
                false => Vec::new(),
            });
            let mut in_file: Vec<String> = Vec::new();
            if may_hold(file) {
                for w in super::index::file_words_in_order(file) {
                    if q.terms.contains_key(&w) && !in_dir.contains(&w) && !in_file.contains(&w) {
                        in_file.push(w);
                    }
                }
            }
            let words = in_dir.len() + in_file.len();
            self.files.insert(
                num,
                FileFacts {
                    path: path.to_string(),
                    is_test: crate::graph::is_beside_product(path),
                    path_words: words.min(u16::MAX as usize) as u16,
                    hollow: matched.contains(&num) && r.file(num)?.hollow,
                },
            );
        }
        Ok(())
    }

    /// Drop documents that only BM25 found, below its `keep` best.
    fn prune(&mut self, keep: usize) {
        let mut lexical: Vec<(DocKey, f32)> = self
            .docs
            .iter()
            .filter(|(k, s)| {
                **s == Signals {
                    bm25: s.bm25,
                    ..Signals::default()
                } && !self.children.contains_key(*k)
                    && !self.neighbours.contains_key(*k)
            })
            .map(|(k, s)| (*k, s.bm25))
            .collect();
        if lexical.len() <= keep {
            return;
        }
        lexical.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (k, _) in &lexical[keep..] {
            self.docs.remove(k);
        }
    }

    /// Every document the evidence mentions.
    pub fn keys(&self) -> Vec<DocKey> {
        let mut all: FxHashSet<DocKey> = self.docs.keys().copied().collect();
        all.extend(self.neighbours.values().flatten().copied());
        all.extend(self.children.values().flatten().copied());
        let mut all: Vec<DocKey> = all.into_iter().collect();
        all.sort_unstable();
        all
    }
}

/// Names documents (their ids and spans) for ranking.
pub trait Namer {
    /// The document's id and span; `None` when it cannot be named.
    fn name(&mut self, k: DocKey) -> Result<Option<&Scored>, SearchError>;
}

/// Names read from the index as they are first needed.
pub struct Names<'r, 's> {
    reader: &'r Reader<'s>,
    known: FxHashMap<DocKey, Scored>,
}

impl<'r, 's> Names<'r, 's> {
    pub fn new(reader: &'r Reader<'s>) -> Self {
        Names {
            reader,
            known: FxHashMap::default(),
        }
    }

    /// Read every one of `keys` now, and hand over all names read.
    pub fn read_all(mut self, keys: &[DocKey]) -> Result<FxHashMap<DocKey, Scored>, SearchError> {
        for k in keys {
            self.name(*k)?;
        }
        Ok(self.known)
    }
}

impl Namer for Names<'_, '_> {
    fn name(&mut self, k: DocKey) -> Result<Option<&Scored>, SearchError> {
        if !self.known.contains_key(&k) {
            self.known.insert(k, Scored::of(self.reader, k)?);
        }
        Ok(self.known.get(&k))
    }
}

/// Names read beforehand, for scoring away from the index: anything else
/// cannot be named, so it is not ranked.
pub struct Known<'a>(pub &'a FxHashMap<DocKey, Scored>);

impl Namer for Known<'_> {
    fn name(&mut self, k: DocKey) -> Result<Option<&Scored>, SearchError> {
        Ok(self.0.get(&k))
    }
}

/// The documents a frame points at. A name picks the entities it names,
/// and the line the one of them that holds it, where one does: a file may
/// define `grow` in three classes. A frame with lines and no name (a Rust
/// panic, a permalink) points at the entity that holds those lines.
fn frame_targets(docs: &[super::index::DocMeta], fr: &Frame) -> Vec<usize> {
    let at = fr
        .line
        .and_then(|l| super::holder(docs, l, fr.end_line.unwrap_or(l)));
    let Some(function) = fr.function.as_deref().map(str::to_lowercase) else {
        return at.into_iter().collect();
    };
    let named: Vec<usize> = (0..docs.len())
        .filter(|&i| name_key(&docs[i].qualname) == function)
        .collect();
    match at {
        Some(i) if named.contains(&i) => vec![i],
        _ => named,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Kind;
    use crate::search::index::DocMeta;

    fn doc(qualname: &str, start_line: u32, end_line: u32) -> DocMeta {
        DocMeta {
            qualname: qualname.into(),
            kind: Kind::Method,
            parent: None,
            start_line,
            end_line,
            len: 1.0,
            features_len: 1.0,
        }
    }

    fn frame(function: Option<&str>, line: u32) -> Frame {
        Frame {
            path: "fmt/format.h".into(),
            line: Some(line),
            end_line: None,
            function: function.map(str::to_string),
        }
    }

    #[test]
    fn a_frame_points_at_the_named_entity_its_line_picks_else_at_every_one_named() {
        let docs = [
            doc("Buffer::grow", 1, 5),
            doc("MemoryBuffer::grow", 7, 12),
            doc("MemoryBuffer::resize", 14, 20),
        ];
        assert_eq!(frame_targets(&docs, &frame(Some("grow"), 9)), [1]);
        // Lines from another version: the name alone decides.
        assert_eq!(frame_targets(&docs, &frame(Some("grow"), 16)), [0, 1]);
        assert_eq!(frame_targets(&docs, &frame(None, 16)), [2]);
        assert!(frame_targets(&docs, &frame(Some("reserve"), 40)).is_empty());
    }
}
