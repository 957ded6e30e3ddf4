//! `Runner::run_live` through the library API, with the scripted model and with a plain
//! streaming model (the text live mode).

use adk_flow::event::{Content, Event, Role};
use adk_flow::live::{LiveRequestQueue, LiveRunConfig};
use adk_flow::model::scripted::{Script, ScriptedModel};
use adk_flow::model::{
    CallContext, FunctionDeclaration, LlmRequest, LlmResponse, Model, ModelError, ResponseStream,
};
use adk_flow::runner::{RunStream, Runner};
use adk_flow::session::{InMemorySessionService, SessionHandle};
use adk_flow::tool::{Tool, ToolContext, ToolError};
use adk_flow::tree::{AgentKind, AgentTree, IncludeContents, LlmAgent};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

fn script(replies: Value) -> Arc<dyn Model> {
    let s: Script = serde_json::from_value(json!({ "replies": replies })).unwrap();
    Arc::new(ScriptedModel::new(s).unwrap())
}

fn llm(model: &Arc<dyn Model>, tools: Vec<Arc<dyn Tool>>) -> AgentKind {
    AgentKind::Llm(Box::new(LlmAgent {
        model: Arc::clone(model),
        model_name: "m".into(),
        instruction: "help".into(),
        static_instruction: None,
        tools,
        output_key: None,
        output_schema: None,
        input_schema: None,
        include_contents: IncludeContents::Default,
        disallow_transfer_to_parent: false,
        disallow_transfer_to_peers: false,
        generate_content_config: None,
    }))
}

async fn start(tree: AgentTree) -> (Runner, SessionHandle) {
    let runner = Runner::new(Arc::new(tree), Arc::new(InMemorySessionService::new()));
    let session = runner
        .create_session("u", Some("s"), Default::default())
        .await
        .unwrap();
    (runner, session)
}

fn text_config() -> LiveRunConfig {
    LiveRunConfig {
        response_modalities: vec![adk_flow::live::Modality::Text],
        ..LiveRunConfig::default()
    }
}

fn say(queue: &LiveRequestQueue, text: &str) {
    assert!(queue.send_content(Content::text(Role::User, text)));
}

/// `author: text` (partial chunks marked `~`), or `author: turnComplete` and the like.
fn short(e: &Event) -> String {
    let what = if let Some(t) = e.text() {
        t
    } else if let Some(c) = e.function_calls().next() {
        format!("call {}", c.name)
    } else if let Some(r) = e.function_responses().next() {
        format!("resp {} {}", r.name, r.response)
    } else if e.turn_complete == Some(true) {
        "turnComplete".into()
    } else if let Some(code) = e.error_code() {
        format!("error {code}")
    } else {
        "?".into()
    };
    let partial = if e.is_partial() { "~" } else { "" };
    format!("{}:{partial} {what}", e.author)
}

/// Reads events until one matches `until` (included), failing on errors or a stall.
async fn read_until(events: &mut RunStream, until: &str) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        let next = tokio::time::timeout(Duration::from_secs(10), events.next())
            .await
            .unwrap_or_else(|_| panic!("stalled waiting for {until}; got {out:?}"));
        let e = next.unwrap_or_else(|| panic!("ended before {until}; got {out:?}"));
        let line = short(&e.unwrap());
        let done = line == until;
        out.push(line);
        if done {
            return out;
        }
    }
}

async fn rest(mut events: RunStream) -> (Vec<String>, Option<String>) {
    let mut out = Vec::new();
    while let Some(item) = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("the run ends")
    {
        match item {
            Ok(e) => out.push(short(&e)),
            Err(err) => return (out, Some(err.code().to_string())),
        }
    }
    (out, None)
}

#[tokio::test]
async fn events_stream_while_the_queue_is_open_under_one_invocation_id() {
    let model = script(json!({"a": [
        {"text": "one two", "chunks": ["one", " two"]},
        {"text": "three"}
    ]}));
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, vec![]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    let mut events = runner.run_live(session.clone(), &queue, text_config());
    // A clone sends from another task; the first reply arrives before anything else is sent.
    let sender = queue.clone();
    tokio::spawn(async move { say(&sender, "hi") });
    let first = read_until(&mut events, "a: turnComplete").await;
    assert_eq!(
        first,
        ["a:~ one", "a:~  two", "a: one two", "a: turnComplete"]
    );
    say(&queue, "more");
    assert_eq!(
        read_until(&mut events, "a: turnComplete").await,
        ["a:~ three", "a: three", "a: turnComplete"]
    );
    queue.close();
    assert_eq!(rest(events).await, (vec![], None));
    let s = session.lock();
    let stored: Vec<String> = s.events.iter().map(|e| short(e)).collect();
    assert_eq!(
        stored,
        [
            "user: hi",
            "a: one two",
            "a: turnComplete",
            "user: more",
            "a: three",
            "a: turnComplete"
        ]
    );
    let ids: std::collections::HashSet<&str> = s.events.iter().map(|e| &*e.invocation_id).collect();
    assert_eq!(ids.len(), 1, "one invocation id for the whole live run");
}

#[tokio::test]
async fn each_event_is_committed_before_the_next_is_produced() {
    let model = script(json!({"a": [{"text": "x", "chunks": ["x"]}]}));
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, vec![]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    let mut events = runner.run_live(session.clone(), &queue, text_config());
    say(&queue, "hi");
    queue.close();
    while let Some(item) = events.next().await {
        let e = item.unwrap();
        if e.is_partial() {
            assert!(!session.lock().events.iter().any(|s| s.id == e.id));
        } else {
            assert_eq!(session.lock().events.last().unwrap().id, e.id);
        }
    }
}

#[tokio::test]
async fn a_queue_feeds_one_run_only() {
    let model = script(json!({}));
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, vec![]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    let _first = runner.run_live(session.clone(), &queue, text_config());
    let second = runner.run_live(session, &queue, text_config());
    let (events, err) = rest(second).await;
    assert_eq!(err.as_deref(), Some("LIVE_QUEUE_TAKEN"));
    assert_eq!(events, ["adk-flow: error LIVE_QUEUE_TAKEN"]);
}

#[tokio::test]
async fn input_sent_during_a_transfer_reaches_the_next_agent() {
    let model = script(json!({
        "desk": [{"function_call": {"name": "transfer_to_agent", "args": {"agent_name": "orders"}}}],
        "orders": [{"text": "Order 7 ships tomorrow."}, {"text": "You're welcome."}]
    }));
    let mut tree = AgentTree::new();
    let root = tree.add(None, "desk", "", llm(&model, vec![]));
    tree.add(Some(root), "orders", "orders", llm(&model, vec![]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    // Everything is sent at once, before the handover happens.
    say(&queue, "where is order 7?");
    say(&queue, "thanks");
    queue.close();
    let (events, err) = rest(runner.run_live(session.clone(), &queue, text_config())).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        [
            "desk: call transfer_to_agent",
            "desk: resp transfer_to_agent {\"result\":null}",
            "orders:~ Order 7 ships tomorrow.",
            "orders: Order 7 ships tomorrow.",
            "orders: turnComplete",
            "orders:~ You're welcome.",
            "orders: You're welcome.",
            "orders: turnComplete"
        ]
    );
    let stored: Vec<String> = session.lock().events.iter().map(|e| short(e)).collect();
    assert!(stored.contains(&"user: thanks".to_owned()), "{stored:?}");
}

/// A tool that waits until `n` calls of it run at once.
struct Rendezvous(Arc<tokio::sync::Barrier>);

#[async_trait]
impl Tool for Rendezvous {
    fn name(&self) -> &str {
        "meet"
    }
    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: "meet".into(),
            description: "waits for the others".into(),
            parameters: None,
        }
    }
    async fn run(&self, args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        self.0.wait().await;
        Ok(json!({"met": args["who"]}))
    }
}

#[tokio::test]
async fn the_calls_of_one_message_run_concurrently_and_answer_the_model() {
    let model = script(json!({"a": [
        {"function_calls": [
            {"name": "meet", "args": {"who": 1}},
            {"name": "meet", "args": {"who": 2}}
        ]},
        {"text": "both met"}
    ]}));
    let tool: Arc<dyn Tool> = Arc::new(Rendezvous(Arc::new(tokio::sync::Barrier::new(2))));
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, vec![tool]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    say(&queue, "meet");
    queue.close();
    let (events, err) = rest(runner.run_live(session, &queue, text_config())).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        [
            "a: call meet",
            "a: resp meet {\"met\":1}",
            "a: turnComplete",
            "a:~ both met",
            "a: both met",
            "a: turnComplete"
        ]
    );
}

#[tokio::test]
async fn loop_and_parallel_agents_are_refused_before_anything_connects() {
    let model = script(json!({"a": [{"text": "never"}]}));
    let mut tree = AgentTree::new();
    let root = tree.add(
        None,
        "steps",
        "",
        AgentKind::Sequential {
            task_completed: false,
        },
    );
    let looped = tree.add(
        Some(root),
        "again",
        "",
        AgentKind::Loop {
            max_iterations: Some(2),
        },
    );
    tree.add(Some(looped), "a", "", llm(&model, vec![]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    say(&queue, "hi");
    let (events, err) = rest(runner.run_live(session, &queue, text_config())).await;
    assert_eq!(err.as_deref(), Some("LIVE_UNSUPPORTED_AGENT"));
    assert_eq!(events, ["again: error LIVE_UNSUPPORTED_AGENT"]);
}

#[tokio::test]
async fn max_llm_calls_bounds_the_model_turns() {
    let model = script(json!({"a": [{"text": "one"}, {"text": "two"}]}));
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, vec![]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    say(&queue, "1");
    say(&queue, "2");
    let config = LiveRunConfig {
        max_llm_calls: 1,
        ..text_config()
    };
    let (events, err) = rest(runner.run_live(session, &queue, config)).await;
    assert_eq!(err.as_deref(), Some("LLM_CALLS_LIMIT_EXCEEDED"));
    assert_eq!(
        events,
        [
            "a:~ one",
            "a: one",
            "a: turnComplete",
            "a: error LLM_CALLS_LIMIT_EXCEEDED"
        ]
    );
}

#[tokio::test]
async fn an_agent_without_replies_left_ends_the_run() {
    let model = script(json!({"a": []}));
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, vec![]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    say(&queue, "hi");
    let (events, err) = rest(runner.run_live(session.clone(), &queue, text_config())).await;
    assert_eq!(err.as_deref(), Some("SCRIPT_EXHAUSTED"));
    assert_eq!(events, ["a: error SCRIPT_EXHAUSTED"]);
    // The user's content reached the model, so it is stored; the error event too.
    let stored: Vec<String> = session.lock().events.iter().map(|e| short(e)).collect();
    assert_eq!(stored, ["user: hi", "a: error SCRIPT_EXHAUSTED"]);
}

#[tokio::test]
async fn the_run_ends_at_its_maximum_duration() {
    let model = script(json!({"a": []}));
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, vec![]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    let config = LiveRunConfig {
        max_duration: Some(Duration::from_millis(100)),
        ..text_config()
    };
    // The queue stays open: only the duration limit can end this run.
    let (events, err) = rest(runner.run_live(session, &queue, config)).await;
    assert_eq!((events, err), (vec![], None));
    assert!(!queue.send_content(Content::text(Role::User, "late")));
}

/// A provider without a live API: streams two chunks, then the aggregate.
struct Streaming;

#[async_trait]
impl Model for Streaming {
    async fn generate(
        &self,
        request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError> {
        assert!(call.stream, "the text live mode streams");
        let heard = request
            .contents
            .last()
            .and_then(|c| c.parts[0].text.clone());
        let reply = format!("you said {}", heard.unwrap_or_default());
        let (a, b) = reply.split_at(4);
        let chunk = |t: &str, partial| LlmResponse {
            content: Some(Content::text(Role::Model, t)),
            partial: Some(partial),
            ..LlmResponse::default()
        };
        Ok(Box::pin(futures::stream::iter([
            Ok(chunk(a, true)),
            Ok(chunk(b, true)),
            Ok(chunk(&reply, false)),
        ])))
    }
}

#[tokio::test]
async fn any_streaming_model_gets_a_text_live_mode() {
    let model: Arc<dyn Model> = Arc::new(Streaming);
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, vec![]));
    let (runner, session) = start(tree).await;
    let queue = LiveRequestQueue::new();
    say(&queue, "hi");
    say(&queue, "bye");
    queue.close();
    let (events, err) = rest(runner.run_live(session, &queue, text_config())).await;
    assert_eq!(err, None);
    assert_eq!(
        events,
        [
            "a:~ you ",
            "a:~ said hi",
            "a: you said hi",
            "a: turnComplete",
            "a:~ you ",
            "a:~ said bye",
            "a: you said bye",
            "a: turnComplete"
        ]
    );
}
