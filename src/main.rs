//! The `rpg` binary: the command line in `cli`, TLS set up once.

mod cli;

fn main() -> std::process::ExitCode {
    tune_allocator();
    // TLS for the GitHub client: ring, chosen once for the process, so no
    // second provider (aws-lc) is ever linked or picked.
    let _ = rustls::crypto::ring::default_provider().install_default();
    cli::run()
}

/// glibc's malloc gives each thread an arena of its own, so memory freed
/// by one phase's threads stayed resident beside the next phase's. One
/// arena per parse thread; see also [`return_large_blocks`].
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    let arenas = i32::try_from(rpg::encode::parse_threads()).unwrap_or(8);
    // SAFETY: mallopt only sets an allocator parameter; it is called
    // before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}

/// For a command that builds large structures phase after phase (init):
/// blocks of 128 KiB and more come from the OS and go back when freed,
/// instead of glibc raising that threshold as they are freed and keeping
/// them. With the arenas above, an init of the Python standard library
/// (327k lines) peaks at 143 MB of RSS instead of 196 MB. Not for queries:
/// it made `locate` 4% slower.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn return_large_blocks() {
    // SAFETY: mallopt only sets an allocator parameter.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn return_large_blocks() {}

/// Hand the pages of freed memory back to the OS, for when a phase has
/// dropped what it built and the next one allocates differently.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn return_free_pages() {
    // SAFETY: malloc_trim only releases memory malloc holds unused.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn return_free_pages() {}
