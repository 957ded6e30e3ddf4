//! The LLM flow: ADK's step loop for one LLM agent.
//!
//! A step builds the request (system instruction, contents, tool declarations), calls the
//! model, yields the reply as events, runs the reply's function calls and yields their
//! merged response. Steps repeat until a step's last event is a final response, or until
//! a transfer: then the flow ends with [`FlowItem::TransferTo`] and its caller (the agent
//! module) runs the target.

mod contents;
mod functions;
mod hooks;
mod instructions;
pub mod live;
mod output;
mod request;
mod trace;

pub use trace::StepTrace;

use request::{Prepared, build_request, instruction_artifacts, process_request};

use crate::callback::Answer;
use crate::event::{Content, Role};
use crate::event::{Event, new_function_call_id};
use crate::invocation::{InvocationContext, RunError};
use crate::model::{CallContext, LlmResponse, ResponseStream};
use crate::tool::Tool;
use crate::tree::{AgentId, AgentTree};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::collections::HashMap;
use std::sync::Arc;

/// What the LLM flow yields.
pub enum FlowItem {
    /// An event of the agent, to commit (or to forward, when partial), shared from the
    /// start (see [`crate::invocation::EventStream`]).
    Event(Arc<Event>),
    /// The flow's last item: the agent transferred control to this agent, which the
    /// caller runs next, under the step's spans (kept open until the target is done, as
    /// ADK's are).
    TransferTo(AgentId, StepTrace),
}

/// The stream of an LLM agent's flow; an `Err` ends the invocation.
pub type FlowStream = BoxStream<'static, Result<FlowItem, RunError>>;

/// Turns a model response into an event of `agent`; `None` for an empty response.
fn model_event(ctx: &InvocationContext, author: &Arc<str>, response: LlmResponse) -> Option<Event> {
    if response.content.is_none() && response.error_code.is_none() {
        return None;
    }
    let mut event = ctx.new_event(Arc::clone(author));
    event.content = response.content;
    event.partial = response.partial;
    event.finish_reason = response.finish_reason;
    event.set_error(
        response.error_code.map(Into::into),
        response.error_message.map(Into::into),
    );
    if let Some(usage) = response.usage_metadata {
        event.meta_mut().usage_metadata = Some(usage);
    }
    Some(event)
}

/// Gives every function call an id, and marks the calls to long-running tools.
///
/// `streamed_ids` holds the ids given to the calls of earlier chunks of the same reply:
/// the aggregate reuses them, so a streamed call and its final form share one id.
fn finalize_calls(event: &mut Event, tools: &[Arc<dyn Tool>], streamed_ids: &mut Vec<String>) {
    let partial = event.is_partial();
    let Some(content) = &mut event.content else {
        return;
    };
    let mut long_running = Vec::new();
    let mut any = false;
    let calls = content
        .parts
        .iter_mut()
        .filter_map(|p| p.function_call.as_mut());
    for (k, call) in calls.enumerate() {
        any = true;
        let id = call.id.get_or_insert_with(|| match streamed_ids.get(k) {
            Some(id) if !partial => id.clone(),
            _ => new_function_call_id(),
        });
        if partial {
            streamed_ids.push(id.clone());
        }
        if tools
            .iter()
            .any(|t| t.name() == call.name && t.is_long_running())
        {
            long_running.push(id.clone());
        }
    }
    if any {
        event.long_running_tool_ids = Some(long_running.into());
    }
}

/// The agent a `transfer_to_agent` of `agent` names.
///
/// # Errors
/// No agent of the tree has that name.
fn transfer_target(tree: &AgentTree, agent: &str, target: String) -> Result<AgentId, RunError> {
    tree.find(&target).ok_or_else(|| RunError::AgentNotFound {
        agent: agent.to_owned(),
        target,
        available: tree.names().collect::<Vec<_>>().join(", "),
    })
}

/// Runs an LLM agent: model steps until a final response, a transfer or an end signal.
pub fn run_llm_agent(ctx: InvocationContext, id: AgentId) -> FlowStream {
    Box::pin(async_stream::try_stream! {
        let tree = ctx.tree();
        let node = tree.get(id);
        let name = node.name.clone();
        let Some(llm) = node.as_llm() else { return; };
        let model = Arc::clone(&llm.model);
        let output_key = llm.output_key.as_deref();
        let output_schema = llm.output_schema.as_deref();
        let prepared = node.prepared(|| Prepared::of(tree, id));
        let tools = &prepared.tools;
        // The agent's text so far, for its output_key as ADK 2.13 keeps it (see
        // `output::accumulate`) in an ADK 2.13 run; a workflow node adds up its own (the
        // graph runtime's `TextSoFar`).
        let mut node_text = (ctx.runs_adk2() && !ctx.in_graph_node() && output_schema.is_none())
            .then_some(output_key)
            .flatten()
            .map(|key| (key, String::new()));
        loop {
            let artifacts = if prepared.reads_artifacts {
                instruction_artifacts(&ctx, &llm.instruction).await
            } else {
                HashMap::new()
            };
            let mut request = build_request(&ctx, id, &prepared, &artifacts)?;
            if prepared.processes_requests {
                process_request(&ctx, &name, tools, &mut request).await?;
            }
            let mut step = StepTrace::start(&ctx);
            let before = hooks::run(&ctx, &name, &node.hooks.before_model, None)?;
            // State written by before_model callbacks rides on the step's first committed event.
            let mut pending_delta = before.state_delta;
            let mut responses: ResponseStream = match before.answer {
                Some(Answer::Reply(text)) => Box::pin(futures::stream::iter([Ok(LlmResponse {
                    content: Some(Content::text(Role::Model, text)),
                    ..LlmResponse::default()
                })])),
                _ => {
                    ctx.count_llm_call(id)?;
                    step.calling(&ctx, &name, &request);
                    let call = CallContext {
                        agent_name: &name,
                        stream: ctx.config().stream,
                        conversation: ctx.conversation(),
                        graph_node: ctx.in_graph_node(),
                    };
                    match model.generate(&request, call).await {
                        Ok(responses) => responses,
                        Err(source) => {
                            step.failed(|| source.to_string());
                            Err(RunError::Model { agent: name.clone(), source })?
                        }
                    }
                }
            };
            drop(request);
            // What the step's last committed model event leaves to do.
            let mut pending_calls = Vec::new();
            let mut produced = false;
            let mut streamed_ids = Vec::new();
            while let Some(response) = responses.next().await {
                let response = match response {
                    Ok(r) => r,
                    Err(source) => {
                        step.failed(|| source.to_string());
                        Err(RunError::Model { agent: name.clone(), source })?
                    }
                };
                let Some(mut event) = model_event(&ctx, &prepared.author, response) else { continue };
                step.response(&event);
                produced = true;
                finalize_calls(&mut event, tools, &mut streamed_ids);
                if !node.hooks.after_model.is_empty() {
                    hooks::after_model(&ctx, &name, &node.hooks.after_model, &mut event)?;
                }
                if event.is_partial() {
                    // Streamed chunks are shown, never executed: only the aggregate runs tools.
                    yield FlowItem::Event(Arc::new(event));
                    continue;
                }
                for (k, v) in std::mem::take(&mut pending_delta) {
                    event.actions.state_delta.insert_if_absent(k, v);
                }
                output::save_output(&mut event, &name, output_key, output_schema)?;
                if let Some((key, text)) = &mut node_text {
                    output::accumulate(&mut event, key, text);
                }
                pending_calls = event.function_calls().cloned().collect();
                yield FlowItem::Event(Arc::new(event));
            }
            if !produced {
                break;
            }
            if pending_calls.is_empty() {
                // A final reply, or a stream that ended on a partial chunk (ADK stops too).
                break;
            }
            let trace = step.parent();
            let site = functions::CallSite {
                tools,
                hooks: &node.hooks,
                ctx: &ctx,
                agent: &name,
                author: &prepared.author,
                trace: trace.as_ref(),
            };
            let outcome = functions::execute(pending_calls, &site)
            .await
            .map_err(|source| RunError::Callback { agent: name.clone(), source })?;
            let Some(response_event) = outcome.event else {
                // Only long-running calls, all waiting for the client: the turn ends.
                break;
            };
            let transfer = response_event.actions.transfer_to_agent.clone();
            let response_final = response_event.is_final_response();
            let structured = output::structured_text(&response_event);
            yield FlowItem::Event(Arc::new(response_event));
            if let Some(text) = structured {
                // The reply given through set_model_response, as a model event: the turn's end.
                let mut reply = output::reply_event(&ctx, &prepared.author, text);
                output::save_output(&mut reply, &name, output_key, output_schema)?;
                yield FlowItem::Event(Arc::new(reply));
                if transfer.is_none() {
                    break;
                }
            }
            if let Some(target) = transfer {
                if ctx.in_graph_node() {
                    if *target != *name {
                        // ADK 2.13: a node's agent is the root of its own tree, alone.
                        Err(RunError::AgentNotFound {
                            agent: name.clone(),
                            target: target.to_string(),
                            available: name.clone(),
                        })?;
                    }
                    // Naming itself, the agent finds itself there and runs again within
                    // the node run (its text still adding up for output_key); the node's
                    // workflow fails once the node completes (`graph::node`).
                    continue;
                }
                yield FlowItem::TransferTo(transfer_target(tree, &name, target.into())?, step);
                return;
            }
            if outcome.end_invocation || response_final {
                break;
            }
        }
    })
}
