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

/// Which edges go back to a node on the way from START (depth first, edges in order).
fn back_edges(graph: &GraphSpec) -> Vec<bool> {
    let mut back = vec![false; graph.edges.len()];
    let mut done = vec![false; graph.nodes.len()];
    let mut on_path = vec![false; graph.nodes.len()];
    let out_of = |n: Option<usize>| -> Vec<usize> {
        graph
            .edges
            .iter()
            .enumerate()
            .filter(|(_, e)| match (e.from, n) {
                (From::Start, None) => true,
                (From::Node(a), Some(b)) => a == b,
                _ => false,
            })
            .map(|(k, _)| k)
            .collect()
    };
    // Iterative depth-first walk: (node, its outgoing edges, next edge).
    let mut stack: Vec<(Option<usize>, Vec<usize>, usize)> = vec![(None, out_of(None), 0)];
    while let Some((node, edges, next)) = stack.last_mut() {
        let Some(&k) = edges.get(*next) else {
            if let Some(n) = *node {
                on_path[n] = false;
                done[n] = true;
            }
            stack.pop();
            continue;
        };
        *next += 1;
        let to = graph.edges[k].to;
        if on_path[to] {
            back[k] = true;
        } else if !done[to] {
            on_path[to] = true;
            stack.push((Some(to), out_of(Some(to)), 0));
        }
    }
    back
}
