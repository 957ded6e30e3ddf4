//! SequentialAgent and LoopAgent: children in order, once or until escalation.

use super::{escalates, run_agent};
use crate::invocation::{EventStream, InvocationContext};
use crate::tree::AgentId;
use futures::StreamExt;

/// Runs each child once, in order. Escalation passes through untouched (only loops act on it).
pub(super) fn run_sequential(ctx: InvocationContext, id: AgentId) -> EventStream {
    Box::pin(async_stream::try_stream! {
        let children = ctx.tree().get(id).sub_agents.clone();
        for child in children {
            let mut events = run_agent(ctx.clone(), child);
            while let Some(event) = events.next().await {
                yield event?;
            }
        }
    })
}

/// Runs the children in order, repeatedly, until a child's event escalates (checked when
/// that child finishes, as ADK does) or `max_iterations` is reached. The escalating event
/// travels up, so every enclosing loop ends too.
pub(super) fn run_loop(
    ctx: InvocationContext,
    id: AgentId,
    max_iterations: Option<u32>,
) -> EventStream {
    Box::pin(async_stream::try_stream! {
        let children = ctx.tree().get(id).sub_agents.clone();
        let bound = max_iterations.filter(|&m| m > 0);
        let mut times = 0u32;
        'outer: while bound.is_none_or(|m| times < m) {
            for &child in &children {
                let mut escalated = false;
                let mut events = run_agent(ctx.clone(), child);
                while let Some(event) = events.next().await {
                    let event = event?;
                    escalated |= escalates(&event);
                    yield event;
                }
                if escalated {
                    break 'outer;
                }
            }
            times += 1;
            if children.is_empty() {
                break;
            }
        }
    })
}
