//! The LLM flow in live mode: one agent's part of a live run.
//!
//! The agent builds its request as in `run` (instruction, tools, history), opens a live
//! connection, sends the history, then waits on two things at once: its model and the
//! client's queue. Model output becomes ADK's live events (each text chunk a partial
//! event, the merged text a final one, a bare `turnComplete` at the end of a turn);
//! function calls run as soon as they arrive, concurrently, and their responses go back
//! to the model. The agent's part ends with [`LiveItem::Done`], which hands the client's
//! queue to whoever runs next: the target of a `transfer_to_agent`, the next step after
//! `task_completed`, or nobody when the client closed the queue.
//!
//! With a turn-based connection (the scripted model, the text live mode) the next input
//! is read only once the model's turn has settled, so such runs are deterministic.

use super::request::{
    Prepared, build_request, effective_tools, instruction_artifacts, process_request,
};
use super::{finalize_calls, functions, hooks, instructions, transfer_target};
mod audio;
mod turn;

use crate::callback::Answer;
use crate::event::{Content, Event, FunctionResponse, Part, Role, StateMap};
use crate::invocation::{InvocationContext, RunError};
use crate::model::CallContext;
use crate::model::live::{
    self, LiveConnection, LiveError, LiveMessage, LiveRequest, LiveRequestReceiver, LiveRunConfig,
};
use crate::names;
use crate::tool::Tool;
use crate::tool::builtin::TaskCompleted;
use crate::tree::AgentId;
use audio::AudioCache;
use futures::stream::BoxStream;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use turn::TurnText;

/// What a live agent yields.
pub enum LiveItem {
    /// An event to commit (unless partial or inline media) and to yield to the client.
    Event(Event),
    /// An event to commit without yielding it: the user's own content.
    Store(Event),
    /// The agent's part is over; the client's queue goes to whoever runs next.
    Done(LiveRequestReceiver, LiveEnd),
}

/// Why an agent's part of a live run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveEnd {
    /// `transfer_to_agent`: this agent runs next, with the same queue.
    TransferTo(AgentId),
    /// `task_completed`: the next step of the enclosing SequentialAgent runs.
    TaskCompleted,
    /// A tool ended the invocation.
    EndInvocation,
    /// The client closed the queue, or the model ended the connection.
    Closed,
    /// A workflow agent ran all its steps.
    Finished,
}

/// The stream of a live agent; an `Err` ends the run.
pub type LiveStream = BoxStream<'static, Result<LiveItem, RunError>>;

/// What the select loop picked.
enum Next {
    Model(Option<Result<LiveMessage, LiveError>>),
    Client(LiveRequest),
}

/// Drops inline media from the history sent to a newly connected model, as ADK does.
fn without_media(contents: Vec<Content>) -> Vec<Content> {
    contents
        .into_iter()
        .filter_map(|mut c| {
            c.parts
                .retain(|p| !p.inline_data.as_ref().is_some_and(|b| b.is_media()));
            (!c.parts.is_empty()).then_some(c)
        })
        .collect()
}

/// What a model event of the live flow gets before it is yielded: the after_model hooks,
/// state written by before_model hooks, and the output_key.
struct Sealer<'a> {
    ctx: &'a InvocationContext,
    agent: &'a str,
    hooks: &'a crate::callback::Hooks,
    output_key: Option<&'a str>,
    output_schema: Option<&'a crate::model::schema::OutputSchema>,
    pending_delta: StateMap,
}

impl Sealer<'_> {
    /// The merged text of the turn so far, sealed, if there is any.
    fn flush(&mut self, turn: &mut TurnText, interrupted: bool) -> Result<Option<Event>, RunError> {
        let Some(mut event) = turn.flush(interrupted) else {
            return Ok(None);
        };
        self.seal(&mut event)?;
        Ok(Some(event))
    }

    fn seal(&mut self, event: &mut Event) -> Result<(), RunError> {
        if !self.hooks.after_model.is_empty() {
            hooks::after_model(self.ctx, self.agent, &self.hooks.after_model, event)?;
        }
        for (k, v) in std::mem::take(&mut self.pending_delta) {
            event.actions.state_delta.insert_if_absent(k, v);
        }
        // As ADK's `_run_live_impl`: a text turn is checked against the output schema
        // (an audio turn has no text part, so nothing is checked or stored).
        super::output::save_output(event, self.agent, self.output_key, self.output_schema)?;
        Ok(())
    }
}

/// A before_model reply standing in for a model turn: the text as one chunk, the merged
/// text (sealed as a model event is: after_model, state, output_key), the bare
/// `turnComplete`.
fn stand_in(
    sealer: &mut Sealer<'_>,
    turn: &mut TurnText,
    text: String,
) -> Result<Vec<Event>, RunError> {
    let mut out = Vec::new();
    let (flushed, chunk) = turn.chunk(text, false);
    if let Some(mut event) = flushed {
        sealer.seal(&mut event)?;
        out.push(event);
    }
    out.push(chunk);
    out.extend(sealer.flush(turn, false)?);
    let mut event = turn.event(sealer.agent);
    event.turn_complete = Some(true);
    out.push(event);
    Ok(out)
}

/// Whether a message belongs to a model turn (so its first one counts as a model call).
fn opens_turn(m: &LiveMessage) -> bool {
    matches!(
        m,
        LiveMessage::Text { .. }
            | LiveMessage::Media(_)
            | LiveMessage::FunctionCalls(_)
            | LiveMessage::OutputTranscription(_)
    )
}

/// The tools of a live agent: as in `run`, plus `task_completed` for every step of a
/// SequentialAgent (offered in the request only; the agent tree is not changed).
fn live_tools(ctx: &InvocationContext, id: AgentId, targets: &[AgentId]) -> Vec<Arc<dyn Tool>> {
    let mut tools = effective_tools(ctx.tree(), id, targets);
    if instructions::in_sequence(ctx.tree(), id)
        && !tools.iter().any(|t| t.name() == names::TASK_COMPLETED)
    {
        tools.push(Arc::new(TaskCompleted));
    }
    tools
}

/// Runs an LLM agent's part of a live run, reading the client's requests from `input`.
pub fn run_llm_agent_live(
    ctx: InvocationContext,
    id: AgentId,
    mut input: LiveRequestReceiver,
    config: Arc<LiveRunConfig>,
) -> LiveStream {
    Box::pin(async_stream::try_stream! {
        let tree = ctx.tree();
        let node = tree.get(id);
        let name = node.name.clone();
        let Some(llm) = node.as_llm() else {
            yield LiveItem::Done(input, LiveEnd::Finished);
            return;
        };
        let live_err = |source: LiveError| RunError::Live { agent: name.clone(), source };
        let targets = tree.transfer_targets(id);
        let tools = live_tools(&ctx, id, &targets);
        let artifacts = if llm.instruction.contains("artifact.") {
            instruction_artifacts(&ctx, &llm.instruction).await
        } else {
            HashMap::new()
        };
        let sequence_step = instructions::in_sequence(tree, id);
        let prepared = Prepared::with_tools(tree, id, &targets, tools.clone(), sequence_step);
        let mut request = build_request(&ctx, id, &prepared, &artifacts)?;
        process_request(&ctx, &name, &tools, &mut request).await?;
        let before = hooks::run(&ctx, &name, &node.hooks.before_model, None)?;
        let mut history = without_media(request.take_messages());
        let call = CallContext { agent_name: &name, stream: true, conversation: ctx.conversation(), graph_node: false };
        let mut conn: Box<dyn LiveConnection> =
            live::connect(&llm.model, &request, &config, call).await.map_err(live_err)?;
        drop(request);
        let mut sealer = Sealer {
            ctx: &ctx,
            agent: &name,
            hooks: &node.hooks,
            output_key: llm.output_key.as_deref(),
            output_schema: llm.output_schema.as_deref(),
            pending_delta: before.state_delta,
        };
        let mut turn = TurnText {
            invocation_id: ctx.invocation_id().to_owned(),
            agent: name.clone(),
            branch: ctx.branch().map(str::to_owned),
            text: String::new(),
            thought: false,
            heard: String::new(),
            said: String::new(),
        };
        // A before_model reply stands in for the turn the model would take at connect
        // (history that ends with the user); the model gets the reply as context.
        let owes_turn = history.last().is_some_and(|c| c.role == Some(Role::User));
        if let (true, Some(Answer::Reply(text))) = (owes_turn, before.answer) {
            let events = stand_in(&mut sealer, &mut turn, text)?;
            history.extend(events.iter().filter(|e| !e.is_partial()).filter_map(|e| e.content.clone()));
            for event in events {
                yield LiveItem::Event(event);
            }
        }
        if !history.is_empty() {
            conn.send_history(&history).await.map_err(live_err)?;
            super::trace::send_data(&ctx, &history);
        }
        let mut turn_open = false;
        // The turn's audio, kept when the run config asks (ADK's save_live_blob).
        let save_audio = config.save_live_blob;
        let mut audio = AudioCache::default();
        // Model messages that arrived while tools ran, handled next.
        let mut deferred: VecDeque<Option<Result<LiveMessage, LiveError>>> = VecDeque::new();
        loop {
            let next = match deferred.pop_front() {
                Some(m) => Next::Model(m),
                None => {
                    let wait_for_model = conn.turn_based() && conn.busy();
                    tokio::select! {
                        biased;
                        m = conn.receive() => Next::Model(m),
                        r = input.recv(), if !wait_for_model => Next::Client(r),
                    }
                }
            };
            let message = match next {
                Next::Client(LiveRequest::Close) => {
                    conn.close().await;
                    for event in audio.flush(&ctx, &name, true, true).await {
                        yield LiveItem::Event(event);
                    }
                    yield LiveItem::Done(input, LiveEnd::Closed);
                    return;
                }
                Next::Client(LiveRequest::Content(content)) => {
                    let mut event = turn.event(names::USER);
                    event.content = Some(content.clone());
                    yield LiveItem::Store(event);
                    // before_model runs before each user turn reaches the model, as before
                    // each model call in `run`; a reply stands in for the model's turn.
                    let before = hooks::run(&ctx, &name, &node.hooks.before_model, None)?;
                    for (k, v) in before.state_delta {
                        sealer.pending_delta.insert(k, v);
                    }
                    if let Some(Answer::Reply(text)) = before.answer {
                        let events = stand_in(&mut sealer, &mut turn, text)?;
                        let mut context = vec![content];
                        context.extend(events.iter().filter(|e| !e.is_partial()).filter_map(|e| e.content.clone()));
                        for event in events {
                            yield LiveItem::Event(event);
                        }
                        conn.send_context(&context).await.map_err(live_err)?;
                        continue;
                    }
                    conn.send_content(&content).await.map_err(live_err)?;
                    continue;
                }
                Next::Client(LiveRequest::Realtime(r)) => {
                    if let (true, live::RealtimeInput::Blob(blob)) = (save_audio, &r) {
                        audio.cache(true, blob);
                    }
                    conn.send_realtime(&r).await.map_err(live_err)?;
                    continue;
                }
                Next::Model(None) => {
                    for event in audio.flush(&ctx, &name, true, true).await {
                        yield LiveItem::Event(event);
                    }
                    yield LiveItem::Done(input, LiveEnd::Closed);
                    return;
                }
                Next::Model(Some(m)) => m.map_err(live_err)?,
            };
            if !turn_open && opens_turn(&message) {
                ctx.count_llm_call(id)?;
                turn_open = true;
            }
            match message {
                LiveMessage::Text { text, thought } => {
                    let (flushed, chunk) = turn.chunk(text, thought);
                    if let Some(mut event) = flushed {
                        sealer.seal(&mut event)?;
                        yield LiveItem::Event(event);
                    }
                    yield LiveItem::Event(chunk);
                }
                LiveMessage::Media(blob) => {
                    if let Some(event) = sealer.flush(&mut turn, false)? {
                        yield LiveItem::Event(event);
                    }
                    if save_audio {
                        audio.cache(false, &blob);
                    }
                    let mut event = turn.event(&name);
                    event.content = Some(Content::new(
                        Role::Model,
                        vec![Part { inline_data: Some(Box::new(blob)), ..Part::default() }],
                    ));
                    yield LiveItem::Event(event);
                }
                LiveMessage::InputTranscription(t) => {
                    for event in turn.transcription(true, t) {
                        yield LiveItem::Event(event);
                    }
                }
                LiveMessage::OutputTranscription(t) => {
                    for event in turn.transcription(false, t) {
                        yield LiveItem::Event(event);
                    }
                }
                LiveMessage::Interrupted => {
                    match sealer.flush(&mut turn, true)? {
                        Some(event) => yield LiveItem::Event(event),
                        None => {
                            let mut event = turn.event(&name);
                            event.interrupted = Some(true);
                            yield LiveItem::Event(event);
                        }
                    }
                    for event in turn.finish_transcriptions() {
                        yield LiveItem::Event(event);
                    }
                    // The model stops: its audio so far is saved.
                    for event in audio.flush(&ctx, &name, false, true).await {
                        yield LiveItem::Event(event);
                    }
                }
                LiveMessage::GenerationComplete => {
                    for event in turn.finish_transcriptions() {
                        yield LiveItem::Event(event);
                    }
                }
                LiveMessage::TurnComplete => {
                    if let Some(event) = sealer.flush(&mut turn, false)? {
                        yield LiveItem::Event(event);
                    }
                    for event in turn.finish_transcriptions() {
                        yield LiveItem::Event(event);
                    }
                    for event in audio.flush(&ctx, &name, true, true).await {
                        yield LiveItem::Event(event);
                    }
                    let mut event = turn.event(&name);
                    event.turn_complete = Some(true);
                    yield LiveItem::Event(event);
                    turn_open = false;
                }
                LiveMessage::Usage(usage) => {
                    let mut event = turn.event(&name);
                    event.meta_mut().usage_metadata = Some(usage);
                    yield LiveItem::Event(event);
                }
                LiveMessage::Error { code, message } => {
                    if let Some(event) = sealer.flush(&mut turn, false)? {
                        yield LiveItem::Event(event);
                    }
                    let mut event = turn.event(&name);
                    event.set_error(Some(code.into()), message.map(Into::into));
                    yield LiveItem::Event(event);
                    turn_open = false;
                }
                LiveMessage::Resumption { handle, resumable } => {
                    let mut event = turn.event(&name);
                    let mut update = serde_json::Map::new();
                    if let Some(h) = handle {
                        update.insert("newHandle".into(), h.into());
                    }
                    update.insert("resumable".into(), resumable.into());
                    event.meta_mut().live_session_resumption_update = Some(update.into());
                    yield LiveItem::Event(event);
                }
                LiveMessage::ToolCallCancellation(_) => {
                    // Nothing is running: the calls it names were answered already.
                }
                LiveMessage::FunctionCalls(calls) => {
                    if let Some(event) = sealer.flush(&mut turn, false)? {
                        yield LiveItem::Event(event);
                    }
                    let mut event = turn.event(&name);
                    event.content = Some(Content::new(
                        Role::Model,
                        calls.into_iter().map(Part::function_call).collect(),
                    ));
                    finalize_calls(&mut event, &tools, &mut Vec::new());
                    sealer.seal(&mut event)?;
                    let calls: Vec<_> = event.function_calls().cloned().collect();
                    let ids: Vec<String> = calls.iter().filter_map(|c| c.id.clone()).collect();
                    yield LiveItem::Event(event);
                    let site = functions::CallSite { tools: &tools, hooks: &node.hooks, ctx: &ctx, agent: &name, author: &prepared.author, trace: ctx.trace_parent() };
                    let mut cancelled: HashSet<String> = HashSet::new();
                    let outcome = {
                        let running = functions::execute(calls, &site);
                        tokio::pin!(running);
                        loop {
                            tokio::select! {
                                biased;
                                outcome = &mut running => break Some(outcome),
                                m = conn.receive() => match m {
                                    Some(Ok(LiveMessage::ToolCallCancellation(c))) => {
                                        cancelled.extend(c);
                                        if ids.iter().all(|id| cancelled.contains(id)) {
                                            // Every call of the batch withdrawn: stop the tools.
                                            break None;
                                        }
                                    }
                                    other => {
                                        let ended = other.is_none();
                                        deferred.push_back(other);
                                        if ended {
                                            break Some(running.await);
                                        }
                                    }
                                },
                            }
                        }
                    };
                    let Some(outcome) = outcome else { continue };
                    let outcome = outcome.map_err(|source| RunError::Callback { agent: name.clone(), source })?;
                    let Some(mut response_event) = outcome.event else {
                        // Only long-running calls, waiting for the client.
                        continue;
                    };
                    if let Some(content) = response_event.content.as_mut().filter(|_| !cancelled.is_empty()) {
                        // Calls the model withdrew get no response.
                        content.parts.retain(|p| {
                            p.function_response.as_ref().and_then(|r| r.id.as_ref()).is_none_or(|id| !cancelled.contains(id))
                        });
                    }
                    let transfer = response_event.actions.transfer_to_agent.clone();
                    let completed = response_event
                        .function_responses()
                        .any(|r| r.name == names::TASK_COMPLETED);
                    let responses: Vec<FunctionResponse> =
                        response_event.function_responses().cloned().collect();
                    yield LiveItem::Event(response_event);
                    if transfer.is_some() || completed || outcome.end_invocation {
                        // The agent's part ends: its audio so far is saved.
                        for event in audio.flush(&ctx, &name, true, true).await {
                            yield LiveItem::Event(event);
                        }
                    }
                    if let Some(target) = transfer {
                        conn.close().await;
                        let target = transfer_target(tree, &name, target.into())?;
                        yield LiveItem::Done(input, LiveEnd::TransferTo(target));
                        return;
                    }
                    if completed {
                        conn.close().await;
                        yield LiveItem::Done(input, LiveEnd::TaskCompleted);
                        return;
                    }
                    if outcome.end_invocation {
                        conn.close().await;
                        yield LiveItem::Done(input, LiveEnd::EndInvocation);
                        return;
                    }
                    conn.send_tool_responses(&responses).await.map_err(live_err)?;
                }
            }
        }
    })
}
