//! `symbols`: what one file declares, with its imports.

use super::{check_path, checked_blob, invalid, not_in_graph, parsed_of, ToolError, MAX_SYMBOLS};
use crate::git::Repo;
use crate::graph::{EdgeKind, Entity};
use crate::parse::{Import, Kind};
use crate::store::Store;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SymbolLine {
    pub id: String,
    pub qualname: String,
    pub kind: Kind,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    /// Nesting depth: 0 for top-level definitions.
    pub depth: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Symbols {
    pub commit: String,
    pub path: String,
    pub lines: u32,
    pub imports: Vec<String>,
    pub symbols: Vec<SymbolLine>,
    pub truncated: bool,
    /// When truncated: the offset of the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

fn import_text(i: &Import) -> String {
    match i {
        Import::Python {
            level,
            module,
            names,
            alias,
        } => {
            let module = format!("{}{}", ".".repeat(*level), module.join("."));
            if names.is_empty() {
                match alias {
                    Some(a) => format!("import {module} as {a}"),
                    None => format!("import {module}"),
                }
            } else {
                let names: Vec<String> = names
                    .iter()
                    .map(|(n, b)| {
                        if n == b {
                            n.clone()
                        } else {
                            format!("{n} as {b}")
                        }
                    })
                    .collect();
                format!("from {module} import {}", names.join(", "))
            }
        }
        Import::RustUse {
            path,
            bound_as,
            glob,
            ..
        } => {
            let p = path.join("::");
            if *glob {
                format!("use {p}::*")
            } else if path.last() == Some(bound_as) || bound_as.is_empty() {
                format!("use {p}")
            } else {
                format!("use {p} as {bound_as}")
            }
        }
        Import::RustMod { name, .. } => format!("mod {name}"),
        Import::Go { path, alias } => match alias {
            Some(a) => format!("import {a} \"{path}\""),
            None => format!("import \"{path}\""),
        },
        Import::JavaPackage { path } => format!("package {}", path.join(".")),
        Import::Include { path, system } => match system {
            true => format!("#include <{path}>"),
            false => format!("#include \"{path}\""),
        },
        Import::Js {
            source,
            names,
            namespace,
        } => {
            let mut bound: Vec<String> = names
                .iter()
                .map(|(n, b)| {
                    if n == b {
                        n.clone()
                    } else {
                        format!("{n} as {b}")
                    }
                })
                .collect();
            bound.extend(namespace.iter().map(|n| format!("* as {n}")));
            match bound.is_empty() {
                true => format!("import \"{source}\""),
                false => format!("import {{ {} }} from \"{source}\"", bound.join(", ")),
            }
        }
        Import::Java {
            path,
            wildcard,
            is_static,
        } => format!(
            "import {}{}{}",
            if *is_static { "static " } else { "" },
            path.join("."),
            if *wildcard { ".*" } else { "" }
        ),
        Import::File { path, .. } => format!("require {path}"),
        Import::Qualified {
            path,
            alias,
            wildcard,
        } => format!(
            "import {}{}{}",
            path.join("."),
            if *wildcard { ".*" } else { "" },
            alias
                .as_ref()
                .map(|a| format!(" as {a}"))
                .unwrap_or_default()
        ),
    }
}

/// `symbols`: a file's skeleton — imports, then every definition with its
/// line range and signature, no bodies.
pub fn symbols(store: &Store, repo: &Repo, path: &str) -> Result<Symbols, ToolError> {
    symbols_page(store, repo, path, 0)
}

/// [`symbols`] from the `offset`-th definition on: the next page of a
/// file with more than [`MAX_SYMBOLS`]. Imports come with the first page.
pub fn symbols_page(
    store: &Store,
    repo: &Repo,
    path: &str,
    offset: usize,
) -> Result<Symbols, ToolError> {
    let path = check_path(path)?;
    let block = store.file_block(path)?.ok_or_else(|| not_in_graph(path))?;
    checked_blob(store, repo, path)?;
    let parsed = parsed_of(store, repo, &block)?;
    let mut imports: Vec<String> = parsed.imports.iter().map(import_text).collect();
    imports.dedup();
    let mut ents: Vec<&Entity> = block
        .entities
        .iter()
        .filter(|e| e.kind != Kind::File)
        .collect();
    ents.sort_by(|a, b| (a.start_line, &a.id).cmp(&(b.start_line, &b.id)));
    let parent: BTreeMap<&str, &str> = block
        .out
        .iter()
        .filter(|e| e.kind == EdgeKind::Contains)
        .map(|e| (e.dst.as_str(), e.src.as_str()))
        .collect();
    let depth_of = |id: &str| {
        let mut d = 0;
        let mut cur = id;
        while let Some(p) = parent.get(cur) {
            if crate::graph::is_file_id(p) {
                break;
            }
            d += 1;
            cur = p;
        }
        d
    };
    if offset > 0 && offset >= ents.len() {
        return Err(invalid(
            "offset",
            &offset.to_string(),
            "the file has fewer definitions",
        ));
    }
    let truncated = ents.len() > offset + MAX_SYMBOLS;
    let next_offset = truncated.then_some(offset + MAX_SYMBOLS);
    if offset > 0 {
        imports.clear();
    }
    let symbols = ents
        .into_iter()
        .skip(offset)
        .take(MAX_SYMBOLS)
        .map(|e| SymbolLine {
            id: e.id.clone(),
            qualname: e.qualname.clone(),
            kind: e.kind,
            start_line: e.start_line,
            end_line: e.end_line,
            signature: e.signature.clone(),
            depth: depth_of(&e.id),
        })
        .collect();
    Ok(Symbols {
        commit: store.meta()?.commit,
        path: path.to_string(),
        lines: block.file.lines,
        imports,
        symbols,
        truncated,
        next_offset,
    })
}
