//! Identifier and prose tokenisation shared by lifting, the hierarchy and
//! search. Splits `parsedate_to_datetime` into `parse date to datetime`.

use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::OnceLock;

/// Verbs that can lead a feature phrase, in their base form.
#[rustfmt::skip]
pub const VERBS: &[&str] = &[
    "accept", "access", "acquire", "add", "adjust", "aggregate", "align", "allocate", "allow",
    "analyze", "append", "apply", "assert", "assign", "attach", "authenticate", "build", "cache",
    "calculate", "call", "cancel", "cast", "check", "clean", "clear", "clip", "clone", "close",
    "coerce", "collect", "combine", "compare", "compile", "complete", "compose", "compress",
    "compute", "concat", "configure", "connect", "consume", "contain", "convert", "copy", "count",
    "create", "decode", "decompress", "deduplicate", "define", "delete", "deserialize", "detect",
    "determine", "disable", "dispatch", "display", "drop", "dump", "emit", "enable", "encode",
    "ensure", "enter", "escape", "evaluate", "execute", "exit", "expand", "expect", "export",
    "extend", "extract", "fetch", "fill", "filter", "find", "finish", "fix", "flatten", "flush",
    "format", "generate", "get", "group", "guess", "handle", "hash", "highlight", "ignore",
    "import", "index", "infer", "init", "initialize", "inject", "insert", "inspect", "install",
    "interpolate", "invoke", "is", "iterate", "join", "keep", "launch", "list", "load", "lock",
    "log", "lookup", "make", "manage", "map", "mark", "match", "merge", "migrate", "mock",
    "modify", "mount", "move", "normalize", "notify", "open", "order", "output", "override",
    "pack", "pad", "paint", "parse", "patch", "perform", "pick", "plot", "poll", "pop", "populate",
    "post", "prepare", "preprocess", "print", "process", "produce", "prompt", "propagate",
    "provide", "prune", "push", "put", "query", "quote", "raise", "read", "rebuild", "receive",
    "record", "redirect", "reduce", "refresh", "register", "reject", "release", "reload", "remove",
    "rename", "represent", "signal", "enumerate", "view", "advance", "construct", "describe",
    "render", "reorder", "repair", "replace", "report", "request", "require", "reset", "reshape",
    "resize", "resolve", "restore", "retrieve", "retry", "return", "reverse", "rewrite", "roll",
    "route", "run", "sample", "sanitize", "save", "scale", "scan", "search", "select", "send",
    "serialize", "serve", "set", "setup", "show", "shutdown", "skip", "slice", "sort", "split",
    "squeeze", "stack", "start", "stop", "store", "stream", "strip", "submit", "subscribe",
    "substitute", "sum", "swap", "sync", "tear", "teardown", "test", "throw", "tokenize", "track",
    "transform", "translate", "transpose", "traverse", "trigger", "trim", "truncate", "try",
    "unpack", "unregister", "unwrap", "update", "upgrade", "upload", "use", "validate", "verify",
    "visit", "wait", "walk", "warn", "watch", "wrap", "write", "yield",
];

/// Extra vocabulary for splitting run-together words like `parsedate`.
#[rustfmt::skip]
const NOUNS: &[&str] = &[
    "address", "adapter", "app", "arg", "args", "array", "attr", "attribute", "auth", "axis",
    "base", "batch", "block", "body", "bool", "buffer", "builder", "byte", "bytes", "cache",
    "case", "char", "child", "class", "client", "code", "color", "column", "command", "config",
    "conn", "connection", "content", "context", "cookie", "coord", "coords", "count", "data",
    "date", "datetime", "default", "dict", "dim", "dims", "dir", "directory", "doc", "domain",
    "encoding", "end", "entry", "env", "error", "event", "except", "exception", "facet", "field",
    "file", "files", "flag", "float", "font", "form", "frame", "func", "function", "grid",
    "handler", "header", "headers", "hook", "host", "html", "http", "id", "image", "info", "input",
    "int", "item", "items", "iter", "json", "key", "keys", "kind", "label", "layer", "legend",
    "length", "level", "line", "lines", "link", "list", "local", "loop", "main", "mark", "marker",
    "message", "meta", "method", "mode", "model", "module", "name", "names", "node", "num",
    "number", "object", "option", "options", "order", "output", "palette", "param", "params",
    "parser", "part", "path", "pattern", "plugin", "point", "pool", "port", "proxy", "query",
    "range", "reader", "record", "regex", "repr", "request", "response", "result", "root", "row",
    "rule", "scale", "schema", "scope", "secret", "server", "session", "size", "source", "spec",
    "start", "state", "status", "str", "stream", "string", "style", "sub", "table", "tag",
    "target", "task", "temp", "template", "text", "time", "timeout", "token", "tree", "tuple",
    "type", "unit", "url", "user", "util", "value", "values", "var", "variable", "version", "view",
    "width", "window", "word", "writer", "zone", "to", "from", "with", "for", "of", "in", "on",
    "by", "at", "as", "all", "any", "new", "old", "max", "min", "next", "prev", "first", "last",
];

/// Words that carry no meaning in a feature or a label.
#[rustfmt::skip]
pub const STOP: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "as", "is",
    "be", "this", "that", "it", "its", "from", "into", "self", "cls", "none", "true", "false",
    "if", "else", "not", "are", "was", "were", "will", "can", "should", "may", "which", "when",
    "then", "than", "also", "such", "given", "all", "any", "some", "each", "other", "only", "used",
    "use", "uses", "using", "return", "returns", "get", "set", "new", "impl", "fn", "def", "mod",
    "py", "rs", "provide", "represent", "init", "test", "tests", "src", "lib", "main",
];

fn vocab() -> &'static FxHashSet<&'static str> {
    static V: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    V.get_or_init(|| VERBS.iter().chain(NOUNS).copied().collect())
}

pub fn is_verb(w: &str) -> bool {
    static V: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    V.get_or_init(|| VERBS.iter().copied().collect())
        .contains(w)
}

pub fn is_stop(w: &str) -> bool {
    static S: OnceLock<FxHashSet<&'static str>> = OnceLock::new();
    S.get_or_init(|| STOP.iter().copied().collect()).contains(w)
}

/// Split an identifier on `_`, case changes and digits, lowercased, with
/// run-together vocabulary words separated.
pub fn split_identifier(ident: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_identifier_word(ident, &mut |w| out.push(w.to_string()));
    out
}

/// [`split_identifier`]'s words lent to `f` one by one, without a string
/// each: the search index splits every word of a tree's code, and a
/// string per word was a third of its time in `malloc` and `free`.
pub fn each_identifier_word(ident: &str, f: &mut impl FnMut(&str)) {
    for part in ident.split(|c: char| !c.is_alphanumeric()) {
        if part.is_empty() {
            continue;
        }
        match part.is_ascii() {
            true => split_ascii(part, &mut |w| emit(w, f)),
            false => {
                let mut raw = Vec::new();
                split_chars(part, &mut raw);
                raw.iter().for_each(|w| emit(w, f));
            }
        }
    }
}

/// One lowercase word, or its vocabulary pieces when it is run together.
fn emit(w: &str, f: &mut impl FnMut(&str)) {
    if w.len() < 7 || vocab().contains(w) {
        return f(w);
    }
    // The cut is copied out so that `f` runs with the memo released.
    let mut ends = [0u32; MAX_PIECES];
    let pieces = SEGMENTS.with(|memo| {
        let mut memo = memo.borrow_mut();
        let cut = segmented(&mut memo, w)?;
        let n = cut.len().min(MAX_PIECES);
        ends[..n].copy_from_slice(&cut[..n]);
        Some(cut.len())
    });
    match pieces {
        None => f(w),
        Some(n) if n > MAX_PIECES => segment(w).into_iter().flatten().for_each(|p| f(&p)),
        Some(n) => {
            let mut start = 0;
            for &end in &ends[..n] {
                f(&w[start..end as usize]);
                start = end as usize;
            }
        }
    }
}

/// How many words' segmentations a thread remembers: the same few
/// thousand long words (`unsigned`, `include`) recur in every file.
const SEGMENTS_KEPT: usize = 1 << 16;

/// Pieces copied out of the memo on the stack; a word cut into more is
/// cut again.
const MAX_PIECES: usize = 32;

/// End offsets of a segmented word's pieces; `None` when it stays whole.
type Cut = Option<Box<[u32]>>;

thread_local! {
    static SEGMENTS: std::cell::RefCell<FxHashMap<Box<str>, Cut>> = Default::default();
}

fn segmented<'m>(memo: &'m mut FxHashMap<Box<str>, Cut>, w: &str) -> Option<&'m [u32]> {
    if !memo.contains_key(w) {
        if memo.len() >= SEGMENTS_KEPT {
            memo.clear();
        }
        let cut = segment(w).map(|pieces| {
            let mut end = 0;
            pieces
                .iter()
                .map(|p| {
                    end += p.len() as u32;
                    end
                })
                .collect()
        });
        memo.insert(w.into(), cut);
    }
    memo.get(w)?.as_deref()
}

/// [`split_identifier`]'s boundaries within one part of letters and digits.
fn split_chars(part: &str, raw: &mut Vec<String>) {
    let chars: Vec<char> = part.chars().collect();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let prev = if i > 0 { Some(chars[i - 1]) } else { None };
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            None => false,
            Some(p) => {
                (p.is_lowercase() && c.is_uppercase())
                    || (p.is_alphabetic() != c.is_alphabetic())
                    // `import包路径` → `import 包路径`: issues written
                    // in Chinese or Japanese put no space between scripts.
                    || (is_ideographic(p) != is_ideographic(c))
                    // `HTTPServer` → `http server`
                    || (p.is_uppercase()
                        && c.is_uppercase()
                        && next.is_some_and(|n| n.is_lowercase()))
            }
        };
        if boundary && !cur.is_empty() {
            raw.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        raw.push(cur);
    }
}

/// [`split_chars`] for an ASCII part, on bytes, each piece lent to `f`
/// lowercased (borrowed when it already is).
fn split_ascii(part: &str, f: &mut impl FnMut(&str)) {
    let b = part.as_bytes();
    let mut lower = String::new();
    let mut piece = |s: &str| match s.bytes().any(|c| c.is_ascii_uppercase()) {
        false => f(s),
        true => {
            lower.clear();
            lower.push_str(s);
            lower.make_ascii_lowercase();
            f(&lower)
        }
    };
    let mut start = 0;
    for i in 1..b.len() {
        let (p, c) = (b[i - 1], b[i]);
        let boundary = (p.is_ascii_lowercase() && c.is_ascii_uppercase())
            || (p.is_ascii_alphabetic() != c.is_ascii_alphabetic())
            || (p.is_ascii_uppercase()
                && c.is_ascii_uppercase()
                && b.get(i + 1).is_some_and(u8::is_ascii_lowercase));
        if boundary {
            piece(&part[start..i]);
            start = i;
        }
    }
    piece(&part[start..]);
}

/// Characters of scripts written without spaces between words: CJK
/// ideographs, kana, Hangul, and their full-width forms.
fn is_ideographic(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF // kana
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF // ideographs
        | 0xAC00..=0xD7AF // Hangul
        | 0xFF00..=0xFFEF) // full-width forms
}

/// Split a run-together lowercase word into the fewest vocabulary words.
fn segment(word: &str) -> Option<Vec<String>> {
    let n = word.len();
    if !word.is_ascii() {
        return None;
    }
    // best[i] = fewest pieces covering word[..i]
    let mut best: Vec<Option<(usize, usize)>> = vec![None; n + 1];
    best[0] = Some((0, 0));
    for end in 1..=n {
        for start in 0..end {
            let Some((pieces, _)) = best[start] else {
                continue;
            };
            let piece = &word[start..end];
            if piece.len() >= 2 && vocab().contains(piece) {
                let cand = (pieces + 1, start);
                if best[end].is_none_or(|b| cand.0 < b.0) {
                    best[end] = Some(cand);
                }
            }
        }
    }
    let (pieces, _) = best[n]?;
    if pieces < 2 {
        return None;
    }
    let mut out = Vec::new();
    let mut end = n;
    while end > 0 {
        let (_, start) = best[end]?;
        out.push(word[start..end].to_string());
        end = start;
    }
    out.reverse();
    Some(out)
}

/// A lowercase English word's stem (`coloring` → `color`, `encodes` and
/// `encoding` → `encod`). Words with digits, capitals or other scripts are
/// their own stem.
pub fn stem(w: &str) -> std::borrow::Cow<'_, str> {
    static EN: std::sync::LazyLock<rust_stemmers::Stemmer> = std::sync::LazyLock::new(|| {
        rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)
    });
    if w.len() > 3 && w.bytes().all(|b| b.is_ascii_lowercase()) {
        EN.stem(w)
    } else {
        std::borrow::Cow::Borrowed(w)
    }
}

/// Lowercase word tokens of prose (letters and digits only).
pub fn prose_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_prose_word(text, &mut |w| out.push(w.to_string()));
    out
}

/// [`prose_words`] lent to `f` one by one.
pub fn each_prose_word(text: &str, f: &mut impl FnMut(&str)) {
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .for_each(|w| each_identifier_word(w, f))
}

/// Base form of a third-person or past verb (`returns` → `return`), when known.
pub fn base_verb(w: &str) -> Option<String> {
    if is_verb(w) {
        return Some(w.to_string());
    }
    let candidates = [
        w.strip_suffix("ies").map(|s| format!("{s}y")),
        w.strip_suffix("es").map(str::to_string),
        w.strip_suffix('s').map(str::to_string),
        w.strip_suffix("ed").map(str::to_string),
        w.strip_suffix('d').map(str::to_string),
        w.strip_suffix("ing").map(str::to_string),
        w.strip_suffix("ing").map(|s| format!("{s}e")),
    ];
    candidates.into_iter().flatten().find(|c| is_verb(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_snake_camel_and_run_together_words() {
        assert_eq!(
            split_identifier("parsedate_to_datetime"),
            ["parse", "date", "to", "datetime"]
        );
        assert_eq!(
            split_identifier("HTTPServerError"),
            ["http", "server", "error"]
        );
        assert_eq!(split_identifier("getMatches2"), ["get", "matches", "2"]);
        assert_eq!(split_identifier("__init__"), ["init"]);
        assert_eq!(
            split_identifier("goctl生成代码的import包路径错误"),
            ["goctl", "生成代码的", "import", "包路径错误"]
        );
    }

    #[test]
    fn a_run_together_word_splits_the_same_every_time_it_recurs() {
        // The second time comes from the thread's memo; a word of more
        // pieces than are copied out of it is cut again.
        let long = "parse".repeat(MAX_PIECES + 8);
        for _ in 0..2 {
            assert_eq!(split_identifier("parsedate"), ["parse", "date"]);
            assert_eq!(split_identifier("UnsignedLong"), ["unsigned", "long"]);
            assert_eq!(split_identifier(&long), vec!["parse"; MAX_PIECES + 8]);
        }
    }

    #[test]
    fn ascii_parts_split_as_any_other_part_does() {
        for part in [
            "a",
            "Z",
            "9",
            "getMatches2",
            "HTTPServerError",
            "ABC",
            "ab12cd",
            "X509v3Name",
            "ioURing",
            "aB",
            "Ab",
            "AB1c",
            "utf8ToUTF16",
            "__x",
            "IPv6Addr",
        ] {
            let (mut fast, mut general) = (Vec::<String>::new(), Vec::new());
            split_ascii(part, &mut |w| fast.push(w.to_string()));
            split_chars(part, &mut general);
            assert_eq!(fast, general, "{part}");
        }
    }

    #[test]
    fn recovers_base_verbs() {
        assert_eq!(base_verb("returns").as_deref(), Some("return"));
        assert_eq!(base_verb("parses").as_deref(), Some("parse"));
        assert_eq!(base_verb("applies").as_deref(), Some("apply"));
        assert_eq!(base_verb("widget"), None);
    }

    #[test]
    fn inflections_share_a_stem_and_identifiers_keep_theirs() {
        assert_eq!(stem("coloring"), stem("colors"));
        assert_eq!(stem("normalizing"), stem("normalize"));
        assert_eq!(stem("utf8"), "utf8");
        assert_eq!(stem("Config"), "Config");
    }
}
