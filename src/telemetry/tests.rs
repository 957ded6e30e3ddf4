use super::store::{Limits, TraceStore};
use super::*;

fn store_tracer(limits: Limits) -> (Tracer, Arc<TraceStore>) {
    let store = Arc::new(TraceStore::new(limits));
    (Tracer::new(vec![store.clone()], true), store)
}

#[test]
fn an_off_tracer_records_nothing() {
    let t = Tracer::off();
    let mut root = t.root("invocation", "s", None);
    assert!(!root.is_recording());
    root.set("k", || unreachable!("values are not computed when off"));
    assert!(root.as_parent().is_none());
    assert!(!Span::child(None, || unreachable!()).is_recording());
}

#[test]
fn children_share_the_trace_and_end_first() {
    let (t, store) = store_tracer(Limits::default());
    let root = t.root("invocation", "s1", None);
    let p = root.as_parent().unwrap();
    {
        let mut llm = Span::child(Some(&p), || "call_llm".into());
        llm.set_str("gcp.vertex.agent.session_id", "s1");
        llm.set_str("gcp.vertex.agent.event_id", "e1");
        llm.set_str("gcp.vertex.agent.event_id", "e2");
    }
    drop(root);
    let spans = store.session_spans("s1");
    assert_eq!(spans.len(), 2);
    assert_eq!(spans[0].name, "call_llm");
    assert_eq!(spans[1].name, "invocation");
    assert_eq!(spans[0].trace_id, spans[1].trace_id);
    assert_eq!(spans[0].parent_span_id, Some(spans[1].span_id));
    assert_eq!(spans[1].parent_span_id, None);
    assert!(spans[0].start_ns >= spans[1].start_ns && spans[0].end_ns <= spans[1].end_ns);
    // A key set twice keeps one place, with the last value.
    assert_eq!(spans[0].attributes.len(), 2);
    assert_eq!(store.event_span("e2").unwrap().span_id, spans[0].span_id);
    assert!(store.event_span("e1").is_none());
    assert!(store.session_spans("other").is_empty());
}

#[test]
fn traces_without_a_model_call_are_not_listed() {
    let (t, store) = store_tracer(Limits::default());
    drop(t.root("invocation", "s", None));
    assert!(store.session_spans("s").is_empty());
}

fn invocation(t: &Tracer, session: &str, event: &str, pad: usize) {
    let root = t.root("invocation", session, None);
    let p = root.as_parent().unwrap();
    let mut llm = Span::child(Some(&p), || "call_llm".into());
    llm.set_str("gcp.vertex.agent.session_id", session);
    llm.set_str("gcp.vertex.agent.event_id", event);
    llm.set("pad", || AttrValue::Str("x".repeat(pad)));
}

#[test]
fn the_store_is_bounded() {
    let limits = Limits {
        spans_per_session: 4,
        bytes_per_session: 1 << 20,
        sessions: 2,
        bytes_total: 1 << 30,
    };
    let (t, store) = store_tracer(limits);
    for i in 0..5 {
        invocation(&t, "a", &format!("e{i}"), 0);
    }
    // Two whole invocations (4 spans) remain; the oldest events are forgotten.
    assert_eq!(store.session_spans("a").len(), 4);
    assert!(store.event_span("e0").is_none());
    assert!(store.event_span("e4").is_some());
    invocation(&t, "b", "b0", 0);
    invocation(&t, "c", "c0", 0);
    assert_eq!(store.session_count(), 2);
    assert!(
        store.session_spans("a").is_empty(),
        "the oldest session goes"
    );
    assert!(store.event_span("e4").is_none());
    let limits = Limits {
        spans_per_session: 100,
        bytes_per_session: 10_000,
        sessions: 10,
        bytes_total: 1 << 30,
    };
    let (t, store) = store_tracer(limits);
    for i in 0..10 {
        invocation(&t, "a", &format!("e{i}"), 3_000);
    }
    assert!(store.session_spans("a").len() <= 8);
    // Past the total, the sessions written longest ago go, never the one being written.
    let limits = Limits {
        spans_per_session: 100,
        bytes_per_session: 100_000,
        sessions: 10,
        bytes_total: 20_000,
    };
    let (t, store) = store_tracer(limits);
    for s in ["a", "b", "c", "d"] {
        invocation(&t, s, &format!("{s}0"), 6_000);
    }
    assert!(store.session_spans("a").is_empty());
    assert!(store.event_span("a0").is_none());
    assert_eq!(store.session_spans("d").len(), 2);
    assert!(store.session_count() <= 3);
    invocation(&t, "big", "big0", 50_000);
    assert_eq!(
        store.session_spans("big").len(),
        2,
        "the session being written stays"
    );
    assert_eq!(store.session_count(), 1);
}

#[test]
fn otlp_settings_follow_the_environment() {
    use otlp::OtlpConfig;
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    assert!(OtlpConfig::resolve(None, &env(&[])).unwrap().is_none());
    let c = OtlpConfig::resolve(
        None,
        &env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_SERVICE_NAME", "svc"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer%20x, a=b",
            ),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=dev"),
        ]),
    )
    .unwrap()
    .unwrap();
    assert_eq!(c.traces_url, "http://collector:4318/v1/traces");
    assert_eq!(c.resource[0], ("service.name".into(), "svc".into()));
    assert!(
        c.resource
            .contains(&("deployment.environment".into(), "dev".into()))
    );
    assert_eq!(
        c.headers,
        vec![
            ("authorization".into(), "Bearer x".into()),
            ("a".into(), "b".into())
        ]
    );
    assert!(!format!("{c:?}").contains("Bearer"));
    let c = OtlpConfig::resolve(
        Some("http://flag:4318"),
        &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318")]),
    )
    .unwrap()
    .unwrap();
    assert_eq!(c.traces_url, "http://flag:4318/v1/traces");
    assert_eq!(c.resource[0].1, "adk-flow");
    let c = OtlpConfig::resolve(
        None,
        &env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom")]),
    )
    .unwrap()
    .unwrap();
    assert_eq!(c.traces_url, "http://t:1/custom");
    assert!(OtlpConfig::resolve(Some("collector:4318"), &env(&[])).is_err());
    assert!(
        OtlpConfig::resolve(
            Some("http://c"),
            &env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])
        )
        .is_err()
    );
}
