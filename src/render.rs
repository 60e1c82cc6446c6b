//! Scaffolds to text: the terminal layout and GitHub-flavoured markdown.
//! Every name printed into markdown comes from the repository, so it is
//! put in a code span (no mentions, no HTML) and links are percent-encoded.

use crate::search::scaffold::{Scaffold, ScaffoldFile, Symbol};
// Every name and path shown as text is one line: a file named
// "x⏎next: rpg fetch y" cannot forge a line of the answer.
use crate::text::one_line as l;
use std::fmt::Write;

fn span(s: &Symbol) -> String {
    if s.start_line == s.end_line {
        format!("L{}", s.start_line)
    } else {
        format!("L{}-{}", s.start_line, s.end_line)
    }
}

fn importers(f: &ScaffoldFile) -> Option<String> {
    if f.imported_by.is_empty() {
        return None;
    }
    let more = f.imported_by_total - f.imported_by.len();
    let mut s = l(&f.imported_by.join(", ")).into_owned();
    if more > 0 {
        let _ = write!(s, " (+{more} more)");
    }
    Some(s)
}

/// A function's copies in other files, the first few by name: an
/// amalgamation can hold a function in many built files.
fn shown_copies(copies: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = copies[..copies.len().min(SHOWN)].join(", ");
    if copies.len() > SHOWN {
        let _ = write!(s, " (+{} more)", copies.len() - SHOWN);
    }
    s
}

/// The terminal scaffold.
pub fn text(s: &Scaffold) -> String {
    let mut out = String::new();
    if s.dirs.is_empty() {
        out.push_str("nothing in the graph matches this text\n");
        return out;
    }
    if !s.literals.is_empty() {
        let _ = writeln!(
            out,
            "[LITERAL] no indexed word matches; these files hold the text as written: {}",
            l(&s.literals.join(", "))
        );
    }
    for d in &s.dirs {
        let _ = writeln!(
            out,
            "[DIR] {}/  ({} matching symbols)",
            l(&d.path),
            d.evidence
        );
        for f in &d.files {
            let _ = writeln!(
                out,
                "  [FILE] {}  (#{}, score {:.2}, {} matching symbols)",
                l(&f.path),
                f.rank,
                f.score,
                f.evidence
            );
            if !f.expanded {
                continue;
            }
            if let Some(i) = importers(f) {
                let _ = writeln!(out, "    imports-by: {i}");
            }
            if !f.anchors.is_empty() {
                out.push_str("    [ANCHORS]\n");
            }
            for a in &f.anchors {
                let _ = writeln!(
                    out,
                    "      {}  {} {}",
                    l(&a.symbol.qualname),
                    a.symbol.kind.as_str(),
                    span(&a.symbol)
                );
                if !a.invokes.is_empty() {
                    let _ = writeln!(out, "        invokes: {}", l(&a.invokes.join(", ")));
                }
                if !a.invoked_by.is_empty() {
                    let _ = writeln!(out, "        invoked-by: {}", l(&a.invoked_by.join(", ")));
                }
                for line in &a.lines {
                    let _ = writeln!(out, "        {:>5}| {}", line.n, l(&line.text));
                }
            }
            if !f.glimpse.is_empty() {
                out.push_str("    [GLIMPSE]\n");
            }
            for g in &f.glimpse {
                let _ = writeln!(
                    out,
                    "      {}  {} {}",
                    l(&g.qualname),
                    g.kind.as_str(),
                    span(g)
                );
            }
        }
    }
    if !s.candidate_targets.is_empty() {
        out.push_str("[CANDIDATE_TARGETS]\n");
        for t in &s.candidate_targets {
            let _ = write!(out, "  {}", l(t));
            if let Some(c) = s.target_copies.get(t) {
                let _ = write!(out, "  (copies: {})", l(&shown_copies(c)));
            }
            out.push('\n');
            for line in s.target_lines.get(t).into_iter().flatten() {
                let _ = writeln!(out, "    {:>5}| {}", line.n, l(&line.text));
            }
        }
    }
    if let Some(n) = &s.next {
        let _ = writeln!(out, "next: {}", l(n));
    }
    out
}

/// Text as an inline code span that cannot break out of itself.
pub fn code(s: &str) -> String {
    // A backtick would end the span; a pipe would end a table cell before
    // the span does, leaving the rest of a hostile name live markdown.
    let clean: String = s
        .chars()
        .map(|c| match c {
            '`' => '\'',
            '|' => '¦',
            c if c.is_control() => '\'',
            c => c,
        })
        .collect();
    format!("`{clean}`")
}

fn encode_path(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn link(label: &str, base: Option<&str>, path: &str, lines: Option<(u32, u32)>) -> String {
    let label = code(label);
    match base {
        None => label,
        Some(base) => {
            let mut url = format!("{}/{}", base.trim_end_matches('/'), encode_path(path));
            if let Some((a, b)) = lines {
                let _ = write!(url, "#L{a}-L{b}");
            }
            format!("[{label}]({url})")
        }
    }
}

/// The markdown scaffold. `link_base` (e.g.
/// `https://github.com/o/r/blob/<commit>`) turns paths into links.
pub fn markdown(s: &Scaffold, link_base: Option<&str>) -> String {
    let mut out = String::new();
    if s.dirs.is_empty() {
        out.push_str("Nothing in the graph matches this text.\n");
        return out;
    }
    if !s.literals.is_empty() {
        let names: Vec<String> = s.literals.iter().map(|t| code(t)).collect();
        let _ = writeln!(
            out,
            "No indexed word matches; these files hold the text as written: {}\n",
            names.join(", ")
        );
    }
    for d in &s.dirs {
        let _ = writeln!(
            out,
            "- 📁 {} ({} matching symbols)",
            code(&format!("{}/", d.path)),
            d.evidence
        );
        for f in &d.files {
            let _ = write!(
                out,
                "  - {} — {}, {} matching symbols",
                link(&f.path, link_base, &f.path, None),
                ordinal(f.rank),
                f.evidence
            );
            if let Some(first) = f.imported_by.first().filter(|_| f.expanded) {
                let more = f.imported_by_total - 1;
                let _ = write!(out, "; imported by {}", code(first));
                if more > 0 {
                    let _ = write!(out, " and {more} more");
                }
            }
            out.push('\n');
            for a in &f.anchors {
                let sym = &a.symbol;
                let _ = write!(
                    out,
                    "    - **anchor** {} ({} {})",
                    link(
                        &sym.qualname,
                        link_base,
                        &f.path,
                        Some((sym.start_line, sym.end_line))
                    ),
                    sym.kind.as_str(),
                    span(sym)
                );
                if !a.invokes.is_empty() {
                    let names: Vec<String> = a.invokes.iter().map(|n| code(n)).collect();
                    let _ = write!(out, "; invokes {}", names.join(", "));
                }
                if !a.invoked_by.is_empty() {
                    let names: Vec<String> = a.invoked_by.iter().map(|n| code(n)).collect();
                    let _ = write!(out, "; invoked by {}", names.join(", "));
                }
                out.push('\n');
                for line in &a.lines {
                    let _ = writeln!(out, "      - L{}: {}", line.n, code(&line.text));
                }
            }
            if !f.glimpse.is_empty() {
                let names: Vec<String> = f
                    .glimpse
                    .iter()
                    .map(|g| {
                        format!(
                            "{} ({})",
                            link(
                                &g.qualname,
                                link_base,
                                &f.path,
                                Some((g.start_line, g.end_line))
                            ),
                            span(g)
                        )
                    })
                    .collect();
                let _ = writeln!(out, "    - also here: {}", names.join(", "));
            }
        }
    }
    if !s.candidate_targets.is_empty() {
        out.push_str("\n**Candidate targets:**\n");
        for t in &s.candidate_targets {
            let span = s.target_spans.get(t).map(|[a, b]| (*a, *b));
            let target = link(t, link_base, crate::graph::split_id(t).0, span);
            let _ = match s.target_copies.get(t) {
                Some(c) => writeln!(out, "- {target} (copies: {})", code(&shown_copies(c))),
                None => writeln!(out, "- {target}"),
            };
            for line in s.target_lines.get(t).into_iter().flatten() {
                let _ = writeln!(out, "  - L{}: {}", line.n, code(&line.text));
            }
        }
    }
    if let Some(n) = &s.next {
        let _ = writeln!(out, "\n**Next:** {}", code(n));
    }
    out
}

/// `rpg fetch` as text.
pub fn fetched(f: &crate::search::tools::Fetched) -> String {
    let mut out = String::new();
    if let Some(c) = &f.category {
        let _ = writeln!(out, "[CATEGORY] {}", l(&c.path));
        let _ = writeln!(out, "scopes: {}", l(&c.scopes.join(", ")));
        if !c.terms.is_empty() {
            let _ = writeln!(out, "terms: {}", l(&c.terms.join(", ")));
        }
        if !c.children.is_empty() {
            let _ = writeln!(out, "children: {}", l(&c.children.join(", ")));
        }
        if c.members.is_empty() {
            let _ = writeln!(
                out,
                "members: {} (`rpg tree` counts them by area)",
                c.members_total
            );
        } else {
            let _ = writeln!(out, "members ({}):", c.members_total);
        }
        for m in &c.members {
            let _ = writeln!(out, "  {}", l(m));
        }
        if !c.members.is_empty() && c.members_total > c.members.len() {
            let _ = writeln!(out, "  … {} more", c.members_total - c.members.len());
        }
    }
    if let Some(e) = &f.entity {
        let _ = writeln!(
            out,
            "[{}] {}  L{}-{}",
            e.kind.as_str().to_uppercase(),
            l(&e.id),
            e.start_line,
            e.end_line
        );
        if !e.signature.is_empty() {
            let _ = writeln!(out, "signature: {}", l(&e.signature));
        }
        if !e.doc.is_empty() {
            let _ = writeln!(out, "doc: {}", l(e.doc.lines().next().unwrap_or("")));
        }
        let _ = writeln!(out, "features: {}", l(&e.features.join("; ")));
        if let Some(leaf) = e.hierarchy.last() {
            let _ = writeln!(out, "hierarchy: {}", l(leaf));
        }
        if f.skeleton {
            out.push_str("source (skeleton; `--lines A-B` or `--around WORDS` for the rest):\n");
        } else {
            out.push_str("source:\n");
        }
        numbered(&mut out, &f.source);
        match f.next_line {
            Some(n) => {
                let next = format!("rpg fetch {} --lines {n}-{}", e.id, e.end_line);
                let _ = writeln!(out, "next: {}", l(&next));
            }
            None if f.truncated => out.push_str("… (output truncated)\n"),
            None => {}
        }
        if let Some(d) = &f.declared {
            let _ = writeln!(
                out,
                "declared: {}  L{}-{}",
                l(&d.path),
                d.start_line,
                d.end_line
            );
            numbered(&mut out, &d.source);
        }
    }
    out
}

/// Source lines under a right-aligned line number; an elision has none.
fn numbered(out: &mut String, lines: &[crate::search::tools::Line]) {
    let width = lines
        .iter()
        .map(|line| line.n)
        .max()
        .unwrap_or(1)
        .to_string()
        .len();
    for line in lines {
        if line.n == 0 {
            let _ = writeln!(out, "{:>width$}  {}", "", l(&line.text));
        } else {
            let _ = writeln!(out, "{:>width$}  {}", line.n, l(&line.text));
        }
    }
}

/// `rpg explore` as an indented tree.
pub fn explored(x: &crate::search::tools::Explored) -> String {
    use crate::search::tools::Direction;
    let mut out = String::new();
    let _ = writeln!(out, "{}", l(&x.root));
    if !x.counts.is_empty() {
        let counts: Vec<String> = x
            .counts
            .iter()
            .map(|c| format!("{} {}", edge_count_name(c.edge, c.direction), c.n))
            .collect();
        let _ = writeln!(out, "  ({})", counts.join(", "));
    }
    // Children in the order they were reached, under their parent.
    fn walk(out: &mut String, x: &crate::search::tools::Explored, node: &str, depth: usize) {
        for s in x
            .steps
            .iter()
            .filter(|s| s.from == node && s.depth == depth)
        {
            let arrow = match s.direction {
                Direction::Down => "->",
                _ => "<-",
            };
            let _ = writeln!(
                out,
                "{}{} {} {}",
                "  ".repeat(depth),
                arrow,
                s.edge.as_str(),
                l(&s.id)
            );
            walk(out, x, &s.id, depth + 1);
        }
    }
    if x.offset == 0 {
        walk(&mut out, x, &x.root, 1);
    } else {
        // A later page: the parents of its steps were on earlier ones.
        for s in &x.steps {
            let arrow = match s.direction {
                Direction::Down => "->",
                _ => "<-",
            };
            let _ = writeln!(
                out,
                "  [depth {}] {} {} {} {}",
                s.depth,
                l(&s.from),
                arrow,
                s.edge.as_str(),
                l(&s.id)
            );
        }
    }
    if let Some(n) = x.next_offset {
        let _ = writeln!(
            out,
            "… more steps: the same command with --offset {n}, or narrow --edges or --depth"
        );
    }
    out
}

/// What `n` edges of a kind, one way, are to a reader: `callers 3`.
fn edge_count_name(
    edge: crate::graph::EdgeKind,
    d: crate::search::tools::Direction,
) -> &'static str {
    use crate::graph::EdgeKind::*;
    let up = matches!(d, crate::search::tools::Direction::Up);
    match (edge, up) {
        (Invokes, true) => "callers",
        (Invokes, false) => "callees",
        (Inherits, true) => "subtypes",
        (Inherits, false) => "supertypes",
        (Imports, true) => "imported by",
        (Imports, false) => "imports",
        (Contains, true) => "inside",
        (Contains, false) => "contains",
    }
}

/// `rpg symbols` as a skeleton.
pub fn symbols(s: &crate::search::tools::Symbols) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}  ({} lines)", l(&s.path), s.lines);
    for i in &s.imports {
        let _ = writeln!(out, "  {}", l(i));
    }
    // The qualified name as the id spells it (`Gson.fromJson#3` for the
    // third overload): what `rpg fetch PATH:QUALNAME` takes.
    for sym in &s.symbols {
        let _ = write!(
            out,
            "{}  L{}-{}  {}",
            "  ".repeat(sym.depth + 1),
            sym.start_line,
            sym.end_line,
            l(&sym.qualname)
        );
        if !sym.signature.is_empty() {
            let _ = write!(out, "  {}", l(&sym.signature));
        }
        out.push('\n');
    }
    if let Some(n) = s.next_offset {
        let next = format!("rpg symbols {} --offset {n}", s.path);
        let _ = writeln!(out, "next: {}", l(&next));
    }
    out
}

/// `rpg search` as a list.
pub fn searched(s: &crate::search::tools::Searched) -> String {
    let mut out = String::new();
    for r in &s.results {
        let _ = writeln!(
            out,
            "{}  {} L{}-{}  [{}]",
            l(&r.id),
            r.kind.as_str(),
            r.start_line,
            r.end_line,
            l(&r.leaf)
        );
        if !r.features.is_empty() {
            let _ = writeln!(out, "    {}", l(&r.features.join("; ")));
        }
    }
    out
}

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

/// `rpg eval --cv repo` as text: per repository, file and function
/// Hit@5 under the shipped weights, a fit on every case, and weights
/// fitted without that repository; then Hit@5, Acc@5 and MRR with their
/// intervals per case set, shipped and left out; then the fitted weights.
pub fn cv_text(cv: &crate::eval::fit::CvReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} cases; Hit@5 (95% CI for the overall rows)",
        cv.cases
    );
    let _ = writeln!(
        out,
        "  {:<22} {:>4}  {:>13} {:>13}  {:>13} {:>13}  {:>13} {:>13}",
        "", "", "shipped", "", "fit in-sample", "", "left out", ""
    );
    let _ = writeln!(
        out,
        "  {:<22} {:>4}  {:>13} {:>13}  {:>13} {:>13}  {:>13} {:>13}",
        "repository", "n", "file", "function", "file", "function", "file", "function"
    );
    let cell = |t: &crate::eval::fit::Table, repo: &str, fun: bool| {
        let by = if fun { &t.function } else { &t.file };
        match by.get(repo) {
            Some(s) if repo == "all" => format!(
                "{:.3} {:.2}–{:.2}",
                s.mean.hit[2], s.ci95[0].hit[2], s.ci95[1].hit[2]
            ),
            Some(s) => format!("{:.3}", s.mean.hit[2]),
            None => "-".into(),
        }
    };
    for repo in all_first(&cv.shipped.file) {
        let n = cv.shipped.file.get(repo).map_or(0, |s| s.n);
        let _ = write!(out, "  {repo:<22} {n:>4}");
        for t in [&cv.shipped, &cv.in_sample, &cv.cross_validated] {
            let _ = write!(
                out,
                "  {:>13} {:>13}",
                cell(t, repo, false),
                cell(t, repo, true)
            );
        }
        let _ = writeln!(out);
    }
    out += &cv_sets_text(cv);
    let _ = writeln!(
        out,
        "\nweights fitted on every case:\n{}",
        serde_json::to_string_pretty(&cv.fitted).unwrap_or_default()
    );
    out
}

/// A table's row keys, the overall row first.
fn all_first<V>(rows: &std::collections::BTreeMap<String, V>) -> impl Iterator<Item = &str> {
    std::iter::once("all").chain(rows.keys().map(String::as_str).filter(|k| *k != "all"))
}

/// Per case set and level, shipped and left out: Hit@5, Acc@5 and MRR,
/// each with its 95% interval.
fn cv_sets_text(cv: &crate::eval::fit::CvReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nper case set (95% CI)\n  {:<22} {:>4}  {:<8}  {:<9}  {:<16} {:<16} {:<16}",
        "set", "n", "level", "weights", "hit@5", "acc@5", "mrr"
    );
    let with_ci = |mean: f64, lo: f64, hi: f64| format!("{mean:.3} {lo:.2}–{hi:.2}");
    for set in all_first(&cv.shipped_by_set.file) {
        for (level, fun) in [("file", false), ("function", true)] {
            for (name, t) in [
                ("shipped", &cv.shipped_by_set),
                ("left out", &cv.cross_validated_by_set),
            ] {
                let by = if fun { &t.function } else { &t.file };
                let Some(s) = by.get(set) else { continue };
                let (m, lo, hi) = (&s.mean, &s.ci95[0], &s.ci95[1]);
                let _ = writeln!(
                    out,
                    "  {:<22} {:>4}  {level:<8}  {name:<9}  {:<16} {:<16} {:<16}",
                    l(set),
                    s.n,
                    with_ci(m.hit[2], lo.hit[2], hi.hit[2]),
                    with_ci(m.acc[2], lo.acc[2], hi.acc[2]),
                    with_ci(m.mrr, lo.mrr, hi.mrr),
                );
            }
        }
    }
    out
}

/// One line per variant: Hit@5 under the shipped weights and left out,
/// and the left-out gain the full ranker has over each variant.
pub fn cv_ablation_text(rows: &[crate::eval::fit::CvVariant]) -> String {
    let mut out = String::new();
    let hit = |t: &crate::eval::fit::Table| {
        let get = |by: &std::collections::BTreeMap<String, crate::eval::Summary>| {
            by.get("all").map_or(0.0, |s| s.mean.hit[2])
        };
        (get(&t.file), get(&t.function))
    };
    let Some(full) = rows.first() else {
        return out;
    };
    let (full_file, full_fn) = hit(&full.report.cross_validated);
    let _ = writeln!(
        out,
        "{} cases; Hit@5 overall\n  {:<22}  {:>6} {:>8}  {:>6} {:>8}  {:>14}",
        full.report.cases, "", "shipped", "", "left out", "", "gain left out"
    );
    let _ = writeln!(
        out,
        "  {:<22}  {:>6} {:>8}  {:>6} {:>8}  {:>6} {:>8}",
        "variant", "file", "function", "file", "function", "file", "function"
    );
    for row in rows {
        let (sf, sg) = hit(&row.report.shipped);
        let (lf, lg) = hit(&row.report.cross_validated);
        let _ = writeln!(
            out,
            "  {:<22}  {sf:>6.3} {sg:>8.3}  {lf:>6.3} {lg:>8.3}  {:>+6.3} {:>+8.3}",
            row.name,
            full_file - lf,
            full_fn - lg
        );
    }
    out
}

pub fn eval_text(report: &crate::eval::Report, ablate: bool, misses: bool) -> String {
    let mut out = String::new();
    let full = &report.variants[0];
    let _ = writeln!(out, "{} cases", report.cases);
    if !report.errors.is_empty() {
        let _ = writeln!(
            out,
            "{} could not be run, and are left out of every figure:",
            report.errors.len()
        );
        for e in &report.errors {
            let _ = writeln!(out, "  {}: {}", l(&e.id), l(&e.why));
        }
    }
    for (level, table) in [("file", &full.file), ("function", &full.function)] {
        let _ = writeln!(out, "\n{level} level");
        let _ = write!(out, "  {:<22} {:>4}", "repository", "n");
        for k in crate::eval::KS {
            let _ = write!(out, " {:>7}", format!("hit@{k}"));
        }
        for k in crate::eval::KS {
            let _ = write!(out, " {:>7}", format!("acc@{k}"));
        }
        let _ = writeln!(
            out,
            " {:>9} {:>7}  {:>13} {:>13}",
            "recall@5", "mrr", "hit@5 95% CI", "mrr 95% CI"
        );
        // The overall row first, then each repository.
        let rows = table
            .get_key_value("all")
            .into_iter()
            .chain(table.iter().filter(|(k, _)| k.as_str() != "all"));
        // Plain BM25 on every case, where it was run, beside the ranker.
        let bm25 = report
            .variants
            .iter()
            .find(|v| v.name == crate::eval::BM25)
            .and_then(|v| {
                if level == "file" {
                    &v.file
                } else {
                    &v.function
                }
                .get("all")
            })
            .map(|s| ("plain BM25 (all)", s));
        for (repo, s) in rows.map(|(k, s)| (k.as_str(), s)).chain(bm25) {
            let _ = write!(out, "  {:<22} {:>4}", repo, s.n);
            for x in s.mean.hit.iter().chain(&s.mean.acc) {
                let _ = write!(out, " {x:>7.3}");
            }
            let [lo, hi] = &s.ci95;
            let _ = writeln!(
                out,
                " {:>9.3} {:>7.3}  {:>13} {:>13}",
                s.mean.recall[2],
                s.mean.mrr,
                format!("{:.2}–{:.2}", lo.hit[2], hi.hit[2]),
                format!("{:.2}–{:.2}", lo.mrr, hi.mrr)
            );
        }
    }
    let l = &full.latency_ms;
    let _ = writeln!(
        out,
        "\nranking latency (store open): p50 {:.1} ms, p90 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        l.p50, l.p90, l.p95, l.max
    );
    if ablate {
        let _ = writeln!(out, "\nablation (all cases; gain = full minus variant)");
        let _ = writeln!(
            out,
            "  {:<22} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "variant", "file@5", "gain", "func@5", "gain", "func mrr"
        );
        let get = |v: &crate::eval::VariantReport| {
            let f = v.file.get("all").map(|s| s.mean.hit[2]).unwrap_or(0.0);
            let g = v.function.get("all").map(|s| s.mean.hit[2]).unwrap_or(0.0);
            let m = v.function.get("all").map(|s| s.mean.mrr).unwrap_or(0.0);
            (f, g, m)
        };
        let (f0, g0, _) = get(full);
        for v in &report.variants {
            let (f, g, m) = get(v);
            let _ = writeln!(
                out,
                "  {:<22} {:>10.3} {:>+10.3} {:>10.3} {:>+10.3} {:>10.3}",
                v.name,
                f,
                f0 - f,
                g,
                g0 - g,
                m
            );
        }
    }
    if misses {
        for v in &report.variants {
            for c in &v.cases {
                for (level, s) in [("file", &c.file), ("function", &c.function)] {
                    let Some(s) = s.as_ref().filter(|s| s.hit[2] == 0.0) else {
                        continue;
                    };
                    // MRR is the reciprocal of the first gold rank.
                    let rank = match s.mrr {
                        0.0 => "none".to_string(),
                        m => format!("{:.0}", 1.0 / m),
                    };
                    let _ = writeln!(
                        out,
                        "miss [{}] {level} {} (first gold at rank {rank})",
                        v.name, c.id
                    );
                }
            }
        }
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

/// `1st`, `2nd`, `3rd`, `11th`: a rank GitHub will not turn into a link to
/// an issue, as it does `#1`.
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Said while `.rpg/` is not in HEAD: the graph is this clone's alone.
pub const COMMIT_HINT: &str = "note: .rpg/ is not committed; `git add .rpg && git commit` lets clones and CI use this graph without rebuilding it";

/// The hierarchy as an indented outline: label, entity count, directories.
pub fn tree(t: &crate::search::tools::Tree) -> String {
    let mut out = String::new();
    let top = t.nodes.iter().map(|n| n.depth).min().unwrap_or(1);
    for n in &t.nodes {
        let label = n.path.rsplit('/').next().unwrap_or(&n.path);
        let _ = writeln!(
            out,
            "{}{}  ({} {}; {})",
            "  ".repeat(n.depth - top),
            l(label),
            n.entities,
            if n.entities == 1 {
                "entity"
            } else {
                "entities"
            },
            l(&n.scopes.join(", "))
        );
    }
    out
}

#[cfg(test)]
mod ordinal_tests {
    #[test]
    fn ranks_read_as_words() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101]
            .map(super::ordinal)
            .into();
        assert_eq!(
            got,
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]
        );
    }
}
