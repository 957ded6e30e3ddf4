//! Agents in live mode: one stream across agents that hand over.
//!
//! An LLM agent runs the live flow ([`crate::flow::live`]); when it transfers, the target
//! runs next in the same stream with the same client queue. A SequentialAgent runs its
//! steps in order, each until it calls `task_completed`. LoopAgent and ParallelAgent have
//! no live mode (as in ADK): [`check`] rejects a tree that reaches one before anything
//! connects.

use super::callbacks::hook_event;
use crate::flow::live::{LiveEnd, LiveItem, LiveStream, run_llm_agent_live};
use crate::invocation::{InvocationContext, RunError};
use crate::model::live::{LiveRequestReceiver, LiveRunConfig};
use crate::tree::{AgentId, AgentKind, AgentTree};
use futures::StreamExt;
use std::sync::Arc;

/// Checks that every agent of the tree has a live mode (transfers can reach any of them).
///
/// # Errors
/// The first LoopAgent or ParallelAgent, named.
pub fn check(tree: &AgentTree) -> Result<(), RunError> {
    let mut todo = vec![tree.root()];
    while let Some(id) = todo.pop() {
        let node = tree.get(id);
        let kind = match node.kind {
            AgentKind::Loop { .. } => "LoopAgent",
            AgentKind::Parallel => "ParallelAgent",
            AgentKind::Graph(_) => "Workflow",
            _ => {
                todo.extend(node.sub_agents.iter().copied());
                continue;
            }
        };
        return Err(RunError::LiveUnsupported {
            agent: node.name.clone(),
            kind,
        });
    }
    Ok(())
}

/// Runs an agent of the tree in live mode, reading the client's requests from `input`;
/// its last item is [`LiveItem::Done`], handing `input` back.
pub fn run_agent_live(
    ctx: InvocationContext,
    id: AgentId,
    input: LiveRequestReceiver,
    config: Arc<LiveRunConfig>,
) -> LiveStream {
    // The agent's `invoke_agent` span, as `run` opens it; it ends with the agent's part.
    let span = super::agent_span(&ctx, id);
    let ctx = ctx.with_trace(span.as_parent());
    Box::pin(async_stream::try_stream! {
        let mut span = span;
        let node = ctx.tree().get(id);
        let name = node.name.clone();
        let (event, answered) = hook_event(&ctx, &name, &node.hooks.before_agent)?;
        if let Some(event) = event {
            yield LiveItem::Event(event);
        }
        if answered {
            yield LiveItem::Done(input, LiveEnd::Finished);
            return;
        }
        let mut body = run_body_live(ctx.clone(), id, input, config);
        let mut done = None;
        while let Some(item) = body.next().await {
            if let Err(e) = &item {
                span.set_error(|| e.to_string());
            }
            match item? {
                LiveItem::Done(input, end) => done = Some((input, end)),
                other => yield other,
            }
        }
        drop(body);
        let (event, _) = hook_event(&ctx, &name, &node.hooks.after_agent)?;
        if let Some(event) = event {
            yield LiveItem::Event(event);
        }
        if let Some((input, end)) = done {
            yield LiveItem::Done(input, end);
        }
    })
}

/// The agent's own live logic, without its agent callbacks.
fn run_body_live(
    ctx: InvocationContext,
    id: AgentId,
    input: LiveRequestReceiver,
    config: Arc<LiveRunConfig>,
) -> LiveStream {
    Box::pin(async_stream::try_stream! {
        let node = ctx.tree().get(id);
        match &node.kind {
            AgentKind::Llm(_) => {
                let mut flow = run_llm_agent_live(ctx.clone(), id, input, Arc::clone(&config));
                while let Some(item) = flow.next().await {
                    match item? {
                        LiveItem::Done(input, LiveEnd::TransferTo(target)) => {
                            let mut events = run_agent_live(ctx.clone(), target, input, Arc::clone(&config));
                            while let Some(item) = events.next().await {
                                yield item?;
                            }
                            return;
                        }
                        other => yield other,
                    }
                }
            }
            AgentKind::Sequential { .. } => {
                let mut input = Some(input);
                for &child in &node.sub_agents {
                    let Some(current) = input.take() else { return };
                    let mut step = run_agent_live(ctx.clone(), child, current, Arc::clone(&config));
                    while let Some(item) = step.next().await {
                        match item? {
                            LiveItem::Done(back, LiveEnd::TaskCompleted | LiveEnd::Finished) => {
                                input = Some(back);
                            }
                            LiveItem::Done(back, end) => {
                                yield LiveItem::Done(back, end);
                                return;
                            }
                            other => yield other,
                        }
                    }
                }
                if let Some(input) = input {
                    yield LiveItem::Done(input, LiveEnd::Finished);
                }
            }
            AgentKind::Loop { .. } | AgentKind::Parallel | AgentKind::Graph(_) => {
                Err(RunError::LiveUnsupported {
                    agent: node.name.clone(),
                    kind: match node.kind {
                        AgentKind::Parallel => "ParallelAgent",
                        AgentKind::Graph(_) => "Workflow",
                        _ => "LoopAgent",
                    },
                })?;
            }
        }
    })
}
