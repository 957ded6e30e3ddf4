//! Model callbacks inside the LLM flow.

use crate::callback::{Answer, Callback, HookOutcome, run_hook};
use crate::event::{Content, Event, Part, Role};
use crate::invocation::{InvocationContext, RunError};
use std::sync::Arc;

/// Runs a model hook with the agent's state and, for after_model, the reply's text.
pub(crate) fn run(
    ctx: &InvocationContext,
    agent: &str,
    callbacks: &[Arc<Callback>],
    text: Option<String>,
) -> Result<HookOutcome, RunError> {
    if callbacks.is_empty() {
        return Ok(HookOutcome::default());
    }
    run_hook(callbacks, ctx.hook_context(agent).with_text(text)).map_err(|source| {
        RunError::Callback {
            agent: agent.to_owned(),
            source,
        }
    })
}

/// after_model: a reply replaces the model's content; redactions rewrite its text parts;
/// state writes join the event's delta.
pub(crate) fn after_model(
    ctx: &InvocationContext,
    agent: &str,
    callbacks: &[Arc<Callback>],
    event: &mut Event,
) -> Result<(), RunError> {
    let outcome = run(ctx, agent, callbacks, event.text())?;
    if let Some(content) = &mut event.content {
        for part in &mut content.parts {
            if let Some(t) = &mut part.text {
                *t = outcome.redact_text(t);
            }
        }
    }
    if let Some(Answer::Reply(text)) = outcome.answer {
        event.content = Some(Content::new(Role::Model, vec![Part::text(text)]));
        event.long_running_tool_ids = None;
    }
    if !event.is_partial() {
        event.actions.state_delta.extend(outcome.state_delta);
    }
    Ok(())
}
