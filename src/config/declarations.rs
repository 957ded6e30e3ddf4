//! The YAML types of the root file's declarations (`define.models`, `define.tools`,
//! `define.callbacks`) and of generation settings; the tools themselves are in
//! `tool_def`. Re-exported by `agent_config`.

use super::tool_def::ToolDef;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Generation parameters, as ADK's `generate_content_config` (genai `GenerateContentConfig`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateContentConfig {
    /// Sampling temperature; 0 is the most deterministic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling probability mass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Sample from the k most likely tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<f64>,
    /// Upper bound on tokens in a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Number of candidate replies (providers may only support 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_count: Option<u32>,
    /// Generation stops at any of these strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Seed for reproducible sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Penalty for tokens already present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    /// Penalty proportional to token frequency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// Reply MIME type, e.g. `application/json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_mime_type: Option<String>,
    /// Gemini thinking settings (`thinking_budget`, `include_thoughts`), passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_config: Option<serde_json::Map<String, Value>>,
    /// Gemini safety settings (`category`, `threshold`), passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_settings: Option<Vec<serde_json::Map<String, Value>>>,
    /// How the model may call tools (`function_calling_config`), as genai's `ToolConfig`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_config: Option<ToolConfig>,
}

/// genai's `ToolConfig`: settings for the tools offered to the model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    /// When the model may or must call a function.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function_calling_config: Option<FunctionCallingConfig>,
}

/// genai's `FunctionCallingConfig`: Gemini's `toolConfig.functionCallingConfig`, OpenAI's
/// `tool_choice`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FunctionCallingConfig {
    /// `AUTO` (the model chooses), `ANY` (it must call a function) or `NONE` (it may not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FunctionCallingMode>,
    /// With `ANY`, the only functions the model may call; each must be one of the agent's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_function_names: Option<Vec<String>>,
}

/// genai's `FunctionCallingConfigMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FunctionCallingMode {
    /// The model decides whether to call a function (the default).
    #[serde(rename = "AUTO")]
    Auto,
    /// The model must call a function (one of `allowed_function_names` when given).
    #[serde(rename = "ANY")]
    Any,
    /// The model may not call functions.
    #[serde(rename = "NONE")]
    None,
}

/// Which API a model is reached through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Google's Gemini API (generateContent).
    Gemini,
    /// Any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, llama.cpp...).
    Openai,
    /// Replies from a script file; no network.
    Scripted,
}

/// Retry policy for rate limits (429), server errors (5xx) and timeouts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    /// Attempts in all, the first included (1 disables retries).
    #[serde(default = "default_attempts")]
    pub max_attempts: u32,
    /// Wait before the first retry, in milliseconds; doubles each retry, with jitter.
    #[serde(default = "default_initial_backoff")]
    pub initial_backoff_ms: u64,
    /// Longest wait between attempts, in milliseconds.
    #[serde(default = "default_max_backoff")]
    pub max_backoff_ms: u64,
}

impl Default for RetryConfig {
    /// The documented defaults: 3 attempts, 500 ms doubling up to 10 s.
    fn default() -> Self {
        RetryConfig {
            max_attempts: default_attempts(),
            initial_backoff_ms: default_initial_backoff(),
            max_backoff_ms: default_max_backoff(),
        }
    }
}

fn default_attempts() -> u32 {
    3
}
fn default_initial_backoff() -> u64 {
    500
}
fn default_max_backoff() -> u64 {
    10_000
}

/// A named model: provider, model name, endpoint and call settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// `gemini`, `openai` (any OpenAI-compatible endpoint) or `scripted`.
    pub provider: ProviderKind,
    /// The provider's model name (`gemini-2.5-flash`, `gpt-4o-mini`, `smollm2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Endpoint base URL; default: `GEMINI_BASE_URL` / `OPENAI_BASE_URL`, else the public API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (never the key itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Seconds before a model call (or a stalled stream) times out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Retry policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<RetryConfig>,
    /// Default generation parameters; an agent's `generate_content_config` overrides them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate_content_config: Option<GenerateContentConfig>,
    /// `scripted` only: the script file, relative to the workflow file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
}

/// When the sessions of the app are added to memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AddSessionConfig {
    /// After every invocation, its events.
    AfterInvocation,
    /// Only when asked: `adk-flow memory add`, or the server's memory route (ADK's way).
    #[default]
    OnDemand,
    /// Never.
    Never,
}

/// The app's memory (root file only): when sessions are added, how long memories last.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// When sessions are added to memory: `after_invocation`, `on_demand` (default) or
    /// `never`.
    #[serde(default)]
    pub add_session: AddSessionConfig,
    /// Days a memory is kept, counted from the remembered event; forever when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub retention_days: Option<u32>,
}

/// Declarations shared by the whole workflow (root file only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Define {
    /// Named models; an agent's `model:` may name one of them.
    #[serde(default)]
    pub models: std::collections::BTreeMap<String, ModelConfig>,
    /// Named tools; any agent lists one with `tools: [{name: NAME}]`.
    #[serde(default)]
    pub tools: std::collections::BTreeMap<String, ToolDef>,
    /// Named callbacks; agents list them under `before_agent_callbacks` and the like.
    #[serde(default)]
    pub callbacks: std::collections::BTreeMap<String, CallbackDef>,
}

/// A text replacement applied to model replies (or tool results).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Redaction {
    /// A regular expression (Rust `regex` syntax).
    pub pattern: String,
    /// What each match becomes.
    #[serde(default = "default_redaction")]
    pub replacement: String,
}

fn default_redaction() -> String {
    "[redacted]".into()
}

/// A declarative callback: a condition and what to do when it holds. Callbacks of one
/// hook run in list order; the first that answers (`reply`, `block`, `result`) ends the
/// list, as the first non-None return does in ADK.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallbackDef {
    /// Jinja expression over `state`, `agent`, and per hook `text` (the model's reply),
    /// `tool`, `args`, `result`; absent: always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// State keys to write: key → value template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_state: Option<std::collections::BTreeMap<String, String>>,
    /// Answer with this text (template) instead: before_agent skips the agent,
    /// before_model skips the model call, after_agent adds a reply, after_model replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// before_tool: do not call the tool; the model receives this error (template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
    /// before_tool: return this result without calling the tool; after_tool: replace the
    /// result. String leaves are templates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// before_tool: replace these arguments (templates) before the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite_args: Option<serde_json::Map<String, Value>>,
    /// after_model / after_tool: replace text matching these patterns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redact: Option<Vec<Redaction>>,
}
