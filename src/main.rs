//! The `rpg` binary: the command line in `cli`, TLS set up once.

mod cli;

// glibc's malloc keeps a fragmented heap per thread arena: init's peak
// resident memory was a quarter higher under it, and allocation a fifth
// of its time.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // TLS for the GitHub client: ring, chosen once for the process, so no
    // second provider (aws-lc) is ever linked or picked.
    let _ = rustls::crypto::ring::default_provider().install_default();
    cli::run()
}
