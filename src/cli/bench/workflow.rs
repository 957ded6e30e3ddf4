//! `w_graph`: the ADK 2 workflow loop of the workflow contract's appendix, built in code:
//! START → writer (an LLM node, `output_key: draft`) → judge (a Router routing `retry`
//! back to the writer until the draft holds FINAL, counting `attempts`) → publish (a
//! terminal Router). Five events per invocation, checked against ADK 2.13's.

use super::scenarios::{llm, one_round, scripted};
use crate::routes::{EdgeRoute, Label};
use crate::template::jinja::Expression;
use crate::tree::{AgentKind, AgentTree, Graph, GraphEdge, GraphNode, GraphNodeKind, Router};
use serde_json::json;

/// The committed events of one invocation, normalized as `testing::normalize_events`
/// writes them: the events of the workflow contract's appendix, as ADK 2.13 printed them.
pub(super) const EXPECTED: &str = r#"{"actions":{"stateDelta":{"draft":"draft one"}},"author":"writer","content":{"parts":[{"text":"draft one"}],"role":"model"},"invocationId":"inv:1","nodeInfo":{"path":"headline_wf@1/writer@1","outputFor":["headline_wf@1/writer@1"],"messageAsOutput":true}}
{"actions":{"stateDelta":{"attempts":1},"route":"retry"},"author":"headline_wf","invocationId":"inv:1","nodeInfo":{"path":"headline_wf@1/judge@1","outputFor":["headline_wf@1/judge@1"]},"output":"draft one"}
{"actions":{"stateDelta":{"draft":"draft two FINAL"}},"author":"writer","content":{"parts":[{"text":"draft two FINAL"}],"role":"model"},"invocationId":"inv:1","nodeInfo":{"path":"headline_wf@1/writer@2","outputFor":["headline_wf@1/writer@2"],"messageAsOutput":true}}
{"actions":{"stateDelta":{"attempts":2},"route":"done"},"author":"headline_wf","invocationId":"inv:1","nodeInfo":{"path":"headline_wf@1/judge@2","outputFor":["headline_wf@1/judge@2"]},"output":"draft two FINAL"}
{"author":"headline_wf","invocationId":"inv:1","nodeInfo":{"path":"headline_wf@1/publish@1","outputFor":["headline_wf@1/publish@1","headline_wf@1"]},"output":{"published":"DRAFT TWO FINAL"}}
"#;

fn expression(source: &str) -> Expression {
    // The expressions are written here and always compile.
    Expression::compile(source).unwrap_or_else(|e| unreachable!("bench expression: {e}"))
}

/// Adds the workflow to `tree`, with a scripted model serving one invocation's replies
/// over again.
pub(super) fn tree(tree: &mut AgentTree) {
    let model = scripted(json!({
        "writer": one_round(&[json!({"text": "draft one"}), json!({"text": "draft two FINAL"})]),
    }));
    let root = tree.add(
        None,
        "headline_wf",
        "Writes a headline.",
        AgentKind::Parallel,
    );
    let mut kind = llm(&model, "Write a headline.", Vec::new(), "draft");
    if let AgentKind::Llm(w) = &mut kind {
        // A single-turn node sees its input only.
        w.include_contents = crate::tree::IncludeContents::None;
    }
    let writer = tree.add(Some(root), "writer", "Writes a draft.", kind);
    let node = |name: &str, kind: GraphNodeKind, terminal: bool| GraphNode {
        name: name.into(),
        kind,
        terminal,
    };
    let judge = Router::new(
        expression("'done' if 'FINAL' in input else 'retry'"),
        None,
        vec![(
            "attempts".into(),
            expression("(state.attempts | default(0)) + 1"),
        )],
    );
    let publish = Router::new(
        expression("none"),
        Some(expression("{'published': input | upper}")),
        Vec::new(),
    );
    let label = |l: &str| EdgeRoute::Labels(vec![Label::Str(l.into())]);
    let edge = |from: Option<usize>, to: usize, route: EdgeRoute| GraphEdge { from, to, route };
    let graph = Graph {
        nodes: vec![
            node("writer", GraphNodeKind::Agent(writer), false),
            node("judge", GraphNodeKind::Router(Box::new(judge)), false),
            node("publish", GraphNodeKind::Router(Box::new(publish)), true),
        ],
        edges: vec![
            edge(None, 0, EdgeRoute::Always),
            edge(Some(0), 1, EdgeRoute::Always),
            edge(Some(1), 0, label("retry")),
            edge(Some(1), 2, label("done")),
        ],
        max_concurrency: None,
        max_node_runs: None,
    };
    tree.set_kind(root, AgentKind::Graph(Box::new(graph)));
}
