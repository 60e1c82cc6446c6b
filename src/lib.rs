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
pub mod exclude;
pub mod files;
pub mod git;
pub mod graph;
pub mod hook;
pub mod lift;
pub mod malloc;
pub mod mcp;
pub mod parse;
pub mod progress;
pub mod render;
pub mod search;
pub mod store;
#[cfg(test)]
mod testing;
pub mod text;

/// A line on stderr (a notice, a warning, progress). What it says often
/// quotes the repository (a path, a config value, an error about either),
/// so control characters are escaped: a notice stays one line, and a
/// terminal or a log that shows it is never steered.
#[macro_export]
macro_rules! notice {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::text::one_line(&format!($($arg)*)))
    };
}

/// Test-only: in a debug build, `RPG_FAILPOINT=<name>` makes the process
/// die at the named point, without unwinding or flushing, as a kill there
/// would. The kill tests use it to prove a crash at each point of a write
/// leaves the previous graph whole. Release builds compile it away.
#[inline]
pub fn failpoint(name: &str) {
    #[cfg(debug_assertions)]
    if std::env::var_os("RPG_FAILPOINT").is_some_and(|v| v == name) {
        std::process::abort();
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}

/// Test-only: in a debug build, with `RPG_PAUSEPOINT=<name>` and
/// `RPG_PAUSE_FILE=<path>`, the process writes that file at the named
/// point and waits (30 s at most) until it is removed, so a test can act
/// while it stands there: run a reader while `rpg embed` computes.
#[inline]
pub fn pausepoint(name: &str) {
    #[cfg(debug_assertions)]
    if std::env::var_os("RPG_PAUSEPOINT").is_some_and(|v| v == name) {
        if let Some(file) = std::env::var_os("RPG_PAUSE_FILE") {
            let file = std::path::PathBuf::from(file);
            if std::fs::write(&file, name).is_ok() {
                let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
                while file.exists() && std::time::Instant::now() < until {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            }
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}

/// Phase timings on stderr when `RPG_TIMINGS` is set; for benchmarks.
pub fn timing(phase: &str, since: std::time::Instant) {
    if std::env::var_os("RPG_TIMINGS").is_some() {
        // Resident memory alongside, to see which phase sets the peak, and
        // the heap in use, to tell live data from what malloc keeps.
        let rss = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .map(|l| l.split_whitespace().nth(1).unwrap_or("?").to_string())
            })
            .unwrap_or_else(|| "?".into());
        eprintln!(
            "timing {phase}: {:.3}s (rss {rss} kB, heap {} MB{})",
            since.elapsed().as_secs_f64(),
            malloc::heap_in_use() >> 20,
            if malloc::uses_mimalloc() {
                ", mimalloc"
            } else {
                ""
            }
        );
    }
}
