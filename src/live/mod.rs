//! Live mode: [`Runner::run_live`], one long invocation over a [`LiveRequestQueue`] the
//! client keeps writing to, and one stream of events back, across agents that hand over
//! with `transfer_to_agent` and `task_completed`.
//!
//! The same rule as [`Runner::run`] holds: each event is committed before the agent is
//! polled again. What is stored follows ADK's `run_live`: every event that is not partial
//! and carries no inline audio, video or image; the user's own contents are stored when
//! they reach a model but never yielded.

pub use crate::agent::live::check;
use crate::agent::live::run_agent_live;
use crate::event::{Event, new_invocation_id};
use crate::flow::live::LiveItem;
use crate::invocation::{InvocationContext, RunConfig, RunError};
pub use crate::model::live::{
    LiveRequest, LiveRequestQueue, LiveRunConfig, Modality, RealtimeInput,
};
use crate::runner::{RunStream, Runner, find_agent_to_run, remember};
use crate::session::SessionHandle;
use crate::telemetry::Span;
use futures::StreamExt;
use std::sync::Arc;

/// Whether ADK stores an event of a live run: not partial, no inline media.
fn stored(event: &Event) -> bool {
    !event.is_partial()
        && !event.content.as_ref().is_some_and(|c| {
            c.parts
                .iter()
                .any(|p| p.inline_data.as_ref().is_some_and(|b| b.is_media()))
        })
}

impl Runner {
    /// Runs `session` live: the agent to run (as [`Runner::run`] picks it) connects to its
    /// model and takes the client's requests from `queue` until the client closes it, the
    /// last step of a SequentialAgent calls `task_completed`, a tool ends the invocation,
    /// `max_duration` passes or a failure ends the run (an error event, then the error).
    /// Every event of the run shares one invocation id and is yielded as it arrives.
    pub fn run_live(
        &self,
        session: SessionHandle,
        queue: &LiveRequestQueue,
        config: LiveRunConfig,
    ) -> RunStream {
        let tree = Arc::clone(self.tree());
        let sessions = Arc::clone(self.sessions());
        let artifacts = self.artifacts().cloned();
        let memory = self.memory().cloned();
        let input = queue.take_receiver();
        let tracer = self.tracer().clone();
        Box::pin(async_stream::stream! {
            let invocation_id = new_invocation_id();
            // The whole live run is one `invocation` span, as `run`'s (ADK's run_live opens
            // none, so its agent, send_data and tool spans have no common root and no
            // session lists them).
            let mut root = if tracer.is_on() {
                let id = session.lock().id.clone();
                let mut root = tracer.root("invocation", &id, None);
                root.set_str(crate::telemetry::LIVE_RUN_KEY, "live");
                root
            } else {
                Span::none()
            };
            let deadline = config.max_duration.map(|d| tokio::time::Instant::now() + d);
            let started = match input {
                None => Err(RunError::LiveQueueTaken),
                Some(input) => check(&tree).map(|()| input),
            };
            let mut failure = None;
            match started {
                Err(e) => failure = Some(e),
                Ok(input) => {
                    session.begin_invocation();
                    let first_event = session.lock().events.len();
                    let agent = find_agent_to_run(&tree, &session.lock());
                    let run_config = RunConfig { stream: true, max_llm_calls: config.max_llm_calls, ..RunConfig::default() };
                    let ctx = InvocationContext::new(invocation_id.clone(), session.clone(), tree, run_config)
                        .with_artifacts(artifacts)
                        .with_memory(memory.clone(), None)
                        .with_trace(root.as_parent());
                    let mut items = run_agent_live(ctx, agent, input, Arc::new(config));
                    loop {
                        let next = match deadline {
                            Some(deadline) => tokio::select! {
                                item = items.next() => item,
                                () = tokio::time::sleep_until(deadline) => None,
                            },
                            None => items.next().await,
                        };
                        let event = match next {
                            None | Some(Ok(LiveItem::Done(..))) => break,
                            Some(Err(e)) => {
                                failure = Some(e);
                                break;
                            }
                            Some(Ok(LiveItem::Store(event))) => {
                                if let Err(e) = sessions.append_event(&session, event).await {
                                    failure = Some(RunError::from(e));
                                    break;
                                }
                                continue;
                            }
                            Some(Ok(LiveItem::Event(event))) => event,
                        };
                        if !stored(&event) {
                            yield Ok(Arc::new(event));
                            continue;
                        }
                        match sessions.append_event(&session, event).await {
                            Ok(event) => yield Ok(event),
                            Err(e) => {
                                failure = Some(RunError::from(e));
                                break;
                            }
                        }
                    }
                    drop(items);
                    session.end_invocation();
                    // What the run committed goes to memory when the app adds sessions
                    // after each invocation, even when a failure ended it (a long
                    // conversation is not lost to a dropped connection).
                    if let Err(e) = remember(memory.as_ref(), &session, first_event).await {
                        match failure {
                            None => failure = Some(e),
                            Some(_) => tracing::warn!("a failed live run could not be added to memory: {}", crate::errors::chain(&e)),
                        }
                    }
                }
            }
            if let Some(err) = failure {
                root.set_error(|| crate::errors::chain(&err));
                let mut event = Event::new(invocation_id.clone(), err.agent().unwrap_or("adk-flow"));
                event.set_error(
                    Some(err.code().into()),
                    Some(crate::errors::chain(&err).into()),
                );
                match sessions.append_event(&session, event).await {
                    Ok(event) => {
                        yield Ok(event);
                        yield Err(err);
                    }
                    Err(source) => yield Err(RunError::Unrecorded { error: Box::new(err), source }),
                }
            }
        })
    }
}
