//! Tools: what an LLM agent can call, and the context a call runs in.
//!
//! A tool declares itself to the model ([`FunctionDeclaration`]) and runs with a
//! [`ToolContext`] through which it reads state and records side effects
//! ([`EventActions`]) that are committed with the function-response event.
//! Built-ins: `exit_loop` and `task_completed` (`builtin.rs`), `load_memory` and
//! `preload_memory` (`memory.rs`), `load_artifacts` and `get_user_choice` (`artifacts.rs`), `transfer_to_agent`
//! (`transfer.rs`: it records the target; the flow, which knows the agent tree, offers it
//! with the allowed targets and runs the transfer).
//!
//! A tool may also change the request that offers it before it is sent
//! ([`Tool::process_request`], ADK's `process_llm_request`): `load_memory` tells the model
//! it has memory, `preload_memory` puts matching memories in the system instruction.

pub mod artifacts;
pub mod builtin;
pub mod command;
pub mod declared;
pub mod http;
pub mod mcp;
pub mod memory;
pub mod process;
pub mod transfer;

use crate::artifact::{Artifact, ArtifactKey, ArtifactService};
use crate::event::{Content, EventActions, StateMap};
use crate::memory::{Memory, MemoryEntry};
use crate::model::{FunctionDeclaration, LlmRequest};
use crate::session::SessionHandle;
use crate::telemetry::TraceParent;
use async_trait::async_trait;
use serde_json::Value;
use std::sync::Arc;

/// A tool call that failed; the model receives the message as `{"error": ...}`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// What went wrong, worded for the model.
    pub message: String,
}

impl ToolError {
    /// An error with a message for the model.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }
}

/// What one tool call can see and change.
pub struct ToolContext {
    /// Side effects of this call, committed with the function-response event.
    pub actions: EventActions,
    /// ADK's `end_invocation` as a tool sees it: the calling agent makes no further model
    /// call after this step; its parent workflow goes on (task_completed sets it).
    pub end_invocation: bool,
    session: SessionHandle,
    agent_name: String,
    function_call_id: String,
    artifacts: Option<Arc<dyn ArtifactService>>,
    memory: Option<Memory>,
    user_content: Option<Arc<Content>>,
    trace: Option<TraceParent>,
    adk2: bool,
    queue_entries: Option<Arc<std::sync::atomic::AtomicU32>>,
    caller_state: Option<StateMap>,
}

impl ToolContext {
    /// A context for one call.
    pub fn new(session: SessionHandle, agent_name: &str, function_call_id: &str) -> Self {
        ToolContext {
            actions: EventActions::default(),
            end_invocation: false,
            session,
            agent_name: agent_name.to_owned(),
            function_call_id: function_call_id.to_owned(),
            artifacts: None,
            memory: None,
            user_content: None,
            trace: None,
            adk2: false,
            queue_entries: None,
            caller_state: None,
        }
    }

    /// The same context, with the invocation's count of ready-queue entries that tools
    /// add to their responses (see [`ToolContext::add_queue_entries`]).
    pub fn with_queue_entries(mut self, cell: Option<Arc<std::sync::atomic::AtomicU32>>) -> Self {
        self.queue_entries = cell;
        self
    }

    /// The same context, with the session state as the graph runtime took it when the
    /// call started (ADK 2.13's entry for an AgentTool's seed); `None`: the live state.
    pub fn with_caller_state(mut self, state: Option<StateMap>) -> Self {
        self.caller_state = state;
        self
    }

    /// The state an AgentTool seeds its agent's session with: the session's state as it
    /// was when the call started in ADK's order (the live state when not taken then),
    /// with this call's pending delta.
    pub fn caller_state(&self) -> StateMap {
        match &self.caller_state {
            Some(taken) => self.with_pending(taken.clone()),
            None => self.visible_state(),
        }
    }

    /// In a workflow graph: this call's response comes `n` ready-queue entries later
    /// than one reply of an AgentTool's agent would make it (its agent made more events,
    /// each going through ADK 2.13's asyncio tasks); the lane running the node holds the
    /// response for them. Nothing outside a Workflow app.
    pub fn add_queue_entries(&self, n: u32) {
        if let Some(cell) = &self.queue_entries {
            cell.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The same context, called from a workflow graph (or from a run an AgentTool
    /// started there): an AgentTool runs its agent as ADK 2.13 does
    /// ([`crate::invocation::RunConfig::adk2`]).
    pub fn with_adk2(mut self, adk2: bool) -> Self {
        self.adk2 = adk2;
        self
    }

    /// Whether the call comes from a workflow graph (see [`ToolContext::with_adk2`]).
    pub fn adk2(&self) -> bool {
        self.adk2
    }

    /// The same context inside the call's `execute_tool` span (an AgentTool's run hangs
    /// under it).
    pub fn with_trace(mut self, parent: Option<TraceParent>) -> Self {
        self.trace = parent;
        self
    }

    /// The call's span, when the run is traced.
    pub fn trace_parent(&self) -> Option<&TraceParent> {
        self.trace.as_ref()
    }

    /// The same context with the run's memory and the message that started the
    /// invocation.
    pub fn with_invocation(
        mut self,
        memory: Option<Memory>,
        user_content: Option<Arc<Content>>,
    ) -> Self {
        self.memory = memory;
        self.user_content = user_content;
        self
    }

    /// The message that started this invocation (ADK's `user_content`).
    pub fn user_content(&self) -> Option<&Content> {
        self.user_content.as_deref()
    }

    /// Searches the current user's memories of this app (ADK's `search_memory`).
    ///
    /// # Errors
    /// The run has no memory, or the store fails.
    pub async fn search_memory(&self, query: &str) -> Result<Vec<MemoryEntry>, ToolError> {
        let memory = self
            .memory
            .as_ref()
            .ok_or_else(|| ToolError::new("memory service is not available"))?;
        let (app, user) = {
            let s = self.session.lock();
            (s.app_name.clone(), s.user_id.clone())
        };
        memory
            .search(&app, &user, query)
            .await
            .map_err(|e| ToolError::new(crate::errors::chain(&e)))
    }

    /// The same context with the run's artifact store.
    pub fn with_artifacts(mut self, artifacts: Option<Arc<dyn ArtifactService>>) -> Self {
        self.artifacts = artifacts;
        self
    }

    fn artifact_key(&self, name: &str) -> ArtifactKey {
        let session = self.session.lock();
        ArtifactKey {
            app: session.app_name.clone(),
            user: session.user_id.clone(),
            session: session.id.clone(),
            name: name.to_owned(),
        }
    }

    fn store(&self) -> Result<&Arc<dyn ArtifactService>, ToolError> {
        self.artifacts
            .as_ref()
            .ok_or_else(|| ToolError::new("this run has no artifact store"))
    }

    /// Saves a new version of an artifact; the version is committed with the
    /// function-response event (`artifactDelta`).
    ///
    /// # Errors
    /// No artifact store, an invalid name, or a failing store.
    pub async fn save_artifact(
        &mut self,
        name: &str,
        artifact: Artifact,
    ) -> Result<u64, ToolError> {
        let key = self.artifact_key(name);
        let version = self
            .store()?
            .save(&key, artifact)
            .await
            .map_err(|e| ToolError::new(crate::errors::chain(&e)))?;
        self.actions.artifact_delta.insert(name.to_owned(), version);
        Ok(version)
    }

    /// Loads a version of an artifact (the latest when `None`).
    ///
    /// # Errors
    /// No artifact store, or a failing store.
    pub async fn load_artifact(
        &self,
        name: &str,
        version: Option<u64>,
    ) -> Result<Option<Artifact>, ToolError> {
        let key = self.artifact_key(name);
        self.store()?
            .load(&key, version)
            .await
            .map_err(|e| ToolError::new(crate::errors::chain(&e)))
    }

    /// The names of the session's artifacts, the user's own (`user:`) included (ADK's
    /// `list_artifacts`).
    ///
    /// # Errors
    /// No artifact store, or a failing store.
    pub async fn list_artifacts(&self) -> Result<Vec<String>, ToolError> {
        let (app, user, session) = {
            let s = self.session.lock();
            (s.app_name.clone(), s.user_id.clone(), s.id.clone())
        };
        self.store()?
            .list(&app, &user, &session)
            .await
            .map_err(|e| ToolError::new(crate::errors::chain(&e)))
    }

    /// A state value, seeing this call's own pending writes first.
    pub fn state(&self, key: &str) -> Option<Value> {
        self.actions
            .state_delta
            .get(key)
            .cloned()
            .or_else(|| self.session.get_state(key))
    }

    /// Writes a state key; it is committed with the function-response event.
    pub fn set_state(&mut self, key: impl Into<String>, value: Value) {
        self.actions.state_delta.insert(key.into(), value);
    }

    /// The state this call sees, as a copy (for templates): the session's, `temp:` keys
    /// included, then this call's own pending writes.
    pub fn visible_state(&self) -> StateMap {
        self.with_pending(self.session.visible_state())
    }

    /// `state` with this call's pending writes over it.
    fn with_pending(&self, mut state: StateMap) -> StateMap {
        state.extend(
            self.actions
                .state_delta
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        state
    }

    /// The pending state delta.
    pub fn state_delta(&self) -> &crate::event::SparseMap {
        &self.actions.state_delta
    }

    /// The agent making the call.
    pub fn agent_name(&self) -> &str {
        &self.agent_name
    }

    /// The id of the function call being answered.
    pub fn function_call_id(&self) -> &str {
        &self.function_call_id
    }
}

/// Whether `tool` is an AgentTool (of any agent): the ADK class it stands for.
pub fn is_agent_tool(tool: &dyn Tool) -> bool {
    tool.trace_type() == "AgentTool"
}

/// Something an agent can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// The declaration sent to the model.
    fn declaration(&self) -> FunctionDeclaration;
    /// Long-running tools end the turn; a later function-response message resumes it.
    fn is_long_running(&self) -> bool {
        false
    }
    /// A tool the model provider runs itself (Gemini's `googleSearch`): sent as that key,
    /// never as a function declaration, never called by the flow.
    fn provider_tool(&self) -> Option<&str> {
        None
    }
    /// Changes the request that offers this tool before it is sent (ADK's
    /// `process_llm_request`); runs on every model call of the agent. Most tools change
    /// nothing.
    ///
    /// # Errors
    /// A failure that ends the invocation.
    async fn process_request(
        &self,
        _ctx: &ToolContext,
        _request: &mut LlmRequest,
    ) -> Result<(), ToolError> {
        Ok(())
    }
    /// Whether the model is offered a declaration of this tool; `false` for tools that
    /// only change requests (`preload_memory`).
    fn offered_to_model(&self) -> bool {
        true
    }
    /// Whether [`Tool::process_request`] does anything, so the flow can skip building a
    /// context for tools that do not.
    fn processes_requests(&self) -> bool {
        false
    }
    /// The ADK class this tool stands for, recorded as `gen_ai.tool.type` on its
    /// `execute_tool` spans.
    fn trace_type(&self) -> &'static str {
        "FunctionTool"
    }
    /// Whether this tool runs an LLM agent with a runner of its own (an AgentTool whose
    /// agent is an LlmAgent, which ADK 2.13's runner drives as a node, through asyncio
    /// tasks of its own; other agents run inline, as a plain function's call does).
    fn runs_llm_agent(&self) -> bool {
        false
    }
    /// Runs the call. A non-object result is wrapped as `{"result": value}`.
    ///
    /// # Errors
    /// A failure the model should read; it becomes `{"error": message}`.
    async fn run(&self, args: Value, ctx: &mut ToolContext) -> Result<Value, ToolError>;
}
