//! The in-memory store behind `/debug/trace/session/{id}` and `/debug/trace/{event_id}`:
//! finished spans filed by session, bounded per session and in the number of sessions.
//!
//! It answers what `adk web`'s two exporters answer: a session's spans are those of the
//! traces in which a `call_llm` span carried that session's id, in the order they ended;
//! an event's trace is the last `call_llm`, `send_data` or `execute_tool ...` span that
//! named the event.

use super::{AttrValue, LIVE_RUN_KEY, SpanData, SpanSink};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

/// How much the store keeps. When a session goes past its bounds its oldest spans go;
/// when there are too many sessions the one written longest ago goes.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Spans kept per session.
    pub spans_per_session: usize,
    /// Bytes of names and attribute values kept per session (about).
    pub bytes_per_session: usize,
    /// Sessions kept.
    pub sessions: usize,
    /// Bytes kept over all sessions (about); past it, the sessions written longest ago go.
    pub bytes_total: usize,
}

impl Default for Limits {
    /// 2,000 spans and 8 MiB per session, 1,000 sessions, 256 MiB in all.
    fn default() -> Self {
        Limits {
            spans_per_session: 2_000,
            bytes_per_session: 8 << 20,
            sessions: 1_000,
            bytes_total: 256 << 20,
        }
    }
}

#[derive(Default)]
struct SessionSpans {
    spans: VecDeque<Arc<SpanData>>,
    bytes: usize,
    /// Traces in which a `call_llm` span named this session.
    llm_traces: HashSet<u128>,
    /// Its place in the eviction order.
    generation: u64,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<Arc<str>, SessionSpans>,
    /// Sessions by their last write (generation), oldest first; stale entries are skipped.
    order: VecDeque<(u64, Arc<str>)>,
    generation: u64,
    /// Event id → the span that last named it (session, span id).
    events: HashMap<String, (Arc<str>, u64)>,
    /// The bytes of every session.
    bytes: usize,
}

/// Finished spans by session; a [`SpanSink`].
#[derive(Default)]
pub struct TraceStore {
    limits: Limits,
    inner: Mutex<Inner>,
}

/// Whether `adk web` files this span under the event it names.
fn names_event(span: &SpanData) -> bool {
    span.name == "call_llm" || span.name == "send_data" || span.name.starts_with("execute_tool")
}

fn size(span: &SpanData) -> usize {
    let values: usize = span
        .attributes
        .iter()
        .map(|(k, v)| {
            k.len()
                + match v {
                    AttrValue::Str(s) => s.len(),
                    AttrValue::StrList(l) => l.iter().map(String::len).sum(),
                    _ => 8,
                }
        })
        .sum();
    128 + span.name.len() + values
}

impl TraceStore {
    /// A store with these bounds.
    pub fn new(limits: Limits) -> Self {
        TraceStore {
            limits,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The spans of the session's traces, in the order they ended; empty when none.
    pub fn session_spans(&self, session_id: &str) -> Vec<Arc<SpanData>> {
        let inner = self.lock();
        let Some(s) = inner.sessions.get(session_id) else {
            return Vec::new();
        };
        s.spans
            .iter()
            .filter(|span| s.llm_traces.contains(&span.trace_id))
            .cloned()
            .collect()
    }

    /// The last `call_llm` / `send_data` / `execute_tool` span that named `event_id`.
    pub fn event_span(&self, event_id: &str) -> Option<Arc<SpanData>> {
        let inner = self.lock();
        let (session, span_id) = inner.events.get(event_id)?;
        let spans = &inner.sessions.get(session)?.spans;
        spans.iter().rev().find(|s| s.span_id == *span_id).cloned()
    }

    /// How many sessions have spans.
    pub fn session_count(&self) -> usize {
        self.lock().sessions.len()
    }
}

impl SpanSink for TraceStore {
    fn on_end(&self, span: &Arc<SpanData>) {
        let limits = self.limits;
        let mut guard = self.lock();
        let inner = &mut *guard;
        inner.generation += 1;
        let generation = inner.generation;
        let key = Arc::clone(&span.session_id);
        if !inner.sessions.contains_key(&key) {
            while inner.sessions.len() >= limits.sessions.max(1) && inner.evict_oldest(&key) {}
        }
        let session = inner.sessions.entry(Arc::clone(&key)).or_default();
        session.generation = generation;
        inner.order.push_back((generation, Arc::clone(&key)));
        // ADK's exporter lists the traces that hold a `call_llm` span of the session; a
        // live run has none (its model calls are one connection), so its root says so.
        let listed = match &*span.name {
            "call_llm" => {
                span.str_attribute("gcp.vertex.agent.session_id") == Some(&*span.session_id)
            }
            "invocation" => span.str_attribute(LIVE_RUN_KEY) == Some("live"),
            _ => false,
        };
        if listed {
            session.llm_traces.insert(span.trace_id);
        }
        if names_event(span)
            && let Some(event_id) = span.str_attribute("gcp.vertex.agent.event_id")
        {
            inner.events.insert(
                event_id.to_owned(),
                (Arc::clone(&span.session_id), span.span_id),
            );
        }
        let added = size(span);
        session.bytes += added;
        inner.bytes += added;
        session.spans.push_back(Arc::clone(span));
        let mut evicted = Vec::new();
        while session.spans.len() > limits.spans_per_session
            || (session.bytes > limits.bytes_per_session && session.spans.len() > 1)
        {
            let Some(old) = session.spans.pop_front() else {
                break;
            };
            let freed = size(&old);
            session.bytes -= freed;
            inner.bytes -= freed;
            evicted.push(old);
        }
        if !evicted.is_empty() {
            let live: HashSet<u128> = session.spans.iter().map(|s| s.trace_id).collect();
            session.llm_traces.retain(|t| live.contains(t));
        }
        forget_events(&mut inner.events, &evicted);
        while inner.bytes > limits.bytes_total && inner.evict_oldest(&key) {}
        // Keep the order queue from growing without bound on long-lived sessions.
        if inner.order.len() > 4 * inner.sessions.len() + 64 {
            let sessions = &inner.sessions;
            inner
                .order
                .retain(|(g, s)| sessions.get(s).is_some_and(|x| x.generation == *g));
        }
    }
}

impl Inner {
    /// Drops the session written longest ago, unless it is `keep`; false when there is
    /// none to drop.
    fn evict_oldest(&mut self, keep: &Arc<str>) -> bool {
        while let Some((g, old)) = self.order.pop_front() {
            if &old == keep {
                // Still being written: it goes back to the end of the queue.
                if self.sessions.get(&old).is_some_and(|s| s.generation == g) {
                    self.order.push_back((g, old));
                    if self.order.len() == 1 {
                        return false;
                    }
                }
                continue;
            }
            if self.sessions.get(&old).is_some_and(|s| s.generation == g) {
                let gone = self.sessions.remove(&old).unwrap_or_default();
                self.bytes -= gone.bytes;
                forget_events(&mut self.events, &gone.spans);
                return true;
            }
        }
        false
    }
}

/// Drops the event index entries that point at `spans`.
fn forget_events<'a>(
    events: &mut HashMap<String, (Arc<str>, u64)>,
    spans: impl IntoIterator<Item = &'a Arc<SpanData>>,
) {
    for span in spans {
        if !names_event(span) {
            continue;
        }
        if let Some(id) = span.str_attribute("gcp.vertex.agent.event_id")
            && events.get(id).is_some_and(|(_, s)| *s == span.span_id)
        {
            events.remove(id);
        }
    }
}
