//! `output_schema` on the wire, through `run` against local servers speaking each
//! provider's format: OpenAI's `response_format` (with tools beside it, as ADK's LiteLLM
//! adapter sends them), Gemini's `responseSchema`, and what a reply makes of state.

use super::server::{Answer, Server, json as reply};
use crate::common;
use serde_json::{Value, json};

const SCHEMA: &str = r#"
output_key: route
output_schema:
  type: object
  title: Route
  properties:
    category: {type: string, enum: [orders, tech]}
    urgent: {type: boolean, nullable: true}
  required: [category]
"#;

fn openai_text(t: &str) -> Answer {
    reply(
        200,
        json!({"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": t},
                            "finish_reason": "stop"}]}),
    )
}

fn gemini_text(t: &str) -> Answer {
    reply(
        200,
        json!({"candidates": [{"content": {"parts": [{"text": t}], "role": "model"},
                               "finishReason": "STOP"}]}),
    )
}

/// Runs `root` with sessions in memory and no ambient keys; exit code and events.
fn run(root: &str, args: &[&str]) -> (i32, Vec<Value>, String) {
    let dir = common::write_files(&[("root_agent.yaml", root)]);
    let out = common::bin()
        .current_dir(dir.path())
        .env("ADK_FLOW_DB", "memory")
        .env("GEMINI_API_KEY", "test-key")
        .env_remove("GOOGLE_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ADK_FLOW_MODEL")
        .args(["run", "root_agent.yaml", "--json"])
        .args(args)
        .output()
        .unwrap();
    let events = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        out.status.code().unwrap_or(-1),
        events,
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn agent(provider: &str, base: &str, extra: &str) -> String {
    format!(
        "name: classify\nmodel: local\ninstruction: Classify.\n{SCHEMA}{extra}define:\n  models:\n    local:\n      provider: {provider}\n      model: m1\n      base_url: {base}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_gets_a_strict_json_schema_response_format_and_the_reply_is_stored_as_json() {
    let server = Server::start(|_| openai_text(r#"{"category":"orders","urgent":null}"#)).await;
    let (code, events, stderr) = run(
        &agent("openai", &format!("{}/v1", server.base), ""),
        &["-m", "where is order 42?"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        events[0]["actions"]["stateDelta"],
        json!({"route": {"category": "orders", "urgent": null}})
    );
    let body = &server.received()[0].body;
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {
            "name": "Route", "strict": true,
            "schema": {
                "type": "object", "title": "Route",
                "properties": {
                    "category": {"type": "string", "enum": ["orders", "tech"]},
                    "urgent": {"type": ["boolean", "null"]}
                },
                "required": ["category", "urgent"],
                "additionalProperties": false
            }
        }})
    );
    assert!(body.get("tools").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_takes_tools_and_the_schema_together() {
    let server = Server::start(|_| openai_text(r#"{"category":"tech"}"#)).await;
    let (code, events, stderr) = run(
        &agent(
            "openai",
            &format!("{}/v1", server.base),
            "tools: [{name: exit_loop}]\n",
        ),
        &["-m", "it crashes"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        events[0]["actions"]["stateDelta"],
        json!({"route": {"category": "tech"}})
    );
    let body = &server.received()[0].body;
    assert_eq!(body["response_format"]["type"], "json_schema");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["exit_loop"], "no set_model_response on OpenAI");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("set_model_response"), "{system}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_breaks_the_schema_is_an_error_event_on_either_provider() {
    for provider in ["openai", "gemini"] {
        let server = Server::start(move |_| {
            let t = r#"{"category": "billing"}"#;
            if provider == "openai" {
                openai_text(t)
            } else {
                gemini_text(t)
            }
        })
        .await;
        let base = if provider == "openai" {
            format!("{}/v1", server.base)
        } else {
            server.base.clone()
        };
        let (code, events, _) = run(&agent(provider, &base, ""), &["-m", "hi"]);
        assert_eq!(code, 1, "{provider}");
        assert_eq!(events.len(), 1, "{provider}: {events:?}");
        assert_eq!(events[0]["errorCode"], "OUTPUT_SCHEMA_MISMATCH");
        let message = events[0]["errorMessage"].as_str().unwrap();
        assert!(
            message.contains(r#"at /category: "billing" is not one of"#),
            "{provider}: {message}"
        );
        assert_eq!(events[0]["actions"]["stateDelta"], json!({}));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_gets_a_response_schema_and_the_reply_is_stored_as_json() {
    let server = Server::start(|_| gemini_text(r#"{"category": "tech", "urgent": true}"#)).await;
    let (code, events, stderr) = run(&agent("gemini", &server.base, ""), &["-m", "it crashes"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        events[0]["actions"]["stateDelta"],
        json!({"route": {"category": "tech", "urgent": true}})
    );
    let received = &server.received()[0];
    assert!(
        received.uri.ends_with("/v1beta/models/m1:generateContent"),
        "{}",
        received.uri
    );
    assert_eq!(
        received.body["generationConfig"],
        json!({
            "responseMimeType": "application/json",
            "responseSchema": {
                "type": "OBJECT", "title": "Route",
                "propertyOrdering": ["category", "urgent"],
                "properties": {
                    "category": {"type": "STRING", "enum": ["orders", "tech"]},
                    "urgent": {"type": "BOOLEAN", "nullable": true}
                },
                "required": ["category"]
            }
        })
    );
}
