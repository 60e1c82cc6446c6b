//! C and C++'s rules: `#include` paths, and classes for out-of-line
//! methods.

use super::*;

impl Resolver<'_> {
    /// The repository file an `#include` names: beside the including file,
    /// then under each directory above it, or that directory's `include/`
    /// (a library in `lib/x/` keeps its headers in `lib/x/include/`), then
    /// under `src/` at the root.
    pub(super) fn c_include(&self, from: &str, inc: &str) -> Option<String> {
        let mut dirs: Vec<String> = Vec::new();
        let mut d = crate::graph::dir_of(from);
        loop {
            dirs.push(d.to_string());
            dirs.push(match d {
                "." => "include".to_string(),
                d => format!("{d}/include"),
            });
            if d == "." {
                break;
            }
            d = crate::graph::dir_of(d);
        }
        dirs.push("src".to_string());
        dirs.into_iter().find_map(|dir| {
            let cand = crate::graph::join_rel(&dir, inc)?;
            self.src.is_file(&cand).then_some(cand)
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
