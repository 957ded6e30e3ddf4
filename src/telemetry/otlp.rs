//! OTLP/HTTP export of finished spans, JSON-encoded (`POST {endpoint}/v1/traces`,
//! `Content-Type: application/json`), over the reqwest client the providers use.
//!
//! Spans are queued without blocking the runtime (a full queue drops spans and counts
//! them) and sent by one background task in batches of up to [`BATCH`] spans, at least
//! once a second; [`OtlpExporter::shutdown`] sends what is left.
//!
//! Configuration follows the OpenTelemetry environment variables:
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), else `--otlp-endpoint` or
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended); `OTEL_EXPORTER_OTLP_HEADERS`
//! and `OTEL_EXPORTER_OTLP_TRACES_HEADERS` (`k=v,k=v`, never logged);
//! `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`.

use super::{AttrValue, SpanData, SpanSink};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Spans per request at most.
pub const BATCH: usize = 512;
/// Spans waiting to be sent at most; more are dropped.
pub const QUEUE: usize = 8_192;
/// The instrumentation scope, as ADK names its tracer.
pub const SCOPE: &str = "gcp.vertex.agent";
/// The semantic-conventions schema ADK's tracer declares.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.36.0";

/// A problem with the OTLP settings.
#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    /// The endpoint is not an http(s) URL.
    #[error("OTLP endpoint `{0}` is not an http:// or https:// URL")]
    Endpoint(String),
    /// A `k=v` list that does not parse.
    #[error("{var}: `{entry}` is not KEY=VALUE")]
    List {
        /// The variable.
        var: &'static str,
        /// The offending entry (values are never shown).
        entry: String,
    },
    /// A protocol other than `http/json`.
    #[error(
        "OTEL_EXPORTER_OTLP_PROTOCOL={0} is not supported: adk-flow sends OTLP over HTTP as JSON (http/json)"
    )]
    Protocol(String),
    /// The HTTP client could not be built.
    #[error("cannot build the OTLP HTTP client")]
    Client(#[source] reqwest::Error),
}

/// Where and how spans are sent.
#[derive(Clone)]
pub struct OtlpConfig {
    /// The full URL spans are posted to (`.../v1/traces`).
    pub traces_url: String,
    /// Extra request headers (authentication): never logged.
    pub headers: Vec<(String, String)>,
    /// Resource attributes; `service.name` first.
    pub resource: Vec<(String, String)>,
}

impl std::fmt::Debug for OtlpConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtlpConfig")
            .field("traces_url", &crate::redact::url(&self.traces_url))
            .field("headers", &self.headers.len())
            .field("resource", &self.resource)
            .finish()
    }
}

fn pairs(var: &'static str, text: &str) -> Result<Vec<(String, String)>, OtlpError> {
    text.split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|entry| {
            let (k, v) = entry.split_once('=').ok_or_else(|| OtlpError::List {
                var,
                entry: entry.split('=').next().unwrap_or_default().to_owned(),
            })?;
            Ok((percent_decode(k.trim()), percent_decode(v.trim())))
        })
        .collect()
}

/// `%XX` escapes, as the OpenTelemetry list variables use them.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(hex) = std::str::from_utf8(&bytes[i + 1..i + 3])
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl OtlpConfig {
    /// The settings from `--otlp-endpoint` (`flag`) and the environment (`env`), or
    /// `None` when no endpoint is configured.
    ///
    /// # Errors
    /// An endpoint that is not http(s), an unsupported protocol, a malformed list.
    pub fn resolve(
        flag: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, OtlpError> {
        let var = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let traces_url = match (var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), flag) {
            (Some(url), None) => url,
            (_, Some(base)) => join(base),
            (None, None) => match var("OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(base) => join(&base),
                None => return Ok(None),
            },
        };
        if !(traces_url.starts_with("http://") || traces_url.starts_with("https://")) {
            return Err(OtlpError::Endpoint(crate::redact::url(&traces_url)));
        }
        let protocol = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
        if let Some(p) = protocol
            && p.trim() != "http/json"
        {
            return Err(OtlpError::Protocol(p));
        }
        let mut headers = Vec::new();
        if let Some(h) = var("OTEL_EXPORTER_OTLP_HEADERS") {
            headers.extend(pairs("OTEL_EXPORTER_OTLP_HEADERS", &h)?);
        }
        if let Some(h) = var("OTEL_EXPORTER_OTLP_TRACES_HEADERS") {
            headers.extend(pairs("OTEL_EXPORTER_OTLP_TRACES_HEADERS", &h)?);
        }
        let mut resource = match var("OTEL_RESOURCE_ATTRIBUTES") {
            Some(r) => pairs("OTEL_RESOURCE_ATTRIBUTES", &r)?,
            None => Vec::new(),
        };
        let service = var("OTEL_SERVICE_NAME")
            .or_else(|| {
                resource
                    .iter()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_else(|| "adk-flow".to_owned());
        resource.retain(|(k, _)| k != "service.name");
        resource.insert(0, ("service.name".to_owned(), service));
        for (k, v) in [
            ("telemetry.sdk.name", "adk-flow"),
            ("telemetry.sdk.language", "rust"),
            ("telemetry.sdk.version", env!("CARGO_PKG_VERSION")),
        ] {
            if !resource.iter().any(|(rk, _)| rk == k) {
                resource.push((k.to_owned(), v.to_owned()));
            }
        }
        Ok(Some(OtlpConfig {
            traces_url,
            headers,
            resource,
        }))
    }
}

/// `BASE/v1/traces`, as the specification builds the traces URL from the base endpoint.
fn join(base: &str) -> String {
    format!("{}/v1/traces", base.trim().trim_end_matches('/'))
}

fn value(v: &AttrValue) -> Value {
    match v {
        AttrValue::Str(s) => json!({ "stringValue": s }),
        AttrValue::Int(n) => json!({ "intValue": n.to_string() }),
        AttrValue::Float(f) => json!({ "doubleValue": f }),
        AttrValue::Bool(b) => json!({ "boolValue": b }),
        AttrValue::StrList(l) => json!({
            "arrayValue": { "values": l.iter().map(|s| json!({ "stringValue": s })).collect::<Vec<_>>() }
        }),
    }
}

fn span_json(span: &SpanData) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("traceId".into(), json!(format!("{:032x}", span.trace_id)));
    out.insert("spanId".into(), json!(format!("{:016x}", span.span_id)));
    if let Some(p) = span.parent_span_id {
        out.insert("parentSpanId".into(), json!(format!("{p:016x}")));
    }
    out.insert("name".into(), json!(span.name));
    // SPAN_KIND_INTERNAL, as ADK's spans are.
    out.insert("kind".into(), json!(1));
    out.insert("startTimeUnixNano".into(), json!(span.start_ns.to_string()));
    out.insert("endTimeUnixNano".into(), json!(span.end_ns.to_string()));
    out.insert(
        "attributes".into(),
        span.attributes
            .iter()
            .map(|(k, v)| json!({ "key": k, "value": value(v) }))
            .collect(),
    );
    out.insert(
        "status".into(),
        match &span.error {
            // STATUS_CODE_ERROR
            Some(message) => json!({ "code": 2, "message": message }),
            None => json!({}),
        },
    );
    Value::Object(out)
}

/// The body of one export request: an `ExportTraceServiceRequest` in OTLP's JSON
/// encoding (hex ids, 64-bit integers as strings, enums as numbers).
pub fn encode(resource: &[(String, String)], spans: &[Arc<SpanData>]) -> Value {
    json!({
        "resourceSpans": [{
            "resource": {
                "attributes": resource
                    .iter()
                    .map(|(k, v)| json!({ "key": k, "value": { "stringValue": v } }))
                    .collect::<Vec<_>>()
            },
            "scopeSpans": [{
                "scope": { "name": SCOPE, "version": env!("CARGO_PKG_VERSION") },
                "spans": spans.iter().map(|s| span_json(s)).collect::<Vec<_>>(),
                "schemaUrl": SCHEMA_URL
            }]
        }]
    })
}

enum Msg {
    Span(Arc<SpanData>),
    Flush(oneshot::Sender<()>),
}

/// Sends finished spans to an OTLP/HTTP collector; a [`SpanSink`].
pub struct OtlpExporter {
    tx: mpsc::Sender<Msg>,
    dropped: Arc<AtomicU64>,
}

impl OtlpExporter {
    /// Starts the background task (on the current tokio runtime).
    ///
    /// # Errors
    /// The HTTP client cannot be built.
    pub fn start(config: OtlpConfig) -> Result<Arc<Self>, OtlpError> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(OtlpError::Client)?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        tokio::spawn(run(client, config, rx, Arc::clone(&dropped)));
        Ok(Arc::new(OtlpExporter { tx, dropped }))
    }

    /// Sends every span queued so far, waiting at most `timeout`.
    pub async fn shutdown(&self, timeout: Duration) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = tokio::time::timeout(timeout, wait).await;
        }
    }

    /// Spans dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl SpanSink for OtlpExporter {
    fn on_end(&self, span: &Arc<SpanData>) {
        if self.tx.try_send(Msg::Span(Arc::clone(span))).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

async fn run(
    client: reqwest::Client,
    config: OtlpConfig,
    mut rx: mpsc::Receiver<Msg>,
    dropped: Arc<AtomicU64>,
) {
    let mut batch: Vec<Arc<SpanData>> = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut reported_drops = 0;
    loop {
        tokio::select! {
            msg = rx.recv() => match msg {
                Some(Msg::Span(span)) => {
                    batch.push(span);
                    if batch.len() >= BATCH {
                        send(&client, &config, &mut batch).await;
                    }
                }
                Some(Msg::Flush(done)) => {
                    send(&client, &config, &mut batch).await;
                    let _ = done.send(());
                }
                None => {
                    send(&client, &config, &mut batch).await;
                    return;
                }
            },
            _ = tick.tick() => {
                send(&client, &config, &mut batch).await;
                let now = dropped.load(Ordering::Relaxed);
                if now > reported_drops {
                    tracing::warn!(dropped = now - reported_drops, "OTLP export queue full: spans dropped");
                    reported_drops = now;
                }
            }
        }
    }
}

async fn send(client: &reqwest::Client, config: &OtlpConfig, batch: &mut Vec<Arc<SpanData>>) {
    if batch.is_empty() {
        return;
    }
    let body = encode(&config.resource, batch).to_string();
    let count = batch.len();
    batch.clear();
    let mut request = client
        .post(&config.traces_url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    for (k, v) in &config.headers {
        request = request.header(k.as_str(), v.as_str());
    }
    let endpoint = crate::redact::url(&config.traces_url);
    match request.send().await {
        Ok(r) if r.status().is_success() => {
            tracing::debug!(spans = count, %endpoint, "OTLP export sent");
        }
        Ok(r) => {
            tracing::warn!(spans = count, status = r.status().as_u16(), %endpoint, "OTLP export refused");
        }
        Err(e) => {
            tracing::warn!(spans = count, %endpoint, error = %crate::errors::chain(&e), "OTLP export failed");
        }
    }
}
