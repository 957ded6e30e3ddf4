//! ADK 2 `agent_class: Workflow` graphs: the checked form of a workflow file's `edges`.
//!
//! A workflow's LLM nodes and nested workflows are the `sub_agents` of its [`AgentSpec`]
//! (so every tree walk sees them); [`GraphSpec`] adds the nodes that are no agents
//! (`adk_flow.Router`, `JoinNode`) and the edges. Loading (`load.rs`: the workflow's keys;
//! `edges.rs`: the edge items; `labels.rs`: their labels; `nodes.rs`: the nodes;
//! `llm_node.rs`: LLM nodes; `others.rs`: Routers and JoinNodes) reports every refusal of
//! the contract (the shared reference's `adk-workflow.md`) at its file, line and column;
//! `rules.rs` checks ADK's graph rules and the contract's stricter ones once the graph is
//! built; `endless.rs` warns about cycles nothing caps (Routers alone, no `max_node_runs`).
//!
//! [`AgentSpec`]: super::AgentSpec

mod edges;
mod endless;
mod labels;
mod llm_node;
mod load;
mod nodes;
mod others;
mod rules;

use super::Location;
pub use crate::routes::{EdgeRoute, Label};
pub use endless::uncapped_cycles;

/// The `agent_class` spellings of a workflow graph.
pub const WORKFLOW_CLASSES: &[&str] = &["Workflow", "google.adk.workflow.Workflow"];
/// The `agent_class` of a declarative router node.
pub const ROUTER_CLASS: &str = "adk_flow.Router";
/// The `agent_class` spellings of a join node.
pub const JOIN_CLASSES: &[&str] = &["JoinNode", "google.adk.workflow.JoinNode"];
/// The tool that lets an LLM node set its route.
pub const SET_ROUTE_TOOL: &str = "adk_flow.set_route";
/// The fallback label: its edges fire when no other label of the node matched.
pub const DEFAULT_ROUTE: &str = "__DEFAULT__";
/// The chain element that starts a workflow.
pub const START: &str = "START";

/// Whether an `agent_class` value names a workflow graph.
pub fn is_workflow_class(class: &str) -> bool {
    WORKFLOW_CLASSES.contains(&class)
}

/// One end of an edge that may be START.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum From {
    /// The workflow's start.
    Start,
    /// A node, by index in [`GraphSpec::nodes`].
    Node(usize),
}

/// One edge of the graph.
#[derive(Debug, Clone)]
pub struct GraphEdge {
    /// Where it leaves.
    pub from: From,
    /// Where it goes (a node index).
    pub to: usize,
    /// When it fires.
    pub route: EdgeRoute,
    /// Where it was written (its label, else its target).
    pub location: Location,
}

/// A declarative router (`agent_class: adk_flow.Router`): Jinja expressions over `input`
/// and `state`, compiled when the app is built (their syntax is checked at load).
#[derive(Debug, Clone)]
pub struct RouterSpec {
    /// The route expression.
    pub route: String,
    /// The output expression; absent: the input passes on.
    pub output: Option<String>,
    /// State keys and their expressions, in file order.
    pub state: Vec<(String, String)>,
}

/// What a node is.
#[derive(Debug, Clone)]
pub enum GraphNodeKind {
    /// An LLM node or a nested workflow: an index in the workflow's `sub_agents`.
    Agent(usize),
    /// An `adk_flow.Router`.
    Router(RouterSpec),
    /// A `JoinNode`: runs once every predecessor completed.
    Join,
}

/// One node of the graph.
#[derive(Debug, Clone)]
pub struct GraphNode {
    /// Its name, unique in the workflow.
    pub name: String,
    /// What it is.
    pub kind: GraphNodeKind,
    /// Where it was defined.
    pub location: Location,
    /// It can emit a route (a Router, or an LLM node with `adk_flow.set_route`).
    pub can_route: bool,
}

/// A checked workflow graph.
#[derive(Debug, Clone, Default)]
pub struct GraphSpec {
    /// The nodes, START excluded, in order of definition.
    pub nodes: Vec<GraphNode>,
    /// The edges, in declaration order.
    pub edges: Vec<GraphEdge>,
    /// At most this many nodes run at once (`None`: no limit).
    pub max_concurrency: Option<u32>,
    /// adk-flow's cap on runs of one node in one workflow run (`None`: no cap).
    pub max_node_runs: Option<u32>,
}

impl GraphSpec {
    /// Whether node `i` has no outgoing edge.
    pub fn is_terminal(&self, i: usize) -> bool {
        !self.edges.iter().any(|e| e.from == From::Node(i))
    }

    /// The index of the node named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }
}
