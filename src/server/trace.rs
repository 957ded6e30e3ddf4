//! Where `GET /debug/trace/session/{id}` and `GET /debug/trace/{event_id}` read spans
//! from: [`StoreTraces`], the runtime's spans kept by [`crate::telemetry::store`], or
//! [`NoTraces`], which answers `[]` and 404 as `adk web` does for a session it has no
//! spans of.

use crate::telemetry::store::TraceStore;
use crate::telemetry::{AttrValue, SpanData};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// One finished span, in the shape the dev UI's Traces view reads.
///
/// Ids are JSON integers (`span_id` 64-bit, `trace_id` 128-bit), times nanoseconds since
/// the epoch. The UI finds the invocation through `attributes["gcp.vertex.agent.invocation_id"]`,
/// ties spans to events through `gcp.vertex.agent.event_id`, and reads
/// `gcp.vertex.agent.llm_request` / `llm_response` as JSON *strings*.
#[derive(Debug, Clone, Serialize)]
pub struct Span {
    /// `invocation`, `invoke_agent NAME`, `call_llm`, `execute_tool NAME`, ...
    pub name: String,
    /// The span's id.
    pub span_id: u64,
    /// The trace's id (one trace per invocation).
    pub trace_id: u128,
    /// Start, ns since the epoch.
    pub start_time: u64,
    /// End, ns since the epoch.
    pub end_time: u64,
    /// ADK's attribute keys.
    pub attributes: Map<String, Value>,
    /// The parent span, `null` for the root.
    pub parent_span_id: Option<u64>,
}

/// What `GET /debug/trace/{event_id}` answers: a span's attributes, then its `trace_id`
/// and `span_id` (JSON integers).
#[derive(Debug, Clone, Serialize)]
pub struct EventTrace {
    /// The span's attributes.
    #[serde(flatten)]
    pub attributes: Map<String, Value>,
    /// The trace's id.
    pub trace_id: u128,
    /// The span's id.
    pub span_id: u64,
}

/// A store of finished spans, by session and by event.
pub trait TraceSource: Send + Sync {
    /// The spans of a session's invocations, in any order; `[]` when none.
    fn session_spans(&self, session_id: &str) -> Vec<Span>;
    /// The attributes of the last `call_llm` or `execute_tool` span that produced an
    /// event, with `trace_id` and `span_id` added; `None` when unknown.
    fn event_trace(&self, event_id: &str) -> Option<EventTrace>;
}

/// No spans are recorded.
pub struct NoTraces;

impl TraceSource for NoTraces {
    fn session_spans(&self, _session_id: &str) -> Vec<Span> {
        Vec::new()
    }

    fn event_trace(&self, _event_id: &str) -> Option<EventTrace> {
        None
    }
}

/// The spans the runtime recorded, from the server's trace store.
pub struct StoreTraces(pub Arc<TraceStore>);

fn value(v: &AttrValue) -> Value {
    match v {
        AttrValue::Str(s) => json!(s),
        AttrValue::Int(n) => json!(n),
        AttrValue::Float(f) => json!(f),
        AttrValue::Bool(b) => json!(b),
        AttrValue::StrList(l) => json!(l),
    }
}

fn attributes(span: &SpanData) -> Map<String, Value> {
    span.attributes
        .iter()
        .map(|(k, v)| ((*k).to_owned(), value(v)))
        .collect()
}

impl TraceSource for StoreTraces {
    fn session_spans(&self, session_id: &str) -> Vec<Span> {
        self.0
            .session_spans(session_id)
            .iter()
            .map(|s| Span {
                name: s.name.clone(),
                span_id: s.span_id,
                trace_id: s.trace_id,
                start_time: s.start_ns,
                end_time: s.end_ns,
                attributes: attributes(s),
                parent_span_id: s.parent_span_id,
            })
            .collect()
    }

    fn event_trace(&self, event_id: &str) -> Option<EventTrace> {
        let span = self.0.event_span(event_id)?;
        let mut attributes = attributes(&span);
        // adk web overwrites these keys if a span had them as attributes.
        attributes.remove("trace_id");
        attributes.remove("span_id");
        Some(EventTrace {
            attributes,
            trace_id: span.trace_id,
            span_id: span.span_id,
        })
    }
}
