//! `--dump-requests`: a model wrapper that writes every request as one JSON line.
//!
//! The line is the Gemini `generateContent` body the Gemini provider sends for the request
//! (what ADK sends for an `LlmRequest`), after the agent and model names: `{"agent",
//! "model", "contents", "systemInstruction", "tools": [{"functionDeclarations"}],
//! "generationConfig"}`.

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

/// The JSON form of a request, as written by `--dump-requests`: the agent and model
/// names, then the body the Gemini provider sends.
pub fn request_json(agent: &str, request: &LlmRequest) -> Value {
    let mut out = Map::new();
    out.insert("agent".into(), json!(agent));
    out.insert("model".into(), json!(request.model));
    if let Value::Object(body) = super::gemini::request_body(request) {
        out.extend(body);
    }
    Value::Object(out)
}

#[async_trait]
impl Model for DumpRequests {
    fn output_schema_with_tools(&self) -> bool {
        self.inner.output_schema_with_tools()
    }

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
