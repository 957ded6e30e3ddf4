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
fn back_edges(graph: &GraphSpec) -> Vec<bool> {
    let n = graph.nodes.len();
    let mut pos: Vec<Option<usize>> = vec![None; n];
    // Whether edge `k` leaves START or a placed node.
    let from_placed = |pos: &[Option<usize>], k: usize| match graph.edges[k].from {
        From::Start => true,
        From::Node(a) => pos[a].is_some(),
    };
    for next in 0..n {
        // The best (ready, labelled loop entry, first entering edge) and its node.
        let mut best: Option<(Entry, usize)> = None;
        for v in (0..n).filter(|&v| pos[v].is_none()) {
            let into: Vec<usize> = (0..graph.edges.len())
                .filter(|&k| graph.edges[k].to == v && graph.edges[k].from != From::Node(v))
                .collect();
            let Some(&first) = into.iter().find(|&&k| from_placed(&pos, k)) else {
                continue;
            };
            let open: Vec<usize> = into
                .iter()
                .copied()
                .filter(|&k| !from_placed(&pos, k))
                .collect();
            let labelled = open
                .iter()
                .all(|&k| !matches!(graph.edges[k].route, EdgeRoute::Always));
            let key = (open.is_empty(), labelled, std::cmp::Reverse(first));
            if best.as_ref().is_none_or(|(b, _)| key > *b) {
                best = Some((key, v));
            }
        }
        // Every node is reachable from START (ADK's rule), so one is always entered.
        let Some((_, v)) = best else { break };
        pos[v] = Some(next);
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
