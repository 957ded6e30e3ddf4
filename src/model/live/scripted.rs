//! The scripted model in live mode: each reply of a `--script` file is one model turn.
//!
//! A turn is produced when the connection receives a user content, tool responses, or,
//! at connect, history that ends with a user-role content. A text reply streams its
//! `chunks` (the whole text as one chunk when there are none) and ends the turn;
//! `interrupted_after: N` stops after N chunks as if the user had spoken. A reply with
//! function calls sends them and ends the turn. An `error` reply is one error message and
//! ends the turn. An agent with no reply left fails with `SCRIPT_EXHAUSTED`.
//!
//! The connection is turn based: while a turn is pending it is [`busy`], so the client's
//! next input waits, which makes a scripted live run deterministic.
//!
//! [`busy`]: LiveConnection::busy

use super::{LiveConnection, LiveError, LiveMessage, RealtimeInput};
use crate::event::{Content, FunctionResponse, Role};
use crate::model::CallContext;
use crate::model::ModelError;
use crate::model::scripted::{Cursor, ScriptedPart, ScriptedReply, call};
use async_trait::async_trait;
use std::collections::VecDeque;
use std::sync::Arc;

/// A live connection serving one agent's scripted replies.
pub struct ScriptedLive {
    cursor: Arc<Cursor>,
    agent: String,
    conversation: String,
    pending: VecDeque<LiveMessage>,
    closed: bool,
}

impl ScriptedLive {
    pub(in crate::model) fn new(cursor: Arc<Cursor>, call: CallContext<'_>) -> Self {
        ScriptedLive {
            cursor,
            agent: call.agent_name.to_owned(),
            conversation: call.conversation.to_owned(),
            pending: VecDeque::new(),
            closed: false,
        }
    }

    /// Queues the messages of the agent's next reply.
    fn next_turn(&mut self) -> Result<(), LiveError> {
        let reply = self
            .cursor
            .next_reply(&self.agent, &self.conversation)
            .ok_or_else(|| ModelError::ScriptExhausted {
                agent: self.agent.clone(),
            })?;
        self.pending.extend(turn(reply));
        Ok(())
    }
}

/// The messages one scripted reply sends.
fn turn(reply: &ScriptedReply) -> Vec<LiveMessage> {
    let text = |t: &str| LiveMessage::Text {
        text: t.to_owned(),
        thought: false,
    };
    let mut out = Vec::new();
    let mut calls = Vec::new();
    match reply {
        ScriptedReply::Error(err) => {
            return vec![LiveMessage::Error {
                code: err.code.clone(),
                message: err.message.clone(),
            }];
        }
        ScriptedReply::Text {
            text: whole,
            chunks,
            interrupted_after,
        } => {
            let chunks: Vec<&str> = match chunks {
                Some(chunks) if !chunks.is_empty() => chunks.iter().map(String::as_str).collect(),
                _ => vec![whole.as_str()],
            };
            match interrupted_after {
                Some(n) => {
                    out.extend(chunks.iter().take(*n).map(|c| text(c)));
                    out.push(LiveMessage::Interrupted);
                }
                None => out.extend(chunks.iter().map(|c| text(c))),
            }
        }
        ScriptedReply::FunctionCall(c) => calls.push(call(c)),
        ScriptedReply::FunctionCalls(cs) => calls.extend(cs.iter().map(call)),
        ScriptedReply::Parts(parts) => {
            for p in parts {
                match p {
                    ScriptedPart::Text(t) => out.push(text(t)),
                    ScriptedPart::FunctionCall(c) => calls.push(call(c)),
                }
            }
        }
    }
    let calls: Vec<_> = calls
        .into_iter()
        .filter_map(|p| p.function_call.map(|c| *c))
        .collect();
    if !calls.is_empty() {
        out.push(LiveMessage::FunctionCalls(calls));
    }
    out.push(LiveMessage::TurnComplete);
    out
}

#[async_trait]
impl LiveConnection for ScriptedLive {
    async fn send_history(&mut self, history: &[Content]) -> Result<(), LiveError> {
        if history.last().is_some_and(|c| c.role == Some(Role::User)) {
            self.next_turn()?;
        }
        Ok(())
    }

    async fn send_content(&mut self, _content: &Content) -> Result<(), LiveError> {
        self.next_turn()
    }

    async fn send_tool_responses(
        &mut self,
        responses: &[FunctionResponse],
    ) -> Result<(), LiveError> {
        if responses.is_empty() {
            return Ok(());
        }
        self.next_turn()
    }

    async fn send_realtime(&mut self, _input: &RealtimeInput) -> Result<(), LiveError> {
        Ok(())
    }

    async fn receive(&mut self) -> Option<Result<LiveMessage, LiveError>> {
        if self.closed {
            return None;
        }
        match self.pending.pop_front() {
            Some(m) => Some(Ok(m)),
            // Nothing to say until the next input: wait (the flow waits on the queue too).
            None => std::future::pending().await,
        }
    }

    fn turn_based(&self) -> bool {
        true
    }

    fn busy(&self) -> bool {
        !self.pending.is_empty()
    }

    async fn close(&mut self) {
        self.closed = true;
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scripted::Script;

    fn reply(yaml: &str) -> ScriptedReply {
        let script: Script = serde_json::from_value(serde_json::json!({
            "replies": {"a": [serde_json::from_str::<serde_json::Value>(yaml).unwrap()]}
        }))
        .unwrap();
        ScriptedReply::try_from(&script.replies["a"][0]).unwrap()
    }

    #[test]
    fn interrupted_text_stops_after_its_chunks() {
        let r = reply(r#"{"text": "abc", "chunks": ["a", "b", "c"], "interrupted_after": 2}"#);
        let msgs = turn(&r);
        assert_eq!(msgs.len(), 4);
        assert_eq!(msgs[2], LiveMessage::Interrupted);
        assert_eq!(msgs[3], LiveMessage::TurnComplete);
    }

    #[test]
    fn error_reply_is_one_message() {
        let r = reply(r#"{"error": {"code": "SAFETY", "message": "no"}}"#);
        assert!(matches!(&turn(&r)[..], [LiveMessage::Error { code, .. }] if code == "SAFETY"));
    }
}
