//! ADK 2 Workflow graphs at run time, as ADK 2.13's `Workflow` runs them: triggers queued
//! per node (FIFO by first queued), one run of a node at a time, at most
//! `max_concurrency` at once, edges fired by label, JoinNodes waiting for every
//! predecessor, the terminal-output rule, and a failing node ending every enclosing
//! workflow (`run.rs` keeps that state). Each node run (`node.rs`) and each workflow is a
//! stream polled by hand, not a generator: an event moves from the LLM flow (or a
//! Router) through one `poll_next` per level, never through a generator's slot. Runs on
//! lanes are polled together, and every event is yielded (and so committed) before its
//! node goes on.

mod clock;
mod info;
mod lanes;
mod node;
mod router;
mod run;

use crate::event::Event;
use crate::invocation::{EventStream, InvocationContext, RunError};
use crate::tree::{AgentId, AgentKind, Graph, GraphNodeKind};
use clock::{Clock, Due};
use futures::Stream;
use lanes::{Lane, Stepped};
use node::{NodeStream, Outcome};
use run::Run;
use serde_json::Value;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// What a node run (or a nested workflow) yields.
enum Item {
    /// An event to commit and show, in the `Arc` the session store keeps (see
    /// [`crate::invocation::EventStream`]).
    Event(Arc<Event>),
    /// The run ended.
    Done(Outcome),
}

/// One run of one node.
struct NodeRun {
    /// The workflow it belongs to.
    workflow: AgentId,
    /// That workflow's name (the author of its Router, JoinNode and failure events).
    workflow_name: Arc<str>,
    /// The node's index in the graph.
    node: usize,
    /// Its path and what its output counts for.
    at: At,
    /// Its input (`None`: none).
    input: Option<node::Output>,
    /// Its branch (`None`: the trunk).
    branch: Option<String>,
}

/// Where a node run is: its path (`WF@1/node@N`, shared with its events) and the paths its
/// output also counts for besides its own (its workflow's, when it is terminal, and up).
enum At {
    /// Both in the run's shared `nodeInfo`s, kept by its workflow's constants (a root
    /// workflow's first runs of each node), read from there rather than copied.
    Shared(Arc<info::Infos>),
    /// Its own (`output_for` `None`: none); each of its events gets its own `nodeInfo`.
    Own {
        path: Arc<str>,
        output_for: Option<Arc<[Arc<str>]>>,
    },
}

impl NodeRun {
    /// Its path.
    fn path(&self) -> &Arc<str> {
        match &self.at {
            At::Shared(infos) => &infos.path,
            At::Own { path, .. } => path,
        }
    }

    /// What its output also counts for besides its own path (`None`: nothing).
    fn output_for(&self) -> Option<&Arc<[Arc<str>]>> {
        match &self.at {
            At::Shared(infos) => infos.output_for.as_ref(),
            At::Own { output_for, .. } => output_for.as_ref(),
        }
    }
}

/// What every run of a workflow shares, computed once per workflow (see
/// [`crate::tree::AgentNode::prepared`]).
struct Consts {
    /// Its name, the author of its Router, JoinNode and failure events.
    name: Arc<str>,
    /// Its path as the root: `NAME@1`.
    root_path: Arc<str>,
    /// Per node: whether its output is read after it completes (it is terminal, or a
    /// JoinNode waits for it); the others' outputs only go to the nodes they trigger.
    keeps_output: Vec<bool>,
    /// As the root, what its terminal nodes' outputs also count for: `[NAME@1]`.
    root_terminal_for: Arc<[Arc<str>]>,
    /// As the root, its node runs' paths and `nodeInfo`s, shared by every invocation.
    root_infos: info::RootInfos,
}

impl Consts {
    fn of(ctx: &InvocationContext, id: AgentId) -> Arc<Consts> {
        let node = ctx.tree().get(id);
        node.prepared(|| {
            let keeps_output = graph_of(ctx, id).map_or_else(Vec::new, |g| {
                (0..g.nodes.len())
                    .map(|n| {
                        g.nodes[n].terminal
                            || g.edges.iter().any(|e| {
                                e.from == Some(n)
                                    && matches!(g.nodes[e.to].kind, GraphNodeKind::Join)
                            })
                    })
                    .collect()
            });
            let root_path: Arc<str> = Arc::from(format!("{}@1", node.name));
            Consts {
                name: Arc::from(node.name.as_str()),
                root_terminal_for: Arc::from([Arc::clone(&root_path)]),
                root_path,
                root_infos: info::RootInfos::new(keeps_output.len()),
                keeps_output,
            }
        })
    }
}

/// The graph of workflow `id`.
fn graph_of(ctx: &InvocationContext, id: AgentId) -> Option<&Graph> {
    match &ctx.tree().get(id).kind {
        AgentKind::Graph(graph) => Some(graph),
        _ => None,
    }
}

/// Runs the root workflow `id` for this invocation: from START with the user's message.
pub(super) fn run_graph(ctx: InvocationContext, id: AgentId) -> EventStream {
    let input = ctx.user_content().map(|c| {
        Value::String(
            c.parts
                .iter()
                .filter_map(|p| p.text.as_deref())
                .collect::<String>(),
        )
    });
    let branch = ctx.branch().map(str::to_owned);
    let path = Arc::clone(&Consts::of(&ctx, id).root_path);
    let input = input.map(node::Output::Value);
    let mut clock = Clock::default();
    let mut workflow = Workflow::new(ctx, id, path, input, None, branch);
    workflow.start(Due {
        at: clock.tick(),
        left: 0,
    });
    Box::pin(Root {
        workflow,
        clock,
        ended: false,
    })
}

/// The root workflow as the agent's event stream: its failure is a `WorkflowFailed`
/// error (already reported by the failing node's event). It owns the count of asyncio's
/// ready queue (see [`clock`]) and runs, entry by entry, whichever actor of the whole
/// tree (or the Runner's consumer) is due first.
struct Root {
    workflow: Workflow,
    clock: Clock,
    ended: bool,
}

impl Stream for Root {
    type Item = Result<Arc<Event>, RunError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        this.workflow.poll_io(&mut this.clock, cx);
        loop {
            let consumer = this.clock.consumer_due();
            let at = match (consumer, this.workflow.due(&this.clock)) {
                (Some(c), Some(t)) if c < t => None,
                (Some(_), None) => None,
                (_, Some(t)) => Some(t),
                (None, None) => {
                    if this.workflow.poll_io(&mut this.clock, cx) {
                        continue;
                    }
                    if this.workflow.is_over() {
                        this.ended = true;
                        return Poll::Ready(None);
                    }
                    return Poll::Pending;
                }
            };
            let Some(at) = at else {
                this.clock.step_consumer();
                continue;
            };
            match this.workflow.step(at, &mut this.clock, cx) {
                Some(Item::Event(event)) => return Poll::Ready(Some(Ok(event))),
                Some(Item::Done(outcome)) => {
                    this.ended = true;
                    if outcome.failed {
                        let workflow = this.workflow.run.template.workflow_name.to_string();
                        return Poll::Ready(Some(Err(RunError::WorkflowFailed { workflow })));
                    }
                    return Poll::Ready(None);
                }
                None => {}
            }
        }
    }
}

/// What a workflow yields before going on: an event (a failure's), then an outcome.
#[derive(Default)]
struct Queued {
    event: Option<Arc<Event>>,
    done: Option<Outcome>,
}

impl Queued {
    fn push_back(&mut self, item: Item) {
        match item {
            Item::Event(event) => {
                debug_assert!(self.event.is_none() && self.done.is_none());
                self.event = Some(event);
            }
            Item::Done(outcome) => {
                debug_assert!(self.done.is_none());
                self.done = Some(outcome);
            }
        }
    }

    fn pop_front(&mut self) -> Option<Item> {
        match self.event.take() {
            Some(event) => Some(Item::Event(event)),
            None => self.done.take().map(Item::Done),
        }
    }
}

/// Where a workflow's own task is (its `_run_loop`).
enum Phase {
    /// Its loop's next step runs at this entry: completions handled, ready nodes started.
    Step(Due),
    /// In `asyncio.wait` for its node runs.
    Waiting,
    /// Its loop ended: it cancels its abort task and gathers it (three entries), then
    /// yields what is queued.
    Cleanup(Due),
    /// It put its queued event and waits until it is stored.
    Blocked(u64),
    /// Its outcome was yielded.
    Over,
}

/// One run of one workflow, yielding its nodes' events and, last, its outcome (its
/// single terminal output).
struct Workflow {
    ctx: InvocationContext,
    id: AgentId,
    run: Run,
    /// Its node runs under way, in the order they started (`pending_tasks`' order).
    lanes: Vec<Lane>,
    /// Items to yield at its end (a failure's event and outcome, the last outcome).
    queued: Queued,
    phase: Phase,
}

impl Workflow {
    /// A run of workflow `id` at `path` with `input`; its terminal nodes' outputs also
    /// count for `output_for`. Its first step is due at the ready queue's first entry
    /// (the root) or where [`Workflow::start`] says (a nested one).
    fn new(
        ctx: InvocationContext,
        id: AgentId,
        path: Arc<str>,
        input: Option<node::Output>,
        output_for: Option<Arc<[Arc<str>]>>,
        branch: Option<String>,
    ) -> Workflow {
        let consts = Consts::of(&ctx, id);
        // The root (see `run_graph`): its node runs' infos are the workflow's constants.
        let root = output_for.is_none() && Arc::ptr_eq(&path, &consts.root_path);
        let template = NodeRun {
            workflow: id,
            workflow_name: Arc::clone(&consts.name),
            node: 0,
            at: At::Own { path, output_for },
            input: None,
            branch,
        };
        let nodes = graph_of(&ctx, id).map_or(0, |g| g.nodes.len());
        let mut run = Run::new(template, consts, nodes, root);
        if let Some(graph) = graph_of(&ctx, id) {
            run.seed(graph, input);
        }
        Workflow {
            ctx,
            id,
            run,
            lanes: Vec::new(),
            queued: Queued::default(),
            phase: Phase::Step(Due { at: 0, left: 0 }),
        }
    }

    /// A nested workflow's task was created: its loop's first step is `due`.
    fn start(&mut self, due: Due) {
        self.phase = Phase::Step(due);
    }

    /// Its outcome was yielded.
    fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Over)
    }

    /// The entry at which it, or one of its node runs, acts next.
    fn due(&self, clock: &Clock) -> Option<u64> {
        let own = match &self.phase {
            Phase::Step(due) | Phase::Cleanup(due) => Some(due.at),
            Phase::Blocked(put) => clock.resumes_at(*put),
            Phase::Waiting | Phase::Over => None,
        };
        self.lanes
            .iter()
            .filter_map(|lane| lane.due(clock))
            .chain(own)
            .min()
    }

    /// Polls the node runs whose streams were not ready: `true` when one became ready.
    fn poll_io(&mut self, clock: &mut Clock, cx: &mut Context<'_>) -> bool {
        let mut ready = false;
        for lane in &mut self.lanes {
            ready |= lane.poll_io(clock, &self.ctx, cx);
        }
        ready
    }

    /// Runs entry `at` (one [`Workflow::due`] gave): an event put, or its outcome.
    fn step(&mut self, at: u64, clock: &mut Clock, cx: &mut Context<'_>) -> Option<Item> {
        let own = match &self.phase {
            Phase::Step(due) | Phase::Cleanup(due) => Some(due.at),
            Phase::Blocked(put) => clock.resumes_at(*put),
            Phase::Waiting | Phase::Over => None,
        };
        if own == Some(at) {
            return self.step_own(clock);
        }
        let lane = self.lanes.iter().position(|l| l.due(clock) == Some(at))?;
        match self.lanes[lane].step(at, clock, &self.ctx, cx) {
            Stepped::Nothing => None,
            Stepped::Event(event) => Some(Item::Event(event)),
            Stepped::Finished => {
                if let Phase::Waiting = self.phase {
                    // The `asyncio.wait` completion, then the loop's task.
                    self.phase = Phase::Step(Due {
                        at: clock.tick(),
                        left: 1,
                    });
                }
                None
            }
        }
    }

    /// Its own task's entry.
    fn step_own(&mut self, clock: &mut Clock) -> Option<Item> {
        match &mut self.phase {
            Phase::Step(due) => {
                if due.step(clock) {
                    self.loop_step(clock);
                }
                None
            }
            Phase::Cleanup(due) => {
                if !due.step(clock) {
                    return None;
                }
                if self.queued.done.is_none() {
                    match graph_of(&self.ctx, self.id) {
                        Some(graph) => {
                            terminal_output(&self.ctx, graph, &mut self.run, &mut self.queued)
                        }
                        None => self.queued.push_back(Item::Done(Outcome::default())),
                    }
                }
                self.yield_queued(clock)
            }
            Phase::Blocked(put) => {
                clock.resumed(*put);
                self.yield_queued(clock)
            }
            Phase::Waiting | Phase::Over => None,
        }
    }

    /// The next queued item: an event is put (and waited for), the outcome ends it.
    fn yield_queued(&mut self, clock: &mut Clock) -> Option<Item> {
        let item = self.queued.pop_front();
        self.phase = match &item {
            Some(Item::Event(_)) => Phase::Blocked(clock.put()),
            _ => Phase::Over,
        };
        Some(item.unwrap_or_else(|| Item::Done(Outcome::default())))
    }

    /// One step of its loop: the node runs that ended are handled in the order they
    /// started, then every ready node is started; with none left it cleans up.
    fn loop_step(&mut self, clock: &mut Clock) {
        let Some(graph) = graph_of(&self.ctx, self.id) else {
            self.phase = Phase::Cleanup(Due {
                at: clock.tick(),
                left: 2,
            });
            return;
        };
        let mut k = 0;
        while k < self.lanes.len() {
            if !self.lanes[k].finished() {
                k += 1;
                continue;
            }
            let mut lane = self.lanes.remove(k);
            let n = lane.node;
            let outcome = lane.take_outcome().unwrap_or_default();
            if outcome.failed {
                self.run.fail(n);
                self.queued.push_back(Item::Done(outcome));
                self.lanes.clear();
                self.phase = Phase::Cleanup(Due {
                    at: clock.tick(),
                    left: 2,
                });
                return;
            } else if outcome.interrupted {
                self.run.interrupt(n);
            } else {
                self.run.complete(graph, n, outcome);
            }
        }
        if start_ready(
            &self.ctx,
            graph,
            &mut self.run,
            &mut self.lanes,
            &mut self.queued,
            clock,
        ) {
            // A node ran past its `max_node_runs`: its failure is yielded now.
            self.lanes.clear();
            self.phase = Phase::Cleanup(Due {
                at: clock.tick(),
                left: 0,
            });
            return;
        }
        self.phase = if self.lanes.is_empty() {
            Phase::Cleanup(Due {
                at: clock.tick(),
                left: 2,
            })
        } else {
            Phase::Waiting
        };
    }
}

/// Starts every node that is ready; `true` when one would run past its `max_node_runs`
/// (its failure is then queued).
fn start_ready(
    ctx: &InvocationContext,
    graph: &Graph,
    run: &mut Run,
    lanes: &mut Vec<Lane>,
    queued: &mut Queued,
    clock: &mut Clock,
) -> bool {
    while let Some((n, trigger)) = run.next_ready(graph) {
        let node_run = run.start(graph, n, trigger);
        if let Some(max) = graph.max_node_runs
            && run.runs(n) > max
        {
            let message = format!(
                "node `{}` of workflow `{}` would run a {}th time; its max_node_runs is {max}",
                graph.nodes[n].name,
                node_run.workflow_name,
                run.runs(n)
            );
            queued.push_back(Item::Event(Arc::new(node::failure(
                ctx,
                &node_run,
                "MaxNodeRunsExceeded",
                message,
            ))));
            queued.push_back(Item::Done(Outcome {
                failed: true,
                ..Outcome::default()
            }));
            return true;
        }
        if lanes.capacity() == 0 {
            // Most workflows run one node at a time: room for one lane, not the four a
            // first push would make.
            lanes.reserve_exact(1);
        }
        lanes.push(Lane::new(n, NodeStream::new(ctx, graph, node_run), clock));
    }
    false
}

/// The terminal-output rule: the workflow's outcome, or its failure when several
/// terminal nodes produced output.
fn terminal_output(ctx: &InvocationContext, graph: &Graph, run: &mut Run, queued: &mut Queued) {
    if run.interrupted {
        // ADK hands the interrupt up instead of an output, with no terminal-output check.
        queued.push_back(Item::Done(Outcome {
            branch: run.template.branch.clone(),
            interrupted: true,
            ..Outcome::default()
        }));
        return;
    }
    let terminal = || (0..graph.nodes.len()).filter(|&i| graph.nodes[i].terminal);
    let outputs = terminal().filter(|&i| run.has_output(i)).count();
    let template = &run.template;
    if outputs > 1 {
        let mut event = ctx.new_event(Arc::clone(&template.workflow_name));
        event.set_error(Some("WorkflowConfigurationError".into()), Some(format!(
            "Workflow {}: multiple terminal nodes produced output ({}). A workflow must have at most one terminal output.",
            template.workflow_name, outputs
        ).into()));
        event.branch = template.branch.as_deref().map(Box::from);
        event.node_info = Some(info::make(template.path(), None, info::Kind::Plain));
        queued.push_back(Item::Event(Arc::new(event)));
        queued.push_back(Item::Done(Outcome {
            failed: true,
            ..Outcome::default()
        }));
        return;
    }
    let branch = template.branch.clone();
    let output = terminal().find_map(|i| run.take_output(i));
    queued.push_back(Item::Done(Outcome {
        output,
        branch,
        ..Outcome::default()
    }));
}
