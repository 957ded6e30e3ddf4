//! Gemini Live against a local websocket server of our own that speaks BidiGenerateContent:
//! the setup handshake, streamed turns, tool calls, cancellation, interruption, goAway with
//! session resumption, and no reconnect once the client closed.

use adk_flow::event::{Content, Event, Role};
use adk_flow::live::{LiveRequestQueue, LiveRunConfig, Modality};
use adk_flow::model::provider::{Provider, ProviderConfig, Secret, build};
use adk_flow::model::{FunctionDeclaration, Model};
use adk_flow::runner::Runner;
use adk_flow::session::InMemorySessionService;
use adk_flow::tool::{Tool, ToolContext, ToolError};
use adk_flow::tree::{AgentKind, AgentTree, IncludeContents, LlmAgent};
use async_trait::async_trait;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};

pub(super) type Ws = WebSocketStream<TcpStream>;

const PATH: &str = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent";

/// Accepts one connection, checking the path and the key header.
pub(super) async fn accept(listener: &TcpListener) -> Ws {
    let (tcp, _) = listener.accept().await.unwrap();
    tokio_tungstenite::accept_hdr_async(tcp, check_handshake)
        .await
        .unwrap()
}

#[expect(
    clippy::result_large_err,
    reason = "the signature tungstenite's handshake callback has"
)]
fn check_handshake(req: &Request, resp: Response) -> Result<Response, ErrorResponse> {
    assert_eq!(req.uri().path(), PATH);
    assert_eq!(req.headers()["x-goog-api-key"], "test-key");
    Ok(resp)
}

/// The next JSON message from the client (text or binary frame).
pub(super) async fn next(ws: &mut Ws) -> Option<Value> {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .ok()??
        {
            Ok(Message::Text(t)) => return Some(serde_json::from_str(t.as_str()).unwrap()),
            Ok(Message::Binary(b)) => return Some(serde_json::from_slice(&b).unwrap()),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

pub(super) async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.unwrap();
}

/// Reads the setup and completes the handshake; returns the setup.
pub(super) async fn handshake(ws: &mut Ws) -> Value {
    let setup = next(ws).await.expect("a setup message");
    send(ws, json!({"setupComplete": {}})).await;
    setup["setup"].clone()
}

pub(super) fn model(port: u16) -> Arc<dyn Model> {
    let mut config = ProviderConfig::new(Provider::Gemini, "gemini-live-test");
    config.base_url = Some(format!("http://127.0.0.1:{port}"));
    config.api_key = Some(Secret::new("test-key"));
    build(&config).unwrap()
}

pub(super) fn tree(model: &Arc<dyn Model>, tools: Vec<Arc<dyn Tool>>) -> AgentTree {
    let mut tree = AgentTree::new();
    tree.add(
        None,
        "talker",
        "talks",
        AgentKind::Llm(Box::new(LlmAgent {
            model: Arc::clone(model),
            model_name: "gemini-live-test".into(),
            instruction: "Be brief.".into(),
            static_instruction: None,
            tools,
            output_key: None,
            output_schema: None,
            input_schema: None,
            include_contents: IncludeContents::Default,
            disallow_transfer_to_parent: false,
            disallow_transfer_to_peers: false,
            generate_content_config: None,
        })),
    );
    tree
}

struct Lookup;

#[async_trait]
impl Tool for Lookup {
    fn name(&self) -> &str {
        "lookup"
    }
    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: "lookup".into(),
            description: "looks up an order".into(),
            parameters: Some(json!({"type": "object", "properties": {"id": {"type": "integer"}}})),
        }
    }
    async fn run(&self, args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        Ok(json!({"order": args["id"], "status": "shipped"}))
    }
}

/// A tool that never finishes; records whether it was stopped.
struct Slow(Arc<AtomicBool>);

struct SetOnDrop(Arc<AtomicBool>);
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[async_trait]
impl Tool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: "slow".into(),
            description: "takes forever".into(),
            parameters: None,
        }
    }
    async fn run(&self, _args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        let _stopped = SetOnDrop(Arc::clone(&self.0));
        std::future::pending::<()>().await;
        Ok(json!({}))
    }
}

fn text_config() -> LiveRunConfig {
    LiveRunConfig {
        response_modalities: vec![Modality::Text],
        ..LiveRunConfig::default()
    }
}

fn short(e: &Event) -> String {
    let mut s = format!("{}:", e.author);
    if e.is_partial() {
        s.push('~');
    }
    if let Some(t) = e.text() {
        s.push_str(&format!(" {t}"));
    }
    if let Some(c) = e.function_calls().next() {
        s.push_str(&format!(" call {} {}", c.name, c.args));
    }
    if let Some(r) = e.function_responses().next() {
        s.push_str(&format!(" resp {} {}", r.name, r.response));
    }
    if e.interrupted == Some(true) {
        s.push_str(" interrupted");
    }
    if e.turn_complete == Some(true) {
        s.push_str(" turnComplete");
    }
    if let Some(u) = &e.meta().usage_metadata {
        s.push_str(&format!(" usage {}", u.total_token_count.unwrap_or(0)));
    }
    if let Some(t) = &e.meta().input_transcription {
        s.push_str(&format!(" heard {:?} {:?}", t.text, t.finished));
    }
    if let Some(u) = &e.meta().live_session_resumption_update {
        s.push_str(&format!(" resumption {u}"));
    }
    if let Some(code) = e.error_code() {
        s.push_str(&format!(" error {code}"));
    }
    s
}

/// Runs live until the end; the client closes the queue when the `nth` event `close_at`
/// arrives (a realtime client closes when it has heard what it waited for).
async fn run(
    tree: AgentTree,
    queue: &LiveRequestQueue,
    config: LiveRunConfig,
    close_at: (&str, usize),
) -> (Vec<String>, Vec<String>, Option<String>) {
    let runner = Runner::new(Arc::new(tree), Arc::new(InMemorySessionService::new()));
    let session = runner
        .create_session("u", Some("s"), Default::default())
        .await
        .unwrap();
    let mut events = runner.run_live(session.clone(), queue, config);
    let mut out = Vec::new();
    let mut err = None;
    while let Some(item) = tokio::time::timeout(Duration::from_secs(20), events.next())
        .await
        .expect("the live run ends")
    {
        match item {
            Ok(e) => {
                out.push(short(&e));
                if out.iter().filter(|l| *l == close_at.0).count() == close_at.1 {
                    queue.close();
                }
            }
            Err(e) => err = Some(e.code().to_string()),
        }
    }
    let stored = session.lock().events.iter().map(|e| short(e)).collect();
    (out, stored, err)
}

#[tokio::test]
async fn a_session_streams_text_runs_tools_and_marks_interruptions() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let queue = LiveRequestQueue::new();
    let client = queue.clone();
    let server = tokio::spawn(async move {
        let mut ws = accept(&listener).await;
        let setup = handshake(&mut ws).await;
        assert_eq!(setup["model"], "models/gemini-live-test");
        assert_eq!(
            setup["generationConfig"],
            json!({"responseModalities": ["TEXT"]})
        );
        let si = setup["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap();
        assert!(si.starts_with("Be brief."), "{si}");
        assert!(si.contains("Your internal name is \"talker\""), "{si}");
        assert_eq!(
            setup["tools"][0]["functionDeclarations"][0]["name"], "lookup",
            "{setup}"
        );
        assert_eq!(setup["inputAudioTranscription"], json!({}));
        // Nothing to say until the user speaks: a fresh session sends no history.
        client.send_content(Content::text(Role::User, "where is order 7?"));
        let turn = next(&mut ws).await.unwrap();
        assert_eq!(
            turn,
            json!({"clientContent": {"turns": [{"parts": [{"text": "where is order 7?"}], "role": "user"}], "turnComplete": true}})
        );
        send(&mut ws, json!({"serverContent": {"inputTranscription": {"text": "where is order 7?", "finished": true}}})).await;
        send(
            &mut ws,
            json!({"serverContent": {"modelTurn": {"parts": [{"text": "Let me "}]}}}),
        )
        .await;
        send(
            &mut ws,
            json!({"serverContent": {"modelTurn": {"parts": [{"text": "check."}]}}}),
        )
        .await;
        send(&mut ws, json!({"toolCall": {"functionCalls": [{"id": "fc-1", "name": "lookup", "args": {"id": 7}}]}})).await;
        let answer = next(&mut ws).await.unwrap();
        assert_eq!(
            answer,
            json!({"toolResponse": {"functionResponses": [{"id": "fc-1", "name": "lookup", "response": {"order": 7, "status": "shipped"}}]}})
        );
        send(
            &mut ws,
            json!({"serverContent": {"modelTurn": {"parts": [{"text": "It shipped."}]}}}),
        )
        .await;
        send(&mut ws, json!({"serverContent": {"turnComplete": true}})).await;
        send(&mut ws, json!({"usageMetadata": {"promptTokenCount": 10, "responseTokenCount": 5, "totalTokenCount": 15}})).await;
        send(
            &mut ws,
            json!({"serverContent": {"modelTurn": {"parts": [{"text": "Anything"}]}}}),
        )
        .await;
        send(&mut ws, json!({"serverContent": {"interrupted": true}})).await;
        send(&mut ws, json!({"serverContent": {"interrupted": true}})).await;
        send(&mut ws, json!({"serverContent": {"turnComplete": true}})).await;
        // The client closes the socket; nothing else arrives.
        assert_eq!(next(&mut ws).await, None);
    });
    let (events, stored, err) = run(
        tree(&model(port), vec![Arc::new(Lookup)]),
        &queue,
        text_config(),
        ("talker: turnComplete", 2),
    )
    .await;
    server.await.unwrap();
    assert_eq!(err, None);
    assert_eq!(
        events,
        [
            "user:~ heard Some(\"where is order 7?\") Some(false)",
            "user: heard Some(\"where is order 7?\") Some(true)",
            "talker:~ Let me ",
            "talker:~ check.",
            "talker: Let me check.",
            "talker: call lookup {\"id\":7}",
            "talker: resp lookup {\"order\":7,\"status\":\"shipped\"}",
            "talker:~ It shipped.",
            "talker: It shipped.",
            "talker: turnComplete",
            "talker: usage 15",
            "talker:~ Anything",
            "talker: Anything interrupted",
            "talker: interrupted",
            "talker: turnComplete",
        ]
    );
    assert_eq!(
        stored,
        [
            "user: where is order 7?",
            "user: heard Some(\"where is order 7?\") Some(true)",
            "talker: Let me check.",
            "talker: call lookup {\"id\":7}",
            "talker: resp lookup {\"order\":7,\"status\":\"shipped\"}",
            "talker: It shipped.",
            "talker: turnComplete",
            "talker: usage 15",
            "talker: Anything interrupted",
            "talker: interrupted",
            "talker: turnComplete",
        ]
    );
}

#[tokio::test]
async fn a_cancelled_tool_call_is_stopped_and_gets_no_response() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let stopped = Arc::new(AtomicBool::new(false));
    let queue = LiveRequestQueue::new();
    let client = queue.clone();
    let server = tokio::spawn(async move {
        let mut ws = accept(&listener).await;
        handshake(&mut ws).await;
        client.send_content(Content::text(Role::User, "go"));
        next(&mut ws).await.unwrap();
        send(
            &mut ws,
            json!({"toolCall": {"functionCalls": [{"id": "fc-9", "name": "slow", "args": {}}]}}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        send(&mut ws, json!({"toolCallCancellation": {"ids": ["fc-9"]}})).await;
        send(&mut ws, json!({"serverContent": {"modelTurn": {"parts": [{"text": "Never mind."}]}, "turnComplete": true}})).await;
        // No response to the cancelled call: the next thing the client does is close.
        assert_eq!(next(&mut ws).await, None);
    });
    let tool = Arc::new(Slow(Arc::clone(&stopped)));
    let (events, _, err) = run(
        tree(&model(port), vec![tool]),
        &queue,
        text_config(),
        ("talker: turnComplete", 1),
    )
    .await;
    server.await.unwrap();
    assert_eq!(err, None);
    assert!(
        stopped.load(Ordering::SeqCst),
        "the cancelled tool was stopped"
    );
    assert_eq!(
        events,
        [
            "talker: call slow {}",
            "talker:~ Never mind.",
            "talker: Never mind.",
            "talker: turnComplete",
        ]
    );
}

#[tokio::test]
async fn go_away_reconnects_with_the_last_handle_and_never_after_close() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let queue = LiveRequestQueue::new();
    let client = queue.clone();
    let count = Arc::clone(&connections);
    let server = tokio::spawn(async move {
        let mut first = accept(&listener).await;
        count.fetch_add(1, Ordering::SeqCst);
        let setup = handshake(&mut first).await;
        assert_eq!(setup["sessionResumption"], json!({}));
        send(
            &mut first,
            json!({"sessionResumptionUpdate": {"newHandle": "h-1", "resumable": true}}),
        )
        .await;
        send(&mut first, json!({"goAway": {"timeLeft": "5s"}})).await;
        // The client comes back on its own, with the handle, before the old socket drops.
        let mut second = accept(&listener).await;
        count.fetch_add(1, Ordering::SeqCst);
        let setup = handshake(&mut second).await;
        assert_eq!(setup["sessionResumption"], json!({"handle": "h-1"}));
        client.send_content(Content::text(Role::User, "still there?"));
        let m = next(&mut second).await.unwrap();
        assert_eq!(
            m["clientContent"]["turns"][0]["parts"][0]["text"],
            "still there?"
        );
        send(&mut second, json!({"serverContent": {"modelTurn": {"parts": [{"text": "Yes."}]}, "turnComplete": true}})).await;
        assert_eq!(next(&mut second).await, None);
        // No reconnect after the client closed.
        let again = tokio::time::timeout(Duration::from_millis(500), listener.accept()).await;
        assert!(again.is_err(), "the client reconnected after closing");
    });
    let config = LiveRunConfig {
        session_resumption: true,
        ..text_config()
    };
    let (events, _, err) = run(
        tree(&model(port), vec![]),
        &queue,
        config,
        ("talker: turnComplete", 1),
    )
    .await;
    server.await.unwrap();
    assert_eq!(err, None);
    assert_eq!(connections.load(Ordering::SeqCst), 2);
    assert_eq!(
        events,
        [
            "talker: resumption {\"newHandle\":\"h-1\",\"resumable\":true}",
            "talker:~ Yes.",
            "talker: Yes.",
            "talker: turnComplete",
        ]
    );
}

#[tokio::test]
async fn a_dropped_connection_without_a_handle_ends_the_run_in_an_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let queue = LiveRequestQueue::new();
    let server = tokio::spawn(async move {
        let mut ws = accept(&listener).await;
        handshake(&mut ws).await;
        ws.close(Some(tokio_tungstenite::tungstenite::protocol::CloseFrame {
            code: tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode::Error,
            reason: "internal".into(),
        }))
        .await
        .unwrap();
    });
    let (events, _, err) = run(tree(&model(port), vec![]), &queue, text_config(), ("", 1)).await;
    server.await.unwrap();
    assert_eq!(err.as_deref(), Some("LIVE_CLOSED"));
    assert_eq!(events, ["talker: error LIVE_CLOSED"]);
}
