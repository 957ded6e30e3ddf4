//! The text live mode: a live connection over any model's streaming calls, for providers
//! without a live API of their own. Each user content (or set of tool responses) is one
//! streaming call with the conversation so far; its chunks become the turn's text, its
//! function calls the turn's calls, and the end of the call ends the turn.

use super::{LiveConnection, LiveError, LiveMessage, RealtimeInput};
use crate::event::{Content, FunctionResponse, Part, Role};
use crate::model::{CallContext, LlmRequest, LlmResponse, Model, ModelError, ResponseStream};
use async_trait::async_trait;
use futures::StreamExt;
use std::collections::VecDeque;
use std::sync::Arc;

/// A turn-based live connection over [`Model::generate`].
pub struct TextLive {
    model: Arc<dyn Model>,
    request: LlmRequest,
    agent: String,
    conversation: String,
    current: Option<ResponseStream>,
    streamed_text: bool,
    pending: VecDeque<LiveMessage>,
    closed: bool,
}

impl TextLive {
    /// A connection for the calling agent, with the system instruction and tools of
    /// `request`.
    pub fn new(model: Arc<dyn Model>, request: LlmRequest, call: CallContext<'_>) -> Self {
        TextLive {
            model,
            request,
            agent: call.agent_name.to_owned(),
            conversation: call.conversation.to_owned(),
            current: None,
            streamed_text: false,
            pending: VecDeque::new(),
            closed: false,
        }
    }

    /// Starts the model turn that answers the conversation so far.
    async fn start(&mut self) -> Result<(), LiveError> {
        let call = CallContext {
            agent_name: &self.agent,
            stream: true,
            conversation: &self.conversation,
            graph_node: false,
        };
        self.streamed_text = false;
        match self.model.generate(&self.request, call).await {
            Ok(stream) => self.current = Some(stream),
            Err(e @ ModelError::ScriptExhausted { .. }) => return Err(e.into()),
            // A failed call is an error reply of this turn; the live run goes on.
            Err(e) => self.pending.push_back(LiveMessage::Error {
                code: e.code().to_string(),
                message: Some(e.to_string()),
            }),
        }
        Ok(())
    }

    /// Turns one response of the call into messages; `true` when it ends the turn.
    fn absorb(&mut self, response: LlmResponse) -> bool {
        if let Some(code) = response.error_code {
            self.pending.push_back(LiveMessage::Error {
                code,
                message: response.error_message,
            });
            return true;
        }
        if let Some(usage) = response.usage_metadata.clone() {
            self.pending.push_back(LiveMessage::Usage(usage));
        }
        let Some(content) = response.content else {
            return false;
        };
        let partial = response.partial == Some(true);
        if partial {
            for p in &content.parts {
                if let Some(text) = &p.text {
                    self.streamed_text = true;
                    self.pending.push_back(LiveMessage::Text {
                        text: text.clone(),
                        thought: p.thought == Some(true),
                    });
                }
            }
            return false;
        }
        // The final response: its text was streamed already (when chunks came).
        if !self.streamed_text {
            for p in &content.parts {
                if let Some(text) = &p.text {
                    self.pending.push_back(LiveMessage::Text {
                        text: text.clone(),
                        thought: p.thought == Some(true),
                    });
                }
            }
        }
        let calls: Vec<_> = content
            .parts
            .iter()
            .filter_map(|p| p.function_call.as_deref().cloned())
            .collect();
        if !calls.is_empty() {
            self.pending.push_back(LiveMessage::FunctionCalls(calls));
        }
        Arc::make_mut(&mut self.request.contents).push(
            Content {
                role: Some(Role::Model),
                ..content
            }
            .into(),
        );
        true
    }
}

#[async_trait]
impl LiveConnection for TextLive {
    async fn send_history(&mut self, history: &[Content]) -> Result<(), LiveError> {
        self.request.contents = crate::model::contents_of(history.to_vec());
        if history.last().is_some_and(|c| c.role == Some(Role::User)) {
            self.start().await?;
        }
        Ok(())
    }

    async fn send_context(&mut self, turns: &[Content]) -> Result<(), LiveError> {
        Arc::make_mut(&mut self.request.contents).extend(turns.iter().cloned().map(Into::into));
        Ok(())
    }

    async fn send_content(&mut self, content: &Content) -> Result<(), LiveError> {
        Arc::make_mut(&mut self.request.contents).push(content.clone().into());
        self.start().await
    }

    async fn send_tool_responses(
        &mut self,
        responses: &[FunctionResponse],
    ) -> Result<(), LiveError> {
        let parts = responses
            .iter()
            .cloned()
            .map(Part::function_response)
            .collect();
        Arc::make_mut(&mut self.request.contents).push(Content::new(Role::User, parts).into());
        self.start().await
    }

    async fn send_realtime(&mut self, _input: &RealtimeInput) -> Result<(), LiveError> {
        // Text mode has no ears: realtime media is dropped (documented in docs/live.md).
        Ok(())
    }

    async fn receive(&mut self) -> Option<Result<LiveMessage, LiveError>> {
        loop {
            if self.closed {
                return None;
            }
            if let Some(m) = self.pending.pop_front() {
                return Some(Ok(m));
            }
            let Some(stream) = self.current.as_mut() else {
                return std::future::pending().await;
            };
            let ends = match stream.next().await {
                Some(Ok(response)) => self.absorb(response),
                Some(Err(e @ ModelError::ScriptExhausted { .. })) => return Some(Err(e.into())),
                Some(Err(e)) => {
                    self.pending.push_back(LiveMessage::Error {
                        code: e.code().to_string(),
                        message: Some(e.to_string()),
                    });
                    true
                }
                None => true,
            };
            if ends {
                self.current = None;
                if !matches!(self.pending.back(), Some(LiveMessage::Error { .. })) {
                    self.pending.push_back(LiveMessage::TurnComplete);
                }
            }
        }
    }

    fn turn_based(&self) -> bool {
        true
    }

    fn busy(&self) -> bool {
        self.current.is_some() || !self.pending.is_empty()
    }

    async fn close(&mut self) {
        self.closed = true;
        self.current = None;
        self.pending.clear();
    }
}
