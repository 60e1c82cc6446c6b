//! The Repository Planning Graph: code entities, dependency edges, and the
//! functional hierarchy that groups them. Plain data; building it lives in
//! `encode`, persisting it in `store`.

mod batched;
pub mod hierarchy;
mod id;
pub mod resolve;

pub use batched::Batched;
pub use id::{Id, Interner};

use crate::parse::{Kind, Lang};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Bumped whenever the snapshot format changes meaning. 2: the header
/// seals the records after it. 3: an entity leaves out what its file's
/// group of lines says (id, path, a shared lifter and leaf, the path of an
/// edge into the same file). 4: entity lines leave out their `"t"`, a
/// usual flavor and a file's implied `contains` list, and write
/// `"lines":[start,end]`. 5: features the offline lifter wrote are left
/// out (every reader of a snapshot derives them from git, as adoption
/// always has). Schemas 2 to 4 are still read.
pub const SCHEMA_VERSION: u32 = 5;
/// The oldest snapshot schema this rpg reads.
pub const OLDEST_SCHEMA: u32 = 2;

/// What the offline lifter records as an entity's lifter and the graph's.
/// Its features are a pure function of the code, so the snapshot leaves
/// them out.
pub const OFFLINE_LIFTER: &str = "offline/1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    Contains,
    Imports,
    Invokes,
    Inherits,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Imports => "imports",
            EdgeKind::Invokes => "invokes",
            EdgeKind::Inherits => "inherits",
        }
    }

    pub fn parse(s: &str) -> Option<EdgeKind> {
        match s {
            "contains" => Some(EdgeKind::Contains),
            "imports" => Some(EdgeKind::Imports),
            "invokes" => Some(EdgeKind::Invokes),
            "inherits" => Some(EdgeKind::Inherits),
            _ => None,
        }
    }
}

/// A directed dependency or containment edge between two entity ids.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Edge {
    pub src: Id,
    pub kind: EdgeKind,
    pub dst: Id,
}

/// A tracked source file as indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub path: String,
    pub blob: String,
    pub lang: Lang,
    pub lines: u32,
    /// tree-sitter had to recover from syntax errors.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub has_errors: bool,
}

/// A code entity: a file, class, function or method.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entity {
    /// `path` for files, `path:qualname` otherwise.
    pub id: String,
    pub kind: Kind,
    pub path: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub qualname: String,
    #[serde(default, skip_serializing_if = "Id::is_empty")]
    pub flavor: Id,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub signature: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub doc: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hash: String,
    pub features: Vec<String>,
    /// Which lifter wrote `features`, so a better one can replace them later.
    pub lifter: Id,
    /// The hierarchy leaf (`area/category/subcategory`) holding this entity.
    pub leaf: Id,
}

/// A node of the functional hierarchy. Its path is its identity; labels are
/// the path's segments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Category {
    pub path: String,
    /// Directory scopes this subtree covers (`.` for the repository root).
    pub scopes: Vec<String>,
    /// Terms that describe the subtree; routing compares against them.
    pub terms: Vec<String>,
}

impl Category {
    pub fn depth(&self) -> usize {
        self.path.split('/').count()
    }
}

/// Where the graph stands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    pub schema: u32,
    pub commit: String,
    pub tree: String,
    pub lifter: String,
    /// Cargo package names → their `src` directory, for resolving `use`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub crates: BTreeMap<String, String>,
    /// How `.h` files were read (see [`crate::parse::header_lang`]);
    /// absent when there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Lang>,
    /// The tree's `.gitattributes` files, which can leave files out (see
    /// [`crate::exclude`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<String>,
    /// What the `[index]` config (excludes, size cap) was when it was not
    /// the default (see [`crate::config::IndexConfig::digest`]): a change
    /// to it re-plans the whole tree on the next update, as init would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
}

impl Meta {
    /// The language `.h` files are parsed as.
    pub fn header_lang(&self) -> Lang {
        crate::parse::headers_as(self.headers)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    pub meta: Meta,
    pub files: BTreeMap<String, FileRecord>,
    pub entities: BTreeMap<String, Entity>,
    pub edges: BTreeSet<Edge>,
    pub categories: BTreeMap<String, Category>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Entity counts by kind and edge counts by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub files: usize,
    pub classes: usize,
    pub functions: usize,
    pub methods: usize,
    #[serde(skip_serializing_if = "is_zero")]
    pub macros: usize,
    pub edges: BTreeMap<&'static str, usize>,
    pub categories: usize,
}

impl Counts {
    /// Entities by kind and edges by kind (categories are left at zero).
    pub fn of<'a>(
        entities: impl Iterator<Item = &'a Entity>,
        edges: impl Iterator<Item = &'a Edge>,
    ) -> Counts {
        let mut c = Counts::default();
        for e in entities {
            match e.kind {
                Kind::File => c.files += 1,
                Kind::Class => c.classes += 1,
                Kind::Function => c.functions += 1,
                Kind::Method => c.methods += 1,
                Kind::Macro => c.macros += 1,
            }
        }
        for e in edges {
            *c.edges.entry(e.kind.as_str()).or_default() += 1;
        }
        c
    }
}

impl Graph {
    pub fn counts(&self) -> Counts {
        let mut c = Counts::of(self.entities.values(), self.edges.iter());
        c.categories = self.categories.len();
        c
    }

    /// Check the hierarchy invariants; returns a description of each violation.
    pub fn hierarchy_violations(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut occupied: BTreeMap<&str, usize> = BTreeMap::new();
        for e in self.entities.values() {
            match self.categories.get(e.leaf.as_str()) {
                Some(c) if c.depth() == 3 => *occupied.entry(&e.leaf).or_default() += 1,
                _ => problems.push(format!(
                    "{} sits in '{}', which is not a leaf",
                    e.id, e.leaf
                )),
            }
        }
        for c in self.categories.values() {
            let has_content = self
                .categories
                .range(format!("{}/", c.path)..)
                .next()
                .is_some_and(|(p, _)| p.starts_with(&format!("{}/", c.path)))
                || occupied.contains_key(c.path.as_str());
            if !has_content {
                problems.push(format!("category '{}' is empty", c.path));
            }
            if let Some((parent, _)) = c.path.rsplit_once('/') {
                if !self.categories.contains_key(parent) {
                    problems.push(format!("category '{}' has no parent", c.path));
                }
            }
        }
        problems
    }
}

/// An entity's id: `path:qualname` for a definition, the path alone for a
/// file. The one place ids are built and split.
///
/// Paths may hold `:` (legal on Unix), so the path ends at the first `:`
/// that follows a source file's name and leads to something that can be a
/// qualname: no `/`, and every `:` in it part of a `::` (Rust's
/// separator). `a:b.py:f` is `a:b.py` and `f`; `a:b.py` is a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntityId<'a> {
    pub path: &'a str,
    /// Empty for a file.
    pub qualname: &'a str,
}

impl<'a> EntityId<'a> {
    pub fn parse(id: &'a str) -> EntityId<'a> {
        for (i, _) in id.match_indices(':') {
            let (path, qualname) = (&id[..i], &id[i + 1..]);
            if crate::parse::Lang::from_path(path).is_some() && can_be_qualname(qualname) {
                return EntityId { path, qualname };
            }
        }
        EntityId {
            path: id,
            qualname: "",
        }
    }

    pub fn is_file(&self) -> bool {
        self.qualname.is_empty()
    }
}

impl std::fmt::Display for EntityId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.qualname {
            "" => f.write_str(self.path),
            q => write!(f, "{}:{q}", self.path),
        }
    }
}

/// `(path, qualname)` of an id; see [`EntityId`].
pub fn split_id(id: &str) -> (&str, &str) {
    let e = EntityId::parse(id);
    (e.path, e.qualname)
}

/// `id` names a file, not a definition inside one.
pub fn is_file_id(id: &str) -> bool {
    EntityId::parse(id).is_file()
}

/// The id of definition `qualname` in `path`; see [`EntityId`].
pub fn entity_id(path: &str, qualname: &str) -> String {
    EntityId { path, qualname }.to_string()
}

fn can_be_qualname(q: &str) -> bool {
    if q.is_empty() || q.contains('/') {
        return false;
    }
    // Every colon pairs up: `Type::method` is a qualname, `b.py:f` is not.
    let bytes = q.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b':' {
            if i == 0 || bytes.get(i + 1) != Some(&b':') {
                return false;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    true
}

/// Whether a path holds test code: the one rule the hierarchy (which gives
/// tests their own area) and locate (which ranks test code lower) share.
pub fn is_test_path(path: &str) -> bool {
    let (dirs, file) = match path.rsplit_once('/') {
        Some((d, f)) => (d, f),
        None => ("", path),
    };
    dirs.split('/')
        .any(|d| matches!(d, "test" | "tests" | "testing" | "__tests__" | "testsuite"))
        || file.starts_with("test_")
        || file.ends_with("_test.py")
        || file.ends_with("_tests.py")
        || file.ends_with("_test.rs")
        || file.ends_with("_test.go")
        || file.contains("_test.c")
        || file.contains(".test.")
        || file.contains(".spec.")
        || file == "conftest.py"
        || file == "tests.rs"
        || managed_test_path(dirs, file)
}

/// Code beside the product: tests, and the examples, benchmarks and
/// documentation code of [`is_sample_path`]. `locate` weighs it down, and
/// a fix that changes only such files makes no `eval --history` case.
pub fn is_beside_product(path: &str) -> bool {
    is_test_path(path) || is_sample_path(path)
}

/// Examples, benchmarks and demos: code that shows or measures the
/// product rather than being it. An issue's fix lands there about as
/// rarely as in a test (never among the 361 dev cases), while its words,
/// the product's own names used in full, match there as well as anywhere:
/// clap's `examples/` and `benches/` held a fifth of the functions
/// `locate` listed first for its issues. The code of the documentation
/// tree at the top (`docs/conf.py`, `doc/en/example/`) is the same: only
/// the top one, since a package may be named `doc` (Go's `go/doc`).
pub fn is_sample_path(path: &str) -> bool {
    const SAMPLES: [&str; 12] = [
        "example",
        "examples",
        "_examples",
        "bench",
        "benches",
        "benchmark",
        "benchmarks",
        "asv_bench",
        "demo",
        "demos",
        "sample",
        "samples",
    ];
    const DOCS: [&str; 3] = ["doc", "docs", "documentation"];
    let dirs = path.rsplit_once('/').map_or("", |(d, _)| d);
    let top = dirs.split('/').next().unwrap_or("");
    // .NET and Swift spell them `Samples/`, `Examples/`, `Docs/`.
    DOCS.iter().any(|d| top.eq_ignore_ascii_case(d))
        || dirs
            .split('/')
            .any(|d| SAMPLES.iter().any(|s| d.eq_ignore_ascii_case(s)))
}

/// The test layouts of C#, PHP, Ruby, Kotlin, Swift, Scala and the shells:
/// `spec/` and `Tests/` directories, `Foo.Tests/` projects, and files
/// named `cart_spec.rb`, `CartTest.php`, `CartTests.cs`, `CartSpec.scala`,
/// `*.bats`. Only those languages' files are judged by these, so the
/// other languages' layouts keep their meaning.
fn managed_test_path(dirs: &str, file: &str) -> bool {
    let Some((stem, ext)) = file.rsplit_once('.') else {
        return false;
    };
    if ext == "bats" {
        return true;
    }
    const MANAGED: [&str; 13] = [
        "cs", "php", "rb", "rake", "kt", "kts", "swift", "scala", "sc", "sh", "bash", "zsh", "ksh",
    ];
    if !MANAGED.contains(&ext) {
        return false;
    }
    // `UnitTests/`, `Shop.Tests/`, Kotlin's `commonTest/` and `jvmTest/`
    // source sets: a capital `Test` ends a word.
    let test_dir = dirs.split('/').any(|d| {
        let lower = d.to_ascii_lowercase();
        matches!(
            lower.as_str(),
            "test" | "tests" | "spec" | "specs" | "testing"
        ) || lower.ends_with(".tests")
            || lower.ends_with(".test")
            || d.ends_with("Test")
            || d.ends_with("Tests")
    });
    test_dir
        || ["_spec", "_test", "Test", "Tests", "Spec", "Suite"]
            .iter()
            .any(|s| stem.ends_with(s))
}

/// `rel` read from directory `dir` (`.` at the root), with `.` and `..`
/// applied; `None` when it climbs out of the repository.
pub fn join_rel(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = match dir {
        "." | "" => Vec::new(),
        d => d.split('/').collect(),
    };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

/// A directory as [`join_rel`] gives it, with the root spelt `.`.
pub fn dir_or_root(d: String) -> String {
    if d.is_empty() {
        ".".to_string()
    } else {
        d
    }
}

/// The directory part of a path, `.` at the root.
pub fn dir_of(path: &str) -> &str {
    match path.rsplit_once('/') {
        Some((d, _)) => d,
        None => ".",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_split_back_into_the_path_and_qualname_they_were_made_of() {
        for (path, qual) in [
            ("pkg/mod.py", "Class.method"),
            ("src/x.rs", "Type::method"),
            ("src/lib.rs", "tests::parses_flags"),
            ("a:b.py", "colon_fn"),
            ("dir:x/a:b.rs", "T::m#2"),
            ("a.py:b.py", "f"),
            ("x.py:dir/y.py", "C.m"),
        ] {
            assert_eq!(split_id(&entity_id(path, qual)), (path, qual));
        }
        for file in ["a:b.py", "pkg/mod.py", "x.py:dir/y.py", "weird::name.rs"] {
            assert_eq!(split_id(file), (file, ""), "{file}");
            assert!(is_file_id(file));
        }
    }

    #[test]
    fn test_paths_are_named_by_one_rule() {
        for p in [
            "tests/test_x.py",
            "pkg/tests/helpers.py",
            "src/__tests__/a.py",
            "testsuite/run.py",
            "pkg/util_test.py",
            "pkg/util_tests.py",
            "src/parser_test.rs",
            "conftest.py",
            "src/tests.rs",
            "test_root.py",
            "core/logx/logs_test.go",
            "src/test/java/a/BTest.java",
            "src/day.test.js",
            "src/app.spec.tsx",
            "src/jv_test.c",
            "tests/test_jv.cc",
            "spec/shop/cart_spec.rb",
            "test/cart_test.rb",
            "Shop.Tests/CartTests.cs",
            "tests/Unit/CartTest.php",
            "src/test/kotlin/CartTest.kt",
            "Tests/ShopTests/CartTests.swift",
            "src/test/scala/CartSpec.scala",
            "test/nvm.bats",
            "spec/async_spec.zsh",
            "src/UnitTests/Bug/Mapping.cs",
            "projects/core/src/commonTest/kotlin/ScopeTest2.kt",
            "src/jvmTest/kotlin/a/Verify.kt",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in [
            "src/contest.py",
            "src/testing_utils.py",
            "src/attest.rs",
            "latest/x.py",
            "src/contest.go",
            "src/latest.js",
            "spec/parser.js",
            "Tests/x.py",
            "lib/shop/contest.rb",
            "Sources/Manifest.swift",
            "src/Latest.cs",
            "src/Contest/Entry.cs",
            "src/latest/Entry.kt",
        ] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn examples_benchmarks_and_demos_are_samples_wherever_they_sit_and_docs_at_the_top() {
        for p in [
            "examples/derive.rs",
            "clap_bench/benches/06_rustup.rs",
            "asv_bench/benchmarks/io.py",
            "docs/_examples/server/main.go",
            "src/demo/app.js",
            "samples/Basic/Program.cs",
            "src/Benchmark/Program.cs",
            "Examples/math/Math.swift",
            "docs/source/conf.py",
            "doc/en/conftest.py",
            "Documentation/sphinx/kerneldoc.py",
        ] {
            assert!(is_sample_path(p), "{p}");
        }
        for p in [
            "examples.rs",
            "src/example.py",
            "src/benchmark.c",
            "lib/samplers/rate.go",
            "src/bench_util/x.rs",
            "Sources/Exampled/x.swift",
            "src/go/doc/reader.go",
            "docs.rs",
            "lib/docs/render.rb",
        ] {
            assert!(!is_sample_path(p), "{p}");
        }
    }
}
