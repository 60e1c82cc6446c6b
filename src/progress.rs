//! Progress of long work (parsing, lifting, embedding), reported to
//! whoever watches: a terminal bar at the CLI, nothing in tests and evals.

/// Receives progress; called from worker threads.
pub trait Progress: Sync {
    fn start(&self, _what: &str, _total: u64) {}
    fn inc(&self, _n: u64) {}
    fn finish(&self) {}
}

/// Progress that goes nowhere.
pub struct Silent;
impl Progress for Silent {}
