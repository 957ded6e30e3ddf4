//! Executing the function calls of one model reply: concurrently, each with its own
//! tool context, merged into one function-response event.

use crate::event::{Content, Event, FunctionCall, FunctionResponse, Part, Role};
use crate::session::SessionHandle;
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

async fn run_one(
    call: FunctionCall,
    tools: &[Arc<dyn Tool>],
    session: &SessionHandle,
    agent: &str,
) -> (FunctionResponse, ToolContext, bool) {
    let id = call.id.clone().unwrap_or_default();
    let mut ctx = ToolContext::new(session.clone(), agent, &id);
    let tool = tools.iter().find(|t| t.name() == call.name);
    let (response, long_running) = match tool {
        None => (not_found(&call.name, tools), false),
        Some(tool) => {
            let result = tool.run(call.args, &mut ctx).await;
            let response = match result {
                Ok(Value::Object(map)) => Value::Object(map),
                Ok(other) => json!({ "result": other }),
                Err(e) => json!({ "error": e.message }),
            };
            (response, tool.is_long_running())
        }
    };
    let response = FunctionResponse {
        id: call.id,
        name: call.name,
        response,
    };
    (response, ctx, long_running)
}

/// Runs `calls` concurrently and merges their responses, in call order, into one event.
/// A long-running tool that returns `null` produces no response: the turn waits for the
/// client to send it.
pub(crate) async fn execute(
    calls: Vec<FunctionCall>,
    tools: &[Arc<dyn Tool>],
    session: &SessionHandle,
    invocation_id: &str,
    agent: &str,
    branch: Option<&str>,
) -> CallsOutcome {
    let results =
        futures::future::join_all(calls.into_iter().map(|c| run_one(c, tools, session, agent)))
            .await;
    let mut event = Event::new(invocation_id, agent);
    event.branch = branch.map(str::to_owned);
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
        return CallsOutcome {
            event: None,
            end_invocation,
        };
    }
    event.content = Some(Content::new(Role::User, parts));
    CallsOutcome {
        event: Some(event),
        end_invocation,
    }
}
