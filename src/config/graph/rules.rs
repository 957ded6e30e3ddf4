//! ADK's graph rules (START, reachability, duplicate edges, unlabelled cycles), the
//! contract's stricter ones (labels only on nodes that can route), and the Router
//! expression dialect.

use super::{DEFAULT_ROUTE, EdgeRoute, From, GraphSpec, Label};
use crate::config::{Diagnostic, Location};
use std::collections::{HashMap, HashSet};

/// Filters a Router expression may use: the contract's list (jinja2's aliases `d` and
/// `count` are not in it, and the `adk_flow` package refuses them too).
const FILTERS: &[&str] = &[
    "default", "lower", "upper", "trim", "length", "int", "string", "join", "first", "last",
];
/// Words of the expression syntax itself.
const KEYWORDS: &[&str] = &["if", "else", "and", "or", "not", "in", "is"];
/// Tests a Router expression may use.
const TESTS: &[&str] = &["defined", "undefined", "none"];

fn error(at: &Location, message: String) -> Diagnostic {
    Diagnostic::error(&at.file, at.pos, message)
}

/// Every rule the graph breaks; `edges_at` locates problems of the whole graph.
pub(super) fn check(spec: &GraphSpec, workflow: &str, edges_at: &Location) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let name = |f: From| match f {
        From::Start => "START".to_owned(),
        From::Node(i) => spec.nodes[i].name.clone(),
    };
    if !spec.edges.iter().any(|e| e.from == From::Start) {
        out.push(error(
            edges_at,
            format!("workflow `{workflow}` has no edge from START; begin a chain with it: `- [START, first_node]`"),
        ));
    }
    for e in &spec.edges {
        match (&e.from, &e.route) {
            (From::Start, EdgeRoute::Always) => {}
            (From::Start, _) => out.push(error(
                &e.location,
                format!(
                    "the edge from START to `{}` has a label; edges from START carry none",
                    spec.nodes[e.to].name
                ),
            )),
            (From::Node(i), EdgeRoute::Labels(_) | EdgeRoute::Default)
                if !spec.nodes[*i].can_route =>
            {
                out.push(error(
                    &e.location,
                    format!("node `{}` cannot emit a route, so this labelled edge could never fire; route from an `adk_flow.Router` node, give the LLM node the `adk_flow.set_route` tool, or remove the label", spec.nodes[*i].name),
                ));
            }
            _ => {}
        }
    }
    // Reachability from START, over each node's outgoing edges (linear in the graph).
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); spec.nodes.len()];
    let mut unlabelled: Vec<Vec<usize>> = vec![Vec::new(); spec.nodes.len()];
    for e in &spec.edges {
        if let From::Node(i) = e.from {
            successors[i].push(e.to);
            if e.route == EdgeRoute::Always {
                unlabelled[i].push(e.to);
            }
        }
    }
    let mut reached = vec![false; spec.nodes.len()];
    let mut stack: Vec<usize> = spec
        .edges
        .iter()
        .filter(|e| e.from == From::Start)
        .map(|e| e.to)
        .collect();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut reached[n], true) {
            continue;
        }
        stack.extend(successors[n].iter().copied().filter(|&m| !reached[m]));
    }
    for (i, node) in spec.nodes.iter().enumerate() {
        if !reached[i] {
            out.push(error(
                &node.location,
                format!(
                    "node `{}` cannot be reached from START; add an edge to it",
                    node.name
                ),
            ));
        }
    }
    // Duplicate edges: same ends, overlapping labels (no label overlaps everything).
    let mut seen: HashMap<(From, usize), Seen> = HashMap::new();
    for e in &spec.edges {
        let entry = seen.entry((e.from, e.to)).or_default();
        if entry.overlaps(&e.route) {
            out.push(error(
                &e.location,
                format!("duplicate edge from `{}` to `{}` (an earlier edge already covers this label); remove one", name(e.from), spec.nodes[e.to].name),
            ));
        }
        entry.add(&e.route);
    }
    if let Some(cycle) = find_cycle(&unlabelled) {
        out.push(error(
            &spec.nodes[cycle[0]].location,
            format!("the cycle {} has no labelled edge, so it would never end; make one of its edges a route of an `adk_flow.Router`", cycle_text(spec, &cycle)),
        ));
    }
    out
}

/// The labels already given to the edges between two nodes.
#[derive(Default)]
struct Seen {
    /// Whether one of them had no label (it fires for every route).
    always: bool,
    /// Their labels, as Python compares them (`true` is `1`).
    labels: HashSet<LabelKey>,
    /// Whether there was one at all.
    any: bool,
}

/// A label as a key of Python's set: `true` and `1` are one key, `"1"` another.
#[derive(Hash, PartialEq, Eq)]
enum LabelKey {
    Str(String),
    Int(i64),
}

fn label_keys(route: &EdgeRoute) -> Vec<LabelKey> {
    let key = |l: &Label| match l {
        Label::Str(s) => LabelKey::Str(s.clone()),
        Label::Int(i) => LabelKey::Int(*i),
        Label::Bool(b) => LabelKey::Int(i64::from(*b)),
    };
    match route {
        EdgeRoute::Always => Vec::new(),
        EdgeRoute::Default => vec![LabelKey::Str(DEFAULT_ROUTE.into())],
        EdgeRoute::Labels(l) => l.iter().map(key).collect(),
    }
}

impl Seen {
    fn overlaps(&self, route: &EdgeRoute) -> bool {
        self.any
            && (self.always
                || *route == EdgeRoute::Always
                || label_keys(route).iter().any(|k| self.labels.contains(k)))
    }

    fn add(&mut self, route: &EdgeRoute) {
        self.any = true;
        self.always |= *route == EdgeRoute::Always;
        self.labels.extend(label_keys(route));
    }
}

/// A cycle as written in a message: every name when it is short, its ends when it is long.
pub(super) fn cycle_text(spec: &GraphSpec, cycle: &[usize]) -> String {
    const SHOWN: usize = 8;
    let names: Vec<&str> = cycle.iter().map(|&i| spec.nodes[i].name.as_str()).collect();
    if names.len() <= SHOWN + 2 {
        return names.join(" -> ");
    }
    format!(
        "{} -> ... ({} more nodes) -> {}",
        names[..SHOWN].join(" -> "),
        names.len() - SHOWN - 2,
        names[names.len() - 2..].join(" -> ")
    )
}

/// A cycle of `next` (each node's successors: its unlabelled ones for ADK's rule), as node
/// indices with the first repeated at the end.
pub(super) fn find_cycle(next: &[Vec<usize>]) -> Option<Vec<usize>> {
    let n = next.len();
    let mut done = vec![false; n];
    let mut on_path = vec![false; n];
    for start in 0..n {
        if done[start] {
            continue;
        }
        // Iterative DFS keeping the path.
        let mut path = vec![start];
        on_path[start] = true;
        let mut iters = vec![next[start].iter()];
        while let Some(it) = iters.last_mut() {
            match it.next().copied() {
                Some(m) if on_path[m] => {
                    let at = path.iter().position(|&p| p == m).unwrap_or(0);
                    let mut cycle = path[at..].to_vec();
                    cycle.push(m);
                    return Some(cycle);
                }
                Some(m) if !done[m] => {
                    path.push(m);
                    on_path[m] = true;
                    iters.push(next[m].iter());
                }
                Some(_) => {}
                None => {
                    iters.pop();
                    if let Some(p) = path.pop() {
                        on_path[p] = false;
                        done[p] = true;
                    }
                }
            }
        }
    }
    None
}

/// What is wrong with a Router expression, if anything: a syntax error, or something
/// outside the dialect jinja2 and minijinja share (method calls, other filters or tests).
pub(crate) fn expression_problem(expr: &str) -> Option<String> {
    if let Some(e) = crate::template::jinja::expression_error(expr) {
        let e = e.trim_end_matches(" (in <expression>:1)");
        return Some(format!("not a valid Jinja expression: {e}"));
    }
    let tokens = tokens(expr);
    for (k, t) in tokens.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| tokens[p].as_str());
        let next = tokens.get(k + 1).map(String::as_str);
        let is_word = t
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        if !is_word || KEYWORDS.contains(&t.as_str()) {
            continue;
        }
        match prev {
            Some("|") if !FILTERS.contains(&t.as_str()) => {
                let alias = match t.as_str() {
                    "d" => "; write `default`",
                    "count" => "; write `length`",
                    _ => "",
                };
                return Some(format!(
                    "filter `{t}` is not in the Router dialect (filters: {}){alias}",
                    FILTERS.join(", ")
                ));
            }
            Some("|") => {}
            Some("is") if !TESTS.contains(&t.as_str()) && t != "not" => {
                return Some(format!(
                    "test `{t}` is not in the Router dialect (tests: defined, undefined, none)"
                ));
            }
            Some("not") if k >= 2 && tokens[k - 2] == "is" && !TESTS.contains(&t.as_str()) => {
                return Some(format!(
                    "test `{t}` is not in the Router dialect (tests: defined, undefined, none)"
                ));
            }
            Some(".") if next == Some("(") => {
                return Some(format!(
                    "method call `.{t}()` is not in the Router dialect; use filters, `x['key']` or `in`"
                ));
            }
            Some(".") => {}
            _ if next == Some("(") => {
                return Some(format!(
                    "function call `{t}()` is not in the Router dialect; use filters and operators"
                ));
            }
            _ => {}
        }
    }
    None
}

/// Words, single-character punctuation, and string literals (as one token each).
fn tokens(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                if chars[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            out.push("\"\"".into());
            i = j + 1;
        } else if c.is_alphanumeric() || c == '_' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            out.push(chars[i..j].iter().collect());
            i = j;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{GraphEdge, GraphNode, GraphNodeKind};
    use super::*;
    use crate::config::yaml::Pos;

    fn at(line: usize) -> Location {
        Location {
            file: "wf.yaml".into(),
            pos: Pos { line, col: 1 },
        }
    }

    /// A chain of `n` join nodes from START, each edge given twice (once with a label),
    /// closed into a cycle without a label: every rule sees a large graph.
    fn large(n: usize) -> GraphSpec {
        let mut spec = GraphSpec::default();
        for i in 0..n {
            spec.nodes.push(GraphNode {
                name: format!("n{i}"),
                kind: GraphNodeKind::Join,
                location: at(i + 1),
                can_route: true,
            });
        }
        let edge = |from, to, route| GraphEdge {
            from,
            to,
            route,
            location: at(to + 1),
        };
        spec.edges.push(edge(From::Start, 0, EdgeRoute::Always));
        for i in 1..n {
            spec.edges
                .push(edge(From::Node(i - 1), i, EdgeRoute::Always));
        }
        spec.edges
            .push(edge(From::Node(n - 1), 0, EdgeRoute::Always));
        spec.edges.push(edge(
            From::Node(n - 1),
            0,
            EdgeRoute::Labels(vec![Label::Bool(true)]),
        ));
        spec
    }

    /// Linear in the graph: 200,000 nodes are checked at once (a quadratic rule would
    /// take hours), and the cycle is named by its ends.
    #[test]
    fn large_graphs_are_checked_in_linear_time() {
        let spec = large(200_000);
        let found = check(&spec, "wf", &at(1));
        let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages[0].starts_with("duplicate edge from `n199999` to `n0`"),
            "{messages:?}"
        );
        assert!(
            messages[1].starts_with("the cycle n0 -> n1 -> n2 -> n3 -> n4 -> n5 -> n6 -> n7 -> ... (199991 more nodes) -> n199999 -> n0 has no labelled edge"),
            "{messages:?}"
        );
    }

    /// Python's set semantics: `true` and `1` overlap, `"1"` and `1` do not, and an edge
    /// without a label overlaps every other edge between the same nodes.
    #[test]
    fn duplicate_edges_compare_labels_as_python() {
        let mut spec = large(2);
        spec.edges.truncate(2);
        let labelled = |l: Vec<Label>| GraphEdge {
            from: From::Node(1),
            to: 0,
            route: EdgeRoute::Labels(l),
            location: at(9),
        };
        spec.edges.push(labelled(vec![Label::Str("1".into())]));
        spec.edges.push(labelled(vec![Label::Int(1)]));
        assert!(check(&spec, "wf", &at(1)).is_empty());
        spec.edges
            .push(labelled(vec![Label::Int(2), Label::Bool(true)]));
        assert_eq!(check(&spec, "wf", &at(1)).len(), 1);
        spec.edges.pop();
        spec.edges.push(GraphEdge {
            from: From::Node(1),
            to: 0,
            route: EdgeRoute::Default,
            location: at(9),
        });
        assert!(check(&spec, "wf", &at(1)).is_empty());
        // Without a label it overlaps the edges before and after it, and closes a cycle.
        spec.edges[3].route = EdgeRoute::Always;
        assert_eq!(check(&spec, "wf", &at(1)).len(), 3);
    }

    #[test]
    fn the_dialect() {
        for ok in [
            "'done' if 'APPROVED' in input else 'again'",
            "(state.attempts | default(0)) + 1",
            "state['items'] | length",
            "input is defined and input is not none",
            "{'published': input | upper}",
            "[1, 'a', true][0:2]",
            "1 if input == 'int' else ('1' if input == 'str' else [2, 'two'])",
        ] {
            assert_eq!(expression_problem(ok), None, "{ok}");
        }
        for (bad, word) in [
            ("input.split(',')", "split"),
            ("input | title", "title"),
            ("range(3)", "range"),
            ("input is string", "string"),
            ("'a' if", "valid"),
            ("1 if input == 'a' else (2 if x else lower(3))", "lower"),
        ] {
            let p = expression_problem(bad).unwrap_or_default();
            assert!(p.contains(word), "{bad}: {p}");
        }
    }
}
