//! Whether a workflow's run can be polled as a plain sequence, without counting asyncio's
//! ready queue (see [`super::clock`]), decided once per workflow from its graph.
//!
//! The count only orders node runs under way together. While one node run is under way
//! in the whole tree, its events come in the order it makes them, whatever the count
//! says, so a run polled node after node yields the same events. When two start at once
//! the count matters from then on:
//!
//! - in a tree without nested workflows, the root's counted state at that moment is
//!   known (every node ran alone, nothing was put, the consumer is idle: see
//!   [`super::lanes::Lane::run_alone`]), so the root starts counting there;
//! - a nested workflow's events are put and wait for the Runner's consumer, whose state
//!   a plain run does not keep: a tree with nested workflows is run plainly only when no
//!   graph in it can ever start two nodes at once ([`never_concurrent`]).

use crate::routes::EdgeRoute;
use crate::tree::{AgentId, AgentKind, AgentTree, Graph, GraphNodeKind};

/// How a root workflow's run is polled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// As a plain sequence until two node runs are under way at once, then counted (a
    /// tree without nested workflows).
    PlainUntilConcurrent,
    /// As a plain sequence throughout: no graph of the tree can run two nodes at once.
    Plain,
    /// Counted from the start.
    Counted,
}

/// How workflow `id` of `tree`, run as the root, is polled.
pub(super) fn mode(tree: &AgentTree, id: AgentId) -> Mode {
    let mut graphs = Vec::new();
    collect(tree, id, &mut graphs);
    match graphs.as_slice() {
        [] => Mode::Plain,
        [_] => Mode::PlainUntilConcurrent,
        all if all.iter().all(|g| never_concurrent(g)) => Mode::Plain,
        _ => Mode::Counted,
    }
}

/// The graphs of workflow `id` and of the workflows nested in it, each once.
fn collect<'t>(tree: &'t AgentTree, id: AgentId, graphs: &mut Vec<&'t Graph>) {
    let AgentKind::Graph(graph) = &tree.get(id).kind else {
        return;
    };
    if graphs.iter().any(|g| std::ptr::eq(*g, &**graph)) {
        return;
    }
    graphs.push(graph);
    for node in &graph.nodes {
        if let GraphNodeKind::Agent(agent) = node.kind {
            collect(tree, agent, graphs);
        }
    }
}

/// Whether `graph` can never start two node runs at once, whatever its nodes output or
/// route: no JoinNode, at most one successor of START, and each node's edges give at
/// most one target (one unlabelled edge alone, or at most one labelled edge and at most
/// one `__DEFAULT__`: a route that is a list may match several labelled edges).
pub(super) fn never_concurrent(graph: &Graph) -> bool {
    if graph
        .nodes
        .iter()
        .any(|n| matches!(n.kind, GraphNodeKind::Join))
    {
        return false;
    }
    let from = |node: Option<usize>| graph.edges.iter().filter(move |e| e.from == node);
    if from(None).count() > 1 {
        return false;
    }
    (0..graph.nodes.len()).all(|n| {
        let (mut always, mut labelled, mut default) = (0, 0, 0);
        for e in from(Some(n)) {
            match e.route {
                EdgeRoute::Always => always += 1,
                EdgeRoute::Labels(_) => labelled += 1,
                EdgeRoute::Default => default += 1,
            }
        }
        match always {
            0 => labelled <= 1 && default <= 1,
            1 => labelled == 0 && default == 0,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::Label;
    use crate::tree::{GraphEdge, GraphNode};

    fn node(name: &str, kind: GraphNodeKind) -> GraphNode {
        GraphNode {
            name: name.into(),
            kind,
            terminal: false,
        }
    }

    /// A Router node that routes nowhere.
    fn router() -> GraphNodeKind {
        let none = || crate::template::jinja::Expression::compile("none").unwrap();
        GraphNodeKind::Router(Box::new(crate::tree::Router::new(none(), None, Vec::new())))
    }

    fn edge(from: Option<usize>, to: usize, route: EdgeRoute) -> GraphEdge {
        GraphEdge { from, to, route }
    }

    fn label(l: &str) -> EdgeRoute {
        EdgeRoute::Labels(vec![Label::Str(l.into())])
    }

    fn graph(nodes: Vec<GraphNode>, edges: Vec<GraphEdge>) -> Graph {
        Graph {
            nodes,
            edges,
            max_concurrency: None,
            max_node_runs: None,
        }
    }

    /// Three plain nodes `a`, `b`, `c` with these edges.
    fn abc(edges: Vec<GraphEdge>) -> Graph {
        graph(
            ["a", "b", "c"]
                .into_iter()
                .map(|n| node(n, router()))
                .collect(),
            edges,
        )
    }

    #[test]
    fn a_chain_and_a_loop_are_never_concurrent() {
        use EdgeRoute::{Always, Default};
        let chain = abc(vec![
            edge(None, 0, Always),
            edge(Some(0), 1, Always),
            edge(Some(1), 2, Always),
        ]);
        assert!(never_concurrent(&chain));
        let looping = abc(vec![
            edge(None, 0, Always),
            edge(Some(0), 1, label("check")),
            edge(Some(1), 0, label("retry")),
            edge(Some(1), 2, Default),
        ]);
        assert!(never_concurrent(&looping));
    }

    #[test]
    fn a_fan_out_anywhere_is_concurrent() {
        use EdgeRoute::{Always, Default};
        // START to two nodes (a list target is loaded as one edge per target).
        let start = abc(vec![edge(None, 0, Always), edge(None, 1, Always)]);
        assert!(!never_concurrent(&start));
        // A node to two nodes, later in the graph.
        let later = abc(vec![
            edge(None, 0, Always),
            edge(Some(0), 1, Always),
            edge(Some(0), 2, Always),
        ]);
        assert!(!never_concurrent(&later));
        // An unlabelled edge beside a labelled one, two defaults, two labelled edges (a
        // list route matches both).
        for second in [label("x"), Default] {
            let g = abc(vec![
                edge(None, 0, Always),
                edge(Some(0), 1, Always),
                edge(Some(0), 2, second),
            ]);
            assert!(!never_concurrent(&g));
        }
        let defaults = abc(vec![
            edge(None, 0, Always),
            edge(Some(0), 1, Default),
            edge(Some(0), 2, Default),
        ]);
        assert!(!never_concurrent(&defaults));
        let labels = abc(vec![
            edge(None, 0, Always),
            edge(Some(0), 1, label("x")),
            edge(Some(0), 2, label("y")),
        ]);
        assert!(!never_concurrent(&labels));
    }

    #[test]
    fn a_join_node_is_concurrent() {
        let g = graph(
            vec![node("a", router()), node("j", GraphNodeKind::Join)],
            vec![
                edge(None, 0, EdgeRoute::Always),
                edge(Some(0), 1, EdgeRoute::Always),
            ],
        );
        assert!(!never_concurrent(&g));
    }

    /// A tree whose root workflow runs `inner` (a nested workflow) after a Router.
    fn nested(inner: Graph, root_edges: Vec<GraphEdge>) -> (AgentTree, AgentId) {
        let mut tree = AgentTree::new();
        let root = tree.add(None, "root", "", AgentKind::Parallel);
        let sub = tree.add(Some(root), "sub", "", AgentKind::Parallel);
        tree.set_kind(sub, AgentKind::Graph(Box::new(inner)));
        let outer = graph(
            vec![
                node("a", router()),
                node("sub", GraphNodeKind::Agent(sub)),
                node("b", router()),
            ],
            root_edges,
        );
        tree.set_kind(root, AgentKind::Graph(Box::new(outer)));
        (tree, root)
    }

    #[test]
    fn modes_of_trees() {
        use EdgeRoute::Always;
        let chain = || {
            abc(vec![
                edge(None, 0, Always),
                edge(Some(0), 1, Always),
                edge(Some(1), 2, Always),
            ])
        };
        let fan = || abc(vec![edge(None, 0, Always), edge(None, 1, Always)]);
        let root_chain = || {
            vec![
                edge(None, 0, Always),
                edge(Some(0), 1, Always),
                edge(Some(1), 2, Always),
            ]
        };
        let root_fan = || {
            vec![
                edge(None, 0, Always),
                edge(Some(0), 1, Always),
                edge(Some(0), 2, Always),
            ]
        };
        // Sequential throughout, nested included: plain.
        let (tree, root) = nested(chain(), root_chain());
        assert_eq!(mode(&tree, root), Mode::Plain);
        // A nested workflow with a fan-out: counted.
        let (tree, root) = nested(fan(), root_chain());
        assert_eq!(mode(&tree, root), Mode::Counted);
        // A fan-out in the root beside a nested workflow: counted.
        let (tree, root) = nested(chain(), root_fan());
        assert_eq!(mode(&tree, root), Mode::Counted);
        // No nested workflow: plain until two nodes run at once, fan-out or not.
        for g in [chain(), fan()] {
            let mut tree = AgentTree::new();
            let root = tree.add(None, "root", "", AgentKind::Parallel);
            tree.set_kind(root, AgentKind::Graph(Box::new(g)));
            assert_eq!(mode(&tree, root), Mode::PlainUntilConcurrent);
        }
    }
}
