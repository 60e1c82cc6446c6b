//! `explore`: a bounded walk along the graph's edges from one entity.

use super::{entity, invalid, ToolError, MAX_DEPTH, MAX_NODES};
use crate::graph::EdgeKind;
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Which way `explore` walks; the CLI and MCP parse it the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Along outgoing edges: what this entity contains, imports, invokes.
    Down,
    /// Along incoming edges: who contains, imports, invokes it.
    Up,
    #[default]
    Both,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Step {
    pub id: String,
    pub depth: usize,
    /// The node this one was reached from.
    pub from: String,
    pub edge: EdgeKind,
    /// `down` when `from` → `id`, `up` when `id` → `from`.
    pub direction: Direction,
}

#[derive(Debug, Clone, Serialize)]
pub struct Explored {
    pub root: String,
    /// The root's own edges of each chosen kind and direction, however
    /// many of them the walk could show.
    pub counts: Vec<EdgeCount>,
    /// Steps of the walk before this page.
    #[serde(skip_serializing_if = "is_zero")]
    pub offset: usize,
    pub steps: Vec<Step>,
    pub truncated: bool,
    /// When truncated: the offset of the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EdgeCount {
    pub edge: EdgeKind,
    pub direction: Direction,
    pub n: usize,
}

/// The order `explore` walks edge kinds in: what a reader asks first is
/// who calls this and what it calls; the file and its siblings come last.
const EXPLORE_ORDER: [EdgeKind; 4] = [
    EdgeKind::Invokes,
    EdgeKind::Inherits,
    EdgeKind::Imports,
    EdgeKind::Contains,
];

/// `explore`: breadth-first to `depth` hops, one edge kind after another
/// in [`EXPLORE_ORDER`], so calls are shown before siblings and a walk
/// cut at [`MAX_NODES`] loses the siblings first.
pub fn explore(
    store: &Store,
    id: &str,
    kinds: &[EdgeKind],
    direction: Direction,
    depth: usize,
) -> Result<Explored, ToolError> {
    explore_page(store, id, kinds, direction, depth, 0)
}

/// [`explore`] from the `offset`-th step of the same walk on: the next
/// page of a walk longer than [`MAX_NODES`].
pub fn explore_page(
    store: &Store,
    id: &str,
    kinds: &[EdgeKind],
    direction: Direction,
    depth: usize,
    offset: usize,
) -> Result<Explored, ToolError> {
    let root = entity(store, id)?.id;
    if depth == 0 || depth > MAX_DEPTH {
        return Err(invalid(
            "depth",
            &depth.to_string(),
            "it must be between 1 and 5",
        ));
    }
    let mut walk = Walk {
        store,
        direction,
        depth,
        seen: BTreeSet::from([root.clone()]),
        steps: Vec::new(),
        limit: offset.saturating_add(MAX_NODES),
        truncated: false,
        edges: BTreeMap::new(),
    };
    for kind in EXPLORE_ORDER.into_iter().filter(|k| kinds.contains(k)) {
        walk.from(&root, kind)?;
    }
    if offset > 0 && offset >= walk.steps.len() {
        return Err(invalid(
            "offset",
            &offset.to_string(),
            "the walk has fewer steps",
        ));
    }
    Ok(Explored {
        counts: walk.counts(&root, kinds)?,
        root,
        offset,
        steps: walk.steps.split_off(offset),
        truncated: walk.truncated,
        next_offset: walk.truncated.then_some(offset + MAX_NODES),
    })
}

/// One breadth-first walk per edge kind, sharing what it has seen.
struct Walk<'s> {
    store: &'s Store,
    direction: Direction,
    depth: usize,
    seen: BTreeSet<String>,
    steps: Vec<Step>,
    /// Steps walked at most: this page's and every one before it.
    limit: usize,
    truncated: bool,
    /// Each node's edges (outgoing or not) as read, since every edge kind
    /// walks the same nodes again.
    edges: BTreeMap<(String, bool), Vec<crate::graph::Edge>>,
}

impl Walk<'_> {
    /// Breadth-first along `kind` from `root`: callers before callees.
    /// A path keeps the way it set out (callers of callers, callees of
    /// callees), except along `contains`, where the way up to the file
    /// turns down to its other members.
    fn from(&mut self, root: &str, kind: EdgeKind) -> Result<(), ToolError> {
        let mut queue = VecDeque::from([(root.to_string(), 0usize, self.direction)]);
        while let Some((node, d, way)) = queue.pop_front() {
            if d == self.depth || self.truncated {
                continue;
            }
            let mut next: Vec<(String, Direction)> = Vec::new();
            if matches!(way, Direction::Up | Direction::Both) {
                let up = self.ends(&node, kind, false)?;
                next.extend(up.into_iter().map(|id| (id, Direction::Up)));
            }
            if matches!(way, Direction::Down | Direction::Both) {
                let down = self.ends(&node, kind, true)?;
                next.extend(down.into_iter().map(|id| (id, Direction::Down)));
            }
            for (other, direction) in next {
                if !self.seen.insert(other.clone()) {
                    continue;
                }
                if self.steps.len() == self.limit {
                    self.truncated = true;
                    break;
                }
                self.steps.push(Step {
                    id: other.clone(),
                    depth: d + 1,
                    from: node.clone(),
                    edge: kind,
                    direction,
                });
                let onward = match kind {
                    EdgeKind::Contains => self.direction,
                    _ => direction,
                };
                queue.push_back((other, d + 1, onward));
            }
        }
        Ok(())
    }

    /// `node`'s edges one way, read once per walk.
    fn edges(&mut self, node: &str, outgoing: bool) -> Result<&[crate::graph::Edge], ToolError> {
        let key = (node.to_string(), outgoing);
        if !self.edges.contains_key(&key) {
            let read = self.store.edges(node, outgoing)?;
            self.edges.insert(key.clone(), read);
        }
        Ok(&self.edges[&key])
    }

    /// The far ends of `node`'s `kind` edges one way, in id order.
    fn ends(
        &mut self,
        node: &str,
        kind: EdgeKind,
        outgoing: bool,
    ) -> Result<Vec<String>, ToolError> {
        let mut ends: Vec<String> = self
            .edges(node, outgoing)?
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| {
                if outgoing {
                    e.dst.to_string()
                } else {
                    e.src.to_string()
                }
            })
            .collect();
        ends.sort();
        Ok(ends)
    }

    /// How many edges of each chosen kind `root` has, each way the walk
    /// goes, in [`EXPLORE_ORDER`]; kinds it has none of are left out.
    fn counts(&mut self, root: &str, kinds: &[EdgeKind]) -> Result<Vec<EdgeCount>, ToolError> {
        let mut ways = Vec::new();
        if matches!(self.direction, Direction::Up | Direction::Both) {
            ways.push(Direction::Up);
        }
        if matches!(self.direction, Direction::Down | Direction::Both) {
            ways.push(Direction::Down);
        }
        let mut out = Vec::new();
        for edge in EXPLORE_ORDER.into_iter().filter(|k| kinds.contains(k)) {
            for direction in &ways {
                let outgoing = matches!(direction, Direction::Down);
                let n = self.ends(root, edge, outgoing)?.len();
                if n > 0 {
                    out.push(EdgeCount {
                        edge,
                        direction: *direction,
                        n,
                    });
                }
            }
        }
        Ok(out)
    }
}
