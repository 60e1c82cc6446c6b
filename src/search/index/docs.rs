//! The documents of one file: what each of its entities is found by, and
//! its module text, weighted by field.

use super::*;
use crate::text::words::{each_identifier_word, each_prose_word};

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

impl Tf {
    /// Count one word, copying it only the first time the document has it.
    fn word(&mut self, word: &str, w: f32) {
        if is_noise(word) {
            return;
        }
        match self.terms.get_mut(word) {
            Some(f) => *f += w,
            None => {
                self.terms.insert(word.to_string(), w);
            }
        }
        self.len += w;
    }

    fn prose(&mut self, text: &str, w: f32) {
        each_prose_word(text, &mut |word| self.word(word, w));
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
    for line in module_lines(&ents, &lines) {
        module.prose(line, W_BODY);
    }
    let mut out = Built {
        docs: FileDocs {
            path: path.clone(),
            docs: Vec::with_capacity(ents.len()),
            module_len: module.len,
            hollow: false,
        },
        all: Vec::with_capacity(ents.len()),
        features: Vec::with_capacity(ents.len()),
        module,
    };
    let mut long_lines = HashMap::new();
    let lang = crate::parse::Lang::from_path(path);
    let (mut functions, mut declarations) = (0, 0);
    for e in ents {
        let mut all = Tf::default();
        let mut feats = Tf::default();
        let name = bare_name(&e.qualname).split('#').next().unwrap_or("");
        each_identifier_word(name, &mut |word| {
            all.word(word, W_NAME);
            feats.word(word, W_NAME);
        });
        if let Some((owner, _)) = e.qualname.rsplit_once(['.', ':']) {
            all.prose(owner, W_OWNER);
        }
        for word in &pw {
            all.word(word, W_PATH);
        }
        for f in &e.features {
            all.prose(f, W_FEATURE);
            feats.prose(f, W_FEATURE);
        }
        all.prose(&e.doc, W_DOC);
        all.prose(&e.signature, W_DOC);
        if e.kind != Kind::Class {
            let body = body_of(e, &lines, &mut long_lines);
            functions += 1;
            declarations += usize::from(is_declaration(&body, lang));
            for line in &body {
                all.prose(line, W_BODY);
            }
            for line in &body {
                for flag in crate::search::query::flags_in(line) {
                    all.word(&flag, W_FLAG);
                }
            }
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
    out.docs.hollow = functions > 0 && declarations == functions;
    out
}

/// Whether a function's lines (three at most) declare it without a body,
/// as its language reads them.
fn is_declaration(lines: &[&str], lang: Option<crate::parse::Lang>) -> bool {
    if lines.is_empty() || lines.len() > 3 {
        return false;
    }
    let text = lines.join(" ");
    let text = text.trim_end();
    match lang {
        Some(l) => l.declares_without_body(text),
        None => !crate::parse::has_body(text),
    }
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
fn body_of<'t>(e: &Entity, lines: &[&'t str], long_lines: &mut HashMap<usize, u8>) -> Vec<&'t str> {
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
    kept
}

/// The lines of a file outside every function: its header comment,
/// imports, constants, tables, and the bodies of classes and structs
/// between their methods. A locale table or a regex constant is often
/// what an issue is about, and no function holds it.
fn module_lines<'t>(ents: &[&Entity], lines: &[&'t str]) -> Vec<&'t str> {
    let mut inside = vec![false; lines.len()];
    for e in ents.iter().filter(|e| e.kind != Kind::Class) {
        let start = (e.start_line as usize).saturating_sub(1).min(lines.len());
        let end = (e.end_line as usize).clamp(start, lines.len());
        inside[start..end].fill(true);
    }
    lines
        .iter()
        .zip(&inside)
        .filter(|(_, i)| !**i)
        .map(|(line, _)| *line)
        .collect()
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
            flavor: Default::default(),
            start_line,
            end_line,
            signature: String::new(),
            doc: String::new(),
            hash: String::new(),
            features: Vec::new(),
            lifter: Default::default(),
            leaf: Default::default(),
        }
    }

    #[test]
    fn a_long_line_is_read_for_a_few_of_the_functions_on_it_not_all() {
        let long = "function f(a){return a};".repeat(4_000);
        let lines = vec![long.as_str(), "// short", "return 1;"];
        let mut shared = HashMap::new();
        let read: usize = (0..2_000)
            .flat_map(|_| body_of(&entity_on(1, 1), &lines, &mut shared))
            .map(str::len)
            .sum();
        assert!(
            read <= LONG_LINE_OWNERS as usize * long.len(),
            "{read} bytes read for a {}-byte line",
            long.len()
        );
        // Short lines are every entity's, as before.
        assert_eq!(
            body_of(&entity_on(2, 3), &lines, &mut shared),
            ["// short", "return 1;"]
        );
        assert_eq!(
            body_of(&entity_on(2, 3), &lines, &mut shared),
            ["// short", "return 1;"]
        );
    }

    #[test]
    fn declarations_without_bodies_are_told_from_functions_with_them() {
        use crate::parse::Lang::*;
        let declared =
            |lang, text: &str| is_declaration(&text.lines().collect::<Vec<_>>(), Some(lang));
        for (lang, text) in [
            (CSharp, "void Validate(TypeMap map, bool strict = false);"),
            (CSharp, "bool AllowNull { get; set; }"),
            (Java, "JsonToken nextToken() throws IOException;"),
            (TypeScript, "format(template?: string): string"),
            (Kotlin, "fun close(scope: Scope, force: Boolean = false)"),
            (Swift, "func validate() throws -> Bool"),
            (
                Rust,
                "fn render(&self,\n    out: &mut String) -> Result<(), Error>;",
            ),
            (Python, "def close(self) -> None: ..."),
            (Python, "def close(self):\n    pass"),
        ] {
            assert!(declared(lang, text), "{lang:?}: {text}");
        }
        for (lang, text) in [
            (CSharp, "public int Count => _items.Count;"),
            (CSharp, "int Count { get { return _n; } }"),
            (JavaScript, "meridiem: hour => (hour > 12 ? 'PM' : 'AM'),"),
            (Kotlin, "fun size() = items.size"),
            (Scala, "def size: Int = items.size"),
            (Go, "func (s *Set) Len() int { return len(s.m) }"),
            (Python, "def name(self): return self._name"),
            (Ruby, "def name\n  @name\nend"),
        ] {
            assert!(!declared(lang, text), "{lang:?}: {text}");
        }
        // A long signature is a function's head, whatever it holds.
        assert!(!declared(Java, "void a(\n int b,\n int c,\n int d);"));
    }
}
