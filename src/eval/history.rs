//! Cases from a repository's own fixes, for `rpg eval --history`: most
//! languages have no public issue set, but every history holds commits
//! whose message describes a problem and whose diff names the functions
//! that held it.
//!
//! A case is a fix commit: its message, with every name the answer would
//! give away masked, is the query; its changed files of the product (not
//! tests, examples or benchmarks) and the innermost functions it changed
//! there are the gold; its first parent is the commit the case is scored
//! at.

use super::{Case, EvalError};
use crate::config::Config;
use crate::exclude::Exclude;
use crate::git::{Repo, TreeChange};
use crate::graph::is_beside_product;
use crate::parse::{self, Kind, Lang, ParsedEntity};
use std::collections::{BTreeMap, BTreeSet};

/// Which commits to read.
#[derive(Debug, Clone, Copy)]
pub struct HistoryOptions {
    /// The most cases to make, newest first.
    pub limit: usize,
    /// Only commits made at or after this time (seconds since the epoch).
    pub since: Option<i64>,
}

/// A fix touching more files than this is a sweep, not one bug's mend.
const MAX_FILES: usize = 3;
/// Commits read looking for fixes, so a history with few costs bounded time.
const MAX_SCANNED: usize = 100_000;
/// Files larger than this are not parsed for gold.
const MAX_BYTES: usize = 1 << 20;
/// A message longer than this is cut: the query is the problem's
/// description, not a changelog.
const MAX_QUERY_CHARS: usize = 8_000;
/// A query needs this many words left after masking to describe a
/// problem: "fix typo" and "Fixes #2110 (#2156)" do not.
const MIN_WORDS: usize = 3;
/// What a masked name becomes.
pub const MASK: &str = "…";

/// Cases from the newest qualifying commits reachable from HEAD, newest
/// first, named after `name` (the repository's).
pub fn cases(repo: &Repo, name: &str, opts: HistoryOptions) -> Result<Vec<Case>, EvalError> {
    let Some(head) = repo.head_commit() else {
        return Ok(Vec::new());
    };
    let config = Config::default();
    let globs = config
        .excluder()
        .map_err(|e| EvalError::BadHistory(e.to_string()))?;
    let exclude = Exclude::globs(globs);
    let listed = repo.snapshot(head)?;
    let headers = parse::headers_as(crate::encode::header_lang(&exclude, &listed.files));
    let wanted = |p: &str| !exclude.is_match(p) && Lang::of(p, headers).is_some();
    let local = repo.local();
    let order = gix::revision::walk::Sorting::ByCommitTime(Default::default());
    let walk = local
        .rev_walk([head])
        .sorting(order)
        .all()
        .map_err(|e| EvalError::BadHistory(e.to_string()))?;
    let mut out = Vec::new();
    for info in walk.take(MAX_SCANNED) {
        let Ok(info) = info else { break };
        let Ok(commit) = local.find_commit(info.id) else {
            continue;
        };
        let time = commit.time().map(|t| t.seconds).unwrap_or(0);
        if opts.since.is_some_and(|s| time < s) {
            break;
        }
        let parents: Vec<gix::ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
        let [parent] = parents[..] else {
            continue; // a root or a merge
        };
        let message = String::from_utf8_lossy(commit.message_raw_sloppy()).into_owned();
        if !reads_as_fix(&message) {
            continue;
        }
        let fix = Fix {
            repo,
            parent,
            commit: info.id,
            headers,
            wanted: &wanted,
        };
        if let Some(case) = fix.case(name, &message) {
            out.push(case);
            if out.len() >= opts.limit {
                break;
            }
        }
    }
    Ok(out)
}

/// Words that mark a message as a fix, matched at a word's start.
const FIX_WORDS: &[&str] = &["fix", "bug", "crash", "wrong", "error", "regression"];

/// Whether a commit message reads as a fix: a fix word starts one of its
/// words (`fixes`, `Bugfix`, `crashed`, but not `prefix` or `debug`), or
/// it cites an issue as `#123`.
pub fn reads_as_fix(message: &str) -> bool {
    let lower = message.to_lowercase();
    let words = lower.split(|c: char| !c.is_alphanumeric());
    if words
        .filter(|w| !w.is_empty())
        .any(|w| FIX_WORDS.iter().any(|f| w.starts_with(f)))
    {
        return true;
    }
    lower
        .match_indices('#')
        .any(|(i, _)| lower[i + 1..].starts_with(|c: char| c.is_ascii_digit()))
}

/// One fix commit and what the case needs to read it.
struct Fix<'a> {
    repo: &'a Repo,
    parent: gix::ObjectId,
    commit: gix::ObjectId,
    headers: Lang,
    wanted: &'a dyn Fn(&str) -> bool,
}

impl Fix<'_> {
    /// The case, when the commit qualifies: 1 to 3 source files of the
    /// product changed (not tests, examples or benchmarks, which `locate`
    /// weighs down as an issue's fix rarely lands there), and at least
    /// one function in them changed.
    fn case(&self, name: &str, message: &str) -> Option<Case> {
        let (old_tree, new_tree) = (
            self.repo.tree_of(self.parent).ok()?,
            self.repo.tree_of(self.commit).ok()?,
        );
        let changes = self.repo.diff(old_tree, new_tree, self.wanted).ok()?;
        let source: Vec<&TreeChange> = changes
            .iter()
            .filter(|c| c.paths().any(|p| (self.wanted)(p) && !is_beside_product(p)))
            .collect();
        if source.is_empty() || source.len() > MAX_FILES {
            return None;
        }
        let mut gold_files = BTreeSet::new();
        let mut gold_functions = BTreeSet::new();
        let mut names = BTreeSet::new();
        for change in &source {
            for p in change.paths() {
                names.insert(stem(p).to_string());
            }
            let Some((before, after)) = self.sides(old_tree, change) else {
                continue;
            };
            gold_files.insert(before.path.clone());
            for e in changed_functions(&before.parsed, after.as_ref().map(|a| &a.parsed)) {
                // As the ranking names it: a redefinition is its function.
                let id = format!("{}:{}", before.path, e.qualname);
                gold_functions.insert(crate::search::strip_collisions(&id));
                names.extend(e.qualname.split(before.lang.separator()).map(bare));
            }
        }
        if gold_functions.is_empty() {
            return None;
        }
        let query = mask(message, &names);
        if words(&query) < MIN_WORDS {
            return None; // "fix typo" describes no problem
        }
        let short = &self.commit.to_string()[..12];
        Some(Case {
            id: format!("{name}@{short}"),
            repo: name.to_string(),
            base_commit: self.parent.to_string(),
            query,
            gold_files: gold_files.into_iter().collect(),
            gold_files_rs: Vec::new(),
            gold_functions: gold_functions.into_iter().collect(),
            fix_commit: Some(self.commit.to_string()),
            set: name.to_string(),
        })
    }

    /// A changed file as the parent held it, and as the commit left it
    /// (`None` when deleted); `None` when the parent did not have it.
    fn sides(&self, old_tree: gix::ObjectId, change: &TreeChange) -> Option<(Side, Option<Side>)> {
        let (before, after) = match change {
            TreeChange::Modified { path, blob } => (path, Some((path, *blob))),
            TreeChange::Renamed { from, to, blob } => (from, Some((to, *blob))),
            TreeChange::Deleted { path, .. } => (path, None),
            TreeChange::Added { .. } => return None,
        };
        let old_blob = self.repo.blob_at(old_tree, before).ok().flatten()?;
        let old = self.side(before, old_blob)?;
        let new = match after {
            Some((path, blob)) => Some(self.side(path, blob)?),
            None => None,
        };
        Some((old, new))
    }

    fn side(&self, path: &str, blob: gix::ObjectId) -> Option<Side> {
        let data = Repo::read_blob(&self.repo.local(), blob).ok()?;
        let text = String::from_utf8(data)
            .ok()
            .filter(|t| t.len() <= MAX_BYTES)?;
        let lang = Lang::of(path, self.headers)?;
        Some(Side {
            path: path.to_string(),
            lang,
            parsed: parse::parse(lang, path, &text),
        })
    }
}

/// One version of a changed file, parsed.
struct Side {
    path: String,
    lang: Lang,
    parsed: parse::ParsedFile,
}

/// The innermost functions and methods of `before` that `after` changed
/// or removed: a method's change changes its class too, but the method is
/// where the fix is.
pub fn changed_functions<'a>(
    before: &'a parse::ParsedFile,
    after: Option<&parse::ParsedFile>,
) -> Vec<&'a ParsedEntity> {
    let now: BTreeMap<&str, &str> = after
        .map(|a| {
            a.entities
                .iter()
                .map(|e| (e.qualname.as_str(), e.hash.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let es = &before.entities;
    let changed: Vec<usize> = (0..es.len())
        .filter(|&i| now.get(es[i].qualname.as_str()) != Some(&es[i].hash.as_str()))
        .collect();
    changed
        .iter()
        .filter(|&&i| matches!(es[i].kind, Kind::Function | Kind::Method))
        .filter(|&&i| !changed.iter().any(|&j| es[j].parent == Some(i)))
        .map(|&i| &es[i])
        .collect()
}

/// Words of a query: masks and numbers (`#2110`) say nothing of the
/// problem and are not counted.
fn words(query: &str) -> usize {
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().any(char::is_alphabetic))
        .count()
}

/// A file's name without its directories or extensions.
fn stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.split('.').next().unwrap_or(file)
}

/// A qualname segment without its overload suffix (`from_json#2`).
fn bare(segment: &str) -> String {
    segment.split('#').next().unwrap_or(segment).to_string()
}

/// How a name compares: case and underscores aside, so `parse_args`,
/// `parseArgs` and `PARSE_ARGS` are one name.
fn folded(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The message as a query: trailers and URLs dropped, and every
/// identifier that folds to one of `names` replaced by [`MASK`].
pub fn mask(message: &str, names: &BTreeSet<String>) -> String {
    let hidden: BTreeSet<String> = names
        .iter()
        .map(|n| folded(n))
        .filter(|n| !n.is_empty())
        .collect();
    let kept: Vec<&str> = message.lines().filter(|l| !is_trailer(l)).collect();
    let mut out = String::new();
    for (i, line) in kept.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let words: Vec<&str> = line.split(' ').filter(|w| !is_url(w)).collect();
        out.push_str(&mask_identifiers(&words.join(" "), &hidden));
    }
    let trimmed = out.trim();
    match trimmed.char_indices().nth(MAX_QUERY_CHARS) {
        Some((cut, _)) => trimmed[..cut].to_string(),
        None => trimmed.to_string(),
    }
}

/// `Signed-off-by: …`, `Co-authored-by: …` and kin.
fn is_trailer(line: &str) -> bool {
    let Some((key, _)) = line.split_once(':') else {
        return false;
    };
    let key = key.trim().to_ascii_lowercase();
    !key.contains(' ')
        && (key.ends_with("-by") || matches!(key.as_str(), "change-id" | "cc" | "bug" | "link"))
}

fn is_url(word: &str) -> bool {
    let w = word.trim_start_matches(['(', '<', '[']);
    w.starts_with("http://") || w.starts_with("https://") || w.starts_with("www.")
}

/// Each identifier run of `text` (letters, digits, `_`, not starting with
/// a digit) that folds into `hidden`, masked.
fn mask_identifiers(text: &str, hidden: &BTreeSet<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_alphanumeric() || c == '_') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..end];
        let starts_as_name = !word.starts_with(|c: char| c.is_ascii_digit());
        if starts_as_name && hidden.contains(&folded(word)) {
            out.push_str(MASK);
        } else {
            out.push_str(word);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_fix_is_named_by_its_words_or_an_issue_number() {
        for m in [
            "Fix off-by-one in the pager",
            "fixes #12",
            "Crashed when the file was empty",
            "Wrong colour for links",
            "handle the error from open()",
            "Regression since 2.0",
            "see #1234",
            "bug: lost a line",
        ] {
            assert!(reads_as_fix(m), "{m}");
        }
        for m in [
            "Add a pager",
            "Bump version to 2.0",
            "Prefix paths",
            "Debug output",
            "# heading",
        ] {
            assert!(!reads_as_fix(m), "{m}");
        }
    }

    #[test]
    fn masking_hides_every_spelling_of_a_name_and_keeps_the_rest() {
        let q = mask(
            "Fix parse_args dropping --color\n\nparseArgs() in cli.rs lost it; \
             Parser::PARSE_ARGS too. parse_argsx stays.",
            &names(&["parse_args", "Parser", "cli"]),
        );
        assert_eq!(
            q,
            "Fix … dropping --color\n\n…() in ….rs lost it; …::… too. parse_argsx stays."
        );
    }

    #[test]
    fn only_words_count_toward_a_describing_message() {
        assert_eq!(words("Fixes #2110 (#2156)"), 1);
        assert_eq!(words("Fix … rounding of …"), 3);
        assert_eq!(words("fix typo"), 2);
    }

    #[test]
    fn trailers_and_urls_are_not_part_of_the_query() {
        let q = mask(
            "Fix the pager\n\nSee https://example.com/issues/3 for more.\n\n\
             Signed-off-by: A <a@b.c>\nCo-authored-by: B <b@c.d>",
            &BTreeSet::new(),
        );
        assert_eq!(q, "Fix the pager\n\nSee for more.");
    }

    #[test]
    fn the_gold_is_the_innermost_changed_functions() {
        let before = parse::parse(
            Lang::Python,
            "m.py",
            "class A:\n    def f(self):\n        return 1\n    def g(self):\n        return 2\n\n\
             def h():\n    return 3\n\ndef gone():\n    return 4\n",
        );
        let after = parse::parse(
            Lang::Python,
            "m.py",
            "class A:\n    def f(self):\n        return 10\n    def g(self):\n        return 2\n\n\
             def h():\n    return 3\n",
        );
        let got: Vec<&str> = changed_functions(&before, Some(&after))
            .iter()
            .map(|e| e.qualname.as_str())
            .collect();
        assert_eq!(got, ["A.f", "gone"]);
        // A deleted file: every function in it.
        assert_eq!(changed_functions(&before, None).len(), 4);
    }
}
