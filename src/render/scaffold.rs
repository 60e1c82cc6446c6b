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
