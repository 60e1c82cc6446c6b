//! What a project's manifests say about its imports: Rust crate roots,
//! TypeScript path aliases, the Go module path.

use crate::git::{Repo, TreeFile};
use std::collections::BTreeMap;

/// Whether a path is a manifest that says how code is named across
/// directories: a `Cargo.toml`, a `go.mod`, a `tsconfig.json`, or a C/C++
/// build file naming include directories.
pub fn is_manifest(path: &str) -> bool {
    let name = crate::text::file_name(path);
    name == "Cargo.toml"
        || name == "go.mod"
        || is_tsconfig(name)
        || crate::graph::resolve::is_c_build_file(path)
}

/// `tsconfig.json`, or a config one extends (`tsconfig.base.json`).
fn is_tsconfig(name: &str) -> bool {
    name.starts_with("tsconfig") && name.ends_with(".json")
}

/// Cargo package names → their `src` directory, `cinc:<dir>` → an include
/// directory of the build files, and `go:<module path>` →
/// the module's directory, from the tree's manifests.
pub fn crate_roots(repo: &Repo, files: &[TreeFile]) -> BTreeMap<String, String> {
    let local = repo.local();
    let mut out = BTreeMap::new();
    // Path → blob, built only if a manifest looks at other files.
    let mut tree: Option<BTreeMap<&str, gix::ObjectId>> = None;
    for f in files.iter().filter(|f| is_manifest(&f.path)) {
        let Ok(data) = Repo::read_blob(&local, f.blob) else {
            continue;
        };
        let Ok(text) = String::from_utf8(data) else {
            continue;
        };
        let index = || files.iter().map(|f| (&*f.path, f.blob)).collect();
        if crate::graph::resolve::is_c_build_file(&f.path) {
            let tree = tree.get_or_insert_with(index);
            for dir in crate::graph::resolve::include_dirs(&f.path, &text, tree) {
                out.insert(format!("{}{dir}", crate::graph::resolve::C_INCLUDE), dir);
            }
            continue;
        }
        let name = crate::text::file_name(&f.path);
        if is_tsconfig(name) {
            // Other tsconfigs only lend options to those that extend them.
            if name == "tsconfig.json" {
                let tree = tree.get_or_insert_with(index);
                let read = |path: &str| {
                    let blob = *tree.get(path)?;
                    String::from_utf8(Repo::read_blob(&local, blob).ok()?).ok()
                };
                out.extend(tsconfig_paths(&f.path, &text, &read));
            }
            continue;
        }
        if f.path.ends_with("go.mod") {
            if let Some(module) = go_module_path(&text) {
                let dir = crate::graph::dir_of(&f.path).to_string();
                out.insert(format!("{}{module}", crate::graph::resolve::GO_MODULE), dir);
            }
            continue;
        }
        let Ok(doc) = text.parse::<toml::Table>() else {
            continue;
        };
        let Some(name) = doc
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str())
        else {
            continue;
        };
        let dir = crate::graph::dir_of(&f.path);
        let src = if dir == "." {
            "src".to_string()
        } else {
            format!("{dir}/src")
        };
        out.insert(name.to_string(), src);
    }
    out
}

/// A tsconfig's `baseUrl` and `paths`, its own or those of the configs
/// it `extends` (relative ones only: a package's config is not in the
/// repository), each resolved against the config that sets it.
#[derive(Default)]
struct TsOptions {
    base_url: Option<String>,
    /// The patterns, and the directory of the config that set them.
    paths: Option<(serde_json::Map<String, serde_json::Value>, String)>,
}

fn ts_options(
    path: &str,
    text: &str,
    read: &dyn Fn(&str) -> Option<String>,
    hops: u32,
) -> TsOptions {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&relaxed_json(text)) else {
        return TsOptions::default();
    };
    let dir = crate::graph::dir_of(path);
    let options = &v["compilerOptions"];
    let mut own = TsOptions {
        base_url: options["baseUrl"]
            .as_str()
            .and_then(|b| crate::graph::join_rel(dir, b)),
        paths: options["paths"]
            .as_object()
            .map(|p| (p.clone(), dir.to_string())),
    };
    let parents: Vec<&str> = match &v["extends"] {
        serde_json::Value::String(e) => vec![e.as_str()],
        serde_json::Value::Array(a) => a.iter().filter_map(|e| e.as_str()).collect(),
        _ => Vec::new(),
    };
    // Later parents override earlier ones, and the config itself all.
    for e in parents
        .iter()
        .rev()
        .filter(|e| e.starts_with("./") || e.starts_with("../"))
    {
        let Some(mut ext) = crate::graph::join_rel(dir, e) else {
            continue;
        };
        if !ext.ends_with(".json") {
            ext.push_str(".json");
        }
        let Some(text) = (hops > 0).then(|| read(&ext)).flatten() else {
            continue;
        };
        let parent = ts_options(&ext, &text, read, hops - 1);
        own.base_url = own.base_url.or(parent.base_url);
        own.paths = own.paths.or(parent.paths);
    }
    own
}

/// A `tsconfig.json`'s `baseUrl` and `paths` as manifest entries (see
/// [`TS_PATHS`](crate::graph::resolve::TS_PATHS)), targets made relative
/// to the repository root. tsconfig allows comments and trailing commas.
fn tsconfig_paths(
    path: &str,
    text: &str,
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let dir = crate::graph::dir_of(path);
    let options = ts_options(path, text, read, 4);
    let key = |pattern: &str| format!("{}{dir}\u{1}{pattern}", crate::graph::resolve::TS_PATHS);
    let mut out = Vec::new();
    if let Some(base) = &options.base_url {
        out.push((key(""), crate::graph::dir_or_root(base.clone())));
    }
    if let Some((paths, set_in)) = &options.paths {
        let base = options.base_url.clone().unwrap_or_else(|| set_in.clone());
        for (pattern, targets) in paths {
            let first = targets
                .as_array()
                .and_then(|t| t.first())
                .and_then(|t| t.as_str());
            if let Some(target) = first.and_then(|t| crate::graph::join_rel(&base, t)) {
                out.push((key(pattern), target));
            }
        }
    }
    out
}

/// JSON with `//` and `/* */` comments and trailing commas removed.
fn relaxed_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            (',', _) => {
                let rest: String = chars.clone().take_while(|n| n.is_whitespace()).collect();
                let next = chars.clone().nth(rest.chars().count());
                if !matches!(next, Some('}') | Some(']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// The `module` line of a go.mod.
fn go_module_path(text: &str) -> Option<&str> {
    text.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        let m = rest.split("//").next()?.trim().trim_matches('"');
        (!m.is_empty() && rest.starts_with([' ', '\t'])).then_some(m)
    })
}
