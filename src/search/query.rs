//! Issue text → what to search for: weighted terms, identifiers the issue
//! names, stack-trace frames and explicit paths.

use crate::text::words::split_identifier;
use std::collections::{BTreeMap, BTreeSet};

/// Words that say nothing about where the code is: English glue and the
/// boilerplate of issue templates.
#[rustfmt::skip]
const NOISE: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "as", "is",
    "be", "this", "that", "it", "its", "from", "into", "are", "was", "were", "will", "can",
    "should", "may", "which", "when", "then", "than", "also", "such", "all", "any", "some",
    "each", "other", "only", "if", "else", "not", "no", "yes", "but", "so", "do", "does", "did",
    "done", "have", "has", "had", "i", "we", "you", "he", "she", "they", "me", "my", "our",
    "your", "their", "there", "here", "what", "why", "how", "where", "who", "would", "could",
    "get", "got", "use", "used", "using", "like", "just", "one", "two", "more", "most", "very",
    "seems", "seem", "think", "want", "need", "work", "works", "working", "worked", "try",
    "tried", "trying", "expected", "expect", "behavior", "behaviour", "actual", "result",
    "results", "output", "issue", "bug", "problem", "error", "errors", "example", "examples",
    "version", "versions", "environment", "steps", "reproduce", "description", "describe",
    "python", "traceback", "recent", "call", "last", "file", "line", "lines", "thanks", "hi",
    "hello", "please", "code", "following", "below", "above", "same", "still", "now", "new",
    "see", "also", "because", "about", "after", "before", "again", "way", "make", "makes",
    "made", "case", "cases", "true", "false", "none", "self", "def", "return", "import",
    "print", "fn", "let", "mut", "pub", "impl", "struct", "use", "crate", "rs", "py", "run",
    "running", "raise", "raises", "raised", "x", "y", "z", "e", "f", "s", "t", "n", "i", "id",
    "np", "pd", "plt", "df", "os", "sys", "what", "doesn", "don", "isn", "didn", "instead",
    "currently", "possible", "able", "really", "something", "anything", "thing", "things",
    "info", "details", "summary", "mre", "minimal", "reproducible", "install", "installed",
    "pip", "conda", "package", "packages", "lib", "site", "users", "home", "usr", "local",
];

/// A frame of a stack trace the issue quotes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Frame {
    pub path: String,
    pub line: Option<u32>,
    /// Last line of a quoted range (`#L274-L292`); `None` for one line.
    pub end_line: Option<u32>,
    pub function: Option<String>,
}

/// What `locate` searches with.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Lowercase word → weight.
    pub terms: BTreeMap<String, f32>,
    /// Two adjacent words of prose run together (`time out` →
    /// `timeout`, `Proxmox VE` → `proxmoxve`, `sub-command` →
    /// `subcommand`) → weight: how the code may spell what the issue
    /// writes apart (see [`super::bm25::COMPOUND_WEIGHT`]).
    pub compounds: BTreeMap<String, f32>,
    /// Identifiers as written (`PreparedRequest`, `map_diag`, `a.b.c`).
    pub identifiers: BTreeSet<String>,
    /// Paths the issue mentions, as written.
    pub paths: BTreeSet<String>,
    pub frames: Vec<Frame>,
    /// Commit ids the issue cites, full or abbreviated, lowercase.
    pub commits: Vec<String>,
    /// Entities nearest the issue in embedding space, with their cosine;
    /// empty unless the caller embedded the issue.
    pub dense: Vec<(String, f32)>,
    /// What the issue spells literally, for when the index finds nothing
    /// (see [`super::literal`]).
    pub literals: Vec<String>,
    /// How much each function changed lately, by (file, lowercased bare
    /// name); empty unless the caller read the history (see
    /// [`super::recent`]).
    pub recent: BTreeMap<(String, String), f32>,
}

pub fn is_noise(w: &str) -> bool {
    // Called for every word of every body while indexing: a set, not a scan.
    static SET: std::sync::OnceLock<rustc_hash::FxHashSet<&'static str>> =
        std::sync::OnceLock::new();
    w.len() < 2
        || SET
            .get_or_init(|| NOISE.iter().copied().collect())
            .contains(w)
        || w.bytes().all(|c| c.is_ascii_digit())
}

impl Query {
    pub fn parse(text: &str) -> Query {
        let mut q = Query::default();
        let text = strip_details(text);
        q.literals = super::literal::literals(&text);
        for line in text.lines() {
            if let Some(f) = frame_of(line) {
                q.frames.push(f);
            }
        }
        // The title says what the issue is about; the body says much else.
        let title_end = text
            .trim_start()
            .find('\n')
            .map(|i| i + (text.len() - text.trim_start().len()))
            .unwrap_or(text.len());
        let mut offset = 0usize;
        let mut prose = Prose::default();
        for raw in text.split(|c: char| c.is_whitespace() || "()[]{}<>,;\"'=!?`*|".contains(c)) {
            let in_title = offset < title_end;
            offset += raw.len() + 1;
            let weight = if in_title { TITLE_WEIGHT } else { 1.0 };
            prose.read(raw, weight, &mut q.compounds);
            // A command-line flag (`--collect-only`) is matched literally
            // against the flags the code declares.
            if let Some(flag) = flag_of(raw) {
                *q.terms.entry(flag).or_default() += FLAG_WEIGHT;
            }
            if let Some(sha) = commit_of(raw) {
                if !q.commits.contains(&sha) && q.commits.len() < MAX_COMMITS {
                    q.commits.push(sha);
                }
            }
            // A permalink into a deep Java tree is longer than any word.
            if let Some(f) = permalink_of(raw) {
                q.frames.push(f);
                continue;
            }
            let tok = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
            if tok.is_empty() || tok.len() > 120 {
                continue;
            }
            if looks_like_path(raw) {
                let p = raw.trim_matches(|c: char| !(c.is_alphanumeric() || "_/.-".contains(c)));
                q.paths.insert(p.to_string());
            }
            if is_identifier(tok) {
                q.identifiers.insert(tok.to_string());
                // `pkg.module.Name` names `Name`; the modules on the way
                // are not functions the issue points at.
                if let Some(last) = tok.rsplit(['.', ':']).next() {
                    if is_identifier(last) {
                        q.identifiers.insert(last.to_string());
                    }
                }
            }
            let code_like = tok.contains('_') || tok.chars().skip(1).any(|c| c.is_uppercase());
            for w in split_identifier(tok) {
                if is_noise(&w) {
                    continue;
                }
                // Identifiers carry more signal than prose words.
                let base = if code_like { 1.5 } else { 1.0 };
                *q.terms.entry(w).or_default() += if in_title { base * TITLE_WEIGHT } else { base };
            }
        }
        // Saturate: a word repeated throughout a long issue is not worth 40 mentions.
        for w in q.terms.values_mut().chain(q.compounds.values_mut()) {
            *w = 1.0 + w.ln_1p();
        }
        q.frames.sort();
        q.frames.dedup();
        q
    }
}

/// The last word of prose read, so the next one can be run together
/// with it. Anything that is not a plain word, and punctuation after a
/// word, breaks the run.
#[derive(Default)]
struct Prose {
    last: Option<String>,
}

impl Prose {
    fn read(&mut self, raw: &str, weight: f32, compounds: &mut BTreeMap<String, f32>) {
        // Quotes and brackets are cut off by the caller's split already.
        let word = raw.trim_end_matches(|c: char| !c.is_alphanumeric());
        let ends = raw.len() - word.len();
        if word.is_empty() || !word.split('-').all(is_plain_word) {
            self.last = None;
            return;
        }
        for part in word.split('-') {
            let part = part.to_ascii_lowercase();
            if let Some(last) = &self.last {
                let joined = format!("{last}{part}");
                let glue = is_noise(last) && is_noise(&part);
                if joined.len() >= 5 && !glue && !is_noise(&joined) {
                    *compounds.entry(joined).or_default() += weight;
                }
            }
            self.last = Some(part);
        }
        if ends > 0 {
            self.last = None;
        }
    }
}

/// A word of prose as written: `name`, `Proxmox`, `VE`, not `fromJson`.
fn is_plain_word(w: &str) -> bool {
    let mut chars = w.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let rest = chars.as_str();
    first.is_ascii_alphabetic()
        && (rest.bytes().all(|b| b.is_ascii_lowercase())
            || rest.bytes().all(|b| b.is_ascii_uppercase()))
}

/// How much more a word of the issue's title weighs than one of its body.
const TITLE_WEIGHT: f32 = 6.0;

/// Query weight of a quoted command-line flag.
const FLAG_WEIGHT: f32 = 3.0;

/// `--some-flag` (with any trailing `=value` or punctuation cut off) as
/// the index spells flag terms, or `None`.
pub fn flag_of(raw: &str) -> Option<String> {
    let t = raw.trim_start_matches(|c: char| "`'\"(".contains(c));
    let rest = t.strip_prefix("--")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    let name = name.trim_end_matches('-');
    (name.len() >= 2 && name.starts_with(|c: char| c.is_ascii_alphabetic()))
        .then(|| format!("--{}", name.to_ascii_lowercase()))
}

/// Every flag a source text declares as a string literal: `"--verbose"`,
/// `'--collect-only'`.
pub fn flags_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while let Some(j) = text[i..].find("--") {
        let at = i + j;
        if at > 0 && (b[at - 1] == b'"' || b[at - 1] == b'\'') {
            if let Some(f) = flag_of(&text[at..]) {
                out.push(f);
            }
        }
        i = at + 2;
    }
    out
}

/// Drop collapsed `<details>` blocks: environment dumps and logs.
fn strip_details(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<details") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</details>") {
            Some(end) => rest = &rest[start + end + "</details>".len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_identifier(tok: &str) -> bool {
    let mut chars = tok.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_alphabetic() || first == '_')
        && tok.len() >= 3
        && tok
            .chars()
            .all(|c| c.is_alphanumeric() || "_.:".contains(c))
        && (tok.contains('_')
            || tok.contains('.')
            || tok.contains("::")
            || tok.chars().skip(1).any(|c| c.is_uppercase()))
}

/// A source file of a language rpg reads (`zrpc/server.go`, `src/x.rs:12`).
fn looks_like_path(tok: &str) -> bool {
    let t = tok.trim_matches(|c: char| !(c.is_alphanumeric() || "_/.-".contains(c)));
    let file = t.split(':').next().unwrap_or(t);
    file.len() > 3 && crate::parse::Lang::from_path(file).is_some()
}

/// How many cited commits are looked up.
const MAX_COMMITS: usize = 5;

/// A commit id as issues cite one: 7 to 40 lowercase hex digits, alone or
/// ending a forge's `/commit/` link. Digits and letters both, so neither a
/// number nor a word such as `deadbeef` reads as one.
fn commit_of(raw: &str) -> Option<String> {
    let t = raw.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let t = match t
        .rsplit_once("/commit/")
        .or_else(|| t.rsplit_once("/commits/"))
    {
        Some((_, sha)) => sha.split(['#', '?', '/']).next()?,
        None => t,
    };
    let hex = t
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let mixed = t.bytes().any(|b| b.is_ascii_digit()) && t.bytes().any(|b| b.is_ascii_alphabetic());
    (hex && mixed && (7..=40).contains(&t.len())).then(|| t.to_string())
}

/// A link to source on a forge (`https://github.com/o/r/blob/<ref>/src/x.py#L274-L292`,
/// GitLab's `/-/blob/`) points at lines as precisely as a stack frame does.
fn permalink_of(raw: &str) -> Option<Frame> {
    let t = raw.trim_matches(|c: char| "`'\"<>()[].,:;".contains(c));
    if !t.starts_with("http") {
        return None;
    }
    let (_, rest) = t.split_once("/blob/")?;
    // The segment after `blob/` is the commit or branch.
    let (_, rest) = rest.split_once('/')?;
    let (path, anchor) = match rest.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (rest, None),
    };
    let path = path.split('?').next()?.trim_end_matches('/');
    if path.is_empty() || path.split('/').any(|s| s == ".." || s.is_empty()) {
        return None;
    }
    let line_at = |s: &str| -> Option<u32> {
        let d: String = s
            .strip_prefix('L')?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        d.parse().ok()
    };
    let (line, end_line) = match anchor {
        Some(a) => {
            let mut parts = a.splitn(2, '-');
            let start = parts.next().and_then(line_at);
            let end = parts.next().and_then(line_at).filter(|e| Some(*e) > start);
            (start, end)
        }
        None => (None, None),
    };
    Some(Frame {
        path: path.to_string(),
        line,
        end_line,
        function: None,
    })
}

/// `at com.x.Parser$Inner.next(Parser.java:123)`: the path is the
/// package's directories and the file the frame names.
fn java_frame(l: &str) -> Option<Frame> {
    let rest = l.strip_prefix("at ")?;
    let (method, loc) = rest.split_once('(')?;
    let (file, line) = loc.trim_end_matches(')').split_once(':')?;
    // Kotlin and Scala run on the JVM and print their frames so too.
    if ![".java", ".kt", ".scala"].iter().any(|e| file.ends_with(e)) {
        return None;
    }
    let method = method.split('/').next_back()?;
    let mut segs: Vec<&str> = method.split('.').collect();
    let function = segs.pop()?;
    segs.pop()?; // the class, which the file names
    let mut path: String = segs.iter().map(|s| format!("{s}/")).collect();
    path.push_str(file);
    let plain = function.chars().all(|c| c.is_alphanumeric() || c == '_');
    Some(Frame {
        path,
        line: line.parse().ok(),
        end_line: None,
        function: plain.then(|| function.to_string()),
    })
}

/// `at Layer.handle (/srv/app/lib/router/layer.js:95:5)`: Node names the
/// function beside its location; `at new Foo (…)` a constructor, and
/// `<anonymous>` none.
fn node_frame(l: &str) -> Option<Frame> {
    let rest = l.strip_prefix("at ")?;
    let (callee, loc) = rest.split_once(" (")?;
    let loc = loc.strip_suffix(')')?;
    let mut parts = loc.rsplitn(3, ':');
    let (_column, line, path) = (parts.next()?, parts.next()?, parts.next()?);
    crate::parse::Lang::from_path(path).filter(|l| l.is_js())?;
    let callee = callee
        .trim_start_matches("async ")
        .trim_start_matches("new ");
    let name = callee.rsplit('.').next().unwrap_or(callee);
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "_$".contains(c));
    Some(Frame {
        path: path.to_string(),
        line: line.parse().ok(),
        end_line: None,
        function: plain.then(|| name.to_string()),
    })
}

/// `at N.C.M(String s) in /src/C.cs:line 12` (.NET), `#0 /app/src/User.php(12):
/// App\User->save()` (PHP) and `Fatal error: … file App/Cart.swift, line
/// 42` (Swift): frames whose line is not written `path:line`.
fn managed_frame(l: &str) -> Option<Frame> {
    let plain = |n: &str| {
        (!n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_')).then(|| n.to_string())
    };
    if let Some((call, loc)) = l.strip_prefix("at ").and_then(|r| r.split_once(" in ")) {
        let (path, line) = loc.rsplit_once(":line ")?;
        let name = call.split('(').next()?.rsplit('.').next()?;
        return Some(Frame {
            path: path.trim().to_string(),
            line: line.trim().parse().ok(),
            end_line: None,
            function: plain(name),
        });
    }
    if let Some(rest) = l.strip_prefix('#') {
        let (_, rest) = rest.split_once(' ')?;
        let (path, rest) = rest.split_once(".php(")?;
        let (line, call) = rest.split_once("):")?;
        let name = call
            .trim()
            .split('(')
            .next()?
            .rsplit(['>', ':', '\\'])
            .next()?;
        return Some(Frame {
            path: format!("{path}.php"),
            line: line.parse().ok(),
            end_line: None,
            function: plain(name),
        });
    }
    // Only Swift's: C's `assert` prints the same words, and making those
    // frames is a ranking change of its own, not judged.
    let (_, rest) = l.split_once("file ")?;
    let (path, line) = rest.split_once(", line ")?;
    if crate::parse::Lang::from_path(path)? != crate::parse::Lang::Swift {
        return None;
    }
    Some(Frame {
        path: path.to_string(),
        line: line
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok(),
        end_line: None,
        function: None,
    })
}

/// The method a Ruby frame names, `in 'm'`, `` in `m' ``, `in 'C#m'`, or a
/// Swift crash frame names, `Cart.add(_:) + 12 (Cart.swift:42)`.
fn managed_function(l: &str) -> Option<String> {
    let name = if let Some((_, rest)) = l.split_once(":in ") {
        let inner = rest.trim_start_matches(['\'', '`']);
        inner.split(['\'', '`']).next()?.rsplit(['#', '.']).next()?
    } else if l.contains(".swift:") {
        let (before, _) = l.split_once(" + ")?;
        let callee = before.rsplit(' ').next()?;
        callee.split('(').next()?.rsplit('.').next()?
    } else {
        return None;
    };
    let ok = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || "_?!".contains(c));
    ok.then(|| name.to_string())
}

/// `File "x/y.py", line 12, in func` (Python), `at src/x.rs:12:5` and
/// `src/x.rs:12` (Rust panics, compiler output), `/x/y.go:12 +0x1d`
/// (Go panics) and `at a.b.C.m(C.java:12)` (Java).
fn frame_of(line: &str) -> Option<Frame> {
    let l = line.trim();
    if let Some(rest) = l.strip_prefix("File \"") {
        let (path, rest) = rest.split_once('"')?;
        let line_no = rest
            .split("line ")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok());
        let function = rest
            .split(", in ")
            .nth(1)
            .map(|f| f.trim().to_string())
            .filter(|f| !f.starts_with('<'));
        return Some(Frame {
            path: path.to_string(),
            line: line_no,
            end_line: None,
            function,
        });
    }
    if let Some(frame) = java_frame(l)
        .or_else(|| node_frame(l))
        .or_else(|| managed_frame(l))
    {
        return Some(frame);
    }
    // `path:line` where the path is a source file of a language rpg reads.
    for tok in l.split_whitespace() {
        let t = tok.trim_matches(|c: char| !(c.is_alphanumeric() || "_/.:-+".contains(c)));
        for (i, _) in t.match_indices(':') {
            let path = &t[..i];
            let line = t[i + 1..].split(':').next().and_then(|n| n.parse().ok());
            if line.is_some() && crate::parse::Lang::from_path(path).is_some() {
                return Some(Frame {
                    path: path.to_string(),
                    line,
                    end_line: None,
                    function: native_function(l).or_else(|| managed_function(l)),
                });
            }
        }
    }
    None
}

/// The function a gdb or ASan frame names, `#3 0x… in ns::f<T> (…) at`,
/// as the bare name the index keys on: `f`. An operator's frame is left to
/// its line: `operator<< <T>` has no one way to be cut.
fn native_function(line: &str) -> Option<String> {
    let rest = line.strip_prefix('#')?;
    let (_, after) = rest.split_once(" in ")?;
    if after.starts_with("operator") || after.contains("::operator") {
        return None;
    }
    // Template arguments may hold spaces: read to the first space or `(`
    // outside them, leaving them out.
    let mut full = String::new();
    let mut depth = 0usize;
    for c in after.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            '(' | ' ' if depth == 0 => break,
            _ if depth == 0 => full.push(c),
            _ => {}
        }
    }
    let name = full.rsplit("::").next()?;
    let ok = name.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    ok.then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_words_outweigh_body_words() {
        let q = Query::parse("Sorting breaks\n\nI tried merging.");
        assert!(q.terms["sorting"] > q.terms["merging"] * 1.5);
    }

    fn compounds_of(q: &Query) -> Vec<&str> {
        q.compounds.keys().map(String::as_str).collect()
    }

    #[test]
    fn adjacent_words_of_prose_are_also_read_run_together() {
        let q = Query::parse("Check Proxmox VE response\n\nThe file name of a sub-command.");
        let joined = compounds_of(&q);
        for want in [
            "proxmoxve",
            "checkproxmox",
            "filename",
            "subcommand",
            "veresponse",
        ] {
            assert!(joined.contains(&want), "{want} in {joined:?}");
        }
        // Two words of glue are no word of the code's.
        assert!(!joined.iter().any(|j| j.starts_with("theof") || *j == "ofa"));
        assert!(q.compounds["proxmoxve"] > q.compounds["filename"] * 1.5);
        // Punctuation, and anything that is not plain prose, breaks the run.
        let q = Query::parse("Open the socket. Server fails; `fromJson` value, x_y test");
        let joined = compounds_of(&q);
        for gone in [
            "socketserver",
            "failsfromjson",
            "fromjsonvalue",
            "valuex",
            "ytest",
        ] {
            assert!(!joined.contains(&gone), "{gone} in {joined:?}");
        }
    }

    #[test]
    fn flags_are_matched_literally() {
        assert_eq!(flag_of("`--collect-only`"), Some("--collect-only".into()));
        assert_eq!(flag_of("--max-count=3"), Some("--max-count".into()));
        assert_eq!(flag_of("--"), None);
        assert_eq!(flag_of("---"), None);
        assert_eq!(
            flags_in(r#"group.addoption("--collectonly", '--collect-only', x="--y")"#),
            ["--collectonly", "--collect-only"]
        );
        let q = Query::parse("needs a shortcut for `--collect-only`");
        assert!(q.terms.contains_key("--collect-only"));
    }

    #[test]
    fn python_tracebacks_yield_frames() {
        let q = Query::parse(
            "Traceback (most recent call last):\n  File \"/usr/lib/site-packages/requests/models.py\", line 12, in prepare_body\n    x()\n",
        );
        assert_eq!(
            q.frames,
            [Frame {
                path: "/usr/lib/site-packages/requests/models.py".into(),
                line: Some(12),
                end_line: None,
                function: Some("prepare_body".into()),
            }]
        );
    }

    #[test]
    fn rust_panics_yield_frames() {
        let q = Query::parse("thread 'main' panicked at src/builder/command.rs:4021:9:\nboom");
        assert_eq!(q.frames[0].path, "src/builder/command.rs");
        assert_eq!(q.frames[0].line, Some(4021));
    }

    #[test]
    fn go_panics_and_java_traces_yield_frames() {
        let q = Query::parse(
            "goroutine 1 [running]:\nmain.(*T).Run(...)\n\t/home/u/go/src/app/core/mr/reduce.go:123 +0x1d\n\
             Exception in thread \"main\" java.lang.IllegalStateException\n\
             \tat com.x.core.Parser$Inner.next(Parser.java:45)\n\tat com.x.Main.lambda$run$0(Main.java:7)",
        );
        let got: Vec<_> = q
            .frames
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.function.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("/home/u/go/src/app/core/mr/reduce.go", Some(123), None),
                ("com/x/Main.java", Some(7), None),
                ("com/x/core/Parser.java", Some(45), Some("next")),
            ]
        );
    }

    #[test]
    fn gdb_asan_and_backtrace_frames_name_c_files() {
        let q = Query::parse(
            "#0 0x7f in jv_free src/jv.c:233\n    #1 0x4005 in main /home/u/jq/src/main.c:712:3\n#2 in fmt::v9::detail::write<char> include/fmt/format.h:1520\n#3  0x0000555555555139 in scan (p=0x0) at src/parse.c:40\n#4 0x11 in ?? src/x.c:9\n#5 0x12 in fmt::operator<< <std::string, char> (w=...) at fmt/ostream.h:138\n#6 0x13 in fmt::MemoryBuffer<char, 500ul, std::allocator<char> >::grow (this=0x1) at fmt/format.h:807",
        );
        let got: Vec<_> = q
            .frames
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.function.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("/home/u/jq/src/main.c", Some(712), Some("main")),
                ("fmt/format.h", Some(807), Some("grow")),
                ("fmt/ostream.h", Some(138), None),
                ("include/fmt/format.h", Some(1520), Some("write")),
                ("src/jv.c", Some(233), Some("jv_free")),
                ("src/parse.c", Some(40), Some("scan")),
                ("src/x.c", Some(9), None),
            ]
        );
    }

    #[test]
    fn cited_commits_are_read_from_words_and_commit_links() {
        let q = Query::parse(
            "Likely the regression of a6fe347322bfd57cab2d2612d8825b4ede765ac8.\n\
             Since 6d3d2750 and https://github.com/o/r/commit/9753f68a76091bebd7743dc2763bb272cbd4054a#diff-1,\n\
             not 20231114, deadbeef, 0x5613e8af05b8 or abc12.",
        );
        assert_eq!(
            q.commits,
            [
                "a6fe347322bfd57cab2d2612d8825b4ede765ac8",
                "6d3d2750",
                "9753f68a76091bebd7743dc2763bb272cbd4054a"
            ]
        );
    }

    #[test]
    fn dotnet_php_ruby_kotlin_scala_and_swift_traces_yield_frames() {
        let q = Query::parse(
            "Unhandled exception. System.NullReferenceException\n\
             \x20  at Shop.Models.User.Save(Store s) in /src/Shop/Models/User.cs:line 42\n\
             #0 /var/www/src/Models/Order.php(17): App\\Models\\Order->total()\n\
             #1 /var/www/src/Kernel.php(9): Kernel::boot()\n\
             lib/shop/cart.rb:12:in 'Shop::Cart#add'\n\
             lib/shop/tax.rb:3:in `rate'\n\
             \tat com.shop.Cart.add(Cart.kt:7)\n\
             \tat shop.Order$.apply(Order.scala:5)\n\
             3   MyApp  0x0000000100003f Cart.extra(_:) + 52 (Cart.swift:21)\n\
             Fatal error: Index out of range: file MyApp/Basket.swift, line 8\n\
             Assertion failed: (0), function jv_dump_term, file jv_print.c, line 221.\n",
        );
        let got: Vec<(&str, Option<u32>, Option<&str>)> = q
            .frames
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.function.as_deref()))
            .collect();
        for want in [
            ("/src/Shop/Models/User.cs", Some(42), Some("Save")),
            ("/var/www/src/Models/Order.php", Some(17), Some("total")),
            ("/var/www/src/Kernel.php", Some(9), Some("boot")),
            ("lib/shop/cart.rb", Some(12), Some("add")),
            ("lib/shop/tax.rb", Some(3), Some("rate")),
            ("com/shop/Cart.kt", Some(7), Some("add")),
            ("shop/Order.scala", Some(5), Some("apply")),
            ("Cart.swift", Some(21), Some("extra")),
            ("MyApp/Basket.swift", Some(8), None),
        ] {
            assert!(got.contains(&want), "{want:?} not in {got:?}");
        }
        assert!(got.iter().all(|f| !f.0.ends_with("jv_print.c")), "{got:?}");
    }

    #[test]
    fn node_stack_traces_yield_frames() {
        let q = Query::parse(
            "TypeError: x is undefined\n    at Layer.handle (/srv/app/lib/router/layer.js:95:5)\n    at src/index.ts:3:1",
        );
        let got: Vec<_> = q
            .frames
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.function.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("/srv/app/lib/router/layer.js", Some(95), Some("handle")),
                ("src/index.ts", Some(3), None)
            ]
        );
        let q = Query::parse("at new Foo (a/b.mjs:1:2)\n  at Object.<anonymous> (a/c.js:3:4)");
        let got: Vec<_> = q.frames.iter().map(|f| f.function.as_deref()).collect();
        assert_eq!(got, [Some("Foo"), None]);
    }

    #[test]
    fn forge_permalinks_are_frames_with_line_ranges() {
        let q = Query::parse(
            "see [here](https://github.com/o/r/blob/92d6a05/src/_pytest/python.py#L274-L292) and \
             https://gitlab.com/o/r/-/blob/main/src/lib.rs#L9 or https://github.com/o/r/blob/main/README.md",
        );
        let got: Vec<_> = q
            .frames
            .iter()
            .map(|f| (f.path.as_str(), f.line, f.end_line))
            .collect();
        assert_eq!(
            got,
            [
                ("README.md", None, None),
                ("src/_pytest/python.py", Some(274), Some(292)),
                ("src/lib.rs", Some(9), None),
            ]
        );
        // The link's host, ref and hash are not words of the issue.
        assert!(!q.terms.contains_key("github"));
        assert!(!q.terms.contains_key("92d6a05"));
    }

    #[test]
    fn a_permalink_longer_than_any_word_is_still_a_frame() {
        let q = Query::parse(
            "see: https://github.com/FasterXML/jackson-core/blob/2.15/src/main/java/com/fasterxml/\
             jackson/core/filter/FilteringGeneratorDelegate.java#L314-L317",
        );
        assert_eq!(q.frames.len(), 1);
        assert_eq!(q.frames[0].line, Some(314));
        assert!(q.frames[0]
            .path
            .ends_with("filter/FilteringGeneratorDelegate.java"));
    }

    #[test]
    fn permalinks_that_climb_out_are_ignored() {
        let q = Query::parse("https://github.com/o/r/blob/main/../../etc/passwd#L1");
        assert!(q.frames.is_empty());
    }

    #[test]
    fn identifiers_are_kept_and_split_and_details_dropped() {
        let q = Query::parse(
            "`PairGrid.map_diag` fails\n<details>numpy 1.2 pandas 3</details>\nsee seaborn/axisgrid.py",
        );
        assert!(q.identifiers.contains("PairGrid.map_diag"));
        assert!(q.identifiers.contains("map_diag"));
        assert!(q.terms.contains_key("pair"));
        assert!(q.terms.contains_key("diag"));
        assert!(!q.terms.contains_key("numpy"));
        assert!(q.paths.contains("seaborn/axisgrid.py"));
    }

    #[test]
    fn paths_of_every_language_are_mentions() {
        let q = Query::parse(
            "add a switch in zrpc/internal/serverinterceptors/statinterceptor.go, like src/Foo.java \
             and lib/router/index.js:12; not in docs/guide.md",
        );
        let got: Vec<&str> = q.paths.iter().map(String::as_str).collect();
        assert_eq!(
            got,
            [
                "lib/router/index.js:12",
                "src/Foo.java",
                "zrpc/internal/serverinterceptors/statinterceptor.go"
            ]
        );
    }
}
