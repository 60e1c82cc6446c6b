//! JavaScript and TypeScript's rules: relative specifiers, index files
//! and extensions, and `tsconfig.json` paths and baseUrl.

use super::*;

/// The key prefix of a `tsconfig.json` mapping in the manifests map:
/// `ts:<dir>\u{1}<pattern>` → target, where an empty pattern is `baseUrl`.
pub const TS_PATHS: &str = "ts:";

/// The globals of ECMAScript and of its usual hosts (browsers and Node),
/// which a module sees after its own bindings and imports.
pub(super) static GLOBALS: NameList = NameList::new(include_str!("names/js_globals.txt"));

impl Resolver<'_> {
    pub(super) fn bind_js(
        &self,
        path: &str,
        imp: &Import,
        depth: u32,
        b: &mut Bindings,
        only: Option<&str>,
    ) {
        let Import::Js {
            source,
            names,
            namespace,
        } = imp
        else {
            return;
        };
        let Some(file) = self.js_module(path, source) else {
            return;
        };
        if names.is_empty() && namespace.is_none() && only.is_none() {
            b.imported_files.insert(file.clone());
        }
        if let Some(ns) = namespace.as_ref().filter(|n| wants(only, n)) {
            b.imported_files.insert(file.clone());
            b.names.insert(ns.clone(), Target::Module(file.clone()));
        }
        for (n, bound) in names {
            if n == "*" {
                b.imported_files.insert(file.clone());
                b.globs.push(file.clone());
                continue;
            }
            if !wants(only, bound) {
                continue;
            }
            b.imported_files.insert(file.clone());
            // A default export is found by the name it is bound to.
            let name = if n == "default" { bound } else { n };
            let t = self.symbol_in(&file, name, depth);
            b.names
                .insert(bound.clone(), t.unwrap_or(Target::Module(file.clone())));
        }
    }

    /// The file a relative JavaScript/TypeScript specifier names, by Node's
    /// rules: as written, with each extension, or as a directory's
    /// `index.*`. A `.js` specifier may name the `.ts` source it compiles
    /// from. Bare package names stay external.
    pub(super) fn js_module(&self, from: &str, spec: &str) -> Option<String> {
        if !(spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == "..") {
            return self.ts_mapped(from, spec);
        }
        self.js_file(crate::graph::join_rel(crate::graph::dir_of(from), spec)?)
    }

    /// A bare specifier through the nearest `tsconfig.json` above `from`:
    /// its `paths` patterns (longest prefix first), then its `baseUrl`.
    pub(super) fn ts_mapped(&self, from: &str, spec: &str) -> Option<String> {
        let mut entries: Vec<(&str, &str, &str)> = self
            .src
            .crates()
            .iter()
            .filter_map(|(k, v)| {
                let (dir, pattern) = k.strip_prefix(TS_PATHS)?.split_once('\u{1}')?;
                let under = dir == "." || from.starts_with(&format!("{dir}/"));
                under.then_some((dir, pattern, v.as_str()))
            })
            .collect();
        let nearest = entries.iter().map(|e| e.0.len()).max()?;
        entries.retain(|e| e.0.len() == nearest);
        // Exact patterns, then wildcards by longest prefix, then baseUrl.
        entries.sort_by_key(|(_, p, _)| match p.split_once('*') {
            None if p.is_empty() => (2, 0),
            None => (0, 0),
            Some((pre, _)) => (1, usize::MAX - pre.len()),
        });
        entries.into_iter().find_map(|(_, pattern, target)| {
            let mapped = match pattern.split_once('*') {
                _ if pattern.is_empty() => format!("{target}/{spec}"),
                None => (pattern == spec).then(|| target.to_string())?,
                Some((pre, post)) => {
                    let mid = spec.strip_prefix(pre)?.strip_suffix(post)?;
                    target.replace('*', mid)
                }
            };
            self.js_file(crate::graph::join_rel(".", &mapped)?)
        })
    }

    /// The source file a module path names, by Node's resolution.
    pub(super) fn js_file(&self, base: String) -> Option<String> {
        const EXTS: &[&str] = &[".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
        let stem = [".js", ".jsx", ".mjs", ".cjs"]
            .iter()
            .find_map(|e| base.strip_suffix(e))
            .unwrap_or(&base);
        std::iter::once(base.clone())
            .chain(EXTS.iter().map(|e| format!("{base}{e}")))
            .chain(EXTS.iter().map(|e| format!("{stem}{e}")))
            .chain(EXTS.iter().map(|e| format!("{base}/index{e}")))
            .find(|c| !c.is_empty() && self.src.is_file(c))
    }
}
