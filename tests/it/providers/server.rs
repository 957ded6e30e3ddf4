//! A local HTTP server for provider tests: records every request and answers with what
//! the test scripted, including streams that break or stall.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Request, Response, StatusCode};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Received {
    /// Path and query, e.g. `/v1/chat/completions`.
    pub uri: String,
    pub headers: HeaderMap,
    pub body: Value,
}

/// What the server does with request `n` (0-based).
pub enum Answer {
    /// A whole response.
    Now(Response<Body>),
    /// Never answers.
    Stall,
}

/// A running server; stops when dropped.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// Serves `answer(n)` for the n-th request.
    pub async fn start(answer: impl Fn(usize) -> Answer + Send + Sync + 'static) -> Server {
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        let answer = Arc::new(answer);
        let app = axum::Router::new().fallback(move |request: Request<Body>| {
            let log = Arc::clone(&log);
            let answer = Arc::clone(&answer);
            async move {
                let (parts, body) = request.into_parts();
                let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
                let n = {
                    let mut log = log.lock().unwrap();
                    log.push(Received {
                        uri: parts.uri.to_string(),
                        headers: parts.headers,
                        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                    });
                    log.len() - 1
                };
                match answer(n) {
                    Answer::Now(response) => response,
                    Answer::Stall => std::future::pending().await,
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Server {
            base,
            received,
            task,
        }
    }

    /// The requests so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A JSON response.
pub fn json(status: u16, body: Value) -> Answer {
    Answer::Now(
        Response::builder()
            .status(StatusCode::from_u16(status).unwrap())
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
    )
}

/// A JSON response with extra headers.
pub fn json_with(status: u16, headers: &[(&str, &str)], body: Value) -> Answer {
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", "application/json");
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    Answer::Now(builder.body(Body::from(body.to_string())).unwrap())
}

/// How an event stream ends.
pub enum End {
    /// The body ends cleanly.
    Clean,
    /// The connection drops mid-body.
    Drop,
    /// The server keeps the connection open and sends nothing more.
    Stall,
}

/// A server-sent event stream of `data:` payloads, one body chunk each.
pub fn sse(data: &[&str], end: End) -> Answer {
    let frames: Vec<Result<Bytes, std::io::Error>> = data
        .iter()
        .map(|d| Ok(Bytes::from(format!("data: {d}\n\n"))))
        .collect();
    let head = futures::stream::iter(frames);
    let body = match end {
        End::Clean => Body::from_stream(head),
        End::Drop => {
            use futures::StreamExt;
            let broken = futures::stream::once(async {
                // Let the chunks before reach the client first.
                tokio::time::sleep(Duration::from_millis(20)).await;
                Err(std::io::Error::other("connection dropped"))
            });
            Body::from_stream(head.chain(broken))
        }
        End::Stall => {
            use futures::StreamExt;
            let never = futures::stream::pending::<Result<Bytes, std::io::Error>>();
            Body::from_stream(head.chain(never))
        }
    };
    Answer::Now(
        Response::builder()
            .header("content-type", "text/event-stream")
            .body(body)
            .unwrap(),
    )
}
