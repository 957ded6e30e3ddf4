//! The Runner through the library API: routing of function-response messages, state
//! scopes across sessions, and commit-before-resume.

use adk_flow::event::{Content, FunctionResponse, Part, Role, StateMap};
use adk_flow::invocation::RunConfig;
use adk_flow::model::scripted::{Script, ScriptedModel};
use adk_flow::model::{CallContext, LlmRequest, Model, ModelError, ResponseStream};
use adk_flow::runner::{Runner, Turn};
use adk_flow::session::{InMemorySessionService, SessionService};
use adk_flow::tree::{AgentKind, AgentTree, IncludeContents, LlmAgent};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::json;
use std::sync::{Arc, Mutex};

fn script(yaml_as_json: serde_json::Value) -> Arc<dyn Model> {
    let s: Script = serde_json::from_value(yaml_as_json).unwrap();
    Arc::new(ScriptedModel::new(s).unwrap())
}

fn llm(model: &Arc<dyn Model>, instruction: &str, output_key: Option<&str>) -> AgentKind {
    AgentKind::Llm(Box::new(LlmAgent {
        model: Arc::clone(model),
        model_name: "m".into(),
        instruction: instruction.into(),
        static_instruction: None,
        tools: vec![],
        output_key: output_key.map(str::to_owned),
        output_schema: None,
        input_schema: None,
        include_contents: IncludeContents::Default,
        disallow_transfer_to_parent: false,
        disallow_transfer_to_peers: false,
        generate_content_config: None,
    }))
}

async fn collect(
    runner: &Runner,
    session: &adk_flow::session::SessionHandle,
    turn: Turn,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut s = runner.run(session.clone(), turn);
    while let Some(item) = s.next().await {
        let e = item.unwrap();
        out.push(format!("{}: {}", e.author, e.text().unwrap_or_default()));
    }
    out
}

#[tokio::test]
async fn a_function_response_message_goes_back_to_the_caller() {
    let model = script(json!({"replies": {
        "root": [{"function_call": {"name": "transfer_to_agent", "args": {"agent_name": "worker"}}}],
        "worker": [
            {"function_call": {"name": "approve", "args": {}, "id": "call-1"}},
            {"text": "approved, paying"}
        ]
    }}));
    let mut tree = AgentTree::new();
    let root = tree.add(None, "root", "", llm(&model, "route", None));
    tree.add(Some(root), "worker", "does work", llm(&model, "work", None));
    let sessions = Arc::new(InMemorySessionService::new());
    let session = sessions
        .create_session("app", "u", None, StateMap::new())
        .await
        .unwrap();
    let runner = Runner::new(Arc::new(tree), sessions.clone());
    let first = collect(&runner, &session, Turn::text("pay me")).await;
    assert_eq!(first.len(), 5, "{first:?}"); // transfer call+resp, approve call+not-found resp, text
    // The client answers the call; the worker (its caller) resumes.
    let answer = Content::new(
        Role::User,
        vec![Part::function_response(FunctionResponse {
            id: Some("call-1".into()),
            name: "approve".into(),
            response: json!({"ok": true}),
        })],
    );
    let mut turn = Turn::text("");
    turn.message = answer;
    // The worker has no reply left, so its being asked proves where the turn went.
    let mut s = runner.run(session.clone(), turn);
    let event = s.next().await.unwrap().unwrap();
    assert_eq!(&*event.author, "worker");
    assert_eq!(event.error_code(), Some("SCRIPT_EXHAUSTED"));
}

#[tokio::test]
async fn app_and_user_state_reach_other_sessions() {
    let model = script(json!({"replies": {"a": [{"text": "gold"}, {"text": "again"}]}}));
    let mut tree = AgentTree::new();
    tree.add(
        None,
        "a",
        "",
        llm(
            &model,
            "tier={app:tier?} lang={user:lang?}",
            Some("app:tier"),
        ),
    );
    let sessions: Arc<dyn SessionService> = Arc::new(InMemorySessionService::new());
    let s1 = sessions
        .create_session(
            "app",
            "u1",
            None,
            json!({"user:lang": "fr"}).as_object().cloned().unwrap(),
        )
        .await
        .unwrap();
    let runner = Runner::new(Arc::new(tree), Arc::clone(&sessions));
    collect(&runner, &s1, Turn::text("hi")).await;
    let s2 = sessions
        .create_session("app", "u2", None, StateMap::new())
        .await
        .unwrap();
    assert_eq!(s2.get_state("app:tier"), Some(json!("gold")));
    assert_eq!(s2.get_state("user:lang"), None);
    let s3 = sessions
        .create_session("app", "u1", None, StateMap::new())
        .await
        .unwrap();
    assert_eq!(s3.get_state("user:lang"), Some(json!("fr")));
}

/// A model that records the state it saw when called, to prove commit-before-resume.
struct Peek {
    seen: Mutex<Vec<String>>,
    inner: Arc<dyn Model>,
}

#[async_trait]
impl Model for Peek {
    async fn generate(
        &self,
        request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError> {
        self.seen.lock().unwrap().push(
            request
                .system_instruction
                .as_deref()
                .cloned()
                .unwrap_or_default(),
        );
        self.inner.generate(request, call).await
    }
}

#[tokio::test]
async fn each_event_is_committed_before_the_next_agent_runs() {
    let inner = script(json!({"replies": {"a": [{"text": "A-out"}], "b": [{"text": "B-out"}]}}));
    let peek = Arc::new(Peek {
        seen: Mutex::new(vec![]),
        inner,
    });
    let model: Arc<dyn Model> = peek.clone();
    let mut tree = AgentTree::new();
    let seq = tree.add(
        None,
        "seq",
        "",
        AgentKind::Sequential {
            task_completed: false,
        },
    );
    tree.add(Some(seq), "a", "", llm(&model, "first", Some("x")));
    tree.add(Some(seq), "b", "", llm(&model, "x is {x}", None));
    let sessions: Arc<dyn SessionService> = Arc::new(InMemorySessionService::new());
    let s = sessions
        .create_session("app", "u", None, StateMap::new())
        .await
        .unwrap();
    let runner = Runner::new(Arc::new(tree), sessions);
    let mut turn = Turn::text("go");
    turn.config = RunConfig {
        stream: false,
        max_llm_calls: 10,
        ..RunConfig::default()
    };
    let got = collect(&runner, &s, turn).await;
    assert_eq!(got, vec!["a: A-out", "b: B-out"]);
    let seen = peek.seen.lock().unwrap().clone();
    assert!(seen[1].starts_with("x is A-out"), "{seen:?}");
    assert_eq!(s.lock().events.len(), 3, "user event plus two agent events");
}

#[tokio::test]
async fn the_llm_call_limit_ends_the_invocation() {
    let model = script(json!({"replies": {"a": [
        {"function_call": {"name": "nope", "args": {}}},
        {"function_call": {"name": "nope", "args": {}}},
        {"text": "never"}
    ]}}));
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, "x", None));
    let sessions: Arc<dyn SessionService> = Arc::new(InMemorySessionService::new());
    let s = sessions
        .create_session("app", "u", None, StateMap::new())
        .await
        .unwrap();
    let runner = Runner::new(Arc::new(tree), sessions);
    let mut turn = Turn::text("go");
    turn.config = RunConfig {
        stream: false,
        max_llm_calls: 2,
        ..RunConfig::default()
    };
    let mut stream = runner.run(s, turn);
    let mut codes = vec![];
    let mut ended_with_error = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(e) => codes.push(e.error_code().map(Box::<str>::from)),
            Err(_) => ended_with_error = true,
        }
    }
    assert!(ended_with_error);
    assert_eq!(
        codes.last().unwrap().as_deref(),
        Some("LLM_CALLS_LIMIT_EXCEEDED")
    );
}

/// A store that refuses to save error events.
struct NoErrorEvents(InMemorySessionService);

#[async_trait]
impl SessionService for NoErrorEvents {
    async fn create_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: Option<&str>,
        state: StateMap,
    ) -> Result<adk_flow::session::SessionHandle, adk_flow::session::SessionError> {
        self.0
            .create_session(app_name, user_id, session_id, state)
            .await
    }

    async fn get_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<Option<adk_flow::session::SessionHandle>, adk_flow::session::SessionError> {
        self.0.get_session(app_name, user_id, session_id).await
    }

    async fn list_sessions(
        &self,
        app_name: &str,
        user_id: &str,
    ) -> Result<Vec<String>, adk_flow::session::SessionError> {
        self.0.list_sessions(app_name, user_id).await
    }

    async fn delete_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<(), adk_flow::session::SessionError> {
        self.0.delete_session(app_name, user_id, session_id).await
    }

    async fn append_event(
        &self,
        session: &adk_flow::session::SessionHandle,
        event: adk_flow::event::Event,
    ) -> Result<Arc<adk_flow::event::Event>, adk_flow::session::SessionError> {
        if event.error_code().is_some() {
            return Err(adk_flow::session::SessionError::Stale {
                session_id: session.id(),
            });
        }
        self.0.append_event(session, event).await
    }
}

#[tokio::test]
async fn an_error_event_that_cannot_be_saved_is_reported() {
    let model = script(json!({"replies": {}}));
    let mut tree = AgentTree::new();
    tree.add(None, "a", "", llm(&model, "hi", None));
    let sessions = Arc::new(NoErrorEvents(InMemorySessionService::new()));
    let session = sessions
        .create_session("app", "u", None, StateMap::new())
        .await
        .unwrap();
    let runner = Runner::new(Arc::new(tree), sessions);
    let items: Vec<_> = runner.run(session, Turn::text("hi")).collect().await;
    assert_eq!(items.len(), 1, "{items:?}");
    let Err(err) = &items[0] else {
        panic!("expected the run to fail: {items:?}")
    };
    assert_eq!(err.code(), "SCRIPT_EXHAUSTED");
    let message = adk_flow::errors::chain(err);
    assert!(
        message.contains("no reply left for agent `a`")
            && message.contains("could not be saved")
            && message.contains("modified in storage"),
        "{message}"
    );
}
