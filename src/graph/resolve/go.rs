//! Go's rules: import paths through `go.mod` to package directories,
//! and methods through receiver types.

use super::*;

/// The key prefix of a Go module in the manifests map: `go:<module path>`.
pub const GO_MODULE: &str = "go:";

/// The name a Go import binds: its alias, else the path's last element,
/// skipping a `/vN` major-version suffix.
pub fn go_package_name(path: &str, alias: Option<&str>) -> String {
    if let Some(a) = alias {
        return a.to_string();
    }
    let mut parts = path.rsplit('/');
    let last = parts.next().unwrap_or(path);
    let is_version =
        last.len() > 1 && last.starts_with('v') && last[1..].bytes().all(|c| c.is_ascii_digit());
    match parts.next() {
        Some(prev) if is_version => prev.to_string(),
        _ => last.to_string(),
    }
}

impl Resolver<'_> {
    pub(super) fn bind_go(&self, imp: &Import, b: &mut Bindings, only: Option<&str>) {
        let Import::Go { path: ip, alias } = imp else {
            return;
        };
        let bound = go_package_name(ip, alias.as_deref());
        if bound == "_" || (bound != "." && !wants(only, &bound)) {
            return;
        }
        let Some(dir) = self.go_package_dir(ip) else {
            // A package the repository does not hold (`encoding/json`):
            // `json.Unmarshal` is never the repository's `Unmarshal`.
            if bound != "." {
                b.external.insert(bound);
            }
            return;
        };
        if bound == "." {
            b.packages.push(dir);
        } else {
            b.names.insert(bound, Target::Package(dir));
        }
    }

    /// The directory of a Go import path inside this repository, through
    /// the `go.mod` module it falls under (the longest module path wins).
    pub(super) fn go_package_dir(&self, ip: &str) -> Option<String> {
        let (module, dir) = self
            .src
            .crates()
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(GO_MODULE)?, v)))
            .filter(|(m, _)| ip == *m || ip.starts_with(&format!("{m}/")))
            .max_by_key(|(m, _)| m.len())?;
        let rest = ip[module.len()..].trim_start_matches('/');
        Some(match (dir.as_str(), rest) {
            (".", "") => ".".to_string(),
            (".", r) => r.to_string(),
            (d, "") => d.to_string(),
            (d, r) => format!("{d}/{r}"),
        })
    }

    /// The package directory and name of a Go type as written.
    pub(super) fn go_type(
        &self,
        f: &Facts,
        ty: &[String],
        b: &Bindings,
    ) -> Option<(String, String)> {
        match ty {
            [t] => Some((crate::graph::dir_of(&f.path).to_string(), t.clone())),
            [p, t] => match b.names.get(p) {
                Some(Target::Package(d)) => Some((d.clone(), t.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    /// Method `n` of Go type `t` in package `dir`, or promoted from a type
    /// it embeds.
    pub(super) fn go_method(&self, dir: &str, t: &str, n: &str, depth: u32) -> Option<Loc> {
        let mut hits: Vec<NameRef> = self
            .src
            .named(Lang::Go, n, Slice::MethodsOf(t))
            .into_iter()
            .filter(|r| in_package(Lang::Go, &r.path, dir))
            .collect();
        hits.sort();
        if let Some(h) = hits.into_iter().next() {
            return Some((h.path, h.qualname));
        }
        if depth >= 4 {
            return None;
        }
        let (path, q) = self.package_member(Lang::Go, dir, t, Slice::Classes)?;
        let class = self.entity(&path, &q)?;
        let f = self.src.facts(&path)?;
        let b = self.bindings(&path);
        class.bases.iter().find_map(|base| {
            let (d, bt) = self.go_type(&f, base, &b)?;
            self.go_method(&d, &bt, n, depth + 1)
        })
    }
}
