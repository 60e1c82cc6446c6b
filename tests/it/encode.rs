//! The graph a fixture encodes to: exact ids, spans, edges and hierarchy.

use crate::common::{fixture, repo_of};
use rpg::config::Config;
use rpg::encode::{self, Silent};
use rpg::git::Repo;
use rpg::graph::{EdgeKind, Graph};
use rpg::lift::offline::OfflineLifter;
use rpg::parse::{self, Kind, Lang};
use std::collections::BTreeSet;

fn encode_fixture(script: &str) -> (tempfile::TempDir, Graph, encode::EncodeReport) {
    let dir = fixture(script);
    let repo = Repo::discover(&repo_of(&dir)).unwrap();
    let head = repo.resolve("HEAD").unwrap();
    let e = encode::encode(&repo, &Config::default(), head, &OfflineLifter, &Silent).unwrap();
    (dir, e.graph, e.report)
}

fn spans(g: &Graph, path: &str) -> Vec<(String, Kind, u32, u32)> {
    g.entities
        .values()
        .filter(|e| e.path == path && e.kind != Kind::File)
        .map(|e| (e.qualname.clone(), e.kind, e.start_line, e.end_line))
        .collect()
}

fn edges(g: &Graph, kind: EdgeKind) -> BTreeSet<(String, String)> {
    g.edges
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| (e.src.to_string(), e.dst.to_string()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn python_entities_cover_nesting_decorators_blocks_and_redefinitions() {
    let (_d, g, _) = encode_fixture("python-repo.sh");
    use Kind::*;
    let expected: Vec<(String, Kind, u32, u32)> = [
        ("Request", Class, 5, 36),
        ("Request.Meta", Class, 8, 13),
        ("Request.Meta.Inner", Class, 11, 13),
        ("Request.Meta.Inner.deep", Method, 12, 13),
        ("Request.__init__", Method, 15, 16),
        // Defined under `try`/`except`.
        ("Request.fallback", Method, 35, 36),
        // The span starts at the decorator.
        ("Request.host", Method, 18, 20),
        ("Request.path", Method, 26, 27),
        ("Request.path#2", Method, 29, 30),
        ("Request.split_host", Method, 22, 23),
        ("inside_with", Function, 49, 50),
        ("parse_header", Function, 39, 41),
        ("parse_header#2", Function, 44, 45),
    ]
    .iter()
    .map(|(q, k, s, e)| (q.to_string(), *k, *s, *e))
    .collect();
    assert_eq!(spans(&g, "src/fixpkg/models.py"), expected);
    let req = &g.entities["src/fixpkg/models.py:Request"];
    assert_eq!(req.signature, "class Request(Root):");
    assert_eq!(req.doc, "A request to a server.");
    assert_eq!(req.hash.len(), 16);
    assert_eq!(
        g.files["src/fixpkg/models.py"].blob.len(),
        40,
        "every file records its blob id"
    );
}

#[test]
fn python_edges_resolve_to_exact_entities() {
    let (_d, g, _) = encode_fixture("python-repo.sh");
    let m = "src/fixpkg/models.py";
    let u = "src/fixpkg/util.py";
    let invokes = edges(&g, EdgeKind::Invokes);
    for (src, dst) in [
        // imported name
        (format!("{m}:Request.__init__"), format!("{u}:normalize")),
        // self method
        (
            format!("{m}:Request.host"),
            format!("{m}:Request.split_host"),
        ),
        // self method inherited through an aliased base
        (
            format!("{m}:Request.fallback"),
            format!("{u}:Base.base_method"),
        ),
        // same scope
        (format!("{m}:inside_with"), format!("{m}:parse_header")),
        // from a test, through a src/ layout import and a module alias
        (
            "tests/test_models.py:test_host".into(),
            format!("{m}:Request"),
        ),
        (
            "tests/test_models.py:test_host".into(),
            format!("{u}:normalize"),
        ),
        // recovered after a syntax error
        (
            "src/fixpkg/broken.py:AfterError.still_here".into(),
            "src/fixpkg/broken.py:ok".into(),
        ),
    ] {
        assert!(
            invokes.contains(&(src.clone(), dst.clone())),
            "missing {src} -> {dst}"
        );
    }
    assert_eq!(invokes.len(), 8, "{invokes:#?}");
    assert_eq!(
        edges(&g, EdgeKind::Inherits),
        pairs(&[("src/fixpkg/models.py:Request", "src/fixpkg/util.py:Base")])
    );
    assert_eq!(
        edges(&g, EdgeKind::Imports),
        pairs(&[
            ("src/fixpkg/__init__.py", "src/fixpkg/models.py"),
            ("src/fixpkg/__init__.py", "src/fixpkg/util.py"),
            ("src/fixpkg/models.py", "src/fixpkg/util.py"),
            ("tests/test_models.py", "src/fixpkg/models.py"),
            ("tests/test_models.py", "src/fixpkg/util.py"),
        ])
    );
    // Every contained entity has exactly one container.
    let contains = edges(&g, EdgeKind::Contains);
    for e in g.entities.values().filter(|e| e.kind != Kind::File) {
        assert_eq!(
            contains.iter().filter(|(_, d)| *d == e.id).count(),
            1,
            "{}",
            e.id
        );
    }
}

#[test]
fn skipped_files_are_counted_by_reason() {
    let (_d, g, report) = encode_fixture("python-repo.sh");
    let s = &report.skipped;
    assert_eq!(
        (s.excluded, s.binary, s.not_utf8, s.links, s.too_large),
        (1, 1, 1, 1, 0),
        "{s:?}"
    );
    assert!(!g.files.contains_key("vendor/six/six.py"));
    assert!(!g.files.contains_key("link.py"));
    assert_eq!(report.files_with_syntax_errors, 1);
    assert!(g.files["src/fixpkg/broken.py"].has_errors);
}

#[test]
fn size_limit_and_extra_excludes_are_configurable() {
    let dir = fixture("python-repo.sh");
    let repo = Repo::discover(&repo_of(&dir)).unwrap();
    let head = repo.resolve("HEAD").unwrap();
    let mut config = Config::default();
    config.index.max_file_bytes = 200;
    config.index.extra_exclude = vec!["tests/**".into()];
    let encode::Encoded {
        graph: g, report, ..
    } = encode::encode(&repo, &config, head, &OfflineLifter, &Silent).unwrap();
    assert!(report.skipped.too_large >= 1, "{:?}", report.skipped);
    assert_eq!(report.skipped.excluded, 2);
    assert!(!g.files.contains_key("src/fixpkg/models.py"));
    assert!(!g.files.contains_key("tests/test_models.py"));
}

#[test]
fn rust_entities_are_named_after_impl_types_and_inline_modules() {
    let (_d, g, _) = encode_fixture("rust-repo.sh");
    use Kind::*;
    let ids: Vec<(String, Kind)> = g
        .entities
        .values()
        .filter(|e| e.kind != File)
        .map(|e| (e.id.clone(), e.kind))
        .collect();
    let want: Vec<(String, Kind)> = [
        ("src/lib.rs:platform", Function),
        // cfg-gated duplicate
        ("src/lib.rs:platform#2", Function),
        ("src/lib.rs:tests::parses_flags", Function),
        ("src/lib.rs:total_area", Function),
        ("src/shapes.rs:Bits", Class),
        ("src/shapes.rs:Circle", Class),
        ("src/shapes.rs:Circle::area", Method),
        ("src/shapes.rs:Circle::diameter", Method),
        ("src/shapes.rs:Circle::new", Method),
        ("src/shapes.rs:Circle::radius", Method),
        ("src/shapes.rs:Kind", Class),
        ("src/shapes.rs:Shape", Class),
        ("src/shapes.rs:Shape::area", Method),
        ("src/shapes.rs:Shape::describe", Method),
        ("src/shapes.rs:Square", Class),
        // impl Display and impl Debug both define fmt
        ("src/shapes.rs:Square::fmt", Method),
        ("src/shapes.rs:Square::fmt#2", Method),
        ("src/util.rs:inner::helper", Function),
        ("src/util.rs:square", Function),
        ("tests/integration.rs:circle_diameter", Function),
    ]
    .iter()
    .map(|(i, k)| (i.to_string(), *k))
    .collect();
    assert_eq!(ids, want);
    let t = &g.entities["src/lib.rs:tests::parses_flags"];
    assert_eq!(
        (t.start_line, t.end_line),
        (26, 29),
        "span includes #[test]"
    );
    let shape = &g.entities["src/shapes.rs:Shape"];
    assert_eq!(shape.flavor, "trait");
    assert_eq!(shape.doc, "Something with an area.");
}

#[test]
fn rust_edges_follow_use_super_mod_and_crate_names() {
    let (_d, g, _) = encode_fixture("rust-repo.sh");
    assert_eq!(
        edges(&g, EdgeKind::Invokes),
        pairs(&[
            ("src/lib.rs:tests::parses_flags", "src/lib.rs:total_area"),
            ("src/lib.rs:total_area", "src/shapes.rs:Circle::area"),
            ("src/shapes.rs:Circle::area", "src/util.rs:square"),
            (
                "src/shapes.rs:Circle::diameter",
                "src/shapes.rs:Circle::radius"
            ),
            ("src/util.rs:inner::helper", "src/util.rs:square"),
            (
                "tests/integration.rs:circle_diameter",
                "src/shapes.rs:Circle::diameter"
            ),
            (
                "tests/integration.rs:circle_diameter",
                "src/shapes.rs:Circle::new"
            ),
        ])
    );
    assert_eq!(
        edges(&g, EdgeKind::Imports),
        pairs(&[
            ("src/lib.rs", "src/shapes.rs"),
            ("src/lib.rs", "src/util.rs"),
            ("src/shapes.rs", "src/util.rs"),
            ("tests/integration.rs", "src/shapes.rs"),
        ])
    );
    assert_eq!(
        edges(&g, EdgeKind::Inherits),
        pairs(&[("src/shapes.rs:Circle", "src/shapes.rs:Shape")])
    );
}

#[test]
fn go_entities_are_functions_receiver_methods_and_struct_types() {
    let (_d, g, _) = encode_fixture("go-repo.sh");
    use Kind::*;
    let got: Vec<(String, Kind, u32, u32)> = g
        .entities
        .values()
        .filter(|e| e.kind != File)
        .map(|e| (e.id.clone(), e.kind, e.start_line, e.end_line))
        .collect();
    let want: Vec<(String, Kind, u32, u32)> = [
        ("main.go:main", Function, 5, 7),
        ("server/helper.go:helper", Function, 3, 3),
        ("server/server.go:Base", Class, 11, 11),
        ("server/server.go:Base.Close", Method, 14, 14),
        ("server/server.go:New", Function, 23, 27),
        ("server/server.go:Server", Class, 17, 20),
        ("server/server.go:Server.Start", Method, 29, 33),
        ("server/server.go:Server.helper", Method, 37, 37),
        ("util/clean.go:Clean", Function, 4, 6),
        ("util/clean.go:trim", Function, 8, 8),
        ("util/clean_test.go:TestClean", Function, 5, 7),
    ]
    .iter()
    .map(|(i, k, s, e)| (i.to_string(), *k, *s, *e))
    .collect();
    assert_eq!(got, want);
    let new = &g.entities["server/server.go:New"];
    assert_eq!(new.doc, "New makes a Server with a clean name.");
    assert_eq!(new.signature, "func New(name string) *Server");
    assert_eq!(g.entities["server/server.go:Server"].flavor, "struct");
}

#[test]
fn go_edges_follow_the_module_path_receivers_and_embedding() {
    let (_d, g, _) = encode_fixture("go-repo.sh");
    assert_eq!(
        edges(&g, EdgeKind::Invokes),
        pairs(&[
            // Through the import's package name, then a unique method.
            ("main.go:main", "server/server.go:New"),
            ("main.go:main", "server/server.go:Server.Start"),
            // Through an aliased import.
            ("server/server.go:New", "util/clean.go:Clean"),
            // `s := &Server{…}` types the receiver.
            ("server/server.go:New", "server/server.go:Server.Start"),
            // Promoted from the embedded Base.
            (
                "server/server.go:Server.Start",
                "server/server.go:Base.Close"
            ),
            // Same package, another file; never the method of that name.
            ("server/server.go:Server.Start", "server/helper.go:helper"),
            ("util/clean.go:Clean", "util/clean.go:trim"),
            ("util/clean_test.go:TestClean", "util/clean.go:Clean"),
        ])
    );
    assert_eq!(
        edges(&g, EdgeKind::Imports),
        pairs(&[
            ("main.go", "server/server.go"),
            ("server/server.go", "util/clean.go"),
        ])
    );
    assert_eq!(
        edges(&g, EdgeKind::Inherits),
        pairs(&[("server/server.go:Server", "server/server.go:Base")])
    );
    assert!(rpg::graph::is_test_path("util/clean_test.go"));
    assert!(g.entities["util/clean_test.go"]
        .leaf
        .starts_with("testing and verification/"));
}

#[test]
fn java_entities_nest_classes_and_number_overloaded_constructors() {
    let (_d, g, _) = encode_fixture("java-repo.sh");
    use Kind::*;
    let p = "src/main/java/com/fix/core/Parser.java";
    assert_eq!(
        spans(&g, p),
        [
            ("Parser", Class, 7, 26),
            ("Parser.Listener", Class, 23, 25),
            ("Parser.Listener.on", Method, 24, 24),
            ("Parser.Parser", Method, 10, 10),
            ("Parser.Parser#2", Method, 12, 12),
            ("Parser.next", Method, 14, 17),
            ("Parser.peek", Method, 19, 21),
        ]
        .iter()
        .map(|(q, k, s, e)| (q.to_string(), *k, *s, *e))
        .collect::<Vec<_>>()
    );
    assert_eq!(g.entities[&format!("{p}:Parser")].doc, "Parses tokens.");
}

#[test]
fn java_edges_follow_imports_declared_types_and_supertypes() {
    let (_d, g, _) = encode_fixture("java-repo.sh");
    let main = "src/main/java/com/fix";
    let test = "src/test/java/com/fix/core/ParserTest.java";
    let id = |s: &str| format!("{main}/{s}");
    let owned: Vec<(String, String)> = vec![
        // `new Lexer()` is its constructor.
        (
            id("core/Parser.java:Parser.Parser"),
            id("io/Lexer.java:Lexer.Lexer"),
        ),
        // A field's declared type.
        (
            id("core/Parser.java:Parser.next"),
            id("io/Lexer.java:Lexer.scan"),
        ),
        // A static import.
        (
            id("core/Parser.java:Parser.next"),
            id("util/Strings.java:Strings.quote"),
        ),
        // A static wildcard import, though `quote` is not unique.
        (
            id("io/Reader.java:Reader.read"),
            id("util/Strings.java:Strings.quote"),
        ),
        // An unqualified call: this class, then its superclass.
        (
            id("core/Parser.java:Parser.next"),
            id("core/Parser.java:Parser.peek"),
        ),
        (
            id("core/Parser.java:Parser.peek"),
            id("core/Base.java:Base.helper"),
        ),
        // The same package from src/test, and a wildcard import.
        (
            format!("{test}:ParserTest.parses"),
            id("core/Parser.java:Parser.Parser"),
        ),
        (
            format!("{test}:ParserTest.parses"),
            id("core/Parser.java:Parser.next"),
        ),
        (
            format!("{test}:ParserTest.parses"),
            id("io/Lexer.java:Lexer.Lexer"),
        ),
        (
            format!("{test}:ParserTest.parses"),
            id("io/Lexer.java:Lexer.scan"),
        ),
    ];
    assert_eq!(edges(&g, EdgeKind::Invokes), owned.into_iter().collect());
    assert_eq!(
        edges(&g, EdgeKind::Imports),
        [
            (id("core/Parser.java"), id("io/Lexer.java")),
            (id("core/Parser.java"), id("util/Strings.java")),
            (id("io/Reader.java"), id("util/Strings.java")),
            (test.to_string(), id("io/Lexer.java")),
        ]
        .into_iter()
        .collect()
    );
    assert_eq!(
        edges(&g, EdgeKind::Inherits),
        [(id("core/Parser.java:Parser"), id("core/Base.java:Base"))]
            .into_iter()
            .collect()
    );
    assert!(g.entities[test]
        .leaf
        .starts_with("testing and verification/"));
}

#[test]
fn javascript_and_typescript_entities_are_named_as_the_code_names_them() {
    let (_d, g, report) = encode_fixture("js-repo.sh");
    use Kind::*;
    let got: Vec<(String, Kind, u32, u32)> = g
        .entities
        .values()
        .filter(|e| e.kind != File)
        .map(|e| (e.id.clone(), e.kind, e.start_line, e.end_line))
        .collect();
    let want: Vec<(String, Kind, u32, u32)> = [
        // An assignment through an exported object.
        ("lib/app.js:app.render", Method, 7, 11),
        // An ES5 constructor and its prototype methods.
        ("lib/router/layer.js:Layer", Function, 3, 5),
        ("lib/router/layer.js:Layer.handle", Method, 7, 9),
        ("lib/router/layer.js:Layer.match", Method, 11, 13),
        // `exports.x = …` is the module's own x.
        ("lib/utils.js:flatten", Function, 1, 1),
        ("lib/utils.js:noop", Function, 2, 2),
        ("src/dayjs.ts:Base", Class, 2, 2),
        ("src/dayjs.ts:Base.clone", Method, 2, 2),
        ("src/dayjs.ts:Dayjs", Class, 3, 7),
        ("src/dayjs.ts:Dayjs.constructor", Method, 5, 5),
        ("src/dayjs.ts:Dayjs.year", Method, 6, 6),
        ("src/dayjs.ts:Unit", Class, 1, 1),
        // Object-literal members.
        ("src/format.ts:locale.meridiem", Method, 4, 4),
        ("src/format.ts:locale.ordinal", Method, 3, 3),
        ("src/format.ts:pad", Function, 1, 1),
        ("src/index.ts:dayjs", Function, 4, 6),
        ("src/index.ts:format", Function, 8, 8),
        ("src/plugin/tz.ts:tz", Function, 4, 6),
        // Inside an anonymous default export that only wraps what it
        // defines (a plugin): those are the module's own.
        ("src/plugin/utc/index.js:dayjs.utc", Method, 6, 8),
        ("src/plugin/utc/index.js:proto.utcOffset", Method, 3, 5),
    ]
    .iter()
    .map(|(i, k, s, e)| (i.to_string(), *k, *s, *e))
    .collect();
    assert_eq!(got, want);
    assert_eq!(g.entities["lib/app.js:app.render"].doc, "Render a view.");
    // .d.ts, dist/ and *.min.js are skipped and counted.
    assert_eq!(report.skipped.excluded, 3);
    assert!(!g.files.contains_key("types/index.d.ts"));
}

#[test]
fn javascript_edges_follow_require_esm_this_and_constructors() {
    let (_d, g, _) = encode_fixture("js-repo.sh");
    assert_eq!(
        edges(&g, EdgeKind::Invokes),
        pairs(&[
            // `new Layer()` where Layer is the module's constructor function.
            ("lib/app.js:app.render", "lib/router/layer.js:Layer"),
            ("lib/app.js:app.render", "lib/router/layer.js:Layer.handle"),
            // Through `require` bound to a name.
            ("lib/app.js:app.render", "lib/utils.js:flatten"),
            (
                "lib/router/layer.js:Layer.handle",
                "lib/router/layer.js:Layer.match"
            ),
            // `this.clone()` found on the superclass.
            ("src/dayjs.ts:Dayjs.year", "src/dayjs.ts:Base.clone"),
            ("src/format.ts:locale.meridiem", "src/format.ts:pad"),
            // `new Dayjs()` is its constructor.
            ("src/index.ts:dayjs", "src/dayjs.ts:Dayjs.constructor"),
            ("src/index.ts:format", "src/dayjs.ts:Dayjs.year"),
            // Through a namespace import.
            ("src/index.ts:format", "src/format.ts:pad"),
            (
                "src/plugin/utc/index.js:dayjs.utc",
                "src/plugin/utc/index.js:proto.utcOffset"
            ),
            // JavaScript and TypeScript share one names index: the unique
            // `dayjs` is index.ts's.
            ("src/plugin/utc/index.js:dayjs.utc", "src/index.ts:dayjs"),
            // The module exports the object the importer names.
            ("test/app.test.js", "lib/app.js:app.render"),
            ("src/plugin/tz.ts:tz", "src/format.ts:pad"),
            ("src/plugin/tz.ts:tz", "src/dayjs.ts:Dayjs.year"),
        ])
    );
    assert_eq!(
        edges(&g, EdgeKind::Imports),
        pairs(&[
            ("lib/app.js", "lib/router/layer.js"),
            ("lib/app.js", "lib/utils.js"),
            ("src/index.ts", "src/dayjs.ts"),
            ("src/index.ts", "src/format.ts"),
            // Through tsconfig.json's `paths` and `baseUrl`.
            ("src/plugin/tz.ts", "src/dayjs.ts"),
            ("src/plugin/tz.ts", "src/format.ts"),
            ("test/app.test.js", "lib/app.js"),
        ])
    );
    assert_eq!(
        edges(&g, EdgeKind::Inherits),
        pairs(&[
            ("src/dayjs.ts:Dayjs", "src/dayjs.ts:Base"),
            ("src/dayjs.ts:Dayjs", "src/dayjs.ts:Unit"),
        ])
    );
    assert!(rpg::graph::is_test_path("src/a.spec.ts"));
}

#[test]
fn c_definitions_are_functions_function_like_macros_and_named_types_only() {
    let (_d, g, _) = encode_fixture("c-repo.sh");
    use Kind::*;
    let got: Vec<(String, Kind, u32, u32)> = g
        .entities
        .values()
        .filter(|e| e.kind != File)
        .map(|e| (e.id.clone(), e.kind, e.start_line, e.end_line))
        .collect();
    let want: Vec<(String, Kind, u32, u32)> = [
        ("lib/util/include/util/str.h:util_strlen", Function, 1, 1),
        ("lib/util/src/str.c:util_len", Function, 3, 5),
        // Behind an attribute-like macro.
        ("src/jv.c:jv_free", Function, 9, 13),
        ("src/jv.c:jv_get_kind", Function, 5, 7),
        // A function-like macro is; `#define JV_MAX 8` is module text.
        ("src/jv.h:JV_KIND", Macro, 15, 15),
        // Prototypes are not entities; a header's inline definition is.
        ("src/jv.h:jv_is_valid", Function, 11, 13),
        ("src/jv.h:jv_kind", Class, 6, 6),
        // `typedef struct jv_refcnt {…} jv_refcnt;` is one class.
        ("src/jv.h:jv_refcnt", Class, 4, 4),
        ("src/kind.c:kind_of", Function, 3, 3),
        ("src/main.c:main", Function, 3, 6),
        ("tests/test_jv.c:test_kind", Function, 3, 5),
    ]
    .iter()
    .map(|(i, k, s, e)| (i.to_string(), *k, *s, *e))
    .collect();
    assert_eq!(got, want);
    assert_eq!(
        g.entities["src/jv.c:jv_get_kind"].doc,
        "The kind of a value."
    );
    let kind = &g.entities["src/jv.h:JV_KIND"];
    assert_eq!(
        (
            kind.doc.as_str(),
            kind.signature.as_str(),
            kind.flavor.as_str()
        ),
        (
            "The kind, past the fixed kinds.",
            "#define JV_KIND(v, ...)",
            "define"
        )
    );
    assert_eq!(
        edges(&g, EdgeKind::Invokes),
        pairs(&[
            (
                "lib/util/src/str.c:util_len",
                "lib/util/include/util/str.h:util_strlen",
            ),
            ("src/jv.c:jv_free", "src/jv.h:jv_is_valid"),
            // The macro's text calls out, but not through its parameter
            // `v` or the pasted `x##v`.
            ("src/jv.h:JV_KIND", "src/jv.c:jv_get_kind"),
            ("src/jv.h:jv_is_valid", "src/jv.c:jv_get_kind"),
            // Through `all.h`, a header that includes the macro's.
            ("src/kind.c:kind_of", "src/jv.h:JV_KIND"),
            ("src/main.c:main", "src/jv.c:jv_free"),
            ("src/main.c:main", "src/jv.c:jv_get_kind"),
            ("tests/test_jv.c:test_kind", "src/jv.c:jv_get_kind"),
        ])
    );
    assert_eq!(
        edges(&g, EdgeKind::Imports),
        pairs(&[
            // `<util/str.h>` from the library's own include/.
            ("lib/util/src/str.c", "lib/util/include/util/str.h"),
            ("src/all.h", "src/jv.h"),
            ("src/jv.c", "src/jv.h"),
            ("src/kind.c", "src/all.h"),
            ("src/main.c", "src/jv.h"),
            ("tests/test_jv.c", "src/jv.h"),
        ])
    );
}

#[test]
fn cpp_names_join_classes_and_declarators_and_calls_follow_types() {
    let (_d, g, _) = encode_fixture("cpp-repo.sh");
    use Kind::*;
    let core = "include/fmt/core.h";
    let format = "include/fmt/format.h";
    let got: Vec<(String, Kind, u32, u32)> = g
        .entities
        .values()
        .filter(|e| e.kind != File)
        .map(|e| (e.id.clone(), e.kind, e.start_line, e.end_line))
        .collect();
    let want: Vec<(String, Kind, u32, u32)> = [
        // A template's span starts at `template <…>`.
        (format!("{core}:basic_writer"), Class, 13, 21),
        (format!("{core}:basic_writer::basic_writer"), Method, 16, 16),
        (format!("{core}:basic_writer::operator=="), Method, 18, 18),
        (format!("{core}:basic_writer::size"), Method, 19, 19),
        (format!("{core}:basic_writer::spec"), Class, 20, 20),
        (format!("{core}:basic_writer::spec::width"), Method, 20, 20),
        // Namespaces appear only where the declarator writes them.
        (format!("{core}:buffer"), Class, 6, 10),
        (format!("{core}:buffer::grow"), Method, 8, 8),
        (format!("{core}:parse_width"), Function, 23, 23),
        (format!("{format}:basic_writer::write"), Method, 6, 9),
        (format!("{format}:detail::buffer::reserve"), Method, 4, 4),
        (format!("{format}:operator<"), Function, 11, 11),
        ("test/format-test.cc:test_write".to_string(), Function, 3, 8),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
    assert_eq!(g.entities[&format!("{core}:buffer")].doc, "Grows a buffer.");
    let id = |f: &str, q: &str| format!("{f}:{q}");
    let invokes: BTreeSet<(String, String)> = [
        (
            id(core, "basic_writer::operator=="),
            id(core, "basic_writer::size"),
        ),
        // To the out-of-line definition, through the owner type.
        (
            id(core, "buffer::grow"),
            id(format, "detail::buffer::reserve"),
        ),
        // Inherited from the base class, and a function of the header.
        (id(format, "basic_writer::write"), id(core, "buffer::grow")),
        (id(format, "basic_writer::write"), id(core, "parse_width")),
        // Declared types of locals; `new T` without a constructor is T.
        (id("test/format-test.cc", "test_write"), id(core, "buffer")),
        (
            id("test/format-test.cc", "test_write"),
            id(core, "buffer::grow"),
        ),
        (
            id("test/format-test.cc", "test_write"),
            id(format, "basic_writer::write"),
        ),
    ]
    .into_iter()
    .collect();
    assert_eq!(edges(&g, EdgeKind::Invokes), invokes);
    assert_eq!(
        edges(&g, EdgeKind::Imports),
        pairs(&[
            (format, core),
            // `<fmt/format.h>` names a repository file under include/.
            ("test/format-test.cc", format),
        ])
    );
    assert_eq!(
        edges(&g, EdgeKind::Inherits),
        pairs(&[(
            "include/fmt/core.h:basic_writer",
            "include/fmt/core.h:buffer"
        )])
    );
}

#[test]
fn hierarchy_places_every_entity_in_one_grounded_leaf() {
    for script in [
        "python-repo.sh",
        "rust-repo.sh",
        "go-repo.sh",
        "java-repo.sh",
    ] {
        let (_d, g, _) = encode_fixture(script);
        assert_eq!(g.hierarchy_violations(), Vec::<String>::new(), "{script}");
        for e in g.entities.values() {
            assert_eq!(e.leaf.split('/').count(), 3, "{}", e.id);
            assert_eq!(
                e.leaf, g.entities[&e.path].leaf,
                "entities start in their file's leaf"
            );
        }
        // Groundings are the trie LCAs of the member files.
        crate::common::assert_groundings(&g);
        for c in g.categories.values() {
            // Labels are words, not copies of a path.
            assert!(!c.path.contains('.') && !c.path.contains('_'), "{}", c.path);
        }
        let test_leaf = &g
            .entities
            .values()
            .find(|e| rpg::graph::is_test_path(&e.path))
            .unwrap()
            .leaf;
        assert!(
            test_leaf.starts_with("testing and verification/"),
            "{test_leaf}"
        );
    }
}

#[test]
fn features_are_lowercase_verb_phrases_tagged_with_their_lifter() {
    let (_d, g, _) = encode_fixture("python-repo.sh");
    let e = &g.entities["src/fixpkg/util.py:normalize"];
    assert_eq!(e.features, ["normalize", "normalize string for comparison"]);
    assert_eq!(e.lifter, "offline/1");
    let f = &g.entities["src/fixpkg/models.py"];
    assert!(!f.features.is_empty(), "files get summary features");
    for e in g.entities.values() {
        for f in &e.features {
            assert_eq!(f, &f.to_lowercase());
        }
    }
}

#[test]
fn pathological_nesting_does_not_overflow_the_stack() {
    // Test threads have small stacks, so this fails loudly if any walk recurses.
    let depth = 20_000;
    let py = format!("x = {}1{}\n", "(".repeat(depth), ")".repeat(depth));
    let mut nested_defs = String::new();
    for i in 0..500 {
        nested_defs.push_str(&" ".repeat(i * 2));
        nested_defs.push_str(&format!("def f{i}():\n"));
    }
    nested_defs.push_str(&" ".repeat(1000));
    nested_defs.push_str("pass\n");
    let p = parse::parse(Lang::Python, "x.py", &py);
    assert!(p.entities.is_empty());
    // Definitions past the nesting bound are their ancestor's code.
    let p = parse::parse(Lang::Python, "x.py", &nested_defs);
    assert_eq!(p.entities.len(), parse::MAX_NESTING);
    let deepest = &p.entities[parse::MAX_NESTING - 1];
    assert!(deepest.qualname.starts_with("f0.f1.f2."));
    assert_eq!(deepest.end_line, 501, "it spans what it holds");
    let rs = format!("fn f() {{ {}1{} }}", "{".repeat(depth), "}".repeat(depth));
    let p = parse::parse(Lang::Rust, "x.rs", &rs);
    assert_eq!(p.entities.len(), 1);
    let go = format!(
        "package p\nfunc f(x {}T) {{ g({}1{}) }}\n",
        "*".repeat(depth),
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let p = parse::parse(Lang::Go, "x.go", &go);
    assert_eq!(p.entities.len(), 1);
    let mut classes = String::new();
    for i in 0..500 {
        classes.push_str(&format!("class C{i} {{\n"));
    }
    classes.push_str(&format!(
        "{}T{} x; void m() {{ f({}1{}); }}\n",
        "A<".repeat(depth),
        ">".repeat(depth),
        "(".repeat(depth),
        ")".repeat(depth)
    ));
    classes.push_str(&"}\n".repeat(500));
    let p = parse::parse(Lang::Java, "X.java", &classes);
    assert_eq!(p.entities.len(), parse::MAX_NESTING);
    let deepest = &p.entities[parse::MAX_NESTING - 1];
    assert!(
        !deepest.calls.is_empty(),
        "the method's calls went to its ancestor"
    );
    let js = format!(
        "const v = {}function () {{}}{};\nconst o = {}1{};\nx{} = () => 1;\n",
        "(".repeat(depth),
        ")".repeat(depth),
        "{ a: ".repeat(depth),
        " }".repeat(depth),
        ".a".repeat(depth),
    );
    let p = parse::parse(Lang::JavaScript, "x.js", &js);
    assert_eq!(p.entities[0].qualname, "v");
}

#[test]
fn imports_inside_rust_use_lists_are_flattened() {
    let src = "use crate::a::{b::C, d as e, self};\nuse super::*;\n";
    let p = parse::parse(Lang::Rust, "x.rs", src);
    let paths: Vec<String> = p
        .imports
        .iter()
        .map(|i| match i {
            parse::Import::RustUse {
                path,
                bound_as,
                glob,
                ..
            } => {
                format!(
                    "{}={}{}",
                    path.join("::"),
                    bound_as,
                    if *glob { "*" } else { "" }
                )
            }
            other => format!("{other:?}"),
        })
        .collect();
    let set: BTreeSet<&str> = paths.iter().map(String::as_str).collect();
    assert_eq!(
        set,
        BTreeSet::from([
            "crate::a=a",
            "crate::a::b::C=C",
            "crate::a::d=e",
            "super=**"
        ])
    );
}

/// Encode a repository holding exactly `files`, committed.
fn encode_files(files: &[(&str, &str)]) -> (tempfile::TempDir, Graph) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    crate::common::git(&repo, &["init", "-q", "-b", "main"]);
    for (path, text) in files {
        let p = repo.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    crate::common::git(&repo, &["add", "-A"]);
    crate::common::git(&repo, &["commit", "-qm", "files"]);
    let r = Repo::discover(&repo).unwrap();
    let head = r.resolve("HEAD").unwrap();
    let g = encode::encode(&r, &Config::default(), head, &OfflineLifter, &Silent)
        .unwrap()
        .graph;
    (dir, g)
}

const RUST_MACROS: &str = "\
/// Define items only with the runtime.
macro_rules! cfg_rt {
    ($($item:item)*) => { $( #[cfg(feature = \"rt\")] $item )* }
}

/// Wait on several futures.
#[macro_export]
macro_rules! select {
    ($($t:tt)*) => { fn template_not_an_item() {} };
}

cfg_rt! {
    /// Runs the provided closure on a thread where blocking is acceptable.
    pub fn spawn_blocking<F>(f: F) -> u32 {
        block_in_place();
        select!(f);
        1
    }

    cfg_rt! {
        pub fn block_in_place() {}
    }

    impl Runtime {
        pub fn block_on(&self) {}
    }
}

pub struct Runtime;

pub trait Schedule {
    /// Schedule the task to run later.
    fn schedule(&self, task: u32);
}

lazy_static! { static ref X: u32 = 1; }

pub fn select() -> u32 {
    0
}

variant! {
    stable: { pub fn in_stable() {} },
    unstable: { pub fn in_unstable() {} }
}
";

#[test]
fn rust_items_inside_macros_required_trait_methods_and_macro_rules_are_entities() {
    let (_d, g) = encode_files(&[
        (
            "Cargo.toml",
            "[package]\nname = \"rt\"\nversion = \"0.1.0\"\n",
        ),
        ("src/lib.rs", RUST_MACROS),
        (
            "src/other.rs",
            "pub fn run() {\n    rt::select!(x);\n    cfg_rt!(y);\n}\n",
        ),
    ]);
    let mut got = spans(&g, "src/lib.rs");
    got.sort();
    let want: Vec<(String, Kind, u32, u32)> = vec![
        ("Runtime".into(), Kind::Class, 29, 29),
        ("Runtime::block_on".into(), Kind::Method, 25, 25),
        ("Schedule".into(), Kind::Class, 31, 34),
        ("Schedule::schedule".into(), Kind::Method, 33, 33),
        ("block_in_place".into(), Kind::Function, 21, 21),
        ("cfg_rt".into(), Kind::Macro, 2, 4),
        ("in_stable".into(), Kind::Function, 43, 43),
        ("in_unstable".into(), Kind::Function, 44, 44),
        ("select".into(), Kind::Macro, 7, 10),
        ("select#2".into(), Kind::Function, 38, 40),
        ("spawn_blocking".into(), Kind::Function, 14, 18),
    ];
    assert_eq!(got, want);
    let e = |id: &str| g.entities[id].clone();
    assert_eq!(
        e("src/lib.rs:spawn_blocking").doc,
        "Runs the provided closure on a thread where blocking is acceptable."
    );
    assert_eq!(
        e("src/lib.rs:spawn_blocking").signature,
        "pub fn spawn_blocking<F>(f: F) -> u32"
    );
    assert_eq!(
        e("src/lib.rs:Schedule::schedule").doc,
        "Schedule the task to run later."
    );
    assert_eq!(e("src/lib.rs:Schedule::schedule").flavor, "required");
    assert_eq!(e("src/lib.rs:select").flavor, "macro_export");
    assert_eq!(e("src/lib.rs:cfg_rt").flavor, "macro_rules");
    assert!(!g
        .entities
        .keys()
        .any(|k| k.contains("template_not_an_item")));
    let invokes = edges(&g, EdgeKind::Invokes);
    // Calls inside a macro's items, and `name!` to the macro, never to the
    // function that shares its name; an exported macro is crate-wide, a
    // plain one only in its own file.
    for pair in [
        ("src/lib.rs:spawn_blocking", "src/lib.rs:block_in_place"),
        ("src/lib.rs:spawn_blocking", "src/lib.rs:select"),
        ("src/other.rs:run", "src/lib.rs:select"),
    ] {
        assert!(
            invokes.contains(&(pair.0.into(), pair.1.into())),
            "{pair:?} in {invokes:?}"
        );
    }
    assert!(
        !invokes.iter().any(|(_, d)| d == "src/lib.rs:select#2"),
        "{invokes:?}"
    );
    assert!(!invokes.contains(&("src/other.rs:run".into(), "src/lib.rs:cfg_rt".into())));
}

#[test]
fn python_overloads_fold_into_their_implementation() {
    let (_d, g) = encode_files(&[
        (
            "models.py",
            "from typing import overload as ov\nimport typing as t\n\n\nclass Response:\n    @t.overload\n    def iter_content(self, n: int) -> bytes: ...\n    @ov\n    def iter_content(self, n: None) -> str: ...\n    def iter_content(self, n=None):\n        \"\"\"Iterate over the response data.\"\"\"\n        return n\n",
        ),
        (
            "utils.py",
            "from typing import overload\n\n\n@overload\ndef to_key_val_list(value: dict) -> list: ...\n@overload\ndef to_key_val_list(value: None) -> None: ...\ndef to_key_val_list(value):\n    return list(value)\n",
        ),
        (
            "stubs.pyi",
            "from typing import overload\n\n@overload\ndef only(x: int) -> int: ...\n@overload\ndef only(x: str) -> str: ...\n",
        ),
    ]);
    let e = &g.entities["models.py:Response.iter_content"];
    assert_eq!(
        (e.start_line, e.end_line),
        (10, 12),
        "the implementation's span"
    );
    assert_eq!(e.doc, "Iterate over the response data.");
    assert_eq!(
        e.signature,
        "def iter_content(self, n: int) -> bytes:\ndef iter_content(self, n: None) -> str:\ndef iter_content(self, n=None):"
    );
    assert!(!g.entities.contains_key("models.py:Response.iter_content#2"));
    assert_eq!(g.entities["utils.py:to_key_val_list"].start_line, 8);
    assert!(!g.entities.contains_key("utils.py:to_key_val_list#3"));
    // With no implementation, each stub stays.
    assert_eq!(g.entities["stubs.pyi:only"].start_line, 3);
    assert_eq!(g.entities["stubs.pyi:only#2"].start_line, 5);
}

#[test]
fn a_rust_prelude_name_is_std_s_not_a_same_named_item_elsewhere() {
    // Another crate's `From`, `Default` or `bool` is not what a file means
    // by the bare prelude or primitive name; only a `use` can make it so.
    let (_d, g) = encode_files(&[
        ("crates/attrs/Cargo.toml", "[package]\nname = \"attrs\"\n"),
        ("crates/attrs/src/lib.rs", "pub mod attr;\n"),
        (
            "crates/attrs/src/attr.rs",
            "pub struct From;\npub struct Default;\npub(crate) struct bool(String);\n",
        ),
        ("app/Cargo.toml", "[package]\nname = \"app\"\n"),
        (
            "app/src/lib.rs",
            "pub struct Input(u8);\n\
             impl From<u8> for Input {\n    fn from(x: u8) -> Self { Input(x) }\n}\n\
             impl Default for Input {\n    fn default() -> Self { Input(0) }\n}\n\
             pub trait Flag {}\nimpl Flag for bool {}\n",
        ),
        ("tool/Cargo.toml", "[package]\nname = \"tool\"\n"),
        (
            "tool/src/lib.rs",
            "use attrs::attr::From;\npub struct Wrapped;\nimpl From for Wrapped {}\n",
        ),
    ]);
    assert_eq!(
        edges(&g, EdgeKind::Inherits),
        pairs(&[("tool/src/lib.rs:Wrapped", "crates/attrs/src/attr.rs:From")])
    );
}

#[test]
fn a_python_builtin_is_the_builtin_unless_the_module_imports_another() {
    let (_d, g) = encode_files(&[
        (
            "pkg/locale.py",
            "def str(val):\n    return val\n\n\nclass TimeoutError(OSError):\n    pass\n",
        ),
        (
            "pkg/app.py",
            "class Late(TimeoutError):\n    pass\n\n\ndef show(x):\n    return str(x) + repr(x)\n",
        ),
        (
            "pkg/fmt.py",
            "from pkg.locale import str\n\n\ndef show(x):\n    return str(x)\n",
        ),
    ]);
    assert_eq!(
        edges(&g, EdgeKind::Invokes),
        pairs(&[("pkg/fmt.py:show", "pkg/locale.py:str")])
    );
    assert_eq!(edges(&g, EdgeKind::Inherits), pairs(&[]));
}

#[test]
fn a_java_lang_type_is_java_lang_s_unless_the_package_has_its_own() {
    let (_d, g) = encode_files(&[
        (
            "src/main/java/a/Error.java",
            "package a;\n\npublic class Error {}\n",
        ),
        (
            "src/main/java/b/Failure.java",
            "package b;\n\npublic class Failure extends Error {}\n",
        ),
        (
            "src/main/java/a/Own.java",
            "package a;\n\npublic class Own extends Error {}\n",
        ),
    ]);
    assert_eq!(
        edges(&g, EdgeKind::Inherits),
        pairs(&[(
            "src/main/java/a/Own.java:Own",
            "src/main/java/a/Error.java:Error"
        )])
    );
}

#[test]
fn a_javascript_global_is_the_global_unless_the_module_binds_another() {
    let (_d, g) = encode_files(&[
        (
            "test/helpers.js",
            "function setTimeout(fn) { fn(); }\nmodule.exports = { setTimeout };\n",
        ),
        (
            "lib/app.js",
            "function later(fn) {\n  return setTimeout(fn, 10);\n}\nmodule.exports = later;\n",
        ),
        (
            "test/app.test.js",
            "const { setTimeout } = require('./helpers');\nfunction now(fn) {\n  return setTimeout(fn);\n}\n",
        ),
    ]);
    assert_eq!(
        edges(&g, EdgeKind::Invokes),
        pairs(&[("test/app.test.js:now", "test/helpers.js:setTimeout")])
    );
}

#[test]
fn a_name_imported_from_outside_the_repository_is_never_a_repository_item() {
    let (_d, g) = encode_files(&[
        ("Cargo.toml", "[package]\nname = \"lex\"\n"),
        ("src/lib.rs", "mod ext;\nmod text;\n"),
        ("src/text.rs", "pub struct OsStr;\npub fn take() {}\n"),
        (
            "src/ext.rs",
            "use std::ffi::OsStr;\nuse std::mem::take;\n\
             pub trait OsStrExt {}\nimpl OsStrExt for OsStr {}\n\
             pub fn clear(v: &mut Vec<u8>) { take(v); }\n",
        ),
        (
            "pkg/kinds.py",
            "class Any:\n    pass\n\n\nclass Sized:\n    pass\n",
        ),
        (
            "pkg/mine.py",
            "from typing import Any\n\n\nclass Mine(Any):\n    pass\n",
        ),
        ("pkg/theirs.py", "class Theirs(Sized):\n    pass\n"),
        (
            "src/main/java/a/ArrayList.java",
            "package a;\n\npublic class ArrayList {}\n",
        ),
        (
            "src/main/java/b/Mine.java",
            "package b;\n\nimport java.util.ArrayList;\n\npublic class Mine extends ArrayList {}\n",
        ),
        (
            "src/main/java/c/Other.java",
            "package c;\n\npublic class Other extends ArrayList {}\n",
        ),
    ]);
    // Only the classes that import nothing reach the repository's
    // ArrayList and Sized, by their unique names.
    assert_eq!(
        edges(&g, EdgeKind::Inherits),
        pairs(&[
            (
                "src/main/java/c/Other.java:Other",
                "src/main/java/a/ArrayList.java:ArrayList"
            ),
            ("pkg/theirs.py:Theirs", "pkg/kinds.py:Sized"),
        ])
    );
    assert_eq!(edges(&g, EdgeKind::Invokes), pairs(&[]));
}

#[test]
fn a_re_exported_name_resolves_the_same_whichever_reader_comes_first() {
    // `m6` re-exports `generate` six modules deep, `m3` three deep, and a
    // second `generate` leaves no unique name to fall back on. Whether
    // `early.py`, resolved first, finds it through `m6` must not decide
    // whether `late.py` finds it through `m3`.
    let chain: Vec<(String, String)> = (1..=6)
        .map(|k| {
            (
                format!("m{k}.py"),
                format!("from m{} import generate\n", k - 1),
            )
        })
        .chain([
            ("m0.py".into(), "def generate():\n    return 1\n".into()),
            ("other.py".into(), "def generate():\n    return 2\n".into()),
            (
                "late.py".into(),
                "from m3 import generate\n\n\ndef go():\n    return generate()\n".into(),
            ),
        ])
        .collect();
    let early = (
        "early.py".to_string(),
        "from m6 import generate\n\n\ndef run():\n    return generate()\n".to_string(),
    );
    let late_calls = |files: &[(String, String)]| {
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (&**p, &**t)).collect();
        let (_d, g) = encode_files(&files);
        let mut calls = edges(&g, EdgeKind::Invokes);
        calls.retain(|(src, _)| src.starts_with("late.py"));
        calls
    };
    let alone = late_calls(&chain);
    assert_eq!(alone, pairs(&[("late.py:go", "m0.py:generate")]));
    let with_early: Vec<_> = chain.iter().cloned().chain([early]).collect();
    assert_eq!(late_calls(&with_early), alone);
}

#[test]
fn a_call_through_a_crate_root_s_re_export_reaches_the_definition() {
    // `crate::generate` and `complete::generate` are `aot::generate`,
    // which `aot` re-exports in turn from the file that defines it.
    let (_d, g) = encode_files(&[
        ("Cargo.toml", "[package]\nname = \"complete\"\n"),
        (
            "src/lib.rs",
            "pub mod aot;\nmod x;\npub use aot::generate;\n",
        ),
        ("src/aot/mod.rs", "mod generator;\npub use generator::*;\n"),
        ("src/aot/generator/mod.rs", "pub fn generate() {}\n"),
        ("src/x.rs", "pub fn inside() {\n    crate::generate();\n}\n"),
        (
            "tests/common.rs",
            "pub fn outside() {\n    complete::generate();\n}\n",
        ),
    ]);
    assert_eq!(
        edges(&g, EdgeKind::Invokes),
        pairs(&[
            ("src/x.rs:inside", "src/aot/generator/mod.rs:generate"),
            (
                "tests/common.rs:outside",
                "src/aot/generator/mod.rs:generate"
            ),
        ])
    );
}

#[test]
fn a_tsconfig_inherits_paths_from_the_config_it_extends() {
    // The monorepo layout: one base config maps `@app/*`, and each
    // package's tsconfig.json extends it, with `baseUrl` set beside it.
    let (_d, g) = encode_files(&[
        (
            "tsconfig.base.json",
            "{\n  // shared\n  \"compilerOptions\": {\"baseUrl\": \".\", \"paths\": {\"@app/*\": [\"packages/*/src\"]},},\n}\n",
        ),
        (
            "packages/web/tsconfig.json",
            "{\"extends\": \"../../tsconfig.base\", \"compilerOptions\": {\"strict\": true}}\n",
        ),
        (
            "packages/web/src/main.ts",
            "import { trim } from '@app/util';\n\nexport function run(s: string) {\n  return trim(s);\n}\n",
        ),
        (
            "packages/util/src/index.ts",
            "export function trim(s: string) {\n  return s.trim();\n}\n",
        ),
        (
            "packages/cli/tsconfig.json",
            "{\"extends\": \"../../../outside.json\"}\n",
        ),
    ]);
    assert_eq!(
        edges(&g, EdgeKind::Imports),
        pairs(&[("packages/web/src/main.ts", "packages/util/src/index.ts")])
    );
    assert_eq!(
        edges(&g, EdgeKind::Invokes),
        pairs(&[(
            "packages/web/src/main.ts:run",
            "packages/util/src/index.ts:trim"
        )])
    );
}

#[test]
fn a_go_call_into_a_package_the_repository_lacks_binds_nothing() {
    let dir = fixture("go-repo.sh");
    let root = repo_of(&dir);
    std::fs::write(
        root.join("server/codec.go"),
        "package server\n\ntype Unmarshaler struct{}\n\nfunc (u *Unmarshaler) Unmarshal(b []byte) error {\n\treturn nil\n}\n",
    )
    .unwrap();
    std::fs::write(
        root.join("server/load.go"),
        "package server\n\nimport \"encoding/json\"\n\nfunc Load(b []byte, u *Unmarshaler) {\n\tvar v int\n\tjson.Unmarshal(b, &v)\n}\n\nfunc Decode(b []byte, u *Unmarshaler) {\n\tu.Unmarshal(b)\n}\n",
    )
    .unwrap();
    crate::common::git(&root, &["add", "-A"]);
    crate::common::git(&root, &["commit", "-qm", "codec"]);
    let repo = Repo::discover(&root).unwrap();
    let head = repo.resolve("HEAD").unwrap();
    let g = encode::encode(&repo, &Config::default(), head, &OfflineLifter, &Silent)
        .unwrap()
        .graph;
    let calls = |from: &str| -> Vec<String> {
        g.edges
            .iter()
            .filter(|e| e.src == from && e.kind == rpg::graph::EdgeKind::Invokes)
            .map(|e| e.dst.to_string())
            .collect()
    };
    let method = "server/codec.go:Unmarshaler.Unmarshal".to_string();
    assert_eq!(
        calls("server/load.go:Load"),
        Vec::<String>::new(),
        "json.Unmarshal is not ours"
    );
    assert_eq!(calls("server/load.go:Decode"), vec![method]);
}

#[test]
fn anonymous_classes_in_fields_and_anonymous_default_exports_are_named_entities() {
    let java = "package p;\n\npublic final class TypeAdapters {\n  public static final TypeAdapter<URI> URI = new TypeAdapter<URI>() {\n    @Override public URI read(JsonReader in) {\n      return new URI(in.nextString());\n    }\n  };\n  static final int N = count();\n}\n";
    let p = parse::parse(Lang::Java, "TypeAdapters.java", java);
    let names: Vec<&str> = p.entities.iter().map(|e| e.qualname.as_str()).collect();
    assert_eq!(
        names,
        ["TypeAdapters", "TypeAdapters.URI", "TypeAdapters.URI.read"]
    );
    let uri = &p.entities[1];
    assert_eq!(uri.bases, [vec!["TypeAdapter".to_string()]]);
    let read = &p.entities[2];
    assert!(!read.calls.is_empty(), "{:?}", read.calls);
    for (src, name) in [
        (
            "export default ok && function (config) {\n  return send(config);\n}\n",
            "default",
        ),
        (
            "export default function (config) {\n  return send(config);\n}\n",
            "default",
        ),
        (
            "export default function adapter(config) {\n  return send(config);\n}\n",
            "adapter",
        ),
    ] {
        let p = parse::parse(Lang::JavaScript, "lib/adapters/xhr.js", src);
        let e = p
            .entities
            .first()
            .unwrap_or_else(|| panic!("no entity in {src}"));
        assert_eq!(e.qualname, name, "{src}");
        assert!(
            e.calls.contains(&rpg::parse::Call::Name("send".into())),
            "{src}"
        );
    }
}

/// At millions of entities a copy each of the lifter's name, the leaf's
/// path and the flavor was 100 MB of `init`'s peak: entities that say
/// the same share the text.
#[test]
fn entities_that_name_the_same_lifter_leaf_or_flavor_share_its_text() {
    let (_d, g, _) = encode_fixture("python-repo.sh");
    // More entities than texts, and each text in one place.
    let shared = |field: fn(&rpg::graph::Entity) -> &str| {
        let mut places: std::collections::BTreeMap<&str, BTreeSet<*const u8>> = Default::default();
        for e in g.entities.values() {
            places
                .entry(field(e))
                .or_default()
                .insert(field(e).as_ptr());
        }
        g.entities.len() > places.len() && places.values().all(|p| p.len() == 1)
    };
    assert!(shared(|e| &e.lifter), "lifter");
    assert!(shared(|e| &e.leaf), "leaf");
    assert!(shared(|e| e.flavor.as_str()), "flavor");
}
