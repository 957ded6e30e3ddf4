//! Models: the request an LLM agent sends, the responses it gets back, and the trait every
//! provider implements.
//!
//! Implementations: [`scripted::ScriptedModel`] (replies from a `--script` file, the test
//! double) and [`dump::DumpRequests`] (a wrapper that records every request).

pub mod dump;
#[doc(hidden)]
pub mod fuzzing;
mod gemini;
mod http;
pub mod live;
mod openai;
pub mod provider;
pub mod record;
pub mod schema;
pub mod scripted;
mod sse;

use crate::event::{Content, Event, UsageMetadata};
use async_trait::async_trait;
use futures::stream::BoxStream;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// A tool as the model sees it: name, description and a JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionDeclaration {
    /// Tool name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments; absent when the tool takes none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

/// Everything one model call needs, in the shape ADK's `LlmRequest` has.
#[derive(Debug, Clone, Default)]
pub struct LlmRequest {
    /// The model name the agent asked for (shared by the agent's requests).
    pub model: Arc<str>,
    /// The assembled system instruction: agent instruction, identity, transfer rules.
    ///
    /// Shared: an agent whose system instruction is the same on every call sends its one
    /// copy; [`LlmRequest::append_instruction`] copies it when shared.
    pub system_instruction: Option<Arc<String>>,
    /// The conversation as this agent sees it. Shared with the session's view of it
    /// (nothing is copied per call), whose entries share the stored events' contents
    /// where the model sees them as stored (see [`RequestContent`]); `Arc::make_mut`
    /// gives a private copy to change. [`contents_of`] makes one from plain contents.
    pub contents: Arc<Vec<RequestContent>>,
    /// The tools the agent offers, shared by every request of the agent.
    pub tools: Arc<Vec<FunctionDeclaration>>,
    /// Provider generation parameters (`generate_content_config`), passed through.
    pub generation_config: Option<Value>,
    /// Tools the provider runs itself (Gemini's `googleSearch`, `urlContext`,
    /// `googleMaps`), by their Gemini tool key.
    pub provider_tools: Vec<String>,
    /// The reply's JSON Schema (ADK's `set_output_schema`): the reply must be JSON that
    /// fits it. Absent when the agent has none, or when its tools share the request on a
    /// model that cannot take both (it then answers through `set_model_response`).
    pub output_schema: Option<Arc<schema::OutputSchema>>,
    /// A user message sent among the contents without being part of them: ADK's dynamic
    /// instruction when a `static_instruction` holds the system instruction. Kept apart so
    /// that the shared `contents` are not copied per call; [`LlmRequest::messages`] yields
    /// it in its place, and every provider sends what that yields.
    pub instruction_message: Option<InstructionMessage>,
}

/// One message of a request's conversation: a stored event's content, shared with the
/// session (no copy), or a content of the request's own (another agent's turn quoted, a
/// node's input, a content changed for the model). Reads as the [`Content`] it holds,
/// and serializes as that content.
#[derive(Clone)]
pub enum RequestContent {
    /// The content of a stored event that has one (the agent's view shares it when the
    /// model sees it as stored).
    Event(Arc<Event>),
    /// A content of its own.
    Own(Content),
    /// A content shared with something other than an event: a workflow node's input,
    /// shared by the node's requests (and, when it is the user's message as sent, with
    /// the invocation).
    Shared(Arc<Content>),
}

/// What an event without content reads as (such an event is never shared).
static NO_CONTENT: Content = Content {
    parts: Vec::new(),
    role: None,
};

impl RequestContent {
    /// The content, owned (a shared event's content is copied).
    pub fn into_content(self) -> Content {
        match self {
            RequestContent::Event(event) => match Arc::try_unwrap(event) {
                Ok(event) => event.content.unwrap_or_else(|| NO_CONTENT.clone()),
                Err(event) => event.content.clone().unwrap_or_else(|| NO_CONTENT.clone()),
            },
            RequestContent::Own(content) => content,
            RequestContent::Shared(content) => Arc::unwrap_or_clone(content),
        }
    }
}

/// Prints the content only: a shared event's actions (its state delta) stay out of a
/// request's debug output.
impl std::fmt::Debug for RequestContent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl std::ops::Deref for RequestContent {
    type Target = Content;

    fn deref(&self) -> &Content {
        match self {
            RequestContent::Event(event) => event.content.as_ref().unwrap_or(&NO_CONTENT),
            RequestContent::Own(content) => content,
            RequestContent::Shared(content) => content,
        }
    }
}

impl From<Content> for RequestContent {
    fn from(content: Content) -> Self {
        RequestContent::Own(content)
    }
}

impl PartialEq for RequestContent {
    /// Equal when the contents are (shared or not).
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Serialize for RequestContent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

/// Request contents made of `contents`, each its own.
pub fn contents_of(contents: Vec<Content>) -> Arc<Vec<RequestContent>> {
    Arc::new(contents.into_iter().map(RequestContent::Own).collect())
}

/// A user message a request places among its contents (see
/// [`LlmRequest::instruction_message`]).
#[derive(Debug, Clone, PartialEq)]
pub struct InstructionMessage {
    /// The index in `contents` it goes before (`contents.len()`: after the last one).
    pub at: usize,
    /// The message.
    pub content: Content,
}

impl LlmRequest {
    /// The conversation as sent: `contents`, with the instruction message (if any) in
    /// its place.
    pub fn messages(&self) -> Messages<'_> {
        Messages {
            contents: &self.contents,
            inserted: self.instruction_message.as_ref(),
            next: 0,
        }
    }

    /// The last message sent ([`LlmRequest::messages`]' last).
    pub fn last_message(&self) -> Option<&Content> {
        match &self.instruction_message {
            Some(m) if m.at >= self.contents.len() => Some(&m.content),
            _ => self.contents.last().map(|c| &**c),
        }
    }

    /// Appends a message after every other (copying the contents when they are shared).
    pub fn push_message(&mut self, content: Content) {
        Arc::make_mut(&mut self.contents).push(RequestContent::Own(content));
    }

    /// Takes the conversation as sent ([`LlmRequest::messages`]), leaving the request
    /// without contents nor instruction message.
    pub fn take_messages(&mut self) -> Vec<Content> {
        let mut contents: Vec<Content> = Arc::unwrap_or_clone(std::mem::take(&mut self.contents))
            .into_iter()
            .map(RequestContent::into_content)
            .collect();
        if let Some(m) = self.instruction_message.take() {
            contents.insert(m.at.min(contents.len()), m.content);
        }
        contents
    }

    /// Appends text to the system instruction, a blank line after what is there (ADK's
    /// `append_instructions`).
    pub fn append_instruction(&mut self, text: &str) {
        match &mut self.system_instruction {
            Some(s) if !s.is_empty() => {
                let s = Arc::make_mut(s);
                s.push_str("\n\n");
                s.push_str(text);
            }
            _ => self.system_instruction = Some(Arc::new(text.to_owned())),
        }
    }
}

/// The conversation a request sends, in order (see [`LlmRequest::messages`]); serializes
/// as a JSON array of contents.
#[derive(Debug, Clone)]
pub struct Messages<'a> {
    contents: &'a [RequestContent],
    inserted: Option<&'a InstructionMessage>,
    /// Position in the sequence as sent (the inserted message counts).
    next: usize,
}

impl<'a> Iterator for Messages<'a> {
    type Item = &'a Content;

    fn next(&mut self) -> Option<&'a Content> {
        let n = self.next;
        self.next += 1;
        match self.inserted {
            Some(m) if n == m.at.min(self.contents.len()) => Some(&m.content),
            Some(m) if n > m.at.min(self.contents.len()) => self.contents.get(n - 1).map(|c| &**c),
            _ => self.contents.get(n).map(|c| &**c),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let total = self.contents.len() + usize::from(self.inserted.is_some());
        let left = total.saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Messages<'_> {}

impl Serialize for Messages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.clone())
    }
}

/// Per-call facts that are not part of the request itself.
#[derive(Debug, Clone, Copy)]
pub struct CallContext<'a> {
    /// The agent making the call (the scripted model keys replies by it).
    pub agent_name: &'a str,
    /// Whether to stream partial chunks.
    pub stream: bool,
    /// The conversation the call belongs to (`APP/USER/SESSION`); the scripted model keeps
    /// one reply cursor per conversation when `serve` asks it to.
    pub conversation: &'a str,
    /// The caller is an LLM node of a workflow graph. ADK 2.13's scripted reference runs
    /// carry no `finishReason` there, so the scripted model gives none.
    pub graph_node: bool,
}

/// One response, or one streamed chunk of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LlmResponse {
    /// The reply.
    pub content: Option<Content>,
    /// A streamed chunk that an aggregated final response will follow.
    pub partial: Option<bool>,
    /// Why generation stopped (genai's usual values shared, see
    /// [`crate::event::finish_reason`]).
    pub finish_reason: Option<Cow<'static, str>>,
    /// Provider error or block code (`SAFETY`...).
    pub error_code: Option<String>,
    /// Human-readable error.
    pub error_message: Option<String>,
    /// Token usage.
    pub usage_metadata: Option<UsageMetadata>,
}

/// Failures of a model call that are not replies: they end the run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ModelError {
    /// The scripted model has no reply left for this agent.
    #[error("the script has no reply left for agent `{agent}` (add one under `replies.{agent}`)")]
    ScriptExhausted {
        /// The agent that asked.
        agent: String,
    },
    /// Any other provider failure.
    #[error("{message}")]
    Provider {
        /// Stable machine-readable code.
        code: ProviderCode,
        /// What went wrong.
        message: String,
    },
}

/// What kind of provider failure happened; its wire form (`HTTP_429`, `TIMEOUT`...) is
/// the errorCode of the event that reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderCode {
    /// The provider answered with this error status (`HTTP_<status>`).
    Http(u16),
    /// No complete answer, or no response headers, within the timeout (`TIMEOUT`).
    Timeout,
    /// The connection could not be established (`CONNECT`).
    Connect,
    /// The connection failed during the exchange (`NETWORK`).
    Network,
    /// A success status with a body that is not the expected answer (`BAD_RESPONSE`).
    BadResponse,
    /// A stream that broke after it started (`STREAM_BROKEN`).
    StreamBroken,
    /// The request holds a tool the provider cannot take (`UNSUPPORTED_TOOL`).
    UnsupportedTool,
    /// There is no model to call (`NO_MODEL`).
    NoModel,
}

impl ProviderCode {
    /// The wire form.
    pub fn as_str(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            ProviderCode::Http(status) => return Cow::Owned(format!("HTTP_{status}")),
            ProviderCode::Timeout => "TIMEOUT",
            ProviderCode::Connect => "CONNECT",
            ProviderCode::Network => "NETWORK",
            ProviderCode::BadResponse => "BAD_RESPONSE",
            ProviderCode::StreamBroken => "STREAM_BROKEN",
            ProviderCode::UnsupportedTool => "UNSUPPORTED_TOOL",
            ProviderCode::NoModel => "NO_MODEL",
        })
    }
}

impl std::fmt::Display for ProviderCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_str())
    }
}

impl PartialEq<str> for ProviderCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ProviderCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl ModelError {
    /// The errorCode this failure carries on the wire.
    pub fn code(&self) -> Cow<'static, str> {
        match self {
            ModelError::ScriptExhausted { .. } => Cow::Borrowed("SCRIPT_EXHAUSTED"),
            ModelError::Provider { code, .. } => code.as_str(),
        }
    }
}

/// A stream of responses to one request.
pub type ResponseStream = BoxStream<'static, Result<LlmResponse, ModelError>>;

/// An LLM provider.
#[async_trait]
pub trait Model: Send + Sync {
    /// Sends one request. Non-streaming calls yield one response; streaming calls yield
    /// partial chunks followed by the aggregated final response.
    async fn generate(
        &self,
        request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError>;

    /// Whether the provider takes a response schema and tools in one request (ADK's
    /// `can_use_output_schema_with_tools`: true for LiteLLM, which covers the
    /// OpenAI-compatible servers); otherwise an agent with both answers through the
    /// `set_model_response` tool.
    fn output_schema_with_tools(&self) -> bool {
        false
    }

    /// Opens this model's own live connection for the calling agent (system instruction and tools
    /// from `request`), or `None` when it has no live mode of its own: then
    /// [`live::connect`] runs the text live mode over [`Model::generate`].
    async fn connect_live(
        &self,
        _request: &LlmRequest,
        _config: &live::LiveRunConfig,
        _call: CallContext<'_>,
    ) -> Option<Result<Box<dyn live::LiveConnection>, live::LiveError>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Role;

    fn request(at: usize) -> LlmRequest {
        LlmRequest {
            contents: contents_of(vec![
                Content::text(Role::User, "a"),
                Content::text(Role::Model, "b"),
            ]),
            instruction_message: Some(InstructionMessage {
                at,
                content: Content::text(Role::User, "i"),
            }),
            ..LlmRequest::default()
        }
    }

    fn texts<'a>(contents: impl Iterator<Item = &'a Content>) -> Vec<&'a str> {
        contents
            .map(|c| c.parts[0].text.as_deref().unwrap_or_default())
            .collect()
    }

    #[test]
    fn the_instruction_message_is_sent_in_its_place_without_changing_the_contents() {
        for (at, want) in [
            (0, ["i", "a", "b"]),
            (1, ["a", "i", "b"]),
            (2, ["a", "b", "i"]),
        ] {
            let mut r = request(at);
            assert_eq!(texts(r.messages()), want);
            assert_eq!(r.messages().len(), 3);
            assert_eq!(texts(r.last_message().into_iter()), [want[2]]);
            let sent = serde_json::to_value(r.messages()).unwrap();
            r.push_message(Content::text(Role::User, "c"));
            assert_eq!(texts(r.messages()).last(), Some(&"c"));
            assert_eq!(r.contents.len(), 3);
            let taken = r.take_messages();
            assert_eq!(texts(taken.iter()), [&want[..], &["c"]].concat());
            assert_eq!(serde_json::to_value(&taken[..3]).unwrap(), sent);
            assert!(r.contents.is_empty() && r.instruction_message.is_none());
        }
        let plain = LlmRequest {
            instruction_message: None,
            ..request(0)
        };
        assert_eq!(texts(plain.messages()), ["a", "b"]);
    }
}
