//! Fault injection on both providers, streamed and not: connections reset before or in the
//! middle of an answer, truncated event streams, invalid JSON, answers slower than the
//! timeout, storms of 429s. Every call must end, within a bound, in a response (after
//! retries) or in one error with nothing after it; a stream that has shown chunks is never
//! retried.

use super::server::{
    Answer, End, RawAnswer, RawServer, Server, head, json_with, late, raw, sse_frames,
};
use super::{KEY, call, config, text};
use adk_flow::model::provider::{self, Provider};
use adk_flow::model::{LlmResponse, ModelError};
use axum::body::{Body, Bytes};
use axum::http::Response;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The per-attempt timeout of these tests; attempts are 3.
const TIMEOUT: Duration = Duration::from_millis(300);

/// Longer than any call may take here: 3 attempts of [`TIMEOUT`] plus short backoffs.
const BOUND: Duration = Duration::from_secs(10);

/// Every provider, streamed and not.
const MODES: [(Provider, bool); 4] = [
    (Provider::Gemini, false),
    (Provider::Gemini, true),
    (Provider::OpenAi, false),
    (Provider::OpenAi, true),
];

/// A whole answer saying "fine".
fn whole(p: Provider) -> Value {
    match p {
        Provider::Gemini => json!({"candidates": [{"content": {"parts": [{"text": "fine"}],
            "role": "model"}, "finishReason": "STOP"}]}),
        Provider::OpenAi => json!({"choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "fine"}}]}),
    }
}

/// The `data:` payloads of a streamed answer saying "fi", then "ne" and the end.
fn chunks(p: Provider) -> Vec<String> {
    match p {
        Provider::Gemini => vec![
            json!({"candidates": [{"content": {"parts": [{"text": "fi"}], "role": "model"}}]})
                .to_string(),
            json!({"candidates": [{"content": {"parts": [{"text": "ne"}], "role": "model"},
                "finishReason": "STOP"}]})
            .to_string(),
        ],
        Provider::OpenAi => vec![
            json!({"choices": [{"index": 0, "delta": {"content": "fi"}}]}).to_string(),
            json!({"choices": [{"index": 0, "delta": {"content": "ne"}, "finish_reason": "stop"}]})
                .to_string(),
            "[DONE]".to_owned(),
        ],
    }
}

/// Server-sent event frames of `payloads`.
fn frames(payloads: &[String]) -> Vec<String> {
    payloads.iter().map(|d| format!("data: {d}\n\n")).collect()
}

/// The answer that succeeds, in the mode asked for.
fn ok(p: Provider, stream: bool) -> Answer {
    if stream {
        sse_frames(&frames(&chunks(p)), End::Clean)
    } else {
        raw(200, "application/json", &whole(p).to_string())
    }
}

/// The same success, written by hand on a raw connection.
fn ok_raw(p: Provider, stream: bool) -> RawAnswer {
    let bytes = if stream {
        let body = frames(&chunks(p)).concat();
        format!("{}{body}", head(200, "text/event-stream", None))
    } else {
        let body = whole(p).to_string();
        format!("{}{body}", head(200, "application/json", Some(body.len())))
    };
    RawAnswer {
        bytes: bytes.into_bytes(),
        reset: false,
    }
}

/// The model under test: short timeout, 3 attempts, fast backoff.
fn model(p: Provider, base: &str) -> std::sync::Arc<dyn adk_flow::model::Model> {
    let mut c = config(p, base, Some(KEY));
    c.timeout = TIMEOUT;
    provider::build(&c).unwrap()
}

/// One call, which must end within [`BOUND`].
async fn outcome(p: Provider, stream: bool, base: &str) -> (Vec<LlmResponse>, Option<ModelError>) {
    let m = model(p, base);
    let start = Instant::now();
    let result = tokio::time::timeout(BOUND, call(m.as_ref(), &super::question("hi"), stream))
        .await
        .unwrap_or_else(|_| panic!("{p} stream={stream}: the call hangs"));
    assert!(start.elapsed() < BOUND);
    result
}

/// Asserts the call succeeded with "fine" (the aggregate last when streaming).
fn succeeded(what: &str, (responses, error): &(Vec<LlmResponse>, Option<ModelError>)) {
    assert!(error.is_none(), "{what}: {error:?}");
    let last = responses
        .last()
        .unwrap_or_else(|| panic!("{what}: no response"));
    assert_eq!(text(last), "fine", "{what}");
    assert_ne!(last.partial, Some(true), "{what}");
}

/// Asserts the call failed with `code` after showing `shown` partial texts; returns the
/// message.
fn failed(
    what: &str,
    (responses, error): &(Vec<LlmResponse>, Option<ModelError>),
    code: &str,
    shown: &[&str],
) -> String {
    let Some(ModelError::Provider { code: got, message }) = error else {
        panic!("{what}: expected {code}, got {error:?} after {responses:?}");
    };
    assert_eq!(got, code, "{what}: {message}");
    let texts: Vec<String> = responses.iter().map(text).collect();
    assert_eq!(texts, shown, "{what}");
    assert!(responses.iter().all(|r| r.partial == Some(true)), "{what}");
    assert!(!message.contains(KEY), "{what}: {message}");
    message.clone()
}

fn what(p: Provider, stream: bool, case: &str) -> String {
    format!("{p} stream={stream}: {case}")
}

#[tokio::test]
async fn a_connection_reset_before_the_answer_is_retried() {
    for (p, stream) in MODES {
        // Reset every time: the attempts run out.
        let server = RawServer::start(|_| RawAnswer {
            bytes: Vec::new(),
            reset: true,
        })
        .await;
        let w = what(p, stream, "always reset");
        let message = failed(&w, &outcome(p, stream, &server.base).await, "NETWORK", &[]);
        assert!(message.contains("after 3 attempts"), "{w}: {message}");
        assert_eq!(server.requests(), 3, "{w}");
        // Reset once: the retry answers.
        let server = RawServer::start(move |n| match n {
            0 => RawAnswer {
                bytes: Vec::new(),
                reset: true,
            },
            _ => ok_raw(p, stream),
        })
        .await;
        let w = what(p, stream, "reset once");
        succeeded(&w, &outcome(p, stream, &server.base).await);
        assert_eq!(server.requests(), 2, "{w}");
    }
}

#[tokio::test]
async fn a_connection_reset_in_the_middle_of_an_answer() {
    for (p, stream) in MODES {
        let server = RawServer::start(move |_| {
            let bytes = if stream {
                // Headers and the first event, then the connection goes.
                let first = frames(&chunks(p)[..1]).concat();
                format!("{}{first}", head(200, "text/event-stream", None))
            } else {
                let body = whole(p).to_string();
                let half = &body[..body.len() / 2];
                format!("{}{half}", head(200, "application/json", Some(body.len())))
            };
            RawAnswer {
                bytes: bytes.into_bytes(),
                reset: true,
            }
        })
        .await;
        let w = what(p, stream, "reset mid-answer");
        let result = outcome(p, stream, &server.base).await;
        if stream {
            // The first chunk was shown: no retry, the stream is broken.
            failed(&w, &result, "STREAM_BROKEN", &["fi"]);
            assert_eq!(server.requests(), 1, "{w}");
        } else {
            // Nothing was shown: the whole call is tried again.
            let message = failed(&w, &result, "NETWORK", &[]);
            assert!(message.contains("after 3 attempts"), "{w}: {message}");
            assert_eq!(server.requests(), 3, "{w}");
        }
    }
}

#[tokio::test]
async fn a_truncated_answer_is_an_error_not_a_reply() {
    for (p, stream) in MODES {
        // Cut after the first event (stream), or a body whose JSON stops halfway.
        let server = Server::start(move |_| {
            if stream {
                sse_frames(&frames(&chunks(p)[..1]), End::Clean)
            } else {
                let body = whole(p).to_string();
                raw(200, "application/json", &body[..body.len() / 2])
            }
        })
        .await;
        let w = what(p, stream, "truncated after a chunk");
        let result = outcome(p, stream, &server.base).await;
        if stream {
            let message = failed(&w, &result, "STREAM_BROKEN", &["fi"]);
            let why = match p {
                Provider::Gemini => "before the model finished",
                Provider::OpenAi => "without [DONE]",
            };
            assert!(message.contains(why), "{w}: {message}");
        } else {
            failed(&w, &result, "BAD_RESPONSE", &[]);
        }
        assert_eq!(server.received().len(), 1, "{w}: not retried");
    }
    // A stream cut in the middle of its first event shows nothing and is broken.
    for p in [Provider::Gemini, Provider::OpenAi] {
        let server = Server::start(move |_| {
            let first = &frames(&chunks(p))[0];
            sse_frames(&[first[..first.len() / 2].to_owned()], End::Clean)
        })
        .await;
        let w = what(p, true, "truncated mid-event");
        failed(
            &w,
            &outcome(p, true, &server.base).await,
            "STREAM_BROKEN",
            &[],
        );
    }
}

#[tokio::test]
async fn invalid_json_is_a_bad_response_or_a_broken_stream() {
    for (p, stream) in MODES {
        for body in ["{not json", r#"{"candidates": "many", "choices": 7}"#, "[]"] {
            let server = Server::start(move |_| {
                if stream {
                    sse_frames(&frames(&[body.to_owned()]), End::Clean)
                } else {
                    raw(200, "application/json", body)
                }
            })
            .await;
            let w = what(p, stream, body);
            let code = if stream {
                "STREAM_BROKEN"
            } else {
                "BAD_RESPONSE"
            };
            failed(&w, &outcome(p, stream, &server.base).await, code, &[]);
            assert_eq!(server.received().len(), 1, "{w}: not retried");
        }
    }
}

#[tokio::test]
async fn an_answer_slower_than_the_timeout_is_retried_then_given_up() {
    let slow = TIMEOUT * 3;
    for (p, stream) in MODES {
        // Headers later than the timeout, every time.
        let server = Server::start(move |_| late(slow, ok(p, stream))).await;
        let w = what(p, stream, "always late");
        let message = failed(&w, &outcome(p, stream, &server.base).await, "TIMEOUT", &[]);
        assert!(message.contains("after 3 attempts"), "{w}: {message}");
        assert_eq!(server.received().len(), 3, "{w}");
        // Late once: the retry answers.
        let server = Server::start(move |n| match n {
            0 => late(slow, ok(p, stream)),
            _ => ok(p, stream),
        })
        .await;
        let w = what(p, stream, "late once");
        succeeded(&w, &outcome(p, stream, &server.base).await);
        assert_eq!(server.received().len(), 2, "{w}");
        // Headers at once, then the body stops coming.
        let server = Server::start(move |_| {
            let first = if stream {
                frames(&chunks(p)[..1]).concat()
            } else {
                let body = whole(p).to_string();
                body[..body.len() / 2].to_owned()
            };
            let body = futures::StreamExt::chain(
                futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(first))]),
                futures::stream::pending(),
            );
            Answer::Now(
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from_stream(body))
                    .unwrap(),
            )
        })
        .await;
        let w = what(p, stream, "body stalls");
        let result = outcome(p, stream, &server.base).await;
        if stream {
            let message = failed(&w, &result, "STREAM_BROKEN", &["fi"]);
            assert!(message.contains("no data for"), "{w}: {message}");
            assert_eq!(server.received().len(), 1, "{w}");
        } else {
            failed(&w, &result, "TIMEOUT", &[]);
            assert_eq!(server.received().len(), 3, "{w}");
        }
    }
}

#[tokio::test]
async fn a_storm_of_429s_ends_in_an_error_or_the_answer() {
    for (p, stream) in MODES {
        let limited = || {
            json_with(
                429,
                &[("retry-after", "3600")],
                json!({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}),
            )
        };
        // Every attempt rate-limited; the hour the server asks for is capped.
        let server = Server::start(move |_| limited()).await;
        let w = what(p, stream, "429 storm");
        let start = Instant::now();
        let message = failed(&w, &outcome(p, stream, &server.base).await, "HTTP_429", &[]);
        assert!(message.contains("after 3 attempts"), "{w}: {message}");
        assert!(start.elapsed() < Duration::from_secs(3), "{w}");
        assert_eq!(server.received().len(), 3, "{w}");
        // The storm passes before the attempts run out.
        let server = Server::start(move |n| if n < 2 { limited() } else { ok(p, stream) }).await;
        let w = what(p, stream, "429 twice");
        succeeded(&w, &outcome(p, stream, &server.base).await);
        assert_eq!(server.received().len(), 3, "{w}");
    }
}

#[tokio::test]
async fn an_endless_answer_is_cut_at_the_size_limit() {
    // The limit lives in the HTTP layer both providers share: one of each way is enough.
    for (p, stream) in [(Provider::Gemini, false), (Provider::OpenAi, true)] {
        let server = Server::start(move |_| {
            let start = if stream {
                "data: {\"x\": \""
            } else {
                "{\"x\": \""
            };
            let endless = futures::StreamExt::chain(
                futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(start))]),
                futures::stream::repeat_with(|| Ok(Bytes::from(vec![b'a'; 1 << 20]))),
            );
            Answer::Now(
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(Body::from_stream(endless))
                    .unwrap(),
            )
        })
        .await;
        let mut c = config(p, &server.base, Some(KEY));
        c.timeout = Duration::from_secs(8);
        let m = provider::build(&c).unwrap();
        let w = what(p, stream, "endless body");
        let result = tokio::time::timeout(
            Duration::from_secs(20),
            call(m.as_ref(), &super::question("hi"), stream),
        )
        .await
        .unwrap_or_else(|_| panic!("{w}: the call hangs"));
        let code = if stream {
            "STREAM_BROKEN"
        } else {
            "BAD_RESPONSE"
        };
        let message = failed(&w, &result, code, &[]);
        assert!(
            message.contains("larger than 67108864 bytes"),
            "{w}: {message}"
        );
        assert_eq!(server.received().len(), 1, "{w}: not retried");
    }
}
