//! Gemini Live: `BidiGenerateContent` over a websocket.
//!
//! The first message is `setup` (model, response modalities, system instruction, tools,
//! transcription switches, the resumption handle); the server answers `setupComplete`.
//! The client then sends `clientContent` (history and user turns), `realtimeInput`
//! (audio, video, activity signals) and `toolResponse`; the server sends
//! `serverContent` (model turn parts, transcriptions, `interrupted`, `turnComplete`),
//! `toolCall`, `toolCallCancellation`, `usageMetadata`, `goAway` and
//! `sessionResumptionUpdate`.
//!
//! Reconnection: on `goAway` the connection reconnects at once with the last resumption
//! handle; a connection that drops (anything but a normal close) reconnects with the
//! handle too, with bounded exponential backoff and jitter. Without a handle, nothing is
//! resumed. Nothing reconnects once the client has closed.

use super::{LiveConnection, LiveError, LiveMessage, LiveRunConfig, RealtimeInput};
use crate::event::{
    Blob, Content, FunctionCall, FunctionResponse, Role, Transcription, UsageMetadata,
};
use crate::model::LlmRequest;
use async_trait::async_trait;
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// The path of the BidiGenerateContent endpoint under the API's base URL.
const PATH: &str = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent";

/// How many times a dropped connection is retried before the run fails.
const MAX_RECONNECTS: u32 = 5;

/// Where and how to reach Gemini Live.
#[derive(Clone)]
pub struct GeminiLiveTarget {
    /// The API's base URL (`https://generativelanguage.googleapis.com`); `http` becomes
    /// `ws`, `https` becomes `wss`.
    pub base_url: String,
    /// The model, without the `models/` prefix.
    pub model: String,
    /// The `x-goog-api-key` header value (kept sensitive).
    pub key: HeaderValue,
}

impl GeminiLiveTarget {
    fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = if let Some(rest) = base.strip_prefix("https://") {
            format!("wss://{rest}")
        } else if let Some(rest) = base.strip_prefix("http://") {
            format!("ws://{rest}")
        } else {
            base.to_owned()
        };
        format!("{base}{PATH}")
    }
}

/// The `setup` message for `request` under `config`, without the resumption handle.
pub fn setup_message(
    model: &str,
    request: &LlmRequest,
    config: &LiveRunConfig,
) -> Map<String, Value> {
    let body = super::super::gemini::request_body(request);
    let mut setup = Map::new();
    setup.insert("model".into(), json!(format!("models/{model}")));
    let modalities: Vec<&str> = config
        .response_modalities
        .iter()
        .map(|m| m.as_str())
        .collect();
    setup.insert(
        "generationConfig".into(),
        json!({ "responseModalities": modalities }),
    );
    if let Some(si) = body.get("systemInstruction") {
        setup.insert("systemInstruction".into(), si.clone());
    }
    if let Some(tools) = body.get("tools") {
        setup.insert("tools".into(), tools.clone());
    }
    if config.input_transcription {
        setup.insert("inputAudioTranscription".into(), json!({}));
    }
    if config.output_transcription {
        setup.insert("outputAudioTranscription".into(), json!({}));
    }
    if config.session_resumption {
        setup.insert("sessionResumption".into(), json!({}));
    }
    setup
}

/// An open Gemini Live session.
pub struct GeminiLive {
    target: GeminiLiveTarget,
    setup: Map<String, Value>,
    resumption: bool,
    socket: Option<Socket>,
    handle: Option<String>,
    pending: VecDeque<LiveMessage>,
    closed: bool,
}

fn connection_error(e: impl std::error::Error + Send + Sync + 'static) -> LiveError {
    LiveError::Connection(Box::new(e))
}

impl GeminiLive {
    /// Connects and completes the setup handshake.
    ///
    /// # Errors
    /// The endpoint cannot be reached, refuses the setup, or answers something else.
    pub async fn connect(
        target: GeminiLiveTarget,
        request: &LlmRequest,
        config: &LiveRunConfig,
    ) -> Result<Self, LiveError> {
        let setup = setup_message(&target.model, request, config);
        let socket = open(&target, &setup, None).await?;
        Ok(GeminiLive {
            target,
            setup,
            resumption: config.session_resumption,
            socket: Some(socket),
            handle: None,
            pending: VecDeque::new(),
            closed: false,
        })
    }

    async fn send(&mut self, message: Value) -> Result<(), LiveError> {
        let Some(socket) = self.socket.as_mut() else {
            return Ok(());
        };
        socket
            .send(Message::text(message.to_string()))
            .await
            .map_err(connection_error)
    }

    /// Reconnects with the last resumption handle, retrying with backoff and jitter.
    async fn reconnect(&mut self) -> Result<(), LiveError> {
        if let Some(mut old) = self.socket.take() {
            let _ = old.close(None).await;
        }
        let mut last = None;
        for attempt in 0..MAX_RECONNECTS {
            if attempt > 0 {
                tokio::time::sleep(backoff(attempt)).await;
            }
            match open(&self.target, &self.setup, self.handle.as_deref()).await {
                Ok(socket) => {
                    self.socket = Some(socket);
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
        }
        Err(LiveError::Reconnect {
            attempts: MAX_RECONNECTS,
            source: Box::new(last.unwrap_or(LiveError::Closed {
                code: 1006,
                reason: "no connection".into(),
            })),
        })
    }

    /// Whether a dropped connection can be resumed.
    fn resumable(&self) -> bool {
        self.resumption && self.handle.is_some() && !self.closed
    }

    /// Reads one server message into `pending`; `Ok(false)` when the session ended.
    async fn read(&mut self) -> Result<bool, LiveError> {
        let Some(socket) = self.socket.as_mut() else {
            return Ok(false);
        };
        let frame = socket.next().await;
        let text = match frame {
            Some(Ok(Message::Text(t))) => t.as_str().to_owned(),
            Some(Ok(Message::Binary(b))) => String::from_utf8_lossy(&b).into_owned(),
            Some(Ok(Message::Close(frame))) => return self.closed_by_server(frame).await,
            Some(Ok(_)) => return Ok(true),
            Some(Err(e)) => {
                if self.resumable() {
                    self.reconnect().await?;
                    return Ok(true);
                }
                return Err(connection_error(e));
            }
            None => return self.closed_by_server(None).await,
        };
        let message: ServerMessage = serde_json::from_str(&text).map_err(LiveError::BadMessage)?;
        let go_away = message.go_away.is_some();
        self.absorb(message);
        if go_away && self.resumable() {
            // Proactively: the server is about to drop us.
            self.reconnect().await?;
        }
        Ok(true)
    }

    async fn closed_by_server(&mut self, frame: Option<CloseFrame>) -> Result<bool, LiveError> {
        let (code, reason) = frame
            .map(|f| (u16::from(f.code), f.reason.as_str().to_owned()))
            .unwrap_or((1006, String::new()));
        if code == u16::from(CloseCode::Normal) || self.closed {
            self.socket = None;
            return Ok(false);
        }
        if self.resumable() {
            self.reconnect().await?;
            return Ok(true);
        }
        self.socket = None;
        Err(LiveError::Closed { code, reason })
    }

    fn absorb(&mut self, m: ServerMessage) {
        if let Some(content) = m.server_content {
            if let Some(t) = content.input_transcription {
                self.pending.push_back(LiveMessage::InputTranscription(t));
            }
            for part in content.model_turn.map(|t| t.parts).unwrap_or_default() {
                if let Some(text) = part.text {
                    self.pending.push_back(LiveMessage::Text {
                        text,
                        thought: part.thought == Some(true),
                    });
                } else if let Some(blob) = part.inline_data {
                    self.pending.push_back(LiveMessage::Media(blob));
                }
            }
            if let Some(t) = content.output_transcription {
                self.pending.push_back(LiveMessage::OutputTranscription(t));
            }
            if content.interrupted == Some(true) {
                self.pending.push_back(LiveMessage::Interrupted);
            }
            if content.generation_complete == Some(true) {
                self.pending.push_back(LiveMessage::GenerationComplete);
            }
            if content.turn_complete == Some(true) {
                self.pending.push_back(LiveMessage::TurnComplete);
            }
        }
        if let Some(call) = m.tool_call.filter(|c| !c.function_calls.is_empty()) {
            self.pending
                .push_back(LiveMessage::FunctionCalls(call.function_calls));
        }
        if let Some(c) = m.tool_call_cancellation {
            self.pending
                .push_back(LiveMessage::ToolCallCancellation(c.ids));
        }
        if let Some(u) = m.usage_metadata {
            self.pending.push_back(LiveMessage::Usage(UsageMetadata {
                prompt_token_count: u.prompt_token_count,
                candidates_token_count: u.response_token_count,
                total_token_count: u.total_token_count,
            }));
        }
        if let Some(update) = m.session_resumption_update {
            let resumable = update.resumable == Some(true);
            if resumable && update.new_handle.is_some() {
                self.handle.clone_from(&update.new_handle);
            }
            self.pending.push_back(LiveMessage::Resumption {
                handle: update.new_handle,
                resumable,
            });
        }
    }
}

/// Backoff before reconnect attempt `n` (1-based): 200 ms doubling, capped at 5 s, with
/// up to 50% random jitter so that many clients do not retry in step.
fn backoff(n: u32) -> Duration {
    let base = 200u64.saturating_mul(1 << n.min(5)).min(5_000);
    let jitter = uuid::Uuid::new_v4().as_u128() as u64 % (base / 2 + 1);
    Duration::from_millis(base + jitter)
}

/// Opens a socket and completes the setup (with `handle` when resuming).
async fn open(
    target: &GeminiLiveTarget,
    setup: &Map<String, Value>,
    handle: Option<&str>,
) -> Result<Socket, LiveError> {
    let endpoint = target.endpoint();
    let connect_error = |source: Box<dyn std::error::Error + Send + Sync>| LiveError::Connect {
        endpoint: crate::redact::url(&endpoint),
        source,
    };
    let mut request = endpoint
        .as_str()
        .into_client_request()
        .map_err(|e| connect_error(Box::new(e)))?;
    request
        .headers_mut()
        .insert("x-goog-api-key", target.key.clone());
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(|e| connect_error(Box::new(e)))?;
    let mut setup = setup.clone();
    if let Some(h) = handle {
        setup.insert("sessionResumption".into(), json!({ "handle": h }));
    }
    socket
        .send(Message::text(json!({ "setup": setup }).to_string()))
        .await
        .map_err(connection_error)?;
    // The server answers setupComplete before anything else.
    loop {
        match socket.next().await {
            Some(Ok(Message::Text(t))) => {
                let m: ServerMessage =
                    serde_json::from_str(t.as_str()).map_err(LiveError::BadMessage)?;
                if m.setup_complete.is_some() {
                    return Ok(socket);
                }
            }
            Some(Ok(Message::Binary(b))) => {
                let m: ServerMessage = serde_json::from_slice(&b).map_err(LiveError::BadMessage)?;
                if m.setup_complete.is_some() {
                    return Ok(socket);
                }
            }
            Some(Ok(Message::Close(frame))) => {
                let (code, reason) = frame
                    .map(|f| (u16::from(f.code), f.reason.as_str().to_owned()))
                    .unwrap_or((1006, String::new()));
                return Err(LiveError::Closed { code, reason });
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(connection_error(e)),
            None => {
                return Err(LiveError::Closed {
                    code: 1006,
                    reason: "closed during setup".into(),
                });
            }
        }
    }
}

#[async_trait]
impl LiveConnection for GeminiLive {
    async fn send_history(&mut self, history: &[Content]) -> Result<(), LiveError> {
        if history.is_empty() {
            return Ok(());
        }
        let turn_complete = history.last().is_some_and(|c| c.role == Some(Role::User));
        self.send(json!({"clientContent": {"turns": history, "turnComplete": turn_complete}}))
            .await
    }

    async fn send_content(&mut self, content: &Content) -> Result<(), LiveError> {
        self.send(json!({"clientContent": {"turns": [content], "turnComplete": true}}))
            .await
    }

    async fn send_tool_responses(
        &mut self,
        responses: &[FunctionResponse],
    ) -> Result<(), LiveError> {
        self.send(json!({"toolResponse": {"functionResponses": responses}}))
            .await
    }

    async fn send_realtime(&mut self, input: &RealtimeInput) -> Result<(), LiveError> {
        let body = match input {
            RealtimeInput::Blob(blob) if blob.mime_type.starts_with("audio/") => {
                json!({"audio": {"data": blob.data, "mimeType": blob.mime_type}})
            }
            RealtimeInput::Blob(blob) => {
                json!({"video": {"data": blob.data, "mimeType": blob.mime_type}})
            }
            RealtimeInput::ActivityStart => json!({"activityStart": {}}),
            RealtimeInput::ActivityEnd => json!({"activityEnd": {}}),
            RealtimeInput::AudioStreamEnd => json!({"audioStreamEnd": true}),
        };
        self.send(json!({ "realtimeInput": body })).await
    }

    async fn receive(&mut self) -> Option<Result<LiveMessage, LiveError>> {
        loop {
            if let Some(m) = self.pending.pop_front() {
                return Some(Ok(m));
            }
            if self.closed {
                return None;
            }
            match self.read().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
    }

    fn turn_based(&self) -> bool {
        false
    }

    fn busy(&self) -> bool {
        false
    }

    async fn close(&mut self) {
        self.closed = true;
        if let Some(mut socket) = self.socket.take() {
            let _ = socket.close(None).await;
        }
    }
}

/// One message from the server, as far as adk-flow reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerMessage {
    setup_complete: Option<Value>,
    server_content: Option<ServerContent>,
    tool_call: Option<ToolCall>,
    tool_call_cancellation: Option<ToolCallCancellation>,
    usage_metadata: Option<Usage>,
    go_away: Option<Value>,
    session_resumption_update: Option<ResumptionUpdate>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerContent {
    model_turn: Option<ModelTurn>,
    turn_complete: Option<bool>,
    interrupted: Option<bool>,
    generation_complete: Option<bool>,
    input_transcription: Option<Transcription>,
    output_transcription: Option<Transcription>,
}

#[derive(Debug, Default, Deserialize)]
struct ModelTurn {
    #[serde(default)]
    parts: Vec<ServerPart>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerPart {
    text: Option<String>,
    thought: Option<bool>,
    inline_data: Option<Blob>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolCall {
    #[serde(default)]
    function_calls: Vec<FunctionCall>,
}

#[derive(Debug, Default, Deserialize)]
struct ToolCallCancellation {
    #[serde(default)]
    ids: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    prompt_token_count: Option<u64>,
    response_token_count: Option<u64>,
    total_token_count: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResumptionUpdate {
    new_handle: Option<String>,
    resumable: Option<bool>,
}
