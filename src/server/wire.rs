//! The JSON shapes of the API: request bodies (camelCase, snake_case accepted, unknown
//! keys ignored, as pydantic's `populate_by_name` models read them) and the session
//! object as ADK writes it.

use super::error::ApiError;
use crate::event::{Content, Event, StateMap};
use crate::session::Session;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::sync::Arc;

/// A JSON request body; an empty body reads as `null`. A body that is not JSON, or not
/// of the expected shape, is a 422 in FastAPI's format; a body over the limit a 413.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::TooLarge
            } else {
                ApiError::BadRequest(e.body_text())
            }
        })?;
        parse(&bytes).map(JsonBody)
    }
}

/// Parses a body: JSON first, then the shape, reporting where it went wrong.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(bytes).map_err(|e| {
            ApiError::body_problem(
                "json_invalid",
                &[],
                format!("JSON decode error: {e}"),
                Value::Object(Default::default()),
            )
        })?
    };
    let input = value.clone();
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path: Vec<String> = e
            .path()
            .iter()
            .filter_map(|seg| match seg {
                serde_path_to_error::Segment::Map { key } => Some(key.clone()),
                serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
                _ => None,
            })
            .collect();
        let message = e.inner().to_string();
        let mut loc: Vec<&str> = path.iter().map(String::as_str).collect();
        let (kind, msg) = match missing_field(&message) {
            Some(field) => {
                loc.push(field);
                ("missing", "Field required".to_owned())
            }
            None => ("value_error", message.clone()),
        };
        ApiError::body_problem(kind, &loc, msg, input)
    })
}

/// The field name of serde's "missing field `x`" message.
fn missing_field(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next()
}

/// `POST /run` and `POST /run_sse`: ADK's `RunAgentRequest`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunAgentRequest {
    /// The app.
    #[serde(alias = "app_name")]
    pub app_name: String,
    /// The user.
    #[serde(alias = "user_id")]
    pub user_id: String,
    /// The session, which must exist.
    #[serde(alias = "session_id")]
    pub session_id: String,
    /// The user's message.
    #[serde(default, alias = "new_message")]
    pub new_message: Option<Content>,
    /// Stream partial events (`/run_sse`).
    #[serde(default)]
    pub streaming: bool,
    /// State changes committed with the user's message.
    #[serde(default, alias = "state_delta")]
    pub state_delta: Option<StateMap>,
    /// Set when the UI answers a function call; turns off the artifact split.
    #[serde(default, alias = "function_call_event_id")]
    pub function_call_event_id: Option<String>,
    /// Accepted and ignored: adk-flow does not resume invocations.
    #[serde(default, alias = "invocation_id")]
    pub invocation_id: Option<String>,
}

/// `POST /apps/{app}/users/{user}/sessions`: ADK's `CreateSessionRequest`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateSessionRequest {
    /// The id to give the session; a uuid4 when absent.
    #[serde(default, alias = "session_id")]
    pub session_id: Option<String>,
    /// Initial state (merged over the workflow's `state:`).
    #[serde(default)]
    pub state: Option<StateMap>,
    /// Events to start the session with (the UI's "Import").
    #[serde(default)]
    pub events: Option<Vec<Value>>,
}

/// `PATCH /apps/{app}/users/{user}/sessions/{id}`: ADK's `UpdateSessionRequest`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateSessionRequest {
    /// State changes, committed as a content-less event.
    #[serde(alias = "state_delta")]
    pub state_delta: StateMap,
}

/// A session as ADK's pydantic `Session` serializes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionView<'a> {
    id: &'a str,
    app_name: &'a str,
    user_id: &'a str,
    state: &'a StateMap,
    #[serde(serialize_with = "events")]
    events: &'a [Arc<Event>],
    last_update_time: f64,
}

fn events<S: Serializer>(events: &[Arc<Event>], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(events.iter().map(|e| &**e))
}

/// Writes a session as JSON, with its events or with `"events": []` (listings).
pub fn session_json(session: &Session, with_events: bool) -> Vec<u8> {
    let view = SessionView {
        id: &session.id,
        app_name: &session.app_name,
        user_id: &session.user_id,
        state: &session.state,
        events: if with_events { &session.events } else { &[] },
        last_update_time: session.last_update_time,
    };
    // INVARIANT: string keys and JSON values only; serialization cannot fail.
    serde_json::to_vec(&view).unwrap_or_default()
}

/// Writes a list of sessions (without events) as a JSON array.
pub fn sessions_json(sessions: &[Session]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + sessions.len() * 128);
    out.push(b'[');
    for (i, s) in sessions.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend(session_json(s, false));
    }
    out.push(b']');
    out
}

/// A 200 response with a JSON body already written.
pub fn json_bytes(body: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// A 200 response with a serializable body.
pub fn json<T: Serialize>(value: &T) -> Response {
    json_bytes(serde_json::to_vec(value).unwrap_or_default())
}
