//! The invocation context: what every agent of one invocation shares.

use super::RunError;
use crate::artifact::ArtifactService;
use crate::callback::HookContext;
use crate::event::Content;
use crate::event::StateMap;
use crate::memory::Memory;
use crate::session::SessionHandle;
use crate::telemetry::TraceParent;
use crate::tree::{AgentId, AgentTree};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// Per-run settings.
#[derive(Debug, Clone, Copy)]
pub struct RunConfig {
    /// Stream partial chunks from the models.
    pub stream: bool,
    /// Upper bound on model calls per invocation; 0 means unbounded. ADK's default is 500.
    pub max_llm_calls: u32,
    /// The LLM agents run as ADK 2.13 runs an agent outside a workflow graph: an
    /// `output_key` holds all the agent's text so far, written on every event that
    /// carries text (`LlmAgent._run_async_impl`). Set for the run of an AgentTool's agent
    /// called from a workflow node (ADK 1.39.1 elsewhere: the final reply's text); its
    /// templates follow ADK 2.13 too (see [`InvocationContext::runs_adk2`]).
    pub adk2: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            stream: false,
            max_llm_calls: 500,
            adk2: false,
        }
    }
}

struct Shared {
    invocation_id: Arc<str>,
    /// `APP/USER/SESSION`, computed once (see [`crate::model::CallContext::conversation`]).
    conversation: String,
    artifacts: Option<Arc<dyn ArtifactService>>,
    memory: Option<Memory>,
    user_content: Option<Arc<Content>>,
    session: SessionHandle,
    tree: Arc<AgentTree>,
    config: RunConfig,
    llm_calls: AtomicU32,
    /// In a Workflow app with an AgentTool: the ready-queue entries its agent made a call's
    /// response wait beyond one reply's, left by the tool for the workflow lane that
    /// runs the call (see [`crate::tool::ToolContext::add_queue_entries`]).
    queue_entries: Option<Arc<AtomicU32>>,
}

/// A workflow node's input, as the single-turn LLM node sees it: a user message that is
/// never stored, placed before the events the node makes. Of the events before it, the
/// node sees the user's messages and its own (see [`InvocationContext::node_path`]).
#[derive(Debug, Clone)]
pub struct NodeInput {
    /// The message, shared with the node's requests (as
    /// [`crate::model::RequestContent::Shared`]) rather than copied; the turn's user
    /// message as it was sent is shared with the invocation too.
    pub content: Arc<Content>,
    /// How many session events there were when the node started.
    pub from: usize,
}

/// The session state (`temp:` keys included) an LLM node of a workflow graph templates
/// its next instruction with, taken by the graph runtime when ADK 2.13 renders it: a node
/// with tools renders its instruction, then converts its tools through several entries
/// of asyncio's ready queue before calling its model, and state stored meanwhile is not
/// in the instruction. Empty: the instruction reads the live state.
pub type StateAtStart = Arc<std::sync::Mutex<Option<StateMap>>>;

/// Shared state of one invocation plus the branch of the agent running. Cheap to clone.
#[derive(Clone)]
pub struct InvocationContext {
    shared: Arc<Shared>,
    branch: Option<Arc<str>>,
    /// The input of the workflow node running, if it is an LLM node with one.
    node_input: Option<NodeInput>,
    /// The path of the workflow LLM node running (`WF@1/node@2`), input or none.
    node_path: Option<Arc<str>>,
    /// An LLM node of a workflow graph is running.
    graph_node: bool,
    /// The state its next model call's instruction is templated with, when taken
    /// earlier (see [`StateAtStart`]).
    instruction_state: Option<StateAtStart>,
    /// The caller's state an AgentTool called by the running node seeds its agent's
    /// session with, when the graph runtime took it before the call ran (see
    /// [`InvocationContext::with_tool_state`]).
    tool_state: Option<StateAtStart>,
    /// The span the running agent's spans hang under; `None` when tracing is off.
    trace: Option<TraceParent>,
}

impl InvocationContext {
    /// A context for a new invocation at the root branch.
    pub fn new(
        invocation_id: impl Into<Arc<str>>,
        session: SessionHandle,
        tree: Arc<AgentTree>,
        config: RunConfig,
    ) -> Self {
        // Only an AgentTool reports queue entries, and only a workflow app reads them: the
        // cell is made for a workflow app with one.
        let queue_entries = matches!(tree.get(tree.root()).kind, crate::tree::AgentKind::Graph(_))
            && tree.has_agent_tool();
        let conversation = {
            let s = session.lock();
            let mut c = String::with_capacity(s.app_name.len() + s.user_id.len() + s.id.len() + 2);
            for (i, part) in [&s.app_name, &s.user_id, &s.id].into_iter().enumerate() {
                if i > 0 {
                    c.push('/');
                }
                c.push_str(part);
            }
            c
        };
        InvocationContext {
            shared: Arc::new(Shared {
                invocation_id: invocation_id.into(),
                conversation,
                artifacts: None,
                memory: None,
                user_content: None,
                session,
                tree,
                config,
                llm_calls: AtomicU32::new(0),
                queue_entries: queue_entries.then(|| Arc::new(AtomicU32::new(0))),
            }),
            branch: None,
            node_input: None,
            node_path: None,
            graph_node: false,
            instruction_state: None,
            tool_state: None,
            trace: None,
        }
    }

    /// The same context with an artifact store (only before the invocation starts).
    pub fn with_artifacts(mut self, artifacts: Option<Arc<dyn ArtifactService>>) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.artifacts = artifacts;
        }
        self
    }

    /// The same context with a memory store and the message that started the invocation
    /// (only before the invocation starts).
    pub fn with_memory(
        mut self,
        memory: Option<Memory>,
        user_content: Option<Arc<Content>>,
    ) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.memory = memory;
            shared.user_content = user_content;
        }
        self
    }

    /// The memory store, if the run has one.
    pub fn memory(&self) -> Option<&Memory> {
        self.shared.memory.as_ref()
    }

    /// The message that started the invocation.
    pub fn user_content(&self) -> Option<&Arc<Content>> {
        self.shared.user_content.as_ref()
    }

    /// A tool context for one call (or, with an empty id, for preparing a request), with
    /// the invocation's artifacts and memory.
    pub fn tool_context(&self, agent: &str, function_call_id: &str) -> crate::tool::ToolContext {
        crate::tool::ToolContext::new(self.session().clone(), agent, function_call_id)
            .with_artifacts(self.artifacts().cloned())
            .with_invocation(self.memory().cloned(), self.user_content().cloned())
            .with_adk2(self.runs_adk2())
            .with_queue_entries(self.shared.queue_entries.clone())
            .with_caller_state(
                self.tool_state
                    .as_ref()
                    .and_then(|cell| cell.lock().unwrap_or_else(|e| e.into_inner()).clone()),
            )
    }

    /// The ready-queue entries a tool of the node run just polled left for its
    /// response (see [`crate::tool::ToolContext::add_queue_entries`]), taken: 0 when
    /// none did.
    pub fn take_queue_entries(&self) -> u32 {
        match &self.shared.queue_entries {
            Some(n) if n.load(Ordering::Relaxed) != 0 => n.swap(0, Ordering::Relaxed),
            _ => 0,
        }
    }

    /// The artifact store, if the run has one.
    pub fn artifacts(&self) -> Option<&Arc<dyn ArtifactService>> {
        self.shared.artifacts.as_ref()
    }

    /// The invocation id.
    pub fn invocation_id(&self) -> &str {
        &self.shared.invocation_id
    }

    /// A new event of this invocation by `author`, on this context's branch; it shares
    /// the invocation id with the invocation's other events.
    pub fn new_event(&self, author: impl Into<Arc<str>>) -> crate::event::Event {
        let mut event = crate::event::Event::new(Arc::clone(&self.shared.invocation_id), author);
        event.branch = self.branch().map(Box::from);
        event
    }

    /// The conversation this invocation belongs to: `APP/USER/SESSION`.
    pub fn conversation(&self) -> &str {
        &self.shared.conversation
    }

    /// The live session.
    pub fn session(&self) -> &SessionHandle {
        &self.shared.session
    }

    /// The agent tree.
    pub fn tree(&self) -> &AgentTree {
        &self.shared.tree
    }

    /// The run settings.
    pub fn config(&self) -> RunConfig {
        self.shared.config
    }

    /// The context of a hook of `agent`: the agent's name and the state the invocation
    /// sees (`temp:` keys included).
    pub fn hook_context(&self, agent: &str) -> HookContext {
        let message = self.user_content().and_then(|c| {
            let texts: Vec<&str> = c
                .parts
                .iter()
                .filter(|p| p.thought != Some(true))
                .filter_map(|p| p.text.as_deref())
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        });
        HookContext::new(agent, self.shared.session.visible_state()).with_message(message)
    }

    /// The ParallelAgent branch this context runs on.
    pub fn branch(&self) -> Option<&str> {
        self.branch.as_deref()
    }

    /// The same invocation on a child branch.
    pub fn with_branch(&self, branch: String) -> Self {
        InvocationContext {
            shared: Arc::clone(&self.shared),
            branch: Some(branch.into()),
            node_input: self.node_input.clone(),
            node_path: self.node_path.clone(),
            graph_node: self.graph_node,
            instruction_state: self.instruction_state.clone(),
            tool_state: self.tool_state.clone(),
            trace: self.trace.clone(),
        }
    }

    /// The same invocation on `branch` (`None`: the trunk), running the workflow node at
    /// `path` with `input` (or none); `instruction_state`: where the node's state for its
    /// next instruction is put when taken before its model call (see [`StateAtStart`]).
    pub fn for_node(
        &self,
        branch: Option<String>,
        path: Arc<str>,
        input: Option<NodeInput>,
        instruction_state: Option<StateAtStart>,
    ) -> Self {
        InvocationContext {
            shared: Arc::clone(&self.shared),
            branch: branch.map(Into::into),
            node_input: input,
            node_path: Some(path),
            graph_node: true,
            instruction_state,
            tool_state: None,
            trace: self.trace.clone(),
        }
    }

    /// The same context, where the graph runtime puts the caller's state for the
    /// AgentTools the node calls: ADK 2.13 seeds an AgentTool's session as the tool
    /// starts, some ready-queue entries before its response, and state stored between
    /// the two is not in it. Empty (or `None`): the tool reads the live state.
    pub fn with_tool_state(mut self, cell: Option<StateAtStart>) -> Self {
        self.tool_state = cell;
        self
    }

    /// The state taken for the running node's next instruction, if it was taken (once:
    /// the call after it reads the live state again unless more was taken).
    pub fn take_instruction_state(&self) -> Option<StateMap> {
        self.instruction_state
            .as_ref()
            .and_then(|cell| cell.lock().unwrap_or_else(|e| e.into_inner()).take())
    }

    /// Whether an LLM node of a workflow graph is running.
    pub fn in_graph_node(&self) -> bool {
        self.graph_node
    }

    /// Whether this run follows ADK 2.13 rather than ADK 1.39.1: an LLM node of a
    /// workflow graph runs, or an agent that an AgentTool runs for one
    /// ([`RunConfig::adk2`]). The one answer to "is this an ADK 2.13 run": it decides the
    /// templates' dialect, how an `output_key` adds up the agent's text, and how an
    /// AgentTool runs its agent.
    pub fn runs_adk2(&self) -> bool {
        self.graph_node || self.shared.config.adk2
    }

    /// The dialect of instruction templates in this run (see [`Self::runs_adk2`]).
    pub fn template_dialect(&self) -> crate::template::Dialect {
        if self.runs_adk2() {
            crate::template::Dialect::Adk2
        } else {
            crate::template::Dialect::Adk1
        }
    }

    /// The input of the workflow node running, if it has one.
    pub fn node_input(&self) -> Option<&NodeInput> {
        self.node_input.as_ref()
    }

    /// The path of the workflow LLM node running (`WF@1/node@2`), if one is: of the
    /// session's events, it sees the user's messages and its own (those at this path or
    /// under it), as ADK's single-turn nodes do.
    pub fn node_path(&self) -> Option<&str> {
        self.node_path.as_deref()
    }

    /// The span the running agent's spans hang under; `None` when tracing is off.
    pub fn trace_parent(&self) -> Option<&TraceParent> {
        self.trace.as_ref()
    }

    /// The same invocation with spans hanging under `parent` (`None`: no change, so an
    /// untraced context stays untraced).
    pub fn with_trace(&self, parent: Option<TraceParent>) -> Self {
        InvocationContext {
            shared: Arc::clone(&self.shared),
            branch: self.branch.clone(),
            node_input: self.node_input.clone(),
            node_path: self.node_path.clone(),
            graph_node: self.graph_node,
            instruction_state: self.instruction_state.clone(),
            tool_state: self.tool_state.clone(),
            trace: parent.or_else(|| self.trace.clone()),
        }
    }

    /// Counts one model call of `agent`.
    ///
    /// # Errors
    /// More calls than `max_llm_calls`.
    pub fn count_llm_call(&self, agent: AgentId) -> Result<(), RunError> {
        let n = self.shared.llm_calls.fetch_add(1, Ordering::Relaxed) + 1;
        let limit = self.shared.config.max_llm_calls;
        if limit > 0 && n > limit {
            return Err(RunError::LlmCallsLimit {
                agent: self.tree().get(agent).name.clone(),
                limit,
            });
        }
        Ok(())
    }
}
