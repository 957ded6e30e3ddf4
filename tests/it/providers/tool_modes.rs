//! `generate_content_config.tool_config.function_calling_config` on the wire: Gemini's
//! `toolConfig.functionCallingConfig`, OpenAI's `tool_choice`.

use super::server::{Server, json};
use super::{KEY, call, conversation, model};
use adk_flow::config::agent_config::GenerateContentConfig;
use adk_flow::model::provider::Provider;
use adk_flow::model::{FunctionDeclaration, LlmRequest};
use serde_json::{Value, json};
use std::sync::Arc;

/// The conversation with three tools and `tool_config` as the YAML loader passes it on
/// (typed, then serialized).
fn request(tool_config: Option<Value>, tools: bool) -> LlmRequest {
    let mut r = conversation();
    let mut config = json!({"temperature": 0.0});
    if let Some(t) = tool_config {
        config["tool_config"] = t;
    }
    let typed: GenerateContentConfig = serde_json::from_value(config).unwrap();
    r.generation_config = Some(serde_json::to_value(typed).unwrap());
    let mut list = if tools {
        r.tools.as_ref().clone()
    } else {
        Vec::new()
    };
    if tools {
        list.push(FunctionDeclaration {
            name: "cancel_order".into(),
            description: "Cancels an order.".into(),
            parameters: None,
        });
    }
    r.tools = Arc::new(list);
    r
}

fn names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn openai_body(request: &LlmRequest) -> Value {
    let server = Server::start(|_| {
        json(
            200,
            json!({"id": "c", "object": "chat.completion", "model": "smollm2",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                         "finish_reason": "stop"}]}),
        )
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, Some(KEY));
    let (_, error) = call(m.as_ref(), request, false).await;
    assert!(error.is_none(), "{error:?}");
    server.received()[0].body.clone()
}

async fn gemini_body(request: &LlmRequest) -> Value {
    let server = Server::start(|_| {
        json(
            200,
            json!({"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"},
                                          "finishReason": "STOP"}]}),
        )
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let (_, error) = call(m.as_ref(), request, false).await;
    assert!(error.is_none(), "{error:?}");
    server.received()[0].body.clone()
}

const ALL: [&str; 3] = ["lookup_order", "list_orders", "cancel_order"];

#[tokio::test]
async fn openai_tool_choice_follows_the_mode() {
    for (config, choice, tools) in [
        (None, None, &ALL[..]),
        (
            Some(json!({"function_calling_config": {"mode": "AUTO"}})),
            Some(json!("auto")),
            &ALL[..],
        ),
        (
            Some(json!({"function_calling_config": {"mode": "NONE"}})),
            Some(json!("none")),
            &ALL[..],
        ),
        (
            Some(json!({"function_calling_config": {"mode": "ANY"}})),
            Some(json!("required")),
            &ALL[..],
        ),
        (
            Some(json!({"function_calling_config": {"mode": "ANY",
                "allowed_function_names": ["list_orders"]}})),
            Some(json!({"type": "function", "function": {"name": "list_orders"}})),
            &ALL[..],
        ),
        (
            Some(json!({"function_calling_config": {"mode": "ANY",
                "allowed_function_names": ["cancel_order", "lookup_order"]}})),
            Some(json!("required")),
            &["lookup_order", "cancel_order"][..],
        ),
    ] {
        let body = openai_body(&request(config.clone(), true)).await;
        assert_eq!(body.get("tool_choice"), choice.as_ref(), "{config:?}");
        assert_eq!(names(&body), tools, "{config:?}");
        assert_eq!(body["temperature"], json!(0.0));
        assert!(body.get("tool_config").is_none());
    }
}

#[tokio::test]
async fn openai_sends_no_tool_choice_without_tools() {
    let body = openai_body(&request(
        Some(json!({"function_calling_config": {"mode": "ANY"}})),
        false,
    ))
    .await;
    assert!(body.get("tools").is_none());
    assert!(body.get("tool_choice").is_none());
}

#[tokio::test]
async fn gemini_gets_tool_config_beside_generation_config() {
    for (config, wire) in [
        (
            json!({"function_calling_config": {"mode": "ANY",
                "allowed_function_names": ["lookup_order", "cancel_order"]}}),
            json!({"functionCallingConfig": {"mode": "ANY",
                "allowedFunctionNames": ["lookup_order", "cancel_order"]}}),
        ),
        (
            json!({"function_calling_config": {"mode": "NONE"}}),
            json!({"functionCallingConfig": {"mode": "NONE"}}),
        ),
        (
            json!({"function_calling_config": {"mode": "AUTO"}}),
            json!({"functionCallingConfig": {"mode": "AUTO"}}),
        ),
    ] {
        let body = gemini_body(&request(Some(config), true)).await;
        assert_eq!(body["toolConfig"], wire);
        assert_eq!(body["generationConfig"], json!({"temperature": 0.0}));
        // Gemini filters by allowedFunctionNames itself: every tool is declared.
        assert_eq!(
            body["tools"][0]["functionDeclarations"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }
    let body = gemini_body(&request(None, true)).await;
    assert!(body.get("toolConfig").is_none());
}

/// A workflow file's `tool_config` reaches both providers through `adk-flow run`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_tool_config_reaches_the_wire() {
    for provider in ["openai", "gemini"] {
        let server = Server::start(move |_| match provider {
            "gemini" => json(
                200,
                json!({"candidates": [{"content": {"parts": [{"text": "ok"}],
                "role": "model"}, "finishReason": "STOP"}]}),
            ),
            _ => json(
                200,
                json!({"id": "c", "object": "chat.completion", "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                             "finish_reason": "stop"}]}),
            ),
        })
        .await;
        let flow = format!(
            r#"name: desk
model: remote
instruction: Answer.
tools: [{{name: lookup_order}}, {{name: list_orders}}]
generate_content_config:
  tool_config:
    function_calling_config:
      mode: ANY
      allowed_function_names: [lookup_order]
define:
  models:
    remote:
      provider: {provider}
      model: m
      base_url: {base}
      api_key_env: TEST_PROVIDER_KEY
      generate_content_config: {{temperature: 0}}
  tools:
    lookup_order:
      description: Looks up an order.
      lookup: {{key: "{{{{ id }}}}", table: {{}}}}
    list_orders:
      description: Lists orders.
      lookup: {{key: "all", table: {{}}}}
"#,
            base = server.base
        );
        let dir = crate::common::write_files(&[("flow.yaml", &flow)]);
        let out = crate::common::bin()
            .current_dir(dir.path())
            .env_remove("ADK_FLOW_DB")
            .env_remove("ADK_FLOW_MODEL")
            .env_remove("ADK_FLOW_STREAM")
            .env("TEST_PROVIDER_KEY", KEY)
            .args(["run", "flow.yaml", "--json", "-m", "hi"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body = server.received()[0].body.clone();
        match provider {
            "gemini" => {
                assert_eq!(
                    body["toolConfig"],
                    json!({"functionCallingConfig": {"mode": "ANY",
                        "allowedFunctionNames": ["lookup_order"]}})
                );
                assert_eq!(body["generationConfig"], json!({"temperature": 0.0}));
            }
            _ => {
                assert_eq!(
                    body["tool_choice"],
                    json!({"type": "function", "function": {"name": "lookup_order"}})
                );
                assert_eq!(names(&body), ["lookup_order", "list_orders"]);
                assert_eq!(body["temperature"], json!(0.0));
            }
        }
    }
}
