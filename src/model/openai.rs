//! OpenAI-compatible chat completions: OpenAI itself, and llama.cpp, vLLM, Ollama,
//! LiteLLM, OpenRouter... through their `/v1` endpoints.
//!
//! - `POST {base}/chat/completions` with `Authorization: Bearer KEY` (no header without a
//!   key). Streaming adds `"stream": true, "stream_options": {"include_usage": true}`.
//! - The system instruction is the first `system` message. Contents become messages in
//!   order: user text, assistant text plus `tool_calls`, and one `tool` message per
//!   function response (`content` = the response object as a JSON string). Thought parts
//!   are not sent.
//! - **Call ids.** ADK strips its own `adk-` ids from the contents, so calls often have
//!   none, but OpenAI pairs each `tool` message with a call by id. A call without an id
//!   gets `call_<n>`, `n` its position among all the calls of the request (stable, so the
//!   same history gives the same request). A response takes the id of the pending call
//!   with its own id if it has one, else of the earliest pending call with the same name.
//!   A response that matches no call is sent as user text (`Result of NAME: {...}`),
//!   since a `tool` message without its call is rejected.
//! - **Calls without a response.** The `tool` messages answering an assistant's
//!   `tool_calls` must come before any other message. A call left unanswered (the run
//!   crashed or was stopped between the call and its response, or a client never answered
//!   a long-running call) is answered right there with an error result,
//!   `{"error": "the call was interrupted before it returned: no result was recorded"}`,
//!   as ADK's LiteLLM adapter does, so the model learns the call failed; a response that
//!   arrives for it later is sent as user text.
//! - Tools: `[{type: function, function: {name, description, parameters}}]`, with
//!   `{"type": "object", "properties": {}}` for a tool without parameters.
//! - Generation config: `temperature`, `top_p`, `seed`, `presence_penalty`,
//!   `frequency_penalty` as they are; `max_output_tokens` → `max_tokens`,
//!   `stop_sequences` → `stop` (the OpenAI names are accepted too). Other keys are ignored.
//! - `tool_config.function_calling_config` → `tool_choice`: `AUTO` → `"auto"`, `NONE` →
//!   `"none"`, `ANY` → `"required"`, or the one allowed function by name; with several
//!   allowed names only those tools are sent, with `"required"`. No tools, no `tool_choice`.
//! - An agent's `output_schema` is `response_format: {type: json_schema, json_schema:
//!   {name, strict: true, schema}}`, as ADK's LiteLLM adapter sends it (see `schema.rs`);
//!   llama.cpp turns it into a grammar. The provider takes it together with tools (ADK's
//!   `can_use_output_schema_with_tools` holds for LiteLLM).
//! - Answers: `choices[0].message` → text (and `reasoning_content` as a thought part
//!   first) and function calls with the provider's ids. `finish_reason`: `stop` and
//!   `tool_calls` → `STOP`, `length` → `MAX_TOKENS`, `content_filter` → `SAFETY` with
//!   `error_code: SAFETY`; others upper-cased. As in ADK's `LlmResponse.create`, an answer
//!   with no parts that did not stop normally is an error reply whose code is the finish
//!   reason.
//! - **Malformed arguments.** Arguments that are not a JSON object (after `""` → `{}`)
//!   make the answer an error reply with `error_code: MALFORMED_FUNCTION_CALL`, the code
//!   Gemini uses for the same failure, and the raw arguments in the message.
//! - Streaming: each text delta is a partial response; tool-call fragments are joined
//!   per `index` (the first name seen wins) and appear only in the aggregate
//!   (`partial: false`) that follows `data: [DONE]`. A stream that ends without
//!   `[DONE]`, or sends an error object or a chunk that is not JSON, is `STREAM_BROKEN`.

mod response;

use super::ProviderCode;
use super::http::{HttpClient, Redactor, Secret};
use super::{CallContext, LlmRequest, LlmResponse, Model, ModelError, ResponseStream};
use crate::event::{Part, Role};
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use response::{Aggregate, Completion};
use serde_json::{Map, Value, json};

/// A model behind an OpenAI-compatible chat completions endpoint.
pub(crate) struct OpenAiModel {
    http: HttpClient,
    url: String,
    model: String,
    headers: HeaderMap,
}

impl OpenAiModel {
    /// A model named `model` at `base_url` (which ends in `/v1` or similar).
    pub(crate) fn new(
        http: HttpClient,
        base_url: &str,
        model: &str,
        key: Option<&Secret>,
    ) -> Result<Self, reqwest::header::InvalidHeaderValue> {
        let mut headers = HeaderMap::new();
        if let Some(key) = key {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        Ok(OpenAiModel {
            http,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_owned(),
            headers,
        })
    }
}

#[async_trait]
impl Model for OpenAiModel {
    fn output_schema_with_tools(&self) -> bool {
        true
    }

    async fn generate(
        &self,
        request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError> {
        if let Some(tool) = request.provider_tools.first() {
            return Err(ModelError::Provider {
                code: ProviderCode::UnsupportedTool,
                message: format!(
                    "agent `{}` uses Gemini's built-in `{tool}` tool, which OpenAI-compatible models do not have; use a Gemini model or remove the tool",
                    call.agent_name
                ),
            });
        }
        let body = request_body(&self.model, request, call.stream);
        if !call.stream {
            let answer = self.http.post_json(&self.url, &self.headers, &body).await?;
            let response = self::answer(answer).map_err(|e| {
                self.http.redactor().error(
                    ProviderCode::BadResponse,
                    format!("POST {}: unexpected answer: {e}", self.url),
                )
            })?;
            return Ok(futures::stream::iter([Ok(response)]).boxed());
        }
        let data = self.http.post_sse(&self.url, &self.headers, &body).await?;
        Ok(responses(
            data,
            self.http.redactor().clone(),
            self.url.clone(),
        ))
    }
}

/// The response for a whole (non-streamed) answer.
pub(super) fn answer(answer: Value) -> Result<LlmResponse, serde_json::Error> {
    serde_json::from_value::<Completion>(answer).map(Completion::into_response)
}

/// The responses of a streamed answer whose `data:` payloads are `data`: a partial
/// response per text delta, then the aggregate after `[DONE]`, or the error that broke
/// the stream.
pub(super) fn responses(
    mut data: BoxStream<'static, Result<String, ModelError>>,
    redactor: Redactor,
    url: String,
) -> ResponseStream {
    Box::pin(async_stream::stream! {
        let broken = |m: String| redactor.error(ProviderCode::StreamBroken, format!("stream from {url}: {m}"));
        let mut aggregate = Aggregate::default();
        while let Some(item) = data.next().await {
            let text = match item {
                Ok(text) => text,
                Err(e) => {
                    yield Err(e);
                    return;
                }
            };
            if text.trim() == "[DONE]" {
                yield Ok(aggregate.finish());
                return;
            }
            match aggregate.add(&text) {
                Ok(Some(partial)) => yield Ok(partial),
                Ok(None) => {}
                Err(m) => {
                    yield Err(broken(m));
                    return;
                }
            }
        }
        yield Err(broken("the stream ended without [DONE]".into()));
    })
}

/// The chat completions body for `request`.
fn request_body(model: &str, request: &LlmRequest, stream: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages(request)));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let parameters = t
                    .parameters
                    .clone()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": parameters}})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(Value::Object(config)) = &request.generation_config {
        for (key, value) in config {
            let name = match key.as_str() {
                "temperature" | "top_p" | "seed" | "presence_penalty" | "frequency_penalty"
                | "max_tokens" | "stop" => key.as_str(),
                "topP" => "top_p",
                "max_output_tokens" | "maxOutputTokens" => "max_tokens",
                "stop_sequences" | "stopSequences" => "stop",
                "presencePenalty" => "presence_penalty",
                "frequencyPenalty" => "frequency_penalty",
                "tool_config" | "toolConfig" => {
                    apply_tool_config(&mut body, value);
                    continue;
                }
                _ => {
                    tracing::debug!("generate_content_config key `{key}` has no OpenAI equivalent");
                    continue;
                }
            };
            body.insert(name.into(), value.clone());
        }
    }
    if let Some(schema) = &request.output_schema {
        body.insert(
            "response_format".into(),
            schema.openai_response_format().clone(),
        );
    }
    if stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// `tool_config.function_calling_config` as `tool_choice`: `AUTO` → `"auto"`, `NONE` →
/// `"none"`, `ANY` → `"required"`; `ANY` with one allowed name → that function by name;
/// `ANY` with several → `"required"` and only the allowed tools are sent. Nothing is
/// sent without tools (OpenAI refuses a `tool_choice` without them).
fn apply_tool_config(body: &mut Map<String, Value>, config: &Value) {
    let Some(fc) = config
        .get("function_calling_config")
        .or_else(|| config.get("functionCallingConfig"))
    else {
        return;
    };
    let Some(Value::Array(tools)) = body.get_mut("tools") else {
        return;
    };
    let allowed: Vec<&str> = fc
        .get("allowed_function_names")
        .or_else(|| fc.get("allowedFunctionNames"))
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let choice = match fc.get("mode").and_then(Value::as_str) {
        Some("AUTO") => json!("auto"),
        Some("NONE") => json!("none"),
        Some("ANY") => match allowed.as_slice() {
            [] => json!("required"),
            [name] => json!({"type": "function", "function": {"name": name}}),
            names => {
                tools.retain(|t| {
                    t.pointer("/function/name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| names.contains(&n))
                });
                json!("required")
            }
        },
        _ => return,
    };
    body.insert("tool_choice".into(), choice);
}

/// What a call that never got its response is answered with (see the module docs).
const INTERRUPTED: &str = "the call was interrupted before it returned: no result was recorded";

/// The messages for `request`, with call ids paired as the module docs say.
fn messages(request: &LlmRequest) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(si) = &request.system_instruction {
        out.push(json!({"role": "system", "content": si}));
    }
    let mut n = 0;
    let mut pending: Vec<(String, String)> = Vec::new(); // (name, id) of unanswered calls
    for content in request.messages() {
        if content.role == Some(Role::Model) {
            let mut calls = Vec::new();
            let mut ids = Vec::new();
            for call in content
                .parts
                .iter()
                .filter_map(|p| p.function_call.as_ref())
            {
                let id = call.id.clone().unwrap_or_else(|| format!("call_{n}"));
                n += 1;
                ids.push((call.name.clone(), id.clone()));
                calls.push(json!({"id": id, "type": "function", "function": {
                    "name": call.name, "arguments": call.args.to_string()}}));
            }
            let text = joined_text(content.parts.iter());
            if text.is_none() && calls.is_empty() {
                continue;
            }
            answer_dangling(&mut out, &mut pending);
            pending = ids;
            let mut message = Map::new();
            message.insert("role".into(), json!("assistant"));
            message.insert("content".into(), json!(text));
            if !calls.is_empty() {
                message.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(message));
            continue;
        }
        let mut texts: Vec<&Part> = Vec::new();
        for part in &content.parts {
            let Some(response) = &part.function_response else {
                texts.push(part);
                continue;
            };
            if let Some(text) = joined_text(texts.drain(..)) {
                answer_dangling(&mut out, &mut pending);
                out.push(json!({"role": "user", "content": text}));
            }
            let by_id = response
                .id
                .as_ref()
                .and_then(|id| pending.iter().position(|(_, p)| p == id));
            let slot =
                by_id.or_else(|| pending.iter().position(|(name, _)| *name == response.name));
            let content = response.response.to_string();
            match slot {
                Some(i) => {
                    let (_, id) = pending.remove(i);
                    out.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
                }
                None => {
                    answer_dangling(&mut out, &mut pending);
                    out.push(json!({"role": "user",
                        "content": format!("Result of {}: {content}", response.name)}));
                }
            }
        }
        if let Some(text) = joined_text(texts.into_iter()) {
            answer_dangling(&mut out, &mut pending);
            out.push(json!({"role": "user", "content": text}));
        }
    }
    answer_dangling(&mut out, &mut pending);
    out
}

/// Answers every call still `pending` with an error result. OpenAI-compatible servers
/// refuse a history whose `tool_calls` are not all answered before the next message, and
/// a run that crashed (or was stopped) between a call and its response leaves one.
fn answer_dangling(out: &mut Vec<Value>, pending: &mut Vec<(String, String)>) {
    for (name, id) in pending.drain(..) {
        tracing::warn!("the call to `{name}` ({id}) has no response; answering it with an error");
        let content = json!({ "error": INTERRUPTED }).to_string();
        out.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
    }
}

/// The non-thought texts of `parts`, joined by newlines; `None` when there is none.
fn joined_text<'a>(parts: impl Iterator<Item = &'a Part>) -> Option<String> {
    let texts: Vec<&str> = parts
        .filter(|p| p.thought != Some(true))
        .filter_map(|p| p.text.as_deref())
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Content, FunctionCall, FunctionResponse};

    fn call(name: &str, id: Option<&str>) -> Part {
        Part::function_call(FunctionCall {
            id: id.map(str::to_owned),
            args: json!({"q": name}),
            name: name.into(),
        })
    }

    fn response(name: &str, id: Option<&str>) -> Part {
        Part::function_response(FunctionResponse {
            id: id.map(str::to_owned),
            name: name.into(),
            response: json!({"result": name}),
        })
    }

    #[test]
    fn the_instruction_message_is_a_user_message_in_its_place() {
        let request = LlmRequest {
            system_instruction: Some(std::sync::Arc::new("static".into())),
            contents: crate::model::contents_of(vec![Content::text(Role::User, "hi")]),
            instruction_message: Some(crate::model::InstructionMessage {
                at: 0,
                content: Content::text(Role::User, "dynamic"),
            }),
            ..LlmRequest::default()
        };
        assert_eq!(
            messages(&request),
            [
                json!({"role": "system", "content": "static"}),
                json!({"role": "user", "content": "dynamic"}),
                json!({"role": "user", "content": "hi"}),
            ]
        );
    }

    #[test]
    fn ids_pair_calls_and_responses() {
        let request = LlmRequest {
            contents: crate::model::contents_of(vec![
                Content::text(Role::User, "hi"),
                Content::new(
                    Role::Model,
                    vec![call("a", None), call("b", None), call("a", None)],
                ),
                Content::new(
                    Role::User,
                    vec![
                        response("a", None),
                        response("a", None),
                        response("b", None),
                    ],
                ),
                Content::new(Role::Model, vec![call("c", Some("call_xyz"))]),
                Content::new(
                    Role::User,
                    vec![response("c", Some("call_xyz")), response("zzz", None)],
                ),
            ]),
            ..LlmRequest::default()
        };
        let ids: Vec<Value> = messages(&request)
            .iter()
            .map(|m| {
                m.get("tool_call_id").cloned().unwrap_or_else(|| {
                    json!(
                        m["tool_calls"]
                            .as_array()
                            .map(|c| c.iter().map(|c| c["id"].clone()).collect::<Vec<_>>())
                    )
                })
            })
            .collect();
        assert_eq!(
            ids,
            vec![
                json!(null),
                json!(["call_0", "call_1", "call_2"]),
                json!("call_0"),
                json!("call_2"),
                json!("call_1"),
                json!(["call_xyz"]),
                json!("call_xyz"),
                json!(null),
            ]
        );
        assert_eq!(
            messages(&request)[7]["content"],
            r#"Result of zzz: {"result":"zzz"}"#
        );
    }

    #[test]
    fn calls_without_a_response_are_answered_with_an_error() {
        let request = LlmRequest {
            contents: crate::model::contents_of(vec![
                Content::text(Role::User, "hi"),
                Content::new(Role::Model, vec![call("a", Some("x")), call("b", None)]),
                Content::new(Role::User, vec![response("a", Some("x"))]),
                Content::text(Role::User, "again"),
                Content::new(Role::Model, vec![call("c", None)]),
            ]),
            ..LlmRequest::default()
        };
        let interrupted = json!({"error": INTERRUPTED}).to_string();
        let got: Vec<(Value, Value)> = messages(&request)
            .iter()
            .map(|m| {
                (
                    m["role"].clone(),
                    m.get("tool_call_id").cloned().unwrap_or(Value::Null),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (json!("user"), Value::Null),
                (json!("assistant"), Value::Null),
                (json!("tool"), json!("x")),
                (json!("tool"), json!("call_1")),
                (json!("user"), Value::Null),
                (json!("assistant"), Value::Null),
                (json!("tool"), json!("call_2")),
            ]
        );
        let sent = messages(&request);
        assert_eq!(sent[3]["content"], interrupted.as_str());
        assert_eq!(sent[6]["content"], interrupted.as_str());
    }
}
