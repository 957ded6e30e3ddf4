//! Lowering a checked workflow graph: node names to tree ids, Router expressions
//! compiled once, terminal nodes marked.

use super::build::BuildError;
use crate::config::graph::{From, GraphNodeKind as SpecKind, GraphSpec};
use crate::template::jinja::Expression;
use crate::tree::{AgentId, Graph, GraphEdge, GraphNode, GraphNodeKind, Router};

/// The runtime graph of workflow `name`, whose agent nodes are `agents` (its children in
/// the tree, in the order of the spec's sub-agents).
pub(super) fn lower(name: &str, spec: &GraphSpec, agents: &[AgentId]) -> Result<Graph, BuildError> {
    let compile = |router: &str, field: &str, source: &str| {
        Expression::compile(source).map_err(|source| BuildError::RouterExpression {
            workflow: name.to_owned(),
            router: router.to_owned(),
            field: field.to_owned(),
            source,
        })
    };
    let mut nodes = Vec::with_capacity(spec.nodes.len());
    for (i, node) in spec.nodes.iter().enumerate() {
        let kind = match &node.kind {
            SpecKind::Agent(k) => GraphNodeKind::Agent(agents[*k]),
            SpecKind::Join => GraphNodeKind::Join,
            SpecKind::Router(r) => GraphNodeKind::Router(Box::new(Router::new(
                compile(&node.name, "route", &r.route)?,
                r.output
                    .as_deref()
                    .map(|o| compile(&node.name, "output", o))
                    .transpose()?,
                r.state
                    .iter()
                    .map(|(k, e)| Ok((k.clone(), compile(&node.name, &format!("state.{k}"), e)?)))
                    .collect::<Result<_, BuildError>>()?,
            ))),
        };
        nodes.push(GraphNode {
            name: node.name.clone(),
            kind,
            terminal: spec.is_terminal(i),
        });
    }
    let edges = spec
        .edges
        .iter()
        .map(|e| GraphEdge {
            from: match e.from {
                From::Start => None,
                From::Node(i) => Some(i),
            },
            to: e.to,
            route: e.route.clone(),
        })
        .collect();
    Ok(Graph {
        nodes,
        edges,
        max_concurrency: spec.max_concurrency,
        max_node_runs: spec.max_node_runs,
    })
}
