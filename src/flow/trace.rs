//! The spans of an LLM step, with the attributes ADK 1.39.1 sets (`telemetry/tracing.py`):
//! `call_llm` (request and response as JSON strings, session, invocation and event ids),
//! its `generate_content MODEL` child (GenAI semantic conventions), and one
//! `execute_tool NAME` per function call under it; in live mode, `send_data` for the
//! history sent at connect. Content attributes are `{}` when the tracer does not capture
//! content; nothing here reads credentials (requests carry none).

use crate::event::{Content, Event, Part};
use crate::invocation::InvocationContext;
use crate::model::LlmRequest;
use crate::pyrepr::json_dumps;
use crate::telemetry::{AttrValue, Span, TraceParent};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

/// `GEN_AI_SYSTEM` of ADK's `generate_content` span (its `_guess_gemini_system_name`
/// without Vertex AI).
const GEN_AI_SYSTEM: &str = "gemini";

/// A content as genai's `Content.model_dump(exclude_none=True, mode="json")` writes it
/// (snake_case keys; arguments and results as they are), serialized straight from the
/// event's parts. Inline data is summarized as ADK's `_summarize_inline_data` does when
/// `summarize`, else the part is dropped.
struct TraceContent<'a> {
    content: &'a Content,
    summarize: bool,
}

struct TraceParts<'a>(&'a TraceContent<'a>);

struct TracePart<'a>(&'a Part);

#[derive(Serialize)]
struct TraceCall<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    args: &'a Value,
    name: &'a str,
}

#[derive(Serialize)]
struct TraceResponse<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    name: &'a str,
    response: &'a Value,
}

/// `<inline_data: MIME, N bytes>`, N the decoded size of the base64 text.
fn inline_summary(blob: &crate::event::Blob) -> String {
    let bytes = blob.data.trim_end_matches('=').len() * 3 / 4;
    let mime = if blob.mime_type.is_empty() {
        "unknown"
    } else {
        &blob.mime_type
    };
    format!("<inline_data: {mime}, {bytes} bytes>")
}

impl Serialize for TraceContent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("parts", &TraceParts(self))?;
        if let Some(role) = self.content.role {
            m.serialize_entry("role", &role)?;
        }
        m.end()
    }
}

impl Serialize for TraceParts<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for part in &self.0.content.parts {
            match &part.inline_data {
                Some(blob) if self.0.summarize => {
                    seq.serialize_element(&json!({ "text": inline_summary(blob) }))?;
                }
                Some(_) => {}
                None => seq.serialize_element(&TracePart(part))?,
            }
        }
        seq.end()
    }
}

impl Serialize for TracePart<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let part = self.0;
        let mut m = s.serialize_map(None)?;
        if let Some(call) = &part.function_call {
            let call = TraceCall {
                id: call.id.as_deref(),
                args: &call.args,
                name: &call.name,
            };
            m.serialize_entry("function_call", &call)?;
        }
        if let Some(r) = &part.function_response {
            let r = TraceResponse {
                id: r.id.as_deref(),
                name: &r.name,
                response: &r.response,
            };
            m.serialize_entry("function_response", &r)?;
        }
        if let Some(text) = &part.text {
            m.serialize_entry("text", text)?;
        }
        if let Some(thought) = part.thought {
            m.serialize_entry("thought", &thought)?;
        }
        if let Some(signature) = &part.thought_signature {
            m.serialize_entry("thought_signature", signature)?;
        }
        m.end()
    }
}

/// The request as ADK's `_build_llm_request_for_trace` returns it.
#[derive(Serialize)]
struct TraceRequest<'a> {
    model: &'a str,
    config: TraceConfig<'a>,
    contents: Vec<TraceContent<'a>>,
}

/// ADK's `_build_llm_request_for_trace`: model, config (without `response_schema` and
/// `http_options`, with the `adk_agent_name` label) and contents without inline data,
/// written by `json.dumps`.
pub(crate) fn request_json(request: &LlmRequest, agent: &str) -> String {
    let contents = request
        .messages()
        .map(|content| TraceContent {
            content,
            summarize: false,
        })
        .collect();
    json_dumps(&TraceRequest {
        model: &request.model,
        config: TraceConfig { request, agent },
        contents,
    })
}

/// The request's `config` as ADK dumps it, serialized from the request without copies.
struct TraceConfig<'a> {
    request: &'a LlmRequest,
    agent: &'a str,
}

/// `[{"function_declarations": [...]}]`.
struct TraceTools<'a>(&'a [crate::model::FunctionDeclaration]);

/// The agent's label after the configured ones (a configured `adk_agent_name` wins).
struct TraceLabels<'a> {
    configured: Option<&'a Map<String, Value>>,
    agent: &'a str,
}

impl Serialize for TraceConfig<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let request = self.request;
        let mut m = s.serialize_map(None)?;
        if let Some(si) = &request.system_instruction {
            m.serialize_entry("system_instruction", si)?;
        }
        let mut configured = None;
        if let Some(Value::Object(generation)) = &request.generation_config {
            for (k, v) in generation {
                match k.as_str() {
                    "response_schema" | "responseSchema" | "http_options" | "httpOptions" => {}
                    "labels" => configured = v.as_object(),
                    _ => m.serialize_entry(k, v)?,
                }
            }
        }
        if request.output_schema.is_some() {
            // `set_output_schema` sets it; the schema itself is left out as ADK leaves it.
            m.serialize_entry("response_mime_type", "application/json")?;
        }
        if !request.tools.is_empty() {
            m.serialize_entry("tools", &TraceTools(&request.tools))?;
        }
        let labels = TraceLabels {
            configured,
            agent: self.agent,
        };
        m.serialize_entry("labels", &labels)?;
        m.end()
    }
}

impl Serialize for TraceTools<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Declaration<'a> {
            description: &'a str,
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            parameters: Option<&'a Value>,
        }
        #[derive(Serialize)]
        struct Tool<'a> {
            function_declarations: Vec<Declaration<'a>>,
        }
        let tool = Tool {
            function_declarations: self
                .0
                .iter()
                .map(|d| Declaration {
                    description: &d.description,
                    name: &d.name,
                    parameters: d.parameters.as_ref(),
                })
                .collect(),
        };
        [tool].serialize(s)
    }
}

impl Serialize for TraceLabels<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        let mut has_agent = false;
        for (k, v) in self.configured.into_iter().flatten() {
            has_agent |= k == "adk_agent_name";
            m.serialize_entry(k, v)?;
        }
        if !has_agent {
            m.serialize_entry("adk_agent_name", self.agent)?;
        }
        m.end()
    }
}

/// `LlmResponse.model_dump_json(exclude_none=True)` of the response an event was made
/// from (inline data summarized): compact, as pydantic writes it.
fn response_json(event: &Event) -> String {
    let mut out = Map::new();
    if let Some(content) = &event.content {
        let c = TraceContent {
            content,
            summarize: true,
        };
        out.insert(
            "content".into(),
            serde_json::to_value(&c).unwrap_or(Value::Null),
        );
    }
    if let Some(p) = event.partial {
        out.insert("partial".into(), json!(p));
    }
    if let Some(f) = &event.finish_reason {
        out.insert("finish_reason".into(), json!(f));
    }
    if let Some(c) = event.error_code() {
        out.insert("error_code".into(), json!(c));
    }
    if let Some(m) = event.error_message() {
        out.insert("error_message".into(), json!(m));
    }
    if let Some(u) = &event.meta().usage_metadata {
        let mut usage = Map::new();
        if let Some(n) = u.candidates_token_count {
            usage.insert("candidates_token_count".into(), json!(n));
        }
        if let Some(n) = u.prompt_token_count {
            usage.insert("prompt_token_count".into(), json!(n));
        }
        if let Some(n) = u.total_token_count {
            usage.insert("total_token_count".into(), json!(n));
        }
        out.insert("usage_metadata".into(), Value::Object(usage));
    }
    Value::Object(out).to_string()
}

fn int(n: u64) -> AttrValue {
    AttrValue::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The spans of one model step: `call_llm` and, when the model is called,
/// `generate_content MODEL` under it.
pub struct StepTrace {
    generate: Span,
    call: Span,
}

impl StepTrace {
    /// Starts `call_llm` under the agent's span (before the before_model callbacks, as
    /// ADK does).
    pub(crate) fn start(ctx: &InvocationContext) -> StepTrace {
        StepTrace {
            call: Span::child(ctx.trace_parent(), || "call_llm".to_owned()),
            generate: Span::none(),
        }
    }

    /// The model is about to be called with `request`: the request attributes of
    /// `call_llm`, and the `generate_content` span.
    pub(crate) fn calling(&mut self, ctx: &InvocationContext, agent: &str, request: &LlmRequest) {
        if !self.call.is_recording() {
            return;
        }
        let (session_id, user_id) = {
            let s = ctx.session().lock();
            (s.id.clone(), s.user_id.clone())
        };
        let session_id = session_id.as_str();
        let capture = self.call.captures_content();
        let c = &mut self.call;
        c.set_str("gen_ai.system", "gcp.vertex.agent");
        c.set_str("gen_ai.request.model", &request.model);
        c.set_str("gcp.vertex.agent.invocation_id", ctx.invocation_id());
        c.set_str("gcp.vertex.agent.session_id", session_id);
        c.set_str("gcp.vertex.agent.event_id", "");
        c.set("gcp.vertex.agent.llm_request", || {
            AttrValue::Str(if capture {
                request_json(request, agent)
            } else {
                "{}".to_owned()
            })
        });
        if let Some(Value::Object(g)) = &request.generation_config {
            if let Some(p) = g.get("top_p").and_then(Value::as_f64) {
                c.set("gen_ai.request.top_p", || AttrValue::Float(p));
            }
            if let Some(n) = g.get("max_output_tokens").and_then(Value::as_u64) {
                c.set("gen_ai.request.max_tokens", || int(n));
            }
        }
        let parent = self.call.as_parent();
        let g = &mut self.generate;
        *g = Span::child(parent.as_ref(), || {
            format!("generate_content {}", request.model)
        });
        g.set_str("gen_ai.system", GEN_AI_SYSTEM);
        g.set_str("gen_ai.operation.name", "generate_content");
        g.set_str("gen_ai.request.model", &request.model);
        g.set_str("gen_ai.agent.name", agent);
        g.set_str("gen_ai.conversation.id", session_id);
        g.set("user.id", || AttrValue::Str(user_id));
        g.set_str("gcp.vertex.agent.event_id", "");
        g.set_str("gcp.vertex.agent.invocation_id", ctx.invocation_id());
    }

    /// A response arrived, as `event` (before the after_model callbacks): the response
    /// attributes (the last one stays), and the event id once it is final.
    pub(crate) fn response(&mut self, event: &Event) {
        if !self.call.is_recording() {
            return;
        }
        let capture = self.call.captures_content();
        let c = &mut self.call;
        c.set_str("gcp.vertex.agent.event_id", &event.id);
        c.set("gcp.vertex.agent.llm_response", || {
            AttrValue::Str(if capture {
                response_json(event)
            } else {
                "{}".to_owned()
            })
        });
        if let Some(u) = &event.meta().usage_metadata {
            if let Some(n) = u.prompt_token_count {
                c.set("gen_ai.usage.input_tokens", || int(n));
            }
            if let Some(n) = u.candidates_token_count {
                c.set("gen_ai.usage.output_tokens", || int(n));
            }
        }
        if let Some(f) = &event.finish_reason {
            c.set("gen_ai.response.finish_reasons", || {
                AttrValue::StrList(vec![f.to_lowercase()])
            });
        }
        if event.is_partial() {
            return;
        }
        let g = &mut self.generate;
        g.set_str("gcp.vertex.agent.event_id", &event.id);
        if let Some(f) = &event.finish_reason {
            g.set("gen_ai.response.finish_reasons", || {
                AttrValue::StrList(vec![f.to_lowercase()])
            });
        }
        if let Some(u) = &event.meta().usage_metadata {
            if let Some(n) = u.prompt_token_count {
                g.set("gen_ai.usage.input_tokens", || int(n));
            }
            if let Some(n) = u.candidates_token_count {
                g.set("gen_ai.usage.output_tokens", || int(n));
            }
        }
    }

    /// The model call failed.
    pub(crate) fn failed(&mut self, message: impl Fn() -> String) {
        self.generate.set_error(&message);
        self.call.set_error(message);
    }

    /// Where the step's tools and a transfer's target hang: under `generate_content`
    /// (ADK's spans stay current there while the flow handles the reply), else
    /// `call_llm`.
    pub fn parent(&self) -> Option<TraceParent> {
        self.generate.as_parent().or_else(|| self.call.as_parent())
    }
}

impl std::fmt::Debug for StepTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepTrace")
            .field("recording", &self.call.is_recording())
            .finish()
    }
}

/// ADK's `trace_tool_call` attributes on an `execute_tool NAME` span.
pub(crate) struct ToolTrace {
    pub(crate) span: Span,
}

impl ToolTrace {
    /// Starts `execute_tool NAME` under `parent`.
    pub(crate) fn start(parent: Option<&TraceParent>, tool: &str) -> ToolTrace {
        ToolTrace {
            span: Span::child(parent, || format!("execute_tool {tool}")),
        }
    }

    /// Records the call: the tool, its arguments and, when it answered, its response
    /// and the id of the event carrying it.
    pub(crate) fn finish(
        &mut self,
        tool: &dyn crate::tool::Tool,
        args: &Value,
        call_id: Option<&str>,
        response: Option<(&Value, &str)>,
    ) {
        let s = &mut self.span;
        if !s.is_recording() {
            return;
        }
        let capture = s.captures_content();
        s.set_str("gen_ai.operation.name", "execute_tool");
        s.set("gen_ai.tool.description", || {
            AttrValue::Str(tool.declaration().description)
        });
        s.set_str("gen_ai.tool.name", tool.name());
        s.set_str("gen_ai.tool.type", tool.trace_type());
        s.set_str("gcp.vertex.agent.llm_request", "{}");
        s.set_str("gcp.vertex.agent.llm_response", "{}");
        s.set("gcp.vertex.agent.tool_call_args", || {
            AttrValue::Str(if capture {
                json_dumps(args)
            } else {
                "{}".to_owned()
            })
        });
        let call_id = match response {
            Some(_) => call_id.unwrap_or("<not specified>"),
            None => "<not specified>",
        };
        s.set_str("gen_ai.tool.call.id", call_id);
        if let Some((_, event_id)) = response {
            s.set_str("gcp.vertex.agent.event_id", event_id);
        }
        s.set("gcp.vertex.agent.tool_response", || {
            AttrValue::Str(match (capture, response) {
                (false, _) => "{}".to_owned(),
                (true, Some((r, _))) => json_dumps(r),
                (true, None) => json_dumps(&json!({ "result": "<not specified>" })),
            })
        });
    }
}

/// ADK's `send_data` span of a live connection: the history sent to a newly connected
/// model (`trace_send_data`), under the agent's span.
pub(crate) fn send_data(ctx: &InvocationContext, history: &[Content]) {
    let mut s = Span::child(ctx.trace_parent(), || "send_data".to_owned());
    if !s.is_recording() {
        return;
    }
    let capture = s.captures_content();
    s.set_str("gcp.vertex.agent.invocation_id", ctx.invocation_id());
    // ADK's `event_id` here is a fresh id made when the live run starts.
    s.set("gcp.vertex.agent.event_id", || {
        AttrValue::Str(uuid::Uuid::new_v4().to_string())
    });
    s.set("gcp.vertex.agent.data", || {
        AttrValue::Str(if capture {
            let contents: Vec<_> = history
                .iter()
                .map(|content| TraceContent {
                    content,
                    summarize: true,
                })
                .collect();
            json_dumps(&contents)
        } else {
            "{}".to_owned()
        })
    });
}

/// ADK's `execute_tool (merged)` span for a reply with several calls: the merged event.
pub(crate) fn merged(parent: Option<&TraceParent>, event: &Event) {
    let mut s = Span::child(parent, || "execute_tool (merged)".to_owned());
    if !s.is_recording() {
        return;
    }
    let capture = s.captures_content();
    s.set_str("gen_ai.operation.name", "execute_tool");
    s.set_str("gen_ai.tool.name", "(merged tools)");
    s.set_str("gen_ai.tool.description", "(merged tools)");
    s.set_str("gen_ai.tool.call.id", &event.id);
    s.set_str("gcp.vertex.agent.tool_call_args", "N/A");
    s.set_str("gcp.vertex.agent.event_id", &event.id);
    // ADK 1.39.1 calls `model_dumps_json`, which pydantic models do not have: its
    // fallback is what every merged span carries.
    s.set_str(
        "gcp.vertex.agent.tool_response",
        if capture { "<not serializable>" } else { "{}" },
    );
    s.set_str("gcp.vertex.agent.llm_request", "{}");
    s.set_str("gcp.vertex.agent.llm_response", "{}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Blob, FunctionCall, Role};
    use crate::model::FunctionDeclaration;
    use std::sync::Arc;

    fn image() -> Part {
        Part {
            inline_data: Some(Box::new(Blob {
                display_name: None,
                data: "AAAAAA==".into(),
                mime_type: "image/png".into(),
            })),
            ..Part::default()
        }
    }

    #[test]
    fn requests_are_written_as_adk_builds_them_for_traces() {
        let request = LlmRequest {
            model: "gemini-2.5-flash".into(),
            system_instruction: Some(Arc::new("Be brief.".into())),
            contents: crate::model::contents_of(vec![Content::new(
                Role::User,
                vec![Part::text("look"), image()],
            )]),
            tools: Arc::new(vec![FunctionDeclaration {
                name: "add".into(),
                description: "Adds.".into(),
                parameters: None,
            }]),
            generation_config: Some(json!({
                "temperature": 0.2,
                "http_options": {"headers": {"authorization": "Bearer k"}},
                "response_schema": {"type": "object"},
                "labels": {"team": "a"},
            })),
            provider_tools: Vec::new(),
            output_schema: None,
            instruction_message: None,
        };
        let text = request_json(&request, "helper");
        assert!(!text.contains("Bearer"), "{text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v,
            json!({
                "model": "gemini-2.5-flash",
                "config": {
                    "system_instruction": "Be brief.",
                    "temperature": 0.2,
                    "tools": [{"function_declarations": [{"description": "Adds.", "name": "add"}]}],
                    "labels": {"team": "a", "adk_agent_name": "helper"},
                },
                // Inline data never goes into a trace.
                "contents": [{"parts": [{"text": "look"}], "role": "user"}],
            })
        );
        assert!(text.starts_with(r#"{"model": "gemini-2.5-flash", "config": {"#));
    }

    #[test]
    fn responses_summarize_inline_data_and_use_snake_case() {
        let mut event = Event::new("i", "a");
        event.content = Some(Content::new(
            Role::Model,
            vec![
                image(),
                Part::function_call(FunctionCall {
                    id: Some("c1".into()),
                    args: json!({"x": 1}),
                    name: "f".into(),
                }),
            ],
        ));
        event.finish_reason = Some("STOP".into());
        let v: Value = serde_json::from_str(&response_json(&event)).unwrap();
        assert_eq!(
            v,
            json!({
                "content": {"parts": [
                    {"text": "<inline_data: image/png, 4 bytes>"},
                    {"function_call": {"id": "c1", "args": {"x": 1}, "name": "f"}},
                ], "role": "model"},
                "finish_reason": "STOP",
            })
        );
    }
}
