//! Python's rules: dotted modules under the root, `src/` or `lib/`,
//! relative imports, and methods found through the class and its bases.

use super::*;

/// Python's builtins (3.12), which every module sees after its own names
/// and its imports.
pub(super) static BUILTINS: NameList = NameList::new(include_str!("names/python_builtins.txt"));

/// The top-level modules of Python's standard library (3.11's
/// `sys.stdlib_module_names`, private ones left out).
static STDLIB: NameList = NameList::new(include_str!("names/python_stdlib.txt"));

impl Resolver<'_> {
    /// The file a dotted Python module names, under the root, `src/` or `lib/`.
    pub(super) fn py_module(&self, dotted: &str) -> Option<String> {
        if dotted.is_empty() {
            return None;
        }
        let rel = dotted.replace('.', "/");
        for root in ["", "src/", "lib/"] {
            for cand in [
                format!("{root}{rel}.py"),
                format!("{root}{rel}/__init__.py"),
                format!("{root}{rel}.pyi"),
                format!("{root}{rel}/__init__.pyi"),
            ] {
                if self.src.is_file(&cand) {
                    return Some(cand);
                }
            }
        }
        None
    }

    /// A Python file's own dotted name (layout prefix stripped).
    pub(super) fn py_file_mod(&self, path: &str) -> Option<Vec<String>> {
        let stem = path
            .strip_suffix(".py")
            .or_else(|| path.strip_suffix(".pyi"))?;
        let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
        if parts.last().is_some_and(|p| p == "__init__") {
            parts.pop();
        }
        if parts.len() > 1 && matches!(parts[0].as_str(), "src" | "lib") {
            parts.remove(0);
        }
        (!parts.is_empty()).then_some(parts)
    }

    pub(super) fn bind_python(
        &self,
        path: &str,
        imp: &Import,
        depth: u32,
        b: &mut Bindings,
        only: Option<&str>,
    ) {
        let Import::Python {
            level,
            module,
            names,
            alias,
        } = imp
        else {
            return;
        };
        let Some(base) = self.py_absolute(path, *level, module) else {
            return;
        };
        if names.is_empty() {
            let bound = alias.clone().unwrap_or_else(|| base[0].clone());
            if !wants(only, &bound) {
                return;
            }
            // `import a.b.c` binds `a`; `import a.b as c` binds c to a.b.
            if let Some(file) = self.py_module(&base.join(".")) {
                b.imported_files.insert(file.to_string());
            }
            match alias {
                Some(a) => {
                    if let Some(file) = self.py_module(&base.join(".")) {
                        b.names.insert(a.clone(), Target::Module(file.to_string()));
                    }
                }
                None => {
                    if let Some(file) = self.py_module(&base[0]) {
                        b.names
                            .insert(base[0].clone(), Target::Module(file.to_string()));
                    }
                }
            }
            return;
        }
        let module_file = self.py_module(&base.join("."));
        for (name, bound) in names {
            if name != "*" && !wants(only, bound) {
                continue;
            }
            if name == "*" {
                if let Some(m) = &module_file {
                    b.imported_files.insert(m.to_string());
                    b.globs.push(m.to_string());
                }
                continue;
            }
            let mut sub = base.clone();
            sub.push(name.clone());
            if let Some(file) = self.py_module(&sub.join(".")) {
                b.imported_files.insert(file.to_string());
                b.names
                    .insert(bound.clone(), Target::Module(file.to_string()));
            } else if let Some(m) = &module_file {
                b.imported_files.insert(m.to_string());
                if let Some(t) = self.symbol_in(m, name, depth) {
                    b.names.insert(bound.clone(), t);
                }
            } else if *level == 0 && STDLIB.contains(&base[0]) && self.py_module(&base[0]).is_none()
            {
                // `from typing import Any`: the standard library's, not a
                // repository class that happens to be the only `Any`.
                b.external.insert(bound.clone());
            }
        }
    }

    pub(super) fn py_absolute(
        &self,
        path: &str,
        level: usize,
        module: &[String],
    ) -> Option<Vec<String>> {
        if level == 0 {
            return (!module.is_empty()).then(|| module.to_vec());
        }
        let own = self.py_file_mod(path)?;
        let is_init = path.ends_with("__init__.py") || path.ends_with("__init__.pyi");
        let mut package: Vec<String> = if is_init {
            own.clone()
        } else {
            own[..own.len().saturating_sub(1)].to_vec()
        };
        for _ in 1..level {
            package.pop()?;
        }
        package.extend(module.iter().cloned());
        (!package.is_empty()).then_some(package)
    }

    /// Method `n` of class `(path, class)` or, failing that, of its bases.
    pub(super) fn python_method(
        &self,
        path: &str,
        class: &str,
        n: &str,
        depth: u32,
    ) -> Option<Loc> {
        let sep = Lang::from_path(path).map_or(".", Lang::separator);
        let q = format!("{class}{sep}{n}");
        if let Some(i) = self.lookup_qualname(path, &q) {
            return Some((path.to_string(), i));
        }
        if depth >= 6 {
            return None;
        }
        // Only now do the class's bases matter, and only now is its file parsed.
        let cls = self.entity(path, class)?;
        let f = self.src.facts(path)?;
        let f = &*f;
        let b = self.bindings(path);
        for base in &cls.bases {
            if let Some((bp, bq)) = self.resolve_type_path(f, Some(cls.idx), base, &b) {
                if let Some(found) = self.python_method(&bp, &bq, n, depth + 1) {
                    return Some(found);
                }
            }
        }
        None
    }

    /// `rest` inside Python module file `m`: a submodule chain or a symbol.
    pub(super) fn py_dotted_in(&self, m: &str, rest: &[String]) -> Option<Loc> {
        if let Some(i) = self.lookup_qualname(m, &rest.join(".")) {
            return Some((m.to_string(), i));
        }
        let own = self.py_file_mod(m)?;
        for split in (1..rest.len()).rev() {
            let mut module = own.clone();
            module.extend(rest[..split].iter().cloned());
            if let Some(file) = self.py_module(&module.join(".")) {
                let q = rest[split..].join(".");
                return self
                    .lookup_qualname(&file, &q)
                    .map(|i| (file.to_string(), i));
            }
        }
        match self.symbol_in(m, &rest[0], REEXPORT_DEPTH - 1) {
            Some(Target::Entity(p, i)) if rest.len() == 1 => Some((p, i)),
            Some(Target::Module(sub)) => self.py_dotted_in(&sub, &rest[1..]),
            _ => None,
        }
    }
}
