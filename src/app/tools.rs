//! The tool factory: each entry of an agent's `tools:` becomes the [`Tool`]s it offers.
//! Declared tools are built once per app build and shared by every agent that lists them;
//! workflow tests replace tools by stubs here.

use super::build::{BuildError, Builder};
use crate::agent::agent_tool::AgentTool;
use crate::config::agent_config::{HttpTool, RetryConfig, ToolDef, ToolKind};
use crate::config::{AgentToolSpec, DefinedTool, ToolSpec};
use crate::hosts::{AllowedHosts, literal_host};
use crate::names::{
    EXIT_LOOP, GET_USER_CHOICE, LOAD_ARTIFACTS, LOAD_MEMORY, PRELOAD_MEMORY, TASK_COMPLETED,
};
use crate::runner::IsolatedRunner;
use crate::tool::Tool;
use crate::tool::artifacts::{GetUserChoice, LoadArtifacts};
use crate::tool::builtin::{ExitLoop, GeminiTool, TaskCompleted};
use crate::tool::command::CommandSpec;
use crate::tool::declared::{Behavior, DeclaredTool, StubTool};
use crate::tool::http::{HttpSpec, Retry};
use crate::tool::memory::{LoadMemory, PreloadMemory};
use std::sync::Arc;
use std::time::Duration;

/// An HTTP tool's retries: its `retries`, else the documented defaults.
fn retry(r: Option<&RetryConfig>) -> Retry {
    let r = r.cloned().unwrap_or_default();
    Retry {
        max_attempts: r.max_attempts.max(1),
        initial_backoff: Duration::from_millis(r.initial_backoff_ms),
        max_backoff: Duration::from_millis(r.max_backoff_ms),
    }
}

impl Builder<'_> {
    /// The tools one entry of an agent's `tools:` offers (an MCP server offers several),
    /// stubbed where the build says so.
    pub(super) fn tools(&mut self, spec: &ToolSpec) -> Result<Vec<Arc<dyn Tool>>, BuildError> {
        let mcp_key = match spec {
            ToolSpec::Mcp { key, .. } => Some(key.as_str()),
            ToolSpec::Defined(name) if self.workflow.mcp_servers.contains_key(name) => {
                Some(name.as_str())
            }
            _ => None,
        };
        let tools = match mcp_key {
            Some(key) => self.parts.mcp_tools.get(key).cloned().ok_or_else(|| {
                BuildError::McpNotConnected {
                    server: key.to_owned(),
                }
            })?,
            None => self.real_tool(spec)?.into_iter().collect(),
        };
        self.offered
            .extend(tools.iter().map(|t| t.name().to_owned()));
        Ok(tools
            .into_iter()
            .map(|t| match self.tool_stubs.get(t.name()) {
                Some(stub) => Arc::new(StubTool::new(t, stub.clone())) as Arc<dyn Tool>,
                None => t,
            })
            .collect())
    }

    fn real_tool(&mut self, spec: &ToolSpec) -> Result<Option<Arc<dyn Tool>>, BuildError> {
        Ok(match spec {
            ToolSpec::Builtin(n) if n == EXIT_LOOP => Some(Arc::new(ExitLoop)),
            ToolSpec::Builtin(n) if n == TASK_COMPLETED => Some(Arc::new(TaskCompleted)),
            ToolSpec::Builtin(n) if n == crate::config::graph::SET_ROUTE_TOOL => {
                Some(Arc::new(crate::tool::builtin::SetRoute))
            }
            ToolSpec::Builtin(n) if n == crate::names::TRANSFER_TO_AGENT => {
                Some(Arc::new(crate::tool::transfer::TransferToAgent {
                    targets: Vec::new(),
                }))
            }
            ToolSpec::Builtin(n) if n == LOAD_MEMORY => Some(Arc::new(LoadMemory)),
            ToolSpec::Builtin(n) if n == PRELOAD_MEMORY => Some(Arc::new(PreloadMemory)),
            ToolSpec::Builtin(n) if n == LOAD_ARTIFACTS => Some(Arc::new(LoadArtifacts)),
            ToolSpec::Builtin(n) if n == GET_USER_CHOICE => Some(Arc::new(GetUserChoice)),
            ToolSpec::Builtin(n) if GeminiTool::named(n).is_some() => {
                GeminiTool::named(n).map(|t| Arc::new(t) as Arc<dyn Tool>)
            }
            ToolSpec::Builtin(_) => None,
            ToolSpec::Defined(name) => Some(self.defined_tool(name)?),
            ToolSpec::Agent(a) => Some(self.agent_tool(&a.agent.name, a)?),
            // Served from the connected servers by `tools`.
            ToolSpec::Mcp { .. } => None,
        })
    }

    /// ADK's AgentTool: the agent, a tree of its own, offered as a tool named `name`.
    fn agent_tool(
        &mut self,
        name: &str,
        spec: &AgentToolSpec,
    ) -> Result<Arc<dyn Tool>, BuildError> {
        let tree = Arc::new(self.tree(&spec.agent)?);
        Ok(Arc::new(AgentTool::new(
            name,
            tree,
            Arc::new(IsolatedRunner),
            spec.skip_summarization,
        )))
    }

    fn defined_tool(&mut self, name: &str) -> Result<Arc<dyn Tool>, BuildError> {
        if let Some(t) = self.defined.get(name) {
            return Ok(Arc::clone(t));
        }
        let Some(d) = self.workflow.tools.get(name) else {
            return Err(BuildError::UndeclaredTool {
                tool: name.to_owned(),
            });
        };
        let tool = self.make_tool(name, d)?;
        self.defined.insert(name.to_owned(), Arc::clone(&tool));
        Ok(tool)
    }

    fn make_tool(&mut self, name: &str, d: &DefinedTool) -> Result<Arc<dyn Tool>, BuildError> {
        let def: &ToolDef = &d.def;
        let not_loaded = || BuildError::NotLoaded {
            tool: name.to_owned(),
            kind: def.kind.key(),
        };
        let behavior = match &def.kind {
            ToolKind::Lookup(l) => Behavior::Lookup {
                key: l.key.clone(),
                table: d.table.clone().unwrap_or_default(),
            },
            ToolKind::SetState(pairs) => {
                Behavior::SetState(pairs.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            }
            ToolKind::GetState(keys) => Behavior::GetState(keys.clone()),
            ToolKind::Client(_) => Behavior::Client,
            ToolKind::SaveArtifact(a) => Behavior::SaveArtifact {
                name: a.name.clone(),
                content: a.content.clone(),
                mime_type: a.mime_type.clone(),
            },
            ToolKind::LoadArtifact(a) => Behavior::LoadArtifact {
                name: a.name.clone(),
                version: a.version.clone(),
            },
            ToolKind::Command(c) => {
                if !self.parts.allow_commands {
                    return Err(BuildError::CommandsNotAllowed {
                        tool: name.to_owned(),
                    });
                }
                Behavior::Command(CommandSpec {
                    program: c.program.clone(),
                    args: c.args.clone(),
                    cwd: d.base_dir.join(c.cwd.as_deref().unwrap_or(".")),
                    env: c.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                    timeout: Duration::from_secs(c.timeout_secs.unwrap_or(30)),
                })
            }
            ToolKind::Http(h) => Behavior::Http(Box::new(self.http_spec(name, h)?)),
            ToolKind::Agent(_) => {
                let agent = d.agent.as_ref().ok_or_else(not_loaded)?;
                return self.agent_tool(name, agent);
            }
            // Its tools come from the connected server (`tools`).
            ToolKind::Mcp(_) => return Err(not_loaded()),
        };
        Ok(Arc::new(DeclaredTool::new(
            name,
            def.description.clone(),
            def.parameters.clone(),
            def.long_running,
            behavior,
        )))
    }

    /// An HTTP tool's request settings, its hosts checked.
    fn http_spec(&self, name: &str, h: &HttpTool) -> Result<HttpSpec, BuildError> {
        let method = reqwest::Method::from_bytes(h.method.to_ascii_uppercase().as_bytes())
            .map_err(|_| BuildError::HttpMethod {
                tool: name.to_owned(),
                method: h.method.clone(),
            })?;
        let bad_entry = |source| BuildError::AllowHosts {
            tool: name.to_owned(),
            source,
        };
        let allow_hosts = match (&h.allow_hosts, literal_host(&h.url)) {
            (Some(hosts), _) => AllowedHosts::parse(hosts).map_err(bad_entry)?,
            (None, Some(host)) => AllowedHosts::parse(&[host]).map_err(bad_entry)?,
            (None, None) => {
                return Err(BuildError::TemplatedHost {
                    tool: name.to_owned(),
                });
            }
        };
        Ok(HttpSpec {
            method,
            url: h.url.clone(),
            headers: h
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            query: h
                .query
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            body: h.body.clone(),
            pick: h.pick.clone(),
            timeout: Duration::from_secs(h.timeout_secs.unwrap_or(30)),
            retry: retry(h.retries.as_ref()),
            max_response_bytes: h.max_response_bytes.unwrap_or(1024 * 1024),
            allow_hosts,
            client: self.parts.http_client(),
        })
    }
}
