//! The routes around the chat: health, version, the app list, `GET /status` (hot reload),
//! the agent graph, the builder's YAML, traces.

use super::AppState;
use super::error::ApiError;
use super::wire::json;
use crate::config::{AgentSpec, AgentSpecKind};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// `GET /health`.
pub async fn health() -> Response {
    json(&json!({"status": "ok"}))
}

/// `GET /version`: adk-flow's version in ADK's shape.
pub async fn version() -> Response {
    json(&json!({
        "version": env!("CARGO_PKG_VERSION"),
        "language": "rust",
        "language_version": env!("CARGO_PKG_RUST_VERSION"),
    }))
}

/// `?detailed=true` of `GET /list-apps`.
#[derive(Deserialize)]
pub struct ListAppsQuery {
    #[serde(default)]
    detailed: Option<String>,
}

/// `GET /list-apps`: the app names, sorted (the folders are looked at again first);
/// `?detailed=true`: `{"apps": [{name, rootAgentName, description, language, ...}]}`.
pub async fn list_apps(State(s): State<AppState>, Query(q): Query<ListAppsQuery>) -> Response {
    s.apps.rescan();
    let detailed = q
        .detailed
        .as_deref()
        .is_some_and(|d| matches!(d.to_ascii_lowercase().as_str(), "true" | "1" | "yes" | "on"));
    if !detailed {
        return json(&s.apps.names());
    }
    let mut apps = Vec::new();
    for name in s.apps.names() {
        let Ok(version) = s.apps.version(&name).await else {
            continue;
        };
        let root = &version.workflow().root;
        apps.push(json!({
            "name": name,
            "rootAgentName": root.name,
            "description": root.description,
            "language": "yaml",
            "isComputerUse": false,
            "agents": null,
        }));
    }
    json(&json!({ "apps": apps }))
}

/// `GET /status`: every app, the version serving it, and the diagnostics of an edit that
/// does not load; plus the runs in progress.
pub async fn status(State(s): State<AppState>) -> Response {
    s.apps.rescan();
    let slots = s.apps.names();
    for name in &slots {
        if let Ok(slot) = s.apps.slot(name) {
            slot.refresh(s.apps.settings()).await;
        }
    }
    json(&json!({
        "apps": s.apps.status(),
        "runs": s.runs.running(),
        "busySessions": s.runs.busy_sessions(),
        "shuttingDown": s.runs.draining(),
    }))
}

/// An agent as ADK's `/dev/build_graph` writes it: its pydantic fields in snake_case,
/// defaults included, unset optional ones and tools left out.
fn agent_dict(agent: &AgentSpec) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), agent.name.clone().into());
    out.insert("description".into(), agent.description.clone().into());
    out.insert(
        "sub_agents".into(),
        Value::Array(agent.sub_agents.iter().map(agent_dict).collect()),
    );
    match &agent.kind {
        AgentSpecKind::Llm(llm) => {
            out.insert("model".into(), llm.model.clone().unwrap_or_default().into());
            out.insert("instruction".into(), llm.instruction.clone().into());
            out.insert("global_instruction".into(), "".into());
            if let Some(config) = &llm.generate_content_config {
                out.insert("generate_content_config".into(), config.clone());
            }
            out.insert(
                "disallow_transfer_to_parent".into(),
                llm.disallow_transfer_to_parent.into(),
            );
            out.insert(
                "disallow_transfer_to_peers".into(),
                llm.disallow_transfer_to_peers.into(),
            );
            let include = if llm.current_turn_only {
                "none"
            } else {
                "default"
            };
            out.insert("include_contents".into(), include.into());
            if let Some(key) = &llm.output_key {
                out.insert("output_key".into(), key.clone().into());
            }
        }
        AgentSpecKind::Loop {
            max_iterations: Some(n),
        } => {
            out.insert("max_iterations".into(), (*n).into());
        }
        AgentSpecKind::Loop { .. }
        | AgentSpecKind::Sequential { .. }
        | AgentSpecKind::Parallel
        | AgentSpecKind::Graph(_) => {}
    }
    Value::Object(out)
}

/// `GET /dev/build_graph/{app}`: `{"name": app, "root_agent": {...}}`.
pub async fn build_graph(
    State(s): State<AppState>,
    Path(app): Path<String>,
) -> Result<Response, ApiError> {
    let version = s.apps.version(&app).await?;
    Ok(json(&json!({
        "name": app,
        "root_agent": agent_dict(&version.workflow().root),
    })))
}

/// Query of `GET /dev/build_graph_image/{app}`.
#[derive(Deserialize)]
pub struct GraphImageQuery {
    #[serde(default)]
    dark_mode: Option<String>,
    #[serde(default)]
    node: Option<String>,
}

/// `GET /dev/build_graph_image/{app}`: the agent graph as DOT, rendered by the UI;
/// `{"root_agent": {"dotSrc": ...}}`, or `{"dotSrc": ...}` for `?node=`.
pub async fn build_graph_image(
    State(s): State<AppState>,
    Path(app): Path<String>,
    Query(q): Query<GraphImageQuery>,
) -> Result<Response, ApiError> {
    let version = s.apps.version(&app).await?;
    let dark = q
        .dark_mode
        .as_deref()
        .is_some_and(|d| d.eq_ignore_ascii_case("true"));
    let dot = crate::graph::dot(&version.workflow().root, dark);
    Ok(if q.node.is_some() {
        json(&json!({ "dotSrc": dot }))
    } else {
        json(&json!({ "root_agent": { "dotSrc": dot } }))
    })
}

/// Query of `GET /builder/app/{app}`.
#[derive(Deserialize)]
pub struct BuilderQuery {
    #[serde(default)]
    file_path: Option<String>,
}

/// `GET /builder/app/{app}`: the root file's YAML text as it is on disk
/// (`application/x-yaml`, not cached); `?file_path=` names another file of the app.
pub async fn builder_app(
    State(s): State<AppState>,
    Path(app): Path<String>,
    Query(q): Query<BuilderQuery>,
) -> Result<Response, ApiError> {
    let slot = s.apps.slot(&app)?;
    let root = slot.source().root.clone();
    let path = match q.file_path.as_deref().filter(|p| !p.is_empty()) {
        None => root,
        Some(rel) => {
            // Only files the app is made of, never an arbitrary path.
            let base = root.parent().unwrap_or(std::path::Path::new("."));
            let wanted = base.join(rel).canonicalize().ok();
            let files = slot
                .loaded()
                .map(|v| v.workflow().files.clone())
                .unwrap_or_default();
            match wanted.filter(|w| files.contains(w)) {
                Some(p) => p,
                None => return Err(ApiError::NotFound(format!("File not found: {rel}"))),
            }
        }
    };
    let text = tokio::fs::read_to_string(&path)
        .await
        .map_err(|e| ApiError::internal("cannot read the app's file", &e))?;
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/x-yaml"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        text,
    )
        .into_response())
}

/// `GET /debug/trace/session/{id}`: the session's spans (a bare array).
pub async fn session_trace(State(s): State<AppState>, Path(id): Path<String>) -> Response {
    json(&s.traces.session_spans(&id))
}

/// `GET /debug/trace/{event_id}`: the attributes of the span that produced an event.
pub async fn event_trace(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    s.traces
        .event_trace(&id)
        .map(|v| json(&v))
        .ok_or_else(|| ApiError::NotFound("Trace not found".into()))
}
