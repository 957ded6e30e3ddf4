//! Spans: what an invocation did, as OpenTelemetry spans with ADK's names and attribute
//! keys (`invocation`, `invoke_agent NAME`, `call_llm`, `generate_content MODEL`,
//! `execute_tool NAME`).
//!
//! A [`Tracer`] is either off (the default: every span is an empty value, no clock is
//! read, nothing is allocated) or hands each finished span to its sinks: the server's
//! in-memory [`store::TraceStore`] behind `/debug/trace/...`, and the OTLP/HTTP exporter
//! ([`otlp`]). The runtime builds the attributes (see `flow::trace`); this module knows
//! nothing of agents or models.
//!
//! Parents are explicit: a [`TraceParent`] is handed down with the invocation context, so
//! concurrent branches and tools never share a "current span".

pub mod otlp;
pub mod store;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// The attribute a live run's `invocation` span carries (`"live"`), so that the trace is
/// listed with its session although it holds no `call_llm` span.
pub const LIVE_RUN_KEY: &str = "adk_flow.run";

/// An attribute value, typed as OpenTelemetry types it.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A string.
    Str(String),
    /// A 64-bit integer.
    Int(i64),
    /// A double.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A list of strings (`gen_ai.response.finish_reasons`).
    StrList(Vec<String>),
}

impl From<&str> for AttrValue {
    fn from(s: &str) -> Self {
        AttrValue::Str(s.to_owned())
    }
}

impl From<String> for AttrValue {
    fn from(s: String) -> Self {
        AttrValue::Str(s)
    }
}

impl From<i64> for AttrValue {
    fn from(n: i64) -> Self {
        AttrValue::Int(n)
    }
}

impl From<f64> for AttrValue {
    fn from(n: f64) -> Self {
        AttrValue::Float(n)
    }
}

/// A finished span.
#[derive(Debug, Clone)]
pub struct SpanData {
    /// `invocation`, `invoke_agent NAME`, `call_llm`, ...
    pub name: String,
    /// The trace (one per invocation).
    pub trace_id: u128,
    /// This span.
    pub span_id: u64,
    /// The parent span; `None` for an invocation's root.
    pub parent_span_id: Option<u64>,
    /// Start, nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, nanoseconds since the Unix epoch.
    pub end_ns: u64,
    /// Attributes in the order they were set (a key set twice keeps its first place and
    /// its last value).
    pub attributes: Vec<(&'static str, AttrValue)>,
    /// The session whose invocation this span belongs to (not an attribute: the store
    /// files spans by it).
    pub session_id: Arc<str>,
    /// Set when the span's work failed: OpenTelemetry's error status and its message.
    pub error: Option<String>,
}

impl SpanData {
    /// The value of an attribute.
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// The value of a string attribute.
    pub fn str_attribute(&self, key: &str) -> Option<&str> {
        match self.attribute(key) {
            Some(AttrValue::Str(s)) => Some(s),
            _ => None,
        }
    }
}

/// Where finished spans go.
pub trait SpanSink: Send + Sync {
    /// Called once per span, when it ends (children before their parents).
    fn on_end(&self, span: &Arc<SpanData>);
}

struct Inner {
    sinks: Vec<Arc<dyn SpanSink>>,
    capture_content: bool,
}

/// Starts invocation spans; off by default. Cheap to clone.
#[derive(Clone, Default)]
pub struct Tracer(Option<Arc<Inner>>);

impl std::fmt::Debug for Tracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracer").field("on", &self.is_on()).finish()
    }
}

impl Tracer {
    /// A tracer that records nothing.
    pub fn off() -> Self {
        Tracer(None)
    }

    /// A tracer handing finished spans to `sinks`; off when there is none.
    ///
    /// `capture_content` is ADK's `ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS`: when false, the
    /// request, response, tool argument and tool result attributes are `{}`.
    pub fn new(sinks: Vec<Arc<dyn SpanSink>>, capture_content: bool) -> Self {
        if sinks.is_empty() {
            return Tracer(None);
        }
        Tracer(Some(Arc::new(Inner {
            sinks,
            capture_content,
        })))
    }

    /// Whether spans are recorded.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// The root span of an invocation of `session_id`: a new trace, or a child of
    /// `parent` when the invocation runs inside another (an AgentTool's run).
    pub fn root(&self, name: &str, session_id: &str, parent: Option<&TraceParent>) -> Span {
        let Some(inner) = &self.0 else {
            return Span::none();
        };
        let (trace_id, parent_span_id) = match parent {
            Some(p) => (p.trace_id(), Some(p.span_id())),
            None => (new_trace_id(), None),
        };
        Span::start(
            Arc::clone(inner),
            name.to_owned(),
            trace_id,
            parent_span_id,
            Arc::from(session_id),
        )
    }
}

/// What a child span needs from its parent. Cheap to clone.
#[derive(Clone)]
pub struct TraceParent(Arc<ParentInner>);

struct ParentInner {
    inner: Arc<Inner>,
    session_id: Arc<str>,
    trace_id: u128,
    span_id: u64,
}

impl TraceParent {
    /// The trace.
    pub fn trace_id(&self) -> u128 {
        self.0.trace_id
    }

    /// The parent span.
    pub fn span_id(&self) -> u64 {
        self.0.span_id
    }

    /// Whether content (requests, responses, tool arguments and results) goes into spans.
    pub fn captures_content(&self) -> bool {
        self.0.inner.capture_content
    }

    /// The session the trace belongs to.
    pub fn session_id(&self) -> &str {
        &self.0.session_id
    }
}

/// A span being recorded, or nothing when tracing is off. Ends when dropped.
#[must_use = "a span ends when it is dropped"]
pub struct Span(Option<Box<Recording>>);

struct Recording {
    inner: Arc<Inner>,
    data: SpanData,
}

impl Span {
    /// A span that records nothing.
    pub fn none() -> Span {
        Span(None)
    }

    fn start(
        inner: Arc<Inner>,
        name: String,
        trace_id: u128,
        parent_span_id: Option<u64>,
        session_id: Arc<str>,
    ) -> Span {
        Span(Some(Box::new(Recording {
            inner,
            data: SpanData {
                name,
                trace_id,
                span_id: new_span_id(),
                parent_span_id,
                start_ns: now_ns(),
                end_ns: 0,
                attributes: Vec::new(),
                session_id,
                error: None,
            },
        })))
    }

    /// A child of `parent` named `name()`; nothing when there is no parent (tracing off).
    pub fn child(parent: Option<&TraceParent>, name: impl FnOnce() -> String) -> Span {
        match parent {
            None => Span::none(),
            Some(p) => Span::start(
                Arc::clone(&p.0.inner),
                name(),
                p.trace_id(),
                Some(p.span_id()),
                Arc::clone(&p.0.session_id),
            ),
        }
    }

    /// Whether this span records anything.
    pub fn is_recording(&self) -> bool {
        self.0.is_some()
    }

    /// Whether content goes into this span's attributes.
    pub fn captures_content(&self) -> bool {
        self.0.as_ref().is_some_and(|r| r.inner.capture_content)
    }

    /// Sets an attribute; `value` is only computed when the span records.
    pub fn set(&mut self, key: &'static str, value: impl FnOnce() -> AttrValue) {
        let Some(r) = &mut self.0 else { return };
        let value = value();
        match r.data.attributes.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => r.data.attributes.push((key, value)),
        }
    }

    /// Sets a string attribute (copied only when the span records).
    pub fn set_str(&mut self, key: &'static str, value: &str) {
        self.set(key, || AttrValue::Str(value.to_owned()));
    }

    /// Marks the span failed (OpenTelemetry's error status) with a message (`message()`
    /// is only computed when the span records).
    pub fn set_error(&mut self, message: impl FnOnce() -> String) {
        if let Some(r) = &mut self.0 {
            r.data.error = Some(message());
        }
    }

    /// The parent handle for this span's children; `None` when not recording.
    pub fn as_parent(&self) -> Option<TraceParent> {
        let r = self.0.as_ref()?;
        Some(TraceParent(Arc::new(ParentInner {
            inner: Arc::clone(&r.inner),
            session_id: Arc::clone(&r.data.session_id),
            trace_id: r.data.trace_id,
            span_id: r.data.span_id,
        })))
    }

    /// The span's id, when it records.
    pub fn span_id(&self) -> Option<u64> {
        self.0.as_ref().map(|r| r.data.span_id)
    }
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            let Recording { inner, mut data } = *r;
            data.end_ns = now_ns().max(data.start_ns);
            let data = Arc::new(data);
            for sink in &inner.sinks {
                sink.on_end(&data);
            }
        }
    }
}

/// Nanoseconds since the Unix epoch.
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// A random, non-zero 64-bit span id.
fn new_span_id() -> u64 {
    let u = uuid::Uuid::new_v4().as_u128();
    // The version and variant bits of a v4 uuid are fixed; folding the halves hides them.
    let id = ((u >> 64) as u64) ^ (u as u64).rotate_left(29);
    id.max(1)
}

/// A random, non-zero 128-bit trace id.
fn new_trace_id() -> u128 {
    let a = uuid::Uuid::new_v4().as_u128();
    let b = uuid::Uuid::new_v4().as_u128();
    (a ^ b.rotate_left(67)).max(1)
}

#[cfg(test)]
mod tests;
