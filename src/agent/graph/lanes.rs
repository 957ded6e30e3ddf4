//! One node run under way as ADK 2.13's tasks carry it through asyncio's ready queue
//! (see [`super::clock`]): the workflow's step creates the node's task (one entry), which
//! creates the node's own runner task (a second); that task makes the node's events,
//! each some entries after the last one was stored (see [`NodeStream::hops`]), and waits
//! for each to be stored; when the node ends, its first task wakes (one entry) and its
//! completion wakes the workflow's `asyncio.wait` (two more).

use super::clock::{Clock, Due};
use super::node::{NodeStream, Outcome};
use super::{Item, NodeRun};
use crate::event::Event;
use crate::invocation::InvocationContext;
use crate::tree::{AgentId, Graph};
use std::sync::Arc;
use std::task::{Context, Poll};

/// Where a node run is.
enum Phase {
    /// Counting down to its runner task's first step.
    Start(Due),
    /// Counting down to its next item: made then (a model called then), or held already
    /// (its stream was not ready when first asked), and put at once, or its end.
    Wait(Due),
    /// Its event `.0` was put; it waits until the consumer stores it.
    Blocked(u64),
    /// Its stream is not ready (a model still answering): it is polled until it is.
    Io,
    /// It ended: its first task wakes at this entry.
    Finishing(Due),
    /// It ended and its workflow's `asyncio.wait` knows; the workflow's next step reads it.
    Finished,
    /// A nested workflow, whose task is its own loop.
    Inner,
}

/// What one entry of a node run did.
pub(super) enum Stepped {
    /// Nothing its workflow sees.
    Nothing,
    /// It put this event.
    Event(Arc<Event>),
    /// It ended: its workflow's `asyncio.wait` returns (if it was waiting).
    Finished,
}

/// One node run under way.
pub(super) struct Lane {
    /// The node's index in its graph.
    pub(super) node: usize,
    stream: NodeStream,
    phase: Phase,
    /// Its next item, made when its task went on, put (or ended) when its count is done;
    /// once it ended, its outcome ([`Item::Done`]).
    held: Option<Item>,
    /// It runs alone in the whole tree (see [`Lane::run_alone`]).
    alone: bool,
}

impl Lane {
    /// Node run `run` of `graph`, whose first task was just created by its workflow's
    /// step (its stream made here, where the lane holds it, rather than moved in).
    pub(super) fn new(
        ctx: &InvocationContext,
        graph: &Graph,
        run: NodeRun,
        clock: &mut Clock,
    ) -> Lane {
        // Its first task, then its runner task.
        let due = Due {
            at: clock.tick(),
            left: 1,
        };
        let mut lane = Lane {
            node: run.node,
            stream: NodeStream::new(ctx, graph, run),
            phase: Phase::Start(due),
            held: None,
            alone: false,
        };
        if let NodeStream::Workflow(wf) = &mut lane.stream {
            wf.start(due);
            lane.phase = Phase::Inner;
        }
        lane
    }

    /// It is the only node run of the whole tree and the consumer waits for a put: no
    /// other task can come between its steps, so the entries it goes through need not
    /// be counted. It makes each item at its next entry, and nothing waits for the
    /// consumer (the event is committed when yielded, before it goes on). `false` for a
    /// nested workflow, whose own nodes are counted.
    pub(super) fn run_alone(&mut self) -> bool {
        if let Phase::Start(due) = &mut self.phase {
            due.left = 0;
            self.alone = true;
        }
        self.alone
    }

    /// The entry at which it acts next (`None`: it waits for something else).
    pub(super) fn due(&self, clock: &Clock) -> Option<u64> {
        match &self.phase {
            Phase::Start(due) | Phase::Wait(due) | Phase::Finishing(due) => Some(due.at),
            Phase::Blocked(put) => clock.resumes_at(*put),
            Phase::Io | Phase::Finished => None,
            Phase::Inner => match &self.stream {
                NodeStream::Workflow(wf) => wf.due(clock),
                _ => None,
            },
        }
    }

    /// Its outcome, once [`Stepped::Finished`] was reported.
    pub(super) fn take_outcome(&mut self) -> Option<Outcome> {
        if !matches!(self.phase, Phase::Finished) {
            return None;
        }
        match self.held.take() {
            Some(Item::Done(outcome)) => Some(outcome),
            other => {
                self.held = other;
                None
            }
        }
    }

    /// Its node run's stream, for a workflow polled as a plain sequence (see
    /// [`super::shape`]), which polls it without counting.
    pub(super) fn stream_mut(&mut self) -> &mut NodeStream {
        &mut self.stream
    }

    /// Whether it ended and its workflow may read its outcome.
    pub(super) fn finished(&self) -> bool {
        matches!(self.phase, Phase::Finished)
    }

    /// Runs its entry `at` (the one [`Lane::due`] gave); `ctx` is its workflow's.
    pub(super) fn step(
        &mut self,
        at: u64,
        clock: &mut Clock,
        ctx: &InvocationContext,
        cx: &mut Context<'_>,
    ) -> Stepped {
        match &mut self.phase {
            Phase::Inner => {
                let NodeStream::Workflow(wf) = &mut self.stream else {
                    return Stepped::Nothing;
                };
                match wf.step(at, clock, cx) {
                    Some(Item::Event(event)) => Stepped::Event(event),
                    Some(done @ Item::Done(_)) => self.act(done, clock),
                    None => Stepped::Nothing,
                }
            }
            Phase::Start(due) => {
                if !due.step(clock) {
                    return Stepped::Nothing;
                }
                self.go_on(clock, ctx, cx)
            }
            Phase::Wait(due) => {
                self.stream.waited(due.left, ctx);
                if !due.step(clock) {
                    return Stepped::Nothing;
                }
                match self.held.take() {
                    Some(item) => self.act(item, clock),
                    None => self.poll(clock, ctx, cx),
                }
            }
            Phase::Blocked(put) => {
                clock.resumed(*put);
                self.go_on(clock, ctx, cx)
            }
            Phase::Finishing(_) => {
                self.phase = Phase::Finished;
                Stepped::Finished
            }
            Phase::Io | Phase::Finished => Stepped::Nothing,
        }
    }

    /// Its task goes on: its next item is made now, or after the entries its node goes
    /// through first.
    fn go_on(
        &mut self,
        clock: &mut Clock,
        ctx: &InvocationContext,
        cx: &mut Context<'_>,
    ) -> Stepped {
        match self.stream.hops() {
            0 => self.poll(clock, ctx, cx),
            hops => {
                self.stream.going_on(ctx);
                self.phase = Phase::Wait(Due {
                    at: clock.tick(),
                    left: hops - 1,
                });
                Stepped::Nothing
            }
        }
    }

    /// Its next item, put (or ended) at once.
    fn poll(
        &mut self,
        clock: &mut Clock,
        ctx: &InvocationContext,
        cx: &mut Context<'_>,
    ) -> Stepped {
        match self.stream.poll_item(ctx, cx) {
            Poll::Ready(item) => {
                let item = item.unwrap_or_else(|| Item::Done(Outcome::default()));
                // An AgentTool's agent that made more than one reply holds the response.
                match ctx.take_queue_entries() {
                    extra @ 1.. if !self.alone => {
                        self.held = Some(item);
                        self.phase = Phase::Wait(Due {
                            at: clock.tick(),
                            left: extra - 1,
                        });
                        Stepped::Nothing
                    }
                    _ => self.act(item, clock),
                }
            }
            Poll::Pending => {
                self.phase = Phase::Io;
                Stepped::Nothing
            }
        }
    }

    /// Puts its event, or ends.
    fn act(&mut self, item: Item, clock: &mut Clock) -> Stepped {
        match item {
            Item::Event(event) if self.alone => {
                self.phase = Phase::Start(Due {
                    at: clock.tick(),
                    left: 0,
                });
                Stepped::Event(event)
            }
            Item::Event(event) => {
                self.phase = Phase::Blocked(clock.put());
                Stepped::Event(event)
            }
            Item::Done(outcome) if self.alone => {
                self.held = Some(Item::Done(outcome));
                self.phase = Phase::Finished;
                Stepped::Finished
            }
            Item::Done(outcome) => {
                self.held = Some(Item::Done(outcome));
                self.phase = Phase::Finishing(Due {
                    at: clock.tick(),
                    left: 0,
                });
                Stepped::Nothing
            }
        }
    }

    /// Polls it if its stream was not ready (and the lanes of a nested workflow):
    /// `true` when one became ready.
    pub(super) fn poll_io(
        &mut self,
        clock: &mut Clock,
        ctx: &InvocationContext,
        cx: &mut Context<'_>,
    ) -> bool {
        match self.phase {
            Phase::Io => {
                if let Poll::Ready(item) = self.stream.poll_item(ctx, cx) {
                    let item = item.unwrap_or_else(|| Item::Done(Outcome::default()));
                    // After a network answer the order is the answer's (see
                    // `max_concurrency` in docs/reference.md): an AgentTool's extra
                    // entries are dropped here, not left for another lane to take.
                    ctx.take_queue_entries();
                    self.held = Some(item);
                    self.phase = Phase::Wait(Due {
                        at: clock.tick(),
                        left: 0,
                    });
                    return true;
                }
                false
            }
            Phase::Inner => match &mut self.stream {
                NodeStream::Workflow(wf) => wf.poll_io(clock, cx),
                _ => false,
            },
            _ => false,
        }
    }
}

/// Whether LLM agent `id` has tools.
pub(super) fn has_tools(ctx: &InvocationContext, id: AgentId) -> bool {
    ctx.tree()
        .get(id)
        .as_llm()
        .is_some_and(|l| !l.tools.is_empty())
}

/// Whether LLM agent `id` has an AgentTool.
pub(super) fn calls_agent_tool(ctx: &InvocationContext, id: AgentId) -> bool {
    ctx.tree()
        .get(id)
        .as_llm()
        .is_some_and(|l| l.tools.iter().any(|t| crate::tool::is_agent_tool(&**t)))
}

/// Whether `event` calls one of LLM agent `id`'s tools that `picked` holds for (a call
/// names its tool).
pub(super) fn calls_tool(
    ctx: &InvocationContext,
    id: AgentId,
    event: &Event,
    picked: impl Fn(&dyn crate::tool::Tool) -> bool,
) -> bool {
    let Some(agent) = ctx.tree().get(id).as_llm() else {
        return false;
    };
    event.function_calls().any(|call| {
        agent
            .tools
            .iter()
            .any(|t| t.name() == call.name && picked(&**t))
    })
}

/// Whether an AgentTool's call that waits `hops` entries for its response seeds its
/// agent's session now, `left` entries before the response: its tool starts in the
/// fourth entry, as a plain call's does.
pub(super) fn seeds_agent_tool(hops: u32, left: u32) -> bool {
    (hops == AGENT_TOOL_HOPS || hops == CALL_HOPS) && left + TOOL_STARTS == hops
}

/// The entries before an LLM node's next item, after `event`: a function call's
/// response, a model call after a response (unless the response ends the node), or its
/// end after a reply.
pub(super) fn next_hops(ctx: &InvocationContext, id: AgentId, event: &Event) -> u32 {
    if event.function_calls().next().is_some() {
        return if calls_tool(ctx, id, event, |t| t.runs_llm_agent()) {
            AGENT_TOOL_HOPS
        } else {
            CALL_HOPS
        };
    }
    let ends = event.actions.escalate == Some(true)
        || event.actions.skip_summarization == Some(true)
        || event
            .long_running_tool_ids
            .as_ref()
            .is_some_and(|ids| !ids.is_empty());
    if event.function_responses().next().is_some() && !ends && has_tools(ctx, id) {
        TOOLS_HOPS
    } else {
        0
    }
}

/// Entries from an LLM node's task going on to its model call's reply, when its agent
/// has tools (`_convert_tool_union_to_tools` in a `gather`).
pub(super) const TOOLS_HOPS: u32 = 3;
/// Entries from a function call's event stored to its response's (`_prepare_single` and
/// `_execute_single_prepared_call_async` in two `gather`s).
const CALL_HOPS: u32 = 6;
/// The same when a call is an AgentTool's whose agent is an LlmAgent making one event:
/// its runner's tasks, queue and consumer come in between (an AgentTool's Sequential,
/// Loop or Parallel agent runs inline, as a plain call does).
pub(super) const AGENT_TOOL_HOPS: u32 = 15;
/// The entry after a call's event was stored in which its tool starts (an AgentTool
/// seeds its agent's session with the caller's state then): the preparing `gather`'s
/// task, its callback, the node's task, the executing `gather`'s task (recorded cases
/// `agent_tool_seeded_*`).
const TOOL_STARTS: u32 = 4;
