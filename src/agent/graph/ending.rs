//! How a workflow run ends, apart from its loop (see [`super::workflow`]): what it yields
//! before it goes on (a failure's event, then its outcome), its own failures (a route
//! that cannot be matched, a transfer to itself, several terminal outputs, a node past
//! its `max_node_runs`) and the terminal-output rule.

use super::node::{self, Outcome};
use super::run::Run;
use super::{Item, NodeRun, info};
use crate::event::Event;
use crate::invocation::InvocationContext;
use crate::tree::Graph;
use std::sync::Arc;

/// What a workflow yields before going on: an event (a failure's), then an outcome.
#[derive(Default)]
pub(super) struct Queued {
    event: Option<Arc<Event>>,
    /// Its outcome, once queued.
    pub(super) done: Option<Outcome>,
}

impl Queued {
    /// Queues an item: an event goes before the outcome.
    pub(super) fn push_back(&mut self, item: Item) {
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

    /// The next queued item.
    pub(super) fn pop_front(&mut self) -> Option<Item> {
        match self.event.take() {
            Some(event) => Some(Item::Event(event)),
            None => self.done.take().map(Item::Done),
        }
    }
}

/// Node run `node_run` would run its node a `runs`th time, past its workflow's
/// `max_node_runs` (`max`): its failure event and failed outcome are queued.
pub(super) fn max_node_runs(
    ctx: &InvocationContext,
    graph: &Graph,
    node_run: &NodeRun,
    runs: u32,
    max: u32,
    queued: &mut Queued,
) {
    let message = format!(
        "node `{}` of workflow `{}` would run a {} time; its max_node_runs is {max}",
        graph.nodes[node_run.node].name,
        node_run.workflow_name,
        ordinal(runs)
    );
    fail(
        queued,
        node::failure(ctx, node_run, "MaxNodeRunsExceeded", message),
    );
}

/// A run failed with `event`: its error event is queued, then its failed outcome.
fn fail(queued: &mut Queued, event: Event) {
    let event = Arc::new(event);
    let outcome = Outcome::failed(&event);
    queued.push_back(Item::Event(event));
    queued.push_back(Item::Done(outcome));
}

/// The workflow itself fails (not one of its nodes): one error event authored by it, at
/// its path and on its branch, then a failed outcome.
pub(super) fn workflow_failure(
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
    fail(queued, event);
}

/// The terminal-output rule: the workflow's outcome, or its failure when several
/// terminal nodes produced output.
pub(super) fn terminal_output(
    ctx: &InvocationContext,
    graph: &Graph,
    run: &mut Run,
    queued: &mut Queued,
) {
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

/// `n` as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, ...
fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ordinals_read_as_english() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111, 112]
            .into_iter()
            .map(super::ordinal)
            .collect();
        assert_eq!(
            got,
            [
                "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st",
                "111th", "112th"
            ]
        );
    }
}
