//! Google's Gemini API (`generativelanguage.googleapis.com`), spoken natively.
//!
//! - `POST {base}/v1beta/models/{model}:generateContent`, or
//!   `:streamGenerateContent?alt=sse` when streaming, with the key in `x-goog-api-key`.
//! - The body is what ADK sends: `contents` (our `Content`/`Part` serialize like genai's),
//!   `systemInstruction`, `tools: [{functionDeclarations}]` with each schema as
//!   `parametersJsonSchema`, and `generationConfig` from the agent's
//!   `generate_content_config` with snake_case keys turned camelCase (`safety_settings`,
//!   `tool_config` and `cached_content` go to the top of the body, as genai puts them:
//!   `toolConfig: {functionCallingConfig: {mode, allowedFunctionNames}}`).
//! - An agent's `output_schema` is `generationConfig.responseSchema` (genai's form of it,
//!   see `schema.rs`) with `responseMimeType: application/json`, as ADK's
//!   `set_output_schema` sets them.
//! - Answers follow ADK's `LlmResponse.create`: a candidate with parts, or one that
//!   finished with `STOP`, is a reply; any other candidate is an error reply whose
//!   `error_code` is its finish reason (`SAFETY`, `MAX_TOKENS`...); no candidate and a
//!   `promptFeedback.blockReason` is an error reply with that reason. Safety blocks are
//!   replies, not failures. Parts other than text and function calls/responses (inline
//!   data, executable code) are dropped.
//! - Streaming follows ADK's progressive SSE aggregator: every chunk is yielded as a
//!   partial response, then one aggregate (`partial: false`) holds the parts in order,
//!   consecutive texts of one kind merged, with `error_code` set when the last finish
//!   reason is not `STOP`. A stream that ends before any finish reason is `STREAM_BROKEN`.

use super::ProviderCode;
use super::http::{HttpClient, Redactor, Secret};
use super::{CallContext, LlmRequest, LlmResponse, Model, ModelError, ResponseStream};
use crate::event::{Content, Part, Role, UsageMetadata};
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// A Gemini model behind the Gemini API.
pub(crate) struct GeminiModel {
    http: HttpClient,
    base_url: String,
    model: String,
    headers: HeaderMap,
}

impl GeminiModel {
    /// A model named `model` (with or without the `models/` prefix) at `base_url`.
    pub(crate) fn new(
        http: HttpClient,
        base_url: &str,
        model: &str,
        key: &Secret,
    ) -> Result<Self, reqwest::header::InvalidHeaderValue> {
        let mut value = HeaderValue::from_str(key.expose())?;
        value.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert("x-goog-api-key", value);
        Ok(GeminiModel {
            http,
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.trim_start_matches("models/").to_owned(),
            headers,
        })
    }

    fn url(&self, stream: bool) -> String {
        let method = if stream {
            "streamGenerateContent?alt=sse"
        } else {
            "generateContent"
        };
        format!("{}/v1beta/models/{}:{method}", self.base_url, self.model)
    }
}

#[async_trait]
impl Model for GeminiModel {
    /// Gemini Live (`BidiGenerateContent`) at the same base URL, with the same key.
    async fn connect_live(
        &self,
        request: &LlmRequest,
        config: &super::live::LiveRunConfig,
        _call: CallContext<'_>,
    ) -> Option<Result<Box<dyn super::live::LiveConnection>, super::live::LiveError>> {
        let key = self.headers.get("x-goog-api-key")?.clone();
        let target = super::live::gemini::GeminiLiveTarget {
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            key,
        };
        Some(
            super::live::gemini::GeminiLive::connect(target, request, config)
                .await
                .map(|c| Box::new(c) as Box<dyn super::live::LiveConnection>),
        )
    }

    async fn generate(
        &self,
        request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError> {
        let body = request_body(request);
        let url = self.url(call.stream);
        if !call.stream {
            let answer = self.http.post_json(&url, &self.headers, &body).await?;
            let response = self::answer(answer).map_err(|e| {
                self.http
                    .redactor()
                    .error(ProviderCode::BadResponse, format!("POST {url}: {e}"))
            })?;
            return Ok(futures::stream::iter([Ok(response)]).boxed());
        }
        let data = self.http.post_sse(&url, &self.headers, &body).await?;
        Ok(responses(data, self.http.redactor().clone(), url))
    }
}

/// The responses of a streamed answer whose `data:` payloads are `data`: one partial
/// response per chunk, then the aggregate, or the error that broke the stream.
pub(super) fn responses(
    mut data: BoxStream<'static, Result<String, ModelError>>,
    redactor: Redactor,
    url: String,
) -> ResponseStream {
    Box::pin(async_stream::stream! {
        let mut aggregate = Aggregate::default();
        while let Some(item) = data.next().await {
            let chunk = match item.and_then(|text| parse_chunk(&text, &redactor, &url)) {
                Ok(chunk) => chunk,
                Err(e) => {
                    yield Err(e);
                    return;
                }
            };
            aggregate.add(&chunk);
            yield Ok(LlmResponse { partial: Some(true), ..create(chunk) });
        }
        yield aggregate
            .finish()
            .map_err(|m| redactor.error(ProviderCode::StreamBroken, format!("stream from {url}: {m}")));
    })
}

/// The response for a whole (non-streamed) answer.
pub(super) fn answer(answer: Value) -> Result<LlmResponse, serde_json::Error> {
    parse(answer).map(create)
}

/// The `generateContent` body for `request` (also what `--dump-requests` writes).
pub(super) fn request_body(request: &LlmRequest) -> Value {
    let mut body = Map::new();
    body.insert("contents".into(), json!(request.messages()));
    if let Some(si) = &request.system_instruction {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": si}], "role": "user"}),
        );
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut d = Map::new();
                d.insert("name".into(), json!(t.name));
                d.insert("description".into(), json!(t.description));
                if let Some(p) = &t.parameters {
                    d.insert("parametersJsonSchema".into(), p.clone());
                }
                Value::Object(d)
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{ "functionDeclarations": declarations }]),
        );
    }
    if !request.provider_tools.is_empty() {
        let tools = body
            .entry("tools")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = tools {
            for key in &request.provider_tools {
                list.push(json!({ key.as_str(): {} }));
            }
        }
    }
    if let Some(Value::Object(config)) = &request.generation_config {
        let mut generation = Map::new();
        for (key, value) in config {
            let key = crate::pyrepr::camel(key);
            match key.as_str() {
                // genai sends these beside generationConfig, not in it.
                "safetySettings" | "toolConfig" => {
                    body.insert(key, camel_keys(value));
                }
                "cachedContent" | "labels" => {
                    body.insert(key, value.clone());
                }
                // ADK owns these; they are not generation parameters.
                "systemInstruction" | "tools" | "httpOptions" | "automaticFunctionCalling" => {}
                // Schemas keep their own keys (property names).
                "responseSchema" | "responseJsonSchema" => {
                    generation.insert(key, value.clone());
                }
                _ => {
                    generation.insert(key, camel_keys(value));
                }
            }
        }
        if !generation.is_empty() {
            body.insert("generationConfig".into(), Value::Object(generation));
        }
    }
    if let Some(schema) = &request.output_schema {
        let generation = body
            .entry("generationConfig")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(generation) = generation {
            generation.insert("responseMimeType".into(), json!("application/json"));
            generation.insert("responseSchema".into(), schema.gemini().clone());
        }
    }
    Value::Object(body)
}

/// `value` with every object key turned camelCase.
fn camel_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (crate::pyrepr::camel(k), camel_keys(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(camel_keys).collect()),
        other => other.clone(),
    }
}

/// A `GenerateContentResponse`, as far as ADK reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GenerateContentResponse {
    #[serde(default)]
    candidates: Vec<Candidate>,
    prompt_feedback: Option<PromptFeedback>,
    usage_metadata: Option<UsageMetadata>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<String>,
    finish_message: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
    block_reason_message: Option<String>,
}

fn parse(answer: Value) -> Result<GenerateContentResponse, serde_json::Error> {
    let mut response: GenerateContentResponse = serde_json::from_value(answer)?;
    for candidate in &mut response.candidates {
        if let Some(content) = &mut candidate.content {
            // Kinds we do not model (inline data, code) would come back as empty parts,
            // which the API rejects when they are sent again.
            content.parts.retain(|p| {
                p.text.is_some() || p.function_call.is_some() || p.function_response.is_some()
            });
            content.role = Some(Role::Model);
        }
    }
    Ok(response)
}

/// One streamed chunk; an unparsable chunk or an error object breaks the stream.
fn parse_chunk(
    text: &str,
    redactor: &Redactor,
    url: &str,
) -> Result<GenerateContentResponse, ModelError> {
    let broken = |m: String| {
        redactor.error(
            ProviderCode::StreamBroken,
            format!("stream from {url}: {m}"),
        )
    };
    let value: Value = serde_json::from_str(text)
        .map_err(|e| broken(format!("a chunk is not JSON ({e}): {text:.200}")))?;
    if let Some(error) = value.get("error") {
        return Err(broken(format!("the provider reported an error: {error}")));
    }
    parse(value).map_err(|e| broken(format!("unexpected chunk ({e}): {text:.200}")))
}

/// ADK's `LlmResponse.create`.
fn create(response: GenerateContentResponse) -> LlmResponse {
    let usage_metadata = response.usage_metadata;
    if let Some(candidate) = response.candidates.into_iter().next() {
        let has_parts = candidate
            .content
            .as_ref()
            .is_some_and(|c| !c.parts.is_empty());
        if has_parts || candidate.finish_reason.as_deref() == Some("STOP") {
            LlmResponse {
                content: candidate.content,
                finish_reason: candidate.finish_reason.map(crate::event::finish_reason),
                usage_metadata,
                ..LlmResponse::default()
            }
        } else {
            LlmResponse {
                error_code: candidate.finish_reason.clone(),
                error_message: candidate.finish_message,
                finish_reason: candidate.finish_reason.map(crate::event::finish_reason),
                usage_metadata,
                ..LlmResponse::default()
            }
        }
    } else if let Some(feedback) = response.prompt_feedback {
        LlmResponse {
            error_code: feedback.block_reason,
            error_message: feedback.block_reason_message,
            usage_metadata,
            ..LlmResponse::default()
        }
    } else {
        // Current ADK treats this as a successful empty turn.
        LlmResponse {
            content: Some(Content::new(Role::Model, Vec::new())),
            usage_metadata,
            ..LlmResponse::default()
        }
    }
}

/// ADK's progressive SSE aggregation of a streamed reply.
#[derive(Default)]
struct Aggregate {
    parts: Vec<Part>,
    chunks: usize,
    finish_reason: Option<String>,
    finish_message: Option<String>,
    usage: Option<UsageMetadata>,
    /// The block of the last chunk, when it had no candidate.
    blocked: Option<PromptFeedback>,
}

impl Aggregate {
    fn add(&mut self, chunk: &GenerateContentResponse) {
        self.chunks += 1;
        if chunk.usage_metadata.is_some() {
            self.usage.clone_from(&chunk.usage_metadata);
        }
        let Some(candidate) = chunk.candidates.first() else {
            self.blocked = chunk.prompt_feedback.as_ref().map(|f| PromptFeedback {
                block_reason: f.block_reason.clone(),
                block_reason_message: f.block_reason_message.clone(),
            });
            return;
        };
        self.blocked = None;
        if candidate.finish_reason.is_some() {
            self.finish_reason.clone_from(&candidate.finish_reason);
            self.finish_message.clone_from(&candidate.finish_message);
        }
        for part in candidate.content.iter().flat_map(|c| &c.parts) {
            self.push(part);
        }
    }

    fn push(&mut self, part: &Part) {
        if let (Some(text), None) = (&part.text, &part.function_call)
            && let Some(last) = self.parts.last_mut()
            && last.function_call.is_none()
            && last.function_response.is_none()
            && last.thought == part.thought
            && let Some(buffer) = &mut last.text
        {
            buffer.push_str(text);
            if last.thought_signature.is_none() {
                last.thought_signature.clone_from(&part.thought_signature);
            }
            return;
        }
        if part
            .function_call
            .as_ref()
            .is_some_and(|c| c.name.is_empty())
        {
            return; // an empty call marks the end of a streamed call
        }
        let duplicate = part.function_call.as_ref().is_some_and(|c| {
            c.id.is_some()
                && self
                    .parts
                    .iter()
                    .any(|p| p.function_call.as_ref().is_some_and(|seen| seen.id == c.id))
        });
        if !duplicate {
            self.parts.push(part.clone());
        }
    }

    /// The aggregate; `Err` when the stream ended before the model finished.
    fn finish(self) -> Result<LlmResponse, String> {
        let (error_code, error_message) = match (&self.finish_reason, self.blocked) {
            (Some(reason), _) if reason != "STOP" => (Some(reason.clone()), self.finish_message),
            (_, Some(block)) if block.block_reason.is_some() => {
                (block.block_reason, block.block_reason_message)
            }
            (None, _) if self.chunks == 0 => return Err("the stream ended without a chunk".into()),
            (None, _) => return Err("the stream ended before the model finished".into()),
            _ => (None, None),
        };
        Ok(LlmResponse {
            content: (!self.parts.is_empty()).then(|| Content::new(Role::Model, self.parts)),
            partial: Some(false),
            finish_reason: self.finish_reason.map(crate::event::finish_reason),
            error_code,
            error_message,
            usage_metadata: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(v: Value) -> GenerateContentResponse {
        parse(v).unwrap()
    }

    #[test]
    fn config_keys_turn_camel_case() {
        let request = LlmRequest {
            generation_config: Some(json!({
                "temperature": 0.2, "max_output_tokens": 50, "stop_sequences": ["x"],
                "thinking_config": {"thinking_budget": 0},
                "response_schema": {"type": "object", "properties": {"snake_key": {}}},
                "safety_settings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}],
                "http_options": {"timeout": 1}
            })),
            ..LlmRequest::default()
        };
        let body = request_body(&request);
        assert_eq!(
            body["generationConfig"],
            json!({"temperature": 0.2, "maxOutputTokens": 50, "stopSequences": ["x"],
                   "thinkingConfig": {"thinkingBudget": 0},
                   "responseSchema": {"type": "object", "properties": {"snake_key": {}}}})
        );
        assert_eq!(body["safetySettings"][0]["threshold"], "BLOCK_NONE");
    }

    #[test]
    fn create_follows_adk() {
        let blocked = create(chunk(json!({"candidates": [{"finishReason": "SAFETY",
            "finishMessage": "unsafe"}]})));
        assert_eq!(blocked.error_code.as_deref(), Some("SAFETY"));
        assert_eq!(blocked.error_message.as_deref(), Some("unsafe"));
        assert_eq!(blocked.content, None);
        let prompt = create(chunk(
            json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}),
        ));
        assert_eq!(prompt.error_code.as_deref(), Some("PROHIBITED_CONTENT"));
        let cut = create(chunk(
            json!({"candidates": [{"content": {"parts": [{"text": "a"}]},
            "finishReason": "MAX_TOKENS"}]}),
        ));
        assert_eq!(cut.error_code, None);
        assert_eq!(cut.finish_reason.as_deref(), Some("MAX_TOKENS"));
    }

    #[test]
    fn aggregate_merges_text_and_keeps_order() {
        let mut a = Aggregate::default();
        for c in [
            json!({"candidates": [{"content": {"parts": [{"text": "think", "thought": true}]}}]}),
            json!({"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]}),
            json!({"candidates": [{"content": {"parts": [{"text": "lo"},
                {"functionCall": {"name": "f", "args": {"x": 1}}}]}}]}),
            json!({"candidates": [{"content": {"parts": [{"inlineData": {}}]},
                "finishReason": "STOP"}], "usageMetadata": {"totalTokenCount": 9}}),
        ] {
            a.add(&chunk(c));
        }
        let r = a.finish().unwrap();
        let parts = r.content.unwrap().parts;
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].thought, Some(true));
        assert_eq!(parts[1].text.as_deref(), Some("Hello"));
        assert_eq!(
            parts[2].function_call.as_ref().unwrap().args,
            json!({"x": 1})
        );
        assert_eq!(r.partial, Some(false));
        assert_eq!(r.usage_metadata.unwrap().total_token_count, Some(9));
    }

    #[test]
    fn unfinished_stream_is_broken() {
        let mut a = Aggregate::default();
        a.add(&chunk(
            json!({"candidates": [{"content": {"parts": [{"text": "Hel"}]}}]}),
        ));
        assert!(a.finish().is_err());
        assert!(Aggregate::default().finish().is_err());
    }
}
