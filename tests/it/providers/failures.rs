//! Retries, timeouts and failures, on both providers.

use super::server::{Answer, End, Server, json, json_with, sse};
use super::{KEY, call, config, failure, model, question, text};
use adk_flow::model::provider::{self, Provider};
use serde_json::json;
use std::time::{Duration, Instant};

fn ok_openai() -> Answer {
    json(
        200,
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"},
                                  "finish_reason": "stop"}]}),
    )
}

#[tokio::test]
async fn rate_limits_are_retried_honouring_a_capped_retry_after() {
    let server = Server::start(|n| match n {
        0 => json_with(
            429,
            &[("retry-after", "60")],
            json!({"error": {"message": "slow down"}}),
        ),
        _ => ok_openai(),
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, Some(KEY));
    let start = Instant::now();
    let (responses, error) = call(m.as_ref(), &question("hi"), false).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text(&responses[0]), "fine");
    assert_eq!(server.received().len(), 2);
    // Retry-After: 60 is capped at max_retry_after (100 ms).
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn server_errors_give_up_after_max_attempts() {
    let server = Server::start(|_| {
        json(
            500,
            json!({"error": {"code": 500, "message": "internal trouble", "status": "INTERNAL"}}),
        )
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let (_, error) = call(m.as_ref(), &question("hi"), false).await;
    let (code, message) = failure(error);
    assert_eq!(code, "HTTP_500");
    assert!(message.contains("INTERNAL: internal trouble"), "{message}");
    assert!(message.contains("after 3 attempts"), "{message}");
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn streaming_calls_retry_until_the_stream_starts() {
    let server = Server::start(|n| match n {
        0 => json(503, json!({"error": {"message": "overloaded"}})),
        _ => sse(&[r#"{"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}"#, "[DONE]"], End::Clean),
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, None);
    let (responses, error) = call(m.as_ref(), &question("hi"), true).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(text(responses.last().unwrap()), "ok");
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_hide_the_key() {
    let server = Server::start(|_| {
        json(
            400,
            json!({"error": {"message": format!("Incorrect API key provided: {KEY}"),
                                   "type": "invalid_request_error", "code": "invalid_api_key"}}),
        )
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, Some(KEY));
    let (_, error) = call(m.as_ref(), &question("hi"), false).await;
    let (code, message) = failure(error);
    assert_eq!(code, "HTTP_400");
    assert!(
        message.contains("invalid_request_error: Incorrect API key provided: [REDACTED]"),
        "{message}"
    );
    assert!(!message.contains(KEY));
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_stalled_server_times_out() {
    let server = Server::start(|_| Answer::Stall).await;
    let mut c = config(Provider::OpenAi, &server.base, None);
    c.timeout = Duration::from_millis(300);
    c.retry.max_attempts = 2;
    let m = provider::build(&c).unwrap();
    for stream in [false, true] {
        let start = Instant::now();
        let (_, error) = call(m.as_ref(), &question("hi"), stream).await;
        let elapsed = start.elapsed();
        let (code, message) = failure(error);
        assert_eq!(code, "TIMEOUT", "{message}");
        // Two attempts of 300 ms and one short backoff.
        assert!(
            elapsed >= Duration::from_millis(600) && elapsed < Duration::from_secs(3),
            "{elapsed:?}"
        );
    }
    assert_eq!(server.received().len(), 4);
}

#[tokio::test]
async fn a_stream_that_goes_quiet_is_broken() {
    let server = Server::start(|_| {
        sse(
            &[r#"{"candidates": [{"content": {"parts": [{"text": "Hel"}], "role": "model"}}]}"#],
            End::Stall,
        )
    })
    .await;
    let mut c = config(Provider::Gemini, &server.base, Some(KEY));
    c.timeout = Duration::from_millis(300);
    let m = provider::build(&c).unwrap();
    let start = Instant::now();
    let (responses, error) = call(m.as_ref(), &question("hi"), true).await;
    assert_eq!(text(&responses[0]), "Hel");
    let (code, message) = failure(error);
    assert_eq!(code, "STREAM_BROKEN");
    assert!(message.contains("no data for 300ms"), "{message}");
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let m = model(
        Provider::OpenAi,
        &format!("http://127.0.0.1:{port}/v1"),
        None,
    );
    let (_, error) = call(m.as_ref(), &question("hi"), false).await;
    let (code, message) = failure(error);
    assert_eq!(code, "CONNECT", "{message}");
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(message.contains("after 3 attempts"), "{message}");
}
