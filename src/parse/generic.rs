//! The walk shared by languages whose definitions, calls and imports are
//! each one node kind: C#, PHP, Ruby, Kotlin, Swift, Scala and Bash. Each
//! of those modules says what a node means ([`Grammar`]); this module
//! turns a tree into entities with that.
//!
//! Every definition found is an entity, at any depth (up to
//! [`super::MAX_NESTING`]): a C# local function, a Kotlin function inside
//! a function. A call belongs to the innermost definition around it; a
//! call on a receiver whose type a declaration in scope names is typed.

use super::ParsedFile;
use super::{line_span, node_text, squash, Call, EntityBuilder, Import, Kind, ParsedEntity};
use std::collections::HashMap;
use tree_sitter::Node;

/// What a definition node declares.
pub(crate) struct Def<'t> {
    pub name: String,
    /// Written before the name, inside the enclosing scope: Kotlin's
    /// `fun String.shout()` is `String.shout`, Ruby's `class A::B` is `A.B`.
    pub owner: Option<String>,
    pub kind: DefKind,
    pub flavor: &'static str,
    /// Where members and calls are found; `None` reads the whole node.
    pub body: Option<Node<'t>>,
    pub bases: Vec<Vec<String>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum DefKind {
    /// A class, struct, interface, module, namespace, extension…
    Type,
    /// A function, method, constructor, property body…; a method when a
    /// type encloses it or it has an owner.
    Function,
}

/// One language's reading of its syntax tree.
pub(crate) trait Grammar: super::Language {
    fn language(&self) -> tree_sitter::Language;
    /// The definition `node` is, if it is one.
    fn definition<'t>(&self, node: Node<'t>, src: &str) -> Option<Def<'t>>;
    /// The call `node` is, if it is one.
    fn call(&self, node: Node, src: &str) -> Option<Call>;
    /// The imports `node` makes; `None` if it is no import.
    fn imports(&self, node: Node, src: &str) -> Option<Vec<Import>>;
    /// A prefix every later top-level definition of the file takes (a C#
    /// file-scoped `namespace A.B;`).
    fn file_prefix(&self, _node: Node, _src: &str) -> Option<String> {
        None
    }
    /// Names `node` declares with a type (a field, a parameter, a typed or
    /// constructed local), for typing calls on them.
    fn declares(&self, _node: Node, _src: &str, _out: &mut Vec<(String, Vec<String>)>) {}
    /// Trees of parts of a source that parsed with errors as a whole, to
    /// read instead of the whole tree, each over the same bytes and lines
    /// (see bash); empty to read the whole tree as it is.
    fn parts(&self, _src: &str) -> Vec<tree_sitter::Tree> {
        Vec::new()
    }
}

/// Declared types by name, per definition.
type Types = HashMap<String, Vec<String>>;

/// Parse `src` as `g` reads it.
pub(crate) fn parse(g: &dyn Grammar, src: &str) -> ParsedFile {
    let Some(tree) = super::syntax_tree(g.language(), src) else {
        return ParsedFile::default();
    };
    let root = tree.root_node();
    let mut w = Walk {
        g,
        src,
        out: ParsedFile::of_tree(root, src),
        entities: EntityBuilder::new(),
        types: HashMap::new(),
        file_prefix: None,
    };
    let parts = if root.has_error() {
        g.parts(src)
    } else {
        Vec::new()
    };
    if parts.is_empty() {
        w.run(root);
    }
    for part in &parts {
        w.run(part.root_node());
    }
    let Walk {
        mut out, entities, ..
    } = w;
    out.entities = entities.finish(src);
    out
}

struct Walk<'a> {
    g: &'a dyn Grammar,
    src: &'a str,
    out: ParsedFile,
    entities: EntityBuilder,
    /// Declared types, by the definition they are declared in (`None`:
    /// the file).
    types: HashMap<Option<usize>, Types>,
    file_prefix: Option<String>,
}

impl Walk<'_> {
    fn run(&mut self, root: Node) {
        let mut stack: Vec<(Node, Option<usize>)> = vec![(root, None)];
        let mut cursor = root.walk();
        while let Some((node, scope)) = stack.pop() {
            if node.kind().contains("comment") {
                continue;
            }
            if let Some(imports) = self.g.imports(node, self.src) {
                self.out.imports.extend(imports);
                continue;
            }
            if scope.is_none() {
                if let Some(p) = self.g.file_prefix(node, self.src) {
                    self.file_prefix = Some(p);
                    continue;
                }
            }
            let mut declared = Vec::new();
            self.g.declares(node, self.src, &mut declared);
            for (name, ty) in declared {
                self.types.entry(scope).or_default().insert(name, ty);
            }
            if let Some(def) = self.g.definition(node, self.src) {
                let body = def.body;
                let inner = Some(self.define(node, def, scope));
                match body {
                    Some(b) => {
                        self.declared_outside(node, b, inner);
                        stack.push((b, inner));
                    }
                    // No separate body: the node's own children hold its
                    // members and calls.
                    None => self.push_children(&mut stack, node, inner, &mut cursor),
                }
                continue;
            }
            if let Some(call) = self.g.call(node, self.src) {
                let call = self.typed(call, scope);
                match scope {
                    Some(s) => self.entities.get_mut(s).calls.push(call),
                    None => self.out.file_calls.push(call),
                }
            }
            self.push_children(&mut stack, node, scope, &mut cursor);
        }
    }

    /// What a definition declares outside its body (its parameters, a
    /// class's constructor parameters), in scope inside it.
    fn declared_outside(&mut self, def: Node, body: Node, scope: Option<usize>) {
        let mut declared = Vec::new();
        let mut stack = vec![def];
        let mut c = def.walk();
        while let Some(n) = stack.pop() {
            if n == body {
                continue;
            }
            self.g.declares(n, self.src, &mut declared);
            stack.extend(n.named_children(&mut c));
        }
        for (name, ty) in declared {
            self.types.entry(scope).or_default().insert(name, ty);
        }
    }

    fn push_children<'t>(
        &self,
        stack: &mut Vec<(Node<'t>, Option<usize>)>,
        node: Node<'t>,
        scope: Option<usize>,
        cursor: &mut tree_sitter::TreeCursor<'t>,
    ) {
        let before = stack.len();
        stack.extend(node.named_children(cursor).map(|c| (c, scope)));
        stack[before..].reverse();
    }

    /// `x.f()` where a declaration in scope says what `x` is.
    fn typed(&self, call: Call, scope: Option<usize>) -> Call {
        let Call::Attr { recv, name } = call else {
            return call;
        };
        let mut at = scope;
        loop {
            if let Some(ty) = self.types.get(&at).and_then(|t| t.get(&recv)) {
                return Call::Typed {
                    ty: ty.clone(),
                    name,
                };
            }
            match at {
                Some(s) => at = self.entities.get(s).parent,
                None => return Call::Attr { recv, name },
            }
        }
    }

    fn define(&mut self, node: Node, def: Def, scope: Option<usize>) -> usize {
        let sep = self.g.separator();
        let mut parts: Vec<&str> = Vec::new();
        match scope {
            Some(s) => parts.push(self.entities.prefix_of(s)),
            None => parts.extend(self.file_prefix.as_deref()),
        }
        parts.extend(def.owner.as_deref());
        parts.push(&def.name);
        let qualname = parts.join(sep);
        let enclosing_type = scope.filter(|&s| self.entities.get(s).kind == Kind::Class);
        let owner_type = match (&def.owner, enclosing_type) {
            (Some(o), None) => Some(o.clone()),
            (_, Some(t)) => Some(self.entities.prefix_of(t).to_string()),
            (None, None) => None,
        };
        let kind = match def.kind {
            DefKind::Type => Kind::Class,
            DefKind::Function if owner_type.is_some() => Kind::Method,
            DefKind::Function => Kind::Function,
        };
        let (start_line, end_line) = line_span(node);
        let end = def.body.map_or(node.end_byte(), |b| b.start_byte());
        let src = self.src;
        self.entities.push(ParsedEntity {
            qualname,
            name: def.name,
            kind,
            flavor: def.flavor.to_string(),
            start_line,
            end_line,
            signature: squash(src.get(node.start_byte()..end).unwrap_or(""), 200),
            doc: doc_above(node, src),
            hash: String::new(),
            parent: scope,
            calls: Vec::new(),
            bases: def.bases,
            owner_type: (kind == Kind::Method).then_some(owner_type).flatten(),
            byte_range: (node.start_byte(), node.end_byte()),
        })
    }
}

/// The first sentence of the comments directly above `node` (`///`, `//`,
/// `#`, `/** … */`), their markers removed.
pub(crate) fn doc_above(node: Node, src: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let mut at = node.start_byte();
    // A comment before a first member may sit in the parent, before the
    // body that holds the member (Ruby's `module M # …` then `class`).
    let mut prev = node.prev_named_sibling().or_else(|| {
        let parent = node.parent()?;
        (parent.start_byte() == node.start_byte()).then(|| parent.prev_named_sibling())?
    });
    while let Some(p) =
        prev.filter(|p| p.kind().contains("comment") && adjacent(src, p.end_byte(), at))
    {
        let text = node_text(p, src);
        if text.starts_with("#!") {
            break;
        }
        lines.splice(0..0, text.lines());
        at = p.start_byte();
        prev = p.prev_named_sibling();
    }
    let cleaned: Vec<&str> = lines
        .iter()
        .map(|l| {
            l.trim()
                .trim_start_matches("/**")
                .trim_start_matches("/*")
                .trim_end_matches("*/")
                .trim_start_matches(['/', '#', '*'])
                .trim()
        })
        .take_while(|l| !l.starts_with('@'))
        .collect();
    super::first_sentence(&cleaned.join("\n"))
}

/// Whether only spacing lies between two offsets, with no empty line: a
/// blank line parts a comment from what follows, but a line of spaces
/// (where Kotlin's annotations were blanked) does not.
fn adjacent(src: &str, from: usize, to: usize) -> bool {
    let Some(gap) = src.get(from..to).filter(|g| g.trim().is_empty()) else {
        return false;
    };
    // The first piece ends the comment's line, the last starts the node's.
    let lines: Vec<&str> = gap.split('\n').collect();
    lines.len() <= 2 || lines[1..lines.len() - 1].iter().all(|l| !l.is_empty())
}

/// The text of `node`'s child in `field`.
pub(crate) fn field_text<'s>(node: Node, field: &str, src: &'s str) -> Option<&'s str> {
    node.child_by_field_name(field).map(|n| node_text(n, src))
}

/// The first named child of one of `kinds`.
pub(crate) fn child_of_kind<'t>(node: Node<'t>, kinds: &[&str]) -> Option<Node<'t>> {
    let mut c = node.walk();
    let found = node
        .named_children(&mut c)
        .find(|n| kinds.contains(&n.kind()));
    found
}

/// Whether `node`'s `modifiers` child holds `word` (Kotlin's `data`,
/// Scala's `implicit`).
pub(crate) fn has_modifier(node: Node, src: &str, word: &str) -> bool {
    child_of_kind(node, &["modifiers"])
        .is_some_and(|m| node_text(m, src).split_whitespace().any(|w| w == word))
}

/// Every named descendant of one of `kinds` under `node`, in source order,
/// not entering those found.
pub(crate) fn descendants_of_kind<'t>(node: Node<'t>, kinds: &[&str]) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut stack = vec![node];
    let mut c = node.walk();
    while let Some(n) = stack.pop() {
        if n != node && kinds.contains(&n.kind()) {
            out.push(n);
            continue;
        }
        let before = stack.len();
        stack.extend(n.named_children(&mut c));
        stack[before..].reverse();
    }
    out
}

/// A type as written, as its segments without generic arguments or
/// nullability: `a.b.C<T>?` → `["a", "b", "C"]`.
pub(crate) fn type_segments(text: &str) -> Option<Vec<String>> {
    let base = text.split(['<', '[', '(', '?', '!', ' ']).next()?.trim();
    let segs: Vec<String> = base
        .split(['.', ':', '\\'])
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let ok = !segs.is_empty()
        && segs
            .iter()
            .all(|s| s.chars().all(|c| c.is_alphanumeric() || c == '_'));
    ok.then_some(segs)
}

/// Whether `name` names a type by the convention of Kotlin, Swift and
/// Scala: capitalised.
pub(crate) fn names_type(name: &str) -> bool {
    name.starts_with(char::is_uppercase)
}

/// A call of `name` on the bare identifier `recv`: on a type
/// (`Repo.open()`) when it names one, else on a value.
pub(crate) fn on_identifier(recv: &str, name: String) -> Call {
    if names_type(recv) {
        Call::Typed {
            ty: vec![recv.to_string()],
            name,
        }
    } else {
        Call::Attr {
            recv: recv.to_string(),
            name,
        }
    }
}

/// The type a call of `callee` constructs (`Repo()`), if it names one.
pub(crate) fn constructed(callee: &str) -> Option<Vec<String>> {
    names_type(callee).then(|| vec![callee.to_string()])
}
