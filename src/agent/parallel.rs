//! ParallelAgent: children run concurrently, each on its own branch.

use super::run_agent;
use crate::invocation::{EventStream, InvocationContext};
use crate::tree::AgentId;
use futures::StreamExt;
use futures::stream::select_all;

/// Runs every child concurrently on branch `parent.child` (nested under the current
/// branch). The children's streams are merged, not spawned: a child stays paused after
/// each event until the Runner has committed it and polls again, so events are committed
/// one at a time and no child runs ahead of its own commits.
pub(super) fn run_parallel(ctx: InvocationContext, id: AgentId) -> EventStream {
    let node = ctx.tree().get(id);
    let streams: Vec<EventStream> = node
        .sub_agents
        .iter()
        .map(|&child| {
            let child_name = &ctx.tree().get(child).name;
            let branch = match ctx.branch() {
                Some(b) => format!("{b}.{}.{child_name}", node.name),
                None => format!("{}.{child_name}", node.name),
            };
            run_agent(ctx.with_branch(branch), child)
        })
        .collect();
    Box::pin(async_stream::try_stream! {
        let mut merged = select_all(streams);
        while let Some(event) = merged.next().await {
            yield event?;
        }
    })
}
