//! rpg keeps a Repository Planning Graph of a git repository and answers
//! "for this issue, where in the code should I look?".
//!
//! Data flows one way: [`git`] → [`parse`] → [`graph`] (built by [`encode`],
//! with features from [`lift`]) → [`store`].

pub mod config;
pub mod encode;
pub mod evolve;
pub mod git;
pub mod graph;
pub mod hook;
pub mod lift;
pub mod parse;
pub mod search;
pub mod store;

/// Phase timings on stderr when `RPG_TIMINGS` is set; for benchmarks.
pub fn timing(phase: &str, since: std::time::Instant) {
    if std::env::var_os("RPG_TIMINGS").is_some() {
        eprintln!("timing {phase}: {:.3}s", since.elapsed().as_secs_f64());
    }
}
