//! The `rpg` binary: the command line in `cli`, TLS set up once.

mod cli;

// mimalloc, not glibc's malloc: memory freed by the parse threads is
// reused by the single-threaded phases after them, instead of staying in
// the threads' arenas (an init's peak is its resolve and store phases).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // TLS for the GitHub client: ring, chosen once for the process, so no
    // second provider (aws-lc) is ever linked or picked.
    let _ = rustls::crypto::ring::default_provider().install_default();
    cli::run()
}
