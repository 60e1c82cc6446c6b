//! `rpg eval` as text: its tables, the ablation and the cross-validation.

use crate::text::one_line as l;
use std::fmt::Write;

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
