//! `POST /run` (every event as one JSON array) and `POST /run_sse` (one `data:` frame per
//! event as it is committed).
//!
//! # SSE framing
//!
//! Each event is one frame, `data: <event JSON>\n\n`, written as one piece; nothing else
//! travels on the stream (no `event:`, `id:`, comments or heartbeats) and it closes when
//! the run ends. The user's own event is committed but not sent. An event with both
//! content and an `artifactDelta` is sent twice with the same id, first with the content
//! and an empty delta, then without content and with the delta, as ADK does for its web
//! UI (not when the request answers a function call: `functionCallEventId`). A run that
//! ends early sends one last frame `data: {"error": "<message>"}`.

use super::AppState;
use super::error::ApiError;
use super::runs::{Frame, RunEnd};
use super::wire::{JsonBody, RunAgentRequest, json_bytes};
use crate::event::Event;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::mpsc;

/// `POST /run`: runs the turn and answers every event it produced, partial ones included.
pub async fn run(
    State(s): State<AppState>,
    JsonBody(req): JsonBody<RunAgentRequest>,
) -> Result<Response, ApiError> {
    let version = s.apps.version(&req.app_name).await?;
    let mut frames = s.runs.start(version, &s.sessions, req).await?;
    let mut out = Vec::with_capacity(4096);
    out.push(b'[');
    let mut first = true;
    while let Some(frame) = frames.recv().await {
        match frame {
            Frame::Event(event) => {
                if !first {
                    out.push(b',');
                }
                first = false;
                write_event(&mut out, &event);
            }
            // The Runner committed and sent an error event before; it is in the list.
            Frame::Error(RunEnd::Failed(_)) => {}
            Frame::Error(end @ RunEnd::TimedOut(_)) => {
                return Err(ApiError::Timeout(end.message()));
            }
            Frame::Error(end @ RunEnd::ShutDown) => {
                return Err(ApiError::Unavailable(end.message()));
            }
        }
    }
    out.push(b']');
    Ok(json_bytes(out))
}

/// `POST /run_sse`: the events as server-sent events (see the module docs).
pub async fn run_sse(
    State(s): State<AppState>,
    JsonBody(req): JsonBody<RunAgentRequest>,
) -> Result<Response, ApiError> {
    let split = req.function_call_event_id.is_none();
    let version = s.apps.version(&req.app_name).await?;
    let frames = s.runs.start(version, &s.sessions, req).await?;
    let body = Body::from_stream(sse_frames(frames, split));
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response())
}

fn write_event(out: &mut Vec<u8>, event: &Event) {
    // INVARIANT: events hold JSON values and string keys only.
    let _ = serde_json::to_writer(&mut *out, event);
}

fn frame(event: &Event) -> Bytes {
    let mut out = Vec::with_capacity(512);
    out.extend_from_slice(b"data: ");
    write_event(&mut out, event);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The frames of one event: one, or two for the artifact split.
fn event_frames(event: &Arc<Event>, split: bool) -> Vec<Bytes> {
    let has_parts = event.content.as_ref().is_some_and(|c| !c.parts.is_empty());
    if split && has_parts && !event.actions.artifact_delta.is_empty() {
        let mut content = Event::clone(event);
        content.actions.artifact_delta.clear();
        let mut artifact = Event::clone(event);
        artifact.content = None;
        return vec![frame(&content), frame(&artifact)];
    }
    vec![frame(event)]
}

fn error_frame(message: &str) -> Bytes {
    let body = serde_json::json!({ "error": message });
    Bytes::from(format!("data: {body}\n\n"))
}

/// The SSE body: each frame one chunk, in order, until the run ends.
fn sse_frames(
    mut frames: mpsc::Receiver<Frame>,
    split: bool,
) -> impl futures::Stream<Item = Result<Bytes, Infallible>> {
    async_stream::stream! {
        while let Some(frame) = frames.recv().await {
            let chunks = match frame {
                Frame::Event(event) => event_frames(&event, split),
                Frame::Error(end) => vec![error_frame(&end.message())],
            };
            for chunk in chunks {
                yield Ok(chunk);
            }
        }
    }
}
