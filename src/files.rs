//! Files a repository may have planted. Everything under `.rpg/` arrives
//! with a checkout, so any name there can be a link to the user's
//! `~/.bashrc`, a FIFO, a directory, or a gigabyte of zeros. Every read and
//! write rpg makes under `.rpg/` goes through here:
//! - nothing follows a symbolic link, at the last component or above it
//!   (`.rpg/` and the directories rpg keeps in it are checked to be real);
//! - every read has a cap, and a FIFO or device is refused, never waited on;
//! - every new file is created exclusively under a random name, then
//!   renamed into place, so a planted link is replaced, never written through.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

/// Read caps, by what is read: each well above anything rpg writes or a
/// person would, far below what would hurt.
pub mod cap {
    /// `.rpg/config.toml` and the user's own config.
    pub const CONFIG: u64 = 1 << 20;
    /// `.rpg/graph.jsonl`: the whole Linux tree's is about 200 MB.
    pub const SNAPSHOT: u64 = 1 << 30;
    /// `.rpg/pending`, `.rpg/.gitignore`, `.rpg/.gitattributes`.
    pub const SMALL: u64 = 64 << 10;
}

/// A path under `.rpg/` that is not what rpg keeps there. The message
/// names the file, since some callers show it on its own.
fn refused(path: &Path, what: &str) -> io::Error {
    let name = path
        .file_name()
        .unwrap_or(path.as_os_str())
        .to_string_lossy();
    io::Error::other(format!(
        "{name} {what}; rpg never follows or reads one there (a commit may have planted it), remove it"
    ))
}

/// Open `path` for reading without following a link and without waiting
/// on a FIFO; `None` when nothing is there. Only a regular file opens.
pub(crate) fn open_regular(path: &Path) -> io::Result<Option<File>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refused(path, "is a symbolic link"));
    }
    let file = match options.open(path) {
        Ok(f) => f,
        Err(e) if is_missing(&e) => return Ok(None),
        Err(e) if is_link_refusal(&e) => return Err(refused(path, "is a symbolic link")),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Err(refused(path, "is not a regular file"));
    }
    Ok(Some(file))
}

/// Nothing is there: not found, or a parent that is not a directory.
fn is_missing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// `O_NOFOLLOW` on a link fails with `ELOOP`.
fn is_link_refusal(e: &io::Error) -> bool {
    #[cfg(unix)]
    return e.raw_os_error() == Some(libc::ELOOP);
    #[cfg(not(unix))]
    return false;
}

/// The bytes of the regular file at `path`, or `None` when there is none;
/// an error when it is a link, not a regular file, or over `cap` bytes.
pub fn read_capped(path: &Path, cap: u64) -> io::Result<Option<Vec<u8>>> {
    let Some(file) = open_regular(path)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(cap));
    }
    Ok(Some(bytes))
}

/// A regular file's bytes, mapped rather than copied (see [`map_capped`]).
pub struct Mapped(Bytes);

enum Bytes {
    #[cfg_attr(not(unix), allow(dead_code))]
    Map(memmap2::Mmap),
    /// Where nothing can be mapped: an empty file, or Windows.
    Copy(Vec<u8>),
}

impl Default for Mapped {
    fn default() -> Mapped {
        Mapped(Bytes::Copy(Vec::new()))
    }
}

impl std::ops::Deref for Mapped {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Bytes::Map(m) => m,
            Bytes::Copy(v) => v,
        }
    }
}

/// [`read_capped`] for a large file read once from end to end: its pages
/// come from the page cache as they are read, where a copy faults in and
/// fills fresh memory (274 MB for the Linux tree's snapshot, a third of
/// `update --snapshot`). rpg replaces such files by renaming a new one
/// into place, as git does, so a mapping keeps the bytes it opened; only a
/// writer that cut the same file short while it was read would end the
/// process, before anything is written. Windows will not replace a mapped
/// file, so there the bytes are copied.
pub fn map_capped(path: &Path, cap: u64) -> io::Result<Option<Mapped>> {
    #[cfg(not(unix))]
    return Ok(read_capped(path, cap)?.map(|v| Mapped(Bytes::Copy(v))));
    #[cfg(unix)]
    {
        let Some(file) = open_regular(path)? else {
            return Ok(None);
        };
        let len = file.metadata()?.len();
        if len > cap {
            return Err(too_large(cap));
        }
        if len == 0 {
            return Ok(Some(Mapped::default()));
        }
        // SAFETY: a read-only, private mapping of a regular file, which rpg
        // never truncates in place (see above).
        let map = unsafe { memmap2::MmapOptions::new().len(len as usize).map(&file)? };
        Ok(Some(Mapped(Bytes::Map(map))))
    }
}

fn too_large(cap: u64) -> io::Error {
    io::Error::other(format!(
        "larger than {} KB, more than rpg ever reads there",
        cap >> 10
    ))
}

/// [`read_capped`] as UTF-8 text.
pub fn read_text_capped(path: &Path, cap: u64) -> io::Result<Option<String>> {
    match read_capped(path, cap)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| io::Error::other("not UTF-8")),
    }
}

/// Whether a regular file (not a link) is at `path`.
pub fn is_regular(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// What is at `path`, looked at without following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Missing,
    Dir,
    Other,
}

/// A directory rpg keeps: `Missing`, a real `Dir`, or an error for a link
/// or anything else in its place.
pub fn real_dir(path: &Path) -> io::Result<Entry> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Entry::Missing),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_symlink() => Err(refused(path, "is a symbolic link")),
        Ok(m) if m.is_dir() => Ok(Entry::Dir),
        Ok(_) => Err(refused(path, "is not a directory")),
    }
}

/// Make `path` a real directory (its parent must be one already).
pub fn ensure_dir(path: &Path) -> io::Result<()> {
    if real_dir(path)? == Entry::Dir {
        return Ok(());
    }
    match std::fs::create_dir(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => real_dir(path).map(|_| ()),
        other => other,
    }
}

/// A directory a store lives in (sled's, the vectors', the lift cache's):
/// real, and with no link among its entries or theirs, since sled opens
/// and writes the files it finds there by name.
pub fn check_store_dir(path: &Path) -> io::Result<Entry> {
    let entry = real_dir(path)?;
    if entry == Entry::Dir {
        for e in std::fs::read_dir(path)? {
            let e = e?;
            let t = e.file_type()?;
            if t.is_symlink() {
                return Err(refused(&e.path(), "is a symbolic link"));
            }
            if t.is_dir() {
                for inner in std::fs::read_dir(e.path())? {
                    let inner = inner?;
                    if inner.file_type()?.is_symlink() {
                        return Err(refused(&inner.path(), "is a symbolic link"));
                    }
                }
            }
        }
    }
    Ok(entry)
}

/// Replace `path` with what `write` writes, or leave it as it was: a new
/// file created exclusively (`O_EXCL`, a random name beside `path`, so no
/// planted name or link is ever opened), synced, then renamed over `path`.
/// A link at `path` is replaced, not followed.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    // `<name>.tmp.` matches the `*.tmp.*` line of `.rpg/.gitignore`.
    let prefix = format!("{}.tmp.", name.unwrap_or_default());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // Readable as any file the user writes (the umask applies), not 0600:
    // these are committed files.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let tmp = builder.tempfile_in(dir)?;
    let mut out = io::BufWriter::with_capacity(1 << 20, tmp);
    write(&mut out)?;
    let tmp = out.into_inner().map_err(|e| e.into_error())?;
    tmp.as_file().sync_all()?;
    crate::failpoint("snapshot-before-rename");
    tmp.persist(path).map_err(|e| e.error)?;
    // Persist the rename itself; best effort where directories can't be opened.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Append `line` and a newline to `path`, creating it, never through a
/// link and never to anything but a regular file.
pub fn append_line(path: &Path, line: &str) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    #[cfg(not(unix))]
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refused(path, "is a symbolic link"));
    }
    let mut f = options.open(path).map_err(|e| match is_link_refusal(&e) {
        true => refused(path, "is a symbolic link"),
        false => e,
    })?;
    if !f.metadata()?.is_file() {
        return Err(refused(path, "is not a regular file"));
    }
    f.write_all(format!("{line}\n").as_bytes())
}

/// A handle to lock `dir` by: on Unix the directory itself, opened
/// without following a link, so no lock file exists for a commit to plant
/// a link or a directory in place of; elsewhere a `lock` file inside it.
pub fn lock_handle(dir: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(dir)
            .map_err(|e| match is_link_refusal(&e) {
                true => refused(dir, "is a symbolic link"),
                false => e,
            })
    }
    #[cfg(not(unix))]
    {
        let path = dir.join("lock");
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
            return Err(refused(&path, "is not a regular file"));
        }
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
    }
}

/// Remove the regular file at `path`, if one is there; a link or anything
/// else is left alone.
pub fn remove_regular(path: &Path) {
    if is_regular(path) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn links_are_neither_read_nor_written_through() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, "precious\n").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(read_capped(&link, 100).is_err());
        assert!(map_capped(&link, 100).is_err());
        assert!(append_line(&link, "payload").is_err());
        write_atomic(&link, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
        assert!(!std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let dir_link = d.path().join("dirlink");
        std::os::unix::fs::symlink(d.path(), &dir_link).unwrap();
        assert!(real_dir(&dir_link).is_err());
        assert!(ensure_dir(&dir_link).is_err());
    }

    #[test]
    fn reads_stop_at_their_cap_and_missing_files_are_none() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        assert_eq!(read_capped(&p, 10).unwrap(), None);
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read_capped(&p, 10).unwrap().unwrap().len(), 10);
        assert!(read_capped(&p, 9).is_err());
        assert!(read_capped(d.path(), 9).is_err(), "a directory is refused");
    }

    #[test]
    fn a_mapped_read_keeps_the_caps_and_refusals_of_a_copied_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        assert!(map_capped(&p, 10).unwrap().is_none());
        std::fs::write(&p, "").unwrap();
        assert_eq!(&*map_capped(&p, 10).unwrap().unwrap(), b"");
        std::fs::write(&p, "0123456789").unwrap();
        let mapped = map_capped(&p, 10).unwrap().unwrap();
        // Replaced by a rename, as rpg and git replace files: the mapping
        // keeps the bytes it opened.
        write_atomic(&p, |w| w.write_all(b"new")).unwrap();
        assert_eq!(&*mapped, b"0123456789");
        assert!(map_capped(&p, 2).is_err());
        assert!(map_capped(d.path(), 9).is_err(), "a directory is refused");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_not_waited_on() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fifo");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(read_capped(&p, 10).is_err());
        assert!(map_capped(&p, 10).is_err());
        assert!(append_line(&p, "x").is_err());
    }
}
