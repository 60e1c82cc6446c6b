//! Scaffolds to text: the terminal layout and GitHub-flavoured markdown.
//! Every name printed into markdown comes from the repository, so it is
//! put in a code span (no mentions, no HTML) and links are percent-encoded.

use crate::search::scaffold::{Scaffold, ScaffoldFile, Symbol};
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
    let mut s = f.imported_by.join(", ");
    if more > 0 {
        let _ = write!(s, " (+{more} more)");
    }
    Some(s)
}

/// The terminal scaffold.
pub fn text(s: &Scaffold) -> String {
    let mut out = String::new();
    if s.dirs.is_empty() {
        out.push_str("nothing in the graph matches this text\n");
        return out;
    }
    for d in &s.dirs {
        let _ = writeln!(out, "[DIR] {}/  (evidence {})", d.path, d.evidence);
        for f in &d.files {
            let _ = writeln!(
                out,
                "  [FILE] {}  (#{}, score {:.2}, {} matching symbols)",
                f.path, f.rank, f.score, f.evidence
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
                    a.symbol.qualname,
                    a.symbol.kind.as_str(),
                    span(&a.symbol)
                );
                if !a.invokes.is_empty() {
                    let _ = writeln!(out, "        invokes: {}", a.invokes.join(", "));
                }
                if !a.invoked_by.is_empty() {
                    let _ = writeln!(out, "        invoked-by: {}", a.invoked_by.join(", "));
                }
            }
            if !f.glimpse.is_empty() {
                out.push_str("    [GLIMPSE]\n");
            }
            for g in &f.glimpse {
                let _ = writeln!(out, "      {}  {} {}", g.qualname, g.kind.as_str(), span(g));
            }
        }
    }
    if !s.candidate_targets.is_empty() {
        out.push_str("[CANDIDATE_TARGETS]\n");
        for t in &s.candidate_targets {
            let _ = writeln!(out, "  {t}");
        }
    }
    if let Some(n) = &s.next {
        let _ = writeln!(out, "next: {n}");
    }
    out
}

/// Text as an inline code span that cannot break out of itself.
pub fn code(s: &str) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c == '`' || c.is_control() { '\'' } else { c })
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
                "  - {} — #{}, {} matching symbols",
                link(&f.path, link_base, &f.path, None),
                f.rank,
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
        let names: Vec<String> = s.candidate_targets.iter().map(|t| code(t)).collect();
        let _ = writeln!(out, "\n**Candidate targets:** {}", names.join(", "));
    }
    if let Some(n) = &s.next {
        let _ = writeln!(out, "\n**Next:** {}", code(n));
    }
    out
}
