//! The agent tools' answers as text: `fetch`, `explore`, `symbols`,
//! `search` and the hierarchy's outline.

use crate::text::one_line as l;
use std::fmt::Write;

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
