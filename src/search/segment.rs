//! The posting lists of a first build, in one immutable file beside the
//! store. Written into sled, a tree's postings were rewritten as leaves
//! split and large values moved to blob files: on the whole Linux tree the
//! index took longer than parsing, and the store grew past 5 GB. Here each
//! list is written once, in key order, and found through an `fst` map
//! from key to offset; updates after the first build go to sled beside it
//! (see `index`).
//!
//! Layout: `MAGIC`, then each list as its byte count and CRC-32
//! (little-endian `u32`s) and its postcard bytes, then the map, then a trailer of the map's
//! offset and length (`u64` each) and `MAGIC` again. The index's meta
//! records the file's length and the map's checksum ([`Seal`]): a file
//! that does not match is never read, and the index is rebuilt.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, Write};

const MAGIC: &[u8; 8] = b"rpgseg01";
const TRAILER: u64 = 24;
/// A list's byte count and checksum.
const LIST_HEAD: u64 = 8;
/// The key map is read whole at every open; a larger one is not rpg's.
const MAX_MAP: u64 = 1 << 30;

/// What the index's meta knows of the segment it was built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seal {
    len: u64,
    checksum: u32,
}

impl Seal {
    /// Whether `file` is as long as the sealed segment: the check that
    /// costs nothing, for every sync.
    pub fn fits(&self, file: &File) -> bool {
        file.metadata().is_ok_and(|m| m.len() == self.len)
    }
}

/// Why a segment cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SegmentError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("not the one the index was built with")]
    Mismatch,
    #[error("damaged {0}")]
    Damaged(&'static str),
}

/// Writes sorted keys and their lists; [`Writer::finish`] seals the file.
pub struct Writer<'w> {
    out: &'w mut dyn Write,
    offset: u64,
    map: fst::MapBuilder<Vec<u8>>,
}

impl<'w> Writer<'w> {
    pub fn new(out: &'w mut dyn Write) -> io::Result<Writer<'w>> {
        out.write_all(MAGIC)?;
        Ok(Writer {
            out,
            offset: MAGIC.len() as u64,
            map: fst::MapBuilder::memory(),
        })
    }

    /// Add `key`'s list; keys must come in strictly increasing byte order.
    pub fn add(&mut self, key: &[u8], list: &[u8]) -> io::Result<()> {
        let n =
            u32::try_from(list.len()).map_err(|_| io::Error::other("posting list over 4 GB"))?;
        self.map
            .insert(key, self.offset)
            .map_err(io::Error::other)?;
        self.out.write_all(&n.to_le_bytes())?;
        self.out.write_all(&crc32fast::hash(list).to_le_bytes())?;
        self.out.write_all(list)?;
        self.offset += LIST_HEAD + list.len() as u64;
        Ok(())
    }

    pub fn finish(self) -> io::Result<Seal> {
        let map = self.map.into_inner().map_err(io::Error::other)?;
        let checksum = stored_checksum(&map);
        self.out.write_all(&map)?;
        self.out.write_all(&self.offset.to_le_bytes())?;
        self.out.write_all(&(map.len() as u64).to_le_bytes())?;
        self.out.write_all(MAGIC)?;
        Ok(Seal {
            len: self.offset + map.len() as u64 + TRAILER,
            checksum,
        })
    }
}

/// An open segment: the key map in memory, the lists read on demand.
pub struct Segment {
    file: File,
    map: fst::Map<Vec<u8>>,
    /// Where the lists end and the map begins.
    lists_end: u64,
}

impl Segment {
    /// Open `file` as the segment `seal` describes, checking its length,
    /// its frame and its map's checksum before anything is read from it.
    pub fn open(file: File, seal: &Seal) -> Result<Segment, SegmentError> {
        if file.metadata()?.len() != seal.len || seal.len < MAGIC.len() as u64 + TRAILER {
            return Err(SegmentError::Mismatch);
        }
        let mut trailer = [0u8; TRAILER as usize];
        read_exact_at(&file, &mut trailer, seal.len - TRAILER)?;
        let word = |i: usize| u64::from_le_bytes(trailer[i * 8..i * 8 + 8].try_into().unwrap());
        let (map_at, map_len) = (word(0), word(1));
        if &trailer[16..] != MAGIC
            || map_len > MAX_MAP
            || map_at.checked_add(map_len) != Some(seal.len - TRAILER)
            || map_at < MAGIC.len() as u64
        {
            return Err(SegmentError::Damaged("bad trailer"));
        }
        let mut bytes = vec![0u8; map_len as usize];
        read_exact_at(&file, &mut bytes, map_at)?;
        if stored_checksum(&bytes) != seal.checksum {
            return Err(SegmentError::Mismatch);
        }
        let raw = fst::raw::Fst::new(bytes).map_err(|_| SegmentError::Damaged("bad key map"))?;
        raw.verify()
            .map_err(|_| SegmentError::Damaged("key map checksum"))?;
        Ok(Segment {
            file,
            map: fst::Map::from(raw),
            lists_end: map_at,
        })
    }

    /// The list stored under `key`, as written.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, SegmentError> {
        let Some(at) = self.map.get(key) else {
            return Ok(None);
        };
        let mut head = [0u8; LIST_HEAD as usize];
        if at
            .checked_add(LIST_HEAD)
            .is_none_or(|end| end > self.lists_end)
        {
            return Err(SegmentError::Damaged("list offset"));
        }
        read_exact_at(&self.file, &mut head, at)?;
        let n = u32::from_le_bytes(head[..4].try_into().unwrap()) as u64;
        if at + LIST_HEAD + n > self.lists_end {
            return Err(SegmentError::Damaged("list length"));
        }
        let mut list = vec![0u8; n as usize];
        read_exact_at(&self.file, &mut list, at + LIST_HEAD)?;
        if crc32fast::hash(&list).to_le_bytes() != head[4..] {
            return Err(SegmentError::Damaged("list checksum"));
        }
        Ok(Some(list))
    }

    /// Keys that start with `prefix`, in order, until `each` says stop.
    pub fn keys_with(&self, prefix: &[u8], mut each: impl FnMut(&[u8]) -> bool) {
        use fst::{IntoStreamer, Streamer};
        let mut keys = self.map.range().ge(prefix).into_stream();
        while let Some((k, _)) = keys.next() {
            if !k.starts_with(prefix) || !each(k) {
                break;
            }
        }
    }
}

/// The checksum an fst (format 3) keeps in its last four bytes.
fn stored_checksum(map: &[u8]) -> u32 {
    let at = map.len().saturating_sub(4);
    map.get(at..)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(not(unix))]
fn read_exact_at(mut file: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(lists: &[(&str, &str)]) -> (tempfile::NamedTempFile, Seal) {
        let mut tmp = tempfile::NamedTempFile::new().unwrap();
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out).unwrap();
        for (k, v) in lists {
            w.add(k.as_bytes(), v.as_bytes()).unwrap();
        }
        let seal = w.finish().unwrap();
        tmp.write_all(&out).unwrap();
        (tmp, seal)
    }

    fn open(tmp: &tempfile::NamedTempFile, seal: &Seal) -> Result<Segment, SegmentError> {
        Segment::open(File::open(tmp.path()).unwrap(), seal)
    }

    #[test]
    fn lists_come_back_by_key_and_keys_by_prefix() {
        let (tmp, seal) = written(&[("t/color", "aa"), ("t/colors", "bbb"), ("u/x", "")]);
        let seg = open(&tmp, &seal).unwrap();
        assert_eq!(seg.get(b"t/colors").unwrap().unwrap(), b"bbb");
        assert_eq!(seg.get(b"u/x").unwrap().unwrap(), b"");
        assert!(seg.get(b"t/col").unwrap().is_none());
        let mut keys = Vec::new();
        seg.keys_with(b"t/col", |k| {
            keys.push(String::from_utf8(k.to_vec()).unwrap());
            true
        });
        assert_eq!(keys, ["t/color", "t/colors"]);
        // A key can be the prefix itself, and a walk stops when told.
        keys.clear();
        seg.keys_with(b"t/color", |k| {
            keys.push(String::from_utf8(k.to_vec()).unwrap());
            false
        });
        assert_eq!(keys, ["t/color"]);
    }

    #[test]
    fn a_file_that_is_not_the_sealed_one_is_never_read() {
        let (tmp, seal) = written(&[("t/a", "1")]);
        let (other, other_seal) = written(&[("t/b", "2")]);
        assert!(matches!(open(&other, &seal), Err(SegmentError::Mismatch)));
        assert!(open(&other, &other_seal).is_ok());
        // Cut short, or with a byte of its map flipped.
        let bytes = std::fs::read(tmp.path()).unwrap();
        std::fs::write(tmp.path(), &bytes[..bytes.len() - 1]).unwrap();
        assert!(open(&tmp, &seal).is_err());
        let mut flipped = bytes.clone();
        let at = bytes.len() - TRAILER as usize - 3;
        flipped[at] ^= 0x55;
        std::fs::write(tmp.path(), &flipped).unwrap();
        assert!(open(&tmp, &seal).is_err());
        // A byte of a list: the map is whole, the list is refused.
        let mut flipped = bytes.clone();
        flipped[MAGIC.len() + LIST_HEAD as usize] ^= 0x55;
        std::fs::write(tmp.path(), &flipped).unwrap();
        let seg = open(&tmp, &seal).unwrap();
        assert!(matches!(
            seg.get(b"t/a"),
            Err(SegmentError::Damaged("list checksum"))
        ));
    }
}
