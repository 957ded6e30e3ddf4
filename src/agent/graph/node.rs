//! One run of one workflow node: an LLM node (single-turn, its input a user message that
//! is never stored), an `adk_flow.Router`, a `JoinNode`, or a nested workflow. Each yields
//! its events with ADK 2.13's `nodeInfo` and ends with its [`Outcome`]; a failure is one
//! error event authored by the workflow, then a failed outcome.

use super::info::{self, Kind};
use super::lanes::{
    TOOLS_HOPS, calls_agent_tool, calls_tool, has_tools, next_hops, seeds_agent_tool,
};
pub(super) use super::output::Output;
use super::output::{TextSoFar, holds_content, is_content, is_text_message};
use super::workflow::Workflow;
use super::{Item, NodeRun};
use crate::errors;
use crate::event::{Content, Event, Role};
use crate::flow::{FlowItem, FlowStream, run_llm_agent};
use crate::invocation::{InvocationContext, NodeInput, RunError, StateAtStart};
use crate::pyrepr::py_repr;
use crate::template::TemplateError;
use crate::tree::{AgentId, AgentKind, Graph, GraphNode, GraphNodeKind};
use futures::StreamExt;
use serde_json::Value;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

/// How a node run ended.
#[derive(Debug, Clone, Default)]
pub(super) struct Outcome {
    /// Its output (`None`: no output).
    pub(super) output: Option<Output>,
    /// The event that carries the route it emitted (in `actions.route`), shared rather
    /// than copied.
    pub(super) route: Option<Arc<Event>>,
    /// The branch it ran on.
    pub(super) branch: Option<String>,
    /// It failed: the error event that reported the failure (already yielded), shared,
    /// so the root workflow's run error can say which node failed and why.
    pub(super) failure: Option<Arc<Event>>,
    /// It waits for the client: a long-running call of an LLM node (or of a node of a
    /// nested workflow) is unanswered. ADK 2.13 marks it WAITING: no output, no edge
    /// fires, and its workflows end without output.
    pub(super) interrupted: bool,
    /// Its agent called `transfer_to_agent` naming itself (and ran again): ADK 2.13's
    /// workflow then fails with a WorkflowDataError once the node completes. The name.
    pub(super) transferred_to_self: Option<Arc<str>>,
}

/// One node run under way, polled by its workflow.
pub(super) enum NodeStream {
    /// An LLM node.
    Llm(Llm),
    /// A Router or a JoinNode: one event, then the outcome, made when first polled (as
    /// ADK runs a node when its task starts, seeing the state as it is then).
    Quick(Quick),
    /// A nested workflow.
    Workflow(Box<Workflow>),
}

impl NodeStream {
    /// Starts node `run` of `graph`.
    pub(super) fn new(ctx: &InvocationContext, graph: &Graph, run: NodeRun) -> NodeStream {
        match &graph.nodes[run.node].kind {
            GraphNodeKind::Agent(id) if matches!(ctx.tree().get(*id).kind, AgentKind::Graph(_)) => {
                let (path, output_for) = (Arc::clone(run.path()), run.output_for().cloned());
                NodeStream::Workflow(Box::new(Workflow::new(
                    ctx.clone(),
                    *id,
                    path,
                    run.input,
                    output_for,
                    run.branch,
                )))
            }
            GraphNodeKind::Agent(id) => NodeStream::Llm(Llm {
                id: *id,
                hops: if has_tools(ctx, *id) { TOOLS_HOPS } else { 0 },
                state_at_start: has_tools(ctx, *id).then(StateAtStart::default),
                tool_state: calls_agent_tool(ctx, *id).then(StateAtStart::default),
                seeds: false,
                text_so_far: adds_up_text(ctx, *id).then(TextSoFar::default),
                run,
                state: LlmState::Start,
                outcome: Outcome::default(),
            }),
            GraphNodeKind::Router(_) | GraphNodeKind::Join => NodeStream::Quick(Quick {
                run,
                done: None,
                ended: false,
            }),
        }
    }

    /// Its task goes on and will make its next item after [`NodeStream::hops`] entries:
    /// an LLM node whose next item is a model call after converting its tools templates
    /// its instruction now, as ADK 2.13 does, so the state it reads is taken now.
    pub(super) fn going_on(&self, ctx: &InvocationContext) {
        if let NodeStream::Llm(llm) = self
            && llm.hops == TOOLS_HOPS
            && let Some(cell) = &llm.state_at_start
        {
            let state = ctx.session().lock().visible_state();
            *cell.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
        }
        if let NodeStream::Llm(llm) = self
            && let Some(cell) = &llm.tool_state
        {
            *cell.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// Its task went through one more entry, `left` before its next item: an AgentTool
    /// call's tool starts 4 entries after its call was stored, and ADK
    /// 2.13 seeds the agent's session with the state stored by then.
    pub(super) fn waited(&self, left: u32, ctx: &InvocationContext) {
        if let NodeStream::Llm(llm) = self
            && llm.seeds
            && seeds_agent_tool(llm.hops, left)
            && let Some(cell) = &llm.tool_state
        {
            let state = ctx.session().lock().visible_state();
            *cell.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
        }
    }

    /// Its next item; `ctx` is its workflow's (the node runs of a workflow share it rather
    /// than each holding a copy).
    pub(super) fn poll_item(
        &mut self,
        ctx: &InvocationContext,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Item>> {
        match self {
            NodeStream::Llm(llm) => llm.poll_item(ctx, cx),
            NodeStream::Quick(quick) => Poll::Ready(quick.next(ctx)),
            // A nested workflow is run entry by entry by its lane (see `super::lanes`).
            NodeStream::Workflow(_) => Poll::Ready(None),
        }
    }

    /// The ready-queue entries ADK's task of this node goes through, once it goes on
    /// (it started, or its last event was stored), before it makes its next item, known
    /// before that item is made (a model is called when ADK calls it). A Router, a
    /// JoinNode and an LLM node's plain model call put their event at once, and an end
    /// comes at once; a model call of an agent with tools first converts them in a
    /// `gather` of tasks (three entries: the task, the gather's callback, the node's
    /// task); a function call's response comes after preparing and executing the calls
    /// in two such gathers (six), and an AgentTool's after its agent's run as well, with
    /// a runner of its own (fifteen when that agent makes one event).
    pub(super) fn hops(&self) -> u32 {
        match self {
            NodeStream::Llm(llm) if matches!(llm.state, LlmState::Start | LlmState::Flow(_)) => {
                llm.hops
            }
            _ => 0,
        }
    }
}

/// A Router or JoinNode run.
pub(super) struct Quick {
    run: NodeRun,
    /// Its outcome, once its event was yielded.
    done: Option<Outcome>,
    ended: bool,
}

impl Quick {
    fn next(&mut self, ctx: &InvocationContext) -> Option<Item> {
        if let Some(outcome) = self.done.take() {
            self.ended = true;
            return Some(Item::Done(outcome));
        }
        if self.ended {
            return None;
        }
        let (event, outcome) =
            match super::graph_of(ctx, self.run.workflow).map(|g| &g.nodes[self.run.node]) {
                Some(GraphNode {
                    name,
                    kind: GraphNodeKind::Router(router),
                    ..
                }) => super::router::router(ctx, router, name, &mut self.run),
                Some(_) => join(ctx, &mut self.run),
                None => {
                    self.ended = true;
                    return None;
                }
            };
        let mut outcome = outcome;
        if event.actions.route.is_some() {
            outcome.route = Some(Arc::clone(&event));
        }
        if event.output.is_some() {
            // The output goes on in its event, not copied.
            outcome.output = Some(Output::Event(Arc::clone(&event)));
        }
        self.done = Some(outcome);
        Some(Item::Event(event))
    }
}

/// A JoinNode: its input, a mapping of its predecessors' outputs, is its output (the
/// event's, which the outcome then shares).
fn join(ctx: &InvocationContext, run: &mut NodeRun) -> (Arc<Event>, Outcome) {
    let output = run.input.take().map_or(Value::Null, Output::into_value);
    let mut shared = Arc::new(node_event(ctx, run, Kind::Output));
    // Just made: not shared, nothing is cloned.
    Arc::make_mut(&mut shared).output = Some(Box::new(output));
    (shared, Outcome::in_event(run))
}

impl Outcome {
    /// The outcome of a Router or JoinNode: its output and route stay in its event (the
    /// workflow reads them from there once the event is shared); only the branch is here.
    pub(super) fn in_event(run: &NodeRun) -> Outcome {
        Outcome {
            branch: run.branch.clone(),
            ..Outcome::default()
        }
    }

    /// The outcome of a run that failed with `event`, its error event (yielded first).
    pub(super) fn failed(event: &Arc<Event>) -> Outcome {
        Outcome {
            failure: Some(Arc::clone(event)),
            ..Outcome::default()
        }
    }
}

/// An event of the node authored by its workflow (sharing the workflow's name and the
/// invocation id with the invocation's other events), with the `nodeInfo` of `kind`.
pub(super) fn node_event(ctx: &InvocationContext, run: &NodeRun, kind: Kind) -> Event {
    let mut event = ctx.new_event(Arc::clone(&run.workflow_name));
    event.branch = run.branch.as_deref().map(Box::from);
    event.node_info = Some(info::of(run, kind));
    event
}

/// The error event of a failed node, as ADK's NodeRunner makes it.
pub(super) fn failure(
    ctx: &InvocationContext,
    run: &NodeRun,
    code: &str,
    message: String,
) -> Event {
    let mut event = node_event(ctx, run, Kind::Plain);
    event.set_error(Some(code.into()), Some(message.into()));
    event
}

/// The errorCode and errorMessage ADK 2.13 gives a node failure of this kind.
fn error_fields(err: &RunError) -> (String, String) {
    match err {
        RunError::Template {
            agent,
            source: TemplateError::MissingKey { key },
        } => (
            "KeyError".into(),
            py_repr(&Value::String(format!(
                "Context variable not found: `{key}` in agent '{agent}'."
            ))),
        ),
        RunError::Template {
            agent,
            source: TemplateError::MissingArtifact { name },
        } => (
            "KeyError".into(),
            py_repr(&Value::String(format!(
                "Artifact '{name}' not found in agent '{agent}'."
            ))),
        ),
        RunError::LlmCallsLimit { limit, .. } => (
            "LlmCallsLimitExceededError".into(),
            format!("Max number of llm calls limit of `{limit}` exceeded"),
        ),
        other => (other.code().into_owned(), errors::chain(other)),
    }
}

/// An LLM node: the flow with the input as a user message; its last text is its output.
pub(super) struct Llm {
    id: AgentId,
    /// The entries its task goes through before its next item (see [`NodeStream::hops`]).
    hops: u32,
    /// With tools: the state its next instruction reads, taken as its task goes on
    /// (see [`NodeStream::going_on`]).
    state_at_start: Option<StateAtStart>,
    /// With an AgentTool: the caller's state its agent is seeded with, taken at ADK's
    /// entry (see [`NodeStream::waited`]).
    tool_state: Option<StateAtStart>,
    /// Its last event calls an AgentTool, so the caller's state is taken for it: only an
    /// AgentTool's agent reads it, and a plain call need not copy the whole state.
    seeds: bool,
    /// With an `output_key` (and no output schema): the node's text so far for it.
    text_so_far: Option<TextSoFar>,
    run: NodeRun,
    state: LlmState,
    outcome: Outcome,
}

enum LlmState {
    /// Not polled yet.
    Start,
    /// The flow runs.
    Flow(FlowStream),
    /// It failed: its outcome is next.
    Failed,
    /// Its outcome was yielded.
    Ended,
}

impl Llm {
    /// The node's flow, set up as it starts: its input (taken from the run) as a user
    /// message never stored.
    fn flow(&mut self, ctx: &InvocationContext) -> FlowStream {
        let input = self.run.input.take();
        let run = &self.run;
        let from = ctx.session().lock().events.len();
        let sees_history = ctx
            .tree()
            .get(self.id)
            .as_llm()
            .is_some_and(|l| l.include_contents == crate::tree::IncludeContents::Default);
        let content = match input {
            // The turn's message as its text: the message itself when that is all it is,
            // shared rather than copied.
            Some(Output::User(text)) => Some(match ctx.user_content() {
                Some(message) if is_text_message(message, &text) => Arc::clone(message),
                _ => Arc::new(Content::text(Role::User, text)),
            }),
            // An empty text is no input: ADK stores it as a user message with an empty
            // part, which its contents skip as invisible, so the model sees the turn's
            // message (recorded case `empty_text_input`).
            Some(output) => output
                .into_message()
                .filter(|text| !text.is_empty())
                .map(|text| Arc::new(Content::text(Role::User, text))),
            None => None,
        };
        let input = match content {
            Some(content) => Some(NodeInput { content, from }),
            // No input: a single-turn node sees the turn's user message (one that sees
            // the history has it there already).
            None if !sees_history => ctx.user_content().map(|c| NodeInput {
                content: Arc::clone(c),
                from,
            }),
            None => None,
        };
        run_llm_agent(
            ctx.for_node(
                run.branch.clone(),
                Arc::clone(run.path()),
                input,
                self.state_at_start.clone(),
            )
            .with_tool_state(self.tool_state.clone()),
            self.id,
        )
    }

    /// It failed with `event`: the event is its next item, then its failed outcome.
    fn fail(&mut self, event: Event) -> Poll<Option<Item>> {
        let event = Arc::new(event);
        self.state = LlmState::Failed;
        self.outcome.failure = Some(Arc::clone(&event));
        Poll::Ready(Some(Item::Event(event)))
    }

    fn poll_item(
        &mut self,
        ctx: &InvocationContext,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Item>> {
        loop {
            let flow = match &mut self.state {
                LlmState::Start => {
                    self.outcome.branch = self.run.branch.clone();
                    let input = self.run.input.as_ref().and_then(Output::value);
                    if input.is_some_and(|v| !is_content(v) && holds_content(v)) {
                        // ADK json.dumps the input, which a Content inside stops.
                        let message = "Object of type Content is not JSON serializable".to_owned();
                        return self.fail(failure(ctx, &self.run, "TypeError", message));
                    }
                    self.state = LlmState::Flow(self.flow(ctx));
                    continue;
                }
                LlmState::Flow(flow) => flow,
                LlmState::Failed => {
                    self.state = LlmState::Ended;
                    let outcome = std::mem::take(&mut self.outcome);
                    return Poll::Ready(Some(Item::Done(outcome)));
                }
                LlmState::Ended => return Poll::Ready(None),
            };
            match std::task::ready!(flow.poll_next_unpin(cx)) {
                Some(Ok(FlowItem::Event(mut event))) => {
                    let mut output = false;
                    if !event.is_partial() {
                        let name = &ctx.tree().get(self.id).name;
                        if *event.author == **name && event.actions.route.is_some() {
                            self.outcome.route = Some(Arc::clone(&event));
                        }
                        if event.actions.transfer_to_agent.as_deref() == Some(name.as_str()) {
                            self.outcome.transferred_to_self = Some(Arc::clone(&event.author));
                        }
                        if event
                            .long_running_tool_ids
                            .as_ref()
                            .is_some_and(|ids| !ids.is_empty())
                        {
                            self.outcome.interrupted = true;
                        }
                        output = is_reply(&event);
                    }
                    self.hops = next_hops(ctx, self.id, &event);
                    self.seeds = self.tool_state.is_some()
                        && calls_tool(ctx, self.id, &event, crate::tool::is_agent_tool);
                    let kind = if output { Kind::Message } else { Kind::Plain };
                    let own = Arc::make_mut(&mut event);
                    own.node_info = Some(info::of(&self.run, kind));
                    if let Some(text) = &mut self.text_so_far
                        && !own.is_partial()
                        && let Some(key) = output_key(ctx, self.id)
                    {
                        text.add(own, key, self.outcome.output.as_ref(), output);
                    }
                    if output {
                        // Once the event is complete: the output may share it.
                        self.outcome.output = Some(Output::reply(&event));
                    }
                    return Poll::Ready(Some(Item::Event(event)));
                }
                // A node has no transfer targets; nothing to run.
                Some(Ok(FlowItem::TransferTo(..))) => {}
                Some(Err(RunError::AgentNotFound { agent, target, .. })) => {
                    // ADK 2.13 raises this inside the agent: its event is the node's.
                    let mut event = failure(
                        ctx,
                        &self.run,
                        "ValueError",
                        format!("Agent {target} not found in the agent tree."),
                    );
                    event.author = Arc::from(agent.as_str());
                    return self.fail(event);
                }
                Some(Err(err)) => {
                    let (code, message) = error_fields(&err);
                    return self.fail(failure(ctx, &self.run, &code, message));
                }
                None => {
                    self.state = LlmState::Ended;
                    let outcome = std::mem::take(&mut self.outcome);
                    return Poll::Ready(Some(Item::Done(outcome)));
                }
            }
        }
    }
}

/// Whether the LLM node's agent `id` adds up its text for its `output_key`, as ADK 2.13
/// does without an output schema (see [`TextSoFar`]).
fn adds_up_text(ctx: &InvocationContext, id: AgentId) -> bool {
    ctx.tree()
        .get(id)
        .as_llm()
        .is_some_and(|l| l.output_key.is_some() && l.output_schema.is_none())
}

/// The `output_key` of the LLM node's agent `id`.
fn output_key(ctx: &InvocationContext, id: AgentId) -> Option<&str> {
    ctx.tree().get(id).as_llm()?.output_key.as_deref()
}

/// Whether `event` is a model reply that is a node's output: a model message without
/// function calls (its output is its non-thought text, empty when it has none).
fn is_reply(event: &Event) -> bool {
    event
        .content
        .as_ref()
        .is_some_and(|c| c.role == Some(Role::Model))
        && event.function_calls().next().is_none()
}
