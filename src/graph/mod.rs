//! Diagrams of a workflow's agent tree: its steps, branches, loops, transfer edges, the
//! agents it calls through `AgentTool` and each agent's tools, and ADK 2 workflow graphs
//! (`workflow.rs`: START, Routers, JoinNodes, labelled edges, back edges), as Mermaid,
//! Graphviz DOT or SVG (laid out here, see [`svg`]). Used by `adk-flow graph` and by
//! `serve`'s graph routes and web page.

mod layout;
mod route;
mod style;
mod svg;
pub mod workflow;

pub use svg::svg;

use crate::config::{AgentSpec, AgentSpecKind, ToolSpec};
use std::fmt::Write as _;

/// One edge of the diagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The agent the edge leaves.
    pub from: String,
    /// The agent it reaches.
    pub to: String,
    /// What it means (`step 2`, `branch`, `transfer`, `AgentTool`...).
    pub label: String,
    /// What kind of edge it is, which decides how it is drawn.
    pub kind: EdgeKind,
}

/// How one agent reaches another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// A step, branch, loop body or loop repeat: the tree's structure (solid).
    Structure,
    /// A transfer the model may choose (dashed).
    Transfer,
    /// A call through `AgentTool`: the agent runs as a tool and answers back (dotted in
    /// DOT, thick in Mermaid).
    AgentTool,
    /// A workflow edge back to a node already on the way from START: a loop (bold and
    /// not ranking the layout in DOT, marked `↺` in Mermaid).
    Back,
}

/// The trees of the diagram: the workflow's, then each tree an `AgentTool` runs (each
/// once, depth first, in the order the tools are listed).
pub fn trees(root: &AgentSpec) -> Vec<&AgentSpec> {
    let mut out: Vec<&AgentSpec> = Vec::new();
    let mut pending = vec![root];
    while let Some(tree) = pending.pop() {
        if out.iter().any(|seen| std::ptr::eq(*seen, tree)) {
            continue;
        }
        out.push(tree);
        for a in tree.walk().into_iter().rev() {
            pending.extend(agent_tools(a).into_iter().rev());
        }
    }
    out
}

/// Every agent of the diagram: the agents of each of its [`trees`].
pub fn agents(root: &AgentSpec) -> Vec<&AgentSpec> {
    trees(root).into_iter().flat_map(AgentSpec::walk).collect()
}

/// The agents `agent` calls through `AgentTool`.
fn agent_tools(agent: &AgentSpec) -> Vec<&AgentSpec> {
    match &agent.kind {
        AgentSpecKind::Llm(llm) => llm
            .tools
            .iter()
            .filter_map(|t| match t {
                ToolSpec::Agent(a) => Some(&a.agent),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The names of an agent's tools as the model sees them (an `McpToolset` as `mcp`, since
/// its tools are only known once its server runs); `AgentTool`s are edges, not listed.
pub fn tool_names(agent: &AgentSpec) -> Vec<String> {
    let AgentSpecKind::Llm(llm) = &agent.kind else {
        return Vec::new();
    };
    llm.tools
        .iter()
        .filter_map(|t| match t {
            ToolSpec::Builtin(n) | ToolSpec::Defined(n) => Some(n.clone()),
            ToolSpec::Mcp { .. } => Some("mcp".to_owned()),
            ToolSpec::Agent(_) => None,
        })
        .collect()
}

/// What kind of agent `a` is, as the diagrams say it (`LoopAgent, at most 3`).
pub fn kind_name(a: &AgentSpec) -> String {
    match &a.kind {
        AgentSpecKind::Llm(_) => "LlmAgent".into(),
        AgentSpecKind::Sequential { .. } => "SequentialAgent".into(),
        AgentSpecKind::Parallel => "ParallelAgent".into(),
        AgentSpecKind::Loop {
            max_iterations: Some(n),
        } if *n > 0 => format!("LoopAgent, at most {n}"),
        AgentSpecKind::Loop { .. } => "LoopAgent".into(),
        AgentSpecKind::Graph(_) => "Workflow".into(),
    }
}

/// Structural edges (steps, branches, loop bodies, sub-agents), transfer edges, as the
/// runtime computes transfer targets (parent and peers only under an LLM parent), and
/// `AgentTool` calls, whose agents are trees of their own.
pub fn edges(root: &AgentSpec) -> Vec<Edge> {
    let mut out = Vec::new();
    for tree in trees(root) {
        walk(tree, None, &mut out);
        for a in tree.walk() {
            for called in agent_tools(a) {
                out.push(Edge {
                    from: a.name.clone(),
                    to: called.name.clone(),
                    label: "AgentTool".into(),
                    kind: EdgeKind::AgentTool,
                });
            }
        }
    }
    out
}

fn walk(agent: &AgentSpec, parent: Option<&AgentSpec>, out: &mut Vec<Edge>) {
    if let AgentSpecKind::Graph(_) = agent.kind {
        out.extend(workflow::edges(agent));
        for sub in &agent.sub_agents {
            walk(sub, Some(agent), out);
        }
        return;
    }
    for (i, sub) in agent.sub_agents.iter().enumerate() {
        let label = match &agent.kind {
            AgentSpecKind::Sequential { .. } => format!("step {}", i + 1),
            AgentSpecKind::Parallel => "branch".into(),
            AgentSpecKind::Loop { .. } => format!("body {}", i + 1),
            AgentSpecKind::Llm(_) => "transfer".into(),
            AgentSpecKind::Graph(_) => "node".into(),
        };
        out.push(Edge {
            from: agent.name.clone(),
            to: sub.name.clone(),
            label,
            kind: if matches!(agent.kind, AgentSpecKind::Llm(_)) {
                EdgeKind::Transfer
            } else {
                EdgeKind::Structure
            },
        });
    }
    if let AgentSpecKind::Loop { .. } = agent.kind
        && let Some(last) = agent.sub_agents.last()
    {
        out.push(Edge {
            from: last.name.clone(),
            to: agent.name.clone(),
            label: "repeat until exit_loop".into(),
            kind: EdgeKind::Structure,
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
                kind: EdgeKind::Transfer,
            });
        }
        if !llm.disallow_transfer_to_peers {
            for peer in parent.sub_agents.iter().filter(|p| p.name != agent.name) {
                out.push(Edge {
                    from: agent.name.clone(),
                    to: peer.name.clone(),
                    label: "transfer".into(),
                    kind: EdgeKind::Transfer,
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
    for a in agents(root) {
        let shape = match a.kind {
            AgentSpecKind::Llm(_) => ("[\"", "\"]"),
            _ => ("[[\"", "\"]]"),
        };
        let tools = tool_names(a);
        let tools = if tools.is_empty() {
            String::new()
        } else {
            format!("<br/><small>tools: {}</small>", tools.join(", "))
        };
        let _ = writeln!(
            s,
            "    {}{}{}<br/><small>{}</small>{tools}{}",
            a.name,
            shape.0,
            a.name,
            kind_name(a),
            shape.1
        );
    }
    for a in agents(root) {
        for x in workflow::extras(a) {
            let (open, close) = match x.shape {
                workflow::Shape::Start => ("((\"", "\"))"),
                workflow::Shape::Router => ("{\"", "\"}"),
                workflow::Shape::Join => ("{{\"", "\"}}"),
            };
            let _ = writeln!(s, "    {}{open}{}{close}", x.id, x.label);
        }
    }
    for e in edges(root) {
        let (arrow, label) = match e.kind {
            EdgeKind::Structure => ("-->", e.label),
            EdgeKind::Transfer => ("-.->", e.label),
            EdgeKind::AgentTool => ("==>", e.label),
            EdgeKind::Back => ("-->", format!("↺ {}", e.label).trim_end().to_owned()),
        };
        if label.is_empty() {
            let _ = writeln!(s, "    {} {arrow} {}", e.from, e.to);
        } else {
            let _ = writeln!(
                s,
                "    {} {arrow}|{}| {}",
                e.from,
                mermaid_text(&label),
                e.to
            );
        }
    }
    s
}

/// An edge's text in Mermaid: as it is when plain, else quoted (a route list's `a | b`
/// unquoted ends the text at its first `|`, and the whole diagram fails to parse), with
/// `"` written `#quot;`.
fn mermaid_text(label: &str) -> String {
    let plain = |c: char| c.is_alphanumeric() || matches!(c, '_' | ' ' | '↺');
    if label.chars().all(plain) {
        label.to_owned()
    } else {
        format!("\"{}\"", label.replace('"', "#quot;"))
    }
}

/// A DOT quoted string's inside: `"` and `\` escaped (a route label is free text).
fn dot_text(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
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
    for a in agents(root) {
        let shape = match a.kind {
            AgentSpecKind::Llm(_) => "box, style=rounded",
            _ => "box3d",
        };
        let tools = tool_names(a);
        let tools = if tools.is_empty() {
            String::new()
        } else {
            format!("\\ntools: {}", tools.join(", "))
        };
        let _ = writeln!(
            s,
            "    \"{}\" [shape={shape}, label=\"{}\\n{}{tools}\"];",
            a.name,
            a.name,
            kind_name(a)
        );
    }
    for a in agents(root) {
        for x in workflow::extras(a) {
            let shape = match x.shape {
                workflow::Shape::Start => "circle",
                workflow::Shape::Router => "diamond",
                workflow::Shape::Join => "hexagon",
            };
            let _ = writeln!(
                s,
                "    \"{}\" [shape={shape}, label=\"{}\"];",
                x.id, x.label
            );
        }
    }
    for e in edges(root) {
        let style = match e.kind {
            EdgeKind::Structure => "",
            EdgeKind::Transfer => ", style=dashed",
            EdgeKind::AgentTool => ", style=dotted",
            EdgeKind::Back => ", style=bold, constraint=false",
        };
        let _ = writeln!(
            s,
            "    \"{}\" -> \"{}\" [label=\"{}\"{style}];",
            e.from,
            e.to,
            dot_text(&e.label)
        );
    }
    s.push_str("}\n");
    s
}
