//! Executing the function calls of one model reply: concurrently, each with its own
//! tool context, merged into one function-response event.

use crate::callback::{Answer, CallbackError, Hooks, run_hook};
use crate::event::{Content, Event, FunctionCall, FunctionResponse, Part, Role};
use crate::invocation::InvocationContext;
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

fn not_found(name: &str, tools: &[Arc<dyn Tool>]) -> Value {
    let available: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    json!({
        "error": format!(
            "Tool '{name}' not found.\nAvailable tools: {}\n\nCall one of the available tools, or answer without a tool.",
            available.join(", ")
        )
    })
}

/// Where a batch of calls runs: the agent, its tools and hooks, the session.
pub(crate) struct CallSite<'a> {
    pub(crate) tools: &'a [Arc<dyn Tool>],
    pub(crate) hooks: &'a Hooks,
    pub(crate) ctx: &'a InvocationContext,
    pub(crate) agent: &'a str,
}

async fn run_one(
    call: FunctionCall,
    site: &CallSite<'_>,
) -> Result<(FunctionResponse, ToolContext, bool), CallbackError> {
    let CallSite {
        tools,
        hooks,
        agent,
        ..
    } = *site;
    let id = call.id.clone().unwrap_or_default();
    let mut ctx = site.ctx.tool_context(agent, &id);
    let tool = tools.iter().find(|t| t.name() == call.name);
    let hook_ctx = |args: &Value, result: Option<Value>| {
        site.ctx
            .hook_context(agent)
            .with_call(&call.name, args, result)
    };
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
            let response = match tool.run(args.clone(), &mut ctx).await {
                Ok(v) => FunctionResponse::body(v),
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
    Ok((response, ctx, long_running))
}

/// Runs `calls` concurrently and merges their responses, in call order, into one event.
/// A long-running tool that returns `null` produces no response: the turn waits for the
/// client to send it.
pub(crate) async fn execute(
    calls: Vec<FunctionCall>,
    site: &CallSite<'_>,
) -> Result<CallsOutcome, CallbackError> {
    let results = futures::future::join_all(calls.into_iter().map(|c| run_one(c, site)))
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let mut event = Event::new(site.ctx.invocation_id(), site.agent);
    event.branch = site.ctx.branch().map(str::to_owned);
    let mut parts = Vec::with_capacity(results.len());
    let mut end_invocation = false;
    for (response, ctx, long_running) in results {
        end_invocation |= ctx.end_invocation;
        if long_running && response.response == json!({"result": null}) {
            event.actions.merge(ctx.actions);
            continue;
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
    Ok(CallsOutcome {
        event: Some(event),
        end_invocation,
    })
}
