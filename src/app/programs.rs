//! The one gate on starting programs. A workflow starts programs through `command` tools
//! its agents use and through stdio MCP servers (native `mcp: {command}` and ADK's
//! `McpToolset` with stdio parameters). Without permission (`--allow-commands` in every
//! command that runs workflows) an app does not start at all, before any server is
//! started, and the error names every program it would have started.

use crate::config::agent_config::ToolKind;
use crate::config::{AgentSpec, AgentSpecKind, ToolSpec, Workflow};
use std::collections::HashSet;

/// Something in the workflow that would start a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramStarter {
    /// `tool `name`` or `MCP server `key``.
    pub what: String,
    /// The program.
    pub program: String,
}

impl std::fmt::Display for ProgramStarter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} starts `{}`", self.what, self.program)
    }
}

/// The workflow starts programs and was not allowed to.
#[derive(Debug, thiserror::Error)]
#[error(
    "{}; pass --allow-commands (or set ADK_FLOW_ALLOW_COMMANDS=1) to allow programs",
    .starters.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
)]
pub struct ProgramsNotAllowed {
    /// What would start which program, in the workflow's order.
    pub starters: Vec<ProgramStarter>,
}

/// Refuses a workflow that would start programs unless `allowed`.
///
/// # Errors
/// Every program starter of the workflow, when there is one and it is not allowed.
pub fn check(workflow: &Workflow, allowed: bool) -> Result<(), ProgramsNotAllowed> {
    if allowed {
        return Ok(());
    }
    let starters = starters(workflow);
    if starters.is_empty() {
        Ok(())
    } else {
        Err(ProgramsNotAllowed { starters })
    }
}

/// Every program the workflow would start: stdio MCP servers, and the `command` tools
/// its agents (and the agents of its agent tools) use.
pub fn starters(workflow: &Workflow) -> Vec<ProgramStarter> {
    let mut out = Vec::new();
    for (key, (cfg, _)) in &workflow.mcp_servers {
        if let Some(command) = cfg.command.as_deref().filter(|c| !c.trim().is_empty()) {
            out.push(ProgramStarter {
                what: format!("MCP server `{key}`"),
                program: command.to_owned(),
            });
        }
    }
    let mut seen = HashSet::new();
    command_tools(workflow, &workflow.root, &mut seen, &mut out);
    out
}

fn command_tools<'a>(
    workflow: &'a Workflow,
    agent: &'a AgentSpec,
    seen: &mut HashSet<&'a str>,
    out: &mut Vec<ProgramStarter>,
) {
    for a in agent.walk() {
        let AgentSpecKind::Llm(llm) = &a.kind else {
            continue;
        };
        for t in &llm.tools {
            match t {
                ToolSpec::Defined(name) => {
                    if !seen.insert(name.as_str()) {
                        continue;
                    }
                    let Some(d) = workflow.tools.get(name) else {
                        continue;
                    };
                    if let ToolKind::Command(c) = &d.def.kind {
                        out.push(ProgramStarter {
                            what: format!("tool `{name}`"),
                            program: c.program.clone(),
                        });
                    }
                    if let Some(sub) = &d.agent {
                        command_tools(workflow, &sub.agent, seen, out);
                    }
                }
                ToolSpec::Agent(sub) => command_tools(workflow, &sub.agent, seen, out),
                ToolSpec::Builtin(_) | ToolSpec::Mcp { .. } => {}
            }
        }
    }
}
