//! The allocator: glibc's malloc, tuned for a process that builds large
//! structures phase after phase, and mimalloc for a build of a very large
//! tree. Every setting lives here; off glibc each is a no-op.
//!
//! On the Linux tree (56k files) glibc's `malloc` and `free` were a large
//! share of resolution's, the store's and the search index's profiles, and
//! after resolution its arenas held 534 MB of free fragments between live
//! blocks that `malloc_trim` could not give back. mimalloc keeps blocks of
//! one size together and gives a page back once it empties: in one hour,
//! `init` took 3:19 against glibc's 4:40. But mimalloc keeps pages per
//! thread and size class, which a small run does not fill: as the process's
//! only allocator it took requests' `init` from 26 to 86 MB and the Python
//! standard library's from 75 to 163 MB. So a process starts on glibc and
//! turns to mimalloc only once it knows its input is large
//! ([`for_large_build`]).
//!
//! The switch is made in `malloc` itself, which this module defines for
//! the executable (glibc supports replacing it), rather than in a Rust
//! `#[global_allocator]`: the compiler turns a `malloc` followed by zeroing
//! into `calloc`, whose fresh pages are zero without being touched, and it
//! cannot see that through a global allocator. Without that, sled's
//! metrics touched 20 MB at every open of the store. Blocks made before the
//! switch stay glibc's: `free` asks mimalloc's page map whose block it is.

pub use imp::*;

/// A tree listing at least this many files is built with mimalloc (the
/// Linux tree lists 78k, its `kernel/`, `mm/` and `fs/` 4k, the Python
/// standard library 2k), unless `RPG_LARGE_TREE_FILES` sets another bound.
pub const LARGE_TREE_FILES: usize = 20_000;

/// Take new blocks from mimalloc from now on, for a build of a tree of
/// `files` files, if that reaches [`LARGE_TREE_FILES`] (or the bound
/// `RPG_LARGE_TREE_FILES` sets). Irreversible; harmless to call again.
pub fn for_large_build(files: usize) {
    let bound = std::env::var("RPG_LARGE_TREE_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LARGE_TREE_FILES);
    if files >= bound {
        use_mimalloc();
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod imp {
    use libmimalloc_sys as mi;
    use std::ffi::{c_int, c_void};
    use std::sync::atomic::{AtomicBool, Ordering};

    /// New blocks come from mimalloc. Set once, never cleared, and only
    /// after mimalloc has made its page map, which `by_mimalloc` reads.
    static LARGE: AtomicBool = AtomicBool::new(false);

    /// mimalloc's `mi_option_purge_delay` (`mimalloc.h`, v2 and v3): how
    /// long freed pages wait before they go back to the OS, 1000 ms unless set.
    pub(super) const PURGE_DELAY: mi::mi_option_t = 15;

    pub(super) fn use_mimalloc() {
        if uses_mimalloc() {
            return;
        }
        // Measured on the Linux tree, where the peak is set while the
        // store is written beside the graph: without transparent huge
        // pages it was 1,920 MB instead of 1,964 MB, and with freed pages
        // given back at once 1,886 MB (see `purge_lazily` for the cost).
        // SAFETY: prctl only sets a flag of this process; mi_option_set
        // only sets an option.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
            mi::mi_option_set(PURGE_DELAY, 0);
        }
        // SAFETY: a plain allocation and free; the first makes the page map.
        unsafe { mi::mi_free(mi::mi_malloc(1)) };
        LARGE.store(true, Ordering::Release);
    }

    /// Freed pages wait a second before they go back to the OS, as
    /// mimalloc does by default: for a phase that frees and allocates at
    /// a high rate and sets no peak. Giving each back at once made the
    /// Linux tree's search index take 64 s instead of 41–45 s.
    pub fn purge_lazily() {
        if uses_mimalloc() {
            // SAFETY: only sets an option.
            unsafe { mi::mi_option_set(PURGE_DELAY, 1000) };
        }
    }

    /// Whether new blocks come from mimalloc.
    pub fn uses_mimalloc() -> bool {
        LARGE.load(Ordering::Relaxed)
    }

    /// Whether mimalloc made the block at `p`. Before the switch no block
    /// is its, and its page map may not exist yet.
    fn by_mimalloc(p: *const c_void) -> bool {
        // Acquire: a thread that sees the switch sees the page map made
        // before it.
        // SAFETY: the page map answers for any address once it exists.
        LARGE.load(Ordering::Acquire) && unsafe { mi::mi_is_in_heap_region(p) }
    }

    extern "C" {
        fn __libc_malloc(size: usize) -> *mut c_void;
        fn __libc_calloc(n: usize, size: usize) -> *mut c_void;
        fn __libc_realloc(p: *mut c_void, size: usize) -> *mut c_void;
        fn __libc_free(p: *mut c_void);
        fn __libc_memalign(align: usize, size: usize) -> *mut c_void;
    }

    // The C allocation functions, for the whole executable (Rust's `System`
    // allocator, tree-sitter, sled, git). Never inlined: the compiler's
    // knowledge of `malloc` applies only to calls it still sees as such.

    /// # Safety
    /// As C's `malloc`.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn malloc(size: usize) -> *mut c_void {
        match uses_mimalloc() {
            // SAFETY: plain allocations.
            true => unsafe { mi::mi_malloc(size) },
            false => unsafe { __libc_malloc(size) },
        }
    }

    /// # Safety
    /// As C's `calloc`.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn calloc(n: usize, size: usize) -> *mut c_void {
        match uses_mimalloc() {
            // SAFETY: plain zeroed allocations.
            true => unsafe { mi::mi_calloc(n, size) },
            false => unsafe { __libc_calloc(n, size) },
        }
    }

    /// # Safety
    /// As C's `realloc`: `p` is null or a live block of this family.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn realloc(p: *mut c_void, size: usize) -> *mut c_void {
        if p.is_null() {
            // SAFETY: a plain allocation.
            return unsafe { malloc(size) };
        }
        // Each allocator resizes its own blocks: one glibc made before the
        // switch stays glibc's.
        match by_mimalloc(p) {
            // SAFETY: `p` is live and made by the allocator called.
            true => unsafe { mi::mi_realloc(p, size) },
            false => unsafe { __libc_realloc(p, size) },
        }
    }

    /// # Safety
    /// As C's `reallocarray`.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn reallocarray(p: *mut c_void, n: usize, size: usize) -> *mut c_void {
        match n.checked_mul(size) {
            // SAFETY: as `realloc`.
            Some(total) => unsafe { realloc(p, total) },
            None => {
                set_errno(libc::ENOMEM);
                std::ptr::null_mut()
            }
        }
    }

    /// # Safety
    /// As C's `free`: `p` is null or a live block of this family.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn free(p: *mut c_void) {
        match by_mimalloc(p) {
            // SAFETY: `p` is live and made by the allocator called.
            true => unsafe { mi::mi_free(p) },
            false => unsafe { __libc_free(p) },
        }
    }

    /// # Safety
    /// As C's `memalign`.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn memalign(align: usize, size: usize) -> *mut c_void {
        match uses_mimalloc() {
            // SAFETY: plain aligned allocations.
            true => unsafe { mi::mi_malloc_aligned(size, align) },
            false => unsafe { __libc_memalign(align, size) },
        }
    }

    /// # Safety
    /// As C's `aligned_alloc`.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn aligned_alloc(align: usize, size: usize) -> *mut c_void {
        // SAFETY: as `memalign`.
        unsafe { memalign(align, size) }
    }

    /// # Safety
    /// As C's `posix_memalign`: `out` is writable.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn posix_memalign(
        out: *mut *mut c_void,
        align: usize,
        size: usize,
    ) -> c_int {
        if !align.is_power_of_two() || !align.is_multiple_of(std::mem::size_of::<*mut c_void>()) {
            return libc::EINVAL;
        }
        // SAFETY: as `memalign`.
        let p = unsafe { memalign(align, size) };
        if p.is_null() && size != 0 {
            return libc::ENOMEM;
        }
        // SAFETY: the caller gives a writable `out`.
        unsafe { *out = p };
        0
    }

    /// # Safety
    /// As C's `valloc`.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn valloc(size: usize) -> *mut c_void {
        // SAFETY: as `memalign`.
        unsafe { memalign(page_size(), size) }
    }

    /// # Safety
    /// As C's `pvalloc`.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn pvalloc(size: usize) -> *mut c_void {
        let page = page_size();
        let Some(rounded) = size.checked_next_multiple_of(page) else {
            set_errno(libc::ENOMEM);
            return std::ptr::null_mut();
        };
        // SAFETY: as `memalign`.
        unsafe { memalign(page, rounded.max(page)) }
    }

    /// # Safety
    /// As C's `malloc_usable_size`: `p` is null or a live block.
    #[no_mangle]
    #[inline(never)]
    pub unsafe extern "C" fn malloc_usable_size(p: *mut c_void) -> usize {
        if by_mimalloc(p) {
            // SAFETY: `p` is a live mimalloc block.
            return unsafe { mi::mi_usable_size(p) };
        }
        // glibc does not export its own under another name.
        type UsableSize = unsafe extern "C" fn(*mut c_void) -> usize;
        static GLIBC: std::sync::OnceLock<Option<UsableSize>> = std::sync::OnceLock::new();
        let glibc = GLIBC.get_or_init(|| {
            // SAFETY: a lookup of the next definition of a C symbol, which
            // is glibc's function of this type, or null.
            unsafe {
                let f = libc::dlsym(libc::RTLD_NEXT, c"malloc_usable_size".as_ptr());
                (!f.is_null()).then(|| std::mem::transmute::<*mut c_void, UsableSize>(f))
            }
        });
        // SAFETY: glibc's `malloc_usable_size`, for a glibc block.
        glibc.map_or(0, |f| unsafe { f(p) })
    }

    fn page_size() -> usize {
        // SAFETY: sysconf only reads a system value.
        usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096)
    }

    fn set_errno(e: c_int) {
        // SAFETY: the calling thread's errno.
        unsafe { *libc::__errno_location() = e };
    }

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
        if uses_mimalloc() {
            // SAFETY: only releases memory mimalloc holds unused.
            unsafe { mi::mi_collect(true) }
        }
        // SAFETY: malloc_trim only releases memory glibc holds unused.
        unsafe {
            libc::malloc_trim(0);
        }
    }

    /// Bytes the allocators hold for live blocks: what glibc has handed
    /// out over all its arenas, and what mimalloc has committed.
    pub fn heap_in_use() -> usize {
        // SAFETY: mallinfo2 only reads glibc's counters.
        let m = unsafe { libc::mallinfo2() };
        // Blocks above the mmap threshold are counted apart from the rest.
        m.uordblks + m.hblkhd + mimalloc_committed()
    }

    fn mimalloc_committed() -> usize {
        if !uses_mimalloc() {
            return 0;
        }
        let mut commit = 0usize;
        // SAFETY: every out-parameter but one is null, which it allows.
        unsafe {
            mi::mi_process_info(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut commit,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
        }
        commit
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    pub(super) fn use_mimalloc() {}
    pub fn uses_mimalloc() -> bool {
        false
    }
    pub fn purge_lazily() {}
    pub fn limit_arenas(_n: usize) {}
    pub fn return_large_blocks() {}
    pub fn return_free_pages() {}
    pub fn heap_in_use() -> usize {
        0
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    #[test]
    fn the_purge_delay_option_is_the_one_mimalloc_names_so() {
        // mimalloc's own default for it: another option there would mean
        // the enum moved and `purge_lazily` sets something else.
        // SAFETY: only reads an option.
        assert_eq!(
            unsafe { libmimalloc_sys::mi_option_get(super::imp::PURGE_DELAY) },
            1000
        );
    }

    #[test]
    fn a_glibc_block_reports_its_size_through_glibc() {
        // SAFETY: a block from this module's `malloc`, sized and freed.
        unsafe {
            let p = super::imp::malloc(100);
            assert!(super::imp::malloc_usable_size(p) >= 100);
            super::imp::free(p);
        }
    }
}
