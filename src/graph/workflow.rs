//! ADK 2 workflow graphs in diagrams: each workflow's START, its Routers and JoinNodes
//! (nodes that are no agents), and its edges with their labels: fan-outs are several
//! edges from one node, a JoinNode is where they meet, and an edge that goes back to a
//! node already on the way from START (a loop) is a back edge.

use super::{Edge, EdgeKind};
use crate::config::graph::{EdgeRoute, From, GraphNodeKind, GraphSpec, Label};
use crate::config::{AgentSpec, AgentSpecKind};

/// How a node that is no agent is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A workflow's START.
    Start,
    /// An `adk_flow.Router`.
    Router,
    /// A `JoinNode`.
    Join,
}

/// A node of the diagram that is no agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extra {
    /// Its id in the diagram (`WORKFLOW__NAME`, `WORKFLOW__START`).
    pub id: String,
    /// What it shows.
    pub label: String,
    /// How it is drawn.
    pub shape: Shape,
}

fn graph_of(agent: &AgentSpec) -> Option<&GraphSpec> {
    match &agent.kind {
        AgentSpecKind::Graph(g) => Some(g),
        _ => None,
    }
}

/// The id of node `i` of `workflow`: an agent's name, or `WORKFLOW__NAME`.
fn node_id(workflow: &AgentSpec, graph: &GraphSpec, i: usize) -> String {
    match &graph.nodes[i].kind {
        GraphNodeKind::Agent(k) => workflow.sub_agents[*k].name.clone(),
        _ => extra_id(&workflow.name, &graph.nodes[i].name),
    }
}

/// The diagram's id of a node of workflow `workflow` that is no agent (a Router, a
/// JoinNode): `WORKFLOW__NAME`, as `data-node` in the SVG.
pub fn extra_id(workflow: &str, node: &str) -> String {
    format!("{workflow}__{node}")
}

/// The nodes of `workflow` that are no agents: START, Routers, JoinNodes.
pub fn extras(workflow: &AgentSpec) -> Vec<Extra> {
    let Some(graph) = graph_of(workflow) else {
        return Vec::new();
    };
    let mut out = vec![Extra {
        id: format!("{}__START", workflow.name),
        label: "START".into(),
        shape: Shape::Start,
    }];
    for (i, node) in graph.nodes.iter().enumerate() {
        let shape = match node.kind {
            GraphNodeKind::Agent(_) => continue,
            GraphNodeKind::Router(_) => Shape::Router,
            GraphNodeKind::Join => Shape::Join,
        };
        out.push(Extra {
            id: node_id(workflow, graph, i),
            label: node.name.clone(),
            shape,
        });
    }
    out
}

/// The edges of `workflow`: from the workflow to its START, then its own edges, labelled
/// with their routes; edges that close a loop are [`EdgeKind::Back`].
pub fn edges(workflow: &AgentSpec) -> Vec<Edge> {
    let Some(graph) = graph_of(workflow) else {
        return Vec::new();
    };
    let start = format!("{}__START", workflow.name);
    let mut out = vec![Edge {
        from: workflow.name.clone(),
        to: start.clone(),
        label: String::new(),
        kind: EdgeKind::Structure,
    }];
    let back = back_edges(graph);
    for (k, e) in graph.edges.iter().enumerate() {
        let from = match e.from {
            From::Start => start.clone(),
            From::Node(i) => node_id(workflow, graph, i),
        };
        let label = match &e.route {
            EdgeRoute::Always => String::new(),
            EdgeRoute::Default => "__DEFAULT__".into(),
            EdgeRoute::Labels(ls) => ls
                .iter()
                .map(Label::to_string)
                .collect::<Vec<_>>()
                .join(" | "),
        };
        out.push(Edge {
            from,
            to: node_id(workflow, graph, e.to),
            label,
            kind: if back[k] {
                EdgeKind::Back
            } else {
                EdgeKind::Structure
            },
        });
    }
    out
}

/// How a node not yet placed is entered: whether every edge into it is from a placed
/// node, whether those from unplaced ones are all labelled, and its first edge from a
/// placed node (an earlier one is better).
type Entry = (bool, bool, std::cmp::Reverse<usize>);

/// Which edges close a loop. The nodes are put in order, each once every node with an
/// edge into it is placed; where a loop leaves none ready, the next is a node of it that
/// an edge from a placed node (or START) enters, preferring one whose other incoming
/// edges are labelled (the loop's repeat as written, `more: deep.yaml`), then the one
/// entered by the earliest declared edge. An edge to a node placed no later than its
/// own start is a back edge.
///
/// Each node's [`Entry`] is kept up to date as nodes are placed (counts of its open
/// incoming edges, all and unlabelled, and its first edge from a placed node) and the
/// best is taken from a heap, stale entries skipped: O(E log E) rather than a scan of
/// every edge for every node at every step. No two nodes share an entry (an edge enters
/// one node), so the order is the one the scan chose.
fn back_edges(graph: &GraphSpec) -> Vec<bool> {
    use std::cmp::Reverse;
    let n = graph.nodes.len();
    let mut pos: Vec<Option<usize>> = vec![None; n];
    // For each node: its incoming edges (self-loops aside) from unplaced nodes, those of
    // them that are unlabelled, and its first incoming edge from a placed node or START.
    let mut open = vec![0usize; n];
    let mut open_always = vec![0usize; n];
    let mut first: Vec<Option<usize>> = vec![None; n];
    let mut out_edges: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, e) in graph.edges.iter().enumerate() {
        match e.from {
            From::Start => {
                first[e.to] = Some(first[e.to].map_or(k, |f| f.min(k)));
            }
            From::Node(a) if a == e.to => {}
            From::Node(a) => {
                open[e.to] += 1;
                if matches!(e.route, EdgeRoute::Always) {
                    open_always[e.to] += 1;
                }
                out_edges[a].push(k);
            }
        }
    }
    let entry = |v: usize, open: &[usize], open_always: &[usize], first: &[Option<usize>]| {
        first[v].map(|f| (open[v] == 0, open_always[v] == 0, Reverse(f)))
    };
    let mut heap: std::collections::BinaryHeap<(Entry, usize)> = (0..n)
        .filter_map(|v| entry(v, &open, &open_always, &first).map(|e| (e, v)))
        .collect();
    let mut next = 0;
    while let Some((key, v)) = heap.pop() {
        if pos[v].is_some() || entry(v, &open, &open_always, &first) != Some(key) {
            continue; // placed already, or entered better since
        }
        pos[v] = Some(next);
        next += 1;
        for &k in &out_edges[v] {
            let to = graph.edges[k].to;
            if pos[to].is_some() {
                continue;
            }
            open[to] -= 1;
            if matches!(graph.edges[k].route, EdgeRoute::Always) {
                open_always[to] -= 1;
            }
            first[to] = Some(first[to].map_or(k, |f| f.min(k)));
            if let Some(e) = entry(to, &open, &open_always, &first) {
                heap.push((e, to));
            }
        }
    }
    graph
        .edges
        .iter()
        .map(|e| match (e.from, pos[e.to]) {
            (From::Node(a), Some(to)) => pos[a].is_some_and(|from| to <= from),
            _ => false,
        })
        .collect()
}
