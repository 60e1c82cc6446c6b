//! The documents of one file: what each of its entities is found by, and
//! its module text, weighted by field.

use super::*;

pub(super) struct Built {
    pub(super) docs: FileDocs,
    pub(super) all: Vec<Tf>,
    pub(super) features: Vec<Tf>,
    pub(super) module: Tf,
}

/// A document's weighted term frequencies and its length. The length adds
/// up in insertion order, so it is the same on every run.
#[derive(Default)]
pub(super) struct Tf {
    pub(super) terms: FxHashMap<String, f32>,
    pub(super) len: f32,
}

fn add(tf: &mut Tf, words: impl IntoIterator<Item = String>, w: f32) {
    for word in words {
        if !is_noise(&word) {
            match tf.terms.get_mut(&word) {
                Some(f) => *f += w,
                None => {
                    tf.terms.insert(word, w);
                }
            }
            tf.len += w;
        }
    }
}

/// Documents of one file, from its graph block and its source text.
pub(super) fn build_file(block: &FileBlock, text: &str) -> Built {
    let path = &block.file.path;
    let pw: Vec<String> = path_words(path).into_iter().collect();
    let lines: Vec<&str> = text.lines().collect();
    let ents: Vec<&Entity> = block
        .entities
        .iter()
        .filter(|e| e.kind != Kind::File)
        .take(u16::MAX as usize)
        .collect();
    let local: HashMap<&str, u16> = ents
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i as u16))
        .collect();
    let parent: HashMap<&str, u16> = block
        .out
        .iter()
        .filter(|e| e.kind == EdgeKind::Contains)
        .filter_map(|e| Some((e.dst.as_str(), *local.get(e.src.as_str())?)))
        .collect();
    let mut module = Tf::default();
    add(
        &mut module,
        prose_words(&module_text(&ents, &lines)),
        W_BODY,
    );
    let mut out = Built {
        docs: FileDocs {
            path: path.clone(),
            docs: Vec::with_capacity(ents.len()),
            module_len: module.len,
        },
        all: Vec::with_capacity(ents.len()),
        features: Vec::with_capacity(ents.len()),
        module,
    };
    let mut long_lines = HashMap::new();
    for e in ents {
        let mut all = Tf::default();
        let mut feats = Tf::default();
        let name = split_identifier(bare_name(&e.qualname).split('#').next().unwrap_or(""));
        add(&mut all, name.clone(), W_NAME);
        add(&mut feats, name, W_NAME);
        let owner = e
            .qualname
            .rsplit_once(['.', ':'])
            .map(|(o, _)| prose_words(o))
            .unwrap_or_default();
        add(&mut all, owner, W_OWNER);
        add(&mut all, pw.iter().cloned(), W_PATH);
        for f in &e.features {
            add(&mut all, prose_words(f), W_FEATURE);
            add(&mut feats, prose_words(f), W_FEATURE);
        }
        add(&mut all, prose_words(&e.doc), W_DOC);
        add(&mut all, prose_words(&e.signature), W_DOC);
        if e.kind != Kind::Class {
            let body = body_of(e, &lines, &mut long_lines);
            add(&mut all, prose_words(&body), W_BODY);
            add(&mut all, crate::search::query::flags_in(&body), W_FLAG);
        }
        out.docs.docs.push(DocMeta {
            qualname: e.qualname.clone(),
            kind: e.kind,
            parent: parent.get(e.id.as_str()).copied(),
            start_line: e.start_line,
            end_line: e.end_line,
            len: all.len,
            features_len: feats.len,
        });
        out.all.push(all);
        out.features.push(feats);
    }
    out
}

/// A line longer than this is shared: it joins the bodies of at most
/// [`LONG_LINE_OWNERS`] entities.
const LONG_LINE: usize = 1000;
const LONG_LINE_OWNERS: u8 = 4;

/// The lines an entity's body is indexed from. Entities know their lines,
/// not their columns, so every function on one long line (a minified or
/// generated file) would read the whole line: 2,000 functions on a 139 KB
/// line tokenized 280 MB. A long line counts for its first few entities
/// only, so each byte is read a bounded number of times.
fn body_of(e: &Entity, lines: &[&str], long_lines: &mut HashMap<usize, u8>) -> String {
    let start = (e.start_line as usize).saturating_sub(1).min(lines.len());
    let end = (e.end_line as usize).clamp(start, lines.len());
    let mut kept: Vec<&str> = Vec::with_capacity(end - start);
    for (i, line) in lines.iter().enumerate().take(end).skip(start) {
        if line.len() > LONG_LINE {
            let owners = long_lines.entry(i).or_insert(0u8);
            if *owners >= LONG_LINE_OWNERS {
                continue;
            }
            *owners += 1;
        }
        kept.push(line);
    }
    kept.join("\n")
}

/// The lines of a file outside every function: its header comment,
/// imports, constants, tables, and the bodies of classes and structs
/// between their methods. A locale table or a regex constant is often
/// what an issue is about, and no function holds it.
fn module_text(ents: &[&Entity], lines: &[&str]) -> String {
    let mut inside = vec![false; lines.len()];
    for e in ents.iter().filter(|e| e.kind != Kind::Class) {
        let start = (e.start_line as usize).saturating_sub(1).min(lines.len());
        let end = (e.end_line as usize).clamp(start, lines.len());
        inside[start..end].fill(true);
    }
    let mut text = String::new();
    for (line, _) in lines.iter().zip(&inside).filter(|(_, i)| !**i) {
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity_on(start_line: u32, end_line: u32) -> Entity {
        Entity {
            id: format!("a.js:f{start_line}"),
            kind: Kind::Function,
            path: "a.js".into(),
            qualname: format!("f{start_line}"),
            flavor: String::new(),
            start_line,
            end_line,
            signature: String::new(),
            doc: String::new(),
            hash: String::new(),
            features: Vec::new(),
            lifter: String::new(),
            leaf: String::new(),
        }
    }

    #[test]
    fn a_long_line_is_read_for_a_few_of_the_functions_on_it_not_all() {
        let long = "function f(a){return a};".repeat(4_000);
        let lines = vec![long.as_str(), "// short", "return 1;"];
        let mut shared = HashMap::new();
        let read: usize = (0..2_000)
            .map(|_| body_of(&entity_on(1, 1), &lines, &mut shared).len())
            .sum();
        assert!(
            read <= LONG_LINE_OWNERS as usize * long.len(),
            "{read} bytes read for a {}-byte line",
            long.len()
        );
        // Short lines are every entity's, as before.
        assert_eq!(
            body_of(&entity_on(2, 3), &lines, &mut shared),
            "// short\nreturn 1;"
        );
        assert_eq!(
            body_of(&entity_on(2, 3), &lines, &mut shared),
            "// short\nreturn 1;"
        );
    }
}
