//! The event model: what agents yield, the Runner commits and users see.
//!
//! # Wire format
//!
//! Events serialize exactly as ADK 1.x's `event.model_dump_json(exclude_none=True,
//! by_alias=True)`: camelCase keys, absent values omitted, and the four map-valued
//! action fields (`stateDelta`, `artifactDelta`, `requestedAuthConfigs`,
//! `requestedToolConfirmations`) always present, empty or not. Field order follows
//! ADK's pydantic declaration order so that raw streams diff cleanly.
//!
//! This module depends on nothing else in the crate.

mod content;
mod node_info;
mod rare;
mod sparse;

pub use content::{
    Blob, COMPACT_KEYS, Content, FileData, FunctionCall, FunctionResponse, Part, Role, compact,
    compact_map, compacted,
};
pub use node_info::{NodeInfo, OutputFor};
pub use rare::{EventError, EventMeta};
pub use sparse::SparseMap;

use crate::names;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Session state, and deltas to it: a JSON object keyed by state key.
pub type StateMap = Map<String, Value>;

/// Token counts a provider reports for one model call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageMetadata {
    /// Tokens in the prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_token_count: Option<u64>,
    /// Tokens in the reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates_token_count: Option<u64>,
    /// Prompt plus reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_token_count: Option<u64>,
}

/// What a live model heard or said, as text (genai's `Transcription`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transcription {
    /// The transcribed text (a chunk, or the whole utterance when finished).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The utterance is complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished: Option<bool>,
}

/// Side effects an event carries; the Runner applies them when it commits the event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventActions {
    /// The model is not asked to summarize this function response (exit_loop sets it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_summarization: Option<bool>,
    /// State changes committed with this event (most events have none: nothing is
    /// allocated then).
    #[serde(default)]
    pub state_delta: SparseMap,
    /// Artifact name to the version this event saved.
    #[serde(default)]
    pub artifact_delta: BTreeMap<String, u64>,
    /// Hands control to the named agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfer_to_agent: Option<Box<str>>,
    /// Exits the enclosing LoopAgents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalate: Option<bool>,
    /// Authentication requests keyed by function call id.
    #[serde(default)]
    pub requested_auth_configs: SparseMap,
    /// Tool confirmation requests keyed by function call id.
    #[serde(default)]
    pub requested_tool_confirmations: SparseMap,
    /// Marks the end of an agent's run (resumability checkpoints).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_of_agent: Option<bool>,
    /// An agent's checkpointed state (resumability).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_state: Option<Box<Value>>,
    /// Rewinds the session to before this invocation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewind_before_invocation_id: Option<Box<str>>,
    /// The route a workflow graph node emits (ADK 2): a label or a list of labels that
    /// decides which labelled edges leave the node (boxed: set only in workflow graphs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<Box<Value>>,
}

impl EventActions {
    /// Folds `other` into `self` the way ADK merges the actions of parallel function calls:
    /// maps are merged key by key, flags and targets are taken when set.
    pub fn merge(&mut self, other: EventActions) {
        self.state_delta.extend(other.state_delta);
        self.artifact_delta.extend(other.artifact_delta);
        self.requested_auth_configs
            .extend(other.requested_auth_configs);
        self.requested_tool_confirmations
            .extend(other.requested_tool_confirmations);
        self.skip_summarization = other.skip_summarization.or(self.skip_summarization);
        self.transfer_to_agent = other.transfer_to_agent.or(self.transfer_to_agent.take());
        self.escalate = other.escalate.or(self.escalate);
        self.end_of_agent = other.end_of_agent.or(self.end_of_agent);
        self.agent_state = other.agent_state.or(self.agent_state.take());
        self.route = other.route.or(self.route.take());
    }
}

/// One step of a conversation: a user message, a model reply, a tool result or a control
/// signal, authored by the user or an agent.
///
/// Fields most events leave empty and that would be large inline (live transcriptions and
/// resumption updates, custom and usage metadata, workflow graph outputs, routes and node
/// metadata, auth and confirmation requests) are boxed: every stored event, and every
/// stream an event moves through, pays for them only when they are set. The error and the
/// metadata are one box each for several fields ([`EventError`], [`EventMeta`]; read them
/// through [`Event::error_code`], [`Event::meta`]...), flat keys on the wire.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", from = "rare::EventWire")]
pub struct Event {
    /// What was said or called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// A streamed chunk: forwarded to the user, never committed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<bool>,
    /// The model finished its turn (live mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_complete: Option<bool>,
    /// Why the model stopped (`STOP`, `MAX_TOKENS`, `SAFETY`...); the usual values are
    /// shared, not allocated per event (see [`finish_reason`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<Cow<'static, str>>,
    /// The error code and message when the step failed (`errorCode`, `errorMessage`; see
    /// [`Event::error_code`], [`Event::set_error`]).
    #[serde(flatten)]
    pub error: Option<Box<EventError>>,
    /// The model's generation was interrupted (live mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<bool>,
    /// Custom and usage metadata, live transcriptions and resumption updates (see
    /// [`Event::meta`], [`Event::meta_mut`]).
    #[serde(flatten)]
    pub meta: Option<Box<EventMeta>>,
    /// The invocation (one user turn) this event belongs to: `e-` + uuid; one string
    /// shared by the invocation's events.
    pub invocation_id: Arc<str>,
    /// `user` or the name of the agent that produced the event; one string shared by the
    /// agent's events (see [`user_author`]).
    pub author: Arc<str>,
    /// Side effects committed with the event.
    pub actions: EventActions,
    /// The data output of a workflow graph node (ADK 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Box<Value>>,
    /// Where in a workflow graph the event was made (ADK 2); absent outside graphs. Shared:
    /// a node run's events of one kind carry one `NodeInfo`, and the root workflow's first
    /// runs of each node one for every invocation (see [`NodeInfo`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_info: Option<Arc<NodeInfo>>,
    /// Ids of long-running function calls in this event; `[]` on every function-call event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub long_running_tool_ids: Option<Box<[String]>>,
    /// ParallelAgent branch (`parent.child`), which limits who sees the event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<Box<str>>,
    /// Unique id of the event.
    pub id: Box<str>,
    /// Creation time in seconds since the Unix epoch.
    pub timestamp: f64,
}

/// A model's finish reason as an event keeps it: genai's usual values are shared
/// constants, anything else is kept as given.
pub fn finish_reason(reason: String) -> Cow<'static, str> {
    const KNOWN: [&str; 6] = [
        "STOP",
        "MAX_TOKENS",
        "SAFETY",
        "RECITATION",
        "MALFORMED_FUNCTION_CALL",
        "OTHER",
    ];
    match KNOWN.iter().find(|k| **k == reason) {
        Some(k) => Cow::Borrowed(k),
        None => Cow::Owned(reason),
    }
}

/// Seconds since the Unix epoch, as ADK's `time.time()`.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

/// A fresh invocation id, `e-` + uuid4, as ADK's `new_invocation_context_id`.
pub fn new_invocation_id() -> String {
    prefixed_uuid("e-").string()
}

/// [`new_invocation_id`], made once for the events of the invocation to share.
pub fn new_shared_invocation_id() -> Arc<str> {
    Arc::from(prefixed_uuid("e-").as_str())
}

/// `prefix` (at most 4 bytes) and a fresh uuid4 in its hyphenated form, on the stack.
fn prefixed_uuid(prefix: &str) -> UuidText {
    let mut buf = [0u8; 40];
    let n = prefix.len();
    buf[..n].copy_from_slice(prefix.as_bytes());
    uuid::Uuid::new_v4()
        .hyphenated()
        .encode_lower(&mut buf[n..n + uuid::fmt::Hyphenated::LENGTH]);
    UuidText {
        buf,
        len: n + uuid::fmt::Hyphenated::LENGTH,
    }
}

/// An id formatted on the stack (no `fmt` machinery, one exact allocation when kept).
struct UuidText {
    buf: [u8; 40],
    len: usize,
}

impl UuidText {
    fn as_str(&self) -> &str {
        // Only ASCII was written: the prefix is a literal, the rest hexadecimal digits.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }

    fn string(&self) -> String {
        self.as_str().to_owned()
    }
}

/// The author of the user's events, [`names::USER`], shared by all of them.
pub fn user_author() -> Arc<str> {
    static USER: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from(names::USER));
    Arc::clone(&USER)
}

/// A fresh client-side function call id, `adk-` + uuid4.
pub fn new_function_call_id() -> String {
    prefixed_uuid("adk-").string()
}

impl Event {
    /// Whether the user wrote this event (its author is [`names::USER`]).
    pub fn is_from_user(&self) -> bool {
        *self.author == *names::USER
    }

    /// A new event with a fresh id and timestamp. Pass `Arc`s to share the invocation id
    /// and the author with the invocation's other events (a `&str` is copied).
    pub fn new(invocation_id: impl Into<Arc<str>>, author: impl Into<Arc<str>>) -> Self {
        Event {
            invocation_id: invocation_id.into(),
            author: author.into(),
            id: Box::from(prefixed_uuid("").as_str()),
            timestamp: now(),
            ..Event::default()
        }
    }

    /// The same event with `content` set.
    pub fn with_content(mut self, content: Content) -> Self {
        self.content = Some(content);
        self
    }

    /// Function calls in this event's content, in order.
    pub fn function_calls(&self) -> impl Iterator<Item = &FunctionCall> {
        self.parts().filter_map(|p| p.function_call.as_deref())
    }

    /// Function responses in this event's content, in order.
    pub fn function_responses(&self) -> impl Iterator<Item = &FunctionResponse> {
        self.parts().filter_map(|p| p.function_response.as_deref())
    }

    fn parts(&self) -> impl Iterator<Item = &Part> + Clone {
        self.content.iter().flat_map(|c| c.parts.iter())
    }

    /// The texts of this event's non-thought text parts, in order.
    pub fn texts(&self) -> impl Iterator<Item = &str> + Clone {
        self.parts()
            .filter(|p| p.thought != Some(true))
            .filter_map(|p| p.text.as_deref())
    }

    /// The concatenated non-thought text of this event, if it has any text part.
    pub fn text(&self) -> Option<String> {
        concat(self.texts())
    }

    /// Whether this is a streamed chunk.
    pub fn is_partial(&self) -> bool {
        self.partial == Some(true)
    }

    /// ADK 1.x `is_final_response()`: the event ends its agent's turn.
    ///
    /// Skip-summarization and long-running calls end it; otherwise any event that is not a
    /// function call, not a function response and not a partial chunk does.
    pub fn is_final_response(&self) -> bool {
        if self.actions.skip_summarization == Some(true)
            || self
                .long_running_tool_ids
                .as_ref()
                .is_some_and(|ids| !ids.is_empty())
        {
            return true;
        }
        self.function_calls().next().is_none()
            && self.function_responses().next().is_none()
            && !self.is_partial()
    }
}

/// `texts` joined, `None` when there is none; made at its size at once: growing a
/// `String` part by part goes through `reserve`'s general path (~280 instructions for
/// one short part, twice that of an allocation of the right size).
pub fn concat<'a>(texts: impl Iterator<Item = &'a str> + Clone) -> Option<String> {
    let mut rest = texts.clone();
    let first = rest.next()?;
    let mut out = String::with_capacity(first.len() + rest.map(str::len).sum::<usize>());
    texts.for_each(|t| out.push_str(t));
    Some(out)
}

#[cfg(test)]
mod tests;
