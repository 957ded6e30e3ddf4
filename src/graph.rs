//! Diagrams of a workflow's agent tree: its steps, branches, loops and transfer edges, as
//! Mermaid or Graphviz DOT. Used by `adk-flow graph` and by `serve`'s graph routes.

use crate::config::{AgentSpec, AgentSpecKind};
use std::fmt::Write as _;

/// One edge of the diagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The agent the edge leaves.
    pub from: String,
    /// The agent it reaches.
    pub to: String,
    /// What it means (`step 2`, `branch`, `transfer`...).
    pub label: String,
    /// A transfer the model may choose (dashed), not a structural step.
    pub transfer: bool,
}

fn kind_name(a: &AgentSpec) -> String {
    match &a.kind {
        AgentSpecKind::Llm(_) => "LlmAgent".into(),
        AgentSpecKind::Sequential { .. } => "SequentialAgent".into(),
        AgentSpecKind::Parallel => "ParallelAgent".into(),
        AgentSpecKind::Loop {
            max_iterations: Some(n),
        } if *n > 0 => format!("LoopAgent, at most {n}"),
        AgentSpecKind::Loop { .. } => "LoopAgent".into(),
    }
}

/// Structural edges (steps, branches, loop bodies, sub-agents) and transfer edges, as the
/// runtime computes transfer targets (parent and peers only under an LLM parent).
pub fn edges(root: &AgentSpec) -> Vec<Edge> {
    let mut out = Vec::new();
    walk(root, None, &mut out);
    out
}

fn walk(agent: &AgentSpec, parent: Option<&AgentSpec>, out: &mut Vec<Edge>) {
    for (i, sub) in agent.sub_agents.iter().enumerate() {
        let label = match &agent.kind {
            AgentSpecKind::Sequential { .. } => format!("step {}", i + 1),
            AgentSpecKind::Parallel => "branch".into(),
            AgentSpecKind::Loop { .. } => format!("body {}", i + 1),
            AgentSpecKind::Llm(_) => "transfer".into(),
        };
        out.push(Edge {
            from: agent.name.clone(),
            to: sub.name.clone(),
            label,
            transfer: matches!(agent.kind, AgentSpecKind::Llm(_)),
        });
    }
    if let AgentSpecKind::Loop { .. } = agent.kind
        && let Some(last) = agent.sub_agents.last()
    {
        out.push(Edge {
            from: last.name.clone(),
            to: agent.name.clone(),
            label: "repeat until exit_loop".into(),
            transfer: false,
        });
    }
    if let (AgentSpecKind::Llm(llm), Some(parent)) = (&agent.kind, parent)
        && let AgentSpecKind::Llm(_) = parent.kind
    {
        if !llm.disallow_transfer_to_parent {
            out.push(Edge {
                from: agent.name.clone(),
                to: parent.name.clone(),
                label: "transfer".into(),
                transfer: true,
            });
        }
        if !llm.disallow_transfer_to_peers {
            for peer in parent.sub_agents.iter().filter(|p| p.name != agent.name) {
                out.push(Edge {
                    from: agent.name.clone(),
                    to: peer.name.clone(),
                    label: "transfer".into(),
                    transfer: true,
                });
            }
        }
    }
    for sub in &agent.sub_agents {
        walk(sub, Some(agent), out);
    }
}

/// The Mermaid flowchart of a tree.
pub fn mermaid(root: &AgentSpec) -> String {
    let mut s = String::from("flowchart TD\n");
    for a in root.walk() {
        let shape = match a.kind {
            AgentSpecKind::Llm(_) => ("[\"", "\"]"),
            _ => ("[[\"", "\"]]"),
        };
        let _ = writeln!(
            s,
            "    {}{}{}<br/><small>{}</small>{}",
            a.name,
            shape.0,
            a.name,
            kind_name(a),
            shape.1
        );
    }
    for e in edges(root) {
        let arrow = if e.transfer { "-.->" } else { "-->" };
        let _ = writeln!(s, "    {} {arrow}|{}| {}", e.from, e.label, e.to);
    }
    s
}

/// The DOT digraph of a tree; `dark` draws light lines on a dark background (the dev
/// UI's dark theme).
pub fn dot(root: &AgentSpec, dark: bool) -> String {
    let mut s = format!(
        "digraph \"{}\" {{\n    rankdir=TB;\n    node [fontname=\"Helvetica\"];\n",
        root.name
    );
    if dark {
        s.push_str(
            "    bgcolor=\"#202124\";\n    node [color=\"#e8eaed\", fontcolor=\"#e8eaed\"];\n    edge [color=\"#e8eaed\", fontcolor=\"#e8eaed\"];\n",
        );
    }
    for a in root.walk() {
        let shape = match a.kind {
            AgentSpecKind::Llm(_) => "box, style=rounded",
            _ => "box3d",
        };
        let _ = writeln!(
            s,
            "    \"{}\" [shape={shape}, label=\"{}\\n{}\"];",
            a.name,
            a.name,
            kind_name(a)
        );
    }
    for e in edges(root) {
        let style = if e.transfer { ", style=dashed" } else { "" };
        let _ = writeln!(
            s,
            "    \"{}\" -> \"{}\" [label=\"{}\"{style}];",
            e.from, e.to, e.label
        );
    }
    s.push_str("}\n");
    s
}
