//! C and C++'s rules: `#include` paths, and classes for out-of-line
//! methods.

use super::*;

impl Resolver<'_> {
    /// The repository file an `#include` names: beside the including file,
    /// then under each directory the build files add with `-I`, then under
    /// each directory above it, or that directory's `include/`
    /// (a library in `lib/x/` keeps its headers in `lib/x/include/`), then
    /// under `src/` at the root.
    pub(super) fn c_include(&self, from: &str, inc: &str) -> Option<String> {
        let dir = crate::graph::dir_of(from);
        {
            let mut cache = self.includes.borrow_mut();
            if cache.0 != dir {
                cache.0 = dir.to_string();
                cache.1.clear();
            }
            if let Some((hit, d)) = cache.1.get(inc) {
                self.src.reuse(d);
                return hit.clone();
            }
        }
        self.src.push();
        let hit = self.find_include(dir, inc);
        let d = Rc::new(self.src.pop());
        let mut cache = self.includes.borrow_mut();
        cache.1.insert(inc.to_string(), (hit.clone(), d));
        hit
    }

    /// [`Resolver::c_include`] from directory `from_dir`, uncached.
    fn find_include(&self, from_dir: &str, inc: &str) -> Option<String> {
        // Each directory to look in, with the length of its part known to
        // hold files (the including file's directory, those above it, and
        // those the build files name do).
        let whole = |d: String| (d.len(), d);
        let mut d = from_dir;
        let mut dirs: Vec<(usize, String)> = vec![whole(d.to_string())];
        // Then what the build files pass with `-I`, then the directories
        // above (beside the including file was tried first).
        dirs.extend(
            self.src
                .crates()
                .range::<str, _>((
                    std::ops::Bound::Included(C_INCLUDE),
                    std::ops::Bound::Unbounded,
                ))
                .take_while(|(k, _)| k.starts_with(C_INCLUDE))
                .map(|(_, dir)| whole(dir.clone())),
        );
        loop {
            if d != from_dir {
                dirs.push(whole(d.to_string()));
            }
            dirs.push(match d {
                "." => (0, "include".to_string()),
                d => (d.len(), format!("{d}/include")),
            });
            if d == "." {
                break;
            }
            d = crate::graph::dir_of(d);
        }
        dirs.push((0, "src".to_string()));
        dirs.into_iter().find_map(|(known, dir)| {
            let cand = crate::graph::join_rel(&dir, inc)?;
            // The root's `.` is no prefix of a path `join_rel` makes.
            self.src.is_file_under(&dir[..known], &cand).then_some(cand)
        })
    }

    /// A C++ class by its name as written (`A`, `ns::A`): in this file,
    /// else the one class whose qualname ends so.
    pub(super) fn cpp_class(&self, f: &Facts, written: &str) -> Option<Loc> {
        if let Some(q) = self.lookup_qualname(&f.path, written) {
            return self
                .is_class(&(f.path.clone(), q.clone()))
                .then(|| (f.path.clone(), q));
        }
        let short = written.rsplit("::").next().unwrap_or(written);
        let tail = format!("::{written}");
        let classes = || self.src.named(f.lang, short, Slice::Classes).into_iter();
        // Namespaces are not part of ids: `detail::buffer` may be `buffer`.
        self.unique(classes().filter(|r| r.qualname == written || r.qualname.ends_with(&tail)))
            .or_else(|| self.unique(classes().filter(|r| r.qualname == short)))
    }
}

/// Manifest entries `cinc:<dir>` → `<dir>`: a repository directory a build
/// file hands the compiler as an include path.
pub const C_INCLUDE: &str = "cinc:";

/// Whether `path` is a build file that may name include directories.
pub fn is_c_build_file(path: &str) -> bool {
    let name = crate::text::file_name(path);
    matches!(
        name,
        "CMakeLists.txt" | "compile_commands.json" | "Makefile" | "makefile" | "GNUmakefile"
    ) || name == "Makefile.am"
        || name.ends_with(".mk")
        || name.ends_with(".cmake")
}

/// The repository directories that build file `path` (text `text`) adds
/// to the include path: `-I`, `-iquote` and `-isystem` flags in a
/// Makefile or `compile_commands.json`, CMake's `include_directories` and
/// `target_include_directories`. Only directories holding some file of
/// `files` (the tree's paths, in order) count; variables other than the
/// source-directory ones are not expanded, so what they name is skipped.
pub fn include_dirs<V>(path: &str, text: &str, files: &BTreeMap<&str, V>) -> Vec<String> {
    let dir = crate::graph::dir_of(path);
    let found = match crate::text::file_name(path) {
        "compile_commands.json" => compile_commands(text, files),
        n if n == "CMakeLists.txt" || n.ends_with(".cmake") => cmake(dir, text),
        _ => make(dir, text),
    };
    let holds = |d: &String| {
        let prefix = if d == "." {
            String::new()
        } else {
            format!("{d}/")
        };
        files
            .range::<str, _>((
                std::ops::Bound::Included(prefix.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .next()
            .is_some_and(|(f, _)| f.starts_with(&prefix))
    };
    let mut out: Vec<String> = found.into_iter().filter(holds).collect();
    out.sort();
    out.dedup();
    out
}

/// The value of each include flag in `args`, joined or separate.
fn include_flags<'a>(args: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        for flag in ["-I", "-iquote", "-isystem"] {
            if let Some(v) = a.strip_prefix(flag) {
                match v {
                    "" => out.extend(args.next()),
                    v if flag == "-I" || !v.starts_with(char::is_alphabetic) => out.push(v),
                    _ => continue,
                }
                break;
            }
        }
    }
    out
}

/// `-I` flags in a Makefile, relative to its directory; `$(srcdir)` and
/// friends are that directory, `$(top_srcdir)` the root.
fn make(dir: &str, text: &str) -> Vec<String> {
    let words = text.split(|c: char| c.is_whitespace() || c == '\\');
    let mut out = Vec::new();
    for v in include_flags(words) {
        let v = v.trim_matches(|c| c == '"' || c == '\'');
        if v.starts_with('/') {
            continue;
        }
        let (base, rest) = match source_var(v, &["top_srcdir", "abs_top_srcdir"]) {
            Some(rest) => (".", rest),
            None => match source_var(v, &["srcdir", "abs_srcdir", "CURDIR"]) {
                Some(rest) => (dir, rest),
                None => (dir, v),
            },
        };
        if !rest.contains('$') {
            out.extend(crate::graph::join_rel(base, rest).map(crate::graph::dir_or_root));
        }
    }
    out
}

/// `v` without a leading `$(name)` or `${name}` of one of `names`, and
/// the `/` after it.
fn source_var<'a>(v: &'a str, names: &[&str]) -> Option<&'a str> {
    names.iter().find_map(|n| {
        let rest = v
            .strip_prefix(&format!("$({n})"))
            .or_else(|| v.strip_prefix(&format!("${{{n}}}")))?;
        Some(rest.trim_start_matches('/'))
    })
}

/// CMake's include commands, relative to the CMakeLists' directory;
/// `${CMAKE_CURRENT_SOURCE_DIR}` is that directory, `${PROJECT_SOURCE_DIR}`
/// the root, `$<BUILD_INTERFACE:…>` what it wraps.
fn cmake(dir: &str, text: &str) -> Vec<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    for cmd in ["target_include_directories(", "include_directories("] {
        let mut at = 0;
        while let Some(i) = lower[at..].find(cmd) {
            let start = at + i + cmd.len();
            at = start;
            let before = lower[..start - cmd.len()].chars().next_back();
            if cmd == "include_directories(" && before == Some('_') {
                continue;
            }
            let Some(end) = text[start..].find(')') else {
                break;
            };
            let mut args = text[start..start + end].split_whitespace();
            if cmd.starts_with("target") {
                args.next();
            }
            out.extend(args.filter_map(|a| cmake_dir(dir, a)));
        }
    }
    out
}

fn cmake_dir(dir: &str, arg: &str) -> Option<String> {
    const KEYWORDS: &[&str] = &[
        "SYSTEM",
        "BEFORE",
        "AFTER",
        "PUBLIC",
        "PRIVATE",
        "INTERFACE",
    ];
    let a = arg.trim_matches('"');
    if KEYWORDS.contains(&a) {
        return None;
    }
    let a = match a.strip_prefix("$<BUILD_INTERFACE:") {
        Some(inner) => inner.strip_suffix('>')?,
        None => a,
    };
    if a.starts_with('/') {
        return None;
    }
    let here = ["CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR"];
    let root = ["PROJECT_SOURCE_DIR", "CMAKE_SOURCE_DIR"];
    let (base, rest) = match source_var(a, &root) {
        Some(rest) => (".", rest),
        None => (dir, source_var(a, &here).unwrap_or(a)),
    };
    if rest.contains('$') {
        return None;
    }
    crate::graph::join_rel(base, rest).map(crate::graph::dir_or_root)
}

/// A compilation database's include flags, made relative to the
/// repository by finding where its files sit on the machine that wrote it.
fn compile_commands<V>(text: &str, files: &BTreeMap<&str, V>) -> Vec<String> {
    let Ok(serde_json::Value::Array(entries)) = serde_json::from_str(text) else {
        return Vec::new();
    };
    let mut root: Option<String> = None;
    let mut out = Vec::new();
    for e in &entries {
        let (Some(build), Some(file)) = (e["directory"].as_str(), e["file"].as_str()) else {
            continue;
        };
        let file = absolute(build, file);
        if root.is_none() {
            root = checkout_root(&file, files);
        }
        let Some(root) = &root else { continue };
        let args: Vec<&str> = match e["arguments"].as_array() {
            Some(a) => a.iter().filter_map(|v| v.as_str()).collect(),
            None => e["command"]
                .as_str()
                .unwrap_or("")
                .split_whitespace()
                .collect(),
        };
        for v in include_flags(args) {
            let abs = absolute(build, v.trim_matches('"'));
            if let Some(rel) = format!("{abs}/").strip_prefix(root.as_str()) {
                out.extend(crate::graph::join_rel(".", rel).map(crate::graph::dir_or_root));
            }
        }
    }
    out
}

/// `p` against directory `base` when relative, `..` left for join_rel.
fn absolute(base: &str, p: &str) -> String {
    if p.starts_with('/') {
        p.to_string()
    } else {
        format!("{}/{p}", base.trim_end_matches('/'))
    }
}

/// The directory that `file`, an absolute path, was checked out under: the
/// part before the longest tail of it that is a repository file.
fn checkout_root<V>(file: &str, files: &BTreeMap<&str, V>) -> Option<String> {
    let normal = crate::graph::join_rel("", file.trim_start_matches('/'))?;
    let mut at = 0;
    while let Some(i) = normal[at..].find('/') {
        let tail = &normal[at + i + 1..];
        if files.contains_key(tail) {
            return Some(format!("/{}", &normal[..at + i + 1]));
        }
        at += i + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::include_dirs;
    use std::collections::BTreeMap;

    const FILES: &[&str] = &[
        "lib/api/api.h",
        "lib/CMakeLists.txt",
        "src/main.c",
        "vendor/zlib/zlib.h",
        "Makefile",
    ];

    fn dirs(path: &str, text: &str) -> Vec<String> {
        let files: BTreeMap<&str, ()> = FILES.iter().map(|f| (*f, ())).collect();
        include_dirs(path, text, &files)
    }

    #[test]
    fn a_makefile_s_include_flags_are_its_directories_in_the_repository() {
        let text = "CFLAGS += -I$(srcdir)/lib/api -I vendor/zlib -I/usr/include -I$(OUT)/gen\n\
                    AM_CPPFLAGS = -iquote $(top_srcdir)/src -I../outside\n";
        assert_eq!(dirs("Makefile", text), ["lib/api", "src", "vendor/zlib"]);
    }

    #[test]
    fn cmake_s_include_commands_expand_the_source_directories_only() {
        let text = "target_include_directories(api PUBLIC\n  \
                    \"$<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/api>\"\n  \
                    $<INSTALL_INTERFACE:include> ${GENERATED})\n\
                    include_directories(SYSTEM ${PROJECT_SOURCE_DIR}/vendor/zlib)\n";
        assert_eq!(dirs("lib/CMakeLists.txt", text), ["lib/api", "vendor/zlib"]);
    }

    #[test]
    fn a_compilation_database_is_read_relative_to_where_the_checkout_was() {
        let text = r#"[
            {"directory": "/home/ci/repo/build", "file": "../src/main.c",
             "command": "cc -I../lib/api -isystem /home/ci/repo/vendor/zlib -I/opt/x -c ../src/main.c"},
            {"directory": "/home/ci/repo/build", "file": "/home/ci/repo/src/main.c",
             "arguments": ["cc", "-I", "/home/ci/repo/src", "-c", "main.c"]}
        ]"#;
        assert_eq!(
            dirs("compile_commands.json", text),
            ["lib/api", "src", "vendor/zlib"]
        );
        assert_eq!(
            dirs("compile_commands.json", "not json"),
            Vec::<String>::new()
        );
    }
}
