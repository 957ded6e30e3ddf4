//! The scripted model: canned replies per agent, from a `--script` file.
//!
//! # Script format (a public contract)
//!
//! ```yaml
//! replies:              # per agent name, consumed in order each time that agent calls its model
//!   coordinator:
//!     - function_call: {name: transfer_to_agent, args: {agent_name: billing}}
//!   worker:
//!     - parts: [{text: "stopping"}, {function_call: {name: exit_loop, args: {}}}]
//!     - function_calls: [{name: a, args: {}}, {name: b, args: {x: 1}}]
//!     - error: {code: SAFETY, message: "blocked"}
//!     - text: "Hello world"
//!       chunks: ["Hello", " world"]   # partial events only when streaming
//!     - text: "One two three"
//!       chunks: ["One", " two", " three"]
//!       interrupted_after: 1          # live mode: the user speaks over the model here
//! ```
//!
//! In live mode (`adk-flow live`) each reply is one model turn; see [`super::live::scripted`].
//!
//! An agent with no reply left gets [`ModelError::ScriptExhausted`].

use super::{CallContext, LlmRequest, LlmResponse, Model, ModelError, ResponseStream};
use crate::event::{Content, FunctionCall, Part, Role};
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A whole script file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Replies per agent name, in the order they are served, as written.
    #[serde(default)]
    pub replies: HashMap<String, Vec<ReplyKeys>>,
}

/// A function call as written in a script.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// Tool name.
    pub name: String,
    /// Arguments (an object).
    #[serde(default)]
    pub args: Map<String, Value>,
    /// Call id; `adk-` + uuid is generated when absent.
    #[serde(default)]
    pub id: Option<String>,
}

/// One part of a `parts:` reply as written: exactly one of `text` and `function_call`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartKeys {
    /// Text.
    #[serde(default)]
    pub text: Option<String>,
    /// A function call.
    #[serde(default)]
    pub function_call: Option<ScriptedCall>,
}

/// An error reply.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedError {
    /// errorCode of the event.
    pub code: String,
    /// errorMessage of the event.
    #[serde(default)]
    pub message: Option<String>,
}

/// One model reply as written: exactly one of `text`, `function_call`, `function_calls`,
/// `parts` and `error` is set; `chunks` and `interrupted_after` go with `text`. The
/// scripted model serves it as the [`ScriptedReply`] it is checked into.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplyKeys {
    /// A text reply.
    #[serde(default)]
    pub text: Option<String>,
    /// How the text streams: one partial event per chunk.
    #[serde(default)]
    pub chunks: Option<Vec<String>>,
    /// Live mode: the model stops after this many chunks, as if the user had spoken
    /// over it (the rest is dropped and the turn is marked interrupted).
    #[serde(default)]
    pub interrupted_after: Option<usize>,
    /// One function call.
    #[serde(default)]
    pub function_call: Option<ScriptedCall>,
    /// Several function calls in one reply.
    #[serde(default)]
    pub function_calls: Option<Vec<ScriptedCall>>,
    /// Explicit parts.
    #[serde(default)]
    pub parts: Option<Vec<PartKeys>>,
    /// An error reply.
    #[serde(default)]
    pub error: Option<ScriptedError>,
}

impl ReplyKeys {
    /// A text reply.
    pub fn text(text: impl Into<String>) -> Self {
        ReplyKeys {
            text: Some(text.into()),
            ..ReplyKeys::default()
        }
    }
}

/// One model reply, as the scripted model serves it.
#[derive(Debug, Clone)]
pub enum ScriptedReply {
    /// A text.
    Text {
        /// The whole text.
        text: String,
        /// How it streams: one partial event per chunk (absent: one chunk).
        chunks: Option<Vec<String>>,
        /// Live mode: stop after this many chunks, as if the user had spoken over it.
        interrupted_after: Option<usize>,
    },
    /// One function call.
    FunctionCall(ScriptedCall),
    /// Several function calls.
    FunctionCalls(Vec<ScriptedCall>),
    /// Explicit parts, in order.
    Parts(Vec<ScriptedPart>),
    /// An error reply.
    Error(ScriptedError),
}

/// One part of a [`ScriptedReply::Parts`] reply.
#[derive(Debug, Clone)]
pub enum ScriptedPart {
    /// Text.
    Text(String),
    /// A function call.
    FunctionCall(ScriptedCall),
}

/// A script whose shape is wrong beyond what the YAML types catch.
#[derive(Debug, Clone, thiserror::Error)]
#[error("replies.{agent}[{index}]: {message}")]
pub struct ScriptError {
    /// Agent whose reply is wrong.
    pub agent: String,
    /// Index of the reply.
    pub index: usize,
    /// What is wrong.
    pub message: String,
}

impl ScriptError {
    /// JSON pointer of the faulty reply in the script file.
    pub fn pointer(&self) -> String {
        format!(
            "/replies/{}/{}",
            self.agent.replace('~', "~0").replace('/', "~1"),
            self.index
        )
    }
}

impl Script {
    /// Every reply that has no kind, two kinds, or chunks without text.
    pub fn problems(&self) -> Vec<ScriptError> {
        let mut out = Vec::new();
        for (agent, replies) in &self.replies {
            for (index, r) in replies.iter().enumerate() {
                if let Err(message) = ScriptedReply::try_from(r) {
                    out.push(ScriptError {
                        agent: agent.clone(),
                        index,
                        message,
                    });
                }
            }
        }
        out
    }

    /// Every agent's replies, checked.
    ///
    /// # Errors
    /// The first reply (of some agent) that has no kind, two kinds, or chunks without
    /// text.
    pub fn checked(self) -> Result<HashMap<String, Vec<ScriptedReply>>, ScriptError> {
        self.replies
            .into_iter()
            .map(|(agent, replies)| {
                let checked = replies
                    .iter()
                    .enumerate()
                    .map(|(index, r)| {
                        ScriptedReply::try_from(r).map_err(|message| ScriptError {
                            agent: agent.clone(),
                            index,
                            message,
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((agent, checked))
            })
            .collect()
    }
}

pub(super) fn call(c: &ScriptedCall) -> Part {
    Part::function_call(FunctionCall {
        id: c.id.clone(),
        // Sized to its keys: the call is stored with its event for the session's life.
        args: Value::Object(crate::event::compact_map(&c.args)),
        name: c.name.clone(),
    })
}

impl TryFrom<&ReplyKeys> for ScriptedReply {
    type Error = String;

    fn try_from(keys: &ReplyKeys) -> Result<Self, String> {
        let kinds = [
            keys.text.is_some(),
            keys.function_call.is_some(),
            keys.function_calls.is_some(),
            keys.parts.is_some(),
            keys.error.is_some(),
        ];
        match kinds.iter().filter(|k| **k).count() {
            1 => {}
            0 => {
                return Err(
                    "a reply needs one of text, function_call, function_calls, parts or error"
                        .into(),
                );
            }
            _ => {
                return Err(
                    "a reply has only one of text, function_call, function_calls, parts or error"
                        .into(),
                );
            }
        }
        if keys.chunks.is_some() && keys.text.is_none() {
            return Err("chunks go with a text reply".into());
        }
        if keys.interrupted_after.is_some() && keys.text.is_none() {
            return Err("interrupted_after goes with a text reply".into());
        }
        let reply = if let Some(text) = &keys.text {
            ScriptedReply::Text {
                text: text.clone(),
                chunks: keys.chunks.clone(),
                interrupted_after: keys.interrupted_after,
            }
        } else if let Some(c) = &keys.function_call {
            ScriptedReply::FunctionCall(c.clone())
        } else if let Some(cs) = &keys.function_calls {
            ScriptedReply::FunctionCalls(cs.clone())
        } else if let Some(e) = &keys.error {
            ScriptedReply::Error(e.clone())
        } else {
            let parts = keys.parts.iter().flatten().enumerate().map(|(i, p)| {
                match (&p.text, &p.function_call) {
                    (Some(t), None) => Ok(ScriptedPart::Text(t.clone())),
                    (None, Some(c)) => Ok(ScriptedPart::FunctionCall(c.clone())),
                    _ => Err(format!(
                        "parts[{i}] needs exactly one of text or function_call"
                    )),
                }
            });
            ScriptedReply::Parts(parts.collect::<Result<_, _>>()?)
        };
        Ok(reply)
    }
}

/// A reply's final response: its parts, `STOP`.
fn final_response(parts: Vec<Part>, partial: Option<bool>) -> LlmResponse {
    LlmResponse {
        content: Some(Content::new(Role::Model, parts)),
        partial,
        finish_reason: Some(std::borrow::Cow::Borrowed("STOP")),
        ..LlmResponse::default()
    }
}

/// The response a scripted error stands for.
fn error_response(err: &ScriptedError) -> LlmResponse {
    LlmResponse {
        error_code: Some(err.code.clone()),
        error_message: err.message.clone(),
        ..LlmResponse::default()
    }
}

impl ScriptedReply {
    /// The reply's parts, or the error it stands for.
    fn parts(&self) -> Result<Vec<Part>, &ScriptedError> {
        Ok(match self {
            ScriptedReply::Error(err) => return Err(err),
            ScriptedReply::Text { text, .. } => vec![Part::text(text.clone())],
            ScriptedReply::FunctionCall(c) => vec![call(c)],
            ScriptedReply::FunctionCalls(cs) => cs.iter().map(call).collect(),
            ScriptedReply::Parts(parts) => parts
                .iter()
                .map(|p| match p {
                    ScriptedPart::Text(t) => Part::text(t.clone()),
                    ScriptedPart::FunctionCall(c) => call(c),
                })
                .collect(),
        })
    }

    /// The response of a call that does not stream.
    fn response(&self) -> LlmResponse {
        match self.parts() {
            Ok(parts) => final_response(parts, None),
            Err(error) => error_response(error),
        }
    }

    /// The responses this reply produces: partial chunks (when streaming a text), then
    /// the final response.
    fn responses(&self, stream: bool) -> Vec<LlmResponse> {
        let parts = match self.parts() {
            Ok(parts) => parts,
            Err(error) => return vec![error_response(error)],
        };
        if !stream {
            return vec![final_response(parts, None)];
        }
        // Streaming, as ADK's Gemini client does it: every chunk is a partial response,
        // then the aggregate follows with `partial: false`.
        let chunks: Vec<Content> = match self {
            ScriptedReply::Text {
                chunks: Some(chunks),
                ..
            } => chunks
                .iter()
                .map(|c| Content::text(Role::Model, c.clone()))
                .collect(),
            _ => vec![Content::new(Role::Model, parts.clone())],
        };
        let mut out: Vec<LlmResponse> = chunks
            .into_iter()
            .map(|c| LlmResponse {
                content: Some(c),
                partial: Some(true),
                ..LlmResponse::default()
            })
            .collect();
        out.push(final_response(parts, Some(false)));
        out
    }
}

/// Serves the replies of a [`Script`], in order, to the agent that asks. The default
/// model has no reply for anyone.
///
/// By default one cursor per agent is shared by every call (a `run` or a test case).
/// [`ScriptedModel::per_conversation`] keeps one cursor per agent *and conversation*, so
/// that every session of a server consumes the script from its start.
#[derive(Default)]
pub struct ScriptedModel {
    // Shared with the live connections the model opens.
    cursor: Arc<Cursor>,
}

/// The script and how far each agent has got in it.
#[derive(Default)]
pub(super) struct Cursor {
    replies: HashMap<String, Vec<ScriptedReply>>,
    per_conversation: bool,
    /// An agent whose replies were all served starts them over.
    cyclic: bool,
    /// Replies served so far, by conversation (`""` when shared) and agent.
    served: Mutex<HashMap<String, HashMap<String, usize>>>,
}

impl ScriptedModel {
    /// Checks every reply and builds the model.
    ///
    /// # Errors
    /// A reply with no kind, or with two, names the agent and the index.
    pub fn new(script: Script) -> Result<Self, ScriptError> {
        Ok(ScriptedModel {
            cursor: Arc::new(Cursor {
                replies: script.checked()?,
                per_conversation: false,
                cyclic: false,
                served: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The same model, consuming the script independently in each conversation.
    pub fn per_conversation(mut self) -> Self {
        if let Some(cursor) = Arc::get_mut(&mut self.cursor) {
            cursor.per_conversation = true;
        }
        self
    }

    /// The same model, serving each agent's replies over again once all were served (the
    /// bench: one round of replies serves any number of invocations).
    pub fn cyclic(mut self) -> Self {
        if let Some(cursor) = Arc::get_mut(&mut self.cursor) {
            cursor.cyclic = true;
        }
        self
    }

    /// Replies not yet served, per agent (in the shared cursor).
    pub fn remaining(&self) -> HashMap<String, usize> {
        let served = self.cursor.served.lock().unwrap_or_else(|e| e.into_inner());
        let shared = served.get("");
        self.cursor
            .replies
            .iter()
            .map(|(agent, replies)| {
                let used = shared.and_then(|s| s.get(agent)).copied().unwrap_or(0);
                (agent.clone(), replies.len().saturating_sub(used))
            })
            .collect()
    }

    /// Forgets a conversation's cursors (its session was deleted).
    pub fn forget(&self, conversation: &str) {
        let mut served = self.cursor.served.lock().unwrap_or_else(|e| e.into_inner());
        served.remove(conversation);
    }
}

impl Cursor {
    /// The next reply of `agent` in `conversation`, consumed.
    pub(super) fn next_reply(&self, agent: &str, conversation: &str) -> Option<&ScriptedReply> {
        let replies = self.replies.get(agent)?;
        let key = if self.per_conversation {
            conversation
        } else {
            ""
        };
        let mut served = self.served.lock().unwrap_or_else(|e| e.into_inner());
        let cursors = match served.get_mut(key) {
            Some(c) => c,
            None => served.entry(key.to_owned()).or_default(),
        };
        let used = match cursors.get_mut(agent) {
            Some(n) => n,
            None => cursors.entry(agent.to_owned()).or_default(),
        };
        let k = if self.cyclic {
            *used % replies.len().max(1)
        } else {
            *used
        };
        let reply = replies.get(k)?;
        *used += 1;
        Some(reply)
    }
}

#[async_trait]
impl Model for ScriptedModel {
    async fn generate(
        &self,
        _request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError> {
        let reply = self
            .cursor
            .next_reply(call.agent_name, call.conversation)
            .ok_or_else(|| ModelError::ScriptExhausted {
                agent: call.agent_name.to_owned(),
            })?;
        if !call.stream {
            // One response: no list to hold it.
            let mut response = reply.response();
            if call.graph_node {
                response.finish_reason = None;
            }
            return Ok(Box::pin(futures::stream::once(futures::future::ready(Ok(
                response,
            )))));
        }
        let mut responses = reply.responses(call.stream);
        if call.graph_node {
            for r in &mut responses {
                r.finish_reason = None;
            }
        }
        Ok(Box::pin(futures::stream::iter(
            responses.into_iter().map(Ok),
        )))
    }

    async fn connect_live(
        &self,
        _request: &LlmRequest,
        _config: &super::live::LiveRunConfig,
        call: CallContext<'_>,
    ) -> Option<Result<Box<dyn super::live::LiveConnection>, super::live::LiveError>> {
        Some(Ok(Box::new(super::live::scripted::ScriptedLive::new(
            Arc::clone(&self.cursor),
            call,
        ))))
    }
}
