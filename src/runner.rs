//! The Runner: one user turn in, one stream of committed events out.
//!
//! For each turn it appends the user's message to the session, picks the agent that
//! answers (ADK's `_find_agent_to_run`), drives that agent's stream and, for every event,
//! commits it through the [`SessionService`] *before* yielding it and polling the agent
//! again. So agent N+1 always reads what agent N wrote. Partial events are yielded but never
//! committed. A [`RunError`] is reported as an error event (committed, then yielded), after
//! which the stream yields the error itself and ends.

use crate::agent::agent_tool::IsolatedRun;
use crate::agent::run_agent;
use crate::artifact::ArtifactService;
use crate::errors;
use crate::event::{
    Content, Event, FunctionResponse, Part, Role, StateMap, new_shared_invocation_id, user_author,
};
use crate::invocation::{InvocationContext, RunConfig, RunError};
use crate::memory::{AddSession, Memory};
use crate::session::{
    InMemorySessionService, Session, SessionError, SessionHandle, SessionKey, SessionService,
};
use crate::telemetry::{Span, TraceParent, Tracer};
use crate::tree::{AgentId, AgentTree};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::sync::Arc;

/// What the Runner yields: committed (or partial) events, then possibly the error that
/// ended the turn.
pub type RunStream = BoxStream<'static, Result<Arc<Event>, RunError>>;

/// Runs turns of one workflow against a session service.
#[derive(Clone)]
pub struct Runner {
    app_name: String,
    tree: Arc<AgentTree>,
    sessions: Arc<dyn SessionService>,
    artifacts: Option<Arc<dyn ArtifactService>>,
    memory: Option<Memory>,
    tracer: Tracer,
}

/// One user turn.
pub struct Turn {
    /// The user's message.
    pub message: Content,
    /// State changes committed with the user's event.
    pub state_delta: StateMap,
    /// Run settings.
    pub config: RunConfig,
}

impl Turn {
    /// The client's answer to the latest call to `tool` that waits for it (see
    /// [`pending_call`]), or `None` when no such call is waiting.
    pub fn answer(session: &Session, tool: &str, response: serde_json::Value) -> Option<Self> {
        let id = pending_call(session, tool)?;
        Some(Turn {
            message: Content::new(
                Role::User,
                vec![Part::function_response(FunctionResponse {
                    id: Some(id),
                    name: tool.to_owned(),
                    response: FunctionResponse::body(response),
                })],
            ),
            state_delta: StateMap::new(),
            config: RunConfig::default(),
        })
    }

    /// A text message with default settings.
    pub fn text(text: impl Into<String>) -> Self {
        Turn {
            message: Content::text(Role::User, text),
            state_delta: StateMap::new(),
            config: RunConfig::default(),
        }
    }
}

impl Runner {
    /// A runner for an agent tree; its app name is the root agent's name.
    pub fn new(tree: Arc<AgentTree>, sessions: Arc<dyn SessionService>) -> Self {
        Runner {
            app_name: tree.get(tree.root()).name.clone(),
            tree,
            sessions,
            artifacts: None,
            memory: None,
            tracer: Tracer::off(),
        }
    }

    /// The same runner recording each invocation's spans (`invocation` and everything
    /// under it) with `tracer`.
    pub fn with_tracer(mut self, tracer: Tracer) -> Self {
        self.tracer = tracer;
        self
    }

    /// The tracer its invocations are recorded with (off unless set).
    pub fn tracer(&self) -> &Tracer {
        &self.tracer
    }

    /// The same runner with a memory store for `load_memory`/`preload_memory`; with
    /// [`AddSession::AfterInvocation`] it adds each invocation's events to it.
    pub fn with_memory(mut self, memory: Memory) -> Self {
        self.memory = Some(memory);
        self
    }

    /// The memory store, if the runner has one.
    pub fn memory(&self) -> Option<&Memory> {
        self.memory.as_ref()
    }

    /// The artifact store, if the runner has one.
    pub fn artifacts(&self) -> Option<&Arc<dyn ArtifactService>> {
        self.artifacts.as_ref()
    }

    /// The same runner with an artifact store for tools and `{artifact.NAME}`.
    pub fn with_artifacts(mut self, artifacts: Arc<dyn ArtifactService>) -> Self {
        self.artifacts = Some(artifacts);
        self
    }

    /// The same runner storing its sessions under another app name.
    pub fn with_app_name(mut self, name: impl Into<String>) -> Self {
        self.app_name = name.into();
        self
    }

    /// The app name its sessions are stored under.
    pub fn app_name(&self) -> &str {
        &self.app_name
    }

    /// Creates a session of this app for `user`, with a fresh id when `id` is `None`.
    ///
    /// # Errors
    /// The id is taken, or the store fails.
    pub async fn create_session(
        &self,
        user: &str,
        id: Option<&str>,
        state: StateMap,
    ) -> Result<SessionHandle, SessionError> {
        self.sessions
            .create_session(&self.app_name, user, id, state)
            .await
    }

    /// The session `id` of this app and `user`, if it exists.
    ///
    /// # Errors
    /// The store fails.
    pub async fn get_session(
        &self,
        user: &str,
        id: &str,
    ) -> Result<Option<SessionHandle>, SessionError> {
        self.sessions.get_session(&self.app_name, user, id).await
    }

    /// The agent tree.
    pub fn tree(&self) -> &Arc<AgentTree> {
        &self.tree
    }

    /// The session service.
    pub fn sessions(&self) -> &Arc<dyn SessionService> {
        &self.sessions
    }

    /// Runs one turn in `session`. The user's event is committed but not yielded.
    pub fn run(&self, session: SessionHandle, turn: Turn) -> RunStream {
        self.run_under(session, turn, None)
    }

    /// [`Runner::run`], its `invocation` span a child of `parent` when given (an
    /// AgentTool's run inside its caller's trace), else the root of a new trace when the
    /// runner traces.
    pub fn run_under(
        &self,
        session: SessionHandle,
        turn: Turn,
        parent: Option<TraceParent>,
    ) -> RunStream {
        let tree = Arc::clone(&self.tree);
        let sessions = Arc::clone(&self.sessions);
        let artifacts = self.artifacts.clone();
        let memory = self.memory.clone();
        let tracer = self.tracer.clone();
        Box::pin(async_stream::stream! {
            let invocation_id = new_shared_invocation_id();
            tracing::debug!(invocation = %invocation_id, "invocation started");
            // ADK's root span: no attributes; ends after the last event (error included).
            let mut root = match &parent {
                Some(p) => Span::child(Some(p), || "invocation".to_owned()),
                None if tracer.is_on() => {
                    let id = session.lock().id.clone();
                    tracer.root("invocation", &id, None)
                }
                None => Span::none(),
            };
            session.begin_invocation();
            let first_event = session.lock().events.len();
            let user_content = Arc::new(turn.message);
            let mut user_event = Event::new(Arc::clone(&invocation_id), user_author());
            user_event.branch = response_branch(&session.lock(), &user_content);
            user_event.content = Some(Content::clone(&user_content));
            user_event.actions.state_delta = turn.state_delta.into();
            if matches!(tree.get(tree.root()).kind, crate::tree::AgentKind::Graph(_)) {
                // ADK 2 stores the user's message of a workflow app with an empty node path.
                user_event.node_info = Some(crate::event::NodeInfo::empty());
            }
            if let Err(e) = sessions.append_event(&session, user_event).await {
                yield Err(RunError::from(e));
                return;
            }
            let agent = find_agent_to_run(&tree, &session.lock());
            let ctx = InvocationContext::new(Arc::clone(&invocation_id), session.clone(), tree, turn.config)
                .with_artifacts(artifacts)
                .with_memory(memory.clone(), Some(user_content))
                .with_trace(root.as_parent());
            let mut events = run_agent(ctx, agent);
            let mut failure = None;
            while let Some(item) = events.next().await {
                match item {
                    Ok(event) => match sessions.append_shared(&session, event).await {
                        Ok(event) => yield Ok(event),
                        Err(e) => {
                            yield Err(RunError::from(e));
                            return;
                        }
                    },
                    Err(err) => {
                        failure = Some(err);
                        break;
                    }
                }
            }
            drop(events);
            if failure.is_none() {
                failure = remember(memory.as_ref(), &session, first_event).await.err();
            }
            session.end_invocation();
            if let Some(err) = failure {
                tracing::debug!(invocation = %invocation_id, error = %errors::chain(&err), "invocation failed");
                root.set_error(|| errors::chain(&err));
                if err.is_reported() {
                    yield Err(err);
                    return;
                }
                let mut event = Event::new(Arc::clone(&invocation_id), err.agent().unwrap_or("adk-flow"));
                // errors::chain also redacts the secrets of any URL in the message.
                event.set_error(Some(err.code().into()), Some(errors::chain(&err).into()));
                match sessions.append_event(&session, event).await {
                    Ok(event) => {
                        yield Ok(event);
                        yield Err(err);
                    }
                    // The failure is still reported, with why its event is missing.
                    Err(source) => yield Err(RunError::Unrecorded {
                        error: Box::new(err),
                        source,
                    }),
                }
            }
        })
    }
}

/// Runs the agents of AgentTools: each call is one turn in a fresh in-memory session of
/// its own (user `tmp_user`, as in ADK), with default run settings (ADK 2.13's `adk2`
/// when called from a workflow graph).
pub struct IsolatedRunner;

impl IsolatedRun for IsolatedRunner {
    fn run_isolated(
        &self,
        tree: Arc<AgentTree>,
        app: &str,
        state: StateMap,
        request: String,
        trace: Option<TraceParent>,
        adk2: bool,
    ) -> RunStream {
        // As in ADK, the inner run has a memory of its own, empty.
        let runner = Runner::new(tree, Arc::new(InMemorySessionService::new()))
            .with_app_name(app)
            .with_memory(Memory::scratch());
        Box::pin(async_stream::stream! {
            let session = match runner.create_session("tmp_user", None, state).await {
                Ok(s) => s,
                Err(e) => {
                    yield Err(RunError::from(e));
                    return;
                }
            };
            let mut turn = Turn::text(request);
            turn.config.adk2 = adk2;
            let mut events = runner.run_under(session, turn, trace);
            while let Some(item) = events.next().await {
                yield item;
            }
        })
    }
}

/// Adds the invocation's events (from index `first` on) to memory, when the app adds
/// sessions after each invocation.
pub(crate) async fn remember(
    memory: Option<&Memory>,
    session: &SessionHandle,
    first: usize,
) -> Result<(), RunError> {
    let Some(memory) = memory.filter(|m| m.policy().add_session == AddSession::AfterInvocation)
    else {
        return Ok(());
    };
    let (key, events) = {
        let s = session.lock();
        let key = SessionKey {
            app_name: s.app_name.clone(),
            user_id: s.user_id.clone(),
            session_id: s.id.clone(),
        };
        (key, s.events.get(first..).unwrap_or_default().to_vec())
    };
    memory
        .add_events(&key, &events)
        .await
        .map(|_| ())
        .map_err(RunError::Memory)
}

/// A function-response message continues on the branch of the call it answers.
fn response_branch(session: &Session, message: &Content) -> Option<Box<str>> {
    let ids: Vec<&str> = message
        .parts
        .iter()
        .filter_map(|p| p.function_response.as_ref()?.id.as_deref())
        .collect();
    if ids.is_empty() {
        return None;
    }
    session
        .events
        .iter()
        .rev()
        .find(|e| {
            e.function_calls()
                .any(|c| c.id.as_deref().is_some_and(|id| ids.contains(&id)))
        })
        .and_then(|e| e.branch.clone())
}

/// ADK's `_find_agent_to_run`: a function response goes to the agent that made the call;
/// otherwise the latest agent that may transfer back up the tree keeps the conversation;
/// otherwise the root answers.
pub fn find_agent_to_run(tree: &AgentTree, session: &Session) -> AgentId {
    let root = tree.root();
    // A workflow graph runs afresh from START every turn.
    if matches!(tree.get(root).kind, crate::tree::AgentKind::Graph(_)) {
        return root;
    }
    if let Some(last) = session.events.last() {
        let answered: Vec<&str> = last
            .function_responses()
            .filter_map(|r| r.id.as_deref())
            .collect();
        if !answered.is_empty() {
            let caller = session.events.iter().rev().skip(1).find(|e| {
                e.function_calls()
                    .any(|c| c.id.as_deref().is_some_and(|id| answered.contains(&id)))
            });
            if let Some(id) = caller.and_then(|e| tree.find(&e.author)) {
                return id;
            }
        }
    }
    for event in session.events.iter().rev() {
        if event.is_from_user()
            || event.actions.agent_state.is_some()
            || event.actions.end_of_agent.is_some()
        {
            continue;
        }
        if *event.author == *tree.get(root).name {
            return root;
        }
        let Some(id) = tree.find(&event.author) else {
            tracing::warn!(author = %event.author, "event from an agent not in the tree");
            continue;
        };
        if tree.is_transferable_across_tree(id) {
            return id;
        }
    }
    root
}

/// The id of the latest call to `tool` that waits for the client: a long-running call
/// with no function response after it.
pub fn pending_call(session: &Session, tool: &str) -> Option<String> {
    let answered = |id: &str| {
        session
            .events
            .iter()
            .any(|e| e.function_responses().any(|r| r.id.as_deref() == Some(id)))
    };
    session.events.iter().rev().find_map(|e| {
        let waiting = e.long_running_tool_ids.as_deref().unwrap_or_default();
        e.function_calls()
            .filter(|c| c.name == tool)
            .filter_map(|c| c.id.clone())
            .find(|id| waiting.contains(id) && !answered(id))
    })
}
