//! A parsed file's entities, as the graph keeps them, and the words
//! each file and entity brings to the hierarchy.

use super::SourceFile;
use crate::graph::hierarchy::{self, FileTerms};
use crate::graph::{Edge, EdgeKind, Entity, FileRecord, Id};
use crate::lift::{FileLiftInput, LiftError, LiftInput, Lifted, Lifter, LineStarts};
use crate::parse::{Call, Kind};
use crate::text::words::{is_stop, prose_words, split_identifier};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The stored record of a parsed file.
pub fn file_record(s: &SourceFile) -> FileRecord {
    FileRecord {
        path: s.path.clone(),
        blob: s.blob.to_string(),
        lang: s.lang,
        lines: s.facts.parsed.lines,
        has_errors: s.facts.parsed.has_errors,
    }
}

/// What an entity says of itself beside its name: signature, docstring
/// and content hash.
pub struct Description {
    signature: String,
    doc: String,
    hash: String,
}

/// The descriptions of `s`'s entities, taken out of its parse when nothing
/// else holds it. Resolution and the store read none of them, and at
/// millions of lines a second copy in the graph was tens of megabytes.
pub(super) fn take_descriptions(s: &mut SourceFile) -> Option<Vec<Description>> {
    let facts = Arc::get_mut(&mut s.facts)?;
    let take = |e: &mut crate::parse::ParsedEntity| Description {
        signature: std::mem::take(&mut e.signature),
        doc: std::mem::take(&mut e.doc),
        hash: std::mem::take(&mut e.hash),
    };
    Some(facts.parsed.entities.iter_mut().map(take).collect())
}

/// A file's code entities (no hierarchy leaf yet) and their `contains`
/// edges, with what the lifter said of each, in source order; with
/// `described`, the entities' descriptions, else copies of the parse's.
pub fn code_entities(
    s: &SourceFile,
    lifted: Vec<Lifted>,
    described: Option<Vec<Description>>,
) -> (Vec<Entity>, Vec<Edge>) {
    let ents = &s.facts.parsed.entities;
    let ids: Vec<Id> = ents
        .iter()
        .map(|e| crate::graph::entity_id(&s.path, &e.qualname).into())
        .collect();
    let file = Id::from(&s.path);
    let mut described = described.map(Vec::into_iter);
    let mut out = Vec::with_capacity(ents.len());
    let mut contains = Vec::with_capacity(ents.len());
    // An entity the lifter said nothing of still enters the graph.
    let mut lifted = lifted.into_iter();
    for (i, e) in ents.iter().enumerate() {
        let l = lifted.next().unwrap_or_default();
        let parent = e.parent.map_or_else(|| file.clone(), |p| ids[p].clone());
        contains.push(Edge {
            src: parent,
            kind: EdgeKind::Contains,
            dst: ids[i].clone(),
        });
        let d = described
            .as_mut()
            .and_then(Iterator::next)
            .unwrap_or_else(|| Description {
                signature: e.signature.clone(),
                doc: e.doc.clone(),
                hash: e.hash.clone(),
            });
        out.push(Entity {
            id: ids[i].to_string(),
            kind: e.kind,
            path: s.path.clone(),
            qualname: e.qualname.clone(),
            flavor: Id::common(&e.flavor),
            start_line: e.start_line,
            end_line: e.end_line,
            signature: d.signature,
            doc: d.doc,
            hash: d.hash,
            features: l.features,
            lifter: l.by,
            leaf: Id::default(),
        });
    }
    (out, contains)
}

/// What a lifter summarises a file from: its docstring and the features
/// of its top-level entities, largest first.
pub fn file_input<'a>(
    s: &'a SourceFile,
    features: impl IntoIterator<Item = &'a Vec<String>>,
) -> FileLiftInput<'a> {
    let mut tops: Vec<(u32, &[String])> = s
        .facts
        .parsed
        .entities
        .iter()
        .zip(features)
        .filter(|(e, _)| e.parent.is_none())
        .map(|(e, f)| (e.end_line - e.start_line, f.as_slice()))
        .collect();
    tops.sort_by_key(|t| std::cmp::Reverse(t.0));
    FileLiftInput {
        path: &s.path,
        doc: &s.facts.parsed.doc,
        top_features: tops.into_iter().map(|(_, f)| f).collect(),
    }
}

/// The file entity, with its summary features.
pub fn file_entity(s: &SourceFile, summary: Lifted) -> Entity {
    Entity {
        id: s.path.clone(),
        kind: Kind::File,
        path: s.path.clone(),
        qualname: String::new(),
        flavor: Id::default(),
        start_line: 1,
        end_line: s.facts.parsed.lines.max(1),
        signature: String::new(),
        doc: s.facts.parsed.doc.clone(),
        hash: String::new(),
        features: summary.features,
        lifter: summary.by,
        leaf: Id::default(),
    }
}

/// The lifter's view of entity `i` of `s`, whose `lines` are found once
/// for all its entities.
pub fn lift_input<'s>(s: &'s SourceFile, lines: &LineStarts, i: usize) -> LiftInput<'s> {
    let e = &s.facts.parsed.entities[i];
    LiftInput {
        path: &s.path,
        qualname: &e.qualname,
        hash: &e.hash,
        code: s
            .text
            .as_deref()
            .map_or("", |t| lines.cut(t, e.start_line, e.end_line)),
        lang: s.lang,
        kind: e.kind,
        name: &e.name,
        owner: e.owner_type.as_deref(),
        flavor: &e.flavor,
        signature: &e.signature,
        doc: &e.doc,
        callees: e
            .calls
            .iter()
            .map(|c| match c {
                Call::Name(n) | Call::SelfMethod(n) | Call::Macro(n) => n.as_str(),
                Call::Attr { name, .. } | Call::Typed { name, .. } => name.as_str(),
                Call::Path(p) => p.last().map(String::as_str).unwrap_or(""),
            })
            .collect(),
    }
}

/// Lift entity `picks[k] = (source, entity index)` of `sources` in one
/// call; results in the same order.
pub fn lift_all(
    sources: &[&SourceFile],
    picks: &[(usize, usize)],
    lifter: &dyn Lifter,
) -> Result<Vec<Lifted>, LiftError> {
    // Picks come grouped by file: find a file's lines once per run of it.
    let mut lines = (usize::MAX, LineStarts::default());
    let mut inputs: Vec<LiftInput> = Vec::with_capacity(picks.len());
    for &(si, ei) in picks {
        if lines.0 != si {
            lines = (
                si,
                LineStarts::of(sources[si].text.as_deref().unwrap_or("")),
            );
        }
        inputs.push(lift_input(sources[si], &lines.1, ei));
    }
    lifter.lift(&inputs)
}

/// An entity's feature words, the one rule by which init and updates weigh
/// entities for the hierarchy: words of three characters or more with a
/// letter in them (`utf8` and `v2` count, `100` does not), stop words out.
pub fn entity_terms(e: &Entity) -> BTreeMap<String, f32> {
    let mut t = BTreeMap::new();
    add_feature_terms(&mut t, &e.features);
    t
}

fn add_feature_terms(bag: &mut BTreeMap<String, f32>, features: &[String]) {
    for f in features {
        for w in prose_words(f) {
            if w.len() >= 3 && w.chars().any(|c| c.is_alphabetic()) && !is_stop(&w) {
                *bag.entry(w).or_default() += 1.0;
            }
        }
    }
}

/// A file's term bag: the feature words of its entities (the file's own
/// included), and its name's words, which weigh double.
pub fn file_bag<'a>(
    path: &str,
    features: impl IntoIterator<Item = &'a Vec<String>>,
) -> BTreeMap<String, f32> {
    let mut terms = BTreeMap::new();
    for f in features {
        add_feature_terms(&mut terms, f);
    }
    let stem = crate::text::file_name(path);
    for w in split_identifier(stem.split('.').next().unwrap_or(stem)) {
        if !is_stop(&w) {
            *terms.entry(w).or_default() += 2.0;
        }
    }
    terms
}

/// A file's terms for the hierarchy, from its entities' features (the
/// file's own included), by [`file_bag`].
pub(super) fn file_terms<'a>(
    path: &str,
    features: impl Iterator<Item = &'a Vec<String>> + Clone,
) -> FileTerms {
    FileTerms {
        path: path.to_string(),
        terms: file_bag(path, features.clone()),
        topics: hierarchy::file_topics(path, features),
    }
}

/// [`file_terms`] of each of `paths`, from the graph's entities.
pub(super) fn entity_terms_by_file(
    paths: &[String],
    entities: &BTreeMap<String, Entity>,
) -> Vec<FileTerms> {
    let mut by_file: BTreeMap<&str, Vec<&Vec<String>>> = BTreeMap::new();
    for e in entities.values() {
        by_file
            .entry(e.path.as_str())
            .or_default()
            .push(&e.features);
    }
    paths
        .iter()
        .map(|path| {
            let features = by_file.remove(path.as_str()).unwrap_or_default();
            file_terms(path, features.into_iter())
        })
        .collect()
}
