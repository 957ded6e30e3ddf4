//! Live (bidirectional) model connections: what a client sends into a live run
//! ([`LiveRequest`] through a [`LiveRequestQueue`]), what a live model sends back
//! ([`LiveMessage`]), and the [`LiveConnection`] every live-capable model opens.
//!
//! Connections report raw model output (text chunks, function calls, turn boundaries,
//! transcriptions); turning them into ADK's events (partial chunks, the merged text, the
//! bare `turnComplete`) is the live flow's job, in one place for every model.
//!
//! Implementations: [`scripted`] (a `--script` file, turn by turn), [`text`] (a text live
//! mode over any [`Model`]'s streaming calls), [`gemini`] (Gemini Live over a websocket).

pub mod gemini;
mod queue;
pub mod scripted;
pub mod text;

pub use queue::{LiveRequest, LiveRequestQueue, LiveRequestReceiver, RealtimeInput};

use super::{CallContext, LlmRequest, Model, ModelError};
use crate::event::{Blob, Content, FunctionCall, FunctionResponse, Transcription, UsageMetadata};
use async_trait::async_trait;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

/// What the model answers with in a live run (`response_modalities`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Modality {
    /// Text parts.
    Text,
    /// Spoken audio (PCM 24 kHz), ADK's default.
    #[default]
    Audio,
}

impl Modality {
    /// The wire name (`TEXT`, `AUDIO`).
    pub fn as_str(self) -> &'static str {
        match self {
            Modality::Text => "TEXT",
            Modality::Audio => "AUDIO",
        }
    }
}

/// Settings of one live run (ADK's `RunConfig` for `run_live`).
#[derive(Debug, Clone)]
pub struct LiveRunConfig {
    /// How the model answers; ADK's default is audio.
    pub response_modalities: Vec<Modality>,
    /// Ask the model to transcribe what the user says.
    pub input_transcription: bool,
    /// Ask the model to transcribe what it says aloud.
    pub output_transcription: bool,
    /// End the run after this long.
    pub max_duration: Option<Duration>,
    /// Ask the model for resumption handles and reconnect with them (on `goAway` or a
    /// dropped connection).
    pub session_resumption: bool,
    /// Save the audio of each turn as artifacts, with a file reference to each stored in
    /// the session (ADK's `save_live_blob`).
    pub save_live_blob: bool,
    /// Upper bound on model turns in the run; 0 means unbounded.
    pub max_llm_calls: u32,
}

impl Default for LiveRunConfig {
    fn default() -> Self {
        LiveRunConfig {
            response_modalities: vec![Modality::Audio],
            input_transcription: true,
            output_transcription: true,
            max_duration: None,
            session_resumption: false,
            save_live_blob: false,
            max_llm_calls: 500,
        }
    }
}

/// One thing a live model said or signalled.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveMessage {
    /// A chunk of text (of reasoning when `thought`).
    Text {
        /// The chunk.
        text: String,
        /// Reasoning text rather than the answer.
        thought: bool,
    },
    /// A chunk of spoken audio or other inline media.
    Media(Blob),
    /// Function calls the model wants run; their responses are sent back.
    FunctionCalls(Vec<FunctionCall>),
    /// The model withdrew these calls (the user spoke over it).
    ToolCallCancellation(Vec<String>),
    /// Transcription of what the user said.
    InputTranscription(Transcription),
    /// Transcription of what the model said.
    OutputTranscription(Transcription),
    /// The user spoke over the model; what it was saying stops here.
    Interrupted,
    /// The model has finished generating (audio may still be playing).
    GenerationComplete,
    /// The model's turn is over.
    TurnComplete,
    /// Token usage so far.
    Usage(UsageMetadata),
    /// A reply that is an error (blocked, refused); the connection goes on.
    Error {
        /// errorCode of the event.
        code: String,
        /// errorMessage of the event.
        message: Option<String>,
    },
    /// A new session-resumption handle.
    Resumption {
        /// The handle to reconnect with, if the session can be resumed now.
        handle: Option<String>,
        /// Whether the session can be resumed now.
        resumable: bool,
    },
}

/// Why a live connection failed.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// A model failure (the script ran out, a provider call of the text live mode failed).
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The websocket could not be opened.
    #[error("cannot open the live connection to {endpoint}")]
    Connect {
        /// Where (secrets redacted).
        endpoint: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The websocket failed during the exchange.
    #[error("the live connection failed")]
    Connection(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The server closed the connection with an error status.
    #[error("the live server closed the connection ({code}: {reason})")]
    Closed {
        /// The websocket close code.
        code: u16,
        /// The server's reason.
        reason: String,
    },
    /// The server sent something that is not a BidiGenerateContent message.
    #[error("the live server sent a message that is not BidiGenerateContent JSON")]
    BadMessage(#[source] serde_json::Error),
    /// Reconnecting (after goAway or a dropped connection) kept failing.
    #[error("gave up reconnecting after {attempts} attempts")]
    Reconnect {
        /// How many attempts were made.
        attempts: u32,
        /// The last failure.
        #[source]
        source: Box<LiveError>,
    },
}

impl LiveError {
    /// The errorCode of the event that reports this failure.
    pub fn code(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            LiveError::Model(e) => return e.code(),
            LiveError::Connect { .. } => "LIVE_CONNECT",
            LiveError::Connection(_) => "LIVE_CONNECTION",
            LiveError::Closed { .. } => "LIVE_CLOSED",
            LiveError::BadMessage(_) => "LIVE_BAD_MESSAGE",
            LiveError::Reconnect { .. } => "LIVE_RECONNECT",
        })
    }
}

/// An open live connection of one agent to its model.
///
/// `receive` must be cancel-safe: the live flow waits on it and on the client's queue at
/// once, and drops whichever loses.
#[async_trait]
pub trait LiveConnection: Send {
    /// Sends the conversation so far, right after connecting; the model answers when it
    /// ends with a user-role content.
    async fn send_history(&mut self, history: &[Content]) -> Result<(), LiveError>;
    /// Adds turns to the conversation without asking for an answer (a user turn a
    /// before_model callback answered, with that answer). By default: as history that
    /// ends with the model.
    async fn send_context(&mut self, turns: &[Content]) -> Result<(), LiveError> {
        self.send_history(turns).await
    }
    /// Sends a user content (one user turn).
    async fn send_content(&mut self, content: &Content) -> Result<(), LiveError>;
    /// Sends the responses of function calls the model made.
    async fn send_tool_responses(
        &mut self,
        responses: &[FunctionResponse],
    ) -> Result<(), LiveError>;
    /// Sends realtime input (audio, activity signals).
    async fn send_realtime(&mut self, input: &RealtimeInput) -> Result<(), LiveError>;
    /// The next message of the model; `None` once the connection has ended.
    async fn receive(&mut self) -> Option<Result<LiveMessage, LiveError>>;
    /// Whether the client's next input should wait until the model's turn has settled
    /// (turn-based connections: the scripted model, the text live mode). Realtime
    /// connections take input at any time.
    fn turn_based(&self) -> bool;
    /// Whether a model turn is under way (only meaningful when [`Self::turn_based`]).
    fn busy(&self) -> bool;
    /// Closes the connection; later calls do nothing.
    async fn close(&mut self);
}

/// Opens the live connection of the calling agent to `model`: the model's own live mode
/// when it has one, else the text live mode over its streaming calls.
///
/// # Errors
/// The model's live endpoint cannot be reached.
pub async fn connect(
    model: &Arc<dyn Model>,
    request: &LlmRequest,
    config: &LiveRunConfig,
    call: CallContext<'_>,
) -> Result<Box<dyn LiveConnection>, LiveError> {
    match model.connect_live(request, config, call).await {
        Some(connection) => connection,
        None => Ok(Box::new(text::TextLive::new(
            Arc::clone(model),
            request.clone(),
            call,
        ))),
    }
}
