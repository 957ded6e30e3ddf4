//! `adk-flow graph WORKFLOW`: the agent tree, its transfer edges and loops, as Mermaid or DOT.

use super::ExitStatus;
use crate::config::{self, AgentSpec, AgentSpecKind};
use clap::{Args, ValueEnum};
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

/// Diagram language.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GraphFormat {
    /// Mermaid flowchart (renders on GitHub).
    Mermaid,
    /// Graphviz DOT.
    Dot,
}

/// Arguments of `adk-flow graph`.
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// The workflow's root file.
    pub workflow: PathBuf,
    /// Diagram language.
    #[arg(long, value_enum, default_value = "mermaid")]
    pub format: GraphFormat,
}

/// One edge of the diagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edge {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) label: String,
    /// A transfer the model may choose (dashed), not a structural step.
    pub(crate) transfer: bool,
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
pub(crate) fn edges(root: &AgentSpec) -> Vec<Edge> {
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
pub(crate) fn mermaid(root: &AgentSpec) -> String {
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

/// The DOT digraph of a tree.
pub(crate) fn dot(root: &AgentSpec) -> String {
    let mut s = format!(
        "digraph \"{}\" {{\n    rankdir=TB;\n    node [fontname=\"Helvetica\"];\n",
        root.name
    );
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

/// Runs the command.
pub fn run(args: GraphArgs) -> anyhow::Result<ExitStatus> {
    let env = |name: &str| std::env::var(name).ok();
    let options = config::LoadOptions {
        env: &env,
        unset_env_is_error: false,
    };
    let loaded = config::load(&args.workflow, &options);
    let Some(workflow) = loaded.workflow else {
        for d in loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == config::Severity::Error)
        {
            eprintln!("{d}");
        }
        return Ok(ExitStatus::Failure);
    };
    let text = match args.format {
        GraphFormat::Mermaid => mermaid(&workflow.root),
        GraphFormat::Dot => dot(&workflow.root),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitStatus::Success)
}
