//! MCP's deprecated HTTP+SSE transport (protocol version 2024-11-05, ADK's
//! `sse_connection_params`), which rmcp no longer ships: `GET url` opens a server-sent
//! event stream whose first event, `endpoint`, names the URL (relative to `url`) the
//! client POSTs each JSON-RPC message to; the server's messages arrive as `message`
//! events on the stream. Given to rmcp as a sink and a stream.

use futures::stream::BoxStream;
use futures::{Sink, Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use std::pin::Pin;

/// A failure of the SSE transport.
#[derive(Debug, thiserror::Error)]
pub(super) enum SseError {
    /// The event stream could not be opened.
    #[error("cannot open the event stream: {0}")]
    Open(String),
    /// The stream ended or broke before naming the endpoint.
    #[error("the event stream named no `endpoint` to post messages to")]
    NoEndpoint,
    /// The endpoint is not a URL relative to the server's.
    #[error("the server's endpoint `{0}` is not a URL")]
    BadEndpoint(String),
    /// A message could not be posted.
    #[error("cannot post a message: {0}")]
    Post(String),
}

/// One server-sent event: its type (`message` when unnamed) and data.
struct SseEvent {
    kind: String,
    data: String,
}

/// The events of a response body, per the SSE specification's line rules (`\n`, `\r\n`
/// or `\r` line ends; `data` lines joined by `\n`; comments and unknown fields skipped).
fn events(response: reqwest::Response) -> BoxStream<'static, SseEvent> {
    let body = response.bytes_stream();
    Box::pin(async_stream::stream! {
        futures::pin_mut!(body);
        let mut buffer: Vec<u8> = Vec::new();
        let mut kind = String::new();
        let mut data: Option<String> = None;
        while let Some(Ok(chunk)) = body.next().await {
            buffer.extend_from_slice(&chunk);
            while let Some(end) = buffer.iter().position(|&b| b == b'\n' || b == b'\r') {
                let mut line: Vec<u8> = buffer.drain(..=end).collect();
                let ending = line.pop();
                if ending == Some(b'\r') && buffer.first() == Some(&b'\n') {
                    buffer.remove(0);
                }
                let line = String::from_utf8_lossy(&line).into_owned();
                if line.is_empty() {
                    if let Some(d) = data.take() {
                        let kind = if kind.is_empty() { "message".to_owned() } else { std::mem::take(&mut kind) };
                        yield SseEvent { kind, data: d };
                    }
                    kind.clear();
                    continue;
                }
                let (field, value) = match line.split_once(':') {
                    Some((f, v)) => (f.to_owned(), v.strip_prefix(' ').unwrap_or(v).to_owned()),
                    None => (line.clone(), String::new()),
                };
                match field.as_str() {
                    "event" => kind = value,
                    "data" => match &mut data {
                        Some(d) => {
                            d.push('\n');
                            d.push_str(&value);
                        }
                        None => data = Some(value),
                    },
                    _ => {}
                }
            }
        }
    })
}

/// The sink and stream rmcp drives.
pub(super) type SsePair = (
    Pin<Box<dyn Sink<ClientJsonRpcMessage, Error = SseError> + Send>>,
    Pin<Box<dyn Stream<Item = ServerJsonRpcMessage> + Send>>,
);

/// Opens the event stream at `url` and waits for its `endpoint`.
///
/// # Errors
/// The stream cannot be opened, or ends without naming an endpoint.
pub(super) async fn connect(url: &str, headers: HeaderMap) -> Result<SsePair, SseError> {
    let client = reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .map_err(|e| SseError::Open(e.to_string()))?;
    let response = client
        .get(url)
        .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| SseError::Open(e.without_url().to_string()))?;
    let mut stream = events(response);
    let endpoint = loop {
        match stream.next().await {
            Some(e) if e.kind == "endpoint" => break e.data,
            Some(_) => continue,
            None => return Err(SseError::NoEndpoint),
        }
    };
    let base = reqwest::Url::parse(url).map_err(|_| SseError::BadEndpoint(endpoint.clone()))?;
    let post_to = base
        .join(endpoint.trim())
        .map_err(|_| SseError::BadEndpoint(endpoint.clone()))?;
    let messages = stream.filter_map(|e| async move {
        if e.kind != "message" {
            return None;
        }
        match serde_json::from_str::<ServerJsonRpcMessage>(&e.data) {
            Ok(m) => Some(m),
            Err(err) => {
                tracing::warn!("MCP SSE: a message that is not JSON-RPC: {err}");
                None
            }
        }
    });
    let sink = futures::sink::unfold(
        (client, post_to),
        |(client, post_to), message: ClientJsonRpcMessage| async move {
            let body = serde_json::to_vec(&message).map_err(|e| SseError::Post(e.to_string()))?;
            client
                .post(post_to.clone())
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(body)
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map_err(|e| SseError::Post(e.without_url().to_string()))?;
            Ok::<_, SseError>((client, post_to))
        },
    );
    Ok((Box::pin(sink), Box::pin(messages)))
}
