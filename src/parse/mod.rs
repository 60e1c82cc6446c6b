//! Source → entities. tree-sitter does the parsing; this module turns its
//! trees into the language-neutral records the graph is built from.
//!
//! Walks are iterative (an explicit stack), so a pathologically nested file
//! cannot overflow the stack, and every node is visited once.

mod bash;
mod cfamily;
mod csharp;
mod generic;
mod go;
mod java;
mod js;
mod kotlin;
mod php;
mod python;
mod ruby;
mod rust;
mod scala;
mod swift;
pub use rust::{MACRO_EXPORT, REQUIRED};

/// What one language module provides. Adding a language is its module,
/// its grammar crate, a [`Lang`] variant and a line in [`LANGUAGES`].
pub trait Language: Sync {
    fn lang(&self) -> Lang;
    /// File name endings, dot included.
    fn extensions(&self) -> &'static [&'static str];
    /// How qualified names are joined.
    fn separator(&self) -> &'static str {
        "."
    }
    /// Never fails: broken code yields what tree-sitter recovers. The
    /// path picks a dialect where the extension decides one (`.tsx`).
    fn parse(&self, path: &str, source: &str) -> ParsedFile;
    /// Whether a function whose few lines read `text` (joined by spaces)
    /// is declared without a body: an interface's or trait's method, an
    /// abstract one, a prototype, a property with accessors only.
    fn declares_without_body(&self, text: &str) -> bool {
        !has_body(text)
    }
}

/// Whether a signature's text goes on to a body: a block or a `=` (`= expr`,
/// `=> expr`) outside its parentheses. Defaults (`x: Int = 0`) sit inside
/// them; a block of accessors only (`{ get; set; }`) is no body.
pub(crate) fn has_body(text: &str) -> bool {
    let mut depth = 0usize;
    let mut rest = text;
    while let Some(i) = rest.find(['(', ')', '[', ']', '{', '=']) {
        let c = rest.as_bytes()[i];
        rest = &rest[i + 1..];
        match c {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            b'{' => {
                let (inner, after) = rest.split_once('}').unwrap_or((rest, ""));
                let accessors = inner.split([';', ' ', '\t']).all(|w| {
                    matches!(
                        w,
                        "" | "get" | "set" | "init" | "private" | "protected" | "internal"
                    )
                });
                if !accessors {
                    return true;
                }
                rest = after;
            }
            _ => return true,
        }
    }
    false
}

/// The registry: every language `rpg` reads.
const LANGUAGES: &[&dyn Language] = &[
    &python::Python,
    &rust::Rust,
    &go::Go,
    &java::Java,
    &js::JavaScript,
    &js::TypeScript,
    &cfamily::C,
    &cfamily::Cpp,
    &csharp::CSharp,
    &php::Php,
    &ruby::Ruby,
    &kotlin::Kotlin,
    &swift::Swift,
    &scala::Scala,
    &bash::Bash,
];

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Languages `rpg` parses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    Python,
    Rust,
    Go,
    Java,
    JavaScript,
    TypeScript,
    C,
    Cpp,
    #[serde(rename = "csharp")]
    CSharp,
    Php,
    Ruby,
    Kotlin,
    Swift,
    Scala,
    Bash,
}

impl Lang {
    /// The language of a path by its ending alone. A `.h` file is
    /// reported as C++; [`Lang::of`] reads it as its repository does.
    pub fn from_path(path: &str) -> Option<Lang> {
        LANGUAGES
            .iter()
            .find(|l| l.extensions().iter().any(|e| path.ends_with(e)))
            .map(|l| l.lang())
    }

    /// The language a file is parsed as, where `headers` is how its
    /// repository reads `.h` files (see [`header_lang`]).
    pub fn of(path: &str, headers: Lang) -> Option<Lang> {
        if is_header(path) {
            return Some(headers);
        }
        Lang::from_path(path)
    }

    fn module(self) -> &'static dyn Language {
        LANGUAGES
            .iter()
            .copied()
            .find(|l| l.lang() == self)
            .expect("every Lang has a registry line")
    }

    /// How qualified names are joined.
    pub fn separator(self) -> &'static str {
        self.module().separator()
    }

    /// See [`Language::declares_without_body`].
    pub fn declares_without_body(self, text: &str) -> bool {
        self.module().declares_without_body(text)
    }

    /// JavaScript or TypeScript, which share their module rules.
    pub fn is_js(self) -> bool {
        matches!(self, Lang::JavaScript | Lang::TypeScript)
    }

    /// C or C++, which share headers.
    pub fn is_c(self) -> bool {
        matches!(self, Lang::C | Lang::Cpp)
    }

    /// Languages that call each other's definitions by name share one
    /// names index: C and C++, JavaScript and TypeScript.
    pub fn family(self) -> Lang {
        match self {
            Lang::Cpp => Lang::C,
            Lang::TypeScript => Lang::JavaScript,
            l => l,
        }
    }
}

/// Whether a path is a `.h` file, which C and C++ share.
pub fn is_header(path: &str) -> bool {
    path.ends_with(".h")
}

/// How a repository reads its `.h` files: as C++ when it has C++ sources
/// (`.hpp` counts), as C otherwise. C code may name things `new`, `class`
/// or `this`, which the C++ grammar cannot read. `None` when there are no
/// `.h` files, as there is then nothing to decide.
pub fn header_lang<'a>(paths: impl IntoIterator<Item = &'a str>) -> Option<Lang> {
    let (mut headers, mut cpp) = (false, false);
    for p in paths {
        if is_header(p) {
            headers = true;
        } else {
            cpp |= Lang::from_path(p) == Some(Lang::Cpp);
        }
    }
    headers.then_some(if cpp { Lang::Cpp } else { Lang::C })
}

/// The language `.h` files are parsed as, given [`header_lang`]'s answer.
/// Undecided means there are none, or a graph written before the rule,
/// which read them all as C++.
pub fn headers_as(decided: Option<Lang>) -> Lang {
    decided.unwrap_or(Lang::Cpp)
}

/// What a code entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    File,
    Class,
    Function,
    Method,
    /// A Rust `macro_rules!` definition.
    Macro,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Class => "class",
            Kind::Function => "function",
            Kind::Method => "method",
            Kind::Macro => "macro",
        }
    }
}

/// A call site, as written; resolution to an entity happens in the graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Call {
    /// `foo()`
    Name(String),
    /// `self.foo()`, `cls.foo()`, `Self::foo()`, `super().foo()`
    SelfMethod(String),
    /// `obj.foo()`; `recv` is empty for chained receivers.
    Attr { recv: String, name: String },
    /// `a::b::foo()` (Rust) — all segments, the callee last.
    Path(Vec<String>),
    /// `foo!(…)` (Rust): a macro, resolved only to `macro_rules!` entities.
    Macro(String),
    /// `x.foo()` where a declaration says what `x` is (Go, Java): the
    /// type as written, `["T"]` or `["pkg", "T"]`.
    Typed { ty: Vec<String>, name: String },
}

/// A code entity found in a file (the file itself is implicit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedEntity {
    /// Unique within the file; collisions carry a `#2`, `#3`… suffix.
    pub qualname: String,
    pub name: String,
    pub kind: Kind,
    /// `class`, `struct`, `enum`, `trait`, `union`, `def`, `async def`, `fn`.
    pub flavor: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    pub doc: String,
    /// Hash of the normalised source with the entity's own name elided, so a
    /// renamed or moved entity keeps its hash.
    pub hash: String,
    /// Index of the enclosing entity in `ParsedFile::entities`.
    pub parent: Option<usize>,
    pub calls: Vec<Call>,
    /// Base classes (Python) or supertraits (Rust), as written paths.
    pub bases: Vec<Vec<String>>,
    /// For methods: the owning type's name (Rust impl self type, Python class).
    pub owner_type: Option<String>,
    /// Where the definition sits in the source, in bytes.
    pub byte_range: (usize, usize),
}

/// A declaration without a body, named as its definition would be
/// (`A::f` for a method declared in `class A`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declaration {
    pub qualname: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// An import statement, normalised across languages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Import {
    /// Python `import a.b [as c]` / `from ..a import b [as c]`.
    Python {
        /// Leading dots of a relative import.
        level: usize,
        module: Vec<String>,
        /// `(name, bound_as)`; empty for `import a.b`, where `bound_as`
        /// is in `alias` instead.
        names: Vec<(String, String)>,
        alias: Option<String>,
    },
    /// Rust `use a::b::{c as d}` flattened to one path per binding; `mod_scope`
    /// is the inline-module path the `use` sits in.
    RustUse {
        path: Vec<String>,
        bound_as: String,
        glob: bool,
        mod_scope: Vec<String>,
    },
    /// Rust `mod foo;` (a declaration without a body).
    RustMod {
        name: String,
        mod_scope: Vec<String>,
    },
    /// Go `import [alias] "path"`; `alias` is `.` or `_` where written so.
    Go { path: String, alias: Option<String> },
    /// JavaScript/TypeScript `import … from "s"`, `export … from "s"`,
    /// `require("s")`, `import("s")`: `(exported, bound)` pairs, where
    /// `default` is the default export and `("*", "*")` re-exports all;
    /// `namespace` binds the whole module (`* as ns`, `x = require(…)`).
    Js {
        source: String,
        names: Vec<(String, String)>,
        namespace: Option<String>,
    },
    /// C/C++ `#include "path"` (or `<path>`, `system`).
    Include { path: String, system: bool },
    /// Java `package a.b;`: the file sees its package's names unimported.
    JavaPackage { path: Vec<String> },
    /// Java `import [static] a.b.C[.*];`
    Java {
        path: Vec<String>,
        wildcard: bool,
        is_static: bool,
    },
    /// A file by its path as written: Ruby `require_relative "x"` and
    /// `require "x"`, PHP `require "x.php"`, Bash `source x.sh`. Read
    /// from the importing file's directory when `relative`, else from any
    /// directory (a load path), the extension added where it is left out.
    File { path: String, relative: bool },
    /// A type or namespace by its qualified name: C# `using A.B;`, PHP
    /// `use A\B as C;`, Kotlin and Scala `import a.b.C`, `import a.b.*`,
    /// Swift `import M`. `wildcard` brings a namespace's members.
    Qualified {
        path: Vec<String>,
        alias: Option<String>,
        wildcard: bool,
    },
}

/// `impl Trait for Type` (Rust).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraitImpl {
    pub self_type: String,
    pub trait_path: Vec<String>,
}

/// Everything extracted from one file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ParsedFile {
    pub entities: Vec<ParsedEntity>,
    /// Bodiless C and C++ function declarations: prototypes and in-class
    /// method declarations, which are no entities.
    pub declarations: Vec<Declaration>,
    pub imports: Vec<Import>,
    pub impls: Vec<TraitImpl>,
    /// Calls made at module level (owned by the file).
    pub file_calls: Vec<Call>,
    pub doc: String,
    pub lines: u32,
    pub has_errors: bool,
}

impl ParsedFile {
    /// Init holds every file's parse until the store is written: no spare
    /// capacity, and a call repeated in one body is kept once, at its
    /// first place. Resolution and lifting read calls as a set of names
    /// in order of appearance, so nothing reads the repeats.
    fn compact(&mut self) {
        self.entities.shrink_to_fit();
        for e in &mut self.entities {
            first_of_each(&mut e.calls);
        }
        first_of_each(&mut self.file_calls);
    }

    /// A file's record before its definitions are read: its line count
    /// and whether tree-sitter parsed it cleanly.
    pub(crate) fn of_tree(root: tree_sitter::Node, src: &str) -> ParsedFile {
        ParsedFile {
            lines: src.lines().count() as u32,
            has_errors: root.has_error(),
            ..ParsedFile::default()
        }
    }
}

/// Parse a source file. Never fails: broken code yields what tree-sitter recovers.
#[cfg(test)]
impl ParsedFile {
    /// Each entity's qualified name, kind and flavor, in order: what a
    /// language's tests pin.
    pub(crate) fn kinds(&self) -> Vec<(&str, Kind, &str)> {
        self.entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.kind, e.flavor.as_str()))
            .collect()
    }
}

pub fn parse(lang: Lang, path: &str, source: &str) -> ParsedFile {
    let mut parsed = lang.module().parse(path, source);
    parsed.compact();
    parsed
}

/// Keep the first of equal calls, in order, without cloning any.
fn first_of_each(calls: &mut Vec<Call>) {
    let mut order: Vec<usize> = (0..calls.len()).collect();
    order.sort_by(|&a, &b| calls[a].cmp(&calls[b]).then(a.cmp(&b)));
    let mut keep = vec![true; calls.len()];
    for w in order.windows(2) {
        if calls[w[0]] == calls[w[1]] {
            keep[w[1]] = false;
        }
    }
    let mut k = keep.into_iter();
    calls.retain(|_| k.next().unwrap_or(true));
    calls.shrink_to_fit();
}

/// Parse `src` with `language`; `None` only if the grammar fails to load.
pub(crate) fn syntax_tree(language: tree_sitter::Language, src: &str) -> Option<tree_sitter::Tree> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language).ok()?;
    parser.parse(src, None)
}

/// The tree of `src`'s bytes in `ranges` (sorted, apart) alone, read as if
/// they were all the text, with their own offsets and lines.
/// `line_starts` holds where each of `src`'s lines begins (see
/// [`line_starts`]), so that parsing many parts of one text costs each
/// part its own length.
pub(crate) fn syntax_tree_in(
    language: tree_sitter::Language,
    src: &str,
    line_starts: &[usize],
    ranges: &[std::ops::Range<usize>],
) -> Option<tree_sitter::Tree> {
    let point = |at: usize| {
        let row = line_starts.partition_point(|&s| s <= at).saturating_sub(1);
        tree_sitter::Point {
            row,
            column: at - line_starts.get(row).copied().unwrap_or(0),
        }
    };
    let ranges: Vec<tree_sitter::Range> = ranges
        .iter()
        .map(|r| tree_sitter::Range {
            start_byte: r.start,
            end_byte: r.end,
            start_point: point(r.start),
            end_point: point(r.end),
        })
        .collect();
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&language).ok()?;
    parser.set_included_ranges(&ranges).ok()?;
    parser.parse(src, None)
}

/// Where each line of `src` begins, in bytes.
pub(crate) fn line_starts(src: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(src.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// Definitions nested deeper than this are no entities: what they hold
/// belongs to their ancestor at this depth. No person nests classes or
/// functions 32 deep; a generated file 20,000 deep made 20,000 entities
/// with qualnames 20,000 names long, gigabytes for a 400 KB file.
pub const MAX_NESTING: usize = 32;

/// The longest qualname an entity keeps; a longer one (a generated
/// identifier thousands of characters long) is cut, and keeps a digest of
/// the whole so two such names stay apart. An id must stay within what
/// the snapshot reader accepts (8 KB), path included.
pub const MAX_QUALNAME: usize = 1024;

fn bounded_qualname(q: &str) -> String {
    let digest = crate::text::digest(q.as_bytes());
    format!(
        "{}…{}",
        crate::text::prefix(q, MAX_QUALNAME - 32),
        crate::text::prefix(&digest, 16)
    )
}

/// Builds a file's entity list, keeping qualified names unique.
pub(crate) struct EntityBuilder {
    entities: Vec<ParsedEntity>,
    seen: std::collections::HashMap<String, u32>,
    /// Each entity's nesting depth, 1 at the top.
    depth: Vec<usize>,
}

impl EntityBuilder {
    pub fn new() -> Self {
        EntityBuilder {
            entities: Vec::new(),
            seen: std::collections::HashMap::new(),
            depth: Vec::new(),
        }
    }

    /// Whether a definition under `parent` would nest too deep to be an
    /// entity (see [`MAX_NESTING`]).
    pub fn too_deep(&self, parent: Option<usize>) -> bool {
        parent.is_some_and(|p| self.depth[p] >= MAX_NESTING)
    }

    /// Add an entity whose `qualname` may collide; returns its index. One
    /// nested too deep is not added: its parent's index is returned, so
    /// what it holds (calls, definitions) goes to the parent.
    pub fn push(&mut self, mut e: ParsedEntity) -> usize {
        if let Some(p) = e.parent.filter(|_| self.too_deep(e.parent)) {
            return p;
        }
        if e.qualname.len() > MAX_QUALNAME {
            e.qualname = bounded_qualname(&e.qualname);
        }
        self.depth.push(e.parent.map_or(1, |p| self.depth[p] + 1));
        let n = self.seen.entry(e.qualname.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            // Source order decides who keeps the plain name: deterministic,
            // and the first definition is the one benchmarks label.
            e.qualname = format!("{}#{}", e.qualname, n);
            while self.seen.contains_key(&e.qualname) {
                e.qualname.push('_');
            }
            self.seen.insert(e.qualname.clone(), 1);
        }
        self.entities.push(e);
        self.entities.len() - 1
    }

    pub fn get(&self, i: usize) -> &ParsedEntity {
        &self.entities[i]
    }

    /// The qualname an entity's members are named under: its own without
    /// the collision number, so a method of the second `formatter<T>`
    /// specialisation is `formatter::parse#2`, as benchmarks and readers
    /// write it, never `formatter#2::parse`.
    pub fn prefix_of(&self, i: usize) -> &str {
        let q = self.entities[i].qualname.as_str();
        q.split_once('#').map_or(q, |(plain, _)| plain)
    }

    pub fn get_mut(&mut self, i: usize) -> &mut ParsedEntity {
        &mut self.entities[i]
    }

    /// Finish the list, hashing each entity's own text: nested definitions
    /// are cut out, so editing a method changes the method, not its class.
    pub fn finish(mut self, src: &str) -> Vec<ParsedEntity> {
        let mut children: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.entities.len()];
        for e in &self.entities {
            if let Some(p) = e.parent {
                children[p].push(e.byte_range);
            }
        }
        for (e, kids) in self.entities.iter_mut().zip(children) {
            let (start, end) = e.byte_range;
            let mut own = String::with_capacity(end.saturating_sub(start));
            let mut at = start;
            for (s, t) in kids {
                if s >= at && t <= end {
                    own.push_str(src.get(at..s).unwrap_or(""));
                    at = t;
                }
            }
            own.push_str(src.get(at..end).unwrap_or(""));
            e.hash = content_hash(&own, &e.name);
        }
        self.entities
    }
}

/// Hash of source text with whitespace and the entity's own name normalised.
pub(crate) fn content_hash(text: &str, name: &str) -> String {
    let mut h = Sha256::new();
    let mut first = true;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if first {
            // Only the definition line names the entity; recursive calls in
            // the body stay, which is what a rename would also change.
            h.update(replace_word(line, name, "_").as_bytes());
            first = false;
        } else {
            h.update(line.as_bytes());
        }
        h.update(b"\n");
    }
    let digest = h.finalize();
    crate::text::hex(&digest[..8])
}

/// Replace the first whole-word occurrence of `word`.
fn replace_word(line: &str, word: &str, with: &str) -> String {
    if word.is_empty() {
        return line.to_string();
    }
    let bytes = line.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut start = 0;
    while let Some(pos) = line[start..].find(word) {
        let at = start + pos;
        let end = at + word.len();
        let before_ok = at == 0 || !is_ident(bytes[at - 1]);
        let after_ok = end >= bytes.len() || !is_ident(bytes[end]);
        if before_ok && after_ok {
            return format!("{}{}{}", &line[..at], with, &line[end..]);
        }
        start = end;
    }
    line.to_string()
}

/// Collapse whitespace and cap length, on a char boundary.
pub(crate) fn squash(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max));
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() >= max {
            break;
        }
    }
    if out.len() > max {
        out.truncate(crate::text::prefix(&out, max).len());
        out.push('…');
    }
    out
}

/// The first paragraph of a docstring or doc comment, whitespace-collapsed.
pub(crate) fn first_paragraph(doc: &str) -> String {
    let trimmed = doc.trim();
    let para = trimmed.split("\n\n").next().unwrap_or("");
    squash(para, 300)
}

/// The comments directly above `node`, nearest first, with no blank line
/// between them or before the node.
pub(crate) fn comments_above<'a>(node: tree_sitter::Node, src: &'a str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut row = node.start_position().row;
    let mut prev = node.prev_sibling();
    while let Some(p) = prev.filter(|p| p.kind() == "comment" && p.end_position().row + 1 >= row) {
        out.push(node_text(p, src));
        row = p.start_position().row;
        prev = p.prev_sibling();
    }
    out
}

/// The text lines of a `/** … */` doc block up to its first `@` tag,
/// leading `*` removed; `None` for any other comment.
pub(crate) fn doc_block_lines(comment: &str) -> Option<Vec<&str>> {
    let body = comment.strip_prefix("/**")?;
    Some(
        body.trim_end_matches("*/")
            .lines()
            .map(|l| l.trim().trim_start_matches('*').trim())
            .take_while(|l| !l.starts_with('@'))
            .collect(),
    )
}

/// The first sentence of doc text's first paragraph.
pub(crate) fn first_sentence(doc: &str) -> String {
    let para = first_paragraph(doc);
    match para.find(". ") {
        Some(i) => para[..=i].to_string(),
        None => para,
    }
}

pub(crate) fn node_text<'a>(node: tree_sitter::Node, src: &'a str) -> &'a str {
    src.get(node.byte_range()).unwrap_or("")
}

pub(crate) fn line_span(node: tree_sitter::Node) -> (u32, u32) {
    let start = node.start_position().row as u32 + 1;
    let end_pos = node.end_position();
    let mut end = end_pos.row as u32 + 1;
    // A node ending at column 0 ends on the previous line.
    if end_pos.column == 0 && end > start {
        end -= 1;
    }
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_cpp_with_any_cpp_source_c_without_and_undecided_with_no_header() {
        assert_eq!(header_lang(["a.c", "a.h", "b.py"]), Some(Lang::C));
        assert_eq!(header_lang(["a.c", "a.h", "x/b.cc"]), Some(Lang::Cpp));
        assert_eq!(header_lang(["a.h", "b.hpp"]), Some(Lang::Cpp));
        assert_eq!(header_lang(["a.c", "b.cpp", "a.hh"]), None);
        assert_eq!(Lang::of("a.h", Lang::C), Some(Lang::C));
        assert_eq!(Lang::of("a.hh", Lang::C), Some(Lang::Cpp));
        assert_eq!(Lang::of("a.md", Lang::C), None);
    }

    #[test]
    fn a_call_repeated_in_one_body_is_kept_once_at_its_first_place() {
        let src = "def f():\n    g()\n    h(1)\n    g()\n    self.k()\n    h(2)\n\ng()\ng()\n";
        let p = parse(Lang::Python, "m.py", src);
        let name = |n: &str| Call::Name(n.to_string());
        assert_eq!(
            p.entities[0].calls,
            [name("g"), name("h"), Call::SelfMethod("k".into())]
        );
        assert_eq!(p.file_calls, [name("g")]);
    }

    #[test]
    fn hash_ignores_indentation_and_own_name() {
        let a = content_hash("def foo(x):\n    return x + 1\n", "foo");
        let b = content_hash("    def bar(x):\n        return x + 1\n", "bar");
        assert_eq!(a, b);
        let c = content_hash("def foo(x):\n    return x + 2\n", "foo");
        assert_ne!(a, c);
    }

    #[test]
    fn collisions_get_numbered_suffixes_in_source_order() {
        let mut b = EntityBuilder::new();
        let mk = |q: &str| ParsedEntity {
            qualname: q.into(),
            name: q.into(),
            kind: Kind::Function,
            flavor: "def".into(),
            start_line: 1,
            end_line: 1,
            signature: String::new(),
            doc: String::new(),
            hash: String::new(),
            parent: None,
            calls: vec![],
            bases: vec![],
            owner_type: None,
            byte_range: (0, 0),
        };
        b.push(mk("f"));
        b.push(mk("f"));
        b.push(mk("f"));
        let names: Vec<_> = b.finish("").into_iter().map(|e| e.qualname).collect();
        assert_eq!(names, ["f", "f#2", "f#3"]);
    }
}
