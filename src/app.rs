//! Lowers a checked workflow into a runnable agent tree: models resolved, tools built once.

use crate::agent::agent_tool::AgentTool;
use crate::agent::{AgentId, AgentKind, AgentTree, IncludeContents, LlmAgent};
use crate::callback::{Callback, Hooks};
use crate::config::agent_config::{CallbackDef, ToolDef};
use crate::config::{AgentSpec, AgentSpecKind, DefinedTool, ToolSpec, Workflow};
use crate::model::Model;
use crate::tool::Tool;
use crate::tool::builtin::{EXIT_LOOP, ExitLoop, GeminiTool, TASK_COMPLETED, TaskCompleted};
use crate::tool::command::CommandSpec;
use crate::tool::declared::{Behavior, DeclaredTool, StubTool};
use crate::tool::http::{HttpSpec, Retry, literal_host};
use crate::tool::mcp::{McpConfig, McpToolset, McpTransport};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The model ADK 1.x uses when no agent up the tree names one.
pub const DEFAULT_MODEL: &str = "gemini-2.5-flash";

/// Something in the workflow that cannot be made runnable.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {message}")]
pub struct BuildError {
    /// The agent or tool concerned (`agent `x``, `tool `y``).
    pub what: String,
    /// Why.
    pub message: String,
}

/// Makes the model object for a model name.
pub type ModelFactory<'a> = dyn Fn(&str) -> Result<Arc<dyn Model>, String> + 'a;

/// What building needs besides the workflow.
pub struct BuildOptions<'a> {
    /// Resolves model names.
    pub models: &'a ModelFactory<'a>,
    /// Command tools may run (`--allow-commands`).
    pub allow_commands: bool,
    /// Tools replaced by canned results (workflow tests): name → result, or
    /// `{results: [..]}` served in order.
    pub tool_stubs: HashMap<String, serde_json::Value>,
    /// The tools of the workflow's MCP servers, by server key ([`connect_mcp`]).
    pub mcp_tools: HashMap<String, Vec<Arc<dyn Tool>>>,
}

/// The MCP servers of a run, connected; shut them down when the run ends.
#[derive(Default)]
pub struct McpServers {
    /// The live toolsets.
    pub toolsets: Vec<McpToolset>,
    /// Their tools, by server key (see [`Workflow::mcp_servers`]).
    pub tools: HashMap<String, Vec<Arc<dyn Tool>>>,
}

impl McpServers {
    /// Closes every server (and ends their processes).
    pub async fn shutdown(self) {
        for t in self.toolsets {
            t.shutdown().await;
        }
    }
}

/// Starts (or connects to) every MCP server the workflow uses.
///
/// # Errors
/// A server that cannot be started or does not offer the filtered tools; the servers
/// already started are shut down.
pub async fn connect_mcp(workflow: &Workflow) -> Result<McpServers, BuildError> {
    let mut servers = McpServers::default();
    for (key, (cfg, base_dir)) in &workflow.mcp_servers {
        let configured = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
        if cfg.optional && !configured(&cfg.command) && !configured(&cfg.url) {
            tracing::warn!("MCP server `{key}` is not configured; its tools are left out");
            servers.tools.insert(key.clone(), Vec::new());
            continue;
        }
        let transport = match (&cfg.command, &cfg.url) {
            (Some(command), _) => McpTransport::Stdio {
                command: command.clone(),
                args: cfg.args.clone(),
                env: cfg
                    .env
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                cwd: Some(base_dir.join(cfg.cwd.as_deref().unwrap_or("."))),
            },
            (None, Some(url)) => McpTransport::Http {
                url: url.clone(),
                headers: cfg
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            },
            (None, None) => {
                servers.shutdown().await;
                return Err(BuildError {
                    what: format!("MCP server `{key}`"),
                    message: "needs `command` or `url`".into(),
                });
            }
        };
        let config = McpConfig {
            transport,
            tool_filter: cfg.tool_filter.clone(),
            timeout: Duration::from_secs(cfg.timeout_secs.unwrap_or(30)),
        };
        match McpToolset::connect(key, config).await {
            Ok(set) => {
                servers.tools.insert(key.clone(), set.tools());
                servers.toolsets.push(set);
            }
            Err(e) if cfg.optional => {
                tracing::warn!("MCP server `{key}` is unavailable, its tools are left out: {e}");
                servers.tools.insert(key.clone(), Vec::new());
            }
            Err(e) => {
                servers.shutdown().await;
                return Err(BuildError {
                    what: format!("MCP server `{key}`"),
                    message: e.to_string(),
                });
            }
        }
    }
    Ok(servers)
}

struct Builder<'a> {
    workflow: &'a Workflow,
    options: &'a BuildOptions<'a>,
    defined: HashMap<String, Arc<dyn Tool>>,
    callbacks: HashMap<String, Arc<Callback>>,
    http: Option<reqwest::Client>,
}

/// Compiles a declared callback.
///
/// # Errors
/// A redaction pattern that is not a valid regular expression.
pub fn compile_callback(name: &str, def: &CallbackDef) -> Result<Callback, String> {
    let redact = def
        .redact
        .iter()
        .flatten()
        .map(|r| {
            regex::Regex::new(&r.pattern)
                .map(|re| (re, r.replacement.clone()))
                .map_err(|e| format!("redact pattern `{}`: {e}", r.pattern))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Callback {
        name: name.to_owned(),
        when: def.when.clone(),
        set_state: def
            .set_state
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        reply: def.reply.clone(),
        block: def.block.clone(),
        result: def.result.clone(),
        rewrite_args: def.rewrite_args.clone(),
        redact,
    })
}

/// Builds the agent tree of a workflow, resolving each LLM agent's model (its own, else
/// the nearest LLM ancestor's, else [`DEFAULT_MODEL`]).
///
/// # Errors
/// A model the factory refuses, a command tool without permission, a tool that cannot be
/// set up.
pub fn build_tree(
    workflow: &Workflow,
    options: &BuildOptions<'_>,
) -> Result<AgentTree, BuildError> {
    let mut b = Builder {
        workflow,
        options,
        defined: HashMap::new(),
        callbacks: HashMap::new(),
        http: None,
    };
    b.tree(&workflow.root)
}

/// A declared model's generation defaults, overridden key by key by the agent's own.
fn merged_generation(
    model: Option<serde_json::Value>,
    agent: Option<serde_json::Value>,
) -> Option<serde_json::Value> {
    match (model, agent) {
        (Some(serde_json::Value::Object(mut base)), Some(serde_json::Value::Object(own))) => {
            base.extend(own);
            Some(serde_json::Value::Object(base))
        }
        (base, None) => base,
        (_, own) => own,
    }
}

fn retry(r: Option<&crate::config::agent_config::RetryConfig>) -> Retry {
    Retry {
        max_attempts: r.map_or(3, |r| r.max_attempts),
        initial_backoff: Duration::from_millis(r.map_or(500, |r| r.initial_backoff_ms)),
        max_backoff: Duration::from_millis(r.map_or(10_000, |r| r.max_backoff_ms)),
    }
}

impl Builder<'_> {
    fn callback_list(&mut self, names: &[String]) -> Result<Vec<Arc<Callback>>, BuildError> {
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            if let Some(cb) = self.callbacks.get(name) {
                out.push(Arc::clone(cb));
                continue;
            }
            let def = self
                .workflow
                .callbacks
                .get(name)
                .ok_or_else(|| BuildError {
                    what: format!("callback `{name}`"),
                    message: "not declared under define.callbacks".into(),
                })?;
            let cb = Arc::new(compile_callback(name, def).map_err(|message| BuildError {
                what: format!("callback `{name}`"),
                message,
            })?);
            self.callbacks.insert(name.clone(), Arc::clone(&cb));
            out.push(cb);
        }
        Ok(out)
    }

    fn hooks(&mut self, spec: &AgentSpec) -> Result<Hooks, BuildError> {
        let c = &spec.callbacks;
        Ok(Hooks {
            before_agent: self.callback_list(&c.before_agent)?,
            after_agent: self.callback_list(&c.after_agent)?,
            before_model: self.callback_list(&c.before_model)?,
            after_model: self.callback_list(&c.after_model)?,
            before_tool: self.callback_list(&c.before_tool)?,
            after_tool: self.callback_list(&c.after_tool)?,
        })
    }

    fn tree(&mut self, root: &AgentSpec) -> Result<AgentTree, BuildError> {
        let mut tree = AgentTree::new();
        self.add(&mut tree, None, root, None)?;
        Ok(tree)
    }

    fn http_client(&mut self) -> Result<reqwest::Client, BuildError> {
        if let Some(c) = &self.http {
            return Ok(c.clone());
        }
        let client = reqwest::Client::builder().build().map_err(|e| BuildError {
            what: "http tools".into(),
            message: format!("cannot create an HTTP client: {e}"),
        })?;
        self.http = Some(client.clone());
        Ok(client)
    }

    fn defined_tool(&mut self, name: &str) -> Result<Arc<dyn Tool>, BuildError> {
        if let Some(t) = self.defined.get(name) {
            return Ok(Arc::clone(t));
        }
        let Some(d) = self.workflow.tools.get(name) else {
            return Err(BuildError {
                what: format!("tool `{name}`"),
                message: "not declared under define.tools".into(),
            });
        };
        let tool = self.make_tool(name, d)?;
        self.defined.insert(name.to_owned(), Arc::clone(&tool));
        Ok(tool)
    }

    fn make_tool(&mut self, name: &str, d: &DefinedTool) -> Result<Arc<dyn Tool>, BuildError> {
        let err = |message: String| BuildError {
            what: format!("tool `{name}`"),
            message,
        };
        let def: &ToolDef = &d.def;
        if let Some(agent) = &d.agent {
            let tree = Arc::new(self.tree(&agent.agent)?);
            return Ok(Arc::new(AgentTool::new(
                name,
                tree,
                agent.skip_summarization,
            )));
        }
        let behavior = if def.lookup.is_some() {
            Behavior::Lookup {
                key: def
                    .lookup
                    .as_ref()
                    .map(|l| l.key.clone())
                    .unwrap_or_default(),
                table: d.table.clone().unwrap_or_default(),
            }
        } else if let Some(pairs) = &def.set_state {
            Behavior::SetState(pairs.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        } else if let Some(keys) = &def.get_state {
            Behavior::GetState(keys.clone())
        } else if def.client.is_some() {
            Behavior::Client
        } else if let Some(a) = &def.save_artifact {
            Behavior::SaveArtifact {
                name: a.name.clone(),
                content: a.content.clone(),
                mime_type: a.mime_type.clone(),
            }
        } else if let Some(a) = &def.load_artifact {
            Behavior::LoadArtifact {
                name: a.name.clone(),
                version: a.version.clone(),
            }
        } else if let Some(c) = &def.command {
            if !self.options.allow_commands {
                return Err(err(
                    "runs a program; pass --allow-commands (or set ADK_FLOW_ALLOW_COMMANDS=1) to allow command tools".into(),
                ));
            }
            Behavior::Command(CommandSpec {
                program: c.program.clone(),
                args: c.args.clone(),
                cwd: d.base_dir.join(c.cwd.as_deref().unwrap_or(".")),
                env: c.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                timeout: Duration::from_secs(c.timeout_secs.unwrap_or(30)),
            })
        } else if let Some(h) = &def.http {
            let method = reqwest::Method::from_bytes(h.method.to_ascii_uppercase().as_bytes())
                .map_err(|_| err(format!("unknown HTTP method `{}`", h.method)))?;
            let allow_hosts = match (&h.allow_hosts, literal_host(&h.url)) {
                (Some(hosts), _) => hosts.clone(),
                (None, Some(host)) => vec![host],
                (None, None) => {
                    return Err(err(
                        "the URL's host is templated; list the hosts it may take in `allow_hosts`"
                            .into(),
                    ));
                }
            };
            Behavior::Http(Box::new(HttpSpec {
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
                client: self.http_client()?,
            }))
        } else {
            return Err(err("declares no behaviour".into()));
        };
        Ok(Arc::new(DeclaredTool::new(
            name,
            def.description.clone(),
            def.parameters.clone(),
            def.long_running,
            behavior,
        )))
    }

    fn tools(&mut self, spec: &ToolSpec) -> Result<Vec<Arc<dyn Tool>>, BuildError> {
        let mcp_key = match spec {
            ToolSpec::Mcp { key, .. } => Some(key.as_str()),
            ToolSpec::Defined(name) if self.workflow.mcp_servers.contains_key(name) => {
                Some(name.as_str())
            }
            _ => None,
        };
        let tools = match mcp_key {
            Some(key) => self
                .options
                .mcp_tools
                .get(key)
                .cloned()
                .ok_or_else(|| BuildError {
                    what: format!("MCP server `{key}`"),
                    message: "is not connected".into(),
                })?,
            None => self.real_tool(spec)?.into_iter().collect(),
        };
        Ok(tools
            .into_iter()
            .map(|t| match self.options.tool_stubs.get(t.name()) {
                Some(stub) => Arc::new(StubTool::new(t, stub.clone())) as Arc<dyn Tool>,
                None => t,
            })
            .collect())
    }

    fn real_tool(&mut self, spec: &ToolSpec) -> Result<Option<Arc<dyn Tool>>, BuildError> {
        Ok(match spec {
            ToolSpec::Builtin(n) if n == EXIT_LOOP => Some(Arc::new(ExitLoop)),
            ToolSpec::Builtin(n) if n == TASK_COMPLETED => Some(Arc::new(TaskCompleted)),
            ToolSpec::Builtin(n) if GeminiTool::named(n).is_some() => {
                GeminiTool::named(n).map(|t| Arc::new(t) as Arc<dyn Tool>)
            }
            ToolSpec::Builtin(_) => None,
            ToolSpec::Defined(name) => Some(self.defined_tool(name)?),
            ToolSpec::Agent(a) => {
                let tree = Arc::new(self.tree(&a.agent)?);
                Some(Arc::new(AgentTool::new(
                    a.agent.name.clone(),
                    tree,
                    a.skip_summarization,
                )))
            }
            // Served from the connected servers by `tools`.
            ToolSpec::Mcp { .. } => None,
        })
    }

    fn add(
        &mut self,
        tree: &mut AgentTree,
        parent: Option<AgentId>,
        spec: &AgentSpec,
        inherited_model: Option<&str>,
    ) -> Result<(), BuildError> {
        let mut model_for_children = inherited_model.map(str::to_owned);
        let kind = match &spec.kind {
            AgentSpecKind::Llm(llm) => {
                let model_name = llm
                    .model
                    .as_deref()
                    .or(inherited_model)
                    .unwrap_or(DEFAULT_MODEL)
                    .to_owned();
                let model = (self.options.models)(&model_name).map_err(|message| BuildError {
                    what: format!("agent `{}`", spec.name),
                    message,
                })?;
                let model_defaults = self.workflow.models.get(&model_name).and_then(|m| {
                    m.generate_content_config
                        .as_ref()
                        .and_then(|g| serde_json::to_value(g).ok())
                });
                model_for_children = Some(model_name.clone());
                let mut tools = Vec::with_capacity(llm.tools.len());
                for t in &llm.tools {
                    tools.extend(self.tools(t)?);
                }
                AgentKind::Llm(Box::new(LlmAgent {
                    model,
                    model_name,
                    instruction: llm.instruction.clone(),
                    tools,
                    output_key: llm.output_key.clone(),
                    include_contents: if llm.current_turn_only {
                        IncludeContents::None
                    } else {
                        IncludeContents::Default
                    },
                    disallow_transfer_to_parent: llm.disallow_transfer_to_parent,
                    disallow_transfer_to_peers: llm.disallow_transfer_to_peers,
                    generate_content_config: merged_generation(
                        model_defaults,
                        llm.generate_content_config.clone(),
                    ),
                }))
            }
            AgentSpecKind::Sequential { task_completed } => AgentKind::Sequential {
                task_completed: *task_completed,
            },
            AgentSpecKind::Parallel => AgentKind::Parallel,
            AgentSpecKind::Loop { max_iterations } => AgentKind::Loop {
                max_iterations: *max_iterations,
            },
        };
        let id = tree.add(parent, &spec.name, &spec.description, kind);
        let hooks = self.hooks(spec)?;
        tree.set_hooks(id, hooks);
        for sub in &spec.sub_agents {
            self.add(tree, Some(id), sub, model_for_children.as_deref())?;
        }
        Ok(())
    }
}
