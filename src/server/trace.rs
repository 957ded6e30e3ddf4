//! Where `GET /debug/trace/session/{id}` and `GET /debug/trace/{event_id}` read spans
//! from. Tracing plugs in here by implementing [`TraceSource`]; until then [`NoTraces`]
//! answers `[]` and 404, as `adk web` does for a session it has no spans of.

use serde::Serialize;
use serde_json::{Map, Value};

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

/// A store of finished spans, by session and by event.
pub trait TraceSource: Send + Sync {
    /// The spans of a session's invocations, in any order; `[]` when none.
    fn session_spans(&self, session_id: &str) -> Vec<Span>;
    /// The attributes of the last `call_llm` or `execute_tool` span that produced an
    /// event, with `trace_id` and `span_id` added; `None` when unknown.
    fn event_trace(&self, event_id: &str) -> Option<Map<String, Value>>;
}

/// No spans are recorded.
pub struct NoTraces;

impl TraceSource for NoTraces {
    fn session_spans(&self, _session_id: &str) -> Vec<Span> {
        Vec::new()
    }

    fn event_trace(&self, _event_id: &str) -> Option<Map<String, Value>> {
        None
    }
}
