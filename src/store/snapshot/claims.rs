//! What a snapshot claims, read for adoption. Anyone can reseal a
//! snapshot, so its structure is never taken: a clone builds its graph
//! from git, and takes from the snapshot only what costs money to make
//! (a model's features, summaries and hierarchy), each for an entity whose
//! source hash the re-parse confirms. This reads those claims line by
//! line, without building the snapshot's graph, keeping at most what the
//! tree could hold: a file's lines past its cap are counted, not parsed.

use super::*;

/// One entity as the snapshot describes it.
#[derive(Debug, Clone)]
pub struct EntityClaim {
    pub id: String,
    pub kind: Kind,
    pub hash: String,
    /// What git decides, to be compared with what git holds.
    pub signature: String,
    pub doc: String,
    pub lines: (u32, u32),
    pub features: Vec<String>,
    pub lifter: String,
    pub leaf: String,
}

/// A snapshot's header and the entities it claims for the files kept.
#[derive(Debug, Default)]
pub struct Claims {
    pub meta: Meta,
    /// By file path: the blob the record names, and its entities.
    pub files: BTreeMap<String, (String, Vec<EntityClaim>)>,
    /// Every file the snapshot has a record of, kept or not, with how many
    /// entity lines it has.
    pub paths: Vec<(String, usize)>,
    /// Entity lines in the snapshot, kept or not.
    pub records: usize,
}

/// What a snapshot's header line says, once the file is known to be no
/// merge left half done; the records are not read.
pub fn header_of(bytes: &[u8], path: &Path) -> Result<Meta, StoreError> {
    let (first, _) = split_header(bytes, path)?;
    Ok(read_header(first, path)?.meta)
}

/// A snapshot's header line and body, once it is known to be UTF-8 and
/// no merge left half done.
fn split_header<'b>(bytes: &'b [u8], path: &Path) -> Result<(&'b str, &'b str), StoreError> {
    let text = std::str::from_utf8(bytes).map_err(|e| StoreError::Corrupt {
        path: path.to_path_buf(),
        line: 0,
        message: format!("not UTF-8: {e}"),
    })?;
    if has_conflict_markers(text) {
        return Err(StoreError::Conflicted(path.to_path_buf()));
    }
    Ok(text.split_once('\n').unwrap_or((text, "")))
}

/// Read `bytes` (a snapshot; `path` names it in errors). `cap` says, for a
/// file record, how many of its entity lines to keep (`None`: none). The
/// seal is checked first: a cut or edited file is damaged as a whole.
pub fn claims(
    bytes: &[u8],
    path: &Path,
    cap: impl Fn(&FileRecord) -> Option<usize>,
) -> Result<Claims, StoreError> {
    let (header, body) = sealed(bytes, path)?;
    let corrupt = |line: usize, message: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut out = Claims {
        meta: Meta {
            schema: SCHEMA_VERSION,
            ..header.meta.clone()
        },
        ..Claims::default()
    };
    // The file being read: its group, how many lines to keep, those kept.
    let mut group: Option<(Group, usize, Vec<EntityClaim>)> = None;
    for (i, raw) in body.lines().enumerate() {
        let n = i + 2;
        let bytes = raw.as_bytes();
        if bytes.starts_with(CATEGORY_LINE) {
            break;
        }
        if bytes.starts_with(FILE_LINE) {
            close(group.take(), &mut out);
            let Ok(Record::File(f)) = serde_json::from_str::<Record>(raw) else {
                return Err(corrupt(n, "a file record that does not parse".into()));
            };
            out.paths.push((f.path.clone(), 0));
            if let Some(room) = cap(&f) {
                out.files
                    .insert(f.path.clone(), (f.blob.clone(), Vec::new()));
                group = Some((Group::of(&f, header.meta.schema), room, Vec::new()));
            }
            continue;
        }
        out.records += 1;
        if let Some((_, n)) = out.paths.last_mut() {
            *n += 1;
        }
        let Some((g, _, kept)) = group.as_mut().filter(|(_, room, kept)| kept.len() < *room) else {
            continue; // a file not kept, or past its cap: counted, not read
        };
        let tagless = header.meta.schema >= 4 && !raw.starts_with("{\"t\":");
        let record: EntityRecord = match tagless {
            true => serde_json::from_str(raw),
            false => match serde_json::from_str::<Record>(raw) {
                Ok(Record::Entity(r)) => Ok(r),
                Ok(_) => return Err(corrupt(n, "a record out of place".into())),
                Err(e) => Err(e),
            },
        }
        .map_err(|e| corrupt(n, e.to_string()))?;
        let (e, _) = record.read(g).map_err(|why| corrupt(n, why.into()))?;
        if let Some(why) = oversized(&e) {
            return Err(StoreError::Damaged {
                path: path.to_path_buf(),
                message: format!("line {n}: {why}, more than rpg ever writes"),
            });
        }
        // An entity filed under one file may speak only for that file.
        if crate::graph::split_id(&e.id).0 != g.path || e.path != g.path {
            continue;
        }
        kept.push(EntityClaim {
            id: e.id,
            kind: e.kind,
            hash: e.hash,
            signature: e.signature,
            doc: e.doc,
            lines: (e.start_line, e.end_line),
            features: e.features,
            lifter: e.lifter.to_string(),
            leaf: e.leaf.to_string(),
        });
    }
    close(group.take(), &mut out);
    Ok(out)
}

/// File a finished group's kept entities under its path.
fn close(group: Option<(Group, usize, Vec<EntityClaim>)>, out: &mut Claims) {
    if let Some((g, _, kept)) = group {
        if let Some(entry) = out.files.get_mut(&g.path) {
            entry.1 = kept;
        }
    }
}

/// The header and the body of a snapshot whose seal holds.
fn sealed<'b>(bytes: &'b [u8], path: &Path) -> Result<(Header, &'b str), StoreError> {
    let (first, body) = split_header(bytes, path)?;
    let header = read_header(first, path)?;
    let records = memchr::memchr_iter(b'\n', body.as_bytes()).count() as u64;
    let why = if records != header.records {
        format!(
            "the header seals {} records but {records} follow (cut or edited?)",
            header.records
        )
    } else if seal_of(body.as_bytes(), header.meta.schema) != header.sha256 {
        "its records do not match the header's sha256 (edited by hand?)".to_string()
    } else {
        return Ok((header, body));
    };
    // A hand edit is best named by the line it broke, if it broke one.
    let broken = body.lines().enumerate().find_map(|(i, l)| {
        let e = serde_json::from_str::<serde_json::Value>(l).err()?;
        Some((i + 2, e))
    });
    Err(match broken {
        Some((line, e)) => StoreError::Corrupt {
            path: path.to_path_buf(),
            line,
            message: e.to_string(),
        },
        None => StoreError::Damaged {
            path: path.to_path_buf(),
            message: why,
        },
    })
}
