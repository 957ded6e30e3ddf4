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
        Expression::compile(&dict_methods_fail(source)).map_err(|source| {
            BuildError::RouterExpression {
                workflow: name.to_owned(),
                router: router.to_owned(),
                field: field.to_owned(),
                source,
            }
        })
    };
    let mut nodes = Vec::with_capacity(spec.nodes.len());
    for (i, node) in spec.nodes.iter().enumerate() {
        let kind = match &node.kind {
            SpecKind::Agent(k) => GraphNodeKind::Agent(agents[*k]),
            SpecKind::Join => GraphNodeKind::Join,
            SpecKind::Router(r) => GraphNodeKind::Router(Box::new(Router {
                route: compile(&node.name, "route", &r.route)?,
                output: r
                    .output
                    .as_deref()
                    .map(|o| compile(&node.name, "output", o))
                    .transpose()?,
                state: r
                    .state
                    .iter()
                    .map(|(k, e)| Ok((k.clone(), compile(&node.name, &format!("state.{k}"), e)?)))
                    .collect::<Result<_, BuildError>>()?,
            })),
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

/// The methods of Python's dict: jinja2 (ADK) resolves `x.items` to the method, not to
/// the key `items`, and a method is no JSON value.
const DICT_METHODS: &[&str] = &[
    "clear",
    "copy",
    "fromkeys",
    "get",
    "items",
    "keys",
    "pop",
    "popitem",
    "setdefault",
    "update",
    "values",
];

/// `source` with every attribute access `.M` to a dict method `M` made a lookup of a key
/// no mapping has, so it fails when evaluated, as in ADK (where a mapping gives the method,
/// which no filter, operator or result takes); `x['items']` is left as written.
fn dict_methods_fail(source: &str) -> std::borrow::Cow<'_, str> {
    if !DICT_METHODS
        .iter()
        .any(|m| source.contains(&format!(".{m}")))
    {
        return std::borrow::Cow::Borrowed(source);
    }
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len() + 16);
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 1;
            } else if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == '\'' || c == '"' {
            quote = Some(c);
        } else if c == '.'
            && i > 0
            && (chars[i - 1].is_alphanumeric() || matches!(chars[i - 1], '_' | ')' | ']'))
        {
            let end = (i + 1..chars.len())
                .find(|&j| !(chars[j].is_alphanumeric() || chars[j] == '_'))
                .unwrap_or(chars.len());
            let name: String = chars[i + 1..end].iter().collect();
            if DICT_METHODS.contains(&name.as_str()) {
                out.push_str(&format!(
                    "['{name}() is a method of Python dicts in jinja2: write x[\\'{name}\\']']"
                ));
                i = end;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::dict_methods_fail;

    #[test]
    fn dict_methods_fail_as_in_jinja2() {
        assert_eq!(dict_methods_fail("state.count + 1"), "state.count + 1");
        assert_eq!(
            dict_methods_fail("state['items'] | length"),
            "state['items'] | length"
        );
        assert_eq!(dict_methods_fail("'a.items' ~ x"), "'a.items' ~ x");
        let e =
            crate::template::jinja::Expression::compile(&dict_methods_fail("state.items | length"))
                .unwrap();
        let ctx = serde_json::json!({"state": {"items": [1, 2]}});
        assert!(e.eval(&ctx).is_err());
        let e = crate::template::jinja::Expression::compile(&dict_methods_fail(
            "state['items'] | length",
        ))
        .unwrap();
        assert_eq!(e.eval(&ctx).unwrap(), 2);
    }
}
