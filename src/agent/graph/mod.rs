//! ADK 2 Workflow graphs at run time, as ADK 2.13's `Workflow` runs them: triggers queued
//! per node (FIFO by first queued), one run of a node at a time, at most
//! `max_concurrency` at once, edges fired by label, JoinNodes waiting for every
//! predecessor, the terminal-output rule, and a failing node ending every enclosing
//! workflow (`run.rs` keeps that state). Each node run (`node.rs`) and each workflow is a
//! stream polled by hand, not a generator: an event moves from the LLM flow (or a
//! Router) through one `poll_next` per level, never through a generator's slot. Runs on
//! lanes are polled together, and every event is yielded (and so committed) before its
//! node goes on.

mod info;
mod node;
mod router;
mod run;

use crate::event::Event;
use crate::invocation::{EventStream, InvocationContext, RunError};
use crate::tree::{AgentId, AgentKind, Graph, GraphNodeKind};
use futures::Stream;
use node::{NodeStream, Outcome};
use run::Run;
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
    // ADK hands the root the user's Content, which its START successors get as it is: a
    // JoinNode (here or in a workflow node at START) keeps it, the others read its text.
    let input = ctx.user_content().map(|c| {
        node::user_content(
            &c.parts
                .iter()
                .filter_map(|p| p.text.as_deref())
                .collect::<String>(),
        )
    });
    let branch = ctx.branch().map(str::to_owned);
    let path = Arc::clone(&Consts::of(&ctx, id).root_path);
    let input = input.map(node::Output::Value);
    Box::pin(Root {
        workflow: Workflow::new(ctx, id, path, input, None, branch),
        ended: false,
    })
}

/// The root workflow as the agent's event stream: its failure is a `WorkflowFailed`
/// error (already reported by the failing node's event).
struct Root {
    workflow: Workflow,
    ended: bool,
}

impl Stream for Root {
    type Item = Result<Arc<Event>, RunError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            match std::task::ready!(this.workflow.poll_item(cx)) {
                Some(Item::Event(event)) => return Poll::Ready(Some(Ok(event))),
                Some(Item::Done(outcome)) if outcome.failed => {
                    this.ended = true;
                    let workflow = this.workflow.run.template.workflow_name.to_string();
                    return Poll::Ready(Some(Err(RunError::WorkflowFailed { workflow })));
                }
                Some(Item::Done(_)) => {}
                None => this.ended = true,
            }
        }
    }
}

/// The node runs under way, polled as asyncio runs ready tasks: oldest first, and a lane
/// that just answered goes to the back, so lanes started together take turns in the
/// order they started; one lane (a sequential workflow) is simply polled.
#[derive(Default)]
struct Lanes {
    runs: Vec<(usize, NodeStream)>,
}

impl Lanes {
    /// The next item of any lane, with the lane's node; `None` when no lane is left. A
    /// lane that is done is dropped.
    fn poll_next(
        &mut self,
        ctx: &InvocationContext,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(usize, Item)>> {
        let mut i = 0;
        while i < self.runs.len() {
            match self.runs[i].1.poll_item(ctx, cx) {
                Poll::Ready(Some(item)) => {
                    let node = self.runs[i].0;
                    if matches!(item, Item::Done(_)) {
                        self.drop_lane(i);
                    } else if i + 1 < self.runs.len() {
                        let lane = self.runs.remove(i);
                        self.runs.push(lane);
                    }
                    return Poll::Ready(Some((node, item)));
                }
                Poll::Ready(None) => self.drop_lane(i),
                Poll::Pending => i += 1,
            }
        }
        if self.runs.is_empty() {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    }

    /// Drops lane `i` where it lies rather than moving it out first; the last lane (the
    /// only one, in a sequential workflow) without a `Drain`.
    fn drop_lane(&mut self, i: usize) {
        if i + 1 == self.runs.len() {
            self.runs.truncate(i);
        } else {
            drop(self.runs.drain(i..=i));
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

/// One run of one workflow, as a stream of items ending with its outcome (its single
/// terminal output).
struct Workflow {
    ctx: InvocationContext,
    id: AgentId,
    run: Run,
    lanes: Lanes,
    /// Items to yield before going on (a failure's event and outcome, the last outcome).
    queued: Queued,
    /// Nothing is left to run: yield what is queued, then end.
    ended: bool,
}

impl Workflow {
    /// A run of workflow `id` at `path` with `input`; its terminal nodes' outputs also
    /// count for `output_for`.
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
        let ended = match graph_of(&ctx, id) {
            Some(graph) => {
                run.seed(graph, input);
                false
            }
            None => true,
        };
        Workflow {
            ctx,
            id,
            run,
            lanes: Lanes::default(),
            queued: Queued::default(),
            ended,
        }
    }

    /// The next item: an event of a node, or the workflow's outcome last.
    fn poll_item(&mut self, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        let Workflow {
            ctx,
            id,
            run,
            lanes,
            queued,
            ended,
        } = self;
        loop {
            if let Some(item) = queued.pop_front() {
                return Poll::Ready(Some(item));
            }
            if *ended {
                return Poll::Ready(None);
            }
            let Some(graph) = graph_of(ctx, *id) else {
                *ended = true;
                continue;
            };
            if start_ready(ctx, graph, run, lanes, queued) {
                *ended = true;
                continue;
            }
            if run.running == 0 {
                terminal_output(ctx, graph, run, queued);
                *ended = true;
                continue;
            }
            let Some((n, item)) = std::task::ready!(lanes.poll_next(ctx, cx)) else {
                terminal_output(ctx, graph, run, queued);
                *ended = true;
                continue;
            };
            match item {
                Item::Event(event) => return Poll::Ready(Some(Item::Event(event))),
                Item::Done(outcome) if outcome.failed => {
                    run.fail(n);
                    queued.push_back(Item::Done(outcome));
                    *ended = true;
                }
                Item::Done(outcome) if outcome.interrupted => run.interrupt(n),
                Item::Done(outcome) => {
                    if let Err(message) = run.complete(graph, n, outcome) {
                        workflow_failure(ctx, run, queued, "TypeError", message);
                        *ended = true;
                    }
                }
            }
        }
    }
}

/// Starts every node that is ready; `true` when one would run past its `max_node_runs`
/// (its failure is then queued).
fn start_ready(
    ctx: &InvocationContext,
    graph: &Graph,
    run: &mut Run,
    lanes: &mut Lanes,
    queued: &mut Queued,
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
        if lanes.runs.capacity() == 0 {
            // Most workflows run one node at a time: room for one lane, not the four a
            // first push would make.
            lanes.runs.reserve_exact(1);
        }
        lanes.runs.push((n, NodeStream::new(ctx, graph, node_run)));
    }
    false
}

/// The workflow itself fails (not one of its nodes): one error event authored by it, at
/// its path and on its branch, then a failed outcome.
fn workflow_failure(
    ctx: &InvocationContext,
    run: &Run,
    queued: &mut Queued,
    code: &str,
    message: String,
) {
    let template = &run.template;
    let mut event = ctx.new_event(Arc::clone(&template.workflow_name));
    event.set_error(Some(code.into()), Some(message.into()));
    event.branch = template.branch.as_deref().map(Box::from);
    event.node_info = Some(info::make(template.path(), None, info::Kind::Plain));
    queued.push_back(Item::Event(Arc::new(event)));
    queued.push_back(Item::Done(Outcome {
        failed: true,
        ..Outcome::default()
    }));
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
        let message = format!(
            "Workflow {}: multiple terminal nodes produced output ({}). A workflow must have at most one terminal output.",
            template.workflow_name, outputs
        );
        workflow_failure(ctx, run, queued, "WorkflowConfigurationError", message);
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
