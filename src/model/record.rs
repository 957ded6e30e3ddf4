//! Recording a live run as a script: [`Recorder`] wraps a model, keeps each agent's final
//! (non-partial) responses, and writes them in the `--script` format of
//! [`super::scripted`], so that a run against a real provider becomes an offline test.
//!
//! Each final response becomes one reply, in call order per agent:
//!
//! - an error reply or a failed call: `error: {code, message}`;
//! - one text part: `text:`, with `chunks:` when it was streamed as text chunks;
//! - one function call: `function_call: {name, args, id}` (the provider's id, if any);
//! - only function calls: `function_calls: [...]`;
//! - anything else: `parts: [...]` of texts and calls.
//!
//! Thought parts are left out (the script format has none), and an empty reply is
//! written as `parts: []`. The providers yield one final response per call, which
//! replays as one scripted reply.
//!
//! The file is YAML written by hand: every scalar and flow collection is JSON, which YAML
//! 1.2 reads as it is.

use super::{CallContext, LlmRequest, LlmResponse, Model, ModelError, ResponseStream};
use crate::event::{FunctionCall, Part};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Wraps a model and records the final responses it gives each agent.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<dyn Model>,
    log: Arc<Mutex<Vec<(String, Reply)>>>,
}

/// One recorded reply.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Text {
        text: String,
        chunks: Vec<String>,
    },
    Call(FunctionCall),
    Calls(Vec<FunctionCall>),
    Parts(Vec<Part>),
    Error {
        code: String,
        message: Option<String>,
    },
}

impl Recorder {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Model>) -> Self {
        Recorder {
            inner,
            log: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// A recorder that wraps no model: the log that [`Recorder::sharing`] recorders write
    /// to. Calling it directly fails.
    pub fn detached() -> Self {
        Recorder::new(Arc::new(Detached))
    }

    /// Another recorder around `inner` that writes to the same log, so that the replies of
    /// several models end up in one script.
    pub fn sharing(&self, inner: Arc<dyn Model>) -> Self {
        Recorder {
            inner,
            log: Arc::clone(&self.log),
        }
    }

    /// How many replies have been recorded.
    pub fn len(&self) -> usize {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether nothing has been recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The recorded replies as a script file (YAML).
    pub fn script(&self) -> String {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        let mut agents: Vec<&str> = Vec::new();
        for (agent, _) in log.iter() {
            if !agents.contains(&agent.as_str()) {
                agents.push(agent);
            }
        }
        let mut out = String::from("# Recorded by adk-flow; replay with --script.\n");
        if agents.is_empty() {
            out.push_str("replies: {}\n");
            return out;
        }
        out.push_str("replies:\n");
        for agent in agents {
            out.push_str(&format!("  {}:\n", quote(&json!(agent))));
            for (_, reply) in log.iter().filter(|(a, _)| a == agent) {
                out.push_str(&reply.yaml());
            }
        }
        out
    }

    /// Writes [`Recorder::script`] to `path`.
    ///
    /// # Errors
    /// The file cannot be written.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.script())
    }
}

/// The model of a detached recorder.
struct Detached;

#[async_trait::async_trait]
impl Model for Detached {
    async fn generate(
        &self,
        _request: &super::LlmRequest,
        call: super::CallContext<'_>,
    ) -> Result<super::ResponseStream, super::ModelError> {
        Err(super::ModelError::Provider {
            code: super::ProviderCode::NoModel,
            message: format!(
                "a detached recorder has no model to call for `{}`",
                call.agent_name
            ),
        })
    }
}

/// JSON text that is also valid YAML inside a flow or after `key: `.
fn quote(value: &Value) -> String {
    // serde_json leaves these raw in strings; YAML readers may treat them as breaks or
    // marks, so they are escaped (the escapes mean the same in both languages).
    value
        .to_string()
        .replace('\u{feff}', "\\ufeff")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
        .replace('\u{85}', "\\u0085")
}

fn call_json(call: &FunctionCall) -> Value {
    let mut c = Map::new();
    c.insert("name".into(), json!(call.name));
    c.insert("args".into(), call.args.clone());
    if let Some(id) = &call.id {
        c.insert("id".into(), json!(id));
    }
    Value::Object(c)
}

impl Reply {
    fn from_response(response: &LlmResponse, chunks: Option<Vec<String>>) -> Reply {
        if let Some(code) = &response.error_code {
            return Reply::Error {
                code: code.clone(),
                message: response.error_message.clone(),
            };
        }
        let parts: Vec<Part> = response
            .content
            .iter()
            .flat_map(|c| &c.parts)
            .filter(|p| p.thought != Some(true))
            .filter(|p| p.text.is_some() || p.function_call.is_some())
            .cloned()
            .collect();
        let mut calls: Vec<FunctionCall> = parts
            .iter()
            .filter_map(|p| p.function_call.as_deref().cloned())
            .collect();
        if let [only] = parts.as_slice()
            && calls.is_empty()
        {
            let text = only.text.clone().unwrap_or_default();
            let chunks = chunks
                .filter(|c| c.len() > 1 && c.concat() == text)
                .unwrap_or_default();
            return Reply::Text { text, chunks };
        }
        if calls.len() != parts.len() {
            return Reply::Parts(parts);
        }
        match (calls.pop(), calls.is_empty()) {
            (Some(call), true) => Reply::Call(call),
            (Some(last), false) => {
                calls.push(last);
                Reply::Calls(calls)
            }
            (None, _) => Reply::Parts(parts),
        }
    }

    /// The reply as a YAML sequence item, indented for `replies.<agent>`.
    fn yaml(&self) -> String {
        match self {
            Reply::Text { text, chunks } => {
                let mut out = format!("    - text: {}\n", quote(&json!(text)));
                if !chunks.is_empty() {
                    out.push_str(&format!("      chunks: {}\n", quote(&json!(chunks))));
                }
                out
            }
            Reply::Call(call) => format!("    - function_call: {}\n", quote(&call_json(call))),
            Reply::Calls(calls) => {
                let calls: Vec<Value> = calls.iter().map(call_json).collect();
                format!("    - function_calls: {}\n", quote(&Value::Array(calls)))
            }
            Reply::Parts(parts) => {
                let parts: Vec<Value> = parts
                    .iter()
                    .map(|p| match (&p.text, &p.function_call) {
                        (_, Some(call)) => json!({"function_call": call_json(call)}),
                        (text, None) => json!({"text": text.clone().unwrap_or_default()}),
                    })
                    .collect();
                format!("    - parts: {}\n", quote(&Value::Array(parts)))
            }
            Reply::Error { code, message } => {
                let mut e = Map::new();
                e.insert("code".into(), json!(code));
                if let Some(m) = message {
                    e.insert("message".into(), json!(m));
                }
                format!("    - error: {}\n", quote(&Value::Object(e)))
            }
        }
    }
}

#[async_trait]
impl Model for Recorder {
    fn output_schema_with_tools(&self) -> bool {
        self.inner.output_schema_with_tools()
    }

    async fn generate(
        &self,
        request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError> {
        let agent = call.agent_name.to_owned();
        let log = Arc::clone(&self.log);
        let record = move |reply: Reply| {
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((agent.clone(), reply));
        };
        let stream = match self.inner.generate(request, call).await {
            Ok(stream) => stream,
            Err(e) => {
                if let ModelError::Provider { code, message } = &e {
                    record(Reply::Error {
                        code: code.to_string(),
                        message: Some(message.clone()),
                    });
                }
                return Err(e);
            }
        };
        // Text of the partial chunks so far; `None` once a chunk is not plain text.
        let mut chunks: Option<Vec<String>> = Some(Vec::new());
        Ok(stream
            .inspect(move |item| match item {
                Ok(r) if r.partial == Some(true) => {
                    let text: Option<Vec<&str>> = r
                        .content
                        .iter()
                        .flat_map(|c| &c.parts)
                        .map(|p| p.text.as_deref().filter(|_| p.thought != Some(true)))
                        .collect();
                    match (text, &mut chunks) {
                        (Some(t), Some(c)) => c.push(t.concat()),
                        _ => chunks = None,
                    }
                }
                Ok(r) => {
                    record(Reply::from_response(r, chunks.take()));
                    chunks = Some(Vec::new());
                }
                Err(ModelError::Provider { code, message }) => record(Reply::Error {
                    code: code.to_string(),
                    message: Some(message.clone()),
                }),
                Err(_) => {}
            })
            .boxed())
    }
}
