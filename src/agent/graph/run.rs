//! One run of one workflow as ADK 2.13's scheduler keeps it: triggers queued per node
//! (FIFO by first queued), one run of a node at a time, `max_concurrency`, edges fired by
//! label with `__DEFAULT__`, sub-branches, JoinNode barriers, and each node's output and
//! branch for the terminal-output rule and the joins.

use super::names::{common_prefix, node_path};
use super::node::{Outcome, Output};
use super::targets::Targets;
use super::{At, NodeRun};
use crate::routes::{EdgeRoute, label_matches};
use crate::tree::{Graph, GraphNodeKind};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::sync::Arc;

/// A trigger waiting for its node.
pub(super) struct Trigger {
    input: Option<Output>,
    sub_branch: bool,
    /// The branch to run on (`None`: the workflow's own).
    branch: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Status {
    Idle,
    Running,
    Completed,
    Failed,
    /// Interrupted: it waits for the client and does not run again in this invocation.
    Waiting,
}

/// What a run keeps of one node (or of START).
struct Slot {
    /// Its first queued trigger (those behind it wait in [`Run::later`]).
    first: Option<Trigger>,
    status: Status,
    /// Its runs so far.
    runs: u32,
    /// Its last output, kept only when something reads it later (see
    /// [`super::Consts::keeps_output`]).
    output: Option<Output>,
    /// The branch of its last run, kept under the same condition.
    branch: Option<String>,
    /// When its queue last became non-empty (a count of such starts): nodes are started
    /// in that order.
    since: u32,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            first: None,
            status: Status::Idle,
            runs: 0,
            output: None,
            branch: None,
            since: 0,
        }
    }
}

/// One run of one workflow.
pub(super) struct Run {
    /// The workflow's run: its id, name, path, what its output counts for, its branch.
    pub(super) template: NodeRun,
    /// The workflow's constants.
    consts: Arc<super::Consts>,
    /// START's slot, then each node's.
    slots: Vec<Slot>,
    /// The nodes with queued triggers (see [`Slot::since`]).
    queued: usize,
    /// The triggers queued behind a node's first, with their slot, in the order queued
    /// (a node rarely has more than one: kept here rather than in each slot).
    later: VecDeque<(usize, Trigger)>,
    /// Queues started so far: the next started queue's [`Slot::since`].
    starts: u32,
    /// Per JoinNode waiting: the predecessors that completed since it last ran.
    arrivals: Vec<(usize, Vec<Option<usize>>)>,
    /// Node runs under way.
    pub(super) running: usize,
    /// A node was interrupted (see [`Outcome::interrupted`]).
    pub(super) interrupted: bool,
    /// What a terminal node's output also counts for: this workflow's path, and what the
    /// workflow's output counts for; made when a terminal node first starts (the root's
    /// is a constant).
    terminal_for: Option<Arc<[Arc<str>]>>,
    /// This is the root workflow: its node runs' infos are shared constants.
    root: bool,
}

impl Run {
    /// A run of a workflow of `nodes` nodes, nothing queued yet; `root`: the root
    /// workflow's run (its path `NAME@1`, its output counting for nothing else).
    pub(super) fn new(
        template: NodeRun,
        consts: Arc<super::Consts>,
        nodes: usize,
        root: bool,
    ) -> Run {
        Run {
            terminal_for: root.then(|| Arc::clone(&consts.root_terminal_for)),
            root,
            template,
            consts,
            slots: std::iter::repeat_with(Slot::default)
                .take(nodes + 1)
                .collect(),
            queued: 0,
            later: VecDeque::new(),
            starts: 0,
            arrivals: Vec::new(),
            running: 0,
            interrupted: false,
        }
    }

    /// The slot of a node (`None`: START).
    fn slot(&self, node: Option<usize>) -> &Slot {
        &self.slots[node.map_or(0, |i| i + 1)]
    }

    fn slot_mut(&mut self, node: Option<usize>) -> &mut Slot {
        &mut self.slots[node.map_or(0, |i| i + 1)]
    }

    /// Node `n`'s status.
    pub(super) fn status(&self, n: usize) -> Status {
        self.slot(Some(n)).status
    }

    /// Node `n` failed.
    pub(super) fn fail(&mut self, n: usize) {
        self.slot_mut(Some(n)).status = Status::Failed;
    }

    /// Node `n` was interrupted: it waits, fires no edge and keeps its earlier output.
    pub(super) fn interrupt(&mut self, n: usize) {
        self.running -= 1;
        self.slot_mut(Some(n)).status = Status::Waiting;
        self.interrupted = true;
    }

    /// Node `n`'s runs so far.
    pub(super) fn runs(&self, n: usize) -> u32 {
        self.slot(Some(n)).runs
    }

    /// The output node `n` left, taken (the terminal-output rule reads it once).
    pub(super) fn take_output(&mut self, n: usize) -> Option<Output> {
        self.slot_mut(Some(n)).output.take()
    }

    /// Whether node `n` left an output.
    pub(super) fn has_output(&self, n: usize) -> bool {
        self.slot(Some(n)).output.is_some()
    }

    fn push(&mut self, node: usize, trigger: Trigger) {
        let slot = &mut self.slots[node + 1];
        if slot.first.is_none() {
            slot.since = self.starts;
            self.starts += 1;
            self.queued += 1;
            slot.first = Some(trigger);
        } else {
            self.later.push_back((node + 1, trigger));
        }
    }

    /// START's triggers: its successors get the workflow's input.
    pub(super) fn seed(&mut self, graph: &Graph, mut input: Option<Output>) {
        let consts = Arc::clone(&self.consts);
        let starts = || consts.out(None).edges.iter().map(|&e| graph.edges[e].to);
        let count = starts().count();
        let sub_branch = count > 1;
        for (k, to) in starts().enumerate() {
            if matches!(graph.nodes[to].kind, GraphNodeKind::Join) {
                if let Some(v) = &input {
                    // The root's input is the user's Content (see `run_graph`), and a
                    // JoinNode keeps it so.
                    self.slot_mut(None).output = Some(v.clone());
                }
                self.slot_mut(None).branch = Some(self.template.branch.clone().unwrap_or_default());
                self.barrier(graph, to);
                continue;
            }
            let input = if k + 1 == count {
                input.take()
            } else {
                input.clone()
            };
            self.push(
                to,
                Trigger {
                    input,
                    sub_branch,
                    branch: None,
                },
            );
        }
    }

    /// Starts the next node that is ready (`None`: none is), in the order triggers were
    /// first queued, skipping nodes that are running or waiting, within
    /// `max_concurrency`.
    pub(super) fn start_next(&mut self, graph: &Graph) -> Option<NodeRun> {
        if self.queued == 0 {
            return None;
        }
        if let Some(max) = graph.max_concurrency
            && self.running >= max as usize
        {
            return None;
        }
        // The queue started first among the nodes free to start.
        let mut first: Option<(usize, u32)> = None;
        for (k, slot) in self.slots.iter().enumerate().skip(1) {
            if slot.first.is_some()
                && !matches!(slot.status, Status::Running | Status::Waiting)
                && first.is_none_or(|(_, since)| slot.since < since)
            {
                first = Some((k, slot.since));
            }
        }
        let (k, _) = first?;
        let trigger = self.slots[k].first.take()?;
        // The node's next trigger moves up, if it has one.
        match self.later.iter().position(|(slot, _)| *slot == k) {
            Some(at) => self.slots[k].first = self.later.remove(at).map(|(_, t)| t),
            None => self.queued -= 1,
        }
        Some(self.start(graph, k - 1, trigger))
    }

    /// Starts node `n`: its run id, path, branch and input.
    fn start(&mut self, graph: &Graph, n: usize, trigger: Trigger) -> NodeRun {
        self.running += 1;
        let slot = &mut self.slots[n + 1];
        slot.runs += 1;
        slot.status = Status::Running;
        let run_id = slot.runs;
        let node = &graph.nodes[n];
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
        let template = &self.template;
        let output_for = if node.terminal {
            Some(&*self.terminal_for.get_or_insert_with(|| {
                let up = template.output_for().map_or(&[][..], |up| &up[..]);
                std::iter::once(Arc::clone(template.path()))
                    .chain(up.iter().cloned())
                    .collect()
            }))
        } else {
            None
        };
        let parent = template.path();
        let shared = if self.root {
            let path = || node_path(parent, &node.name, run_id);
            self.consts.root_infos.get(n, run_id, path, output_for)
        } else {
            None
        };
        NodeRun {
            workflow: template.workflow,
            workflow_name: Arc::clone(&template.workflow_name),
            node: n,
            at: match shared {
                Some(infos) => At::Shared(infos),
                None => At::Own {
                    path: node_path(parent, &node.name, run_id),
                    output_for: output_for.cloned(),
                },
            },
            input: trigger.input,
            branch,
        }
    }

    /// A node completed: record its output and fire its edges; `Err` with Python's
    /// message when its route cannot be matched against a labelled edge (see
    /// [`crate::routes::unhashable`]): the workflow then fails.
    pub(super) fn complete(
        &mut self,
        graph: &Graph,
        n: usize,
        outcome: Outcome,
    ) -> Result<(), String> {
        self.running -= 1;
        self.slots[n + 1].status = Status::Completed;
        let Outcome {
            mut output,
            route,
            mut branch,
            ..
        } = outcome;
        // What the edges out tell is a workflow constant: a node whose edges are all
        // unlabelled triggers each of them without reading its route.
        let out = self.consts.out(Some(n));
        let joins = out.joins;
        let mut next = Targets::default();
        if out.routed {
            let route = route.as_ref().and_then(|e| e.actions.route.as_deref());
            if out.labelled
                && let Some(kind) = route.and_then(crate::routes::unhashable)
            {
                return Err(format!("unhashable type: '{kind}'"));
            }
            let hit = |labels: &[crate::routes::Label]| match route {
                Some(Value::Array(routes)) => routes
                    .iter()
                    .any(|r| labels.iter().any(|l| label_matches(l, r))),
                Some(r) => labels.iter().any(|l| label_matches(l, r)),
                None => false,
            };
            // The edges that fire, in declaration order, then the `__DEFAULT__` ones when
            // no label matched.
            let mut matched = false;
            for &e in &out.edges {
                let e = &graph.edges[e];
                match &e.route {
                    EdgeRoute::Always => next.push(e.to),
                    EdgeRoute::Default => {}
                    EdgeRoute::Labels(labels) => {
                        if hit(labels) {
                            next.push(e.to);
                            matched = true;
                        }
                    }
                }
            }
            if !matched {
                for &e in &out.edges {
                    if let EdgeRoute::Default = graph.edges[e].route {
                        next.push(graph.edges[e].to);
                    }
                }
            }
            if next.as_slice().is_empty() {
                let route = route.map_or("none".to_owned(), Value::to_string);
                let name = &graph.nodes[n].name;
                tracing::warn!(
                    "workflow `{}`: node `{name}` ({}/{name}@{}) emitted route {route}, which matches no edge; this branch ends",
                    self.template.workflow_name,
                    self.template.path(),
                    self.slots[n + 1].runs
                );
            }
        } else {
            for &e in &out.edges {
                next.push(graph.edges[e].to);
            }
        }
        let next = next.as_slice();
        let sub_branch = next.len() > 1;
        let is_join = |to: usize| joins && matches!(graph.nodes[to].kind, GraphNodeKind::Join);
        // The last node triggered takes the output and branch; the others get copies.
        let last = next.iter().rposition(|&to| !is_join(to));
        if self.consts.keeps_output.get(n).copied().unwrap_or(true) {
            let slot = &mut self.slots[n + 1];
            slot.branch = Some(branch.clone().unwrap_or_default());
            if last.is_some() {
                slot.output.clone_from(&output);
            } else {
                slot.output = output.take();
            }
        }
        for (k, &to) in next.iter().enumerate() {
            if is_join(to) {
                self.arrive(to, n);
                self.barrier(graph, to);
            } else {
                let (input, branch) = if Some(k) == last {
                    (output.take(), branch.take())
                } else {
                    (output.clone(), branch.clone())
                };
                self.push(
                    to,
                    Trigger {
                        input,
                        sub_branch,
                        branch,
                    },
                );
            }
        }
        Ok(())
    }

    /// Predecessor `from` of JoinNode `to` completed.
    fn arrive(&mut self, to: usize, from: usize) {
        let k = match self.arrivals.iter().position(|(j, _)| *j == to) {
            Some(k) => k,
            None => {
                self.arrivals.push((to, Vec::new()));
                self.arrivals.len() - 1
            }
        };
        let arrived = &mut self.arrivals[k].1;
        if !arrived.contains(&Some(from)) {
            arrived.push(Some(from));
        }
    }

    /// Queues JoinNode `to` once every predecessor completed since it last ran.
    fn barrier(&mut self, graph: &Graph, to: usize) {
        let mut preds: Vec<Option<usize>> = Vec::new();
        for e in graph.edges.iter().filter(|e| e.to == to) {
            if !preds.contains(&e.from) {
                preds.push(e.from);
            }
        }
        let at = self.arrivals.iter().position(|(j, _)| *j == to);
        let arrived = at.map_or(&[][..], |k| &self.arrivals[k].1[..]);
        let ready = preds.iter().all(|p| match p {
            None => true,
            Some(i) => arrived.contains(p) && self.status(*i) == Status::Completed,
        });
        if !ready {
            return;
        }
        if let Some(k) = at {
            self.arrivals.remove(k);
        }
        let mut input = Map::new();
        let mut branches = Vec::new();
        for p in &preds {
            let name = match p {
                None => "__START__".to_owned(),
                Some(i) => graph.nodes[*i].name.clone(),
            };
            let slot = self.slot(*p);
            let output = slot.output.as_ref().map_or(Value::Null, Output::to_value);
            input.insert(name, output);
            branches.push(slot.branch.clone().unwrap_or_default());
        }
        self.push(
            to,
            Trigger {
                input: Some(Output::Value(Box::new(Value::Object(input)))),
                sub_branch: false,
                branch: Some(common_prefix(&branches)),
            },
        );
    }
}
