//! The YAML types of an agent file: ADK's Agent Config, one struct per `agent_class`.
//!
//! Every struct denies unknown keys, so a typo is an error with a position, not a silent
//! default. `agent_class` picks the struct (LlmAgent when absent, as in ADK).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A reference to a sub-agent: another file, or the agent written inline.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentRef {
    /// Path of the agent's YAML file, relative to the file that references it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_path: Option<String>,
    /// ADK's dotted Python reference to an agent object; not supported by adk-flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// A tool by ADK built-in name (`exit_loop`), with optional arguments.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolRef {
    /// The tool name: an ADK built-in such as `exit_loop`.
    pub name: String,
    /// Arguments for tools that take configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
}

/// ADK's reference to Python code (callbacks); recognised so it can be reported clearly.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeRef {
    /// Dotted Python name.
    pub name: String,
    /// Arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
}

/// How much history an LLM agent sees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IncludeContentsConfig {
    /// The whole conversation of its branch.
    #[default]
    Default,
    /// Only the current turn.
    None,
}

/// An LLM agent (`agent_class: LlmAgent`, the default).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmAgentConfig {
    /// `LlmAgent` (or `Agent`, `google.adk.agents.LlmAgent`,
    /// `google.adk.agents.llm_agent.LlmAgent`...); may be omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_class: Option<String>,
    /// Unique name: an identifier, not `user`.
    pub name: String,
    /// What the agent does; other agents read it when deciding to transfer.
    #[serde(default)]
    pub description: String,
    /// Model name; inherited from the nearest LLM ancestor when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Instruction template: `{key}` inserts state, `{key?}` inserts it when present.
    #[serde(default)]
    pub instruction: String,
    /// Content sent as written, never templated, at the start of the system instruction
    /// (ADK 1.18+): text, a content (`parts: [{text: ...}]`) or a list of text parts. With
    /// it, the templated `instruction` is sent as a user message instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_instruction: Option<Value>,
    /// Sub-agents this agent may transfer to.
    #[serde(default)]
    pub sub_agents: Vec<Value>,
    /// Tools by name.
    #[serde(default)]
    pub tools: Vec<ToolRef>,
    /// State key that receives the agent's final text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_key: Option<String>,
    /// `default` (whole conversation) or `none` (current turn only).
    #[serde(default)]
    pub include_contents: IncludeContentsConfig,
    /// Forbid transferring back to the parent.
    #[serde(default)]
    pub disallow_transfer_to_parent: bool,
    /// Forbid transferring to siblings.
    #[serde(default)]
    pub disallow_transfer_to_peers: bool,
    /// Provider generation parameters (temperature, max_output_tokens...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_content_config: Option<GenerateContentConfig>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub before_agent_callbacks: Vec<CodeRef>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub after_agent_callbacks: Vec<CodeRef>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub before_model_callbacks: Vec<CodeRef>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub after_model_callbacks: Vec<CodeRef>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub before_tool_callbacks: Vec<CodeRef>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub after_tool_callbacks: Vec<CodeRef>,
    /// The arguments' JSON Schema when the agent runs as an AgentTool, written inline:
    /// the tool's parameters, the call's arguments checked against it and sent to the
    /// agent as JSON. ADK's `{name: python.Class}` is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// The reply's JSON Schema, written inline: sent to the model (Gemini's
    /// `responseSchema`, OpenAI's `response_format`), checked on the way back, stored
    /// under `output_key` as JSON. ADK's `{name: python.Class}` is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Root file only: named models, referenced by `model:` in any agent (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub define: Option<Define>,
    /// Root file only: initial session state of every new session (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<serde_json::Map<String, Value>>,
    /// Root file only: when sessions are added to memory and how long memories last
    /// (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryConfig>,
    /// Root file only: the run config of live runs (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveConfig>,
}

/// A workflow agent with no settings of its own: `SequentialAgent` or `ParallelAgent`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SequentialAgentConfig {
    /// `SequentialAgent`.
    pub agent_class: String,
    /// Unique name: an identifier, not `user`.
    pub name: String,
    /// What the pipeline does.
    #[serde(default)]
    pub description: String,
    /// The steps, in order.
    #[serde(default)]
    pub sub_agents: Vec<Value>,
    /// Offer each LLM step the `task_completed` tool, which ends that step (adk-flow).
    #[serde(default)]
    pub task_completed: bool,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub before_agent_callbacks: Vec<CodeRef>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub after_agent_callbacks: Vec<CodeRef>,
    /// Root file only: named models, referenced by `model:` in any agent (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub define: Option<Define>,
    /// Root file only: initial session state of every new session (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<serde_json::Map<String, Value>>,
    /// Root file only: when sessions are added to memory and how long memories last
    /// (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryConfig>,
    /// Root file only: the run config of live runs (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveConfig>,
}

/// `ParallelAgent`: children run concurrently, each on its own branch.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParallelAgentConfig {
    /// `ParallelAgent`.
    pub agent_class: String,
    /// Unique name: an identifier, not `user`.
    pub name: String,
    /// What the fan-out does.
    #[serde(default)]
    pub description: String,
    /// The branches.
    #[serde(default)]
    pub sub_agents: Vec<Value>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub before_agent_callbacks: Vec<CodeRef>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub after_agent_callbacks: Vec<CodeRef>,
    /// Root file only: named models, referenced by `model:` in any agent (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub define: Option<Define>,
    /// Root file only: initial session state of every new session (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<serde_json::Map<String, Value>>,
    /// Root file only: when sessions are added to memory and how long memories last
    /// (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryConfig>,
    /// Root file only: the run config of live runs (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveConfig>,
}

/// `LoopAgent`: runs its children in order until one escalates (exit_loop).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopAgentConfig {
    /// `LoopAgent`.
    pub agent_class: String,
    /// Unique name: an identifier, not `user`.
    pub name: String,
    /// What the loop does.
    #[serde(default)]
    pub description: String,
    /// The body, run in order each iteration.
    #[serde(default)]
    pub sub_agents: Vec<Value>,
    /// Upper bound on iterations; absent or 0 means unbounded (ADK 1.x).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub before_agent_callbacks: Vec<CodeRef>,
    /// ADK Python callbacks (not supported).
    #[serde(default)]
    pub after_agent_callbacks: Vec<CodeRef>,
    /// Root file only: named models, referenced by `model:` in any agent (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub define: Option<Define>,
    /// Root file only: initial session state of every new session (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<serde_json::Map<String, Value>>,
    /// Root file only: when sessions are added to memory and how long memories last
    /// (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryConfig>,
    /// Root file only: the run config of live runs (adk-flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveConfig>,
}

/// The agent classes adk-flow knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentClass {
    /// LlmAgent.
    Llm,
    /// SequentialAgent.
    Sequential,
    /// ParallelAgent.
    Parallel,
    /// LoopAgent.
    Loop,
}

impl AgentClass {
    /// Reads an `agent_class` value, accepting every spelling ADK resolves
    /// (`LoopAgent`, `google.adk.agents.LoopAgent`, `google.adk.agents.loop_agent.LoopAgent`).
    pub fn parse(s: &str) -> Option<AgentClass> {
        use super::schema::{LLM_CLASSES, LOOP_CLASSES, PARALLEL_CLASSES, SEQUENTIAL_CLASSES};
        [
            (LLM_CLASSES, AgentClass::Llm),
            (SEQUENTIAL_CLASSES, AgentClass::Sequential),
            (PARALLEL_CLASSES, AgentClass::Parallel),
            (LOOP_CLASSES, AgentClass::Loop),
        ]
        .into_iter()
        .find(|(names, _)| names.contains(&s))
        .map(|(_, class)| class)
    }
}

pub use super::declarations::*;
pub use super::live::{LiveConfig, LiveModality};
pub use super::tool_def::*;
