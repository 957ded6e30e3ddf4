//! Failures that end an invocation. Each becomes an error event (errorCode, errorMessage)
//! authored by the agent that failed, and a non-zero exit of `adk-flow run`.

use crate::event::Event;
use crate::model::ModelError;
use crate::session::SessionError;
use crate::template::TemplateError;
use std::borrow::Cow;
use std::sync::Arc;

/// Why an invocation stopped early.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The model call failed (not a model reply: those are events).
    #[error("model call of agent `{agent}` failed")]
    Model {
        /// The calling agent.
        agent: String,
        /// The failure.
        #[source]
        source: ModelError,
    },
    /// The instruction references state that does not exist.
    #[error("instruction of agent `{agent}`")]
    Template {
        /// The agent.
        agent: String,
        /// The failure.
        #[source]
        source: TemplateError,
    },
    /// The agent's final reply does not fit its `output_schema`.
    #[error("agent `{agent}`")]
    Output {
        /// The agent that replied.
        agent: String,
        /// What is wrong with the reply.
        #[source]
        source: crate::model::schema::OutputError,
    },
    /// transfer_to_agent named an agent that is not in the tree.
    #[error(
        "agent `{agent}` transferred to `{target}`, which is not in the agent tree (agents: {available})"
    )]
    AgentNotFound {
        /// The transferring agent.
        agent: String,
        /// The requested target.
        target: String,
        /// The agents that exist, comma-separated.
        available: String,
    },
    /// More model calls than the run allows.
    #[error("agent `{agent}` exceeded the limit of {limit} model calls in one invocation")]
    LlmCallsLimit {
        /// The agent that tried one more.
        agent: String,
        /// The limit.
        limit: u32,
    },
    /// A declared callback could not be evaluated.
    #[error("agent `{agent}`")]
    Callback {
        /// The agent whose hook ran.
        agent: String,
        /// The failure.
        #[source]
        source: crate::callback::CallbackError,
    },
    /// A tool could not prepare the model request that offers it.
    #[error("agent `{agent}`: tool `{tool}` could not prepare the request")]
    ToolRequest {
        /// The agent whose request it was.
        agent: String,
        /// The tool.
        tool: String,
        /// The failure.
        #[source]
        source: crate::tool::ToolError,
    },
    /// The live connection of an agent failed.
    #[error("live connection of agent `{agent}`")]
    Live {
        /// The agent whose connection it was.
        agent: String,
        /// The failure.
        #[source]
        source: crate::model::live::LiveError,
    },
    /// A live run reached an agent that has no live mode.
    #[error(
        "agent `{agent}` is a {kind}, which has no live mode (live runs take LLM agents and SequentialAgents)"
    )]
    LiveUnsupported {
        /// The agent.
        agent: String,
        /// Its kind (`LoopAgent`, `ParallelAgent`).
        kind: &'static str,
    },
    /// The live request queue was already taken by another live run.
    #[error("this LiveRequestQueue already feeds another live run")]
    LiveQueueTaken,
    /// A workflow graph failed; the error event of its failure was already yielded. Said
    /// with that event (see [`error_event_note`]): which node (or workflow) failed, and why.
    #[error("workflow `{workflow}` failed{}", .failure.as_deref().map(error_event_note).unwrap_or_default())]
    WorkflowFailed {
        /// The root workflow.
        workflow: String,
        /// The error event that reported the failure: the failing node's (or a nested or
        /// the root workflow's own), not merely the run's last error event, which in a
        /// fan-out may be a sibling's model error that failed nothing.
        failure: Option<Arc<Event>>,
    },
    /// The memory store failed while adding the invocation's events.
    #[error("cannot add the session to memory")]
    Memory(#[source] crate::memory::MemoryError),
    /// The session store failed.
    #[error("session store")]
    Session(#[from] SessionError),
    /// The invocation failed, and the error event reporting it could not be committed.
    #[error("{}; the error event reporting it could not be saved", crate::errors::chain(.error))]
    Unrecorded {
        /// Why the invocation failed.
        error: Box<RunError>,
        /// Why its error event was not saved.
        #[source]
        source: SessionError,
    },
}

impl RunError {
    /// The errorCode of the event that reports this failure.
    pub fn code(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            RunError::Model { source, .. } => return source.code(),
            RunError::Unrecorded { error, .. } => return error.code(),
            RunError::Template {
                source: TemplateError::MissingKey { .. },
                ..
            } => "MISSING_STATE_KEY",
            RunError::Template {
                source: TemplateError::MissingArtifact { .. },
                ..
            } => "MISSING_ARTIFACT",
            RunError::Output { source, .. } => source.code(),
            RunError::AgentNotFound { .. } => "AGENT_NOT_FOUND",
            RunError::LlmCallsLimit { .. } => "LLM_CALLS_LIMIT_EXCEEDED",
            RunError::Callback { .. } => "CALLBACK_ERROR",
            RunError::ToolRequest { .. } => "TOOL_ERROR",
            RunError::Live { source, .. } => return source.code(),
            RunError::LiveUnsupported { .. } => "LIVE_UNSUPPORTED_AGENT",
            RunError::LiveQueueTaken => "LIVE_QUEUE_TAKEN",
            RunError::Memory(_) => "MEMORY_ERROR",
            RunError::WorkflowFailed { .. } => "WORKFLOW_FAILED",
            RunError::Session(_) => "SESSION_ERROR",
        })
    }

    /// Whether the failure was already reported by an event of its own, so the Runner
    /// makes no error event for it.
    pub fn is_reported(&self) -> bool {
        matches!(self, RunError::WorkflowFailed { .. })
    }

    /// The agent the error event is attributed to, if any.
    pub fn agent(&self) -> Option<&str> {
        match self {
            RunError::Model { agent, .. }
            | RunError::Template { agent, .. }
            | RunError::Output { agent, .. }
            | RunError::AgentNotFound { agent, .. }
            | RunError::LlmCallsLimit { agent, .. }
            | RunError::Callback { agent, .. }
            | RunError::ToolRequest { agent, .. }
            | RunError::Live { agent, .. }
            | RunError::LiveUnsupported { agent, .. } => Some(agent),
            RunError::WorkflowFailed { workflow, .. } => Some(workflow),
            RunError::Memory(_) | RunError::Session(_) | RunError::LiveQueueTaken => None,
            RunError::Unrecorded { error, .. } => error.agent(),
        }
    }
}

/// An error event, said after a run's failure: ` (error event at NODE_PATH: CODE:
/// MESSAGE)`, or `of AUTHOR` outside a graph, or nothing when it is no error event. A
/// workflow's failure names only the workflow, and the event says why (a node's error, a
/// Router's expression, a script out of replies, a node past its `max_node_runs`, a
/// transfer).
pub fn error_event_note(e: &Event) -> String {
    let Some(code) = e.error_code() else {
        return String::new();
    };
    let place = match e.node_info.as_deref().filter(|n| !n.path.is_empty()) {
        Some(n) => format!("at {}", n.path),
        None => format!("of `{}`", e.author),
    };
    match e.error_message() {
        Some(message) => format!(" (error event {place}: {code}: {message})"),
        None => format!(" (error event {place}: {code})"),
    }
}
