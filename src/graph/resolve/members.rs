//! The rules C#, PHP, Ruby, Kotlin, Swift, Scala and Bash share: imports
//! of a file by path or of a type by its qualified name, a bare call
//! that reaches the enclosing type's members first, and a type written in
//! several places (a C# partial class, a reopened Ruby class, a Swift
//! extension, a Scala companion object) counted as one.
//!
//! What each language provides every file (its standard library's free
//! functions and types) lives in its own list under `names/`.

use super::*;

pub(super) static CSHARP: NameList = NameList::new(include_str!("names/csharp.txt"));
pub(super) static PHP: NameList = NameList::new(include_str!("names/php.txt"));
pub(super) static RUBY: NameList = NameList::new(include_str!("names/ruby.txt"));
pub(super) static KOTLIN: NameList = NameList::new(include_str!("names/kotlin.txt"));
pub(super) static SWIFT: NameList = NameList::new(include_str!("names/swift.txt"));
pub(super) static SCALA: NameList = NameList::new(include_str!("names/scala.txt"));
pub(super) static BASH: NameList = NameList::new(include_str!("names/bash.txt"));

/// The language's list of what it provides, for the languages here.
pub(super) fn provided(lang: Lang) -> Option<&'static NameList> {
    Some(match lang {
        Lang::CSharp => &CSHARP,
        Lang::Php => &PHP,
        Lang::Ruby => &RUBY,
        Lang::Kotlin => &KOTLIN,
        Lang::Swift => &SWIFT,
        Lang::Scala => &SCALA,
        Lang::Bash => &BASH,
        _ => return None,
    })
}

/// Where a bare call inside a type reaches that type's members first:
/// every language here but PHP, whose bare calls are free functions, and
/// Bash, which has no types.
pub(super) fn calls_members_by_name(lang: Lang) -> bool {
    matches!(
        lang,
        Lang::CSharp | Lang::Ruby | Lang::Kotlin | Lang::Swift | Lang::Scala
    )
}

/// Whether a language's types and calls follow these rules.
pub(super) fn is_member_language(lang: Lang) -> bool {
    provided(lang).is_some()
}

impl Resolver<'_> {
    /// A file import: its top-level names are in scope.
    pub(super) fn bind_file(&self, from: &str, path: &str, relative: bool, b: &mut Bindings) {
        if let Some(file) = self.file_import(from, path, relative) {
            b.imported_files.insert(file.clone());
            b.globs.push(file);
        }
    }

    /// The file a path names from `from`: beside it when `relative`, else
    /// from `from`'s directory or any above it, then their `lib/`, as a
    /// load path finds it; the importing file's extension is added when
    /// the path has none.
    fn file_import(&self, from: &str, path: &str, relative: bool) -> Option<String> {
        let ext = from.rsplit_once('.').map(|(_, e)| e)?;
        let file = path.rsplit('/').next().unwrap_or(path);
        let written = match file.contains('.') {
            true => path.to_string(),
            false => format!("{path}.{ext}"),
        };
        let mut dir = crate::graph::dir_of(from);
        let mut dirs = vec![dir.to_string()];
        if !relative {
            while dir != "." {
                dir = crate::graph::dir_of(dir);
                dirs.push(dir.to_string());
            }
            let libs: Vec<String> = dirs.iter().map(|d| format!("{d}/lib")).collect();
            dirs.extend(libs);
        }
        dirs.into_iter().find_map(|d| {
            let cand = crate::graph::join_rel(&d, &written)?;
            self.src.is_file(&cand).then_some(cand)
        })
    }

    /// `using A.B.C;`, `import a.b.C as D`: the one type the path names.
    /// A namespace brought whole is left to the unique-name rule; a type
    /// no file here defines is a dependency's, and never a repository
    /// item of that name.
    pub(super) fn bind_qualified(
        &self,
        lang: Lang,
        imp: &Import,
        b: &mut Bindings,
        only: Option<&str>,
    ) {
        let Import::Qualified {
            path,
            alias,
            wildcard,
        } = imp
        else {
            return;
        };
        if *wildcard {
            b.namespaces.push(path.join("."));
            return;
        }
        let Some(last) = path.last() else {
            return;
        };
        let bound = alias.as_ref().unwrap_or(last);
        if !wants(only, bound) {
            return;
        }
        match self.qualified_type(lang, path) {
            Some((p, q)) => {
                b.imported_files.insert(p.clone());
                b.names.insert(bound.clone(), Target::Entity(p, q));
            }
            None => {
                b.external.insert(bound.clone());
            }
        }
    }

    /// The top-level type a qualified path names: the one whose qualname
    /// is the path (C# names carry their namespace), else the one whose
    /// file lies under the path's namespace as directories (Kotlin, Scala
    /// and PHP lay packages out so), else the only one so named.
    fn qualified_type(&self, lang: Lang, path: &[String]) -> Option<Loc> {
        let last = path.last()?;
        let mut types: Vec<NameRef> = self.src.named(lang, last, Slice::Classes);
        types.sort();
        let full = path.join(".");
        if let Some(t) = types.iter().find(|t| t.qualname == full) {
            return Some((t.path.clone(), t.qualname.clone()));
        }
        types.retain(|t| t.qualname.split('#').next() == Some(last.as_str()));
        let ns = path[..path.len() - 1].join("/").to_lowercase();
        let under = |t: &NameRef| {
            let dir = crate::graph::dir_of(&t.path).to_lowercase();
            !ns.is_empty() && (dir == ns || dir.ends_with(&format!("/{ns}")))
        };
        match types.iter().find(|t| under(t)) {
            Some(t) => Some((t.path.clone(), t.qualname.clone())),
            None => self.one_type(&types),
        }
    }

    /// A bare call inside a type: the type's own member (or its bases'),
    /// then one of a type of that name written elsewhere (an extension,
    /// a partial class), then the name as any other.
    pub(super) fn member_or_name(
        &self,
        f: &Facts,
        caller: Option<usize>,
        n: &str,
        b: &Bindings,
    ) -> Option<Loc> {
        let ents = &f.parsed.entities;
        super::enclosing_classes(ents, caller)
            .find_map(|s| self.own_member(f.lang, &f.path, &ents[s].qualname, n))
            .or_else(|| self.resolve_name(f, caller, n, b))
    }

    /// `n` as a member of type `q` of `path`: written in the type, then in
    /// the same type written elsewhere (an extension, a partial class, a
    /// reopened class), then in its bases.
    pub(super) fn own_member(&self, lang: Lang, path: &str, q: &str, n: &str) -> Option<Loc> {
        let plain = q.split('#').next().unwrap_or(q);
        if let Some(i) = self.lookup_qualname(path, &format!("{plain}.{n}")) {
            return Some((path.to_string(), i));
        }
        self.typed_method(lang, path, bare_name(q), n)
            .or_else(|| self.python_method(path, q, n, 0))
            .or_else(|| self.bases_elsewhere(lang, path, plain, n))
    }

    /// `n` in the bases another part of the type declares: a partial
    /// class or a reopened Ruby class names its base once.
    fn bases_elsewhere(&self, lang: Lang, path: &str, plain: &str, n: &str) -> Option<Loc> {
        let mut parts: Vec<NameRef> = self
            .src
            .named(lang, bare_name(plain), Slice::Classes)
            .into_iter()
            .filter(|t| t.path != path && t.qualname.split('#').next() == Some(plain))
            .collect();
        parts.sort();
        parts
            .iter()
            .take(8)
            .find_map(|t| self.python_method(&t.path, &t.qualname, n, 0))
    }

    /// One type among several entries that are all the same type written
    /// in several places (qualnames equal but for a `#n`): its definition
    /// rather than an extension of it, first in path order. `None` when
    /// they name different types.
    pub(super) fn one_type(&self, types: &[NameRef]) -> Option<Loc> {
        let first = types.first()?;
        let plain = |q: &str| q.split('#').next().unwrap_or(q).to_string();
        let name = plain(&first.qualname);
        if types.iter().any(|t| plain(&t.qualname) != name) {
            return None;
        }
        let extension = |t: &NameRef| {
            self.entity(&t.path, &t.qualname)
                .is_some_and(|e| e.facts.parsed.entities[e.idx].flavor == "extension")
        };
        let pick = types.iter().find(|t| !extension(t)).unwrap_or(first);
        self.lookup_qualname(&pick.path, &pick.qualname)
            .map(|i| (pick.path.clone(), i))
    }

    /// `T.m()`, `x.m()` with `x` declared a `T`, `new T()`: T's member
    /// (or its bases'), else one of a type named T written elsewhere; a
    /// constructor call is T's constructor, or T.
    pub(super) fn member_of_type(
        &self,
        f: &Facts,
        caller: Option<usize>,
        ty: &[String],
        name: &str,
        b: &Bindings,
    ) -> Option<Loc> {
        let short = ty.last()?;
        // Ruby makes objects with `new` and builds them in `initialize`.
        let (name, ctor) = match (f.lang, name) {
            (Lang::Ruby, "new") => ("initialize", true),
            (_, n) => (n, n == short),
        };
        let class = self.java_type(f, caller, ty, b);
        let in_class = class
            .as_ref()
            .and_then(|(p, q)| self.own_member(f.lang, p, q, name));
        let path = class.as_ref().map_or(f.path.as_str(), |(p, _)| p.as_str());
        in_class
            .or_else(|| self.typed_method(f.lang, path, short, name))
            .or(class.filter(|_| ctor))
    }
}
