//! Session and artifact routes: `/apps/{app}/users/{user}/sessions[/{id}[/artifacts…]]`.

use super::error::ApiError;
use super::wire::{
    CreateSessionRequest, JsonBody, UpdateSessionRequest, json, json_bytes, session_json,
    sessions_json,
};
use super::{AppState, Shared};
use crate::artifact::ArtifactKey;
use crate::event::{Event, EventActions, StateMap};
use crate::session::{Session, SessionError, SessionHandle};
use axum::extract::{Path, Query, State};
use axum::response::Response;
use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};

/// Sessions ADK's evaluator creates; listings leave them out, as `adk web` does.
const EVAL_SESSION_PREFIX: &str = "___eval___session___";

/// Function calls ADK itself makes for human-in-the-loop flows; imported events may not
/// contain them.
const RESERVED_CALLS: [&str; 3] = [
    "adk_request_confirmation",
    "adk_request_credential",
    "adk_request_input",
];

fn store_error(e: SessionError) -> ApiError {
    match e {
        SessionError::AlreadyExists { session_id } => {
            ApiError::Conflict(format!("Session already exists: {session_id}"))
        }
        SessionError::NotFound { .. } => ApiError::NotFound("Session not found".into()),
        other => ApiError::internal("session store", &other),
    }
}

fn snapshot(handle: &SessionHandle, with_events: bool) -> Vec<u8> {
    session_json(&handle.lock(), with_events)
}

impl Shared {
    pub(super) async fn session(
        &self,
        app: &str,
        user: &str,
        id: &str,
    ) -> Result<SessionHandle, ApiError> {
        self.sessions
            .get_session(app, user, id)
            .await
            .map_err(store_error)?
            .ok_or_else(|| ApiError::NotFound("Session not found".into()))
    }

    /// Creates a session seeded with the workflow's `state:` under the given state.
    async fn create(
        &self,
        app: &str,
        user: &str,
        id: Option<&str>,
        state: Option<StateMap>,
    ) -> Result<SessionHandle, ApiError> {
        let slot = self.apps.slot(app)?;
        slot.refresh(self.apps.settings()).await;
        let mut initial = slot
            .loaded()
            .map(|v| v.workflow().state.clone())
            .unwrap_or_default();
        initial.extend(state.unwrap_or_default());
        let id = id.filter(|id| !id.trim().is_empty());
        self.sessions
            .create_session(app, user, id, initial)
            .await
            .map_err(store_error)
    }
}

/// `POST /apps/{app}/users/{user}/sessions`: body `{sessionId?, state?, events?}`, `{}`,
/// `null` or none.
pub async fn create(
    State(s): State<AppState>,
    Path((app, user)): Path<(String, String)>,
    JsonBody(req): JsonBody<Option<CreateSessionRequest>>,
) -> Result<Response, ApiError> {
    let req = req.unwrap_or_default();
    let events = match &req.events {
        Some(events) => imported(events)?,
        None => Vec::new(),
    };
    let handle = s
        .create(&app, &user, req.session_id.as_deref(), req.state)
        .await?;
    for event in events {
        s.sessions
            .append_event(&handle, event)
            .await
            .map_err(store_error)?;
    }
    Ok(json_bytes(snapshot(&handle, true)))
}

/// `POST /apps/{app}/users/{user}/sessions/{id}`: ADK's deprecated create-with-id; the
/// body is the initial state.
pub async fn create_with_id(
    State(s): State<AppState>,
    Path((app, user, id)): Path<(String, String, String)>,
    JsonBody(state): JsonBody<Option<StateMap>>,
) -> Result<Response, ApiError> {
    let handle = s.create(&app, &user, Some(&id), state).await?;
    Ok(json_bytes(snapshot(&handle, true)))
}

/// Events of an import: missing ids, times and invocation ids filled in; events that
/// claim to be ADK's own (actions, long-running calls, reserved calls) refused (400).
fn imported(events: &[Value]) -> Result<Vec<Event>, ApiError> {
    let mut out = Vec::with_capacity(events.len());
    for (i, raw) in events.iter().enumerate() {
        let Some(obj) = raw.as_object() else {
            return Err(ApiError::body_problem(
                "model_type",
                &["events", &i.to_string()],
                "Input should be a valid dictionary or instance of Event",
                raw.clone(),
            ));
        };
        let mut obj = obj.clone();
        let defaults = Event::new("", "");
        obj.entry("id")
            .or_insert_with(|| defaults.id.to_string().into());
        obj.entry("timestamp")
            .or_insert_with(|| defaults.timestamp.into());
        obj.entry("invocationId").or_insert_with(|| "".into());
        obj.entry("actions").or_insert_with(|| json!({}));
        let event: Event = serde_json::from_value(Value::Object(obj)).map_err(|e| {
            ApiError::body_problem(
                "value_error",
                &["events", &i.to_string()],
                e.to_string(),
                raw.clone(),
            )
        })?;
        let refuse = |what: &str| {
            ApiError::BadRequest(format!(
                "Session initialization event {i} cannot include {what}."
            ))
        };
        if event
            .long_running_tool_ids
            .as_ref()
            .is_some_and(|ids| !ids.is_empty())
        {
            return Err(refuse("long-running tool IDs"));
        }
        if event.actions != EventActions::default() {
            return Err(refuse("event actions"));
        }
        let reserved = event
            .function_calls()
            .map(|c| c.name.as_str())
            .chain(event.function_responses().map(|r| r.name.as_str()))
            .any(|n| RESERVED_CALLS.contains(&n));
        if reserved {
            return Err(refuse("ADK protocol function calls"));
        }
        out.push(event);
    }
    Ok(out)
}

/// `GET /apps/{app}/users/{user}/sessions`: a bare array, events left out.
pub async fn list(
    State(s): State<AppState>,
    Path((app, user)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let ids = s
        .sessions
        .list_sessions(&app, &user)
        .await
        .map_err(store_error)?;
    let mut listed: Vec<Session> = Vec::with_capacity(ids.len());
    for id in ids.iter().filter(|id| !id.starts_with(EVAL_SESSION_PREFIX)) {
        let Some(handle) = s
            .sessions
            .get_session(&app, &user, id)
            .await
            .map_err(store_error)?
        else {
            continue;
        };
        let live = handle.lock();
        listed.push(Session {
            id: live.id.clone(),
            app_name: live.app_name.clone(),
            user_id: live.user_id.clone(),
            state: live.state.clone(),
            last_update_time: live.last_update_time,
            ..Session::default()
        });
    }
    Ok(json_bytes(sessions_json(&listed)))
}

/// `GET /apps/{app}/users/{user}/sessions/{id}`: the session with every stored event.
pub async fn get(
    State(s): State<AppState>,
    Path((app, user, id)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let handle = s.session(&app, &user, &id).await?;
    Ok(json_bytes(snapshot(&handle, true)))
}

/// `PATCH /apps/{app}/users/{user}/sessions/{id}`: `{"stateDelta": {...}}`, committed as
/// a content-less user event with a `p-` invocation id; waits for a running turn.
pub async fn update(
    State(s): State<AppState>,
    Path((app, user, id)): Path<(String, String, String)>,
    JsonBody(req): JsonBody<UpdateSessionRequest>,
) -> Result<Response, ApiError> {
    let _turn = s.runs.lock_session(&*s.sessions, &app, &user, &id).await?;
    let handle = s.session(&app, &user, &id).await?;
    let mut event = Event::new(format!("p-{}", uuid::Uuid::new_v4()), "user");
    event.actions.state_delta = req.state_delta.into();
    s.sessions
        .append_event(&handle, event)
        .await
        .map_err(store_error)?;
    Ok(json_bytes(snapshot(&handle, true)))
}

/// `DELETE /apps/{app}/users/{user}/sessions/{id}`: `null`, also for unknown ids; waits
/// for a running turn.
pub async fn delete(
    State(s): State<AppState>,
    Path((app, user, id)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let _turn = s.runs.lock_session(&*s.sessions, &app, &user, &id).await?;
    s.sessions
        .delete_session(&app, &user, &id)
        .await
        .map_err(store_error)?;
    s.apps.settings().session_deleted(&app, &user, &id);
    Ok(json(&Value::Null))
}

fn artifact_key(app: String, user: String, session: String, name: String) -> ArtifactKey {
    ArtifactKey {
        app,
        user,
        session,
        name,
    }
}

fn artifact_error(e: crate::artifact::ArtifactError) -> ApiError {
    match e {
        crate::artifact::ArtifactError::InvalidName(name) => {
            ApiError::BadRequest(format!("invalid artifact name `{name}`"))
        }
        other => ApiError::internal("artifact store", &other),
    }
}

/// A version number from the path: FastAPI's 422 when it is not one.
fn version_number(raw: &str) -> Result<u64, ApiError> {
    raw.parse().map_err(|_| {
        ApiError::Unprocessable(vec![json!({
            "type": "int_parsing",
            "loc": ["path", "version_id"],
            "msg": "Input should be a valid integer, unable to parse string as an integer",
            "input": raw,
        })])
    })
}

async fn load_part(
    s: &Shared,
    key: &ArtifactKey,
    version: Option<u64>,
) -> Result<Response, ApiError> {
    let artifact = s
        .artifacts
        .load(key, version)
        .await
        .map_err(artifact_error)?
        .ok_or_else(|| ApiError::NotFound("Artifact not found".into()))?;
    // genai's Part as pydantic writes it: bytes as URL-safe base64 with padding.
    let data = base64::engine::general_purpose::URL_SAFE.encode(&artifact.data);
    Ok(json(&json!({
        "inlineData": {"data": data, "mimeType": artifact.mime_type}
    })))
}

/// `?version=N` of the latest-artifact route.
#[derive(Deserialize)]
pub struct VersionQuery {
    version: Option<String>,
}

/// `GET …/artifacts/{name}[?version=N]`: a genai Part with `inlineData`.
pub async fn artifact(
    State(s): State<AppState>,
    Path((app, user, session, name)): Path<(String, String, String, String)>,
    Query(q): Query<VersionQuery>,
) -> Result<Response, ApiError> {
    let version = q.version.as_deref().map(version_number).transpose()?;
    load_part(&s, &artifact_key(app, user, session, name), version).await
}

/// `GET …/artifacts/{name}/versions/{v}`: one version as a genai Part.
pub async fn artifact_version(
    State(s): State<AppState>,
    Path((app, user, session, name, v)): Path<(String, String, String, String, String)>,
) -> Result<Response, ApiError> {
    let version = version_number(&v)?;
    load_part(&s, &artifact_key(app, user, session, name), Some(version)).await
}

/// `GET …/artifacts/{name}/versions`: the version numbers.
pub async fn artifact_versions(
    State(s): State<AppState>,
    Path((app, user, session, name)): Path<(String, String, String, String)>,
) -> Result<Response, ApiError> {
    let versions = s
        .artifacts
        .versions(&artifact_key(app, user, session, name))
        .await
        .map_err(artifact_error)?;
    Ok(json(&versions))
}

/// `GET …/sessions/{id}/artifacts`: the names visible in the session.
pub async fn artifact_names(
    State(s): State<AppState>,
    Path((app, user, session)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let names = s
        .artifacts
        .list(&app, &user, &session)
        .await
        .map_err(artifact_error)?;
    Ok(json(&names))
}

/// `DELETE …/artifacts/{name}`: every version; `null`.
pub async fn delete_artifact(
    State(s): State<AppState>,
    Path((app, user, session, name)): Path<(String, String, String, String)>,
) -> Result<Response, ApiError> {
    s.artifacts
        .delete(&artifact_key(app, user, session, name))
        .await
        .map_err(artifact_error)?;
    Ok(json(&Value::Null))
}
