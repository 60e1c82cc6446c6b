//! Which of a tree's files are source, read and parsed on every core.

use super::{is_manifest, EncodeError, Outcome, Skipped, SourceFile};
use crate::exclude::Exclude;
use crate::git::{GitError, Repo, TreeFile};
use crate::graph::resolve::Facts;
use crate::parse::{self, Lang};
use crate::progress::Progress;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

/// How many threads parse: one a core, at most eight.
pub fn parse_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(8)
}

/// How the tree's `.h` files are read, judged from the files not excluded.
pub fn header_lang(exclude: &Exclude, files: &[TreeFile]) -> Option<Lang> {
    parse::header_lang(
        files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| !exclude.is_match(p)),
    )
}

/// Parse every indexable file of `files`, in parallel, as `read` says.
pub fn parse_files(
    repo: &Repo,
    files: &[TreeFile],
    read: &Read,
    progress: &dyn Progress,
) -> Result<Parsed, EncodeError> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::with_capacity(files.len()));
    let error: Mutex<Option<GitError>> = Mutex::new(None);
    let threads = parse_threads();
    progress.start("parsing", files.len() as u64);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let local = repo.local();
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(f) = files.get(i) else { break };
                    match classify(&local, f, read) {
                        Ok(o) => mine.push((i, o)),
                        Err(e) => {
                            *error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                            break;
                        }
                    }
                    progress.inc(1);
                }
                results
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(mine);
            });
        }
    });
    progress.finish();
    if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e.into());
    }
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, _)| *i);
    let mut out = Parsed::default();
    for (i, o) in results {
        match o {
            Outcome::Parsed(p) => out.sources.push(p),
            Outcome::Skip(count) => count(&mut out.skipped),
            Outcome::Other => out.other += 1,
            Outcome::Unreadable => {
                out.skipped.unreadable += 1;
                out.unreadable.push(files[i].path.clone());
            }
        }
    }
    Ok(out)
}

/// What [`parse_files`] made of a tree's files.
#[derive(Default)]
pub struct Parsed {
    pub sources: Vec<SourceFile>,
    pub skipped: Skipped,
    /// Files in languages rpg does not read.
    pub other: usize,
    /// Files whose blob could not be read, in tree order.
    pub unreadable: Vec<String>,
}

/// How tracked files are filtered and read.
pub struct Read<'a> {
    pub exclude: &'a Exclude,
    pub max_bytes: u64,
    /// The language `.h` files are parsed as.
    pub headers: Lang,
    pub keep_text: bool,
}

/// Read, filter and parse one tracked file.
pub fn classify(repo: &gix::Repository, f: &TreeFile, read: &Read) -> Result<Outcome, GitError> {
    let Some(lang) = Lang::of(&f.path, read.headers) else {
        return Ok(Outcome::Other);
    };
    if read.exclude.is_match(&f.path) {
        return Ok(Outcome::Skip(|s| s.excluded += 1));
    }
    let Ok(data) = Repo::read_blob(repo, f.blob) else {
        return Ok(Outcome::Unreadable);
    };
    if data.len() as u64 > read.max_bytes {
        return Ok(Outcome::Skip(|s| s.too_large += 1));
    }
    if data[..data.len().min(8000)].contains(&0) {
        return Ok(Outcome::Skip(|s| s.binary += 1));
    }
    let Ok(text) = String::from_utf8(data) else {
        return Ok(Outcome::Skip(|s| s.not_utf8 += 1));
    };
    if is_generated(&text) || (lang.is_js() && is_minified(&text)) {
        return Ok(Outcome::Skip(|s| s.generated += 1));
    }
    Ok(Outcome::Parsed(SourceFile {
        path: f.path.clone(),
        blob: f.blob,
        lang,
        facts: Arc::new(Facts::new(
            f.path.clone(),
            lang,
            parse::parse(lang, &f.path, &text),
        )),
        text: read.keep_text.then(|| Arc::from(text)),
    }))
}

/// Generated files announce themselves in their first lines. A
/// single-file copy of a library (SQLite's and Catch2's amalgamations,
/// Catch2's older `single_include/catch.hpp`), or a scanner or parser
/// that flex or Bison wrote from a grammar people edit instead, says so in
/// its banner, a few lines further down.
fn is_generated(text: &str) -> bool {
    let said = |l: &str| {
        l.contains("@generated")
            || l.contains("DO NOT EDIT")
            || l.contains("Code generated by")
            // webpack's bundle prelude
            || l.starts_with("/******/")
    };
    let merged = |l: &str| {
        let l = l.trim_start();
        let comment = l.starts_with('/') && l[1..].starts_with(['/', '*']) || l.starts_with('*');
        comment
            && [
                "is an amalgamation",
                "merged from multiple",
                "generated by flex",
                "made by GNU Bison",
            ]
            .iter()
            .any(|s| l.contains(s))
    };
    text.lines().take(5).any(said) || text.lines().take(20).any(merged)
}

/// Minified JavaScript, as linguist tells it: lines of more than 110
/// characters on average. Nobody edits it; its source sits beside it.
fn is_minified(text: &str) -> bool {
    let lines = text.lines().count().max(1);
    text.len() / lines > 110
}

/// The blobs indexing `files` reads: code, attributes and manifests (what
/// a partial clone must fetch first).
pub fn wanted_blobs(files: &[TreeFile]) -> Vec<gix::ObjectId> {
    files
        .iter()
        .filter(|f| {
            Lang::from_path(&f.path).is_some()
                || crate::exclude::is_attributes(&f.path)
                || is_manifest(&f.path)
        })
        .map(|f| f.blob)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::is_generated;

    #[test]
    fn a_single_file_copy_announced_in_its_banner_is_generated() {
        let banner = "//              Copyright Catch2 Authors\n//\n//\n//\n\n// SPDX-License-Identifier: BSL-1.0\n\n//  Catch v3.5.3\n//  Generated: 2024-03-01 22:05:55.031514\n//  ----------------------------------------------------------\n//  This file is an amalgamation of multiple different files.\n//  You probably shouldn't edit it directly.\n";
        assert!(is_generated(banner));
        let old = "/*\n *  Catch v2.13.0\n *  Generated: 2020-07-12 20:07:49.015950\n *  ----------------------------------------------------------\n *  This file has been merged from multiple headers. Please don't edit it directly\n */\n";
        assert!(is_generated(old));
        let flex = "#line 1 \"src/lexer.c\"\n\n#line 3 \"src/lexer.c\"\n\n#define  YY_INT_ALIGNED short int\n\n/* A lexical scanner generated by flex */\n";
        assert!(is_generated(flex));
        assert!(is_generated(
            "/* A Bison parser, made by GNU Bison 3.8.2.  */\n"
        ));
        // Code that talks about amalgamation is not announcing itself.
        let code = "int f() {\n  return amalgamate(\"this file is an amalgamation\");\n}\n";
        assert!(!is_generated(code));
    }
}
