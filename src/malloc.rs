//! glibc's malloc, tuned for a process that builds large structures phase
//! after phase. Every setting lives here; off glibc each is a no-op.

pub use imp::*;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod imp {
    /// glibc gives each thread an arena of its own, so memory freed by one
    /// phase's threads stayed resident beside the next phase's: at most
    /// `n` arenas (one a parse thread). Call before other threads start.
    pub fn limit_arenas(n: usize) {
        let n = i32::try_from(n).unwrap_or(i32::MAX);
        // SAFETY: mallopt only sets an allocator parameter.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, n);
        }
    }

    /// For a command that builds large structures phase after phase
    /// (init): blocks of 128 KiB and more come from the OS and go back
    /// when freed, instead of glibc raising that threshold as they are
    /// freed and keeping them. With [`limit_arenas`], an init of the
    /// Python standard library (327k lines) peaked at 143 MB of RSS
    /// instead of 196 MB. Not for queries: it made `locate` 4% slower.
    pub fn return_large_blocks() {
        // SAFETY: mallopt only sets an allocator parameter.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        }
    }

    /// Hand the pages of freed memory back to the OS, for when a phase
    /// has dropped what it built and the next one allocates differently.
    pub fn return_free_pages() {
        // SAFETY: malloc_trim only releases memory malloc holds unused.
        unsafe {
            libc::malloc_trim(0);
        }
    }

    /// Bytes malloc has handed out and not had back, over all arenas.
    pub fn heap_in_use() -> usize {
        // SAFETY: mallinfo2 only reads glibc's counters.
        let m = unsafe { libc::mallinfo2() };
        // Blocks above the mmap threshold are counted apart from the rest.
        m.uordblks + m.hblkhd
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    pub fn limit_arenas(_n: usize) {}
    pub fn return_large_blocks() {}
    pub fn return_free_pages() {}
    pub fn heap_in_use() -> usize {
        0
    }
}
