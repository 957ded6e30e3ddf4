//! Workflow configuration: YAML files in, a checked [`AgentSpec`] tree out.
//!
//! Loading never touches the network or the runtime: it reads files, checks them and
//! reports every problem it can find as a [`Diagnostic`] with file, line and column.

pub mod agent_config;
mod checks;
mod declarations;
mod define;
mod diagnostic;
pub mod discover;
pub mod env;
pub mod graph;
mod inline_schema;
mod live;
mod load;
mod references;
pub mod schema;
mod source;
mod span;
mod static_instruction;
mod tool_def;
mod tool_list;
pub mod yaml;
mod yaml11;
mod yaml_tags;

pub use diagnostic::{Diagnostic, Severity};
pub use load::{LoadOptions, Loaded, load, load_workflow};
pub use source::{
    FileAccess, MAX_FILE_BYTES, ReadError, load_checked, load_checked_script, load_typed,
    normalize_path, read_bounded, read_text,
};

use std::collections::{BTreeMap, HashMap};
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
    /// `static_instruction` as text: the system instruction's start; the templated
    /// instruction then goes to the contents.
    pub static_instruction: Option<String>,
    /// Tools, in order.
    pub tools: Vec<ToolSpec>,
    /// State key for the final text.
    pub output_key: Option<String>,
    /// The reply's JSON Schema (checked: every provider can take it).
    pub output_schema: Option<serde_json::Value>,
    /// The arguments' JSON Schema as an AgentTool (checked: an object every provider
    /// can take).
    pub input_schema: Option<serde_json::Value>,
    /// Only the current turn is sent to the model.
    pub current_turn_only: bool,
    /// No transfer back to the parent.
    pub disallow_transfer_to_parent: bool,
    /// No transfer to siblings.
    pub disallow_transfer_to_peers: bool,
    /// Provider parameters.
    pub generate_content_config: Option<serde_json::Value>,
    /// `transfer_to_agent` is written in its tools (it is offered automatically anyway).
    pub lists_transfer: bool,
}

/// A tool an agent lists.
#[derive(Debug, Clone)]
pub enum ToolSpec {
    /// An ADK built-in by name (`exit_loop`).
    Builtin(String),
    /// A tool declared under `define.tools`.
    Defined(String),
    /// ADK's `AgentTool` written in the agent's own list.
    Agent(Box<AgentToolSpec>),
    /// ADK's `McpToolset` written in the agent's own list; `key` names it among the
    /// workflow's toolsets.
    Mcp {
        /// Unique key of this toolset in the workflow.
        key: String,
        /// The server.
        config: Box<agent_config::McpToolsetConfig>,
    },
}

/// An agent run as a tool.
#[derive(Debug, Clone)]
pub struct AgentToolSpec {
    /// The agent (a tree of its own).
    pub agent: AgentSpec,
    /// Return its answer without another model call.
    pub skip_summarization: bool,
}

/// A tool declared under `define.tools`, with what loading it required.
#[derive(Debug, Clone)]
pub struct DefinedTool {
    /// The declaration.
    pub def: agent_config::ToolDef,
    /// The agent of an `agent:` tool.
    pub agent: Option<AgentToolSpec>,
    /// The entries of a `lookup:` tool, from `table` or `file`.
    pub table: Option<serde_json::Map<String, serde_json::Value>>,
    /// The directory of the workflow file (commands' working directory).
    pub base_dir: PathBuf,
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
    /// An ADK 2 Workflow graph; its LLM nodes and nested workflows are the sub-agents.
    Graph(Box<graph::GraphSpec>),
}

/// Callback names per hook, in order (resolved against `define.callbacks`).
#[derive(Debug, Clone, Default)]
pub struct CallbackNames {
    /// before_agent_callbacks.
    pub before_agent: Vec<String>,
    /// after_agent_callbacks.
    pub after_agent: Vec<String>,
    /// before_model_callbacks.
    pub before_model: Vec<String>,
    /// after_model_callbacks.
    pub after_model: Vec<String>,
    /// before_tool_callbacks.
    pub before_tool: Vec<String>,
    /// after_tool_callbacks.
    pub after_tool: Vec<String>,
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
    /// Positions of the agent's fields, by key, in the agent's file.
    pub positions: HashMap<String, yaml::Pos>,
    /// Declared callbacks by hook.
    pub callbacks: CallbackNames,
}

impl AgentSpec {
    /// Where a field of this agent is (its value), else where the agent is.
    pub fn at(&self, field: &str) -> Location {
        Location {
            file: self.location.file.clone(),
            pos: self
                .positions
                .get(field)
                .copied()
                .unwrap_or(self.location.pos),
        }
    }
}

/// A loaded, checked workflow: the agent tree and the root file's declarations.
#[derive(Debug, Clone)]
pub struct Workflow {
    /// The root agent.
    pub root: AgentSpec,
    /// Named models (`define.models`).
    pub models: BTreeMap<String, agent_config::ModelConfig>,
    /// Named tools (`define.tools`).
    pub tools: BTreeMap<String, DefinedTool>,
    /// Named callbacks (`define.callbacks`).
    pub callbacks: BTreeMap<String, agent_config::CallbackDef>,
    /// Every MCP server the workflow uses, by key (a `define.tools` name, or a key made
    /// for an agent's inline `McpToolset`), with the directory relative paths start from.
    pub mcp_servers: BTreeMap<String, (agent_config::McpToolsetConfig, PathBuf)>,
    /// Initial session state (`state`).
    pub state: serde_json::Map<String, serde_json::Value>,
    /// Memory settings (`memory`).
    pub memory: agent_config::MemoryConfig,
    /// The run config of live runs (`live`).
    pub live: agent_config::LiveConfig,
    /// Every file of the workflow, canonical paths.
    pub files: Vec<PathBuf>,
    /// The root file as given.
    pub path: PathBuf,
}

impl Workflow {
    /// How the app's instructions are templated: ADK 2.13's rules in a Workflow app
    /// (`\{key}` and `${key}` are text; its LLM agents run as graph nodes or as agents
    /// those call as tools), ADK 1.x's otherwise.
    pub fn template_dialect(&self) -> crate::template::Dialect {
        if matches!(self.root.kind, AgentSpecKind::Graph(_)) {
            crate::template::Dialect::Adk2
        } else {
            crate::template::Dialect::Adk1
        }
    }

    /// The names of every LLM agent that can call a model: those of the tree and those of
    /// agent tools (in `tools:` lists and under `define.tools`), however deep.
    pub fn llm_agent_names(&self) -> std::collections::BTreeSet<&str> {
        let mut names = std::collections::BTreeSet::new();
        let mut trees: Vec<&AgentSpec> = vec![&self.root];
        trees.extend(
            self.tools
                .values()
                .filter_map(|d| d.agent.as_ref().map(|a| &a.agent)),
        );
        while let Some(tree) = trees.pop() {
            for agent in tree.walk() {
                let AgentSpecKind::Llm(llm) = &agent.kind else {
                    continue;
                };
                names.insert(agent.name.as_str());
                for tool in &llm.tools {
                    if let ToolSpec::Agent(a) = tool {
                        trees.push(&a.agent);
                    }
                }
            }
        }
        names
    }
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
