//! What the other commands report: `init`, `update`, `status`, the hooks,
//! `embed`, and the model's cost.

use crate::text::one_line as l;
use std::fmt::Write;

/// What a model was asked and what it cost, in one line.
pub fn model_stats_text(s: &crate::lift::llm::LiftStats) -> String {
    if let Some(e) = &s.estimate {
        return format!(
            "model {}: would send at most {} requests, about {} prompt tokens and at most {} completion tokens ({} entities and {} files already cached)\n",
            s.model, e.requests, e.prompt_tokens, e.completion_tokens, s.entities_cached, s.files_cached
        );
    }
    format!(
        "model {}: {} requests ({} retries), {} prompt + {} completion tokens; entities: {} lifted, {} cached, {} offline; files: {} summarised, {} cached, {} offline{}\n",
        s.model,
        s.requests,
        s.retries,
        s.prompt_tokens,
        s.completion_tokens,
        s.entities_lifted,
        s.entities_cached,
        s.entities_offline,
        s.files_summarized,
        s.files_cached,
        s.files_offline,
        if s.budget_stopped { "; stopped at the token budget" } else { "" }
    )
}

/// Entity, edge and category counts, three lines.
pub fn counts_text(c: &crate::store::StoredCounts) -> String {
    let macros = match c.macros {
        0 => String::new(),
        n => format!(", {n} macros"),
    };
    let edges: Vec<String> = ["contains", "imports", "invokes", "inherits"]
        .iter()
        .map(|k| format!("{} {}", c.edges.get(*k).copied().unwrap_or(0), k))
        .collect();
    format!(
        "entities: {} files, {} classes, {} functions, {} methods{macros}\nedges: {}\nhierarchy: {} categories\n",
        c.files,
        c.classes,
        c.functions,
        c.methods,
        edges.join(", "),
        c.categories
    )
}

/// One update's report: the move, then each event with where it went.
pub fn update_text(r: &crate::evolve::UpdateReport) -> String {
    use crate::text::short_id;
    let mut out = String::new();
    if r.from == r.to {
        let _ = writeln!(out, "already at {}", short_id(&r.to));
        return out;
    }
    let _ = writeln!(
        out,
        "updated {} -> {}: {} files changed, {} more re-resolved{}, {} entities lifted",
        short_id(&r.from),
        short_id(&r.to),
        r.files_changed,
        r.extra_files_resolved,
        if r.full_resolve { " (all files)" } else { "" },
        r.entities_lifted
    );
    for e in &r.events {
        let kind = serde_json::to_value(e.event).ok();
        let kind = kind.as_ref().and_then(|v| v.as_str()).unwrap_or("?");
        let detail = match (&e.from, &e.leaf, e.drift) {
            (Some(from), _, None) => format!("  (from {})", l(from)),
            (Some(from), Some(leaf), Some(d)) => {
                format!("  (drift {d:.2}: {} -> {})", l(from), l(leaf))
            }
            (None, Some(leaf), Some(d)) => format!("  (drift {d:.2}, stays in {})", l(leaf)),
            (None, Some(leaf), None) => format!("  [{}]", l(leaf)),
            _ => String::new(),
        };
        let _ = writeln!(out, "  {kind:<8} {}{detail}", l(&e.id));
    }
    if !r.unreadable.is_empty() {
        out.push_str(&unreadable_text(&r.unreadable));
    }
    if !r.categories_created.is_empty() || !r.categories_pruned.is_empty() {
        let _ = writeln!(
            out,
            "categories: {} created, {} pruned",
            r.categories_created.len(),
            r.categories_pruned.len()
        );
    }
    out
}

/// What `init` indexed, counted and skipped.
pub fn init_text(
    rev: &str,
    commit: &str,
    report: &crate::encode::EncodeReport,
    counts: &crate::store::StoredCounts,
) -> String {
    let mut out = format!(
        "indexed {rev} at {}: {} files, {} lines\n",
        crate::text::short_id(commit),
        report.files_indexed,
        report.lines
    );
    out.push_str(&counts_text(counts));
    let s = &report.skipped;
    if s.total() > 0 {
        let _ = writeln!(
            out,
            "skipped {} files: {} excluded, {} generated, {} too large, {} binary, {} not UTF-8, {} links{}",
            s.total(),
            s.excluded,
            s.generated,
            s.too_large,
            s.binary,
            s.not_utf8,
            s.links,
            match s.unsafe_names {
                0 => String::new(),
                n => format!(", {n} unsafe names"),
            }
        );
    }
    if !report.unreadable.is_empty() {
        out.push_str(&unreadable_text(&report.unreadable));
    }
    if report.files_with_syntax_errors > 0 {
        let _ = writeln!(
            out,
            "{} files had syntax errors; indexed what could be recovered",
            report.files_with_syntax_errors
        );
    }
    out
}

/// Files whose blob git could not give, named (the first few).
pub fn unreadable_text(paths: &[String]) -> String {
    let shown: Vec<String> = paths.iter().take(5).map(|p| l(p).into_owned()).collect();
    let more = match paths.len().saturating_sub(shown.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "{} file{} could not be read from git (a missing object): {}{more}; the rest is indexed, and `rpg update` tries them again\n",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        shown.join(", ")
    )
}

/// Where the graph stands against HEAD: what `status` prints.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Status {
    pub commit: String,
    pub head: Option<String>,
    /// Commits between the graph's commit and HEAD; null when unknown.
    pub behind: Option<usize>,
    /// Commits the graph is past HEAD (a checkout of an older commit).
    pub ahead: Option<usize>,
    pub up_to_date: bool,
    pub lifter: String,
    pub counts: crate::store::StoredCounts,
    /// What adopting the committed snapshot found, when the graph came
    /// from adopting one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adopted: Option<crate::store::Adoption>,
    /// Files left out because git could not give their blob.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

pub fn status_text(s: &Status) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let state = match (s.up_to_date, s.behind, s.ahead) {
        (true, _, _) => "up to date with HEAD".to_string(),
        (false, Some(n), _) if n > 0 => {
            format!("{n} commit{} behind HEAD; run `rpg update`", plural(n))
        }
        (false, _, Some(n)) if n > 0 => format!(
            "{n} commit{} ahead of HEAD (an older commit is checked out); run `rpg update`",
            plural(n)
        ),
        _ => "not an ancestor of HEAD (history rewritten or shallow); run `rpg update`".to_string(),
    };
    let adopted = match s.adopted {
        Some(a) => format!(
            "snapshot adopted: {} records confirmed by git, {} dropped\n",
            a.confirmed, a.dropped
        ),
        None => String::new(),
    };
    let unreadable = match s.unreadable.is_empty() {
        true => String::new(),
        false => unreadable_text(&s.unreadable),
    };
    format!(
        "graph at {}: {state}\n{}lifter: {}\n{adopted}{unreadable}",
        crate::text::short_id(&s.commit),
        counts_text(&s.counts),
        s.lifter
    )
}

/// Which hooks are installed, whether git runs them, and whether they can
/// find rpg: what `hook status` prints.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HookStatus {
    pub hooks_dir: String,
    pub core_hooks_path: bool,
    pub shared: bool,
    pub bypassed: bool,
    #[serde(skip)]
    pub bypassed_dir: String,
    pub missing_binary: bool,
    pub merge_driver: bool,
    pub hooks: Vec<crate::hook::HookState>,
}

pub fn hook_status_text(s: &HookStatus) -> String {
    let configured = if s.core_hooks_path {
        " (core.hooksPath)"
    } else {
        ""
    };
    let mut out = format!("hooks dir: {}{configured}\n", s.hooks_dir);
    for h in &s.hooks {
        let state = match (h.installed, h.chained) {
            (true, true) => "installed, chained to the previous hook",
            (true, false) => "installed",
            (false, _) => "not installed",
        };
        let _ = writeln!(out, "  {:<14} {state}", h.hook);
    }
    let driver = if s.merge_driver {
        "installed"
    } else {
        "not installed"
    };
    let _ = writeln!(out, "  {:<14} {driver}", "merge driver");
    if s.bypassed {
        let _ = writeln!(
            out,
            "warning: rpg hooks in {} are bypassed because core.hooksPath is set; run `rpg hook install` again",
            s.bypassed_dir
        );
    }
    if s.missing_binary {
        out.push_str("warning: the hooks find no rpg (not on PATH, and the binary that installed them is gone); the graph is not kept current. Put rpg on PATH or run `rpg hook install` again\n");
    }
    out
}

/// What `embed` did.
pub fn embed_text(r: &crate::embed::vectors::SyncReport) -> String {
    format!(
        "embedded {} texts ({} entities in {} changed files, {} cached) with model {} in {:.1}s\n",
        r.embedded, r.entities, r.files_changed, r.cached, r.model, r.seconds
    )
}

/// What `embed --install` did.
pub fn embed_installed_text(r: &crate::embed::install::Installed) -> String {
    let what = if r.downloaded {
        "installed"
    } else {
        "already installed, checked,"
    };
    format!(
        "the embedding runtime and all-MiniLM-L6-v2 (int8) are {what} in {}; `rpg embed` in a repository computes its vectors\n",
        r.dir.display()
    )
}

/// The hooks `hook install` wrote.
pub fn installed_text(done: &Vec<crate::hook::Installed>) -> String {
    let mut out = String::new();
    for h in done {
        let chained = if h.chained {
            " (chained to the hook that was there)"
        } else {
            ""
        };
        let _ = writeln!(out, "installed {}{chained}", h.path.display());
    }
    out
}

/// The hooks `hook uninstall` removed from `dir`.
pub fn removed_text(removed: &[String], dir: &std::path::Path) -> String {
    match removed.is_empty() {
        true => format!("no rpg hooks in {}\n", dir.display()),
        false => format!("removed {} from {}\n", removed.join(", "), dir.display()),
    }
}

/// Whether `update --snapshot` wrote the file or kept it.
pub fn snapshot_written_text(asked: bool, kept: bool) -> String {
    match (asked, kept) {
        (_, true) => "kept .rpg/graph.jsonl: since its commit only .rpg/ changed\n".into(),
        (true, false) => "wrote .rpg/graph.jsonl\n".into(),
        (false, false) => String::new(),
    }
}

/// Said while `.rpg/` is not in HEAD: the graph is this clone's alone.
pub const COMMIT_HINT: &str = "note: .rpg/ is not committed; `git add .rpg && git commit` lets clones and CI use this graph without rebuilding it";
