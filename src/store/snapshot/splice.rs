//! Splicing: the snapshot after a change, from the old bytes and the
//! changed files' blocks alone.

use super::*;

/// The lines of a snapshot this store wrote, with some files' groups
/// replaced: the bytes [`to_bytes`] would give for the graph after the
/// change, built without loading that graph. Unchanged files' lines are
/// borrowed from `old`; only changed files are serialised and hashed.
pub struct Spliced<'a> {
    pieces: Vec<std::borrow::Cow<'a, [u8]>>,
    pub header: Vec<u8>,
    old_header: &'a [u8],
    pub seals: Seals,
}

/// Splice `changed` (path → its block now, `None` when gone) into `old`,
/// the canonical bytes of an earlier graph, with `categories` and `meta`
/// as they are now. `known` holds digests of `old`'s groups (any it lacks
/// are computed). `None` when `old` is not laid out as [`to_bytes`]
/// writes, so the caller serialises the whole graph instead.
pub fn splice<'a>(
    old: &'a [u8],
    known: &Seals,
    changed: &BTreeMap<String, Option<FileBlock>>,
    categories: &BTreeMap<String, Category>,
    meta: &Meta,
) -> Option<Spliced<'a>> {
    let header_end = memchr::memchr(b'\n', old)? + 1;
    // Lines of another schema's groups would not be this schema's lines.
    let schema = read_header(
        std::str::from_utf8(&old[..header_end]).ok()?.trim_end(),
        Path::new(""),
    )
    .ok()?
    .meta
    .schema;
    if schema != SCHEMA_VERSION {
        return None;
    }
    let groups = file_groups(old, header_end)?;
    let mut pieces: Vec<std::borrow::Cow<[u8]>> = Vec::new();
    let mut seals = Seals::default();
    let mut records = 0u64;
    let mut fresh = |path: &str, block: &FileBlock, pieces: &mut Vec<std::borrow::Cow<[u8]>>| {
        let mut b = Vec::new();
        let n = file_lines(block, &mut b);
        seals.files.insert(path.to_string(), sha256(&b));
        pieces.push(b.into());
        n
    };
    let mut pending = changed
        .iter()
        .filter_map(|(p, b)| b.as_ref().map(|b| (p.as_str(), b)))
        .peekable();
    let mut kept = Vec::new();
    for (path, range, lines) in &groups.files {
        while let Some((p, b)) = pending.next_if(|(p, _)| *p < path.as_str()) {
            records += fresh(p, b, &mut pieces);
        }
        if changed.contains_key(path) {
            if let Some((p, b)) = pending.next_if(|(p, _)| *p == path.as_str()) {
                records += fresh(p, b, &mut pieces);
            }
            continue;
        }
        pieces.push(old[range.clone()].into());
        kept.push((path, range));
        records += lines;
    }
    for (p, b) in pending {
        records += fresh(p, b, &mut pieces);
    }
    for (path, range) in kept {
        let d = known
            .files
            .get(path)
            .copied()
            .unwrap_or_else(|| sha256(&old[range.clone()]));
        seals.files.insert(path.clone(), d);
    }
    let mut cats = Vec::new();
    records += category_lines(categories.values(), &mut cats);
    seals.categories = sha256(&cats);
    pieces.push(cats.into());
    let header = header_line(meta, records, &seals.seal());
    Some(Spliced {
        pieces,
        header,
        old_header: &old[..header_end],
        seals,
    })
}

impl Spliced<'_> {
    #[cfg(test)]
    pub(super) fn bytes(&self) -> Vec<u8> {
        let mut out = self.header.clone();
        for p in &self.pieces {
            out.extend_from_slice(p);
        }
        out
    }

    /// The new bytes equal the old: the header seals the body's sha256.
    pub fn unchanged(&self) -> bool {
        self.header == self.old_header
    }

    /// When the new bytes differ from the old only in the header's commit
    /// and tree: the two trees (old, new). See [`relabelled`].
    pub fn relabelled(&self) -> Option<(String, String)> {
        let header = |b: &[u8]| match serde_json::from_slice(b.trim_ascii_end()).ok()? {
            Record::Meta(h) => Some(h),
            _ => None,
        };
        let (a, b) = (header(self.old_header)?, header(&self.header)?);
        let same_body = a.records == b.records && a.sha256 == b.sha256;
        let unlabelled = |m: &Meta| Meta {
            commit: String::new(),
            tree: String::new(),
            ..m.clone()
        };
        (same_body && unlabelled(&a.meta) == unlabelled(&b.meta))
            .then_some((a.meta.tree, b.meta.tree))
    }

    /// Write the new bytes to `path` atomically; their [`fingerprint`].
    pub fn write(&self, path: &Path) -> Result<String, StoreError> {
        let mut parts: Vec<&[u8]> = vec![&self.header];
        parts.extend(self.pieces.iter().map(|p| &p[..]));
        write_parts_atomic(path, &parts)?;
        Ok(fingerprint_of_sealed(&self.header))
    }
}

/// Where each file's group of lines lies in canonical bytes.
pub(super) struct Groups {
    /// (path, byte range, lines), in path order.
    files: Vec<(String, std::ops::Range<usize>, u64)>,
}

/// A file line's path, read without the rest of the line: the old bytes
/// are the ones the store mirrors (their stamp or digest matched), and
/// decoding every field of 56k file lines was a third of a splice.
#[derive(serde::Deserialize)]
struct PathOf<'a> {
    #[serde(borrow)]
    path: std::borrow::Cow<'a, str>,
}

pub(super) fn file_groups(old: &[u8], from: usize) -> Option<Groups> {
    let mut files: Vec<(String, std::ops::Range<usize>, u64)> = Vec::new();
    let mut at = from;
    while at < old.len() {
        let end = at + memchr::memchr(b'\n', &old[at..])? + 1;
        let raw = &old[at..end];
        if raw.starts_with(FILE_LINE) {
            let f: PathOf = serde_json::from_slice(raw).ok()?;
            if files.last().is_some_and(|(p, _, _)| **p >= *f.path) {
                return None;
            }
            files.push((f.path.into_owned(), at..end, 1));
        } else if raw.starts_with(CATEGORY_LINE) {
            break;
        } else {
            let (_, range, lines) = files.last_mut()?;
            range.end = end;
            *lines += 1;
        }
        at = end;
    }
    Some(Groups { files })
}
/// When two snapshots differ only in their header's commit and tree, the
/// two trees (old, new); otherwise `None`.
pub fn relabelled(old: &[u8], new: &[u8]) -> Option<(String, String)> {
    let header = |b: &[u8]| -> Option<(Meta, usize)> {
        let end = b.iter().position(|c| *c == b'\n')?;
        match serde_json::from_slice(&b[..end]).ok()? {
            Record::Meta(h) => Some((h.meta, end)),
            _ => None,
        }
    };
    let ((a, i), (b, j)) = (header(old)?, header(new)?);
    let unlabelled = |m: &Meta| Meta {
        commit: String::new(),
        tree: String::new(),
        ..m.clone()
    };
    (old[i..] == new[j..] && unlabelled(&a) == unlabelled(&b)).then_some((a.tree, b.tree))
}
