//! `--dump-requests`: a model wrapper that writes every request as one JSON line.
//!
//! The line has the shape of a Gemini `generateContent` body (what ADK sends for an
//! `LlmRequest`), plus the agent and model names: `{"agent", "model", "contents",
//! "systemInstruction", "tools": [{"functionDeclarations"}], "generationConfig"}`.

use super::{CallContext, LlmRequest, Model, ModelError, ResponseStream};
use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::sync::{Arc, Mutex};

/// Wraps a model and writes each request it receives to a sink before forwarding it.
pub struct DumpRequests {
    inner: Arc<dyn Model>,
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl DumpRequests {
    /// Wraps `inner`; every request is written to `sink` as one line.
    pub fn new(inner: Arc<dyn Model>, sink: Arc<Mutex<Box<dyn Write + Send>>>) -> Self {
        DumpRequests { inner, sink }
    }
}

/// The JSON form of a request, as written by `--dump-requests`.
pub fn request_json(agent: &str, request: &LlmRequest) -> Value {
    let mut out = Map::new();
    out.insert("agent".into(), json!(agent));
    out.insert("model".into(), json!(request.model));
    out.insert("contents".into(), json!(request.contents));
    if let Some(si) = &request.system_instruction {
        out.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": si}], "role": "user"}),
        );
    }
    let mut tools = Vec::new();
    if !request.tools.is_empty() {
        tools.push(json!({ "functionDeclarations": request.tools }));
    }
    tools.extend(
        request
            .provider_tools
            .iter()
            .map(|k| json!({ k.as_str(): {} })),
    );
    if !tools.is_empty() {
        out.insert("tools".into(), Value::Array(tools));
    }
    if let Some(cfg) = &request.generation_config {
        out.insert("generationConfig".into(), cfg.clone());
    }
    Value::Object(out)
}

#[async_trait]
impl Model for DumpRequests {
    async fn generate(
        &self,
        request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError> {
        let line = request_json(call.agent_name, request).to_string();
        {
            let mut sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
            // A failing dump file must not break the run; the CLI checks the file up front.
            if let Err(e) = writeln!(sink, "{line}").and_then(|()| sink.flush()) {
                tracing::warn!("cannot write request dump: {e}");
            }
        }
        self.inner.generate(request, call).await
    }
}
