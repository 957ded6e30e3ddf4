//! One run of one workflow as ADK 2.13's `Workflow._run_loop` makes it, entry by entry
//! of asyncio's ready queue (see [`super::clock`]): each step handles the node runs
//! that ended (in the order they started) and starts every ready node; then it waits in
//! `asyncio.wait` until a node run's completion wakes it; with none left it cleans up
//! and yields its outcome (the terminal-output rule), or its failure.

use super::clock::{Clock, Due};
use super::ending::{self, Queued, terminal_output, workflow_failure};
use super::lanes::{Lane, Stepped};
use super::node::{self, NodeStream, Outcome};
use super::run::Run;
use super::{At, Consts, Item, NodeRun, graph_of};
use crate::invocation::InvocationContext;
use crate::tree::{AgentId, Graph};
use std::sync::Arc;
use std::task::{Context, Poll, ready};

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
    /// Polled as a plain sequence: it yields what is queued.
    Draining,
    /// Its outcome was yielded.
    Over,
}

/// One run of one workflow, yielding its nodes' events and, last, its outcome (its
/// single terminal output).
pub(super) struct Workflow {
    ctx: InvocationContext,
    id: AgentId,
    run: Run,
    /// Its node runs under way, in the order they started (`pending_tasks`' order).
    lanes: Vec<Lane>,
    /// Items to yield at its end (a failure's event and outcome, the last outcome).
    queued: Queued,
    phase: Phase,
    /// It is the root workflow.
    root: bool,
}

impl Workflow {
    /// A run of workflow `id` at `path` with `input`; its terminal nodes' outputs also
    /// count for `output_for`. Its first step is due at the ready queue's first entry
    /// (the root) or where [`Workflow::start`] says (a nested one).
    pub(super) fn new(
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
            // Entry 0 is the root's first step (`run_graph` ticks the clock to it); a
            // nested workflow's is set by `Workflow::start` when its task is created.
            phase: Phase::Step(Due { at: 0, left: 0 }),
            root,
        }
    }

    /// A nested workflow's task was created: its loop's first step is `due`.
    pub(super) fn start(&mut self, due: Due) {
        self.phase = Phase::Step(due);
    }

    /// Its outcome was yielded.
    pub(super) fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Over)
    }

    /// Its name.
    pub(super) fn name(&self) -> &str {
        &self.run.template.workflow_name
    }

    /// The entry at which it, or one of its node runs, acts next.
    pub(super) fn due(&self, clock: &Clock) -> Option<u64> {
        let own = match &self.phase {
            Phase::Step(due) | Phase::Cleanup(due) => Some(due.at),
            Phase::Blocked(put) => clock.resumes_at(*put),
            Phase::Waiting | Phase::Draining | Phase::Over => None,
        };
        self.lanes
            .iter()
            .filter_map(|lane| lane.due(clock))
            .chain(own)
            .min()
    }

    /// Polls the node runs whose streams were not ready: `true` when one became ready.
    pub(super) fn poll_io(&mut self, clock: &mut Clock, cx: &mut Context<'_>) -> bool {
        let mut ready = false;
        for lane in &mut self.lanes {
            ready |= lane.poll_io(clock, &self.ctx, cx);
        }
        ready
    }

    /// Runs entry `at` (one [`Workflow::due`] gave): an event put, or its outcome.
    pub(super) fn step(
        &mut self,
        at: u64,
        clock: &mut Clock,
        cx: &mut Context<'_>,
    ) -> Option<Item> {
        let own = match &self.phase {
            Phase::Step(due) | Phase::Cleanup(due) => Some(due.at),
            Phase::Blocked(put) => clock.resumes_at(*put),
            Phase::Waiting | Phase::Draining | Phase::Over => None,
        };
        if own == Some(at) {
            return self.step_own(clock);
        }
        let lane = self.lanes.iter().position(|l| l.due(clock) == Some(at))?;
        let lane = &mut self.lanes[lane];
        match lane.step(at, clock, &self.ctx, cx) {
            Stepped::Nothing => None,
            Stepped::Event(event) => Some(Item::Event(event)),
            Stepped::Finished => {
                if let Phase::Waiting = self.phase {
                    // The `asyncio.wait` completion, then the loop's task (at once when
                    // the node ran alone).
                    let left = if lane.run_alone() { 0 } else { 1 };
                    self.phase = Phase::Step(Due {
                        at: clock.tick(),
                        left,
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
                self.conclude();
                self.yield_queued(clock)
            }
            Phase::Blocked(put) => {
                clock.resumed(*put);
                self.yield_queued(clock)
            }
            Phase::Waiting | Phase::Draining | Phase::Over => None,
        }
    }

    /// Its loop ended: its outcome is queued (the terminal-output rule) unless a failure
    /// queued one.
    fn conclude(&mut self) {
        if self.queued.done.is_none() {
            match graph_of(&self.ctx, self.id) {
                Some(graph) => terminal_output(&self.ctx, graph, &mut self.run, &mut self.queued),
                None => self.queued.push_back(Item::Done(Outcome::default())),
            }
        }
    }

    /// Polls it as a plain sequence (see [`super::shape`]): its node runs one after the
    /// other, polled as they come, nothing counted. `Ready(None)` when a step started two
    /// node runs at once: it is counted from then on, from the state a counted run has
    /// there (see [`super::shape`]).
    pub(super) fn poll_plain(
        &mut self,
        clock: &mut Clock,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Item>> {
        loop {
            match &self.phase {
                Phase::Step(_) => {
                    self.loop_step(clock);
                    if self.lanes.len() > 1 {
                        return Poll::Ready(None);
                    }
                }
                Phase::Waiting => {
                    let Some(lane) = self.lanes.first_mut() else {
                        self.phase = Phase::Step(Due { at: 0, left: 0 });
                        continue;
                    };
                    let item = match lane.stream_mut() {
                        NodeStream::Workflow(wf) => match ready!(wf.poll_plain(clock, cx)) {
                            Some(item) => item,
                            None => return Poll::Ready(None),
                        },
                        stream => {
                            let item = ready!(stream.poll_item(&self.ctx, cx))
                                .unwrap_or_else(|| Item::Done(Outcome::default()));
                            // A node running alone is held by no AgentTool's extra
                            // entries; taken now so that none is left over for the first
                            // counted lane if two node runs start later.
                            self.ctx.take_queue_entries();
                            item
                        }
                    };
                    match item {
                        Item::Event(event) => return Poll::Ready(Some(Item::Event(event))),
                        Item::Done(outcome) => {
                            // Handled here rather than parked in its lane for the next
                            // step to find: the lane is the only one, and its outcome
                            // is not moved twice more.
                            let n = lane.node;
                            self.lanes.clear();
                            if !self.handle(n, outcome, clock) {
                                self.start_next(clock);
                                if self.lanes.len() > 1 {
                                    return Poll::Ready(None);
                                }
                            }
                        }
                    }
                }
                Phase::Cleanup(_) => {
                    self.conclude();
                    self.phase = Phase::Draining;
                }
                Phase::Draining | Phase::Blocked(_) => {
                    let item = self.queued.pop_front();
                    if !matches!(item, Some(Item::Event(_))) {
                        self.phase = Phase::Over;
                    }
                    return Poll::Ready(Some(
                        item.unwrap_or_else(|| Item::Done(Outcome::default())),
                    ));
                }
                Phase::Over => return Poll::Ready(Some(Item::Done(Outcome::default()))),
            }
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

    /// Its node runs stopped (a failure ends it): the running ones dropped, as ADK cancels
    /// their tasks, and its clean-up due two entries later.
    fn stop(&mut self, clock: &mut Clock) {
        self.lanes.clear();
        self.phase = Phase::Cleanup(Due {
            at: clock.tick(),
            left: 2,
        });
    }

    /// One step of its loop: the node runs that ended are handled in the order they
    /// started, then every ready node is started; with none left it cleans up.
    fn loop_step(&mut self, clock: &mut Clock) {
        let mut k = 0;
        while k < self.lanes.len() {
            if !self.lanes[k].finished() {
                k += 1;
                continue;
            }
            // Its outcome taken in place and the lane dropped there, not moved out first.
            let n = self.lanes[k].node;
            let outcome = self.lanes[k].take_outcome().unwrap_or_default();
            if k + 1 == self.lanes.len() {
                self.lanes.truncate(k);
            } else {
                self.lanes.drain(k..=k);
            }
            if self.handle(n, outcome, clock) {
                return;
            }
        }
        self.start_next(clock);
    }

    /// Node `n`'s run ended with `outcome`: its output recorded and its edges fired, or
    /// the workflow stopped (`true`) by its failure or by the workflow's own.
    fn handle(&mut self, n: usize, outcome: Outcome, clock: &mut Clock) -> bool {
        let Some(graph) = graph_of(&self.ctx, self.id) else {
            return false;
        };
        if outcome.failure.is_some() {
            self.run.fail(n);
            self.queued.push_back(Item::Done(outcome));
        } else if outcome.interrupted {
            self.run.interrupt(n);
            return false;
        } else if let Some(agent) = &outcome.transferred_to_self {
            // The workflow itself fails (ADK checks a transfer before any edge).
            let message = format!("Agent '{agent}' cannot transfer to itself.");
            workflow_failure(
                &self.ctx,
                &self.run,
                &mut self.queued,
                "WorkflowDataError",
                message,
            );
        } else if let Err(message) = self.run.complete(graph, n, outcome) {
            // The workflow itself fails (its route cannot be matched).
            workflow_failure(&self.ctx, &self.run, &mut self.queued, "TypeError", message);
        } else {
            return false;
        }
        self.stop(clock);
        true
    }

    /// The second half of a step of its loop: every ready node started; with none left
    /// it cleans up.
    fn start_next(&mut self, clock: &mut Clock) {
        let Some(graph) = graph_of(&self.ctx, self.id) else {
            self.phase = Phase::Cleanup(Due {
                at: clock.tick(),
                left: 2,
            });
            return;
        };
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
        if self.root && self.lanes.len() == 1 && clock.consumer_due().is_none() {
            self.lanes[0].run_alone();
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
    while let Some(node_run) = run.start_next(graph) {
        let n = node_run.node;
        if let Some(max) = graph.max_node_runs
            && run.runs(n) > max
        {
            ending::max_node_runs(ctx, graph, &node_run, run.runs(n), max, queued);
            return true;
        }
        if lanes.capacity() == 0 {
            // Most workflows run one node at a time: room for one lane, not the four a
            // first push would make.
            lanes.reserve_exact(1);
        }
        lanes.push(Lane::new(ctx, graph, node_run, clock));
    }
    false
}
