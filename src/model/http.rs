//! HTTP machinery shared by the real providers: the client, retries with bounded
//! exponential backoff and jitter, and error mapping; streamed answers are read by
//! `sse.rs`.
//!
//! # Failures
//!
//! Every failure becomes a [`ModelError::Provider`] whose `code` is one of:
//!
//! | code | meaning | retried |
//! |---|---|---|
//! | `HTTP_<status>` | the provider answered with an error status (`HTTP_429`, `HTTP_500`...) | 429, 5xx |
//! | `TIMEOUT` | no complete answer (non-streaming) or no response headers (streaming) within the timeout | yes |
//! | `CONNECT` | the connection could not be established | yes |
//! | `NETWORK` | the connection failed during the exchange | yes |
//! | `BAD_RESPONSE` | a success status whose body is not the expected JSON, or is larger than [`MAX_ANSWER_BYTES`] | no |
//! | `STREAM_BROKEN` | a stream that broke after it started: dropped, truncated, idle for longer than the timeout, larger than [`MAX_ANSWER_BYTES`] in all, or an unparsable chunk | no |
//!
//! Messages name the URL and carry the provider's own error message, never the API key:
//! it travels in a header marked sensitive, and every message is scrubbed of it.
//!
//! Memory is bounded whatever the server sends: an answer, streamed or not, is read up to
//! [`MAX_ANSWER_BYTES`], and only the first [`MAX_ERROR_BODY_BYTES`] of an error body.

use super::sse::{broken_on_error, sse_data};
use super::{ModelError, ProviderCode};
use futures::stream::BoxStream;

use reqwest::header::HeaderMap;
use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// The most an answer may hold, streamed or not (64 MiB): far above any model's output,
/// low enough that a broken or hostile server cannot exhaust memory.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// How much of an error body is read (its message is all that is kept).
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// A credential. `Debug` and `Display` print `[REDACTED]`; only [`Secret::expose`] reveals it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The credential itself, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

/// When and how often a failed call is tried again.
///
/// HTTP 429 and 5xx answers, connection failures and timeouts are retried; other HTTP
/// errors are not. Before retry `n` (1-based) the call waits a random time between half
/// and all of `min(initial_backoff * 2^(n-1), max_backoff)`, or what the provider asked
/// for (a `Retry-After` header in seconds, or Gemini's `RetryInfo.retryDelay`), capped at
/// `max_retry_after`. A stream that has started is never retried: its chunks were shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 disables retries.
    pub max_attempts: u32,
    /// Backoff before the first retry.
    pub initial_backoff: Duration,
    /// Upper bound of the exponential backoff.
    pub max_backoff: Duration,
    /// Upper bound of a wait the provider asks for.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// 3 attempts, backoff 0.5 s doubling up to 10 s (the documented defaults of a
    /// model's `retries`), provider-requested waits up to 30 s.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(10),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry `retry` (1-based), with jitter.
    fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .initial_backoff
            .saturating_mul(2u32.saturating_pow(retry.saturating_sub(1)));
        let ceiling = exp.min(self.max_backoff);
        // Equal jitter: half fixed, half random, so concurrent clients spread out but
        // never retry at once. The random bits come from a v4 uuid (already a dependency).
        let bits = uuid::Uuid::new_v4().as_u128() as u64 >> 11;
        let fraction = bits as f64 / (1u64 << 53) as f64;
        ceiling / 2 + ceiling.mul_f64(fraction / 2.0)
    }
}

/// One failed attempt.
struct Failure {
    code: ProviderCode,
    message: String,
    retryable: bool,
    retry_after: Option<Duration>,
}

/// Builds provider errors whose messages cannot contain the key.
#[derive(Clone)]
pub(crate) struct Redactor(Option<Secret>);

impl Redactor {
    /// Scrubs `secret`, if any.
    pub(crate) fn new(secret: Option<Secret>) -> Self {
        Redactor(secret)
    }

    /// A provider error, scrubbed of the key.
    pub(crate) fn error(&self, code: ProviderCode, message: impl Into<String>) -> ModelError {
        ModelError::Provider {
            code,
            message: self.scrub(message.into()),
        }
    }

    /// `message` with every occurrence of the key, and the userinfo and query values of
    /// every URL in it, replaced by `[REDACTED]`.
    fn scrub(&self, message: String) -> String {
        let message = match &self.0 {
            Some(secret) if !secret.expose().is_empty() => {
                message.replace(secret.expose(), crate::redact::REDACTED)
            }
            _ => message,
        };
        crate::redact::urls_in(&message).into_owned()
    }
}

/// A reqwest client with a timeout, a retry policy and the key to scrub from messages.
pub(crate) struct HttpClient {
    client: reqwest::Client,
    timeout: Duration,
    retry: RetryPolicy,
    redactor: Redactor,
}

impl HttpClient {
    /// Builds the client. `timeout` bounds each attempt (see the module docs).
    pub(crate) fn new(
        timeout: Duration,
        retry: RetryPolicy,
        secret: Option<Secret>,
    ) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .connect_timeout(timeout)
            .user_agent(concat!("adk-flow/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(HttpClient {
            client,
            timeout,
            retry,
            redactor: Redactor::new(secret),
        })
    }

    /// What turns messages into provider errors.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// POSTs `body` and returns the parsed JSON answer, retrying as the policy says.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<Value, ModelError> {
        self.with_retries(url, || async {
            let response = self.send(url, headers, body).await?;
            let bytes = match read_body(response, MAX_ANSWER_BYTES).await {
                Ok(Body::Whole(bytes)) => bytes,
                Ok(Body::Cut(_)) => {
                    return Err(Failure {
                        code: ProviderCode::BadResponse,
                        message: format!("the answer is larger than {MAX_ANSWER_BYTES} bytes"),
                        retryable: false,
                        retry_after: None,
                    });
                }
                Err(e) => return Err(transport(&e)),
            };
            serde_json::from_slice(&bytes).map_err(|e| Failure {
                code: ProviderCode::BadResponse,
                message: format!(
                    "the answer is not the expected JSON ({e}): {}",
                    snippet(&bytes)
                ),
                retryable: false,
                retry_after: None,
            })
        })
        .await
    }

    /// POSTs `body` and returns the `data:` payloads of the server-sent events that
    /// answer it. Retries apply until the response headers arrive; after that a stream
    /// that breaks or stays silent for longer than the timeout ends with a
    /// `STREAM_BROKEN` error.
    pub(crate) async fn post_sse(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<BoxStream<'static, Result<String, ModelError>>, ModelError> {
        let response = self
            .with_retries(url, || self.send(url, headers, body))
            .await?;
        Ok(broken_on_error(
            sse_data(response, self.timeout),
            self.redactor.clone(),
            url.to_owned(),
        ))
    }

    /// Runs `attempt` until it succeeds, fails for good, or the attempts run out.
    async fn with_retries<T, F, Fut>(&self, url: &str, mut attempt: F) -> Result<T, ModelError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let max = self.retry.max_attempts.max(1);
        let mut n = 1;
        loop {
            let failure = match tokio::time::timeout(self.timeout, attempt()).await {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(failure)) => failure,
                Err(_) => Failure {
                    code: ProviderCode::Timeout,
                    message: format!("no answer within {:?}", self.timeout),
                    retryable: true,
                    retry_after: None,
                },
            };
            if !failure.retryable || n >= max {
                let tries = if n > 1 {
                    format!(" (after {n} attempts)")
                } else {
                    String::new()
                };
                return Err(self.redactor.error(
                    failure.code,
                    format!("POST {url}: {}{tries}", failure.message),
                ));
            }
            let wait = match failure.retry_after {
                Some(asked) => asked.min(self.retry.max_retry_after),
                None => self.retry.backoff(n),
            };
            tracing::warn!(
                code = %failure.code,
                attempt = n,
                "POST {url}: {}; retrying in {wait:?}",
                self.redactor.scrub(failure.message)
            );
            tokio::time::sleep(wait).await;
            n += 1;
        }
    }

    /// One POST; an error status becomes a [`Failure`] carrying the provider's message.
    async fn send(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<reqwest::Response, Failure> {
        let response = self
            .client
            .post(url)
            .headers(headers.clone())
            .json(body)
            .send()
            .await
            .map_err(|e| transport(&e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let header_wait = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_seconds);
        // Only the message of an error body is kept; a failure to read it leaves the status.
        let bytes = match read_body(response, MAX_ERROR_BODY_BYTES).await {
            Ok(Body::Whole(bytes) | Body::Cut(bytes)) => bytes,
            Err(_) => Vec::new(),
        };
        let (detail, body_wait) = error_detail(&bytes);
        let reason = status.canonical_reason().unwrap_or("");
        Err(Failure {
            code: ProviderCode::Http(status.as_u16()),
            message: format!("HTTP {} {reason}: {detail}", status.as_u16()),
            retryable: status.as_u16() == 429 || status.is_server_error(),
            retry_after: header_wait.or(body_wait),
        })
    }
}

/// A response body read up to a limit.
enum Body {
    /// All of it.
    Whole(Vec<u8>),
    /// The first `limit` bytes; more followed.
    Cut(Vec<u8>),
}

/// Reads `response`'s body, never holding more than `limit` bytes of it.
async fn read_body(mut response: reqwest::Response, limit: usize) -> Result<Body, reqwest::Error> {
    let announced = response.content_length().unwrap_or(0);
    let mut out = Vec::with_capacity(usize::try_from(announced).unwrap_or(limit).min(limit));
    while let Some(chunk) = response.chunk().await? {
        let room = limit - out.len();
        if chunk.len() > room {
            out.extend_from_slice(&chunk[..room]);
            return Ok(Body::Cut(out));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(Body::Whole(out))
}

/// A transport failure, classified.
fn transport(e: &reqwest::Error) -> Failure {
    let code = if e.is_timeout() {
        ProviderCode::Timeout
    } else if e.is_connect() {
        ProviderCode::Connect
    } else {
        ProviderCode::Network
    };
    Failure {
        code,
        message: crate::errors::chain(e),
        retryable: true,
        retry_after: None,
    }
}

/// `Retry-After` as delta-seconds (the HTTP-date form is not used by LLM providers).
fn parse_seconds(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().trim_end_matches('s').parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// The provider's message from an error body, and the wait it asks for, if any.
///
/// OpenAI: `{"error": {"message", "type", "code"}}`; Gemini: `{"error": {"code",
/// "message", "status", "details": [{"@type": "...RetryInfo", "retryDelay": "7s"}]}}`.
fn error_detail(bytes: &[u8]) -> (String, Option<Duration>) {
    let Ok(json) = serde_json::from_slice::<Value>(bytes) else {
        return (snippet(bytes), None);
    };
    let error = json.get("error").unwrap_or(&json);
    let message = error.get("message").and_then(Value::as_str);
    let status = error
        .get("status")
        .or_else(|| error.get("type"))
        .and_then(Value::as_str);
    let detail = match (status, message) {
        (Some(s), Some(m)) => format!("{s}: {m}"),
        (None, Some(m)) => m.to_owned(),
        _ => snippet(bytes),
    };
    let wait = error
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|d| d.get("retryDelay").and_then(Value::as_str))
        .and_then(parse_seconds);
    (detail, wait)
}

/// At most 500 characters of a body, for messages.
fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    match text.char_indices().nth(500) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None if text.is_empty() => "(empty body)".into(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("sk-very-secret");
        assert_eq!(format!("{s} {s:?}"), "[REDACTED] [REDACTED]");
        assert_eq!(s.expose(), "sk-very-secret");
    }

    #[test]
    fn backoff_is_bounded_and_jittered() {
        let p = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
            max_retry_after: Duration::from_secs(1),
        };
        for (retry, ceiling) in [
            (1, 100),
            (2, 200),
            (3, 400),
            (4, 800),
            (5, 1000),
            (30, 1000),
        ] {
            let d = p.backoff(retry);
            let ceiling = Duration::from_millis(ceiling);
            assert!(d >= ceiling / 2 && d <= ceiling, "retry {retry}: {d:?}");
        }
    }

    #[test]
    fn error_bodies_give_message_and_wait() {
        let gemini = br#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}"#;
        assert_eq!(
            error_detail(gemini),
            (
                "RESOURCE_EXHAUSTED: Quota exceeded".to_owned(),
                Some(Duration::from_secs(7))
            )
        );
        let openai = br#"{"error":{"message":"Invalid model","type":"invalid_request_error"}}"#;
        assert_eq!(
            error_detail(openai).0,
            "invalid_request_error: Invalid model"
        );
        assert_eq!(error_detail(b"<html>oops</html>").0, "<html>oops</html>");
        assert_eq!(parse_seconds("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_seconds("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }

    #[test]
    fn errors_are_scrubbed_of_the_key() {
        let client = HttpClient::new(
            Duration::from_secs(1),
            RetryPolicy::default(),
            Some(Secret::new("k3y")),
        )
        .unwrap();
        let e = client
            .redactor()
            .error(ProviderCode::Http(400), "bad key k3y");
        assert_eq!(e.to_string(), "bad key [REDACTED]");
    }
}
