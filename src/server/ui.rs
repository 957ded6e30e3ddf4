//! `--ui DIR`: a static web UI at `/dev-ui/`, served the way `adk web` serves ADK's own.
//!
//! `/` and `/dev-ui` redirect (307) to `/dev-ui/`; a folder answers its `index.html`; a
//! missing file is a 404 (no fallback to `index.html`); `.js` is `text/javascript`.
//! `assets/config/runtime-config.json` is answered by the server (`{"backendUrl": ""}`:
//! the API is on this origin), never read from or written into the folder. Paths cannot
//! leave the folder.

use super::AppState;
use super::error::ApiError;
use super::wire::json;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde_json::json;
use std::path::{Component, PathBuf};

/// Where the UI lives: `/dev-ui/`.
pub const PREFIX: &str = "/dev-ui/";

/// `GET /` and `GET /dev-ui`: 307 to `/dev-ui/`.
pub async fn redirect() -> Response {
    Redirect::temporary(PREFIX).into_response()
}

/// `GET /dev-ui/assets/config/runtime-config.json`.
pub async fn runtime_config() -> Response {
    json(&json!({"backendUrl": ""}))
}

/// `GET /dev-ui/config` (never called by the 1.39.1 UI, answered as `adk web` does).
pub async fn ui_config() -> Response {
    json(&json!({"logo_text": null, "logo_image_url": null}))
}

/// The MIME type of a file, by extension.
fn content_type(path: &std::path::Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("html" | "htm") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json" | "map") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        Some("woff") => "font/woff",
        Some("ttf") => "font/ttf",
        Some("wasm") => "application/wasm",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn not_found() -> ApiError {
    ApiError::NotFound("Not Found".into())
}

/// `GET /dev-ui/` and `GET /dev-ui/{*path}`.
pub async fn file(
    State(s): State<AppState>,
    path: Option<Path<String>>,
) -> Result<Response, ApiError> {
    let Some(root) = s.ui.as_ref() else {
        return Err(not_found());
    };
    let rel = path.map(|Path(p)| p).unwrap_or_default();
    let mut target = PathBuf::from(root);
    for part in std::path::Path::new(&rel).components() {
        match part {
            Component::Normal(p) => target.push(p),
            Component::CurDir => {}
            _ => return Err(not_found()),
        }
    }
    if rel.contains('\\') {
        return Err(not_found());
    }
    let meta = tokio::fs::metadata(&target)
        .await
        .map_err(|_| not_found())?;
    if meta.is_dir() {
        let index = target.join("index.html");
        if !tokio::fs::metadata(&index).await.is_ok_and(|m| m.is_file()) {
            return Err(not_found());
        }
        if !rel.is_empty() && !rel.ends_with('/') {
            return Ok(Redirect::temporary(&format!("{PREFIX}{rel}/")).into_response());
        }
        target = index;
    }
    // Symbolic links may not lead out of the folder.
    let canonical_root = tokio::fs::canonicalize(root)
        .await
        .map_err(|_| not_found())?;
    let canonical = tokio::fs::canonicalize(&target)
        .await
        .map_err(|_| not_found())?;
    if !canonical.starts_with(&canonical_root) {
        return Err(not_found());
    }
    let bytes = tokio::fs::read(&canonical).await.map_err(|_| not_found())?;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, content_type(&canonical))],
        bytes,
    )
        .into_response())
}
