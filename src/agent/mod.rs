//! Agents: how each kind of agent of the tree ([`crate::tree`]) runs.
//!
//! Running an agent yields a pull-based stream: an agent never runs ahead of the Runner,
//! which commits each event before polling again. An LLM agent runs the LLM flow
//! ([`crate::flow`]); when the flow ends in a transfer, the target runs here, in the same
//! stream.

pub mod agent_tool;
mod callbacks;
mod graph;
pub mod live;
mod parallel;
mod sequence;

use crate::event::Event;
use crate::flow::{FlowItem, FlowStream, StepTrace, run_llm_agent};
use crate::invocation::{EventStream, InvocationContext, RunError};
use crate::telemetry::{AttrValue, Span};
use crate::tree::{AgentId, AgentKind};
use futures::{Stream, StreamExt};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

/// Runs an agent of the tree: its events, lazily, as a stream, wrapped in its
/// before/after agent callbacks when it has any, inside an `invoke_agent NAME` span when
/// the invocation is traced.
pub fn run_agent(ctx: InvocationContext, id: AgentId) -> EventStream {
    if ctx.trace_parent().is_none() {
        return run_untraced(ctx, id);
    }
    let span = agent_span(&ctx, id);
    let mut events = run_untraced(ctx.with_trace(span.as_parent()), id);
    Box::pin(async_stream::stream! {
        let mut span = span;
        while let Some(item) = events.next().await {
            if let Err(e) = &item {
                span.set_error(|| e.to_string());
            }
            yield item;
        }
    })
}

/// The `invoke_agent NAME` span of an agent's run, with ADK's `trace_agent_invocation`
/// attributes (live runs open it too).
pub(crate) fn agent_span(ctx: &InvocationContext, id: AgentId) -> Span {
    let node = ctx.tree().get(id);
    let mut span = Span::child(ctx.trace_parent(), || format!("invoke_agent {}", node.name));
    span.set_str("gen_ai.operation.name", "invoke_agent");
    span.set_str("gen_ai.agent.description", &node.description);
    span.set_str("gen_ai.agent.name", &node.name);
    if span.is_recording() {
        let session_id = ctx.session().lock().id.clone();
        span.set("gen_ai.conversation.id", || AttrValue::Str(session_id));
    }
    span
}

/// [`run_agent`] without its span.
fn run_untraced(ctx: InvocationContext, id: AgentId) -> EventStream {
    let hooks = &ctx.tree().get(id).hooks;
    if hooks.before_agent.is_empty() && hooks.after_agent.is_empty() {
        return run_body(ctx, id);
    }
    callbacks::with_agent_callbacks(ctx, id)
}

/// Runs the agent's own logic, without its agent callbacks.
fn run_body(ctx: InvocationContext, id: AgentId) -> EventStream {
    match &ctx.tree().get(id).kind {
        AgentKind::Llm(_) => run_llm(ctx, id),
        AgentKind::Sequential { .. } => sequence::run_sequential(ctx, id),
        AgentKind::Loop { max_iterations } => {
            let max_iterations = *max_iterations;
            sequence::run_loop(ctx, id, max_iterations)
        }
        AgentKind::Parallel => parallel::run_parallel(ctx, id),
        AgentKind::Graph(_) => graph::run_graph(ctx, id),
    }
}

/// Runs the LLM flow of an agent, then the agent it transferred to, if any.
fn run_llm(ctx: InvocationContext, id: AgentId) -> EventStream {
    Box::pin(LlmRun {
        flow: Some(run_llm_agent(ctx.clone(), id)),
        ctx,
        target: None,
    })
}

/// The events of an LLM agent's flow, then those of the agent it transferred to; the
/// first `Err` ends it. A plain stream rather than a generator: an event passes through
/// without a stop in a generator's slot.
struct LlmRun {
    ctx: InvocationContext,
    /// `None` once the flow has ended or failed.
    flow: Option<FlowStream>,
    /// The transfer target's events, and the transferring step's spans, which end after
    /// the target, as ADK's do.
    target: Option<(EventStream, StepTrace)>,
}

impl Stream for LlmRun {
    type Item = Result<Arc<Event>, RunError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some((events, _)) = &mut this.target {
                match ready!(events.poll_next_unpin(cx)) {
                    Some(Ok(event)) => return Poll::Ready(Some(Ok(event))),
                    Some(Err(err)) => {
                        this.target = None;
                        this.flow = None;
                        return Poll::Ready(Some(Err(err)));
                    }
                    None => this.target = None,
                }
                continue;
            }
            let Some(flow) = &mut this.flow else {
                return Poll::Ready(None);
            };
            match ready!(flow.poll_next_unpin(cx)) {
                Some(Ok(FlowItem::Event(event))) => return Poll::Ready(Some(Ok(event))),
                Some(Ok(FlowItem::TransferTo(target, step))) => {
                    let events = run_agent(this.ctx.with_trace(step.parent()), target);
                    this.target = Some((events, step));
                }
                Some(Err(err)) => {
                    this.flow = None;
                    return Poll::Ready(Some(Err(err)));
                }
                None => {
                    this.flow = None;
                    return Poll::Ready(None);
                }
            }
        }
    }
}

/// Whether an event should end the enclosing loops.
pub(crate) fn escalates(event: &Event) -> bool {
    event.actions.escalate == Some(true)
}
