//! One run of one workflow as ADK 2.13's scheduler keeps it: triggers queued per node
//! (FIFO by first queued), one run of a node at a time, `max_concurrency`, edges fired by
//! label with `__DEFAULT__`, sub-branches, JoinNode barriers, and each node's output and
//! branch for the terminal-output rule and the joins.

use super::NodeRun;
use super::node::Outcome;
use crate::routes::{EdgeRoute, label_matches};
use crate::tree::{Graph, GraphNodeKind};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet, VecDeque};

/// A value per node and one for START (`None`), without hashing.
pub(super) struct Slots<T>(Vec<Option<T>>);

impl<T> Slots<T> {
    fn new(nodes: usize) -> Self {
        Slots(std::iter::repeat_with(|| None).take(nodes + 1).collect())
    }

    fn slot(node: &Option<usize>) -> usize {
        node.map_or(0, |i| i + 1)
    }

    pub(super) fn get(&self, node: &Option<usize>) -> Option<&T> {
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
pub(super) struct Trigger {
    input: Option<Value>,
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
}

/// One run of one workflow.
pub(super) struct Run {
    /// The workflow's run: its id, name, path, what its output counts for, its branch.
    pub(super) template: NodeRun,
    /// Each node's queued triggers (kept allocated between runs).
    triggers: Vec<VecDeque<Trigger>>,
    /// The nodes with queued triggers, in the order their queues were started.
    queued: Vec<usize>,
    pub(super) status: Vec<Status>,
    /// Each node's runs so far.
    pub(super) runs: Vec<u32>,
    pub(super) outputs: Slots<Value>,
    branches: Slots<String>,
    arrivals: HashMap<usize, HashSet<Option<usize>>>,
    /// Node runs under way.
    pub(super) running: usize,
    /// The targets of the node that completed last.
    next: Vec<usize>,
}

impl Run {
    /// A run of a workflow of `nodes` nodes, nothing queued yet.
    pub(super) fn new(template: NodeRun, nodes: usize) -> Run {
        Run {
            template,
            triggers: std::iter::repeat_with(VecDeque::new).take(nodes).collect(),
            queued: Vec::new(),
            status: vec![Status::Idle; nodes],
            runs: vec![0; nodes],
            outputs: Slots::new(nodes),
            branches: Slots::new(nodes),
            arrivals: HashMap::new(),
            running: 0,
            next: Vec::new(),
        }
    }

    fn push(&mut self, node: usize, trigger: Trigger) {
        let queue = &mut self.triggers[node];
        if queue.is_empty() {
            self.queued.push(node);
        }
        queue.push_back(trigger);
    }

    /// START's triggers: its successors get the workflow's input.
    pub(super) fn seed(&mut self, graph: &Graph, input: Option<Value>) {
        let starts: Vec<usize> = graph
            .edges
            .iter()
            .filter(|e| e.from.is_none())
            .map(|e| e.to)
            .collect();
        let sub_branch = starts.len() > 1;
        for to in starts {
            if matches!(graph.nodes[to].kind, GraphNodeKind::Join) {
                if let Some(v) = &input {
                    // The root's input is the user's Content, and a JoinNode keeps it so.
                    let v = match v {
                        Value::String(text) if !self.template.path.contains('/') => {
                            super::node::user_content(text)
                        }
                        v => v.clone(),
                    };
                    self.outputs.insert(None, v);
                }
                self.branches
                    .insert(None, self.template.branch.clone().unwrap_or_default());
                self.barrier(graph, to);
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
    pub(super) fn next_ready(&mut self, graph: &Graph) -> Option<(usize, Trigger)> {
        if let Some(max) = graph.max_concurrency
            && self.running >= max as usize
        {
            return None;
        }
        let k = self
            .queued
            .iter()
            .position(|n| self.status[*n] != Status::Running)?;
        let n = self.queued[k];
        let queue = &mut self.triggers[n];
        let trigger = queue.pop_front()?;
        if queue.is_empty() {
            self.queued.remove(k);
        }
        Some((n, trigger))
    }

    /// Starts node `n`: its run id, path, branch and input.
    pub(super) fn start(&mut self, graph: &Graph, n: usize, trigger: Trigger) -> NodeRun {
        self.runs[n] += 1;
        self.status[n] = Status::Running;
        self.running += 1;
        let node = &graph.nodes[n];
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
            workflow: self.template.workflow,
            workflow_name: std::sync::Arc::clone(&self.template.workflow_name),
            node: n,
            path: node_path(&self.template.path, &node.name, run_id),
            output_for,
            input: trigger.input,
            branch,
        }
    }

    /// A node completed: record its output and fire its edges.
    pub(super) fn complete(&mut self, graph: &Graph, n: usize, outcome: Outcome) {
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
        // The targets, in a list kept allocated between completions.
        let mut next = std::mem::take(&mut self.next);
        next.clear();
        let mut matched = false;
        let mut labelled = false;
        for e in graph.edges.iter().filter(|e| e.from == Some(n)) {
            match &e.route {
                EdgeRoute::Always => next.push(e.to),
                EdgeRoute::Default => labelled = true,
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
            let defaults = graph.edges.iter().filter(|e| e.from == Some(n));
            next.extend(
                defaults
                    .filter(|e| matches!(e.route, EdgeRoute::Default))
                    .map(|e| e.to),
            );
        }
        if labelled && next.is_empty() {
            let route = outcome
                .route
                .as_ref()
                .map_or("none".to_owned(), |r| r.to_string());
            let name = &graph.nodes[n].name;
            tracing::warn!(
                "workflow `{}`: node `{name}` ({}/{name}@{}) emitted route {route}, which matches no edge; this branch ends",
                self.template.workflow_name,
                self.template.path,
                self.runs[n]
            );
        }
        let sub_branch = next.len() > 1;
        for &to in &next {
            if matches!(graph.nodes[to].kind, GraphNodeKind::Join) {
                self.arrivals.entry(to).or_default().insert(Some(n));
                self.barrier(graph, to);
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
        self.next = next;
    }

    /// Queues JoinNode `to` once every predecessor completed since it last ran.
    fn barrier(&mut self, graph: &Graph, to: usize) {
        let mut preds: Vec<Option<usize>> = Vec::new();
        for e in graph.edges.iter().filter(|e| e.to == to) {
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
                Some(i) => graph.nodes[*i].name.clone(),
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

/// `PARENT/NAME@RUN`, without the formatting machinery.
fn node_path(parent: &str, name: &str, run: u32) -> String {
    let mut digits = [0u8; 10];
    let mut k = digits.len();
    let mut r = run;
    loop {
        k -= 1;
        digits[k] = b'0' + (r % 10) as u8;
        r /= 10;
        if r == 0 {
            break;
        }
    }
    let digits = std::str::from_utf8(&digits[k..]).unwrap_or("0");
    let mut path = String::with_capacity(parent.len() + name.len() + digits.len() + 2);
    path.push_str(parent);
    path.push('/');
    path.push_str(name);
    path.push('@');
    path.push_str(digits);
    path
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

#[cfg(test)]
mod tests {
    #[test]
    fn node_paths() {
        assert_eq!(super::node_path("wf@1", "judge", 1), "wf@1/judge@1");
        assert_eq!(
            super::node_path("a@1/b@2", "c", 4_294_967_295),
            "a@1/b@2/c@4294967295"
        );
        assert_eq!(super::node_path("w@1", "n", 10), "w@1/n@10");
        assert_eq!(super::node_path("w@1", "n", 0), "w@1/n@0");
    }
}
