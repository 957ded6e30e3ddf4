//! adk-flow's own web page, served at `/` when no `--ui` is given: chat with an app, its
//! graph with the running agent highlighted, its events and state, a timeline from the
//! traces, the diagnostics of an edit that does not load, and its `.test.yaml` cases.
//!
//! The page is a few files embedded in the binary (`index.html`, `page.css` and plain
//! JavaScript modules: `page.js` starts it, `core.js`, `sessions.js`, `chat.js`,
//! `graph.js`, `inspect.js`, `timeline.js`, `markdown.js`): no framework, no CDN, no web font, so nothing
//! leaves the machine. It talks to the same routes as ADK's clients (`/run_sse`, sessions, `/debug/trace`, `/status`) plus a few
//! of its own under `/adk-flow/`, answered here:
//!
//! - `GET /adk-flow/apps/{app}`: the app's agents (kind, model, instruction, tools, their
//!   YAML as written and where), its workflow graphs' Routers and JoinNodes, its test
//!   files, and what answers for its models when the server overrides them
//!   (`answeredBy`: `--script`, `--model P:M`, `--script-beside (FILE)`);
//! - `GET /adk-flow/apps/{app}/graph.svg`: the picture `adk-flow graph --format svg` draws;
//! - `GET /adk-flow/apps/{app}/agents/{agent}/instruction?user=U&session=S`: the agent's
//!   instruction rendered against that session's state;
//! - `POST /adk-flow/apps/{app}/tests`: runs the app's test files, as `adk-flow test` does.

mod info;

use super::AppState;
use super::error::ApiError;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

const INDEX: &str = include_str!("index.html");

/// The page's files under `/adk-flow/`: name, content type, text.
const FILES: &[(&str, &str, &str)] = &[
    ("page.css", CSS, include_str!("page.css")),
    ("page.js", JS, include_str!("page.js")),
    ("core.js", JS, include_str!("core.js")),
    ("chat.js", JS, include_str!("chat.js")),
    ("inspect.js", JS, include_str!("inspect.js")),
    ("graph.js", JS, include_str!("graph.js")),
    ("timeline.js", JS, include_str!("timeline.js")),
    ("sessions.js", JS, include_str!("sessions.js")),
    ("markdown.js", JS, include_str!("markdown.js")),
];
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Headers of every page file: no caching (a new binary serves a new page), no framing by
/// other sites, and a content security policy that allows only this origin.
fn page_file(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
            ),
        ],
        body,
    )
        .into_response()
}

/// `GET /`: the page.
pub async fn index() -> Response {
    page_file("text/html; charset=utf-8", INDEX)
}

/// `GET /adk-flow/{file}`: the page's script modules and stylesheet.
pub async fn file(Path(name): Path<String>) -> Result<Response, ApiError> {
    FILES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, kind, body)| page_file(kind, body))
        .ok_or_else(|| ApiError::NotFound("Not Found".into()))
}

/// `GET /adk-flow/apps/{app}`.
pub async fn app(State(s): State<AppState>, Path(app): Path<String>) -> Result<Response, ApiError> {
    let slot = s.apps.slot(&app)?;
    let version = s.apps.version(&app).await?;
    let mut info = info::app_info(&app, slot.root(), version.workflow());
    info["answeredBy"] = s.apps.answered_by(slot.root()).into();
    Ok(super::wire::json(&info))
}

/// `GET /adk-flow/apps/{app}/graph.svg`.
pub async fn graph(
    State(s): State<AppState>,
    Path(app): Path<String>,
) -> Result<Response, ApiError> {
    let version = s.apps.version(&app).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        crate::graph::svg(&version.workflow().root),
    )
        .into_response())
}

/// Query of the instruction route: whose session's state to render with.
#[derive(Deserialize)]
pub struct InstructionQuery {
    user: Option<String>,
    session: Option<String>,
}

/// `GET /adk-flow/apps/{app}/agents/{agent}/instruction`.
pub async fn instruction(
    State(s): State<AppState>,
    Path((app, agent)): Path<(String, String)>,
    Query(q): Query<InstructionQuery>,
) -> Result<Response, ApiError> {
    let version = s.apps.version(&app).await?;
    let dialect = version.workflow().template_dialect();
    let spec = version
        .workflow()
        .root
        .walk()
        .into_iter()
        .find(|a| a.name == agent)
        .ok_or_else(|| ApiError::NotFound(format!("Agent not found: {agent}")))?;
    let state = match (&q.user, &q.session) {
        (Some(user), Some(session)) => {
            let handle = s.session(&app, user, session).await?;
            let state = handle.lock().state.clone();
            Some(state)
        }
        _ => None,
    };
    Ok(super::wire::json(&info::rendered_instruction(
        spec,
        dialect,
        state.as_ref(),
    )))
}

/// `POST /adk-flow/apps/{app}/tests`: runs the app's test files; one result per file.
pub async fn run_tests(
    State(s): State<AppState>,
    Path(app): Path<String>,
) -> Result<Response, ApiError> {
    let slot = s.apps.slot(&app)?;
    let settings = s.apps.settings();
    let options = crate::testing::RunOptions {
        update_snapshots: false,
        allow_commands: settings.allow_commands,
        env: std::sync::Arc::clone(&settings.env),
        files: settings.files,
    };
    let mut results = Vec::new();
    for file in info::test_files(slot.root()) {
        let result = crate::testing::run_file(&file, &options).await;
        results.push(info::test_result(&result));
    }
    Ok(super::wire::json(&serde_json::Value::Array(results)))
}
