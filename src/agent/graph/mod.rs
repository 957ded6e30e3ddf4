//! ADK 2 Workflow graphs at run time, as ADK 2.13's `Workflow` runs them: triggers queued
//! per node (FIFO by first queued), one run of a node at a time, at most
//! `max_concurrency` at once, edges fired by label, JoinNodes waiting for every
//! predecessor, the terminal-output rule, and a failing node ending every enclosing
//! workflow. Each node run is a stream (`node.rs`); runs on lanes are polled together,
//! and every event is yielded (and so committed) before its node goes on.

mod node;

use crate::event::Event;
use crate::invocation::{EventStream, InvocationContext, RunError};
use crate::routes::{EdgeRoute, label_matches};
use crate::tree::{AgentId, AgentKind, Graph, GraphNodeKind};
use futures::StreamExt;
use futures::stream::BoxStream;
use node::Outcome;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// What a node run (or a nested workflow) yields.
enum Item {
    /// An event to commit and show, in the `Arc` the session store keeps (see
    /// [`crate::invocation::EventStream`]).
    Event(Arc<Event>),
    /// The run ended.
    Done(Outcome),
}

type ItemStream = BoxStream<'static, Item>;

/// One run of one node.
#[derive(Clone)]
struct NodeRun {
    /// The workflow it belongs to.
    workflow: AgentId,
    /// That workflow's name (the author of its Router, JoinNode and failure events).
    workflow_name: String,
    /// The node's index in the graph.
    node: usize,
    /// The node's name.
    name: String,
    /// `WF@1/node@N`.
    path: String,
    /// Paths its output also counts for (its workflow's, when it is terminal, and up).
    output_for: Vec<String>,
    /// Its input (`None`: none).
    input: Option<Value>,
    /// Its branch (`None`: the trunk).
    branch: Option<String>,
}

/// Runs the root workflow `id` for this invocation: from START with the user's message.
pub(super) fn run_graph(ctx: InvocationContext, id: AgentId) -> EventStream {
    let name = ctx.tree().get(id).name.clone();
    let input = ctx.user_content().map(|c| {
        Value::String(
            c.parts
                .iter()
                .filter_map(|p| p.text.as_deref())
                .collect::<String>(),
        )
    });
    let branch = ctx.branch().map(str::to_owned);
    let mut items = run_workflow(ctx, id, format!("{name}@1"), input, Vec::new(), branch);
    Box::pin(async_stream::try_stream! {
        while let Some(item) = items.next().await {
            match item {
                Item::Event(event) => yield event,
                Item::Done(outcome) if outcome.failed => {
                    Err(RunError::WorkflowFailed { workflow: name.clone() })?;
                }
                Item::Done(_) => {}
            }
        }
    })
}

/// The node runs under way, polled as asyncio runs ready tasks: oldest first, and a lane
/// that just answered goes to the back, so lanes started together take turns in the
/// order they started; one lane (a sequential workflow) is simply polled.
#[derive(Default)]
struct Lanes {
    runs: Vec<(usize, ItemStream)>,
}

impl Lanes {
    /// The next item of any lane, with the lane's node; `None` when no lane is left.
    async fn next(&mut self) -> Option<(usize, Item)> {
        std::future::poll_fn(|cx| {
            let mut i = 0;
            while i < self.runs.len() {
                match self.runs[i].1.poll_next_unpin(cx) {
                    std::task::Poll::Ready(Some(item)) => {
                        let lane = self.runs.remove(i);
                        let node = lane.0;
                        self.runs.push(lane);
                        return std::task::Poll::Ready(Some((node, item)));
                    }
                    std::task::Poll::Ready(None) => drop(self.runs.remove(i)),
                    std::task::Poll::Pending => i += 1,
                }
            }
            if self.runs.is_empty() {
                std::task::Poll::Ready(None)
            } else {
                std::task::Poll::Pending
            }
        })
        .await
    }
}

/// A value per node and one for START (`None`), without hashing.
struct Slots<T>(Vec<Option<T>>);

impl<T> Slots<T> {
    fn new(nodes: usize) -> Self {
        Slots(std::iter::repeat_with(|| None).take(nodes + 1).collect())
    }

    fn slot(node: &Option<usize>) -> usize {
        node.map_or(0, |i| i + 1)
    }

    fn get(&self, node: &Option<usize>) -> Option<&T> {
        self.0.get(Self::slot(node)).and_then(Option::as_ref)
    }

    fn insert(&mut self, node: Option<usize>, value: T) {
        self.0[Self::slot(&node)] = Some(value);
    }

    fn remove(&mut self, node: &Option<usize>) {
        self.0[Self::slot(node)] = None;
    }
}

/// A trigger waiting for its node.
struct Trigger {
    input: Option<Value>,
    sub_branch: bool,
    /// The branch to run on (`None`: the workflow's own).
    branch: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Idle,
    Running,
    Completed,
    Failed,
}

/// One run of one workflow.
struct Run<'a> {
    graph: &'a Graph,
    template: NodeRun,
    triggers: Vec<(usize, VecDeque<Trigger>)>,
    status: Vec<Status>,
    runs: Vec<u32>,
    outputs: Slots<Value>,
    branches: Slots<String>,
    arrivals: HashMap<usize, HashSet<Option<usize>>>,
    running: usize,
}

/// Runs a workflow at `path` with `input`; its terminal nodes' outputs also count for
/// `output_for`. Ends with the workflow's outcome (its single terminal output).
fn run_workflow(
    ctx: InvocationContext,
    id: AgentId,
    path: String,
    input: Option<Value>,
    output_for: Vec<String>,
    branch: Option<String>,
) -> ItemStream {
    Box::pin(async_stream::stream! {
        let wf = ctx.tree().get(id);
        let AgentKind::Graph(graph) = &wf.kind else { return };
        let mut run = Run {
            graph,
            template: NodeRun {
                workflow: id,
                workflow_name: wf.name.clone(),
                node: 0,
                name: String::new(),
                path: path.clone(),
                output_for: output_for.clone(),
                input: None,
                branch: branch.clone(),
            },
            triggers: Vec::new(),
            status: vec![Status::Idle; graph.nodes.len()],
            runs: vec![0; graph.nodes.len()],
            outputs: Slots::new(graph.nodes.len()),
            branches: Slots::new(graph.nodes.len()),
            arrivals: HashMap::new(),
            running: 0,
        };
        run.seed(input);
        // The node runs under way, each polled in turn.
        let mut lanes = Lanes::default();
        loop {
            while let Some((n, trigger)) = run.next_ready() {
                let node_run = run.start(n, trigger);
                if let Some(max) = graph.max_node_runs && run.runs[n] > max {
                    let message = format!(
                        "node `{}` of workflow `{}` would run a {}th time; its max_node_runs is {max}",
                        node_run.name, node_run.workflow_name, run.runs[n]
                    );
                    yield Item::Event(Arc::new(node::failure(&ctx, &node_run, "MaxNodeRunsExceeded", message)));
                    yield Item::Done(Outcome { failed: true, ..Outcome::default() });
                    return;
                }
                lanes.runs.push((n, node::run(ctx.clone(), node_run)));
            }
            if run.running == 0 {
                break;
            }
            let Some((n, item)) = lanes.next().await else { break };
            if matches!(item, Item::Done(_)) {
                lanes.runs.retain(|(m, _)| *m != n);
            }
            match item {
                Item::Event(event) => yield Item::Event(event),
                Item::Done(outcome) if outcome.failed => {
                    run.status[n] = Status::Failed;
                    yield Item::Done(outcome);
                    return;
                }
                Item::Done(outcome) => run.complete(n, outcome),
            }
        }
        // The terminal-output rule.
        let terminal: Vec<&Value> = (0..graph.nodes.len())
            .filter(|&i| graph.nodes[i].terminal)
            .filter_map(|i| run.outputs.get(&Some(i)))
            .collect();
        if terminal.len() > 1 {
            let mut event = Event::new(ctx.invocation_id(), run.template.workflow_name.as_str());
            event.error_code = Some("WorkflowConfigurationError".into());
            event.error_message = Some(format!(
                "Workflow {}: multiple terminal nodes produced output ({}). A workflow must have at most one terminal output.",
                run.template.workflow_name,
                terminal.len()
            ));
            event.branch = branch.clone();
            event.node_info = Some(Box::new(crate::event::NodeInfo { path: path.clone(), ..Default::default() }));
            yield Item::Event(Arc::new(event));
            yield Item::Done(Outcome { failed: true, ..Outcome::default() });
            return;
        }
        let output = terminal.first().map(|v| (*v).clone());
        yield Item::Done(Outcome { output, route: None, branch: branch.clone(), failed: false });
    })
}

impl Run<'_> {
    fn push(&mut self, node: usize, trigger: Trigger) {
        match self.triggers.iter_mut().find(|(n, _)| *n == node) {
            Some((_, q)) => q.push_back(trigger),
            None => self.triggers.push((node, VecDeque::from([trigger]))),
        }
    }

    /// START's triggers: its successors get the workflow's input.
    fn seed(&mut self, input: Option<Value>) {
        let starts: Vec<usize> = self
            .graph
            .edges
            .iter()
            .filter(|e| e.from.is_none())
            .map(|e| e.to)
            .collect();
        let sub_branch = starts.len() > 1;
        for to in starts {
            if matches!(self.graph.nodes[to].kind, GraphNodeKind::Join) {
                if let Some(v) = &input {
                    self.outputs.insert(None, v.clone());
                }
                self.branches
                    .insert(None, self.template.branch.clone().unwrap_or_default());
                self.barrier(to);
                continue;
            }
            self.push(
                to,
                Trigger {
                    input: input.clone(),
                    sub_branch,
                    branch: None,
                },
            );
        }
    }

    /// The next node to start, in the order triggers were first queued, skipping nodes
    /// that are running, within `max_concurrency`.
    fn next_ready(&mut self) -> Option<(usize, Trigger)> {
        if let Some(max) = self.graph.max_concurrency
            && self.running >= max as usize
        {
            return None;
        }
        let k = self
            .triggers
            .iter()
            .position(|(n, _)| self.status[*n] != Status::Running)?;
        let (n, queue) = &mut self.triggers[k];
        let n = *n;
        let trigger = queue.pop_front()?;
        if queue.is_empty() {
            self.triggers.remove(k);
        }
        Some((n, trigger))
    }

    /// Starts node `n`: its run id, path, branch and input.
    fn start(&mut self, n: usize, trigger: Trigger) -> NodeRun {
        self.runs[n] += 1;
        self.status[n] = Status::Running;
        self.running += 1;
        let node = &self.graph.nodes[n];
        let run_id = self.runs[n];
        let base = trigger.branch.or_else(|| self.template.branch.clone());
        let branch = if trigger.sub_branch {
            let segment = format!("{}@{run_id}", node.name);
            Some(match base.as_deref() {
                Some(b) if !b.is_empty() => format!("{b}.{segment}"),
                _ => segment,
            })
        } else {
            base.filter(|b| !b.is_empty())
        };
        let output_for = if node.terminal {
            let mut v = vec![self.template.path.clone()];
            v.extend(self.template.output_for.iter().cloned());
            v
        } else {
            Vec::new()
        };
        NodeRun {
            node: n,
            name: node.name.clone(),
            path: format!("{}/{}@{run_id}", self.template.path, node.name),
            output_for,
            input: trigger.input,
            branch,
            ..self.template.clone()
        }
    }

    /// A node completed: record its output and fire its edges.
    fn complete(&mut self, n: usize, outcome: Outcome) {
        self.running -= 1;
        self.status[n] = Status::Completed;
        match &outcome.output {
            Some(v) => {
                self.outputs.insert(Some(n), v.clone());
            }
            None => {
                self.outputs.remove(&Some(n));
            }
        }
        self.branches
            .insert(Some(n), outcome.branch.clone().unwrap_or_default());
        let mut next = Vec::new();
        let mut defaults = Vec::new();
        let mut matched = false;
        let mut labelled = false;
        for e in self.graph.edges.iter().filter(|e| e.from == Some(n)) {
            match &e.route {
                EdgeRoute::Always => next.push(e.to),
                EdgeRoute::Default => {
                    labelled = true;
                    defaults.push(e.to);
                }
                EdgeRoute::Labels(labels) => {
                    labelled = true;
                    let hit = match &outcome.route {
                        Some(Value::Array(routes)) => routes
                            .iter()
                            .any(|r| labels.iter().any(|l| label_matches(l, r))),
                        Some(r) => labels.iter().any(|l| label_matches(l, r)),
                        None => false,
                    };
                    if hit {
                        next.push(e.to);
                        matched = true;
                    }
                }
            }
        }
        if !matched {
            next.extend(defaults);
        }
        if labelled && next.is_empty() {
            let route = outcome
                .route
                .as_ref()
                .map_or("none".to_owned(), |r| r.to_string());
            let name = &self.graph.nodes[n].name;
            tracing::warn!(
                "workflow `{}`: node `{name}` ({}/{name}@{}) emitted route {route}, which matches no edge; this branch ends",
                self.template.workflow_name,
                self.template.path,
                self.runs[n]
            );
        }
        let sub_branch = next.len() > 1;
        for to in next {
            if matches!(self.graph.nodes[to].kind, GraphNodeKind::Join) {
                self.arrivals.entry(to).or_default().insert(Some(n));
                self.barrier(to);
            } else {
                self.push(
                    to,
                    Trigger {
                        input: outcome.output.clone(),
                        sub_branch,
                        branch: outcome.branch.clone(),
                    },
                );
            }
        }
    }

    /// Queues JoinNode `to` once every predecessor completed since it last ran.
    fn barrier(&mut self, to: usize) {
        let mut preds: Vec<Option<usize>> = Vec::new();
        for e in self.graph.edges.iter().filter(|e| e.to == to) {
            if !preds.contains(&e.from) {
                preds.push(e.from);
            }
        }
        let arrived = self.arrivals.get(&to).cloned().unwrap_or_default();
        let ready = preds.iter().all(|p| match p {
            None => true,
            Some(i) => arrived.contains(p) && self.status[*i] == Status::Completed,
        });
        if !ready {
            return;
        }
        self.arrivals.remove(&to);
        let mut input = Map::new();
        let mut branches = Vec::new();
        for p in &preds {
            let name = match p {
                None => "__START__".to_owned(),
                Some(i) => self.graph.nodes[*i].name.clone(),
            };
            input.insert(name, self.outputs.get(p).cloned().unwrap_or(Value::Null));
            branches.push(self.branches.get(p).cloned().unwrap_or_default());
        }
        self.push(
            to,
            Trigger {
                input: Some(Value::Object(input)),
                sub_branch: false,
                branch: Some(common_prefix(&branches)),
            },
        );
    }
}

/// The common dot-separated prefix of branches (`a.b@1` and `a.c@1`: `a`).
fn common_prefix(branches: &[String]) -> String {
    let split: Vec<Vec<&str>> = branches
        .iter()
        .map(|b| {
            if b.is_empty() {
                Vec::new()
            } else {
                b.split('.').collect()
            }
        })
        .collect();
    let Some(first) = split.first() else {
        return String::new();
    };
    let mut out = Vec::new();
    for (k, seg) in first.iter().enumerate() {
        if split.iter().all(|s| s.get(k) == Some(seg)) {
            out.push(*seg);
        } else {
            break;
        }
    }
    out.join(".")
}
