//! `GET /run_live`: a live run over a websocket, speaking ADK's api_server protocol.
//!
//! Query: `app_name`, `user_id`, `session_id` (camelCase accepted too), `modalities`
//! (repeatable, `TEXT`/`AUDIO`) and `enable_session_resumption`, each over the
//! workflow's `live` settings (modalities default to `AUDIO`, as in ADK). Each text frame from the client is one LiveRequest JSON:
//! `{"content": Content}`, `{"blob": {"mime_type", "data"}}`, `{"activity_start": {}}`,
//! `{"activity_end": {}}`, `{"audio_stream_end": true}` or `{"close": true}`, in
//! snake_case or camelCase. Each event the run yields goes back as one text frame of
//! event JSON; the client's own content is never echoed.
//!
//! Closing codes: 1000 when the run ends; 1002 "Session not found" for an unknown
//! session (after accepting, as ADK); 1007 with the reason for a frame that is not a
//! LiveRequest (ADK silently stops reading); 1003 for a binary frame; 1009 for a frame
//! over the size cap; 1011 when the run fails, with the error (at most 123 bytes).
//! Before the upgrade: 503 when the server already holds its maximum of live sessions,
//! or shuts down. The server pings every 20 s. A client that goes away closes the queue:
//! the run ends and what it committed stays.
//!
//! Shutdown: a live socket is tracked like a run. When shutdown starts it stops reading
//! the client's frames; a model turn under way may finish within the grace period (the
//! queue closes once it has), then the socket closes with 1001. When the grace period is
//! over the run is stopped where it is; what it committed stays.

use super::AppState;
use super::error::ApiError;
use crate::event::{Blob, Content, Role};
use crate::live::{LiveRequest, LiveRequestQueue, Modality, RealtimeInput};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State};
use axum::response::Response;
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The largest frame a client may send (an audio chunk is far smaller).
pub const MAX_FRAME_BYTES: usize = 1 << 20;

/// How often the server pings an idle client.
const PING_EVERY: Duration = Duration::from_secs(20);

/// The most live sessions the server holds at once, unless configured.
pub const DEFAULT_MAX_LIVE_SESSIONS: usize = 32;

/// Counts live sessions against their cap.
pub(crate) struct LiveSessions {
    open: Arc<AtomicUsize>,
    max: usize,
}

impl LiveSessions {
    pub(crate) fn new(max: usize) -> Self {
        LiveSessions {
            open: Arc::new(AtomicUsize::new(0)),
            max,
        }
    }

    /// A slot, or `None` when every one is taken.
    fn acquire(&self) -> Option<Slot> {
        let taken = self
            .open
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok();
        taken.then(|| Slot(Arc::clone(&self.open)))
    }
}

/// One taken live session; released when dropped.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The query of `/run_live`.
#[derive(Debug, Default)]
struct LiveQuery {
    app_name: String,
    user_id: String,
    session_id: String,
    /// Empty: the workflow's `live.response_modalities`, else AUDIO.
    modalities: Vec<Modality>,
    /// Absent: the workflow's `live.session_resumption`.
    session_resumption: Option<bool>,
}

/// A query value with `+` and `%XX` decoded (an invalid escape stays as written).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |k: usize| bytes.get(k).and_then(|c| (*c as char).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
            (b'+', _, _) => out.push(b' '),
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_query(raw: Option<&str>) -> Result<LiveQuery, ApiError> {
    let mut q = LiveQuery::default();
    for pair in raw.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let v = percent_decode(v);
        match percent_decode(k).as_str() {
            "app_name" | "appName" => q.app_name = v,
            "user_id" | "userId" => q.user_id = v,
            "session_id" | "sessionId" => q.session_id = v,
            "modalities" => match v.to_ascii_uppercase().as_str() {
                "TEXT" => q.modalities.push(Modality::Text),
                "AUDIO" => q.modalities.push(Modality::Audio),
                _ => {
                    return Err(ApiError::BadRequest(format!(
                        "modalities: `{v}` is neither TEXT nor AUDIO"
                    )));
                }
            },
            "enable_session_resumption" | "enableSessionResumption" => {
                q.session_resumption = Some(matches!(v.as_str(), "true" | "True" | "1"));
            }
            _ => {}
        }
    }
    for (name, value) in [
        ("app_name", &q.app_name),
        ("user_id", &q.user_id),
        ("session_id", &q.session_id),
    ] {
        if value.is_empty() {
            return Err(ApiError::BadRequest(format!(
                "the query needs {name} (app_name, user_id and session_id)"
            )));
        }
    }
    Ok(q)
}

/// One client frame as a LiveRequest, or why it is not one.
pub(crate) fn parse_request(text: &str) -> Result<LiveRequest, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err("a LiveRequest is a JSON object".into());
    };
    let get = |snake: &str, camel: &str| map.get(snake).or_else(|| map.get(camel)).cloned();
    if let Some(content) = get("content", "content").filter(|v| !v.is_null()) {
        let mut content: Content =
            serde_json::from_value(content).map_err(|e| format!("content: {e}"))?;
        content.role.get_or_insert(Role::User);
        return Ok(LiveRequest::Content(content));
    }
    if let Some(blob) = get("blob", "blob").filter(|v| !v.is_null()) {
        let blob: Blob = serde_json::from_value(blob).map_err(|e| format!("blob: {e}"))?;
        return Ok(LiveRequest::Realtime(RealtimeInput::Blob(blob)));
    }
    if get("activity_start", "activityStart").is_some_and(|v| !v.is_null()) {
        return Ok(LiveRequest::Realtime(RealtimeInput::ActivityStart));
    }
    if get("activity_end", "activityEnd").is_some_and(|v| !v.is_null()) {
        return Ok(LiveRequest::Realtime(RealtimeInput::ActivityEnd));
    }
    if get("audio_stream_end", "audioStreamEnd") == Some(Value::Bool(true)) {
        return Ok(LiveRequest::Realtime(RealtimeInput::AudioStreamEnd));
    }
    if get("close", "close") == Some(Value::Bool(true)) {
        return Ok(LiveRequest::Close);
    }
    Err("no content, blob, activity_start, activity_end, audio_stream_end or close".into())
}

/// `GET /run_live`: checks the query and the session cap, then upgrades.
pub async fn run_live(
    State(s): State<AppState>,
    RawQuery(raw): RawQuery,
    ws: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let q = parse_query(raw.as_deref())?;
    if s.runs.draining() {
        return Err(ApiError::Unavailable("the server is shutting down".into()));
    }
    let version = s.apps.version(&q.app_name).await?;
    let Some(slot) = s.live.acquire() else {
        return Err(ApiError::Unavailable(format!(
            "the server already holds its {} live sessions; try again later",
            s.live.max
        )));
    };
    Ok(ws
        .max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| async move {
            // Tracked as a run: shutdown waits for the socket to close.
            let tracked = s.runs.track(serve_socket(socket, s.clone(), version, q));
            tracked.await;
            drop(slot);
        }))
}

fn close_frame(code: u16, reason: &str) -> Message {
    // A close reason is at most 123 bytes; cut at a character boundary.
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    Message::Close(Some(CloseFrame {
        code,
        reason: reason[..end].to_owned().into(),
    }))
}

async fn serve_socket(
    mut socket: WebSocket,
    s: AppState,
    version: Arc<super::apps::AppVersion>,
    q: LiveQuery,
) {
    // The live run holds the session's turn: a /run on it waits until the run ends. The
    // session is read once the turn is held, so no other replica's turn is half seen.
    let _turn = match s
        .runs
        .lock_session(&*s.sessions, &q.app_name, &q.user_id, &q.session_id)
        .await
    {
        Ok(turn) => turn,
        Err(ApiError::Unavailable(_)) => {
            let _ = socket
                .send(close_frame(1001, "the server is shutting down"))
                .await;
            return;
        }
        Err(_) => {
            let _ = socket
                .send(close_frame(1011, "cannot hold the session's turn"))
                .await;
            return;
        }
    };
    let session = match s
        .sessions
        .get_session(&q.app_name, &q.user_id, &q.session_id)
        .await
    {
        Ok(Some(session)) => session,
        Ok(None) => {
            let _ = socket.send(close_frame(1002, "Session not found")).await;
            return;
        }
        Err(e) => {
            tracing::error!("run_live: cannot read the session: {e}");
            let _ = socket
                .send(close_frame(1011, "cannot read the session"))
                .await;
            return;
        }
    };
    // The workflow's `live` settings, the query over them.
    let mut config = version.app.live_run_config(Modality::Audio);
    if !q.modalities.is_empty() {
        config.response_modalities = q.modalities;
    }
    if let Some(on) = q.session_resumption {
        config.session_resumption = on;
    }
    config.max_llm_calls = s.options.limits.max_llm_calls;
    let queue = LiveRequestQueue::new();
    let mut events = version.app.runner().run_live(session, &queue, config);
    let (mut tx, mut rx) = socket.split();
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    // Once the client is gone (or refused), events are still drained so the run ends
    // and commits; nothing more is sent.
    let mut client_open = true;
    // On shutdown the socket stops taking input; the model turn under way may finish
    // within the grace period, then the queue closes and the socket with 1001.
    let (draining, cancel) = s.runs.shutdown_signals();
    let mut stopping = false;
    let mut turn = TurnWatch::default();
    loop {
        tokio::select! {
            item = events.next() => match item {
                Some(Ok(event)) => {
                    turn.see(&event);
                    if stopping && !turn.open {
                        queue.close();
                    }
                    if client_open {
                        let text = serde_json::to_string(&*event).unwrap_or_default();
                        if tx.send(Message::Text(text.into())).await.is_err() {
                            client_open = false;
                            queue.close();
                        }
                    }
                }
                Some(Err(err)) => {
                    if client_open {
                        let _ = tx.send(close_frame(1011, &crate::errors::chain(&err))).await;
                    }
                    return;
                }
                None => {
                    if client_open {
                        let close = if stopping {
                            close_frame(1001, "the server is shutting down")
                        } else {
                            close_frame(1000, "")
                        };
                        let _ = tx.send(close).await;
                        await_close(&mut rx).await;
                    }
                    return;
                }
            },
            () = draining.cancelled(), if !stopping => {
                stopping = true;
                if !turn.open {
                    queue.close();
                }
            },
            () = cancel.cancelled() => {
                // The grace period is over: the run stops here (dropping it), what it
                // committed stays.
                if client_open {
                    let _ = tx.send(close_frame(1001, "the server is shutting down")).await;
                    await_close(&mut rx).await;
                }
                return;
            },
            // While stopping, frames are still read (so that nothing is left unread when
            // the socket closes) but their requests are dropped.
            frame = rx.next(), if client_open => {
                let refuse = match frame {
                    Some(Ok(Message::Text(text))) => match parse_request(text.as_str()) {
                        Ok(request) => {
                            // The token, not `stopping`: select! may read this frame
                            // before it notices the drain that began first.
                            if !draining.is_cancelled() {
                                queue.send(request);
                            }
                            None
                        }
                        Err(why) => Some(close_frame(1007, &format!("not a LiveRequest: {why}"))),
                    },
                    Some(Ok(Message::Binary(_))) => {
                        Some(close_frame(1003, "binary frames are not LiveRequests; send JSON text frames"))
                    }
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => None,
                    Some(Err(e)) if is_too_large(&e) => {
                        Some(close_frame(1009, &format!("frames are limited to {MAX_FRAME_BYTES} bytes")))
                    }
                    // The client closed or dropped: the run ends.
                    Some(Ok(Message::Close(_)) | Err(_)) | None => {
                        client_open = false;
                        queue.close();
                        None
                    }
                };
                if let Some(close) = refuse {
                    let _ = tx.send(close).await;
                    client_open = false;
                    queue.close();
                }
            },
            _ = ping.tick(), if client_open => {
                if tx.send(Message::Ping(Default::default())).await.is_err() {
                    client_open = false;
                    queue.close();
                }
            },
        }
    }
}

/// Whether the model is in the middle of something, from the events it yields: a turn
/// opens with its first text, audio or function call, and ends with `turnComplete`,
/// `interrupted` or an error. A turn that answered with function calls is not over when
/// the responses went back: the model owes an answer to them (or, after a handover, the
/// next agent speaks), so a `turnComplete` before that answer does not end it.
#[derive(Default)]
struct TurnWatch {
    open: bool,
    owed: bool,
}

impl TurnWatch {
    fn see(&mut self, event: &crate::event::Event) {
        if event.interrupted == Some(true) || event.error.is_some() {
            self.open = false;
            self.owed = false;
            return;
        }
        if event.turn_complete == Some(true) {
            self.open = self.owed;
            return;
        }
        if event.is_from_user() {
            return;
        }
        let parts = event.content.iter().flat_map(|c| c.parts.iter());
        for p in parts {
            if p.function_response.is_some() {
                self.open = true;
                self.owed = true;
            } else if p.function_call.is_some() {
                self.open = true;
            } else if p.text.is_some() || p.inline_data.is_some() {
                self.open = true;
                self.owed = false;
            }
        }
        if event.meta().output_transcription.is_some() {
            self.open = true;
            self.owed = false;
        }
    }
}

/// After the server's close frame: reads what the client still sends until it answers
/// the close (at most 2 s), so the connection ends with a close handshake rather than a
/// reset that could lose the frames still in flight to the client.
async fn await_close(rx: &mut futures::stream::SplitStream<WebSocket>) {
    let drain = async { while let Some(Ok(_)) = rx.next().await {} };
    let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
}

/// Whether the client's frame was over the size cap.
fn is_too_large(e: &axum::Error) -> bool {
    use tokio_tungstenite::tungstenite::Error;
    std::error::Error::source(e)
        .and_then(|s| s.downcast_ref::<Error>())
        .is_some_and(|e| matches!(e, Error::Capacity(_)))
}
