//! C and C++. A definition is named by its enclosing classes and its
//! declarator as written, joined by `::`, template arguments dropped:
//! `basic_json::dump`, `A::g`, `operator==`. Bodiless declarations are not
//! entities; function-like macros are, of kind macro. Attribute-like
//! macros (`FMT_CONSTEXPR auto f()`) are blanked before parsing, which
//! keeps every byte and line where it was.

use super::ParsedEntity;
use super::{line_span, node_text, squash, Declaration, EntityBuilder, Import, Kind};
use super::{Lang, Language, ParsedFile};
use std::collections::HashSet;
use tree_sitter::Node;

mod blank;
mod calls;
mod repair;

use blank::{blank_macros, line_starts, nested_directives_blanked, unbalanced_branches_blanked};
use calls::{calls_in, declare_params, macro_calls, Types};

pub struct C;
pub struct Cpp;

impl Language for C {
    fn lang(&self) -> Lang {
        Lang::C
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".c"]
    }
    fn separator(&self) -> &'static str {
        "::"
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        parse(tree_sitter_c::LANGUAGE.into(), source)
    }
}

impl Language for Cpp {
    fn lang(&self) -> Lang {
        Lang::Cpp
    }
    /// `.h` is here for [`Lang::from_path`]; a C repository's headers are
    /// read as C (see [`super::header_lang`]).
    fn extensions(&self) -> &'static [&'static str] {
        &[
            ".h", ".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".inl",
            ".tpp",
        ]
    }
    fn separator(&self) -> &'static str {
        "::"
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        parse(tree_sitter_cpp::LANGUAGE.into(), source)
    }
}

fn parse(language: tree_sitter::Language, original: &str) -> ParsedFile {
    let blanked = nested_directives_blanked(&unbalanced_branches_blanked(&blank_macros(original)));
    let Some((tree, repaired)) = repair::parse(language, blanked) else {
        return ParsedFile::default();
    };
    let src = &repaired;
    let root = tree.root_node();
    let mut out = ParsedFile::of_tree(root, src);
    out.imports = includes(original);
    let mut entities = EntityBuilder::new();
    // (node, enclosing class, where a `template <…>` in front of it starts)
    let mut stack: Vec<(Node, Option<usize>, Option<Node>)> = vec![(root, None, None)];
    let mut cursor = root.walk();
    while let Some((node, class, template)) = stack.pop() {
        let span = template.unwrap_or(node);
        if matches!(node.kind(), "declaration" | "field_declaration") {
            declare(node, span, class, src, &entities, &mut out.declarations);
        }
        match node.kind() {
            "function_definition" => define_function(node, span, class, src, &mut entities),
            "preproc_function_def" => define_macro(node, class, src, &mut entities),
            "class_specifier" | "struct_specifier" | "union_specifier" | "enum_specifier" => {
                let Some(idx) = define_class(node, span, class, src, &mut entities) else {
                    continue;
                };
                if let Some(body) = node.child_by_field_name("body") {
                    let before = stack.len();
                    stack.extend(
                        body.named_children(&mut cursor)
                            .map(|c| (c, Some(idx), None)),
                    );
                    stack[before..].reverse();
                }
            }
            "type_definition" => {
                // `typedef struct {…} Foo;` names the struct; other
                // typedefs are classes too.
                define_typedef(node, class, src, &mut entities, &mut stack);
            }
            // A friend's prototype declares nothing of this class's; an
            // inline friend definition is still a definition.
            "friend_declaration" => {
                let before = stack.len();
                stack.extend(
                    node.named_children(&mut cursor)
                        .filter(|c| !matches!(c.kind(), "comment" | "declaration"))
                        .map(|c| (c, class, None)),
                );
                stack[before..].reverse();
            }
            "template_declaration" => {
                let before = stack.len();
                stack.extend(
                    node.named_children(&mut cursor)
                        .map(|c| (c, class, Some(template.unwrap_or(node)))),
                );
                stack[before..].reverse();
            }
            "translation_unit"
            | "declaration_list"
            | "namespace_definition"
            | "linkage_specification"
            | "preproc_if"
            | "preproc_ifdef"
            | "preproc_else"
            | "preproc_elif"
            | "declaration"
            | "field_declaration"
            | "field_declaration_list"
            | "export_declaration"
            | "preproc_elifdef"
            // What tree-sitter could not fit still holds whole definitions.
            | "ERROR" => {
                let before = stack.len();
                stack.extend(
                    node.named_children(&mut cursor)
                        .filter(|c| c.kind() != "comment")
                        .map(|c| (c, class, None)),
                );
                stack[before..].reverse();
            }
            _ => {}
        }
    }
    out.entities = entities.finish(src);
    out
}

fn define_function(
    node: Node,
    span: Node,
    class: Option<usize>,
    src: &str,
    entities: &mut EntityBuilder,
) {
    let Some(decl) = node.child_by_field_name("declarator") else {
        return;
    };
    let Some(name) = declarator_name(decl, src) else {
        return;
    };
    let owner = class.map(|c| entities.prefix_of(c).to_string());
    let qualname = match &owner {
        Some(o) => format!("{o}::{name}"),
        None => name.clone(),
    };
    let owner_type = owner.or_else(|| name.rsplit_once("::").map(|(o, _)| o.to_string()));
    let kind = if owner_type.is_some() {
        Kind::Method
    } else {
        Kind::Function
    };
    let body = node.child_by_field_name("body");
    let mut types = Types::new();
    if let Some(params) = find_params(decl) {
        declare_params(params, src, &mut types);
    }
    let calls = body
        .map(|b| calls_in(b, src, &mut types))
        .unwrap_or_default();
    if let Some(c) = class.filter(|_| entities.too_deep(class)) {
        entities.get_mut(c).calls.extend(calls);
        return;
    }
    let bare = name.rsplit("::").next().unwrap_or(&name).to_string();
    let e = entity(
        span, node, src, bare, qualname, kind, "function", body, class,
    );
    entities.push(ParsedEntity {
        owner_type,
        calls,
        ..e
    });
}

/// A prototype or in-class method declaration: no entity, but where a
/// reader of the definition looks for its contract. A friend's is not its
/// class's, and `int (*f)(int)` declares a pointer.
fn declare(
    node: Node,
    span: Node,
    class: Option<usize>,
    src: &str,
    entities: &EntityBuilder,
    out: &mut Vec<Declaration>,
) {
    let mut cursor = node.walk();
    for decl in node.children_by_field_name("declarator", &mut cursor) {
        if !declares_function(decl) {
            continue;
        }
        if let Some(name) = declarator_name(decl, src) {
            let (start_line, end_line) = line_span(span);
            out.push(Declaration {
                qualname: qualify(entities, class, &name),
                start_line,
                end_line,
            });
        }
    }
}

/// Whether a declarator declares a function: under pointers and
/// references, a function declarator whose own declarator is a name.
fn declares_function(decl: Node) -> bool {
    let mut d = decl;
    while matches!(d.kind(), "pointer_declarator" | "reference_declarator") {
        let Some(inner) = d.child_by_field_name("declarator") else {
            return false;
        };
        d = inner;
    }
    d.kind() == "function_declarator"
        && d.child_by_field_name("declarator")
            .is_some_and(|n| n.kind() != "parenthesized_declarator")
}

/// A function-like macro, `#define CHECK(x) …`, is a definition callers
/// name as they name functions. Its text is no tree, so its calls are the
/// words before a `(` that are not its parameters.
fn define_macro(node: Node, class: Option<usize>, src: &str, entities: &mut EntityBuilder) {
    let Some(name) = node
        .child_by_field_name("name")
        .map(|n| node_text(n, src).to_string())
        .filter(|n| !n.is_empty())
    else {
        return;
    };
    let mut params = HashSet::new();
    if let Some(p) = node.child_by_field_name("parameters") {
        let mut c = p.walk();
        params.extend(p.named_children(&mut c).map(|n| node_text(n, src)));
    }
    let body = node.child_by_field_name("value");
    let calls = body
        .map(|b| macro_calls(node_text(b, src), &params))
        .unwrap_or_default();
    let qualname = qualify(entities, class, &name);
    let e = entity(
        node,
        node,
        src,
        name,
        qualname,
        Kind::Macro,
        "define",
        body,
        class,
    );
    // The header ends where the text does, often at a `\` continuation.
    let signature = e.signature.trim_end_matches('\\').trim_end().to_string();
    entities.push(ParsedEntity {
        calls,
        signature,
        ..e
    });
}

/// `name` inside the class at `class`, if any: `A::Inner`.
fn qualify(entities: &EntityBuilder, class: Option<usize>, name: &str) -> String {
    match class {
        Some(c) => format!("{}::{name}", entities.prefix_of(c)),
        None => name.to_string(),
    }
}

fn define_class(
    node: Node,
    span: Node,
    class: Option<usize>,
    src: &str,
    entities: &mut EntityBuilder,
) -> Option<usize> {
    // A forward declaration or an anonymous type is not a class entity.
    let body = node.child_by_field_name("body")?;
    let name = normalize(node_text(node.child_by_field_name("name")?, src));
    if name.is_empty() {
        return None;
    }
    if entities.too_deep(class) {
        return class; // its members belong to the ancestor
    }
    let qualname = qualify(entities, class, &name);
    let flavor = node.kind().trim_end_matches("_specifier");
    let mut bases = Vec::new();
    let mut c = node.walk();
    for part in node.named_children(&mut c) {
        if part.kind() == "base_class_clause" {
            let mut cc = part.walk();
            for b in part.named_children(&mut cc) {
                if matches!(
                    b.kind(),
                    "type_identifier" | "qualified_identifier" | "template_type"
                ) {
                    let segs: Vec<String> = normalize(node_text(b, src))
                        .split("::")
                        .map(str::to_string)
                        .collect();
                    bases.push(segs);
                }
            }
        }
    }
    let bare = name.rsplit("::").next().unwrap_or(&name).to_string();
    let e = entity(
        span,
        node,
        src,
        bare,
        qualname,
        Kind::Class,
        flavor,
        Some(body),
        class,
    );
    Some(entities.push(ParsedEntity { bases, ..e }))
}

fn define_typedef<'t>(
    node: Node<'t>,
    class: Option<usize>,
    src: &str,
    entities: &mut EntityBuilder,
    stack: &mut Vec<(Node<'t>, Option<usize>, Option<Node<'t>>)>,
) {
    // A name tree-sitter had to supply (`} __attribute__((packed)) T;`)
    // is empty, and an empty name would be the file's own id.
    let Some(name) = node
        .child_by_field_name("declarator")
        .filter(|d| d.kind() == "type_identifier" && !d.is_missing())
        .map(|d| node_text(d, src).to_string())
        .filter(|n| !n.is_empty())
    else {
        return;
    };
    let ty = node.child_by_field_name("type");
    // `typedef struct Foo {…} Foo_t;`: a named struct is its own entity,
    // and `typedef struct Foo {…} Foo;` only that.
    if let Some(t) = ty.filter(|t| t.child_by_field_name("name").is_some()) {
        stack.push((t, class, None));
        let same = t
            .child_by_field_name("name")
            .is_some_and(|n| node_text(n, src) == name);
        if same && t.child_by_field_name("body").is_some() {
            return;
        }
    }
    let qualname = qualify(entities, class, &name);
    let body = ty.and_then(|t| t.child_by_field_name("body"));
    let e = entity(
        node,
        node,
        src,
        name,
        qualname,
        Kind::Class,
        "typedef",
        body,
        class,
    );
    entities.push(e);
}

#[allow(clippy::too_many_arguments)]
fn entity(
    span: Node,
    def: Node,
    src: &str,
    name: String,
    qualname: String,
    kind: Kind,
    flavor: &str,
    body: Option<Node>,
    parent: Option<usize>,
) -> ParsedEntity {
    let (start_line, end_line) = line_span(span);
    let header_end = body.map(|b| b.start_byte()).unwrap_or(def.end_byte());
    ParsedEntity {
        qualname,
        name,
        kind,
        flavor: flavor.to_string(),
        start_line,
        end_line,
        signature: squash(src.get(span.start_byte()..header_end).unwrap_or(""), 200),
        doc: doc_above(span, src),
        hash: String::new(),
        parent,
        calls: Vec::new(),
        bases: Vec::new(),
        owner_type: None,
        byte_range: (span.start_byte(), span.end_byte()),
    }
}

/// The name a declarator declares, as written: `A<T>::g` → `A::g`,
/// `operator ==` → `operator==`, `~A`.
fn declarator_name(decl: Node, src: &str) -> Option<String> {
    let mut d = decl;
    // Unwrap pointers, references and the function declarator itself.
    const WRAPPERS: &[&str] = &[
        "function_declarator",
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
    ];
    while WRAPPERS.contains(&d.kind()) {
        d = d
            .child_by_field_name("declarator")
            .or_else(|| d.named_child(0))?;
    }
    match d.kind() {
        "identifier"
        | "field_identifier"
        | "qualified_identifier"
        | "destructor_name"
        | "operator_name"
        | "template_function"
        | "operator_cast" => Some(normalize(node_text(d, src))).filter(|n| !n.is_empty()),
        _ => None,
    }
}

/// The parameter list of a function declarator, under any wrapping.
fn find_params(decl: Node) -> Option<Node> {
    let mut d = decl;
    loop {
        if d.kind() == "function_declarator" {
            return d.child_by_field_name("parameters");
        }
        d = d.child_by_field_name("declarator")?;
    }
}

/// Template arguments and whitespace dropped; operators written without a
/// space before a symbol.
pub(super) fn normalize(name: &str) -> String {
    let (head, op) = match name.find("operator") {
        Some(i)
            if name[i + 8..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_') =>
        {
            (&name[..i], Some(&name[i + 8..]))
        }
        _ => (name, None),
    };
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    let mut gap = false;
    for c in head.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            c if depth == 0 && c.is_whitespace() => gap = !out.is_empty(),
            c if depth == 0 => {
                // Two names apart are a type the parser took into the
                // name (`T<C>\nf` read as `T<C>::f`): the last is the name.
                let word = |c: char| c.is_alphanumeric() || c == '_';
                if gap && out.ends_with(word) && word(c) {
                    out.clear();
                }
                gap = false;
                out.push(c);
            }
            _ => {}
        }
    }
    if let Some(rest) = op {
        let rest = rest.trim();
        out.push_str("operator");
        if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            out.push(' ');
            out.push_str(&rest.split_whitespace().collect::<Vec<_>>().join(" "));
        } else {
            out.extend(rest.chars().filter(|c| !c.is_whitespace()));
        }
    }
    out
}

/// Every `#include "…"` and `#include <…>` line, in source order. Read
/// from the lines, not the tree: an include inside an initialiser (an
/// x-macro list) or a broken parse still names a file.
fn includes(src: &str) -> Vec<Import> {
    line_starts(src)
        .filter_map(|(_, line)| {
            let rest = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("include")?.trim_start();
            let (close, system) = match rest.chars().next()? {
                '"' => ('"', false),
                '<' => ('>', true),
                _ => return None,
            };
            let path = &rest[1..1 + rest[1..].find(close)?];
            (!path.is_empty()).then(|| Import::Include {
                path: path.to_string(),
                system,
            })
        })
        .collect()
}

/// The `///`, `//!` or `/** */` comment directly above a definition.
fn doc_above(node: Node, src: &str) -> String {
    let mut lines = Vec::new();
    // The run of doc comments nearest the definition.
    for t in super::comments_above(node, src) {
        let doc = if let Some(r) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) {
            r.trim().to_string()
        } else if let Some(r) = block_doc(t) {
            r.trim_end_matches("*/")
                .lines()
                .map(|l| l.trim().trim_start_matches('*').trim())
                .filter(|l| !l.starts_with('@') && !l.starts_with('\\'))
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            break;
        };
        lines.push(doc);
    }
    lines.reverse();
    super::first_sentence(&lines.join("\n"))
}

/// The text of a `/**` or `/*!` comment, past its opening. Matched in two
/// steps so no literal here opens a comment to a tool that scans Rust text.
fn block_doc(comment: &str) -> Option<&str> {
    let rest = comment.strip_prefix('/')?;
    rest.strip_prefix("**").or_else(|| rest.strip_prefix("*!"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::Call;

    fn names(f: &ParsedFile) -> Vec<(&str, Kind, u32, u32)> {
        f.entities
            .iter()
            .map(|e| (e.qualname.as_str(), e.kind, e.start_line, e.end_line))
            .collect()
    }

    #[test]
    fn cpp_names_follow_classes_and_declarators_as_written() {
        let f = Cpp.parse(
            "x.hpp",
            r#"FMT_BEGIN_NAMESPACE
namespace detail {
template <typename T>
class A : public Base<T>, detail::Mixin {
 public:
  A() {}
  void declared();
  friend bool operator==(const A&, const A&) { return true; }
  struct Inner { int f() { return 1; } };
};
}
template <typename T> void A<T>::g() { helper(); this->declared(); }
bool operator ==(int a, int b) { return a == b; }
void* operator new(size_t n) { return nullptr; }
FMT_CONSTEXPR auto f(int x) -> int { return x; }
really_inline bool g() { return detail::h(); }
typedef struct { int x; } Point;
FMT_END_NAMESPACE
"#,
        );
        use Kind::*;
        assert_eq!(
            names(&f),
            [
                ("A", Class, 3, 10),
                ("A::A", Method, 6, 6),
                ("A::operator==", Method, 8, 8),
                ("A::Inner", Class, 9, 9),
                ("A::Inner::f", Method, 9, 9),
                ("A::g", Method, 12, 12),
                ("operator==", Function, 13, 13),
                ("operator new", Function, 14, 14),
                ("f", Function, 15, 15),
                ("g", Function, 16, 16),
                ("Point", Class, 17, 17),
            ]
        );
        assert_eq!(f.entities[0].bases, [vec!["Base"], vec!["detail", "Mixin"]]);
        let g = Cpp.parse(
            "c.h",
            "struct text_style {\n  FMT_CONSTEXPR text_style(int em) FMT_NOEXCEPT {}\n  int get() const FMT_OVERRIDE { return 1; }\n};\n",
        );
        assert_eq!(
            names(&g),
            [
                ("text_style", Class, 1, 4),
                ("text_style::text_style", Method, 2, 2),
                ("text_style::get", Method, 3, 3),
            ]
        );
        assert_eq!(
            f.entities[5].calls,
            [
                Call::Name("helper".into()),
                Call::SelfMethod("declared".into())
            ]
        );
        assert_eq!(
            f.entities[9].calls,
            [Call::Typed {
                ty: vec!["detail".into()],
                name: "h".into()
            }]
        );
    }

    #[test]
    fn prototypes_and_in_class_declarations_are_recorded_under_their_definitions_names() {
        let f = Cpp.parse(
            "json.hpp",
            "namespace nl {\nclass basic_json {\n public:\n  void dump(int indent,\n            char c) const;\n  template <typename T>\n  T get() const;\n  friend void swap(basic_json&, basic_json&);\n  int (*hook)(int);\n  int size;\n};\n}\nchar *jv_dump_string(int x, int flags), *other(void);\nextern int (*handler)(int);\nint counter;\n",
        );
        let got: Vec<_> = f
            .declarations
            .iter()
            .map(|d| (d.qualname.as_str(), d.start_line, d.end_line))
            .collect();
        assert_eq!(
            got,
            [
                ("basic_json::dump", 4, 5),
                ("basic_json::get", 6, 7),
                ("jv_dump_string", 13, 13),
                ("other", 13, 13),
            ]
        );
        assert!(f.entities.iter().all(|e| e.qualname == "basic_json"));
    }

    #[test]
    fn a_macro_seen_in_attribute_position_is_blanked_wherever_it_stands_before_a_name() {
        let f = Cpp.parse(
            "color.h",
            r#"class FMT_API text_style {
 public:
  FMT_CONSTEXPR text_style(emphasis em = emphasis()) FMT_NOEXCEPT
      : set_foreground_color(), ems(em) {}
  FMT_CONSTEXPR_DECL
  text_style &operator|=(const text_style &rhs) FMT_NOEXCEPT { return *this; }
  friend FMT_CONSTEXPR
  text_style operator|(text_style lhs, const text_style &rhs) { return lhs; }
  FMT_CONSTEXPR bool has_foreground() const FMT_NOEXCEPT { return true; }
  FMT_CONSTEXPR rgb get_foreground() const { return foreground_color; }
  iterator end() const FMT_NOEXCEPT { return str_.end(); }
  void lock(const char* file)
      GTEST_LOCK_EXCLUDED_(&UnitTest::mutex_) { run(file); }
};
template <typename Char>
FMT_CONSTEXPR ansi_color_escape<Char>
make_foreground_color(rgb color) FMT_NOEXCEPT {
  return ansi_color_escape<Char>(color);
}
"#,
        );
        use Kind::*;
        assert_eq!(
            names(&f),
            [
                ("text_style", Class, 1, 14),
                ("text_style::text_style", Method, 3, 4),
                ("text_style::operator|=", Method, 6, 6),
                ("text_style::operator|", Method, 8, 8),
                ("text_style::has_foreground", Method, 9, 9),
                ("text_style::get_foreground", Method, 10, 10),
                ("text_style::end", Method, 11, 11),
                ("text_style::lock", Method, 12, 13),
                ("make_foreground_color", Function, 15, 19),
            ]
        );
        // A capitalised type is not a macro: `FILE *open_log()`.
        let g = C.parse(
            "log.c",
            "static FILE *open_log(void) { return 0; }
DWORD count(void) { return 1; }
",
        );
        assert_eq!(
            names(&g),
            [("open_log", Function, 1, 1), ("count", Function, 2, 2)]
        );
    }

    #[test]
    fn members_of_a_second_specialisation_carry_the_number_themselves() {
        let f = Cpp.parse(
            "chrono.h",
            "template <typename T> struct formatter { int parse() { return 0; } };\ntemplate <> struct formatter<tm> {\n  int parse() { return 1; }\n  int format() { return 2; }\n};\n",
        );
        use Kind::*;
        assert_eq!(
            names(&f),
            [
                ("formatter", Class, 1, 1),
                ("formatter::parse", Method, 1, 1),
                ("formatter#2", Class, 2, 5),
                ("formatter::parse#2", Method, 3, 3),
                ("formatter::format", Method, 4, 4),
            ]
        );
        assert_eq!(f.entities[4].owner_type.as_deref(), Some("formatter"));
    }

    #[test]
    fn a_definition_split_across_conditional_branches_keeps_its_last_branch() {
        let f = C.parse(
            "main.c",
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\n#ifdef WIN32\nint wmain(int argc) {\n  return umain(argc);\n}\nint umain(int argc) {\n#else /*}*/\nint main(int argc) {\n#endif\n  run(argc);\n  return 0;\n}\n",
        );
        assert_eq!(names(&f), [("main", Kind::Function, 10, 14)]);
        assert_eq!(f.entities[0].calls, [Call::Name("run".into())]);
        // A macro's braces are not the code's.
        let g = Cpp.parse(
            "x.h",
            "#ifdef X\n#define BEGIN \\\n  namespace fmt {\nint g() { return 2; }\n#endif\nint f() { return 1; }\n",
        );
        assert_eq!(
            names(&g),
            [("g", Kind::Function, 4, 4), ("f", Kind::Function, 6, 6)]
        );
    }

    #[test]
    fn directives_inside_braces_and_braces_opened_under_one_ifdef_do_not_hide_definitions() {
        let f = C.parse(
            "builtin.c",
            r#"static const struct cfunction function_list[] = {
#include "libm.h"
#define BINOP(name) CFUNC(f_ ## name, "_" #name, 3),
BINOPS
#undef BINOP
  CFUNC(f_dump, "tojson", 1),
};
static void dump(jv x) {
  if (nan(x)) {
    null();
  } else {
#ifdef USE_DECNUM
    if (literal(x)) {
      put(x);
    } else {
#endif
      put_number(x);
#ifdef USE_DECNUM
    }
#endif
  }
}
void jv_dumpf(jv x) { dump(x); }
"#,
        );
        assert_eq!(
            names(&f),
            [
                ("dump", Kind::Function, 8, 22),
                ("jv_dumpf", Kind::Function, 23, 23)
            ]
        );
        assert_eq!(
            f.imports,
            [Import::Include {
                path: "libm.h".into(),
                system: false
            }]
        );
    }

    #[test]
    fn c_functions_structs_typedefs_and_includes() {
        let f = C.parse(
            "x.c",
            "#include \"jv.h\"\n#include <stdio.h>\n/** Compare two values. */\nstatic int jv_cmp(jv a, jv *b) {\n  jv_free(a);\n  return b->kind;\n}\nstruct node { int v; };\ntypedef int myint;\nint proto(void);\n",
        );
        use Kind::*;
        assert_eq!(
            names(&f),
            [
                ("jv_cmp", Function, 4, 7),
                ("node", Class, 8, 8),
                ("myint", Class, 9, 9),
            ]
        );
        assert_eq!(f.entities[0].doc, "Compare two values.");
        assert_eq!(
            f.imports,
            [
                Import::Include {
                    path: "jv.h".into(),
                    system: false
                },
                Import::Include {
                    path: "stdio.h".into(),
                    system: true
                },
            ]
        );
    }

    #[test]
    fn reserved_annotations_after_a_declarator_are_blanked_but_calls_are_not() {
        let f = Cpp.parse(
            "sched.h",
            "static inline void unlock(struct rq *rq) __releases(rq->lock)\n{\n\tif (rq) __free_page(rq);\n}\n\n\
             const u8 sd[] __aligned(8) = {\n\t0x01,\n};\n\n\
             static inline u32 sid_length(const struct sid *sid)\n{\n\treturn 1;\n}\n",
        );
        assert_eq!(
            names(&f),
            [
                ("unlock", Kind::Function, 1, 4),
                ("sid_length", Kind::Function, 10, 13)
            ]
        );
        assert_eq!(f.entities[0].calls, [Call::Name("__free_page".into())]);
    }

    #[test]
    fn a_macro_s_text_keeps_its_lines_and_its_comments_do_not_end_it() {
        // `__f((x), 2)` follows a line ending in `)`, so it reads as an
        // annotation; blanking it would empty G's last line, and tree-sitter
        // would read the lines after it as the macro's.
        let f = C.parse(
            "btf.c",
            "#define F(x) \\\n\t__f((x), 1)\n#define G(x) \\\n\t__f((x), 2)\n__printf(2, 3)\nstatic void log(int a, const char *fmt, ...)\n{\n}\n",
        );
        assert_eq!(
            names(&f),
            [
                ("F", Kind::Macro, 1, 2),
                ("G", Kind::Macro, 3, 4),
                ("log", Kind::Function, 6, 8)
            ]
        );
        // tree-sitter ends a macro's text at a comment, and would read
        // `run` as a definition of the file's.
        let g = Cpp.parse(
            "registry.hpp",
            "#define REG(T)\\\n  g(); /* x */ \\\n  static void run() { go(); }\nint after() { return 1; }\n",
        );
        assert_eq!(
            names(&g),
            [("REG", Kind::Macro, 1, 3), ("after", Kind::Function, 4, 4)]
        );
    }

    #[test]
    fn a_function_like_macro_calls_what_its_text_calls_and_nothing_else() {
        let src = concat!(
            "#define LIMIT 8\n",
            "#define CHECK(x, fn) \\\n",
            "  do { if (!(x)) fail(#x, \"g(x)\"); /* h(x) */ \\\n",
            "       fn(x); p->member(x); log_##free(x); sizeof(x); } while (0 > min(x, 1))\n",
            "#ifdef WIDE\n#define W(s) L ## s\n#else\n#define W(s) s\n#endif\n",
        );
        for f in [C.parse("m.c", src), Cpp.parse("m.h", src)] {
            assert_eq!(
                names(&f),
                [
                    ("CHECK", Kind::Macro, 2, 4),
                    ("W", Kind::Macro, 6, 6),
                    ("W#2", Kind::Macro, 8, 8),
                ]
            );
            assert_eq!(
                f.entities[0].calls,
                [Call::Name("fail".into()), Call::Name("min".into())]
            );
            assert_eq!(f.entities[0].signature, "#define CHECK(x, fn)");
        }
    }

    #[test]
    fn a_loop_macro_over_a_plain_call_keeps_the_call() {
        // This parses without error, as a declaration of `g`.
        let f = C.parse("loop.c", "void f(void)\n{\n\tfor_each(x)\n\t\tg(x);\n}\n");
        assert_eq!(names(&f), [("f", Kind::Function, 1, 5)]);
        assert_eq!(f.entities[0].calls, [Call::Name("g".into())]);
    }

    #[test]
    fn a_typedef_whose_name_tree_sitter_supplied_is_no_entity() {
        let f = Cpp.parse(
            "logfile.h",
            "typedef struct {\n\tint magic;\n} __attribute__ ((__packed__)) RESTART_PAGE_HEADER;\n\ntypedef struct {\n\tint a;\n} PLAIN;\n",
        );
        assert!(
            f.entities.iter().all(|e| !e.qualname.is_empty()),
            "{:?}",
            names(&f)
        );
        assert!(
            names(&f).contains(&("PLAIN", Kind::Class, 5, 7)),
            "{:?}",
            names(&f)
        );
    }
}
