//! Chat completion answers, whole or streamed, turned into [`LlmResponse`]s (the rules
//! are in the parent module's docs).

use crate::event::{Content, FunctionCall, Part, Role, UsageMetadata};
use crate::model::LlmResponse;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
pub(super) struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: Option<Message>,
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Message {
    content: Option<Value>,
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
}

#[derive(Debug, Deserialize)]
struct ToolCall {
    id: Option<String>,
    function: Option<FunctionPayload>,
}

#[derive(Debug, Default, Deserialize)]
struct FunctionPayload {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    total_tokens: Option<u64>,
}

impl From<Usage> for UsageMetadata {
    fn from(u: Usage) -> Self {
        UsageMetadata {
            prompt_token_count: u.prompt_tokens,
            candidates_token_count: u.completion_tokens,
            total_token_count: u.total_tokens,
        }
    }
}

impl Completion {
    pub(super) fn into_response(self) -> LlmResponse {
        let usage = self.usage.map(UsageMetadata::from);
        let Some(choice) = self.choices.into_iter().next() else {
            return LlmResponse {
                error_code: Some("UNKNOWN_ERROR".into()),
                error_message: Some("the answer has no choices".into()),
                usage_metadata: usage,
                ..LlmResponse::default()
            };
        };
        let message = choice.message.unwrap_or_default();
        let text = match message.content {
            Some(Value::String(s)) => s,
            // Some servers send content parts: [{"type": "text", "text": ...}].
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|i| i.get("text").and_then(Value::as_str))
                .collect(),
            _ => String::new(),
        };
        let calls = message
            .tool_calls
            .into_iter()
            .map(|c| {
                let f = c.function.unwrap_or_default();
                (
                    c.id,
                    f.name.unwrap_or_default(),
                    f.arguments.unwrap_or_default(),
                )
            })
            .collect();
        build(
            message.reasoning_content.unwrap_or_default(),
            text,
            calls,
            choice.finish_reason.as_deref(),
            usage,
        )
    }
}

/// The response for an answer's reasoning, text, calls `(id, name, raw arguments)` and
/// finish reason.
fn build(
    reasoning: String,
    text: String,
    calls: Vec<(Option<String>, String, String)>,
    finish: Option<&str>,
    usage: Option<UsageMetadata>,
) -> LlmResponse {
    let mut parts = Vec::new();
    if !reasoning.is_empty() {
        parts.push(Part {
            thought: Some(true),
            ..Part::text(reasoning)
        });
    }
    if !text.is_empty() {
        parts.push(Part::text(text));
    }
    for (id, name, raw) in calls {
        let args = match raw.trim() {
            "" => Ok(json!({})),
            raw => serde_json::from_str::<Value>(raw),
        };
        match args {
            Ok(Value::Object(args)) => parts.push(Part::function_call(FunctionCall {
                id: id.filter(|i| !i.is_empty()),
                args: Value::Object(args),
                name,
            })),
            Ok(Value::Null) => parts.push(Part::function_call(FunctionCall {
                id: id.filter(|i| !i.is_empty()),
                args: json!({}),
                name,
            })),
            _ => {
                return LlmResponse {
                    error_code: Some("MALFORMED_FUNCTION_CALL".into()),
                    error_message: Some(format!(
                        "the model called `{name}` with arguments that are not a JSON object: {raw:.500}"
                    )),
                    usage_metadata: usage,
                    ..LlmResponse::default()
                };
            }
        }
    }
    let finish_reason = finish.map(|f| match f {
        "stop" | "tool_calls" | "function_call" => "STOP".to_owned(),
        "length" => "MAX_TOKENS".to_owned(),
        "content_filter" => "SAFETY".to_owned(),
        other => other.to_uppercase(),
    });
    let content = (!parts.is_empty()).then(|| Content::new(Role::Model, parts));
    let error_code = if finish == Some("content_filter") {
        Some("SAFETY".to_owned())
    } else if content.is_none() && finish_reason.as_deref().is_some_and(|f| f != "STOP") {
        finish_reason.clone()
    } else {
        None
    };
    let error_message = error_code
        .as_ref()
        .map(|code| format!("the provider stopped the answer ({code})"));
    LlmResponse {
        content,
        partial: None,
        finish_reason: finish_reason.map(crate::event::finish_reason),
        error_code,
        error_message,
        usage_metadata: usage,
    }
}

/// A streamed chunk.
#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    usage: Option<Usage>,
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: u32,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    content: Option<String>,
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallDelta>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    index: Option<usize>,
    id: Option<String>,
    function: Option<FunctionPayload>,
}

/// What a stream has said so far.
#[derive(Default)]
pub(super) struct Aggregate {
    reasoning: String,
    text: String,
    /// Per call index: id, name, argument fragments joined.
    calls: BTreeMap<usize, (Option<String>, String, String)>,
    finish_reason: Option<String>,
    usage: Option<UsageMetadata>,
}

impl Aggregate {
    /// Takes in one chunk; returns the partial response to show, if it carries text.
    pub(super) fn add(&mut self, data: &str) -> Result<Option<LlmResponse>, String> {
        let chunk: Chunk = serde_json::from_str(data)
            .map_err(|e| format!("a chunk is not the expected JSON ({e}): {data:.200}"))?;
        if let Some(error) = chunk.error {
            return Err(format!("the provider reported an error: {error}"));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.into());
        }
        let mut parts = Vec::new();
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(r) = delta.reasoning_content.filter(|r| !r.is_empty()) {
                self.reasoning.push_str(&r);
                parts.push(Part {
                    thought: Some(true),
                    ..Part::text(r)
                });
            }
            if let Some(t) = delta.content.filter(|t| !t.is_empty()) {
                self.text.push_str(&t);
                parts.push(Part::text(t));
            }
            for (position, call) in delta.tool_calls.into_iter().enumerate() {
                let slot = self
                    .calls
                    .entry(call.index.unwrap_or(position))
                    .or_default();
                if slot.0.is_none() {
                    slot.0 = call.id.filter(|i| !i.is_empty());
                }
                let f = call.function.unwrap_or_default();
                if let Some(name) = f.name.filter(|_| slot.1.is_empty()) {
                    slot.1 = name;
                }
                slot.2.push_str(f.arguments.as_deref().unwrap_or(""));
            }
        }
        Ok((!parts.is_empty()).then(|| LlmResponse {
            content: Some(Content::new(Role::Model, parts)),
            partial: Some(true),
            ..LlmResponse::default()
        }))
    }

    /// The aggregate that follows `[DONE]`.
    pub(super) fn finish(self) -> LlmResponse {
        let calls = self.calls.into_values().collect();
        LlmResponse {
            partial: Some(false),
            ..build(
                self.reasoning,
                self.text,
                calls,
                self.finish_reason.as_deref(),
                self.usage,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reasons_follow_adk() {
        let r = build(
            String::new(),
            String::new(),
            vec![],
            Some("content_filter"),
            None,
        );
        assert_eq!(r.error_code.as_deref(), Some("SAFETY"));
        let r = build(String::new(), "abc".into(), vec![], Some("length"), None);
        assert_eq!(
            (r.finish_reason.as_deref(), r.error_code),
            (Some("MAX_TOKENS"), None)
        );
        let r = build(String::new(), String::new(), vec![], Some("length"), None);
        assert_eq!(r.error_code.as_deref(), Some("MAX_TOKENS"));
        let r = build(
            String::new(),
            String::new(),
            vec![(None, "f".into(), "{oops".into())],
            Some("tool_calls"),
            None,
        );
        assert_eq!(r.error_code.as_deref(), Some("MALFORMED_FUNCTION_CALL"));
        let r = build(
            String::new(),
            String::new(),
            vec![(Some(String::new()), "f".into(), String::new())],
            Some("tool_calls"),
            None,
        );
        let call = r.content.unwrap().parts[0].function_call.clone().unwrap();
        assert_eq!((call.id, call.args), (None, json!({})));
    }
}
