mod cli;

// tree-sitter allocates a node per token and frees whole trees per file;
// mimalloc handles that churn markedly faster than glibc malloc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::run()
}
