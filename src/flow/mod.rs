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
mod trace;

pub use trace::StepTrace;

use crate::callback::Answer;
use crate::event::{Content, Role};
use crate::event::{Event, new_function_call_id};
use crate::invocation::{InvocationContext, RunError};
use crate::model::{
    CallContext, FunctionDeclaration, InstructionMessage, LlmRequest, LlmResponse, ResponseStream,
};
use crate::tool::Tool;
use crate::tool::builtin::TaskCompleted;
use crate::tool::transfer::TransferToAgent;
use crate::tree::{AgentId, AgentTree, IncludeContents};
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

/// The tools an agent offers: `set_model_response` when its structured reply needs it
/// (added by a request processor in ADK, so before the agent's own tools), its own, then
/// `transfer_to_agent` when it has targets, then `task_completed` when its
/// SequentialAgent parent offers it.
fn effective_tools(tree: &AgentTree, id: AgentId, targets: &[AgentId]) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    if let Some(llm) = tree.get(id).as_llm() {
        if let Some(schema) = llm
            .output_schema
            .as_ref()
            .filter(|_| output::uses_tool(llm))
        {
            tools.push(Arc::new(output::SetModelResponse::new(Arc::clone(schema))));
        }
        tools.extend(llm.tools.iter().cloned());
    }
    if !targets.is_empty() {
        tools.push(Arc::new(TransferToAgent {
            targets: targets.iter().map(|&t| tree.get(t).name.clone()).collect(),
        }));
    }
    if instructions::offers_task_completed(tree, id) {
        tools.push(Arc::new(TaskCompleted));
    }
    tools
}

/// What an LLM agent's requests share, computed once per agent (the tree never changes).
struct Prepared {
    /// The tools the agent offers (see [`effective_tools`]).
    tools: Vec<Arc<dyn Tool>>,
    /// The declarations of the tools the model is offered.
    declarations: Arc<Vec<FunctionDeclaration>>,
    /// The tools the provider runs itself.
    provider_tools: Vec<String>,
    /// Whether any tool changes the request that offers it.
    processes_requests: bool,
    /// Whether the instruction names artifacts (`{artifact.NAME}`).
    reads_artifacts: bool,
    /// Whether the instruction ends with the `task_completed` sentence.
    task_completed: bool,
    /// The system instruction after the agent's own: identity and transfer rules.
    fixed_instruction: String,
    /// The whole system instruction, when it is the same on every call (see
    /// [`instructions::constant_system`]).
    constant_system: Option<Arc<String>>,
    /// The agent's name, shared by its events as their author.
    author: Arc<str>,
    /// The model name its requests carry.
    model_name: Arc<str>,
    /// The key of the agent's view of the conversation (see [`contents::view_key`]).
    view_key: Arc<str>,
}

impl Prepared {
    /// The constants of an agent run by `Runner::run`.
    fn of(tree: &AgentTree, id: AgentId) -> Prepared {
        let targets = tree.transfer_targets(id);
        let tools = effective_tools(tree, id, &targets);
        let task_completed = instructions::offers_task_completed(tree, id);
        Prepared::with_tools(tree, id, &targets, tools, task_completed)
    }

    /// The constants of an agent offering `tools` (live mode adds `task_completed`).
    fn with_tools(
        tree: &AgentTree,
        id: AgentId,
        targets: &[AgentId],
        tools: Vec<Arc<dyn Tool>>,
        task_completed: bool,
    ) -> Prepared {
        let declarations = tools
            .iter()
            .filter(|t| t.provider_tool().is_none() && t.offered_to_model())
            .map(|t| t.declaration())
            .collect();
        let provider_tools = tools
            .iter()
            .filter_map(|t| t.provider_tool().map(str::to_owned))
            .collect();
        let fixed_instruction = instructions::fixed_part(tree, id, targets);
        Prepared {
            constant_system: instructions::constant_system(
                tree,
                id,
                &fixed_instruction,
                task_completed,
            )
            .map(Arc::new),
            author: Arc::from(tree.get(id).name.as_str()),
            model_name: Arc::from(tree.get(id).as_llm().map_or("", |l| l.model_name.as_str())),
            view_key: contents::view_key(&tree.get(id).name),
            fixed_instruction,
            processes_requests: tools.iter().any(|t| t.processes_requests()),
            reads_artifacts: tree
                .get(id)
                .as_llm()
                .is_some_and(|l| l.instruction.contains("artifact.")),
            declarations: Arc::new(declarations),
            provider_tools,
            task_completed,
            tools,
        }
    }
}

/// The artifacts an instruction names (`{artifact.NAME}`), loaded before the request is
/// built so that building stays synchronous under the session lock.
async fn instruction_artifacts(
    ctx: &InvocationContext,
    instruction: &str,
) -> HashMap<String, Option<String>> {
    let mut out = HashMap::new();
    let names: Vec<String> = crate::template::keys_in(ctx.template_dialect(), instruction)
        .into_iter()
        .filter(|k| k.artifact)
        .map(|k| k.name)
        .collect();
    let Some(store) = ctx.artifacts() else {
        return out;
    };
    for name in names {
        let key = {
            let s = ctx.session().lock();
            crate::artifact::ArtifactKey {
                app: s.app_name.clone(),
                user: s.user_id.clone(),
                session: s.id.clone(),
                name: name.clone(),
            }
        };
        let text = match store.load(&key, None).await {
            Ok(Some(a)) => Some(a.as_text().map_or_else(
                || format!("[{} bytes of {}]", a.data.len(), a.mime_type),
                str::to_owned,
            )),
            _ => None,
        };
        out.insert(name, text);
    }
    out
}

fn build_request(
    ctx: &InvocationContext,
    id: AgentId,
    prepared: &Prepared,
    artifacts: &HashMap<String, Option<String>>,
) -> Result<LlmRequest, RunError> {
    let tree = ctx.tree();
    let node = tree.get(id);
    let Some(llm) = node.as_llm() else {
        return Ok(LlmRequest::default());
    };
    // A workflow node's state taken before its model call, when it was (see
    // `StateAtStart`); else the live session's.
    let taken = ctx.take_instruction_state();
    let mut session = ctx.session().lock();
    let instructions = match &prepared.constant_system {
        Some(system) => instructions::Instructions {
            system: Arc::clone(system),
            in_contents: None,
        },
        None => instructions::system_instruction(
            tree,
            id,
            &|k: &str| match &taken {
                Some(state) => state.get(k).cloned(),
                None => session.get(k).cloned(),
            },
            &prepared.fixed_instruction,
            artifacts,
            prepared.task_completed,
            ctx.runs_adk2(),
        )?,
    };
    let contents = match (ctx.node_input(), llm.include_contents) {
        (Some(input), include) => Arc::new(contents::with_node_input(
            &session.events,
            &node.name,
            ctx.branch(),
            include == IncludeContents::None,
            input,
            ctx.runs_adk2(),
        )),
        (None, IncludeContents::Default) if let Some(path) = ctx.node_path() => {
            Arc::new(contents::node_history(
                &session.events,
                &node.name,
                ctx.branch(),
                path,
                ctx.runs_adk2(),
            ))
        }
        (None, IncludeContents::Default) => contents::build_shared(
            &mut session,
            &node.name,
            ctx.branch(),
            &prepared.view_key,
            ctx.runs_adk2(),
        ),
        (None, IncludeContents::None) => Arc::new(contents::build(
            &session.events,
            &node.name,
            ctx.branch(),
            true,
            ctx.runs_adk2(),
        )),
    };
    drop(session);
    let instruction_message = instructions.in_contents.map(|text| InstructionMessage {
        at: contents::instruction_position(&contents),
        content: Content::text(Role::User, text),
    });
    Ok(LlmRequest {
        model: Arc::clone(&prepared.model_name),
        system_instruction: Some(instructions.system),
        contents,
        tools: Arc::clone(&prepared.declarations),
        provider_tools: prepared.provider_tools.clone(),
        generation_config: llm.generate_content_config.clone(),
        output_schema: output::request_schema(llm),
        instruction_message,
    })
}

/// Lets each tool change the request that offers it (ADK runs these after the
/// instruction and contents processors, in tool order).
async fn process_request(
    ctx: &InvocationContext,
    agent: &str,
    tools: &[Arc<dyn Tool>],
    request: &mut LlmRequest,
) -> Result<(), RunError> {
    let mut tool_ctx = None;
    for tool in tools.iter().filter(|t| t.processes_requests()) {
        let tc = tool_ctx.get_or_insert_with(|| ctx.tool_context(agent, ""));
        tool.process_request(tc, request)
            .await
            .map_err(|source| RunError::ToolRequest {
                agent: agent.to_owned(),
                tool: tool.name().to_owned(),
                source,
            })?;
    }
    Ok(())
}

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
        // `output::accumulate`) in an ADK 2.13 run.
        let every_event = !ctx.in_graph_node();
        let mut node_text = (ctx.runs_adk2() && output_schema.is_none())
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
                    output::accumulate(&mut event, key, text, every_event);
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
