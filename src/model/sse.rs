//! Server-sent events, read as the WHATWG specification says, keeping only what the
//! providers use: the `data` of each event; and the payload streams of a response body
//! (bounded by [`MAX_ANSWER_BYTES`], broken streams reported as `STREAM_BROKEN`).
//!
//! Lines end with CR, LF or CRLF; a blank line ends an event, whose `data` lines are joined
//! with newlines; lines starting with `:` are comments; `event`, `id`, `retry` and unknown
//! fields are ignored, as is a line without a colon; a leading byte-order mark is dropped.
//! An event the body ends in the middle of is dropped. Bytes that are not UTF-8 become
//! U+FFFD. The result does not depend on how the body is cut into chunks: every event
//! completed before a failure is delivered before it.

use super::http::{MAX_ANSWER_BYTES, Redactor};
use super::{ModelError, ProviderCode};
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use std::fmt;
use std::time::Duration;

/// The reader's state between chunks.
#[derive(Debug, Default)]
pub(crate) struct SseReader {
    /// The line read so far.
    line: Vec<u8>,
    /// The `data` of the event read so far, if it has any.
    data: Option<String>,
    /// The last chunk ended with CR: a LF starting the next one belongs to it.
    after_cr: bool,
    /// A line has ended (a byte-order mark can only start the first one).
    started: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseReader {
    /// Reads `bytes`, pushing the data of every event they complete onto `out`.
    pub(crate) fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<String>) {
        while !bytes.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if bytes[0] == b'\n' {
                    bytes = &bytes[1..];
                    continue;
                }
            }
            match bytes.iter().position(|b| matches!(b, b'\n' | b'\r')) {
                Some(end) => {
                    self.line.extend_from_slice(&bytes[..end]);
                    self.after_cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    self.end_line(out);
                }
                None => {
                    self.line.extend_from_slice(bytes);
                    bytes = &[];
                }
            }
        }
    }

    fn end_line(&mut self, out: &mut Vec<String>) {
        // The first line collects the first bytes however they were cut.
        if !self.started {
            self.started = true;
            if self.line.starts_with(BOM) {
                self.line.drain(..BOM.len());
            }
        }
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            out.extend(self.data.take());
            return;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(0) => return, // a comment
            Some(i) => (
                &line[..i],
                line[i + 1..].strip_prefix(b" ").unwrap_or(&line[i + 1..]),
            ),
            None => (&line[..], &[][..]),
        };
        if field == b"data" {
            let value = String::from_utf8_lossy(value);
            match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(&value);
                }
                None => self.data = Some(value.into_owned()),
            }
        }
        // Reuse the line's allocation.
        self.line = line;
        self.line.clear();
    }
}

/// Why a response body stopped.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Nothing arrived for this long.
    Idle(Duration),
    /// The connection failed.
    Transport(String),
    /// The body grew past [`MAX_ANSWER_BYTES`].
    TooLarge,
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::Idle(d) => write!(f, "no data for {d:?}"),
            BodyError::Transport(e) => f.write_str(e),
            BodyError::TooLarge => write!(f, "the answer is larger than {MAX_ANSWER_BYTES} bytes"),
        }
    }
}

impl std::error::Error for BodyError {}

/// The `data:` payloads of a server-sent event stream; `Err(message)` (then the end) when
/// the body breaks or stays idle for `idle`.
pub(super) fn sse_data(
    response: reqwest::Response,
    idle: Duration,
) -> BoxStream<'static, Result<String, String>> {
    let mut body = response.bytes_stream();
    let guarded = async_stream::stream! {
        loop {
            match tokio::time::timeout(idle, body.next()).await {
                Err(_) => {
                    yield Err(BodyError::Idle(idle));
                    break;
                }
                Ok(None) => break,
                Ok(Some(Ok(bytes))) => yield Ok(bytes),
                Ok(Some(Err(e))) => {
                    yield Err(BodyError::Transport(crate::errors::chain(&e)));
                    break;
                }
            }
        }
    };
    sse_payloads(guarded)
}

/// `payloads` with each failure a `STREAM_BROKEN` error naming `url`.
pub(crate) fn broken_on_error(
    payloads: BoxStream<'static, Result<String, String>>,
    redactor: Redactor,
    url: String,
) -> BoxStream<'static, Result<String, ModelError>> {
    payloads
        .map(move |item| {
            item.map_err(|e| {
                redactor.error(
                    ProviderCode::StreamBroken,
                    format!("stream from {url}: {e}"),
                )
            })
        })
        .boxed()
}

/// The `data:` payloads of the server-sent events in a body that arrives in chunks (read
/// by [`SseReader`]); `Err(message)` (then the end) when the body fails or grows past
/// [`MAX_ANSWER_BYTES`]. An event the body ends in the middle of is dropped (the providers
/// notice what is missing).
pub(crate) fn sse_payloads(
    body: impl Stream<Item = Result<Bytes, BodyError>> + Send + 'static,
) -> BoxStream<'static, Result<String, String>> {
    let mut read = 0usize;
    let bounded = body.map(move |chunk| {
        let chunk = chunk?;
        read = read.saturating_add(chunk.len());
        if read > MAX_ANSWER_BYTES {
            Err(BodyError::TooLarge)
        } else {
            Ok(chunk)
        }
    });
    let mut bounded = Box::pin(bounded);
    Box::pin(async_stream::stream! {
        let mut reader = SseReader::default();
        let mut events = Vec::new();
        while let Some(chunk) = bounded.next().await {
            match chunk {
                Ok(bytes) => {
                    reader.feed(&bytes, &mut events);
                    for data in events.drain(..) {
                        yield Ok(data);
                    }
                }
                Err(e) => {
                    yield Err(e.to_string());
                    break;
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(chunks: &[&[u8]]) -> Vec<String> {
        let mut reader = SseReader::default();
        let mut out = Vec::new();
        for c in chunks {
            reader.feed(c, &mut out);
        }
        out
    }

    #[test]
    fn reads_events_as_the_specification_says() {
        let body: &[u8] = b"\xEF\xBB\xBFdata: a\r\n\r\n: comment\ndata:b\ndata: c\nevent: x\nid: 1\nretry: 9\nbogus\nfoo: bar\n\ndata\n\ndata: d\r\rdata: unfinished";
        let want = ["a", "b\nc", "", "d"];
        assert_eq!(read(&[body]), want);
        // Cut anywhere, the same events.
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(read(&bytes), want);
        for cut in 0..body.len() {
            assert_eq!(read(&[&body[..cut], &body[cut..]]), want, "cut at {cut}");
        }
    }

    #[test]
    fn events_without_data_and_invalid_utf8() {
        assert_eq!(read(&[b"event: ping\n\n"]), Vec::<String>::new());
        assert_eq!(read(&[b"data: \xFF\n\n"]), ["\u{FFFD}"]);
        // A byte-order mark only counts first; one split across chunks still does.
        assert_eq!(read(&[b"\xEF\xBB", b"\xBFdata: x\n\n"]), ["x"]);
        assert_eq!(read(&[b"\n\xEF\xBB\xBFdata: x\n\n"]), Vec::<String>::new());
    }
}
