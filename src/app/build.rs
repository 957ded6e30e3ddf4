//! Lowering a checked workflow into a runnable [`AgentTree`]: each LLM agent gets its
//! model (its own, else the nearest LLM ancestor's, else [`DEFAULT_MODEL`]), its tools
//! and its callbacks, each built once per build.

use super::callbacks::compile_callback;
use super::models::{ModelSetupError, Models};
use crate::callback::{Callback, Hooks};
use crate::config::{AgentSpec, AgentSpecKind, Workflow};
use crate::model::schema::OutputSchema;
use crate::tool::Tool;
use crate::tree::{AgentId, AgentKind, AgentTree, IncludeContents, LlmAgent};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The model ADK 1.x uses when no agent up the tree names one.
pub const DEFAULT_MODEL: &str = "gemini-2.5-flash";

/// Something in the workflow that cannot be made runnable.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The agent's model cannot be set up.
    #[error("agent `{agent}`")]
    Model {
        /// The agent.
        agent: String,
        /// Why.
        #[source]
        source: ModelSetupError,
    },
    /// An agent lists a callback that `define.callbacks` does not declare.
    #[error("callback `{callback}`: not declared under define.callbacks")]
    UndeclaredCallback {
        /// The callback.
        callback: String,
    },
    /// A callback's redaction pattern is not a regular expression.
    #[error("callback `{callback}`: redact pattern `{pattern}`")]
    RedactPattern {
        /// The callback.
        callback: String,
        /// The pattern.
        pattern: String,
        /// Why it does not compile.
        #[source]
        source: regex::Error,
    },
    /// A Router expression does not compile (the loader checks them, so only a workflow
    /// built without loading has one).
    #[error("router `{router}` of workflow `{workflow}`: `{field}` does not compile")]
    RouterExpression {
        /// The workflow.
        workflow: String,
        /// The router.
        router: String,
        /// `route`, `output` or `state.KEY`.
        field: String,
        /// Why.
        #[source]
        source: crate::template::jinja::RenderError,
    },
    /// An agent lists a tool that `define.tools` does not declare.
    #[error("tool `{tool}`: not declared under define.tools")]
    UndeclaredTool {
        /// The tool.
        tool: String,
    },
    /// A declared tool whose agent or MCP server the workflow did not load (a workflow
    /// that loaded without errors always has them).
    #[error("tool `{tool}`: its `{kind}` was not loaded with the workflow")]
    NotLoaded {
        /// The tool.
        tool: String,
        /// Its kind's key (`agent`, `mcp`).
        kind: &'static str,
    },
    /// A command tool, and command tools are not allowed.
    #[error(
        "tool `{tool}`: runs a program; pass --allow-commands (or set ADK_FLOW_ALLOW_COMMANDS=1) to allow command tools"
    )]
    CommandsNotAllowed {
        /// The tool.
        tool: String,
    },
    /// An HTTP tool's method is not an HTTP method.
    #[error("tool `{tool}`: unknown HTTP method `{method}`")]
    HttpMethod {
        /// The tool.
        tool: String,
        /// The method as written.
        method: String,
    },
    /// An HTTP tool whose host is templated, without `allow_hosts`.
    #[error(
        "tool `{tool}`: the URL's host is templated; list the hosts it may take in `allow_hosts`"
    )]
    TemplatedHost {
        /// The tool.
        tool: String,
    },
    /// An HTTP tool's `allow_hosts` has an entry that is not a host.
    #[error("tool `{tool}`")]
    AllowHosts {
        /// The tool.
        tool: String,
        /// The entry and why.
        #[source]
        source: crate::hosts::BadHostEntry,
    },
    /// Stubs name tools that no agent of the workflow is offered.
    #[error(
        "stubbed tool{} {} not offered to any agent of the workflow (its tools: {})",
        if .stubs.len() == 1 { "" } else { "s" },
        .stubs.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "),
        if .offered.is_empty() { "none".to_owned() } else { .offered.join(", ") }
    )]
    UnknownStubs {
        /// The stubs that replace nothing.
        stubs: Vec<String>,
        /// The tools the agents are offered.
        offered: Vec<String>,
    },
    /// An agent lists an MCP server that was not started.
    #[error("MCP server `{server}` is not connected")]
    McpNotConnected {
        /// The server's key.
        server: String,
    },
}

/// What every build of one app shares.
pub(super) struct Shared {
    /// Command tools may run.
    pub(super) allow_commands: bool,
    /// The tools of the started MCP servers, by server key.
    pub(super) mcp_tools: HashMap<String, Vec<Arc<dyn Tool>>>,
    /// The client of the HTTP tools, made when the first one calls.
    http: crate::tool::http::SharedClient,
}

impl Shared {
    pub(super) fn new(
        allow_commands: bool,
        mcp_tools: HashMap<String, Vec<Arc<dyn Tool>>>,
    ) -> Self {
        Shared {
            allow_commands,
            mcp_tools,
            http: crate::tool::http::SharedClient::new(),
        }
    }

    pub(super) fn http_client(&self) -> crate::tool::http::SharedClient {
        self.http.clone()
    }
}

/// One build of the agent tree.
pub(super) struct Builder<'a> {
    pub(super) workflow: &'a Workflow,
    pub(super) parts: &'a Shared,
    pub(super) tool_stubs: &'a HashMap<String, Value>,
    models: Models<'a>,
    /// Declared tools built so far, by name.
    pub(super) defined: HashMap<String, Arc<dyn Tool>>,
    /// Callbacks compiled so far, by name.
    callbacks: HashMap<String, Arc<Callback>>,
    /// Names of the tools offered to some agent so far (what a stub may replace).
    pub(super) offered: std::collections::BTreeSet<String>,
}

/// A declared model's generation defaults, overridden key by key by the agent's own.
fn merged_generation(model: Option<Value>, agent: Option<Value>) -> Option<Value> {
    match (model, agent) {
        (Some(Value::Object(mut base)), Some(Value::Object(own))) => {
            base.extend(own);
            Some(Value::Object(base))
        }
        (base, None) => base,
        (_, own) => own,
    }
}

impl<'a> Builder<'a> {
    pub(super) fn new(
        workflow: &'a Workflow,
        parts: &'a Shared,
        models: Models<'a>,
        tool_stubs: &'a HashMap<String, Value>,
    ) -> Self {
        Builder {
            workflow,
            parts,
            tool_stubs,
            models,
            defined: HashMap::new(),
            callbacks: HashMap::new(),
            offered: std::collections::BTreeSet::new(),
        }
    }

    /// Refuses stubs for tools no agent was offered: a misspelt or stale stub would
    /// otherwise be ignored and the real tool called.
    pub(super) fn check_stubs(&self) -> Result<(), BuildError> {
        let mut unknown: Vec<String> = self
            .tool_stubs
            .keys()
            .filter(|name| !self.offered.contains(*name))
            .cloned()
            .collect();
        if unknown.is_empty() {
            return Ok(());
        }
        unknown.sort();
        Err(BuildError::UnknownStubs {
            stubs: unknown,
            offered: self.offered.iter().cloned().collect(),
        })
    }

    /// The tree rooted at `root`.
    pub(super) fn tree(&mut self, root: &AgentSpec) -> Result<AgentTree, BuildError> {
        let mut tree = AgentTree::new();
        self.add(&mut tree, None, root, None)?;
        Ok(tree)
    }

    fn callback_list(&mut self, names: &[String]) -> Result<Vec<Arc<Callback>>, BuildError> {
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            if let Some(cb) = self.callbacks.get(name) {
                out.push(Arc::clone(cb));
                continue;
            }
            let def = self.workflow.callbacks.get(name).ok_or_else(|| {
                BuildError::UndeclaredCallback {
                    callback: name.clone(),
                }
            })?;
            let cb = Arc::new(compile_callback(name, def)?);
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
                let model =
                    self.models
                        .resolve(&model_name)
                        .map_err(|source| BuildError::Model {
                            agent: spec.name.clone(),
                            source,
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
                    static_instruction: llm.static_instruction.clone(),
                    tools,
                    output_key: llm.output_key.clone(),
                    output_schema: llm
                        .output_schema
                        .clone()
                        .map(|s| Arc::new(OutputSchema::new(s))),
                    input_schema: llm
                        .input_schema
                        .clone()
                        .map(|s| Arc::new(OutputSchema::new(s))),
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
            // Lowered below, once its nodes have ids.
            AgentSpecKind::Graph(_) => AgentKind::Parallel,
        };
        let id = tree.add(parent, &spec.name, &spec.description, kind);
        let hooks = self.hooks(spec)?;
        tree.set_hooks(id, hooks);
        for sub in &spec.sub_agents {
            self.add(tree, Some(id), sub, model_for_children.as_deref())?;
        }
        if let AgentSpecKind::Graph(graph) = &spec.kind {
            let nodes = tree.get(id).sub_agents.clone();
            let lowered = super::graph::lower(&spec.name, graph, &nodes)?;
            tree.set_kind(id, AgentKind::Graph(Box::new(lowered)));
        }
        Ok(())
    }
}
