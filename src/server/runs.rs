//! Running turns: `POST /run` and `POST /run_sse`.
//!
//! A turn runs in its own task, so that what the client does cannot tear it apart: the
//! task drives the Runner (which commits every event before yielding it) and forwards the
//! events through a small bounded channel to the response. A client that goes away only
//! closes the channel; the turn goes on to its end and everything it commits stays.
//!
//! Turns of one session take turns: a second run on a session that is running **waits**
//! for the first to end (the lock is taken before the response starts; a client that gives
//! up while waiting leaves the queue). On a store that several replicas share (PostgreSQL),
//! the turn is also held in the database, so replicas take turns too. Each run is bounded by `--run-timeout` and
//! `--max-llm-calls`. On shutdown no new run starts (503); running ones get a grace period,
//! then are cancelled at their next await point, which never splits a commit.

use super::apps::AppVersion;
use super::error::ApiError;
use super::wire::RunAgentRequest;
use crate::event::{Event, Role};
use crate::invocation::RunConfig;
use crate::runner::Turn;
use crate::session::{SessionGates, SessionHandle, SessionService, TurnLease};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{OwnedMutexGuard, mpsc};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

/// What a run sends to its response, in order.
pub enum Frame {
    /// A committed (or partial) event.
    Event(Arc<Event>),
    /// The run ended early: a run error, the timeout, or shutdown.
    Error(RunEnd),
}

/// Why a run ended before its agent did.
pub enum RunEnd {
    /// The Runner reported an error (its error event was committed and sent before).
    Failed(String),
    /// The run exceeded the per-run timeout.
    TimedOut(Duration),
    /// The server shut down during the run.
    ShutDown,
}

impl RunEnd {
    /// The message for the client.
    pub fn message(&self) -> String {
        match self {
            RunEnd::Failed(m) => m.clone(),
            RunEnd::TimedOut(limit) => format!(
                "the run took longer than {} s and was stopped; what it committed before is in the session",
                limit.as_secs()
            ),
            RunEnd::ShutDown => {
                "the server is shutting down; the run was stopped and what it committed is in the session".into()
            }
        }
    }
}

/// Limits that apply to every run.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    /// Wall-clock bound of one run.
    pub timeout: Duration,
    /// Model calls per invocation (0: unbounded).
    pub max_llm_calls: u32,
}

/// The runs of the server: session locks, the tasks, and shutdown.
pub struct Runs {
    gates: SessionGates,
    tasks: TaskTracker,
    /// Fired when shutdown starts: no new run.
    draining: CancellationToken,
    /// Fired when the grace period is over: running runs stop.
    cancel: CancellationToken,
    limits: RunLimits,
}

/// A session's turn, held until dropped. The lease (released first) is the replicas'
/// share of the turn, the gate this process's.
pub struct SessionTurn {
    _lease: Option<TurnLease>,
    _gate: OwnedMutexGuard<()>,
}

/// How many frames may wait for a slow client before the run pauses.
const CHANNEL: usize = 32;

impl Runs {
    /// No runs yet.
    pub fn new(limits: RunLimits) -> Self {
        Runs {
            gates: SessionGates::default(),
            tasks: TaskTracker::new(),
            draining: CancellationToken::new(),
            cancel: CancellationToken::new(),
            limits,
        }
    }

    /// Waits for the session's turn: first among the tasks of this process, then, on a
    /// store that several replicas share, in the store. Anything that changes a session
    /// outside a run (PATCH, DELETE) takes it too, so that it never races a run.
    ///
    /// # Errors
    /// 503 when the server starts shutting down while waiting, 500 when the store cannot
    /// hold the turn.
    pub async fn lock_session(
        &self,
        sessions: &dyn SessionService,
        app: &str,
        user: &str,
        session: &str,
    ) -> Result<SessionTurn, ApiError> {
        let gate = self.gates.get(app, user, session);
        let held = async {
            let gate = gate.lock_owned().await;
            let lease = sessions
                .hold_turn(app, user, session)
                .await
                .map_err(|e| ApiError::internal("cannot hold the session's turn", &e))?;
            Ok(SessionTurn {
                _lease: lease,
                _gate: gate,
            })
        };
        tokio::select! {
            turn = held => turn,
            () = self.draining.cancelled() => Err(shutting_down()),
        }
    }

    /// Starts a turn: waits for the session, loads it and spawns the run. The receiver
    /// yields the run's frames; dropping it does not stop the run.
    ///
    /// # Errors
    /// 400 for a message that cannot start a turn, 404 for an unknown session, 503 when
    /// shutting down, 500 when the session store fails.
    pub async fn start(
        &self,
        version: Arc<AppVersion>,
        sessions: &Arc<dyn SessionService>,
        req: RunAgentRequest,
    ) -> Result<mpsc::Receiver<Frame>, ApiError> {
        if self.draining.is_cancelled() {
            return Err(shutting_down());
        }
        let turn = self.turn(&req)?;
        let guard = self
            .lock_session(&**sessions, &req.app_name, &req.user_id, &req.session_id)
            .await?;
        let session = sessions
            .get_session(&req.app_name, &req.user_id, &req.session_id)
            .await
            .map_err(|e| ApiError::internal("cannot read the session", &e))?
            .ok_or_else(|| ApiError::NotFound(format!("Session not found: {}", req.session_id)))?;
        let (tx, rx) = mpsc::channel(CHANNEL);
        let cancel = self.cancel.clone();
        let timeout = self.limits.timeout;
        // Every log line of the run carries the app, user, session and (once the Runner
        // has made it) invocation ids.
        let span = tracing::info_span!(
            "run",
            app = %req.app_name,
            user = %req.user_id,
            session = %req.session_id,
            invocation = tracing::field::Empty,
        );
        self.tasks.spawn(
            async move {
                let end = drive(&version, session, turn, &tx, &cancel, timeout).await;
                if let Some(end) = end {
                    tracing::warn!(error = %end.message(), "run ended early");
                    let _ = tx.send(Frame::Error(end)).await;
                } else {
                    tracing::debug!("run done");
                }
                // The session's turn ends when the run does, not when the client leaves.
                drop(guard);
            }
            .instrument(span),
        );
        Ok(rx)
    }

    fn turn(&self, req: &RunAgentRequest) -> Result<Turn, ApiError> {
        let Some(mut message) = req.new_message.clone() else {
            return Err(ApiError::BadRequest(
                "newMessage is required (adk-flow does not resume invocations)".into(),
            ));
        };
        if message.parts.is_empty() {
            return Err(ApiError::BadRequest("No parts in the new_message.".into()));
        }
        if message.parts.iter().any(|p| p.function_call.is_some()) {
            return Err(ApiError::BadRequest(
                "User message cannot contain function calls.".into(),
            ));
        }
        message.role.get_or_insert(Role::User);
        Ok(Turn {
            message,
            state_delta: req.state_delta.clone().unwrap_or_default(),
            config: RunConfig {
                stream: req.streaming,
                max_llm_calls: self.limits.max_llm_calls,
                ..RunConfig::default()
            },
        })
    }

    /// Runs in progress.
    pub fn running(&self) -> usize {
        self.tasks.len()
    }

    /// Sessions whose turn is taken or awaited.
    pub fn busy_sessions(&self) -> usize {
        self.gates.in_use()
    }

    /// Stops new runs, lets running ones finish within `grace`, then cancels them and
    /// waits until every run task has ended.
    pub async fn shutdown(&self, grace: Duration) {
        self.begin_shutdown();
        if tokio::time::timeout(grace, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                runs = self.tasks.len(),
                "grace period over; cancelling the runs still going"
            );
            self.cancel.cancel();
            self.tasks.wait().await;
        }
    }

    /// Starts shutdown without waiting: new runs are refused and live sockets stop
    /// taking input from here on. Called before shutdown is announced, so that a client
    /// that saw the announcement cannot slip one more request in.
    pub fn begin_shutdown(&self) {
        self.draining.cancel();
        self.tasks.close();
    }

    /// Whether shutdown has started.
    pub fn draining(&self) -> bool {
        self.draining.is_cancelled()
    }

    /// A live session's socket task, tracked as a run: shutdown waits for it.
    pub(crate) fn track<F: std::future::Future>(
        &self,
        task: F,
    ) -> tokio_util::task::task_tracker::TrackedFuture<F> {
        self.tasks.track_future(task)
    }

    /// The shutdown signals a live session watches: shutdown started (stop taking
    /// input), and the grace period is over (stop the run).
    pub(crate) fn shutdown_signals(&self) -> (CancellationToken, CancellationToken) {
        (self.draining.clone(), self.cancel.clone())
    }
}

fn shutting_down() -> ApiError {
    ApiError::Unavailable("the server is shutting down".into())
}

/// Drives one run to its end, forwarding frames while someone listens. Returns why it
/// ended early, if it did.
async fn drive(
    version: &AppVersion,
    session: SessionHandle,
    turn: Turn,
    tx: &mpsc::Sender<Frame>,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Option<RunEnd> {
    let mut events = version.app.runner().run(session, turn);
    let forward = async {
        let mut named = false;
        while let Some(item) = events.next().await {
            match item {
                // A closed channel means the client left: keep running, stop sending.
                Ok(event) => {
                    if !named {
                        // The run's log lines carry the invocation id from here on.
                        tracing::Span::current()
                            .record("invocation", tracing::field::display(&event.invocation_id));
                        named = true;
                    }
                    if !tx.is_closed() {
                        let _ = tx.send(Frame::Event(event)).await;
                    }
                }
                Err(err) => return Some(RunEnd::Failed(crate::errors::chain(&err))),
            }
        }
        None
    };
    // Dropping `forward` drops the Runner's stream at an await point; a commit is one
    // await of the session service, so it is either done or not started.
    tokio::select! {
        end = forward => end,
        () = cancel.cancelled() => Some(RunEnd::ShutDown),
        () = tokio::time::sleep(timeout) => Some(RunEnd::TimedOut(timeout)),
    }
}
