//! Every failure a route answers, in one place: its status code and its body.
//!
//! Bodies follow FastAPI as ADK's server sends them: `{"detail": "..."}` for errors the
//! server raises, `{"detail": [{type, loc, msg, input}]}` (422) for request bodies that do
//! not parse, and `text/plain` for the origin and host guards. Internal failures are
//! logged; the client gets a generic message, never the cause (it may name a database).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A failed request.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 404 with a message (`Session not found`, `App not found: x`).
    #[error("{0}")]
    NotFound(String),
    /// 409: the thing to create exists.
    #[error("{0}")]
    Conflict(String),
    /// 400: the request is well-formed but cannot be served.
    #[error("{0}")]
    BadRequest(String),
    /// 422: the body does not have the expected shape; FastAPI's list of problems.
    #[error("invalid request body")]
    Unprocessable(Vec<Value>),
    /// 413: the body is larger than `--max-body`.
    #[error("the request body is too large (the limit is set with --max-body)")]
    TooLarge,
    /// 401: `--token` is set and the request carries no valid credential.
    #[error("Not authenticated")]
    Unauthorized,
    /// 403, text/plain `Forbidden: <reason>`, as `adk web`'s origin guard answers.
    #[error("Forbidden: {0}")]
    Forbidden(&'static str),
    /// 503: the app has no valid version, or the server is shutting down.
    #[error("{0}")]
    Unavailable(String),
    /// 504: a run took longer than the per-run timeout.
    #[error("{0}")]
    Timeout(String),
    /// 500: something failed inside the server; the cause is logged, not sent.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// A 500 whose cause is logged here and kept from the client.
    pub fn internal(context: &str, cause: &dyn std::fmt::Display) -> Self {
        tracing::error!("{context}: {cause}");
        ApiError::Internal(context.to_owned())
    }

    /// A 422 for one problem in the request body, in FastAPI's shape.
    pub fn body_problem(kind: &str, loc: &[&str], msg: impl Into<String>, input: Value) -> Self {
        let mut loc_json = vec![Value::from("body")];
        loc_json.extend(loc.iter().map(|s| Value::from(*s)));
        ApiError::Unprocessable(vec![json!({
            "type": kind,
            "loc": loc_json,
            "msg": msg.into(),
            "input": input,
        })])
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = match &self {
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        match self {
            ApiError::Forbidden(reason) => (
                status,
                [(header::CONTENT_TYPE, "text/plain")],
                format!("Forbidden: {reason}"),
            )
                .into_response(),
            ApiError::Unprocessable(problems) => {
                (status, axum::Json(json!({ "detail": problems }))).into_response()
            }
            ApiError::Unauthorized => {
                let mut r =
                    (status, axum::Json(json!({"detail": "Not authenticated"}))).into_response();
                r.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                r
            }
            ApiError::Internal(context) => (
                status,
                axum::Json(
                    json!({ "detail": format!("internal error: {context}; see the server log") }),
                ),
            )
                .into_response(),
            other => (status, axum::Json(json!({ "detail": other.to_string() }))).into_response(),
        }
    }
}
