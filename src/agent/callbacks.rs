//! before/after agent callbacks around an agent's run, with ADK's event shapes: an
//! answering callback yields the agent's reply and skips it; state written without an
//! answer is committed by a content-less event.

use super::run_body;
use crate::callback::{Answer, Callback, run_hook};
use crate::event::{Content, Event, Role};
use crate::invocation::{EventStream, InvocationContext, RunError};
use crate::tree::AgentId;
use futures::StreamExt;
use std::sync::Arc;

/// Runs a hook and turns its outcome into the event to yield (if any) and whether the
/// callback answered.
pub(super) fn hook_event(
    ctx: &InvocationContext,
    agent: &str,
    callbacks: &[Arc<Callback>],
) -> Result<(Option<Event>, bool), RunError> {
    let outcome =
        run_hook(callbacks, ctx.hook_context(agent)).map_err(|source| RunError::Callback {
            agent: agent.to_owned(),
            source,
        })?;
    let answered = matches!(outcome.answer, Some(Answer::Reply(_)));
    if outcome.state_delta.is_empty() && !answered {
        return Ok((None, false));
    }
    let mut event = ctx.new_event(agent);
    event.actions.state_delta = outcome.state_delta.into();
    if let Some(Answer::Reply(text)) = outcome.answer {
        event.content = Some(Content::text(Role::Model, text));
    }
    Ok((Some(event), answered))
}

pub(super) fn with_agent_callbacks(ctx: InvocationContext, id: AgentId) -> EventStream {
    Box::pin(async_stream::try_stream! {
        let node = ctx.tree().get(id);
        let name = node.name.clone();
        let (event, answered) = hook_event(&ctx, &name, &node.hooks.before_agent)?;
        if let Some(event) = event {
            yield Arc::new(event);
        }
        if answered {
            // ADK ends this agent's invocation: no body, no after_agent callbacks.
            return;
        }
        let mut body = run_body(ctx.clone(), id);
        while let Some(event) = body.next().await {
            yield event?;
        }
        let (event, _) = hook_event(&ctx, &name, &node.hooks.after_agent)?;
        if let Some(event) = event {
            yield Arc::new(event);
        }
    })
}
