//! Writing: a graph (or a block) to its canonical lines, and the header
//! that seals them.

use super::*;

/// Serialise a graph to its canonical bytes: the header, then each file
/// (sorted by path) followed by its entities (sorted by id), then categories.
pub fn to_bytes(g: &Graph) -> Vec<u8> {
    to_bytes_sealed(g).0
}

/// [`to_bytes`], and the digests its seal was made of.
pub fn to_bytes_sealed(g: &Graph) -> (Vec<u8>, Seals) {
    let mut body = Vec::with_capacity(200 * g.entities.len());
    let mut sealer = Sealer::default();
    each_segment(g, |file, lines, n| {
        sealer.add(file, lines, n);
        body.extend_from_slice(lines);
    });
    let (header, seals) = sealer.header(&g.meta);
    // The header goes in front of the body in place: a second buffer of
    // the whole snapshot would double what this holds.
    body.splice(0..0, header);
    (body, seals)
}

/// The header line of `g`'s snapshot, and the digests its seal was made
/// of. Each segment is serialised and dropped in turn, so the whole
/// snapshot is never in memory: at 3.8M lines its 68 MB were init's peak.
pub fn header_sealed(g: &Graph) -> (Vec<u8>, Seals) {
    let mut sealer = Sealer::default();
    each_segment(g, |file, lines, n| sealer.add(file, lines, n));
    sealer.header(&g.meta)
}

/// The line count and digests of a snapshot's segments, taken as they
/// are serialised.
#[derive(Default)]
pub(super) struct Sealer {
    records: u64,
    seals: Seals,
}

impl Sealer {
    /// A file's segment (`file` its path) or the categories' (`None`).
    fn add(&mut self, file: Option<&str>, lines: &[u8], n: u64) {
        self.records += n;
        match file {
            Some(path) => {
                self.seals.files.insert(path.to_string(), sha256(lines));
            }
            None => self.seals.categories = sha256(lines),
        }
    }

    fn header(self, meta: &Meta) -> (Vec<u8>, Seals) {
        let header = header_line(meta, self.records, &self.seals.seal());
        (header, self.seals)
    }
}

/// Write `header` and then `g`'s lines to `path`, atomically, serialising
/// one segment at a time; `header` is [`header_sealed`]'s.
pub fn write_streamed(path: &Path, header: &[u8], g: &Graph) -> Result<(), StoreError> {
    write_with_atomic(path, |out| {
        out.write_all(header)?;
        segments(g, |_, lines, _| out.write_all(lines))
    })
}

/// [`segments`] for a visit that cannot fail.
pub(super) fn each_segment(g: &Graph, mut visit: impl FnMut(Option<&str>, &[u8], u64)) {
    segments(g, |file, lines, n| {
        visit(file, lines, n);
        Ok::<_, std::convert::Infallible>(())
    })
    .unwrap_or_else(|never| match never {})
}

/// Each file's lines, sorted by path, then the categories' lines (the
/// segments the seal is made of), each with its count of lines, built in
/// one buffer reused for all.
pub(super) fn segments<E>(
    g: &Graph,
    mut visit: impl FnMut(Option<&str>, &[u8], u64) -> Result<(), E>,
) -> Result<(), E> {
    let mut buf = Vec::new();
    for block in crate::store::blocks_of(g) {
        buf.clear();
        let n = file_lines(&block, &mut buf);
        visit(Some(&block.file.path), &buf, n)?;
    }
    buf.clear();
    let n = category_lines(g.categories.values(), &mut buf);
    visit(None, &buf, n)
}

pub(super) fn line(r: &impl Serialize, out: &mut Vec<u8>) {
    // Plain structs of strings and integers always serialise.
    serde_json::to_writer(&mut *out, r).expect("snapshot record serialises");
    out.push(b'\n');
}

/// One file's lines: its record, then its entities with their edges. The
/// block is put in canonical order first, so any block holding the same
/// graph gives the same bytes. Returns how many lines.
pub(super) fn file_lines(block: &FileBlock, out: &mut Vec<u8>) -> u64 {
    let mut edges: Vec<&Edge> = block.out.iter().collect();
    edges.sort();
    edges.dedup();
    let mut by_src: BTreeMap<&str, BTreeMap<EdgeKind, Vec<&str>>> = BTreeMap::new();
    for e in edges {
        by_src
            .entry(e.src.as_str())
            .or_default()
            .entry(e.kind)
            .or_default()
            .push(e.dst.as_str());
    }
    let mut entities: Vec<&Entity> = block.entities.iter().collect();
    entities.sort_by(|a, b| (a.id != a.path, &a.id).cmp(&(b.id != b.path, &b.id)));
    line(&Record::File(block.file.clone()), out);
    let path = block.file.path.as_str();
    let file_contains = written_file_contains(path, &entities, &mut by_src);
    for (i, e) in entities.iter().enumerate() {
        let first = entities[0];
        let mut own = by_src.remove(e.id.as_str()).unwrap_or_default();
        if e.id == path {
            match &file_contains {
                Some(list) => own.insert(EdgeKind::Contains, list.clone()),
                None => own.remove(&EdgeKind::Contains),
            };
        }
        let out_edges = own
            .into_iter()
            .map(|(kind, dsts)| (kind, dsts.iter().map(|d| relative(path, d)).collect()))
            .collect();
        let r = EntityLine {
            id: (e.id != crate::graph::entity_id(&e.path, &e.qualname)).then_some(&e.id),
            kind: e.kind,
            path: (e.path != path).then_some(&e.path),
            qualname: &e.qualname,
            flavor: (e.flavor != usual_flavor(block.file.lang, e.kind)).then_some(&e.flavor),
            lines: [e.start_line, e.end_line],
            signature: &e.signature,
            doc: &e.doc,
            hash: &e.hash,
            features: written_features(e),
            lifter: (i == 0 || e.lifter != first.lifter).then_some(&e.lifter),
            leaf: (i == 0 || e.leaf != first.leaf).then_some(&e.leaf),
            out: out_edges,
        };
        line(&r, out);
    }
    1 + entities.len() as u64
}

/// An entity's features as schema 5 writes them: none when the offline
/// lifter made them, since they follow from the code alone.
fn written_features(e: &Entity) -> &[String] {
    if e.lifter == crate::graph::OFFLINE_LIFTER {
        &[]
    } else {
        &e.features
    }
}

/// The file entity's `contains` list as it must be written: `None` when
/// it is the [`implied`] one (and so left out), else the list as it is.
pub(super) fn written_file_contains<'a>(
    path: &str,
    entities: &[&'a Entity],
    by_src: &mut BTreeMap<&str, BTreeMap<EdgeKind, Vec<&'a str>>>,
) -> Option<Vec<&'a str>> {
    let held: BTreeSet<&str> = entities
        .iter()
        .filter(|e| e.id != path)
        .filter_map(|e| by_src.get(e.id.as_str())?.get(&EdgeKind::Contains))
        .flatten()
        .copied()
        .collect();
    let members = entities
        .iter()
        .filter(|e| e.id != path)
        .map(|e| e.id.as_str());
    let implied = implied(members, &held);
    let actual = by_src
        .get(path)
        .and_then(|o| o.get(&EdgeKind::Contains))
        .cloned()
        .unwrap_or_default();
    (actual != implied).then_some(actual)
}

pub(super) fn category_lines<'a>(
    cats: impl Iterator<Item = &'a Category>,
    out: &mut Vec<u8>,
) -> u64 {
    let mut n = 0;
    for c in cats {
        line(&Record::Category(c.clone()), out);
        n += 1;
    }
    n
}

pub(super) fn header_line(meta: &Meta, records: u64, sha256: &str) -> Vec<u8> {
    // A graph read from an older schema is written in this one.
    let header = Record::Meta(Header {
        meta: Meta {
            schema: SCHEMA_VERSION,
            ..meta.clone()
        },
        records,
        sha256: sha256.to_string(),
    });
    let mut out = Vec::new();
    line(&header, &mut out);
    out
}
