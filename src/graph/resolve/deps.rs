//! What resolving a file read, so an update re-resolves only the files
//! whose reads changed.
//!
//! Every symbol the resolver sees comes through [`SymbolSource`], and the
//! edges of a file are a function of those answers. [`Recorded`] sits in
//! front of the source and notes each question: the files looked into, and
//! the slices of the names index asked for (`new` among methods of `Foo`,
//! not every `new`). An update that changes neither a file some resolution
//! looked into (its interface, [`interface_digest`]) nor a slice it asked
//! for cannot change that resolution's edges.

use super::{Facts, NameRef, SymbolSource};
use crate::parse::{Kind, Lang, ParsedFile};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The reads one resolution made.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deps {
    /// Names-index slice keys ([`Slice::keys`]).
    pub names: BTreeSet<Arc<str>>,
    /// Files looked into, or probed for and not found.
    pub paths: BTreeSet<Arc<str>>,
    /// Other files in which edges of this resolution start: a Rust
    /// `impl Trait for Type` lends its edge to the file defining `Type`,
    /// whose block keeps it, so the two are resolved again together.
    pub lends: BTreeSet<Arc<str>>,
}

impl Deps {
    pub fn merge(&mut self, other: &Deps) {
        self.names.extend(other.names.iter().cloned());
        self.paths.extend(other.paths.iter().cloned());
        self.lends.extend(other.lends.iter().cloned());
    }

    /// The same reads, each set's nodes full: sets grown by inserts leave
    /// them about a third empty, and init holds every file's until the
    /// store is written (260 MB for the Linux tree).
    pub fn compacted(self) -> Deps {
        let full = |s: BTreeSet<Arc<str>>| s.into_iter().collect();
        Deps {
            names: full(self.names),
            paths: full(self.paths),
            lends: full(self.lends),
        }
    }

    /// The reads of `self` that `other` did not make.
    pub fn minus(&self, other: &Deps) -> Deps {
        let less =
            |a: &BTreeSet<Arc<str>>, b: &BTreeSet<Arc<str>>| a.difference(b).cloned().collect();
        Deps {
            names: less(&self.names, &other.names),
            paths: less(&self.paths, &other.paths),
            lends: less(&self.lends, &other.lends),
        }
    }
}

/// Which entities of one bare name a lookup wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slice<'a> {
    All,
    Classes,
    Methods,
    Macros,
    /// Classes and free functions: what a bare name may call.
    Free,
    /// [`Slice::Free`] and macros: what a bare name may call in C and
    /// C++, where a macro is called as a function is.
    FreeOrMacro,
    /// Methods whose owning type's bare name is this.
    MethodsOf(&'a str),
}

/// The slice a kind belongs to, as a one-letter code.
fn kind_code(k: Kind) -> &'static str {
    match k {
        Kind::File => "F",
        Kind::Class => "c",
        Kind::Function => "f",
        Kind::Method => "m",
        Kind::Macro => "M",
    }
}

impl Slice<'_> {
    /// Whether a names-index entry lies in the slice.
    pub fn holds(&self, r: &NameRef) -> bool {
        self.admits(r.kind, r.owner.as_deref())
    }

    /// Whether an entity of `kind`, owned (if a method) by `owner`, lies
    /// in the slice; `owner` is read only by [`Slice::MethodsOf`].
    pub fn admits(&self, kind: Kind, owner: Option<&str>) -> bool {
        match self {
            Slice::All => true,
            Slice::Classes => kind == Kind::Class,
            Slice::Methods => kind == Kind::Method,
            Slice::Macros => kind == Kind::Macro,
            Slice::Free => matches!(kind, Kind::Class | Kind::Function),
            Slice::FreeOrMacro => matches!(kind, Kind::Class | Kind::Function | Kind::Macro),
            Slice::MethodsOf(t) => kind == Kind::Method && owner == Some(*t),
        }
    }

    /// The keys a lookup of `name` in this slice depends on.
    pub fn keys(&self, name: &str) -> Vec<String> {
        let by_kind = |k: Kind| format!("{name}\u{1}{}", kind_code(k));
        match self {
            Slice::All => vec![name.to_string()],
            Slice::Classes => vec![by_kind(Kind::Class)],
            Slice::Methods => vec![by_kind(Kind::Method)],
            Slice::Macros => vec![by_kind(Kind::Macro)],
            Slice::Free => vec![by_kind(Kind::Class), by_kind(Kind::Function)],
            Slice::FreeOrMacro => [Kind::Class, Kind::Function, Kind::Macro]
                .into_iter()
                .map(by_kind)
                .collect(),
            Slice::MethodsOf(t) => vec![format!("{name}\u{2}{t}")],
        }
    }
}

/// Every slice key an entry of the names index under `name` answers to:
/// when the entry comes or goes, lookups under these keys may change.
pub fn keys_of(name: &str, r: &NameRef) -> Vec<String> {
    let mut out = vec![
        name.to_string(),
        format!("{name}\u{1}{}", kind_code(r.kind)),
    ];
    if let (Kind::Method, Some(owner)) = (r.kind, &r.owner) {
        out.push(format!("{name}\u{2}{owner}"));
    }
    out
}

/// The slice keys whose answers differ between two versions of the
/// names-index entries of some files.
pub fn changed_keys(before: &[(String, NameRef)], after: &[(String, NameRef)]) -> BTreeSet<String> {
    changed_entries(before, after)
        .into_iter()
        .flat_map(|(n, rs)| rs.into_iter().flat_map(move |r| keys_of(n, r)))
        .collect()
}

/// The entries that came or went between two versions of some files'
/// names-index entries, by bare name.
pub fn changed_entries<'a>(
    before: &'a [(String, NameRef)],
    after: &'a [(String, NameRef)],
) -> BTreeMap<&'a str, Vec<&'a NameRef>> {
    let a: BTreeSet<&(String, NameRef)> = before.iter().collect();
    let b: BTreeSet<&(String, NameRef)> = after.iter().collect();
    let mut out: BTreeMap<&str, Vec<&NameRef>> = BTreeMap::new();
    for (n, r) in a.symmetric_difference(&b) {
        out.entry(n.as_str()).or_default().push(r);
    }
    out
}

/// A lookup that finds more candidates than this is answered "many". The
/// resolver links such calls only to a unique candidate, so which of the
/// many came or went cannot change the answer: renaming one of 20k `fmt`
/// methods then re-resolves the files that call that type's `fmt`, not
/// every file that calls some `fmt`.
pub const MANY: usize = 16;

/// The key a lookup answered "many" reads: whether slice key `key` still
/// holds more than [`MANY`] entries of language family `family`.
pub fn many_key(key: &str, family: Lang) -> String {
    format!("{key}\u{3}{family:?}")
}

/// The "many" keys whose answer a change of the entries under `name` may
/// flip: for each slice a changed entry lies in, in its file's family,
/// unless the slice holds more than [`MANY`] such entries both before and
/// after. `before` and `after` are every entry under `name` either side.
/// A slice read as several keys (classes and functions) flips only when
/// one of them ends with at most [`MANY`], so the test per key suffices.
pub fn flipped_many(
    name: &str,
    changed: &[&NameRef],
    before: &[NameRef],
    after: &[NameRef],
) -> BTreeSet<String> {
    let family = |r: &NameRef| Lang::from_path(&r.path).map(Lang::family);
    let wanted: BTreeSet<(String, Lang)> = changed
        .iter()
        .filter_map(|r| Some((r, family(r)?)))
        .flat_map(|(r, fam)| keys_of(name, r).into_iter().map(move |k| (k, fam)))
        .collect();
    // One pass over each side: a name like `new` has thousands of entries.
    let tally = |all: &[NameRef]| {
        let mut n: BTreeMap<&(String, Lang), usize> = BTreeMap::new();
        for r in all {
            let Some(fam) = family(r) else { continue };
            for k in keys_of(name, r) {
                if let Some(w) = wanted.get(&(k, fam)) {
                    *n.entry(w).or_default() += 1;
                }
            }
        }
        n
    };
    let (was, now) = (tally(before), tally(after));
    let count =
        |n: &BTreeMap<&(String, Lang), usize>, w: &(String, Lang)| n.get(w).copied().unwrap_or(0);
    wanted
        .iter()
        .filter(|w| count(&was, w).min(count(&now, w)) <= MANY)
        .map(|(k, fam)| many_key(k, *fam))
        .collect()
}

/// A digest of what resolving *other* files may read of this one: its
/// definitions' names, kinds, nesting, owners, bases and flavors, its
/// imports and trait impls, never its calls, spans or comments. A body
/// edit leaves it unchanged, so files that looked into this one need no
/// second look.
pub fn interface_digest(f: &Facts) -> String {
    let p = &f.parsed;
    let entities: Vec<_> = p
        .entities
        .iter()
        .map(|e| {
            (
                &e.qualname,
                &e.name,
                e.kind,
                &e.flavor,
                e.parent,
                &e.owner_type,
                &e.bases,
            )
        })
        .collect();
    let json = serde_json::to_vec(&(entities, &p.imports, &p.impls)).expect("interface serialises");
    crate::text::hex(&Sha256::digest(&json)[..16])
}

/// Whether resolving a file of `lang` can reach a definition through
/// another file that names it (a re-export, a base class), so a change
/// there may reach the file though its own text never names it. C looks
/// a name up in the file, the headers it includes itself and the names
/// index, never further.
pub fn reads_through_other_files(lang: Lang) -> bool {
    lang != Lang::C
}

/// The names whose definitions differ between two parses of one file, in
/// what [`interface_digest`] covers, as identifier words (`Session.send`
/// gives `Session` and `send`). Another file's resolution finds a
/// definition by a name written in that file or in a file it read, so
/// one that mentions none of these words read this file's interface as
/// before. `None` when the imports or trait impls differ: a re-export
/// goes by a name its readers need not write.
pub fn changed_names(old: &ParsedFile, new: &ParsedFile) -> Option<BTreeSet<String>> {
    if old.imports != new.imports || old.impls != new.impls {
        return None;
    }
    let (before, after) = (interface_entries(old), interface_entries(new));
    let mut words = BTreeSet::new();
    for e in before.symmetric_difference(&after) {
        let texts = [e.qualname, e.name]
            .into_iter()
            .chain(e.owner_type.as_deref());
        for text in texts.chain(e.bases.iter().flatten().map(String::as_str)) {
            let parts = text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'));
            // No name is all digits: `2` in `f#2` only tells overloads apart.
            let named = |w: &&str| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_digit());
            words.extend(parts.filter(named).map(str::to_string));
        }
    }
    Some(words)
}

/// One definition as [`interface_digest`] sees it, its parent by name
/// rather than by place, so a definition added above others leaves
/// theirs unchanged.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct InterfaceEntry<'a> {
    qualname: &'a str,
    name: &'a str,
    kind: Kind,
    flavor: &'a str,
    parent: Option<&'a str>,
    owner_type: &'a Option<String>,
    bases: &'a Vec<Vec<String>>,
}

fn interface_entries(p: &ParsedFile) -> BTreeSet<InterfaceEntry<'_>> {
    let parent = |i: usize| p.entities.get(i).map(|e| e.qualname.as_str());
    p.entities
        .iter()
        .map(|e| InterfaceEntry {
            qualname: &e.qualname,
            name: &e.name,
            kind: e.kind,
            flavor: &e.flavor,
            parent: e.parent.and_then(parent),
            owner_type: &e.owner_type,
            bases: &e.bases,
        })
        .collect()
}

/// What a probe for a missing file depends on: the shortest prefix of its
/// path that is neither a directory nor a file. A file added at the probed
/// path creates that prefix, so looking up every prefix of each added path
/// finds the probe; and the many probes a module path makes (`a/X.rs`,
/// `a/X/mod.rs`, `a/X/y/mod.rs`, …) share one key. Recording each probed
/// path instead cost a registry-sized tree 440k keys.
///
/// The first `known` bytes of `path`, a directory, are not asked about.
pub fn miss_key(path: &str, known: usize, is_dir: impl Fn(&str) -> bool) -> &str {
    path.match_indices('/')
        .filter(|&(i, _)| i > known)
        .map(|(i, _)| &path[..i])
        .find(|d| !is_dir(d))
        .unwrap_or(path)
}

/// `path` and every directory above it: the keys a file added at `path`
/// may satisfy (see [`miss_key`]).
pub fn prefixes(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/')
        .map(move |(i, _)| &path[..i])
        .chain(std::iter::once(path))
}

/// A [`SymbolSource`] that notes every question asked of it. Frames nest,
/// so a resolution cached for reuse keeps the reads it made and hands them
/// to every later resolution that reuses it.
pub struct Recorded<'s> {
    inner: &'s dyn SymbolSource,
    frames: RefCell<Vec<Deps>>,
    /// One copy of each key and path, shared by every file's reads: most
    /// files read the same few thousand, and at millions of lines their
    /// copies were tens of megabytes.
    interned: RefCell<rustc_hash::FxHashSet<Arc<str>>>,
}

impl<'s> Recorded<'s> {
    pub fn new(inner: &'s dyn SymbolSource) -> Recorded<'s> {
        Recorded {
            inner,
            // No frame below the first push: reads outside every step
            // are nobody's, and a bottom frame took in every file's reads
            // as each ended (on the Linux tree, a set of all its names
            // grown by millions of string-compared inserts).
            frames: RefCell::new(Vec::new()),
            interned: RefCell::default(),
        }
    }

    /// The shared copy of `s`.
    pub fn intern(&self, s: &str) -> Arc<str> {
        let mut interned = self.interned.borrow_mut();
        if let Some(a) = interned.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        interned.insert(a.clone());
        a
    }

    /// How many steps are being noted, one inside the other.
    pub fn depth(&self) -> usize {
        self.frames.borrow().len()
    }

    /// Start noting the reads of one cacheable step.
    pub fn push(&self) {
        self.frames.borrow_mut().push(Deps::default());
    }

    /// End the innermost step: its reads, which count for the step
    /// around it too.
    pub fn pop(&self) -> Deps {
        let mut frames = self.frames.borrow_mut();
        let top = frames.pop().unwrap_or_default();
        if let Some(outer) = frames.last_mut() {
            outer.merge(&top);
        }
        top
    }

    /// Reads of a cached step, reused: they count for the current one.
    pub fn reuse(&self, d: &Deps) {
        if let Some(top) = self.frames.borrow_mut().last_mut() {
            top.merge(d);
        }
    }

    fn path(&self, p: &str) {
        if let Some(top) = self.frames.borrow_mut().last_mut() {
            if !top.paths.contains(p) {
                top.paths.insert(self.intern(p));
            }
        }
    }

    /// A probe for `p`: the path itself when it was found, else its
    /// [`miss_key`], looked for past the first `known` bytes (a directory).
    fn probe(&self, p: &str, found: bool, known: usize) {
        match found {
            true => self.path(p),
            false => self.path(miss_key(p, known, |d| self.inner.is_dir(d))),
        }
    }

    pub fn facts(&self, path: &str) -> Option<Arc<Facts>> {
        let f = self.inner.facts(path);
        self.probe(path, f.is_some(), 0);
        f
    }

    pub fn is_file(&self, path: &str) -> bool {
        self.is_file_under("", path)
    }

    /// [`Recorded::is_file`] for `path` under `dir`, a directory known to
    /// hold files: so does every prefix of it, and a miss's key is looked
    /// for below it only. An `#include` probes each directory above the
    /// including file, and asking again about each one's prefixes grew
    /// with the depth of the tree.
    pub fn is_file_under(&self, dir: &str, path: &str) -> bool {
        let found = self.inner.is_file(path);
        let below = path
            .strip_prefix(dir)
            .filter(|rest| !dir.is_empty() && rest.starts_with('/'))
            .map_or(0, |_| dir.len());
        self.probe(path, found, below);
        found
    }

    pub fn kind_of(&self, path: &str, qualname: &str) -> Option<Kind> {
        self.path(path);
        self.inner.kind_of(path, qualname)
    }

    /// [`SymbolSource::first_defining`]: each path up to the one found
    /// (all when none is) counts as read, as if each were asked in turn.
    pub fn first_defining(&self, paths: &[String], qualname: &str) -> Option<usize> {
        let found = self.inner.first_defining(paths, qualname);
        let asked = found.map_or(paths.len(), |i| i + 1);
        for p in &paths[..asked] {
            self.path(p);
        }
        found
    }

    pub fn may_bind(&self, path: &str, name: &str) -> bool {
        self.path(path);
        self.inner.may_bind(path, name)
    }

    pub fn crates(&self) -> &BTreeMap<String, String> {
        self.inner.crates()
    }

    /// The entities named `name` in `lang`'s family that lie in `slice`.
    pub fn named(&self, lang: Lang, name: &str, slice: Slice) -> Vec<NameRef> {
        if let Some(top) = self.frames.borrow_mut().last_mut() {
            top.names
                .extend(slice.keys(name).iter().map(|k| self.intern(k)));
        }
        self.inner.named(lang, name, slice)
    }

    /// [`Recorded::named`] for a lookup that only a few candidates can
    /// answer: "many" depends on the count staying above [`MANY`], not on
    /// which entries there are.
    pub fn named_few(&self, lang: Lang, name: &str, slice: Slice) -> Option<Vec<NameRef>> {
        let found = self.inner.named_few(lang, name, slice);
        if let Some(top) = self.frames.borrow_mut().last_mut() {
            let keys = slice.keys(name);
            match found {
                Some(_) => top.names.extend(keys.iter().map(|k| self.intern(k))),
                None => top.names.extend(
                    keys.iter()
                        .map(|k| self.intern(&many_key(k, lang.family()))),
                ),
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(path: &str, q: &str, kind: Kind, owner: Option<&str>) -> NameRef {
        NameRef {
            path: path.into(),
            qualname: q.into(),
            kind,
            owner: owner.map(str::to_string),
        }
    }

    fn words_changed(before: &str, after: &str) -> Option<Vec<String>> {
        let parse = |src| crate::parse::parse(Lang::Python, "m.py", src);
        changed_names(&parse(before), &parse(after)).map(|w| w.into_iter().collect())
    }

    #[test]
    fn the_words_of_changed_definitions_are_theirs_alone() {
        let before = "class Session:\n    def send(self):\n        pass\n";
        // A definition added above the others changes only its own words.
        let above = format!("def helper():\n    pass\n\n\n{before}");
        assert_eq!(words_changed(before, &above), Some(vec!["helper".into()]));
        let renamed = before.replace("def send", "def send_all");
        assert_eq!(
            words_changed(before, &renamed),
            Some(vec!["Session".into(), "send".into(), "send_all".into()])
        );
        let rebased = before.replace("class Session:", "class Session(Base):");
        assert_eq!(
            words_changed(before, &rebased),
            Some(vec!["Base".into(), "Session".into()])
        );
        // A second definition of a name is told apart by `#2`, which no
        // reader writes.
        let twice = format!("{before}\n\ndef helper():\n    pass\n\n\ndef helper():\n    pass\n");
        let once = format!("{before}\n\ndef helper():\n    pass\n");
        assert_eq!(words_changed(&once, &twice), Some(vec!["helper".into()]));
        // An import may re-export anything under any name.
        assert_eq!(words_changed(before, &format!("import os\n{before}")), None);
    }

    #[test]
    fn a_renamed_method_changes_only_the_slices_it_was_in() {
        let before = vec![(
            "clone".to_string(),
            r("set.rs", "HashSet::clone", Kind::Method, Some("HashSet")),
        )];
        let after = vec![(
            "clone_all".to_string(),
            r(
                "set.rs",
                "HashSet::clone_all",
                Kind::Method,
                Some("HashSet"),
            ),
        )];
        let keys = changed_keys(&before, &after);
        // A lookup of `clone` among `Vec`'s methods, or among free
        // functions, reads nothing that changed.
        for unchanged in [
            Slice::MethodsOf("Vec").keys("clone"),
            Slice::Free.keys("clone"),
        ] {
            assert!(unchanged.iter().all(|k| !keys.contains(k)), "{unchanged:?}");
        }
        for changed in [
            Slice::MethodsOf("HashSet").keys("clone"),
            Slice::Methods.keys("clone"),
            Slice::All.keys("clone"),
            Slice::Methods.keys("clone_all"),
        ] {
            assert!(changed.iter().all(|k| keys.contains(k)), "{changed:?}");
        }
    }

    #[test]
    fn a_missed_probe_is_keyed_by_its_first_missing_prefix_which_an_added_file_names() {
        let dirs = ["src", "src/net"];
        let is_dir = |d: &str| dirs.contains(&d);
        assert_eq!(miss_key("src/net/tcp.rs", 0, is_dir), "src/net/tcp.rs");
        assert_eq!(miss_key("src/net/tcp/mod.rs", 0, is_dir), "src/net/tcp");
        assert_eq!(
            miss_key("src/net/tcp/stream/mod.rs", 0, is_dir),
            "src/net/tcp"
        );
        assert_eq!(miss_key("lib/a.rs", 0, is_dir), "lib");
        // Below a directory known to be one, the same key, asked less.
        let asked = std::cell::RefCell::new(Vec::new());
        let noted = |d: &str| {
            asked.borrow_mut().push(d.to_string());
            is_dir(d)
        };
        assert_eq!(miss_key("src/net/tcp/mod.rs", 7, noted), "src/net/tcp");
        assert_eq!(*asked.borrow(), ["src/net/tcp"]);
        assert_eq!(miss_key("src/net/x.rs", 7, is_dir), "src/net/x.rs");
        // Adding either probed file names the key its probe left.
        for added in ["src/net/tcp/mod.rs", "src/net/tcp/stream/mod.rs"] {
            assert!(prefixes(added).any(|p| p == "src/net/tcp"), "{added}");
        }
        assert_eq!(
            prefixes("a/b/c.rs").collect::<Vec<_>>(),
            ["a", "a/b", "a/b/c.rs"]
        );
    }

    #[test]
    fn a_many_answer_flips_only_when_few_candidates_remain() {
        let render = |i: usize| {
            r(
                &format!("w{i}.py"),
                &format!("W{i}.render"),
                Kind::Method,
                Some(&format!("W{i}")),
            )
        };
        let all: Vec<NameRef> = (0..MANY + 2).map(render).collect();
        let methods = many_key(&Slice::Methods.keys("render")[0], Lang::Python);
        // One of many gone: still many.
        let flipped = flipped_many("render", &[&all[0]], &all, &all[1..]);
        assert!(!flipped.contains(&methods), "{flipped:?}");
        // All but MANY gone: few now, so "many" answers are stale.
        let flipped = flipped_many("render", &[&all[0], &all[1]], &all, &all[2..]);
        assert!(flipped.contains(&methods), "{flipped:?}");
        // Rust's `render`s do not count for Python's lookups.
        let rs = |i: usize| {
            r(
                &format!("w{i}.rs"),
                &format!("W{i}::render"),
                Kind::Method,
                Some("W"),
            )
        };
        let mixed: Vec<NameRef> = all[..2]
            .iter()
            .cloned()
            .chain((0..MANY + 2).map(rs))
            .collect();
        let flipped = flipped_many("render", &[&mixed[0]], &mixed, &mixed[1..]);
        assert!(flipped.contains(&methods), "{flipped:?}");
    }
}
