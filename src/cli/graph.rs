//! `adk-flow graph WORKFLOW`: the agent tree, its transfer edges and loops, and ADK 2 workflow
//! graphs (START, Routers, JoinNodes, labelled and back edges), as Mermaid, DOT or SVG.

use super::ExitStatus;
use crate::config;
use crate::graph::{dot, mermaid, svg};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

/// Diagram language.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GraphFormat {
    /// Mermaid flowchart (renders on GitHub).
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// An SVG picture laid out by adk-flow (no Graphviz needed); light and dark schemes.
    Svg,
}

/// Arguments of `adk-flow graph`.
#[derive(Debug, Args)]
pub struct GraphArgs {
    /// The workflow's root file.
    pub workflow: PathBuf,
    /// Diagram language.
    #[arg(long, value_enum, default_value = "mermaid")]
    pub format: GraphFormat,
    /// Which files the workflow's references may name.
    #[command(flatten)]
    pub files: super::Files,
}

/// Runs the command.
pub fn run(args: GraphArgs) -> anyhow::Result<ExitStatus> {
    let env = |name: &str| std::env::var(name).ok();
    let options = config::LoadOptions {
        env: &env,
        unset_env_is_error: false,
        files: args.files.access(),
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
        GraphFormat::Dot => dot(&workflow.root, false),
        GraphFormat::Svg => svg(&workflow.root),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitStatus::Success)
}
