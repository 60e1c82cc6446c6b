//! `tree`: the functional hierarchy under a path.

use super::{entities_under, invalid, shown, ToolError};
use crate::store::Store;
use serde::Serialize;

/// The hierarchy under a path, in reading order, with entity counts.
#[derive(Debug, Clone, Serialize)]
pub struct Tree {
    pub commit: String,
    pub nodes: Vec<TreeNode>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TreeNode {
    pub path: String,
    /// 1 for an area, 2 for a category, 3 for a subcategory.
    pub depth: usize,
    pub entities: u64,
    pub scopes: Vec<String>,
}

/// Areas, categories and subcategories under `root` (everything when it is
/// empty or `/`), down to `depth` levels below it.
pub fn tree(store: &Store, root: &str, depth: usize) -> Result<Tree, ToolError> {
    if depth == 0 {
        return Err(invalid("depth", "0", "show at least one level"));
    }
    let commit = store.meta()?.commit;
    let root = root.trim().trim_matches('/');
    let categories = store.categories()?;
    if !root.is_empty() && !categories.contains_key(root) {
        return Err(ToolError::NotFound(format!(
            "no hierarchy path {}; `rpg tree` lists them",
            shown(root)
        )));
    }
    let base = if root.is_empty() {
        0
    } else {
        root.split('/').count() - 1
    };
    let prefix = format!("{root}/");
    let under = |p: &str| root.is_empty() || p == root || p.starts_with(&prefix);
    let hier = store.hier()?;
    let mut nodes: Vec<TreeNode> = categories
        .values()
        .filter(|c| under(&c.path) && c.depth() - base <= depth)
        .map(|c| TreeNode {
            path: c.path.clone(),
            depth: c.depth(),
            entities: entities_under(&hier.leaf_dirs, &c.path),
            scopes: c.scopes.clone(),
        })
        .collect();
    // Segment order keeps each node right after its parent ("a b" sorts
    // before "a/x" as a string).
    nodes.sort_by(|a, b| a.path.split('/').cmp(b.path.split('/')));
    Ok(Tree { commit, nodes })
}
