//! rpg keeps a Repository Planning Graph of a git repository and answers
//! "for this issue, where in the code should I look?".
//!
//! Data flows one way: [`git`] → [`parse`] → [`graph`] (built by [`encode`],
//! with features from [`lift`]) → [`store`].

pub mod bot;
pub mod config;
pub mod embed;
pub mod encode;
pub mod eval;
pub mod evolve;
pub mod git;
pub mod graph;
pub mod hook;
pub mod lift;
pub mod mcp;
pub mod parse;
pub mod render;
pub mod search;
pub mod store;
pub mod text;

/// Phase timings on stderr when `RPG_TIMINGS` is set; for benchmarks.
pub fn timing(phase: &str, since: std::time::Instant) {
    if std::env::var_os("RPG_TIMINGS").is_some() {
        // Resident memory alongside, to see which phase sets the peak.
        let rss = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .map(|l| l.split_whitespace().nth(1).unwrap_or("?").to_string())
            })
            .unwrap_or_else(|| "?".into());
        eprintln!(
            "timing {phase}: {:.3}s (rss {rss} kB)",
            since.elapsed().as_secs_f64()
        );
    }
}
