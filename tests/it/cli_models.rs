//! Choosing models at run time through the CLI: `--model`, `define.models`, `--record`,
//! missing keys and provider failures, against a local server speaking the OpenAI format.

use crate::common;
use crate::providers::server;

use serde_json::{Value, json};
use server::{Answer, Server, json as reply};

fn completion(content: Value) -> Answer {
    reply(
        200,
        json!({
            "id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": content, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        }),
    )
}

fn text(t: &str) -> Answer {
    completion(json!({"role": "assistant", "content": t}))
}

fn call(name: &str, args: Value) -> Answer {
    completion(json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": args.to_string()}}
    ]}))
}

const SOLO: &str = "name: solo\nmodel: gemini-2.5-flash\ninstruction: Be brief.\noutput_key: out\n";

fn run_cli(
    dir: &std::path::Path,
    env: &[(&str, &str)],
    args: &[&str],
) -> (i32, Vec<Value>, String) {
    let mut cmd = common::bin();
    // Sessions stay in memory: these runs choose models, not what outlives the process.
    cmd.current_dir(dir)
        .env("ADK_FLOW_DB", "memory")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("GEMINI_API_KEY")
        .env_remove("GOOGLE_API_KEY")
        .env_remove("ADK_FLOW_MODEL");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(args).output().unwrap();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_override_talks_to_an_openai_compatible_server() {
    let server = Server::start(|_| text("Hi there.")).await;
    let dir = common::write_files(&[("root_agent.yaml", SOLO)]);
    let base = format!("{}/v1", server.base);
    let (code, events, stderr) = run_cli(
        dir.path(),
        &[
            ("OPENAI_BASE_URL", &base),
            ("OPENAI_API_KEY", "sk-test-123"),
        ],
        &[
            "run",
            "root_agent.yaml",
            "--model",
            "openai:tiny",
            "--json",
            "-m",
            "hello",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(events[0]["content"]["parts"][0]["text"], "Hi there.");
    assert_eq!(
        events[0]["actions"]["stateDelta"],
        json!({"out": "Hi there."})
    );
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].uri, "/v1/chat/completions");
    assert_eq!(got[0].body["model"], "tiny");
    assert_eq!(got[0].headers["authorization"], "Bearer sk-test-123");
    assert_eq!(
        got[0].body["messages"][1],
        json!({"role": "user", "content": "hello"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declared_models_carry_endpoint_and_generation_defaults() {
    let server = Server::start(|_| text("ok")).await;
    let root = format!(
        "name: solo\nmodel: local\ninstruction: Be brief.\ngenerate_content_config: {{max_output_tokens: 50}}\ndefine:\n  models:\n    local:\n      provider: openai\n      model: smollm2\n      base_url: {}/v1\n      generate_content_config: {{temperature: 0, max_output_tokens: 500}}\n",
        server.base
    );
    let dir = common::write_files(&[("root_agent.yaml", &root)]);
    let (code, _, stderr) = run_cli(
        dir.path(),
        &[],
        &["run", "root_agent.yaml", "--json", "-m", "hi"],
    );
    assert_eq!(code, 0, "{stderr}");
    let body = &server.received()[0].body;
    assert_eq!(body["model"], "smollm2");
    assert_eq!(body["temperature"], 0.0);
    assert_eq!(body["max_tokens"], 50, "the agent's own setting wins");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_run_replays_offline_with_the_same_events() {
    let server = Server::start(|n| match n {
        0 => call("exit_loop", json!({})),
        _ => text("unused"),
    })
    .await;
    let root = "agent_class: LoopAgent\nname: loop\nmax_iterations: 3\nsub_agents:\n  - name: worker\n    model: openai:m\n    instruction: Work.\n    tools: [{name: exit_loop}]\n";
    let dir = common::write_files(&[("root_agent.yaml", root)]);
    let base = format!("{}/v1", server.base);
    let (code, live, stderr) = run_cli(
        dir.path(),
        &[("OPENAI_BASE_URL", &base)],
        &[
            "run",
            "root_agent.yaml",
            "--json",
            "-m",
            "go",
            "--record",
            "rec.yaml",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let recorded = std::fs::read_to_string(dir.path().join("rec.yaml")).unwrap();
    assert!(recorded.contains("exit_loop"), "{recorded}");
    drop(server);
    let (code, replay, stderr) = run_cli(
        dir.path(),
        &[],
        &[
            "run",
            "root_agent.yaml",
            "--json",
            "-m",
            "go",
            "--script",
            "rec.yaml",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let shape = |events: &[Value]| -> Vec<String> { events.iter().map(common::simplify).collect() };
    assert_eq!(shape(&live), shape(&replay));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_fails_before_any_request() {
    let dir = common::write_files(&[("root_agent.yaml", SOLO)]);
    let (code, events, stderr) = run_cli(
        dir.path(),
        &[],
        &["run", "root_agent.yaml", "--json", "-m", "hi"],
    );
    assert_eq!(code, 1);
    assert!(events.is_empty());
    assert!(
        stderr.contains("GEMINI_API_KEY") || stderr.contains("GOOGLE_API_KEY"),
        "{stderr}"
    );
    let (code, _, stderr) = run_cli(
        dir.path(),
        &[],
        &["run", "root_agent.yaml", "--model", "claude:x", "-m", "hi"],
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("unknown provider `claude`"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_failures_end_the_run_with_an_error_event_and_no_secret() {
    let server = Server::start(|_| {
        reply(
            400,
            json!({"error": {"message": "bad request for key sk-secret-999"}}),
        )
    })
    .await;
    let dir = common::write_files(&[("root_agent.yaml", SOLO)]);
    let base = format!("{}/v1", server.base);
    let (code, events, stderr) = run_cli(
        dir.path(),
        &[
            ("OPENAI_BASE_URL", &base),
            ("OPENAI_API_KEY", "sk-secret-999"),
        ],
        &[
            "run",
            "root_agent.yaml",
            "--model",
            "openai:m",
            "--json",
            "-m",
            "hi",
            "-m",
            "again",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(events.len(), 1, "the second message is never sent");
    assert_eq!(events[0]["errorCode"], "HTTP_400");
    let all = format!("{events:?}{stderr}");
    assert!(!all.contains("sk-secret-999"), "{all}");
    assert_eq!(server.received().len(), 1, "a 400 is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_built_in_tools_on_an_openai_model_are_a_clear_error() {
    let server = Server::start(|_| text("never")).await;
    let dir = common::write_files(&[(
        "root_agent.yaml",
        "name: solo\nmodel: openai:m\ninstruction: Search.\ntools: [{name: google_search}]\n",
    )]);
    let base = format!("{}/v1", server.base);
    let (code, events, _) = run_cli(
        dir.path(),
        &[("OPENAI_BASE_URL", &base)],
        &[
            "run",
            "root_agent.yaml",
            "--json",
            "--db",
            "memory",
            "-m",
            "hi",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(events[0]["errorCode"], "UNSUPPORTED_TOOL");
    assert!(
        events[0]["errorMessage"]
            .as_str()
            .unwrap()
            .contains("googleSearch")
    );
    assert!(server.received().is_empty());
}
