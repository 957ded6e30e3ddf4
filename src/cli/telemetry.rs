//! `--otlp-endpoint` and the OpenTelemetry environment: the tracer `run` and `serve` give
//! their runners, the server's trace store, and the OTLP exporter flushed at exit.

use crate::telemetry::otlp::{OtlpConfig, OtlpExporter};
use crate::telemetry::store::{Limits, TraceStore};
use crate::telemetry::{SpanSink, Tracer};
use std::sync::Arc;
use std::time::Duration;

/// How long the exit waits for the last spans to reach the collector.
const FLUSH: Duration = Duration::from_secs(5);

/// The telemetry of one command.
pub(crate) struct Telemetry {
    /// What runners record with (off when nothing reads spans).
    pub(crate) tracer: Tracer,
    /// The in-memory store behind `/debug/trace/...` (serve only).
    pub(crate) store: Option<Arc<TraceStore>>,
    exporter: Option<Arc<OtlpExporter>>,
}

/// ADK's `ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS`: content goes into spans unless it is
/// `false` or `0`.
fn captures_content() -> bool {
    !std::env::var("ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS")
        .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "false" | "0"))
}

/// Starts the exporter when an endpoint is configured (`flag` or the environment), and
/// the store when `store` (the server's Traces view).
///
/// # Errors
/// OTLP settings that do not make sense.
pub(crate) fn start(flag: Option<&str>, store: bool) -> anyhow::Result<Telemetry> {
    let env = |k: &str| std::env::var(k).ok();
    let config = OtlpConfig::resolve(flag, &env)?;
    let mut sinks: Vec<Arc<dyn SpanSink>> = Vec::new();
    let store = store.then(|| Arc::new(TraceStore::new(Limits::default())));
    if let Some(s) = &store {
        sinks.push(Arc::clone(s) as Arc<dyn SpanSink>);
    }
    let exporter = match config {
        Some(config) => {
            tracing::info!(endpoint = %crate::redact::url(&config.traces_url), "exporting spans over OTLP/HTTP");
            let e = OtlpExporter::start(config)?;
            sinks.push(Arc::clone(&e) as Arc<dyn SpanSink>);
            Some(e)
        }
        None => None,
    };
    Ok(Telemetry {
        tracer: Tracer::new(sinks, captures_content()),
        store,
        exporter,
    })
}

impl Telemetry {
    /// Sends the spans still queued for the collector.
    pub(crate) async fn shutdown(&self) {
        if let Some(e) = &self.exporter {
            e.shutdown(FLUSH).await;
            let dropped = e.dropped();
            if dropped > 0 {
                tracing::warn!(dropped, "spans dropped: the OTLP queue was full");
            }
        }
    }
}
