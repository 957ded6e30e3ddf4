//! The real providers against local servers that speak their wire formats: the requests
//! we send (path, headers, body) and the responses we make of the answers, including
//! streams, retries, and every way a call can fail.

mod failures;
mod faults;
mod gemini;
mod openai;
pub(crate) mod server;
mod sessions;
mod structured;
mod tool_modes;

use adk_flow::event::{Content, FunctionCall, FunctionResponse, Part, Role};
use adk_flow::model::provider::{self, Provider, ProviderConfig, RetryPolicy, Secret};
use adk_flow::model::{
    CallContext, FunctionDeclaration, LlmRequest, LlmResponse, Model, ModelError,
};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// The API key the tests use.
const KEY: &str = "test-key-0123456789";

/// A model of `provider` at `base`, with a short timeout and fast retries.
fn model(provider: Provider, base: &str, key: Option<&str>) -> Arc<dyn Model> {
    provider::build(&config(provider, base, key)).unwrap()
}

/// The config behind [`model`].
fn config(provider: Provider, base: &str, key: Option<&str>) -> ProviderConfig {
    let model = match provider {
        Provider::Gemini => "gemini-2.5-flash",
        Provider::OpenAi => "smollm2",
    };
    let mut c = ProviderConfig::new(provider, model);
    c.base_url = Some(base.to_owned());
    c.api_key = key.map(Secret::new);
    c.timeout = Duration::from_secs(5);
    c.retry = RetryPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        max_retry_after: Duration::from_millis(100),
    };
    c
}

/// Every response of one call, and the error that ended it, if any.
async fn call(
    model: &dyn Model,
    request: &LlmRequest,
    stream: bool,
) -> (Vec<LlmResponse>, Option<ModelError>) {
    let ctx = CallContext {
        agent_name: "agent",
        stream,
        conversation: "",
        graph_node: false,
    };
    let mut responses = match model.generate(request, ctx).await {
        Ok(s) => s,
        Err(e) => return (Vec::new(), Some(e)),
    };
    let mut out = Vec::new();
    while let Some(item) = responses.next().await {
        match item {
            Ok(r) => out.push(r),
            Err(e) => {
                // Nothing may follow an error.
                assert!(responses.next().await.is_none(), "items after an error");
                return (out, Some(e));
            }
        }
    }
    (out, None)
}

/// The error code and message of a failure.
fn failure(e: Option<ModelError>) -> (String, String) {
    match e {
        Some(ModelError::Provider { code, message }) => (code.to_string(), message),
        other => panic!("expected a provider error, got {other:?}"),
    }
}

/// A request with history: a question, a tool call and its result, a follow-up; two
/// tools (one without parameters) and a generation config.
fn conversation() -> LlmRequest {
    LlmRequest {
        model: "ignored".into(),
        system_instruction: Some(Arc::new("You answer order questions.".into())),
        contents: adk_flow::model::contents_of(vec![
            Content::text(Role::User, "Where is order A-1?"),
            Content::new(
                Role::Model,
                vec![
                    Part::text("Let me check."),
                    Part::function_call(FunctionCall {
                        id: None,
                        args: json!({"order_id": "A-1"}),
                        name: "lookup_order".into(),
                    }),
                ],
            ),
            Content::new(
                Role::User,
                vec![Part::function_response(FunctionResponse {
                    id: None,
                    name: "lookup_order".into(),
                    response: json!({"status": "shipped"}),
                })],
            ),
            Content::text(Role::Model, "It has shipped."),
            Content::text(Role::User, "Thanks! And A-2?"),
        ]),
        tools: vec![
            FunctionDeclaration {
                name: "lookup_order".into(),
                description: "Looks up an order.".into(),
                parameters: Some(json!({"type": "object",
                    "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]})),
            },
            FunctionDeclaration {
                name: "list_orders".into(),
                description: "Lists orders.".into(),
                parameters: None,
            },
        ]
        .into(),
        generation_config: Some(json!({"temperature": 0.0, "max_output_tokens": 64,
            "top_p": 0.9, "stop_sequences": ["END"], "seed": 7})),
        provider_tools: vec![],
        output_schema: None,
        instruction_message: None,
    }
}

/// A one-question request.
fn question(text: &str) -> LlmRequest {
    LlmRequest {
        contents: adk_flow::model::contents_of(vec![Content::text(Role::User, text)]),
        ..LlmRequest::default()
    }
}

/// The text parts of a response, joined.
fn text(r: &LlmResponse) -> String {
    r.content
        .iter()
        .flat_map(|c| &c.parts)
        .filter_map(|p| p.text.as_deref())
        .collect()
}

/// The function calls of a response.
fn calls(r: &LlmResponse) -> Vec<FunctionCall> {
    r.content
        .iter()
        .flat_map(|c| &c.parts)
        .filter_map(|p| p.function_call.as_deref().cloned())
        .collect()
}
