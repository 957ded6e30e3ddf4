//! Provider faults through the CLI with a SQLite session: what a failed call leaves in
//! the stored conversation, and what the next run sends. A run resumed after a crash
//! between a tool call and its response answers the dangling call before the new message.

use super::server::{Answer, End, Server, json, json_with, sse};
use crate::common;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A one-agent workflow on a declared model of `provider` at `base`, with fast retries.
fn workflow(provider: &str, base: &str) -> String {
    let model = match provider {
        "gemini" => "gemini-2.5-flash",
        _ => "smollm2",
    };
    format!(
        r#"name: solo
model: remote
instruction: Be brief.
output_key: answer
tools: [{{name: nap}}]
define:
  models:
    remote:
      provider: {provider}
      model: {model}
      base_url: {base}
      api_key_env: TEST_PROVIDER_KEY
      timeout_secs: 2
      retries: {{max_attempts: 3, initial_backoff_ms: 10, max_backoff_ms: 20}}
  tools:
    nap:
      description: Sleep.
      command: {{program: sleep, args: ["{{{{ seconds }}}}"], timeout_secs: 60}}
"#
    )
}

fn adk(dir: &Path) -> assert_cmd::Command {
    let mut c = common::bin();
    c.current_dir(dir)
        .env_remove("ADK_FLOW_DB")
        .env_remove("ADK_FLOW_MODEL")
        .env_remove("ADK_FLOW_STREAM")
        .env("TEST_PROVIDER_KEY", "test-key-0123456789");
    c
}

/// `run flow.yaml --session s --json --allow-commands ARGS -m MESSAGE`: exit code and
/// printed events.
fn run(dir: &Path, args: &[&str], message: &str) -> (i32, Vec<Value>) {
    let out = adk(dir)
        .args([
            "run",
            "flow.yaml",
            "--session",
            "s",
            "--json",
            "--allow-commands",
        ])
        .args(args)
        .args(["-m", message])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let events = lines(&out.stdout);
    let code = out.status.code().unwrap_or(-1);
    if events.is_empty() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    (code, events)
}

fn lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// The stored events of session `s`.
fn stored(dir: &Path) -> Vec<Value> {
    let out = adk(dir)
        .args(["sessions", "show", "s", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lines(&out.stdout)
}

fn text_of(event: &Value) -> String {
    parts_text(&event["content"])
}

fn parts_text(content: &Value) -> String {
    content["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

fn stream_ok(provider: &str) -> Answer {
    match provider {
        "gemini" => sse(
            &[
                r#"{"candidates": [{"content": {"parts": [{"text": "recovered"}], "role": "model"}, "finishReason": "STOP"}]}"#,
            ],
            End::Clean,
        ),
        _ => sse(
            &[
                r#"{"choices": [{"index": 0, "delta": {"content": "recovered"}, "finish_reason": "stop"}]}"#,
                "[DONE]",
            ],
            End::Clean,
        ),
    }
}

fn stream_first_chunk(provider: &str) -> &'static str {
    match provider {
        "gemini" => {
            r#"{"candidates": [{"content": {"parts": [{"text": "half an ans"}], "role": "model"}}]}"#
        }
        _ => r#"{"choices": [{"index": 0, "delta": {"content": "half an ans"}}]}"#,
    }
}

/// The texts of the user turns a request sent, in order.
fn user_texts(provider: &str, body: &Value) -> Vec<String> {
    match provider {
        "gemini" => body["contents"]
            .as_array()
            .unwrap()
            .iter()
            .map(parts_text)
            .collect(),
        _ => body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] != "system")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_broken_mid_answer_stores_the_error_and_the_session_goes_on() {
    for provider in ["gemini", "openai"] {
        let server = Server::start(move |n| match n {
            0 => sse(&[stream_first_chunk(provider)], End::Drop),
            _ => stream_ok(provider),
        })
        .await;
        let dir = common::write_files(&[("flow.yaml", &workflow(provider, &server.base))]);
        let (code, printed) = run(dir.path(), &["--stream"], "hi");
        assert_eq!(code, 1, "{provider}: a failed run");
        assert_eq!(printed.len(), 2, "{provider}: {printed:?}");
        assert_eq!(printed[0]["partial"], true);
        assert_eq!(text_of(&printed[0]), "half an ans");
        assert_eq!(printed[1]["errorCode"], "STREAM_BROKEN", "{provider}");
        // The partial chunk was shown, never stored; the error event is.
        let events = stored(dir.path());
        assert_eq!(events.len(), 2, "{provider}: {events:?}");
        assert_eq!(events[0]["author"], "user");
        assert_eq!(events[1], printed[1]);
        assert_eq!(
            server.received().len(),
            1,
            "{provider}: a started stream is not retried"
        );

        let (code, printed) = run(dir.path(), &["--stream"], "again");
        assert_eq!(code, 0, "{provider}: {printed:?}");
        assert_eq!(text_of(printed.last().unwrap()), "recovered");
        let sent = &server.received()[1].body;
        assert_eq!(
            user_texts(provider, sent),
            ["hi", "again"],
            "{provider}: the broken answer is not part of the history"
        );
        let events = stored(dir.path());
        let authors: Vec<&str> = events
            .iter()
            .map(|e| e["author"].as_str().unwrap())
            .collect();
        assert_eq!(authors, ["user", "solo", "user", "solo"], "{provider}");
        assert_eq!(
            events[3]["actions"]["stateDelta"],
            json!({"answer": "recovered"})
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_storm_ends_the_run_with_one_stored_error() {
    for provider in ["gemini", "openai"] {
        let server = Server::start(|_| {
            json_with(
                429,
                &[("retry-after", "0")],
                json!({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}),
            )
        })
        .await;
        let dir = common::write_files(&[("flow.yaml", &workflow(provider, &server.base))]);
        let (code, printed) = run(dir.path(), &[], "hi");
        assert_eq!(code, 1, "{provider}");
        assert_eq!(printed.len(), 1, "{provider}: {printed:?}");
        assert_eq!(printed[0]["errorCode"], "HTTP_429");
        let message = printed[0]["errorMessage"].as_str().unwrap();
        assert!(message.contains("after 3 attempts"), "{message}");
        assert!(!message.contains("test-key-0123456789"), "{message}");
        assert_eq!(server.received().len(), 3, "{provider}");
        let events = stored(dir.path());
        assert_eq!(events.len(), 2, "{provider}: {events:?}");
        assert_eq!(events[1], printed[0]);
        assert!(events.iter().all(|e| {
            e["actions"]["stateDelta"]
                .as_object()
                .is_none_or(|d| d.is_empty())
        }));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_run_answers_a_call_the_crash_left_without_response() {
    let server = Server::start(|n| match n {
        0 => json(
            200,
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "tool_calls": [{"id": "call_nap", "type": "function",
                "function": {"name": "nap", "arguments": "{\"seconds\": \"5\"}"}}]}}]}),
        ),
        _ => json(
            200,
            json!({"choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "recovered"}}]}),
        ),
    })
    .await;
    let dir = common::write_files(&[("flow.yaml", &workflow("openai", &server.base))]);
    // The model calls `nap`; the process dies while the tool runs.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("adk-flow"))
        .current_dir(dir.path())
        .env_remove("ADK_FLOW_DB")
        .env("TEST_PROVIDER_KEY", "test-key-0123456789")
        .args([
            "run",
            "flow.yaml",
            "--session",
            "s",
            "--json",
            "--allow-commands",
            "-m",
            "go",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = Instant::now();
    let call: Value = serde_json::from_str(&out.next().unwrap().unwrap()).unwrap();
    assert_eq!(call["content"]["parts"][0]["functionCall"]["name"], "nap");
    assert!(started.elapsed() < Duration::from_secs(30));
    child.kill().unwrap(); // SIGKILL, inside the tool
    child.wait().unwrap();
    let events = stored(dir.path());
    assert_eq!(
        events.last().unwrap(),
        &call,
        "the session ends with the unanswered call"
    );

    let (code, printed) = run(dir.path(), &[], "are you there?");
    assert_eq!(code, 0, "{printed:?}");
    assert_eq!(text_of(printed.last().unwrap()), "recovered");
    let messages = server.received()[1].body["messages"].clone();
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "user"]);
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_nap");
    assert_eq!(messages[3]["tool_call_id"], "call_nap");
    let result: Value = serde_json::from_str(messages[3]["content"].as_str().unwrap()).unwrap();
    assert!(
        result["error"].as_str().unwrap().contains("interrupted"),
        "{result}"
    );
    assert_eq!(messages[4]["content"], "are you there?");
}
