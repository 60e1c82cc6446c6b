//! C#: namespaces (block and file-scoped), classes, structs, records,
//! interfaces and enums at any depth, named `Ns.Outer.Inner` as .NET
//! names them in stack traces; methods, constructors, properties and
//! indexers with bodies, operators and local functions.

use super::generic::{self, field_text, type_segments, Def, DefKind, Grammar};
use super::{node_text, Call, Import, Lang, Language, ParsedFile};
use tree_sitter::Node;

pub struct CSharp;

impl Language for CSharp {
    fn lang(&self) -> Lang {
        Lang::CSharp
    }
    fn extensions(&self) -> &'static [&'static str] {
        &[".cs"]
    }
    fn parse(&self, _path: &str, source: &str) -> ParsedFile {
        generic::parse(self, source)
    }
}

impl Grammar for CSharp {
    fn language(&self) -> tree_sitter::Language {
        tree_sitter_c_sharp::LANGUAGE.into()
    }

    fn definition<'t>(&self, node: Node<'t>, src: &str) -> Option<Def<'t>> {
        let flavor = match node.kind() {
            "namespace_declaration" => "namespace",
            "class_declaration" => "class",
            "struct_declaration" => "struct",
            "record_declaration" | "record_struct_declaration" => "record",
            "interface_declaration" => "interface",
            "enum_declaration" => "enum",
            "method_declaration" => "method",
            "constructor_declaration" => "constructor",
            "destructor_declaration" => "destructor",
            "local_function_statement" => "local function",
            "operator_declaration" => "operator",
            "property_declaration" | "indexer_declaration" => "property",
            _ => return None,
        };
        let kind = match flavor {
            "namespace" | "class" | "struct" | "record" | "interface" | "enum" => DefKind::Type,
            _ => DefKind::Function,
        };
        let name = match node.kind() {
            "indexer_declaration" => "this".to_string(),
            "operator_declaration" => format!("operator{}", field_text(node, "operator", src)?),
            "destructor_declaration" => format!("~{}", field_text(node, "name", src)?),
            _ => field_text(node, "name", src)?.to_string(),
        };
        let body = match node.kind() {
            // A property is an entity only where it has code: accessor
            // bodies or an expression.
            "property_declaration" | "indexer_declaration" => {
                let code = node
                    .child_by_field_name("accessors")
                    .filter(|a| {
                        generic::child_of_kind(*a, &["accessor_declaration"])
                            .is_some_and(|d| d.child_by_field_name("body").is_some())
                    })
                    .or_else(|| node.child_by_field_name("value"));
                Some(code?)
            }
            _ => node.child_by_field_name("body"),
        };
        let mut bases = Vec::new();
        if kind == DefKind::Type {
            if let Some(list) = generic::child_of_kind(node, &["base_list"]) {
                let mut c = list.walk();
                for b in list.named_children(&mut c) {
                    bases.extend(type_segments(node_text(b, src)));
                }
            }
        }
        Some(Def {
            name,
            owner: None,
            kind,
            flavor,
            body,
            bases,
        })
    }

    fn call(&self, node: Node, src: &str) -> Option<Call> {
        match node.kind() {
            "invocation_expression" => {
                let f = node.child_by_field_name("function")?;
                match f.kind() {
                    "identifier" => Some(Call::Name(node_text(f, src).to_string())),
                    "generic_name" => Some(Call::Name(first_identifier(f, src)?)),
                    "member_access_expression" => {
                        let name = f.child_by_field_name("name")?;
                        let name = match name.kind() {
                            "generic_name" => first_identifier(name, src)?,
                            _ => node_text(name, src).to_string(),
                        };
                        match f.child_by_field_name("expression") {
                            Some(e) if e.kind() == "identifier" => Some(Call::Attr {
                                recv: node_text(e, src).to_string(),
                                name,
                            }),
                            Some(e)
                                if matches!(
                                    e.kind(),
                                    "this_expression" | "this" | "base_expression" | "base"
                                ) =>
                            {
                                Some(Call::SelfMethod(name))
                            }
                            None if node_text(f, src).starts_with("this.") => {
                                Some(Call::SelfMethod(name))
                            }
                            _ => Some(Call::Attr {
                                recv: String::new(),
                                name,
                            }),
                        }
                    }
                    _ => None,
                }
            }
            "object_creation_expression" => {
                let ty = type_segments(field_text(node, "type", src)?)?;
                let name = ty.last()?.clone();
                Some(Call::Typed { ty, name })
            }
            _ => None,
        }
    }

    fn imports(&self, node: Node, src: &str) -> Option<Vec<Import>> {
        if node.kind() != "using_directive" {
            return None;
        }
        let alias = field_text(node, "name", src).map(str::to_string);
        // The target is the last name: `using A = B.C;` names A first.
        let target = {
            let mut c = node.walk();
            let found = node
                .named_children(&mut c)
                .filter(|n| matches!(n.kind(), "qualified_name" | "identifier"))
                .last();
            found
        };
        let path = target.and_then(|t| type_segments(node_text(t, src)));
        Some(match path {
            Some(path) => vec![Import::Qualified {
                wildcard: alias.is_none(),
                path,
                alias,
            }],
            None => Vec::new(),
        })
    }

    fn file_prefix(&self, node: Node, src: &str) -> Option<String> {
        (node.kind() == "file_scoped_namespace_declaration")
            .then(|| field_text(node, "name", src).map(str::to_string))
            .flatten()
    }

    fn declares(&self, node: Node, src: &str, out: &mut Vec<(String, Vec<String>)>) {
        match node.kind() {
            "variable_declaration" => {
                let written = node
                    .child_by_field_name("type")
                    .filter(|t| t.kind() != "implicit_type")
                    .and_then(|t| type_segments(node_text(t, src)));
                let mut c = node.walk();
                for d in node
                    .named_children(&mut c)
                    .filter(|d| d.kind() == "variable_declarator")
                {
                    let Some(name) = field_text(d, "name", src) else {
                        continue;
                    };
                    // `var r = new Repo()`: the type is what is made.
                    let made = generic::child_of_kind(d, &["object_creation_expression"])
                        .and_then(|o| field_text(o, "type", src))
                        .and_then(type_segments);
                    if let Some(ty) = written.clone().or(made) {
                        out.push((name.to_string(), ty));
                    }
                }
            }
            "parameter" => {
                if let (Some(ty), Some(name)) = (
                    field_text(node, "type", src).and_then(type_segments),
                    field_text(node, "name", src),
                ) {
                    out.push((name.to_string(), ty));
                }
            }
            _ => {}
        }
    }
}

fn first_identifier(node: Node, src: &str) -> Option<String> {
    generic::child_of_kind(node, &["identifier"]).map(|n| node_text(n, src).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse, Kind};

    const SRC: &str = r#"using System;
using Foo.Bar;
using Alias = Foo.Bar.Baz;
namespace MyApp.Models
{
    /// <summary>A user of the shop.</summary>
    public partial class User : Base, IThing
    {
        private Repo repo;
        public User(int x) { Init(x); }
        public string Name { get { return Compute(); } set { name = value; } }
        public int Age => GetAge();
        public int Plain { get; set; }
        public void Save(Store store) {
            this.Validate();
            repo.Store(this);
            store.Put(1);
            Helper.Log("x");
            var r = new Repo();
            r.Open();
            int Local(int y) { return y; }
        }
    }
    interface IThing { void Save(); }
    struct P { }
    record R(int A);
    enum E { A, B }
}
"#;

    #[test]
    fn entities_are_named_under_their_namespace() {
        let p = parse(Lang::CSharp, "User.cs", SRC);
        let got = p.kinds();
        assert_eq!(
            got,
            [
                ("MyApp.Models", Kind::Class, "namespace"),
                ("MyApp.Models.User", Kind::Class, "class"),
                ("MyApp.Models.User.User", Kind::Method, "constructor"),
                ("MyApp.Models.User.Name", Kind::Method, "property"),
                ("MyApp.Models.User.Age", Kind::Method, "property"),
                ("MyApp.Models.User.Save", Kind::Method, "method"),
                (
                    "MyApp.Models.User.Save.Local",
                    Kind::Function,
                    "local function"
                ),
                ("MyApp.Models.IThing", Kind::Class, "interface"),
                ("MyApp.Models.IThing.Save", Kind::Method, "method"),
                ("MyApp.Models.P", Kind::Class, "struct"),
                ("MyApp.Models.R", Kind::Class, "record"),
                ("MyApp.Models.E", Kind::Class, "enum"),
            ]
        );
        let user = &p.entities[1];
        assert_eq!(
            user.bases,
            [vec!["Base".to_string()], vec!["IThing".to_string()]]
        );
        assert_eq!(user.doc, "<summary>A user of the shop.</summary>");
    }

    #[test]
    fn calls_are_self_typed_or_named_and_usings_are_imports() {
        let p = parse(Lang::CSharp, "User.cs", SRC);
        let save = p
            .entities
            .iter()
            .find(|e| e.qualname.ends_with("User.Save"))
            .unwrap();
        let typed = |t: &str, n: &str| Call::Typed {
            ty: vec![t.to_string()],
            name: n.to_string(),
        };
        assert_eq!(
            save.calls,
            [
                Call::SelfMethod("Validate".into()),
                typed("Repo", "Store"),
                typed("Store", "Put"),
                Call::Attr {
                    recv: "Helper".into(),
                    name: "Log".into()
                },
                typed("Repo", "Repo"),
                typed("Repo", "Open"),
            ]
        );
        assert_eq!(
            p.imports[2],
            Import::Qualified {
                path: vec!["Foo".into(), "Bar".into(), "Baz".into()],
                alias: Some("Alias".into()),
                wildcard: false
            }
        );
        let q = parse(
            Lang::CSharp,
            "Q.cs",
            "namespace Other;\nclass Q { static void M() {} }\n",
        );
        let names: Vec<&str> = q.entities.iter().map(|e| e.qualname.as_str()).collect();
        assert_eq!(names, ["Other.Q", "Other.Q.M"]);
    }
}
