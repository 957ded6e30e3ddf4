//! Workflow configuration: YAML files in, a checked [`AgentSpec`] tree out.
//!
//! Loading never touches the network or the runtime: it reads files, checks them and
//! reports every problem it can find as a [`Diagnostic`] with file, line and column.

pub mod agent_config;
mod diagnostic;
mod load;
pub mod yaml;

pub use diagnostic::{Diagnostic, Severity};
pub use load::{load_checked, load_typed, load_workflow};

use std::path::PathBuf;

/// Where a config item was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file.
    pub file: PathBuf,
    /// Line and column.
    pub pos: yaml::Pos,
}

/// A checked LLM agent.
#[derive(Debug, Clone)]
pub struct LlmSpec {
    /// Model name, if set on this agent.
    pub model: Option<String>,
    /// Instruction template.
    pub instruction: String,
    /// Built-in tool names, in order.
    pub tools: Vec<String>,
    /// State key for the final text.
    pub output_key: Option<String>,
    /// Only the current turn is sent to the model.
    pub current_turn_only: bool,
    /// No transfer back to the parent.
    pub disallow_transfer_to_parent: bool,
    /// No transfer to siblings.
    pub disallow_transfer_to_peers: bool,
    /// Provider parameters.
    pub generate_content_config: Option<serde_json::Value>,
}

/// What kind of agent a spec describes.
#[derive(Debug, Clone)]
pub enum AgentSpecKind {
    /// An LLM agent.
    Llm(Box<LlmSpec>),
    /// A sequential pipeline.
    Sequential {
        /// Offer `task_completed` to the steps.
        task_completed: bool,
    },
    /// A parallel fan-out.
    Parallel,
    /// A loop.
    Loop {
        /// Iteration bound.
        max_iterations: Option<u32>,
    },
}

/// A checked agent and its sub-agents.
#[derive(Debug, Clone)]
pub struct AgentSpec {
    /// Unique name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Kind and settings.
    pub kind: AgentSpecKind,
    /// Sub-agents in order.
    pub sub_agents: Vec<AgentSpec>,
    /// Where the agent was declared (its `name`).
    pub location: Location,
}

impl AgentSpec {
    /// Every agent of the tree, depth first, this one first.
    pub fn walk(&self) -> Vec<&AgentSpec> {
        let mut out = vec![self];
        for s in &self.sub_agents {
            out.extend(s.walk());
        }
        out
    }
}
