//! Phase 4: lift what changed and place each entity: kept and moved ones
//! keep their features and leaf, the rest wait to be routed.

use super::*;

/// An entity waiting to be routed: its id, term bag, whether its file's
/// leaf may serve as a prior, and its features.
pub(super) type Pending = (String, BTreeMap<String, f32>, bool, Vec<String>);

/// Phase 4's result.
pub(super) struct Placed {
    /// The changed files' new blocks, contains edges only so far.
    pub(super) new_blocks: BTreeMap<String, FileBlock>,
    /// Entities to route down the hierarchy.
    pub(super) pending: Vec<Pending>,
    pub(super) events: Vec<Event>,
    /// Entities handed to the lifter.
    pub(super) lifted: usize,
}

/// Phase 4: lift what changed (everything in one call, so a model lifter
/// batches across files), keep the rest, and decide each entity's event.
pub(super) fn lift_and_place(
    old: &OldState,
    sources: &[&SourceFile],
    deltas: &[FileDelta],
    matching: &Matching,
    lifter: &dyn Lifter,
    opts: &UpdateOptions,
) -> Result<Placed, EvolveError> {
    let fate_of = |s: &SourceFile, e: &crate::parse::ParsedEntity| {
        &matching.fate[&crate::graph::entity_id(&s.path, &e.qualname)]
    };
    let mut picks: Vec<(usize, usize)> = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        for (ei, e) in s.facts.parsed.entities.iter().enumerate() {
            if matches!(fate_of(s, e), Fate::Modify(_) | Fate::Insert) {
                picks.push((si, ei));
            }
        }
    }
    let mut lifted: BTreeMap<(usize, usize), crate::lift::Lifted> = picks
        .iter()
        .copied()
        .zip(encode::lift_all(sources, &picks, lifter)?)
        .collect();
    let mut codes = Vec::with_capacity(sources.len());
    for (si, s) in sources.iter().enumerate() {
        let mut code = Vec::new();
        let lines = crate::lift::LineStarts::of(s.text.as_deref().unwrap_or(""));
        for (ei, e) in s.facts.parsed.entities.iter().enumerate() {
            let l = match fate_of(s, e) {
                // Offline features are a function of the entity as it is
                // now (its name, owner, docstring, body): recomputed, as a
                // fresh init would. What a model wrote is kept.
                Fate::Keep(o) | Fate::Move(o)
                    if old.entities[o].lifter == crate::lift::offline::OFFLINE_ID =>
                {
                    crate::lift::offline::lift(&encode::lift_input(s, &lines, ei))
                }
                Fate::Keep(o) | Fate::Move(o) => crate::lift::Lifted {
                    features: old.entities[o].features.clone(),
                    by: old.entities[o].lifter.clone(),
                },
                _ => lifted
                    .remove(&(si, ei))
                    .unwrap_or_else(|| crate::lift::Lifted {
                        features: Vec::new(),
                        by: lifter.id().into(),
                    }),
            };
            code.push(l);
        }
        codes.push(encode::code_entities(s, code, None));
    }
    let inputs: Vec<crate::lift::FileLiftInput> = sources
        .iter()
        .zip(&codes)
        .map(|(s, (code, _))| encode::file_input(s, code.iter().map(|e| &e.features)))
        .collect();
    let summaries = lifter.summarize_files(&inputs)?;
    drop(inputs);
    let mut placed = Placed {
        new_blocks: BTreeMap::new(),
        pending: Vec::new(),
        events: Vec::new(),
        lifted: picks.len(),
    };
    for ((s, (mut code, contains)), summary) in sources.iter().zip(codes).zip(summaries) {
        let mut file = encode::file_entity(s, summary);
        place_file(
            &mut file,
            &code,
            old.block_before(deltas, &s.path),
            &mut placed,
        );
        for e in &mut code {
            place_entity(e, &matching.fate[&e.id], old, lifter, opts, &mut placed)?;
        }
        let mut entities = vec![file];
        entities.extend(code);
        let block = FileBlock {
            file: encode::file_record(s),
            entities,
            out: contains,
        };
        placed.new_blocks.insert(s.path.clone(), block);
    }
    for id in &matching.deleted {
        let e = &old.entities[id];
        placed.events.push(event(
            EventKind::Delete,
            id,
            e.kind,
            None,
            Some(&e.leaf),
            None,
        ));
    }
    for (path, b) in &old.blocks {
        if !placed.new_blocks.contains_key(path)
            && !renamed_to_existing(deltas, path, &placed.new_blocks)
        {
            let leaf = b.entities.first().map(|e| e.leaf.as_str());
            placed
                .events
                .push(event(EventKind::Delete, path, Kind::File, None, leaf, None));
        }
    }
    Ok(placed)
}

pub(super) fn event(
    kind: EventKind,
    id: &str,
    entity: Kind,
    from: Option<&str>,
    leaf: Option<&str>,
    drift: Option<f32>,
) -> Event {
    Event {
        event: kind,
        id: id.to_string(),
        kind: entity,
        from: from.map(str::to_string),
        leaf: leaf.map(str::to_string),
        drift,
    }
}

/// A changed file keeps its old file's place (a rename is a move); a new
/// file waits to be routed.
pub(super) fn place_file(
    file: &mut Entity,
    code: &[Entity],
    before: Option<&FileBlock>,
    placed: &mut Placed,
) {
    let old_file = before.and_then(|b| b.entities.iter().find(|e| e.kind == Kind::File));
    match old_file {
        Some(of) => {
            file.leaf = of.leaf.clone();
            if of.id != file.id {
                let ev = event(
                    EventKind::Move,
                    &file.id,
                    Kind::File,
                    Some(&of.id),
                    Some(&file.leaf),
                    None,
                );
                placed.events.push(ev);
            }
        }
        None => {
            let terms = encode::file_bag(
                &file.path,
                std::iter::once(&*file).chain(code).map(|e| &e.features),
            );
            placed
                .pending
                .push((file.id.clone(), terms, false, file.features.clone()));
            placed.events.push(event(
                EventKind::Insert,
                &file.id,
                Kind::File,
                None,
                None,
                None,
            ));
        }
    }
}

/// One code entity's event: kept and moved entities keep their place, a
/// modification whose features drifted past τ is routed afresh (a model
/// may judge the ambiguous ones), insertions are routed.
pub(super) fn place_entity(
    e: &mut Entity,
    fate: &Fate,
    old: &OldState,
    lifter: &dyn Lifter,
    opts: &UpdateOptions,
    placed: &mut Placed,
) -> Result<(), EvolveError> {
    match fate {
        Fate::Keep(o) => e.leaf = old.entities[o].leaf.clone(),
        Fate::Move(o) => {
            e.leaf = old.entities[o].leaf.clone();
            placed.events.push(event(
                EventKind::Move,
                &e.id,
                e.kind,
                Some(o),
                Some(&e.leaf),
                None,
            ));
        }
        Fate::Modify(o) => {
            let o = &old.entities[o];
            let d = drift(&o.features, &e.features);
            // Near τ the overlap alone cannot tell; a model may judge.
            let drifted = if (d - opts.drift_threshold).abs() <= AMBIGUOUS_DRIFT {
                lifter
                    .judge_drift(&e.id, &o.features, &e.features)?
                    .unwrap_or(d > opts.drift_threshold)
            } else {
                d > opts.drift_threshold
            };
            if drifted {
                // Intent changed: route afresh, without the old place as a prior.
                placed.pending.push((
                    e.id.clone(),
                    encode::entity_terms(e),
                    false,
                    e.features.clone(),
                ));
                let ev = event(
                    EventKind::Relocate,
                    &e.id,
                    e.kind,
                    Some(&o.leaf),
                    None,
                    Some(round(d)),
                );
                placed.events.push(ev);
            } else {
                e.leaf = o.leaf.clone();
                let ev = event(
                    EventKind::Modify,
                    &e.id,
                    e.kind,
                    None,
                    Some(&e.leaf),
                    Some(round(d)),
                );
                placed.events.push(ev);
            }
        }
        Fate::Insert => {
            placed.pending.push((
                e.id.clone(),
                encode::entity_terms(e),
                true,
                e.features.clone(),
            ));
            placed
                .events
                .push(event(EventKind::Insert, &e.id, e.kind, None, None, None));
        }
    }
    Ok(())
}
