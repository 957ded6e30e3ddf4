//! Executing the function calls of one model reply: concurrently, each with its own
//! tool context, merged into one function-response event.

use super::trace::{ToolTrace, merged};
use crate::callback::{Answer, CallbackError, Hooks, run_hook};
use crate::event::{Content, Event, FunctionCall, FunctionResponse, Part, Role, compacted};
use crate::invocation::InvocationContext;
use crate::telemetry::TraceParent;
use crate::tool::{Tool, ToolContext};
use serde_json::{Value, json};
use std::sync::Arc;

/// What the flow needs to know after the calls ran.
pub(crate) struct CallsOutcome {
    /// The merged function-response event, if any call produced a response.
    pub(crate) event: Option<Event>,
    /// A tool asked to end the calling agent (task_completed).
    pub(crate) end_invocation: bool,
}

/// The answer to a call of a tool the agent does not have, worded as ADK 2.13's
/// `build_tool_not_found_response` (the model can correct its own mistake).
fn not_found(name: &str, tools: &[Arc<dyn Tool>]) -> Value {
    let available: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    let available = if available.is_empty() {
        "none".to_owned()
    } else {
        available.join(", ")
    };
    json!({
        "error": format!(
            "Invoking `{name}()` failed as no tool with that name is available. The tools you can call are: {available}. You could retry, but it is IMPORTANT that you only call a tool from that list."
        )
    })
}

/// Where a batch of calls runs: the agent, its tools and hooks, the session.
pub(crate) struct CallSite<'a> {
    pub(crate) tools: &'a [Arc<dyn Tool>],
    pub(crate) hooks: &'a Hooks,
    pub(crate) ctx: &'a InvocationContext,
    pub(crate) agent: &'a str,
    /// The agent's name as the author of its events.
    pub(crate) author: &'a Arc<str>,
    /// Where the calls' `execute_tool` spans hang.
    pub(crate) trace: Option<&'a TraceParent>,
}

/// One call's outcome: its response, its tool context, whether the tool is long-running,
/// and its span (ended once the id of the event carrying the response is known).
type CallResult = (FunctionResponse, ToolContext, bool, Option<Traced>);

/// A call's span and what it still needs.
pub(crate) struct Traced {
    span: ToolTrace,
    tool: Arc<dyn Tool>,
    args: Value,
}

async fn run_one(call: FunctionCall, site: &CallSite<'_>) -> Result<CallResult, CallbackError> {
    let CallSite {
        tools,
        hooks,
        agent,
        ..
    } = *site;
    let mut ctx = site
        .ctx
        .tool_context(agent, call.id.as_deref().unwrap_or_default());
    let tool = tools.iter().find(|t| t.name() == call.name);
    let hook_ctx = |args: &Value, result: Option<Value>| {
        site.ctx
            .hook_context(agent)
            .with_call(&call.name, args, result)
    };
    // ADK opens no span for a tool that does not exist.
    let span = tool
        .filter(|_| site.trace.is_some())
        .map(|_| ToolTrace::start(site.trace, &call.name));
    let original_args = span.as_ref().map(|_| call.args.clone());
    if let Some(span) = &span {
        ctx = ctx.with_trace(span.span.as_parent());
    }
    let mut args = call.args;
    let mut answer = None;
    if !hooks.before_tool.is_empty() {
        let before = run_hook(&hooks.before_tool, hook_ctx(&args, None))?;
        for (k, v) in before.state_delta {
            ctx.set_state(k, v);
        }
        if let Some(a) = before.args {
            args = a;
        }
        answer = before.answer;
    }
    let (mut response, long_running) = match (answer, tool) {
        (Some(Answer::Block(message)), _) => (json!({ "error": message }), false),
        (Some(Answer::Result(v)), _) => (FunctionResponse::body(v), false),
        (_, None) => (not_found(&call.name, tools), false),
        (_, Some(tool)) => {
            // after_tool hooks read the arguments; without them the tool takes them.
            let given = if hooks.after_tool.is_empty() {
                std::mem::take(&mut args)
            } else {
                args.clone()
            };
            let response = match tool.run(given, &mut ctx).await {
                // Stored with its event for the session's life: a small object is
                // moved into a map of its size.
                Ok(v) => FunctionResponse::body(compacted(v)),
                Err(e) => json!({ "error": e.message }),
            };
            (response, tool.is_long_running())
        }
    };
    if !hooks.after_tool.is_empty() {
        let mut after = run_hook(&hooks.after_tool, hook_ctx(&args, Some(response.clone())))?;
        for (k, v) in std::mem::take(&mut after.state_delta) {
            ctx.set_state(k, v);
        }
        response = after.redact_value(&response);
        if let Some(Answer::Result(v)) = after.answer {
            response = FunctionResponse::body(v);
        }
    }
    let response = FunctionResponse {
        id: call.id,
        name: call.name,
        response,
    };
    let traced = match (span, tool, original_args) {
        (Some(span), Some(tool), Some(args)) => Some(Traced {
            span,
            tool: Arc::clone(tool),
            args,
        }),
        _ => None,
    };
    Ok((response, ctx, long_running, traced))
}

/// Ends a call's span: the response, and the event that carries it (`None`: a
/// long-running call without a response yet).
fn end_span(traced: Option<Traced>, response: &FunctionResponse, event_id: Option<&str>) {
    if let Some(mut t) = traced {
        let answered = event_id.map(|id| (&response.response, id));
        t.span
            .finish(t.tool.as_ref(), &t.args, response.id.as_deref(), answered);
    }
}

/// Runs `calls` concurrently and merges their responses, in call order, into one event.
/// A long-running tool that returns `null` produces no response: the turn waits for the
/// client to send it.
pub(crate) async fn execute(
    calls: Vec<FunctionCall>,
    site: &CallSite<'_>,
) -> Result<CallsOutcome, CallbackError> {
    let results = if calls.len() == 1 {
        // One call (the common case) needs no concurrency.
        let mut results = Vec::with_capacity(1);
        for call in calls {
            results.push(run_one(call, site).await?);
        }
        results
    } else {
        futures::future::join_all(calls.into_iter().map(|c| run_one(c, site)))
            .await
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?
    };
    let mut event = site.ctx.new_event(Arc::clone(site.author));
    let mut parts = Vec::with_capacity(results.len());
    let mut end_invocation = false;
    let several = results.len() > 1;
    let mut single_span = None;
    for (response, ctx, long_running, traced) in results {
        end_invocation |= ctx.end_invocation;
        if long_running && response.response == json!({"result": null}) {
            end_span(traced, &response, None);
            event.actions.merge(ctx.actions);
            continue;
        }
        if several {
            // ADK builds one event per call, then merges them: each span names its own.
            end_span(traced, &response, Some(&uuid::Uuid::new_v4().to_string()));
        } else {
            single_span = traced.map(|t| (t, response.clone()));
        }
        parts.push(Part::function_response(response));
        event.actions.merge(ctx.actions);
    }
    if parts.is_empty() {
        return Ok(CallsOutcome {
            event: None,
            end_invocation,
        });
    }
    event.content = Some(Content::new(Role::User, parts));
    if let Some((traced, response)) = single_span {
        end_span(Some(traced), &response, Some(&event.id));
    }
    if several {
        merged(site.trace, &event);
    }
    Ok(CallsOutcome {
        event: Some(event),
        end_invocation,
    })
}
