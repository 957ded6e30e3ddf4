//! Cycles nothing caps: a loop of nodes that call no model (Routers, JoinNodes, nested
//! workflows without an LLM node) is not counted by the 500 model calls per turn, so only
//! its routes end it, and in ADK 2.13 it runs forever if they never leave it. Such a
//! cycle is legitimate (a route may leave it), so it is a warning, unless the workflow
//! sets adk-flow's `max_node_runs`.

use super::super::{AgentSpec, AgentSpecKind, Diagnostic};
use super::rules::{cycle_text, find_cycle};
use super::{From, GraphNodeKind};

/// A warning for each workflow of the tree holding a cycle of nodes that call no model
/// while it sets no `max_node_runs`, naming the cycle's nodes.
pub fn uncapped_cycles(root: &AgentSpec) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for agent in root.walk() {
        let AgentSpecKind::Graph(spec) = &agent.kind else {
            continue;
        };
        if spec.max_node_runs.is_some() {
            continue;
        }
        let calls_model: Vec<bool> = spec
            .nodes
            .iter()
            .map(|n| match n.kind {
                GraphNodeKind::Agent(k) => agent.sub_agents.get(k).is_none_or(|a| {
                    a.walk()
                        .iter()
                        .any(|a| matches!(a.kind, AgentSpecKind::Llm(_)))
                }),
                GraphNodeKind::Router(_) | GraphNodeKind::Join => false,
            })
            .collect();
        let mut next = vec![Vec::new(); spec.nodes.len()];
        for e in &spec.edges {
            if let From::Node(i) = e.from
                && !calls_model[i]
                && !calls_model[e.to]
            {
                next[i].push(e.to);
            }
        }
        if let Some(cycle) = find_cycle(&next) {
            let at = &spec.nodes[cycle[0]].location;
            out.push(Diagnostic::warning(
                &at.file,
                at.pos,
                format!(
                    "the cycle {} calls no model, so the per-turn model-call limit never ends it: if its routes never leave it, the run never ends; set `max_node_runs` on workflow `{}` to cap each node's runs",
                    cycle_text(spec, &cycle),
                    agent.name
                ),
            ));
        }
    }
    out
}
