//! ADK 2 Workflow graphs at run time, as ADK 2.13's `Workflow` runs them: triggers queued
//! per node (FIFO by first queued), one run of a node at a time, at most
//! `max_concurrency` at once, edges fired by label, JoinNodes waiting for every
//! predecessor, the terminal-output rule, and a failing node ending every enclosing
//! workflow (`run.rs` keeps that state). Each node run (`node.rs`) is polled by hand, not
//! through a generator. Node runs under way together (`lanes.rs`, in workflows run step
//! by step by `workflow.rs`) make their events in the order ADK's asyncio tasks put
//! them: the root counts asyncio's ready queue (`clock.rs`) and runs whichever actor of
//! the whole tree is due first. Every event is yielded (and so committed) before its
//! node goes on.

mod clock;
mod ending;
mod info;
mod lanes;
mod names;
mod node;
mod output;
mod router;
mod run;
mod shape;
mod targets;
mod workflow;

use crate::event::Event;
use crate::invocation::{EventStream, InvocationContext, RunError};
use crate::routes::EdgeRoute;
use crate::tree::{AgentId, AgentKind, Graph, GraphNodeKind};
use clock::Clock;
use futures::Stream;
use node::Outcome;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use workflow::Workflow;

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
    /// As the root, how its runs are polled.
    mode: shape::Mode,
    /// Per slot (START, then each node): its edges out, so that a completion reads its
    /// own edges only.
    out: Vec<Out>,
}

/// The edges from one node (or START), and what a completion would otherwise find out by
/// walking them each time.
struct Out {
    /// Their indices, in declaration order.
    edges: Vec<usize>,
    /// Some edge is labelled or `__DEFAULT__`: the node's route picks the targets.
    routed: bool,
    /// Some edge is labelled (a route that cannot be hashed then fails the workflow).
    labelled: bool,
    /// Some target is a JoinNode.
    joins: bool,
}

impl Out {
    /// The edges from `from` (`None`: START) in `graph`.
    fn of(graph: &Graph, from: Option<usize>) -> Out {
        let edges: Vec<usize> = (0..graph.edges.len())
            .filter(|&e| graph.edges[e].from == from)
            .collect();
        let routes = || edges.iter().map(|&e| &graph.edges[e].route);
        Out {
            routed: routes().any(|r| !matches!(r, EdgeRoute::Always)),
            labelled: routes().any(|r| matches!(r, EdgeRoute::Labels(_))),
            joins: edges
                .iter()
                .any(|&e| matches!(graph.nodes[graph.edges[e].to].kind, GraphNodeKind::Join)),
            edges,
        }
    }
}

impl Consts {
    /// The edges from `node` (`None`: START).
    fn out(&self, node: Option<usize>) -> &Out {
        // (Only an agent that is not a graph has no slots: no edges.)
        static NONE: Out = Out {
            edges: Vec::new(),
            routed: false,
            labelled: false,
            joins: false,
        };
        self.out.get(node.map_or(0, |n| n + 1)).unwrap_or(&NONE)
    }

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
            let out = graph_of(ctx, id).map_or_else(Vec::new, |g| {
                std::iter::once(None)
                    .chain((0..g.nodes.len()).map(Some))
                    .map(|from| Out::of(g, from))
                    .collect()
            });
            Consts {
                out,
                name: Arc::from(node.name.as_str()),
                root_terminal_for: Arc::from([Arc::clone(&root_path)]),
                root_path,
                root_infos: info::RootInfos::new(keeps_output.len()),
                mode: shape::mode(ctx.tree(), id),
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
    // ADK hands the root the user's Content, which its START successors get as it is: a
    // JoinNode (here or in a workflow node at START) keeps it, the others read its text.
    let input = ctx.user_content().map(|c| {
        let texts = c.parts.iter().filter_map(|p| p.text.as_deref());
        node::Output::User(crate::event::concat(texts).unwrap_or_default())
    });
    let branch = ctx.branch().map(str::to_owned);
    let consts = Consts::of(&ctx, id);
    let path = Arc::clone(&consts.root_path);
    let plain = consts.mode != shape::Mode::Counted;
    let mut clock = Clock::default();
    // The root's first step is the ready queue's first entry, where `Workflow::new` puts
    // it: the workflow is made where the `Root` holds it, not moved there after.
    let first = clock.tick();
    debug_assert_eq!(first, 0);
    Box::pin(Root {
        workflow: Workflow::new(ctx, id, path, input, None, branch),
        clock,
        plain,
        put: VecDeque::new(),
        ended: None,
    })
}

/// The root workflow as the agent's event stream: its failure is a `WorkflowFailed`
/// error (already reported by the failing node's event). It owns the count of asyncio's
/// ready queue (see [`clock`]) and runs, entry by entry, whichever actor of the whole
/// tree (or the Runner's consumer) is due first; or, while no two node runs are under
/// way at once, polls the tree as a plain sequence (see [`shape`]): each event is then
/// yielded as it is made, since no node runs between its put and its store.
///
/// An event is yielded (so committed: its state delta applied) when the consumer stores
/// it, as ADK's Runner appends it to the session, not when its node puts it: a node that
/// runs between the put and the store reads the state without it.
struct Root {
    workflow: Workflow,
    clock: Clock,
    /// Polled as a plain sequence (until two node runs are under way at once).
    plain: bool,
    /// Events put and not yet stored, with their put's number, in put order.
    put: VecDeque<(u64, Arc<Event>)>,
    /// The workflow ended (`Some(failure)`, with the error event of its failure, if it
    /// failed): the events put are yielded, then its end.
    ended: Option<Option<Arc<Event>>>,
}

impl Stream for Root {
    type Item = Result<Arc<Event>, RunError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.plain {
            match this.workflow.poll_plain(&mut this.clock, cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Item::Event(event))) => return Poll::Ready(Some(Ok(event))),
                Poll::Ready(Some(Item::Done(outcome))) => {
                    this.plain = false;
                    this.ended = Some(outcome.failure);
                }
                // Two node runs under way: counted from here (nothing put waits yet).
                Poll::Ready(None) => this.plain = false,
            }
        }
        loop {
            // What the consumer stored goes out first, in order.
            if let Some((number, _)) = this.put.front()
                && (*number < this.clock.stored() || this.ended.is_some())
            {
                let (_, event) = this.put.pop_front().expect("an event put");
                return Poll::Ready(Some(Ok(event)));
            }
            if let Some(failure) = &mut this.ended {
                if let Some(event) = failure.take() {
                    let workflow = this.workflow.name().to_owned();
                    return Poll::Ready(Some(Err(RunError::WorkflowFailed {
                        workflow,
                        failure: Some(event),
                    })));
                }
                return Poll::Ready(None);
            }
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
                        this.ended = Some(None);
                        continue;
                    }
                    return Poll::Pending;
                }
            };
            let Some(at) = at else {
                this.clock.step_consumer();
                continue;
            };
            let puts = this.clock.puts();
            match this.workflow.step(at, &mut this.clock, cx) {
                // Put now: it waits for the consumer (unless nothing else is waiting).
                Some(Item::Event(event)) if this.clock.puts() > puts => {
                    this.put.push_back((puts, event));
                }
                // Made by a node running alone: committed as it is yielded.
                Some(Item::Event(event)) if this.put.is_empty() => {
                    return Poll::Ready(Some(Ok(event)));
                }
                // (After those put before it.)
                Some(Item::Event(event)) => this.put.push_back((puts.saturating_sub(1), event)),
                Some(Item::Done(outcome)) => this.ended = Some(outcome.failure),
                None => {}
            }
        }
    }
}
