//! The YAML types of a declared tool (`define.tools.NAME`): the shared keys, its one kind
//! of behaviour ([`ToolKind`]) and each kind's settings. Re-exported by `agent_config`.

use super::declarations::RetryConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The behaviour keys of a declared tool; exactly one is set (the order of [`ToolKind`]).
pub const TOOL_KINDS: &[&str] = &[
    "lookup",
    "http",
    "command",
    "agent",
    "set_state",
    "get_state",
    "client",
    "save_artifact",
    "load_artifact",
    "mcp",
];

/// A tool declared in YAML: what the model sees (description, parameters) and its one
/// kind of behaviour. Written as a mapping with exactly one behaviour key ([`TOOL_KINDS`]);
/// its schema is that of the mapping ([`ToolKeys`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(try_from = "ToolKeys", into = "ToolKeys")]
#[schemars(
    description = "A tool declared in YAML: what the model sees (description, parameters) and exactly one\nkind of behaviour (`lookup`, `http`, `command`, `agent`, `set_state`, `get_state`)."
)]
pub struct ToolDef {
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments (`type: object`); calls are checked against it.
    pub parameters: Option<Value>,
    /// ADK long-running tool: the call ends the turn and a later function-response
    /// message from the client resumes the agent.
    pub long_running: bool,
    /// What the tool does when called.
    pub kind: ToolKind,
}

/// The behaviour of a declared tool: one per tool, named by its YAML key.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolKind {
    /// `lookup`: a key looked up in a table.
    Lookup(LookupTool),
    /// `http`: an HTTP call.
    Http(HttpTool),
    /// `command`: a program run with arguments.
    Command(CommandTool),
    /// `agent`: an agent run as a tool (ADK AgentTool).
    Agent(AgentToolConfig),
    /// `set_state`: state keys written, key → value template.
    SetState(std::collections::BTreeMap<String, String>),
    /// `get_state`: state keys read.
    GetState(Vec<String>),
    /// `client`: the client answers (a long-running call).
    Client(ClientTool),
    /// `save_artifact`: an artifact saved.
    SaveArtifact(SaveArtifactTool),
    /// `load_artifact`: an artifact's text loaded.
    LoadArtifact(LoadArtifactTool),
    /// `mcp`: the tools of an MCP server.
    Mcp(McpToolsetConfig),
}

impl ToolKind {
    /// The YAML key of this kind (one of [`TOOL_KINDS`]).
    pub fn key(&self) -> &'static str {
        match self {
            ToolKind::Lookup(_) => "lookup",
            ToolKind::Http(_) => "http",
            ToolKind::Command(_) => "command",
            ToolKind::Agent(_) => "agent",
            ToolKind::SetState(_) => "set_state",
            ToolKind::GetState(_) => "get_state",
            ToolKind::Client(_) => "client",
            ToolKind::SaveArtifact(_) => "save_artifact",
            ToolKind::LoadArtifact(_) => "load_artifact",
            ToolKind::Mcp(_) => "mcp",
        }
    }
}

/// A declared tool as written: the shared keys and every behaviour key, of which exactly
/// one must be set. Only (de)serialization and the schema see this form; the workflow
/// schema's `oneOf` reports a tool with none or two before it is read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolKeys {
    /// What the tool does, for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments (`type: object`); calls are checked against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// ADK long-running tool: the call ends the turn and a later function-response
    /// message from the client resumes the agent.
    #[serde(default)]
    pub long_running: bool,
    /// Look a key up in a table written in YAML or in a data file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookup: Option<LookupTool>,
    /// Call an HTTP endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpTool>,
    /// Run a program (never through a shell); needs `--allow-commands`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<CommandTool>,
    /// Run an agent as a tool (ADK AgentTool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentToolConfig>,
    /// Write state keys: key → value template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_state: Option<std::collections::BTreeMap<String, String>>,
    /// Read state keys; the result maps each key to its value (or null).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get_state: Option<Vec<String>>,
    /// The client answers: the call ends the turn (a long-running tool) and the next
    /// message, a function response, resumes the agent (`run --respond NAME=JSON`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientTool>,
    /// Save a new version of an artifact; the result names the version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub save_artifact: Option<SaveArtifactTool>,
    /// Load an artifact's text (the latest version unless `version` is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_artifact: Option<LoadArtifactTool>,
    /// The tools of an MCP server: an agent listing this name gets all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpToolsetConfig>,
}

impl TryFrom<ToolKeys> for ToolDef {
    type Error = String;

    fn try_from(keys: ToolKeys) -> Result<Self, String> {
        let kinds = [
            keys.lookup.map(ToolKind::Lookup),
            keys.http.map(ToolKind::Http),
            keys.command.map(ToolKind::Command),
            keys.agent.map(ToolKind::Agent),
            keys.set_state.map(ToolKind::SetState),
            keys.get_state.map(ToolKind::GetState),
            keys.client.map(ToolKind::Client),
            keys.save_artifact.map(ToolKind::SaveArtifact),
            keys.load_artifact.map(ToolKind::LoadArtifact),
            keys.mcp.map(ToolKind::Mcp),
        ];
        let mut set = kinds.into_iter().flatten();
        match (set.next(), set.next()) {
            (Some(kind), None) => Ok(ToolDef {
                description: keys.description,
                parameters: keys.parameters,
                long_running: keys.long_running,
                kind,
            }),
            _ => Err(format!(
                "a tool needs exactly one of {}",
                TOOL_KINDS
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

impl From<ToolDef> for ToolKeys {
    fn from(def: ToolDef) -> Self {
        let mut keys = ToolKeys {
            description: def.description,
            parameters: def.parameters,
            long_running: def.long_running,
            lookup: None,
            http: None,
            command: None,
            agent: None,
            set_state: None,
            get_state: None,
            client: None,
            save_artifact: None,
            load_artifact: None,
            mcp: None,
        };
        match def.kind {
            ToolKind::Lookup(t) => keys.lookup = Some(t),
            ToolKind::Http(t) => keys.http = Some(t),
            ToolKind::Command(t) => keys.command = Some(t),
            ToolKind::Agent(t) => keys.agent = Some(t),
            ToolKind::SetState(t) => keys.set_state = Some(t),
            ToolKind::GetState(t) => keys.get_state = Some(t),
            ToolKind::Client(t) => keys.client = Some(t),
            ToolKind::SaveArtifact(t) => keys.save_artifact = Some(t),
            ToolKind::LoadArtifact(t) => keys.load_artifact = Some(t),
            ToolKind::Mcp(t) => keys.mcp = Some(t),
        }
        keys
    }
}

/// An MCP server: a local program (`command`) or an HTTP endpoint (`url`: streamable HTTP,
/// or the deprecated HTTP+SSE transport with `sse: true`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpToolsetConfig {
    /// Program speaking MCP on stdin/stdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment for the program (it inherits only HOME, PATH, USER and the like).
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Working directory, relative to the workflow file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Streamable HTTP endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers (values may come from `${ENV}`; they are never logged).
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// `url` is the event stream of the deprecated HTTP+SSE transport (ADK's
    /// `sse_connection_params`) rather than a streamable HTTP endpoint.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sse: bool,
    /// Offer only these tools of the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_filter: Option<Vec<String>>,
    /// Seconds allowed for the handshake, the listing and each call (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// When the server is not configured (empty `url`/`command`) or cannot be reached, the
    /// run goes on without its tools, saying so on stderr, instead of failing.
    #[serde(default)]
    pub optional: bool,
}

/// Saves an artifact: name and content are templates over the arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveArtifactTool {
    /// Artifact name template; `user:` names belong to the user, others to the session.
    pub name: String,
    /// Content template.
    pub content: String,
    /// MIME type (default `text/plain`).
    #[serde(default = "default_mime")]
    pub mime_type: String,
}

fn default_mime() -> String {
    "text/plain".into()
}

/// Loads an artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadArtifactTool {
    /// Artifact name template.
    pub name: String,
    /// Version template (a number); absent: the latest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A tool the client answers (human approval, an external job).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientTool {}

/// A table lookup: `key` (a template over the call's arguments) selects an entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LookupTool {
    /// Template of the key, e.g. `{{ order_id }}`.
    pub key: String,
    /// The entries, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<serde_json::Map<String, Value>>,
    /// A YAML or JSON file holding the entries, relative to the workflow file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// An HTTP call; every string is a template over the arguments (`{{ order_id }}`) and
/// state (`{{ state.key }}`); undefined names are errors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpTool {
    /// `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    #[serde(default = "default_method")]
    pub method: String,
    /// The URL.
    pub url: String,
    /// Request headers (values may come from `${ENV}`; they are never logged).
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// Query parameters.
    #[serde(default)]
    pub query: std::collections::BTreeMap<String, String>,
    /// JSON body; string leaves are templates. Absent: no body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// JSON pointer into the response JSON (`/data/status`); absent: the whole response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
    /// Seconds before the call times out (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Retries for 429, 5xx and timeouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<RetryConfig>,
    /// Responses larger than this many bytes are refused (default 1 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// Hosts every request and redirect may go to: `host` (the scheme's default port
    /// only), `host:PORT` or `host:*`; absent: the URL's own host and port as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_hosts: Option<Vec<String>>,
}

fn default_method() -> String {
    "GET".into()
}

/// A program run with an argument list (never a shell command line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandTool {
    /// The program, looked up on PATH.
    pub program: String,
    /// Arguments; each is a template over the call's arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Working directory, relative to the workflow file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Seconds before the program is killed (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
}

/// An agent run as a tool: its final text is the result, its state changes flow back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentToolConfig {
    /// The agent: `{config_path: file.yaml}` or the agent written inline.
    pub agent: Value,
    /// Return the agent's answer to the user as is, without another model call.
    #[serde(default)]
    pub skip_summarization: bool,
    /// ADK's plugin switch; accepted for compatibility.
    #[serde(default)]
    pub include_plugins: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_has_exactly_one_kind() {
        let one: ToolDef =
            serde_json::from_value(json!({"description": "d", "get_state": ["k"]})).unwrap();
        assert_eq!(one.kind, ToolKind::GetState(vec!["k".into()]));
        assert_eq!(one.kind.key(), "get_state");
        for bad in [
            json!({"description": "d"}),
            json!({"get_state": ["k"], "client": {}}),
        ] {
            let err = serde_json::from_value::<ToolDef>(bad).unwrap_err();
            assert!(err.to_string().contains("exactly one of `lookup`"), "{err}");
        }
        let back = serde_json::to_value(&one).unwrap();
        assert_eq!(back["get_state"], json!(["k"]));
    }
}
