//! The `rpg` binary: the command line in `cli`, TLS set up once.

mod cli;

fn main() -> std::process::ExitCode {
    rpg::malloc::limit_arenas(rpg::encode::parse_threads());
    // TLS for the GitHub client: ring, chosen once for the process, so no
    // second provider (aws-lc) is ever linked or picked.
    let _ = rustls::crypto::ring::default_provider().install_default();
    cli::run()
}
