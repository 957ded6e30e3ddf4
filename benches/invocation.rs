//! CPU cost of one invocation through the whole runtime (Runner, LLM flow, sessions),
//! with the scripted model and the in-memory session store, so nothing but adk-flow is
//! measured. Run with `cargo bench --bench invocation`.
//!
//! Scenarios: a single agent answering text; a transfer to a sub-agent that calls a tool
//! and answers (5 events). Reports mean wall time per invocation over many iterations on
//! one thread.

use adk_flow::event::StateMap;
use adk_flow::invocation::RunConfig;
use adk_flow::model::Model;
use adk_flow::model::scripted::{Script, ScriptedModel};
use adk_flow::runner::{Runner, Turn};
use adk_flow::session::{InMemorySessionService, SessionService};
use adk_flow::tool::builtin::ExitLoop;
use adk_flow::tree::{AgentKind, AgentTree, IncludeContents, LlmAgent};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

fn llm(
    model: &Arc<dyn Model>,
    instruction: &str,
    tools: Vec<Arc<dyn adk_flow::tool::Tool>>,
) -> AgentKind {
    AgentKind::Llm(Box::new(LlmAgent {
        model: Arc::clone(model),
        model_name: "m".into(),
        instruction: instruction.into(),
        static_instruction: None,
        tools,
        output_key: Some("out".into()),
        output_schema: None,
        input_schema: None,
        include_contents: IncludeContents::Default,
        disallow_transfer_to_parent: false,
        disallow_transfer_to_peers: false,
        generate_content_config: None,
    }))
}

fn script(iterations: usize, transfer: bool) -> Arc<dyn Model> {
    let mut replies = serde_json::Map::new();
    if transfer {
        let desk: Vec<_> = (0..iterations)
            .map(|_| json!({"function_call": {"name": "transfer_to_agent", "args": {"agent_name": "worker"}}}))
            .collect();
        let worker: Vec<_> = (0..iterations)
            .flat_map(|_| [json!({"function_call": {"name": "exit_loop", "args": {}}})])
            .collect();
        replies.insert("desk".into(), json!(desk));
        replies.insert("worker".into(), json!(worker));
    } else {
        let desk: Vec<_> = (0..iterations)
            .map(|i| json!({"text": format!("answer {i}")}))
            .collect();
        replies.insert("desk".into(), json!(desk));
    }
    let s: Script = serde_json::from_value(json!({ "replies": replies })).unwrap();
    Arc::new(ScriptedModel::new(s).unwrap())
}

async fn bench(name: &str, iterations: usize, transfer: bool) {
    let model = script(iterations, transfer);
    let mut tree = AgentTree::new();
    let root = tree.add(
        None,
        "desk",
        "Front desk.",
        llm(&model, "Route {topic?}.", vec![]),
    );
    if transfer {
        tree.add(
            Some(root),
            "worker",
            "Works.",
            llm(&model, "Work.", vec![Arc::new(ExitLoop)]),
        );
    }
    let tree = Arc::new(tree);
    let sessions: Arc<dyn SessionService> = Arc::new(InMemorySessionService::new());
    let runner = Runner::new(tree, Arc::clone(&sessions));
    let mut events = 0usize;
    let started = Instant::now();
    for _ in 0..iterations {
        // A fresh session per invocation: history does not grow across iterations.
        let session = sessions
            .create_session("app", "u", None, StateMap::new())
            .await
            .unwrap();
        let mut turn = Turn::text("hello");
        turn.config = RunConfig::default();
        let mut stream = runner.run(session, turn);
        while let Some(e) = stream.next().await {
            e.unwrap();
            events += 1;
        }
    }
    let per = started.elapsed() / iterations as u32;
    println!(
        "{name:<28} {:>8.1} µs/invocation  {:>5.1} events/invocation",
        per.as_secs_f64() * 1e6,
        events as f64 / iterations as f64
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        bench("text answer (1 event)", 20_000, false).await;
        bench("transfer + tool (4 events)", 20_000, true).await;
    });
}
