//! Inference: one eval case played against a fresh runner of the app, in its own
//! session, turn by turn (or with the user simulator), with what each agent was told and
//! offered recorded per invocation (ADK's `app_details`).

use super::engine::{CaseModels, Target};
use super::invocations;
use super::simulator::Simulator;
use super::types::{EvalCase, Invocation};
use crate::app::RunnerOptions;
use crate::event::{Event, StateMap};
use crate::invocation::RunConfig;
use crate::model::{CallContext, LlmRequest, Model, ModelError, ResponseStream};
use crate::runner::{Runner, Turn};
use crate::session::{InMemorySessionService, SessionHandle, SessionService};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Records what each agent sends its model during an invocation (ADK's `app_details`).
#[derive(Default)]
struct Requests(Mutex<Map<String, Value>>);

impl Requests {
    fn take(&self) -> Value {
        let map = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        json!({ "agent_details": map })
    }
}

struct Recording {
    inner: Arc<dyn Model>,
    requests: Arc<Requests>,
}

#[async_trait]
impl Model for Recording {
    fn output_schema_with_tools(&self) -> bool {
        self.inner.output_schema_with_tools()
    }

    async fn generate(
        &self,
        request: &LlmRequest,
        call: CallContext<'_>,
    ) -> Result<ResponseStream, ModelError> {
        let tools: Vec<Value> = if request.tools.is_empty() {
            Vec::new()
        } else {
            vec![json!({ "function_declarations": request.tools })]
        };
        let details = json!({
            "name": call.agent_name,
            "instructions": request.system_instruction.clone().unwrap_or_default(),
            "tool_declarations": tools,
        });
        self.requests
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(call.agent_name.to_owned(), details);
        self.inner.generate(request, call).await
    }
}

/// What inference produced.
pub(super) struct Inference {
    pub(super) invocations: Vec<Invocation>,
    pub(super) session: SessionHandle,
    pub(super) user_id: String,
    pub(super) error: Option<String>,
}

async fn send(
    runner: &Runner,
    session: &SessionHandle,
    content: crate::event::Content,
    events: &mut Vec<Event>,
) -> Result<(), String> {
    let turn = Turn {
        message: content.clone(),
        state_delta: StateMap::new(),
        config: RunConfig::default(),
    };
    let mut stream = runner.run(session.clone(), turn);
    let mut first = true;
    while let Some(item) = stream.next().await {
        match item {
            Ok(e) => {
                if first {
                    // ADK's generator puts the user's message first, under the
                    // invocation id of the first event the runner yields.
                    let mut user = Event::new(e.invocation_id.clone(), crate::names::USER)
                        .with_content(content.clone());
                    user.timestamp = e.timestamp;
                    events.push(user);
                    first = false;
                }
                events.push((*e).clone());
            }
            Err(err) => return Err(crate::errors::chain(&err)),
        }
    }
    Ok(())
}

pub(super) async fn infer(
    target: &Target<'_>,
    models: &CaseModels<'_>,
    case: &EvalCase,
) -> Result<Inference, String> {
    let requests = Arc::new(Requests::default());
    let recorder = Arc::clone(&requests);
    let mut agents = models.agents.clone();
    let inner = agents.wrap.take();
    agents.wrap = Some(Arc::new(move |model: Arc<dyn Model>| -> Arc<dyn Model> {
        let model = match &inner {
            Some(w) => w(model),
            None => model,
        };
        Arc::new(Recording {
            inner: model,
            requests: Arc::clone(&recorder),
        })
    }));
    // Every case gets its own session service: `user:` and `app:` state cannot leak
    // from one case into the next (ADK shares one across the run).
    let sessions: Arc<dyn SessionService> = Arc::new(InMemorySessionService::new());
    let runner = target
        .app
        .runner_with(RunnerOptions {
            models: agents,
            tool_stubs: HashMap::new(),
            sessions: Arc::clone(&sessions),
            artifacts: Arc::new(crate::artifact::InMemoryArtifactService::new()),
            memory: Arc::new(crate::memory::InMemoryMemoryService::new()),
            tracer: Default::default(),
        })
        .map_err(|e| crate::errors::chain(&e))?;
    let (app_name, user_id) = match &case.session_input {
        Some(s) => (s.app_name.clone(), s.user_id.clone()),
        None => ("EvaluationGenerator".to_owned(), "test_user_id".to_owned()),
    };
    let mut extra = case
        .session_input
        .as_ref()
        .map(|s| s.state.clone())
        .unwrap_or_default();
    extra.extend(target.extra_state.clone());
    let state = target.app.initial_state(extra);
    let session_id = format!("___eval___session___{}", uuid::Uuid::new_v4());
    let session = sessions
        .create_session(&app_name, &user_id, Some(&session_id), state)
        .await
        .map_err(|e| crate::errors::chain(&e))?;
    let mut events: Vec<Event> = Vec::new();
    let mut details: HashMap<String, Value> = HashMap::new();
    let mut error = None;
    let record = |events: &Vec<Event>, details: &mut HashMap<String, Value>| {
        if let Some(last) = events.last() {
            details.insert(last.invocation_id.to_string(), requests.take());
        }
    };
    if let Some(conversation) = &case.conversation {
        for inv in conversation {
            if let Err(e) = send(
                &runner,
                &session,
                inv.user_content.to_runtime(),
                &mut events,
            )
            .await
            {
                error = Some(e);
                break;
            }
            record(&events, &mut details);
        }
    } else if let Some(scenario) = &case.conversation_scenario {
        let mut simulator = Simulator::new(scenario, target.user_simulator.as_ref(), &models.user)?;
        loop {
            let next = match simulator.next_message(&events).await {
                Ok(Some(text)) => text,
                Ok(None) => break,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            };
            let content = crate::event::Content::text(crate::event::Role::User, next);
            if let Err(e) = send(&runner, &session, content, &mut events).await {
                error = Some(e);
                break;
            }
            record(&events, &mut details);
        }
    }
    let refs: Vec<&Event> = events.iter().collect();
    Ok(Inference {
        invocations: invocations::from_events(&refs, &details),
        session,
        user_id,
        error,
    })
}

/// An event's JSON with ADK's field names in snake_case, as ADK's result files hold
/// sessions; user data (state, arguments, responses) keeps its keys.
fn snake_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let data = matches!(
                        k.as_str(),
                        "stateDelta"
                            | "args"
                            | "response"
                            | "customMetadata"
                            | "artifactDelta"
                            | "agentState"
                    );
                    (
                        crate::pyrepr::snake(&k),
                        if data { v } else { snake_keys(v) },
                    )
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(snake_keys).collect()),
        other => other,
    }
}

pub(super) fn session_json(session: &SessionHandle) -> Value {
    let s = session.lock();
    json!({
        "id": s.id,
        "app_name": s.app_name,
        "user_id": s.user_id,
        "state": s.state,
        "events": s.events.iter().map(|e| snake_keys(serde_json::to_value(&**e).unwrap_or(Value::Null))).collect::<Vec<_>>(),
        "last_update_time": s.last_update_time,
    })
}
