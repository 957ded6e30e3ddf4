//! The `nodeInfo` of a node run's events, made once and shared: a node run's events of
//! one kind carry one `Arc<NodeInfo>`, and the root workflow's node runs (its path is
//! always `NAME@1`, so `NAME@1/node@RUN` is the same in every invocation) keep theirs in
//! the workflow's constants, for every invocation: no allocation per event or per run.

use super::{At, NodeRun};
use crate::event::{NodeInfo, OutputFor};
use std::sync::{Arc, OnceLock};

/// What an event of a node run is, as its `nodeInfo` tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// It carries no output of the node: `path` alone.
    Plain = 0,
    /// It carries the node's output (`outputFor`).
    Output = 1,
    /// The model message that is an LLM node's output (`outputFor`, `messageAsOutput`).
    Message = 2,
}

/// One node run's path, what its output counts for besides its own path, and its
/// `nodeInfo`s, each made on first use.
pub(super) struct Infos {
    /// `WF@1/node@N`.
    pub(super) path: Arc<str>,
    /// The paths its output also counts for (`None`: none).
    pub(super) output_for: Option<Arc<[Arc<str>]>>,
    made: [OnceLock<Arc<NodeInfo>>; 3],
}

impl Infos {
    fn new(path: Arc<str>, output_for: Option<Arc<[Arc<str>]>>) -> Infos {
        Infos {
            path,
            output_for,
            made: Default::default(),
        }
    }

    /// The `nodeInfo` of an event of this `kind`, shared.
    fn get(&self, kind: Kind) -> Arc<NodeInfo> {
        let made = &self.made[kind as usize];
        Arc::clone(made.get_or_init(|| make(&self.path, self.output_for.as_ref(), kind)))
    }
}

/// A new `nodeInfo` of an event of `kind` of the node run at `path`.
pub(super) fn make(
    path: &Arc<str>,
    output_for: Option<&Arc<[Arc<str>]>>,
    kind: Kind,
) -> Arc<NodeInfo> {
    Arc::new(NodeInfo {
        path: Arc::clone(path),
        output_for: (kind != Kind::Plain).then(|| match output_for {
            Some(up) => OutputFor::own_then(Arc::clone(up)),
            None => OutputFor::own(),
        }),
        message_as_output: (kind == Kind::Message).then_some(true),
    })
}

/// The `nodeInfo` of an event of `kind` of node run `run`: its shared one when the run
/// has them, a new one otherwise.
pub(super) fn of(run: &NodeRun, kind: Kind) -> Arc<NodeInfo> {
    match &run.at {
        At::Shared(infos) => infos.get(kind),
        At::Own { path, output_for } => make(path, output_for.as_ref(), kind),
    }
}

/// The runs of each node of a root workflow whose infos its constants keep.
const ROOT_RUNS: usize = 8;

/// A root workflow's node runs' [`Infos`], per node and run number (1 to [`ROOT_RUNS`]),
/// each made on first use and kept as long as the agent tree.
pub(super) struct RootInfos(Vec<[OnceLock<Arc<Infos>>; ROOT_RUNS]>);

impl RootInfos {
    /// Room for a workflow of `nodes` nodes, nothing made yet.
    pub(super) fn new(nodes: usize) -> RootInfos {
        RootInfos((0..nodes).map(|_| Default::default()).collect())
    }

    /// Node `n`'s run number `run` at `path`, whose output also counts for `output_for`;
    /// `path` is only called the first time. `None` past [`ROOT_RUNS`].
    pub(super) fn get(
        &self,
        n: usize,
        run: u32,
        path: impl FnOnce() -> Arc<str>,
        output_for: Option<&Arc<[Arc<str>]>>,
    ) -> Option<Arc<Infos>> {
        let k = usize::try_from(run).ok()?.checked_sub(1)?;
        let cell = self.0.get(n)?.get(k)?;
        let infos = cell.get_or_init(|| Arc::new(Infos::new(path(), output_for.cloned())));
        Some(Arc::clone(infos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_infos_are_made_once_per_node_run_and_kind() {
        let roots = RootInfos::new(2);
        let up: Arc<[Arc<str>]> = Arc::from(vec![Arc::from("wf@1")]);
        let a = roots
            .get(1, 2, || Arc::from("wf@1/b@2"), Some(&up))
            .unwrap();
        let again = roots
            .get(1, 2, || unreachable!("made once"), Some(&up))
            .unwrap();
        assert!(Arc::ptr_eq(&a, &again));
        assert!(Arc::ptr_eq(&a.get(Kind::Output), &again.get(Kind::Output)));
        let out = a.get(Kind::Message);
        assert_eq!(
            serde_json::to_string(&*out).unwrap(),
            r#"{"path":"wf@1/b@2","outputFor":["wf@1/b@2","wf@1"],"messageAsOutput":true}"#
        );
        assert_eq!(
            serde_json::to_string(&*a.get(Kind::Plain)).unwrap(),
            r#"{"path":"wf@1/b@2"}"#
        );
        assert!(roots.get(1, 0, || Arc::from("x"), None).is_none());
        assert!(roots.get(1, 9, || Arc::from("x"), None).is_none());
        assert!(roots.get(2, 1, || Arc::from("x"), None).is_none());
    }
}
