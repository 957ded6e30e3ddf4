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
    /// A whole response, after a wait.
    Late(Duration, Response<Body>),
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
                    Answer::Late(wait, response) => {
                        tokio::time::sleep(wait).await;
                        response
                    }
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

/// A response with any body, valid or not.
pub fn raw(status: u16, content_type: &str, body: &str) -> Answer {
    Answer::Now(
        Response::builder()
            .status(StatusCode::from_u16(status).unwrap())
            .header("content-type", content_type)
            .body(Body::from(body.to_owned()))
            .unwrap(),
    )
}

/// `answer`, sent after `wait`.
pub fn late(wait: Duration, answer: Answer) -> Answer {
    match answer {
        Answer::Now(response) => Answer::Late(wait, response),
        other => other,
    }
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
    let frames: Vec<String> = data.iter().map(|d| format!("data: {d}\n\n")).collect();
    sse_frames(&frames, end)
}

/// An event stream whose body chunks are `frames`, as they are (valid SSE or not).
pub fn sse_frames(frames: &[String], end: End) -> Answer {
    let frames: Vec<Result<Bytes, std::io::Error>> =
        frames.iter().map(|f| Ok(Bytes::from(f.clone()))).collect();
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

/// What a [`RawServer`] does with one connection once it has read the request.
pub struct RawAnswer {
    /// Bytes written as they are (status line, headers, some body).
    pub bytes: Vec<u8>,
    /// Then reset the connection (TCP RST) rather than close it cleanly.
    pub reset: bool,
}

/// The head of an HTTP/1.1 response whose body ends when the connection does, or after
/// `length` bytes.
pub fn head(status: u16, content_type: &str, length: Option<usize>) -> String {
    let length = length
        .map(|n| format!("content-length: {n}\r\n"))
        .unwrap_or_default();
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\n{length}connection: close\r\n\r\n"
    )
}

/// A TCP server that speaks just enough HTTP/1.1 to break it: it reads each request,
/// writes the scripted bytes, then resets or closes the connection.
pub struct RawServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    requests: Arc<std::sync::atomic::AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl RawServer {
    /// Answers the n-th connection with `answer(n)`.
    pub async fn start(answer: impl Fn(usize) -> RawAnswer + Send + Sync + 'static) -> RawServer {
        use std::sync::atomic::Ordering;
        use tokio::io::AsyncWriteExt;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = Arc::clone(&requests);
        let answer = Arc::new(answer);
        let task = tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let count = Arc::clone(&count);
                let answer = Arc::clone(&answer);
                tokio::spawn(async move {
                    if read_request(&mut stream).await.is_err() {
                        return;
                    }
                    let a = answer(count.fetch_add(1, Ordering::SeqCst));
                    let _ = stream.write_all(&a.bytes).await;
                    let _ = stream.flush().await;
                    // Let the client read what was sent before the connection goes.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    if a.reset {
                        stream.set_zero_linger().unwrap();
                    }
                });
            }
        });
        RawServer {
            base,
            requests,
            task,
        }
    }

    /// Requests read so far.
    pub fn requests(&self) -> usize {
        self.requests.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request: the head, then as many body bytes as `content-length` says.
async fn read_request(stream: &mut tokio::net::TcpStream) -> std::io::Result<()> {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(())
}
