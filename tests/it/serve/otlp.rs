//! The spans of [`super::traces`]' scripted run exported over OTLP/HTTP (JSON encoding)
//! to a collector of our own: from `run --otlp-endpoint` before it exits, and from `serve`
//! with `OTEL_EXPORTER_OTLP_ENDPOINT`; the run's log fields.

use super::traces::{files, session_spans};
use super::{Serve, run_body};
use crate::common::write_files;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A collector of our own: every body POSTed to `/v1/traces`, with its headers.
struct Collector {
    base: String,
    requests: Arc<Mutex<Vec<(axum::http::HeaderMap, Value)>>>,
}

async fn collector() -> Collector {
    let requests: Arc<Mutex<Vec<(axum::http::HeaderMap, Value)>>> = Arc::default();
    let sink = Arc::clone(&requests);
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let sink = Arc::clone(&sink);
                async move {
                    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    sink.lock().unwrap().push((headers, value));
                    axum::Json(json!({}))
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Collector {
        base: format!("http://{addr}"),
        requests,
    }
}

impl Collector {
    /// The spans received so far, flattened, each with the resource and scope it came in.
    fn spans(&self) -> Vec<(Value, Value, Value)> {
        let mut out = Vec::new();
        for (_, body) in self.requests.lock().unwrap().iter() {
            for rs in body["resourceSpans"].as_array().unwrap() {
                for ss in rs["scopeSpans"].as_array().unwrap() {
                    for span in ss["spans"].as_array().unwrap() {
                        out.push((rs["resource"].clone(), ss.clone(), span.clone()));
                    }
                }
            }
        }
        out
    }

    async fn wait_for(&self, count: usize) -> Vec<(Value, Value, Value)> {
        let started = Instant::now();
        loop {
            let spans = self.spans();
            if spans.len() >= count {
                return spans;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "only {} spans arrived",
                spans.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn attribute<'a>(span: &'a Value, key: &str) -> &'a Value {
    span["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
        .unwrap_or_else(|| panic!("no {key} in {span}"))
}

fn is_hex(s: &Value, len: usize) -> bool {
    s.as_str().is_some_and(|s| {
        s.len() == len
            && s.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            && s.bytes().any(|b| b != b'0')
    })
}

/// Checks one invocation's 11 spans in OTLP's JSON encoding.
fn check_otlp(spans: &[(Value, Value, Value)], service: &str) {
    assert_eq!(spans.len(), 11, "{spans:?}");
    let (resource, scope, _) = &spans[0];
    assert_eq!(
        resource["attributes"][0],
        json!({"key": "service.name", "value": {"stringValue": service}})
    );
    assert_eq!(scope["scope"]["name"], "gcp.vertex.agent");
    assert_eq!(
        scope["schemaUrl"],
        "https://opentelemetry.io/schemas/1.36.0"
    );
    let spans: Vec<&Value> = spans.iter().map(|(_, _, s)| s).collect();
    let trace = &spans[0]["traceId"];
    let ids: HashMap<&str, &Value> = spans
        .iter()
        .map(|s| (s["spanId"].as_str().unwrap(), *s))
        .collect();
    for span in &spans {
        assert!(is_hex(&span["traceId"], 32), "{span}");
        assert!(is_hex(&span["spanId"], 16), "{span}");
        assert_eq!(&span["traceId"], trace);
        assert_eq!(span["kind"], 1);
        let start: u64 = span["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let end: u64 = span["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
        assert!(start > 0 && start <= end);
        match span.get("parentSpanId") {
            Some(p) => {
                assert!(is_hex(p, 16));
                assert!(
                    ids.contains_key(p.as_str().unwrap()),
                    "dangling parent: {span}"
                );
            }
            None => assert_eq!(span["name"], "invocation"),
        }
    }
    let parent_name = |s: &Value| {
        s.get("parentSpanId").map(|p| {
            ids[p.as_str().unwrap()]["name"]
                .as_str()
                .unwrap()
                .to_owned()
        })
    };
    let tool = spans
        .iter()
        .find(|s| s["name"] == "execute_tool remember")
        .unwrap();
    assert_eq!(parent_name(tool).as_deref(), Some("generate_content m"));
    let helper = spans
        .iter()
        .find(|s| s["name"] == "invoke_agent helper")
        .unwrap();
    assert_eq!(parent_name(helper).as_deref(), Some("generate_content m"));
    assert_eq!(
        attribute(tool, "gcp.vertex.agent.tool_call_args"),
        &json!({"stringValue": r#"{"item": "apples"}"#})
    );
    // Typed attributes: integers as strings, doubles as numbers, lists as arrays.
    let answer = spans
        .iter()
        .find(|s| s["name"] == "call_llm" && s["attributes"].to_string().contains("Noted: apples."))
        .unwrap();
    assert_eq!(
        attribute(answer, "gen_ai.request.max_tokens"),
        &json!({"intValue": "100"})
    );
    assert_eq!(
        attribute(answer, "gen_ai.request.top_p"),
        &json!({"doubleValue": 0.5})
    );
    assert_eq!(
        attribute(answer, "gen_ai.response.finish_reasons"),
        &json!({"arrayValue": {"values": [{"stringValue": "stop"}]}})
    );
    assert!(attribute(answer, "gcp.vertex.agent.session_id")["stringValue"].is_string());
}

#[tokio::test]
async fn run_exports_its_spans_over_otlp_http_before_it_exits() {
    let c = collector().await;
    let dir = write_files(&files());
    let endpoint = c.base.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_adk-flow"))
            .current_dir(dir.path())
            .args([
                "run",
                "shop.yaml",
                "--script",
                "script.yaml",
                "--db",
                "memory",
            ])
            .args([
                "-m",
                "I need apples",
                "--json",
                "--otlp-endpoint",
                &endpoint,
            ])
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env("OTEL_SERVICE_NAME", "shop-cli")
            .env("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-key=s3cret")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("s3cret"));
    // Everything arrived before the process ended: nothing to wait for.
    let spans = c.spans();
    check_otlp(&spans, "shop-cli");
    let requests = c.requests.lock().unwrap();
    let (headers, _) = &requests[0];
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["x-collector-key"], "s3cret");
}

#[tokio::test]
async fn serve_exports_over_otlp_from_the_standard_variable_and_logs_run_ids() {
    let c = collector().await;
    let s = Serve::start_env(
        write_files(&files()),
        &["shop.yaml", "--script", "script.yaml", "--db", "memory"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &c.base),
            ("RUST_LOG", "adk_flow=debug,warn"),
        ],
    );
    let sid = s.session("shop", Some("logged")).await;
    let (status, events) = s
        .send(
            "POST",
            "/run",
            run_body("shop", &sid, "I need apples", false),
        )
        .await;
    assert_eq!(status, 200);
    let spans = c.wait_for(11).await;
    check_otlp(&spans, "adk-flow");
    // The debug store holds the same spans.
    let debug = session_spans(&s, &sid).await;
    let exported: std::collections::BTreeSet<String> = spans
        .iter()
        .map(|(_, _, x)| x["spanId"].as_str().unwrap().to_owned())
        .collect();
    let kept: std::collections::BTreeSet<String> = debug
        .iter()
        .map(|x| format!("{:016x}", x.span_id))
        .collect();
    assert_eq!(exported, kept);
    // Log lines of the run carry its app, user, session and invocation ids.
    let invocation = events[0]["invocationId"].as_str().unwrap();
    let logs = s.wait_for_log("run done").await;
    let line = logs.lines().find(|l| l.contains("run done")).unwrap();
    for field in [
        "app=shop",
        "user=u",
        "session=logged",
        &format!("invocation={invocation}"),
    ] {
        assert!(line.contains(field), "`{field}` missing from: {line}");
    }
}
