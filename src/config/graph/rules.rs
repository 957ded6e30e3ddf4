//! ADK's graph rules (START, reachability, duplicate edges, unlabelled cycles), the
//! contract's stricter ones (labels only on nodes that can route), and the Router
//! expression dialect.

use super::{DEFAULT_ROUTE, EdgeRoute, From, GraphSpec, Label};
use crate::config::{Diagnostic, Location};
use std::collections::HashSet;

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
    // Reachability from START.
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
        stack.extend(
            spec.edges
                .iter()
                .filter(|e| e.from == From::Node(n))
                .map(|e| e.to),
        );
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
    for (k, e) in spec.edges.iter().enumerate() {
        let earlier = spec.edges[..k]
            .iter()
            .find(|d| d.from == e.from && d.to == e.to && overlaps(&d.route, &e.route));
        if earlier.is_some() {
            out.push(error(
                &e.location,
                format!("duplicate edge from `{}` to `{}` (an earlier edge already covers this label); remove one", name(e.from), spec.nodes[e.to].name),
            ));
        }
    }
    if let Some(cycle) = unlabelled_cycle(spec) {
        let names: Vec<&str> = cycle.iter().map(|&i| spec.nodes[i].name.as_str()).collect();
        out.push(error(
            &spec.nodes[cycle[0]].location,
            format!("the cycle {} has no labelled edge, so it would never end; make one of its edges a route of an `adk_flow.Router`", names.join(" -> ")),
        ));
    }
    out
}

fn labels(route: &EdgeRoute) -> Option<Vec<Label>> {
    match route {
        EdgeRoute::Always => None,
        EdgeRoute::Default => Some(vec![Label::Str(DEFAULT_ROUTE.into())]),
        EdgeRoute::Labels(l) => Some(l.clone()),
    }
}

fn overlaps(a: &EdgeRoute, b: &EdgeRoute) -> bool {
    match (labels(a), labels(b)) {
        (Some(a), Some(b)) => a.iter().any(|x| b.iter().any(|y| x.same(y))),
        _ => true,
    }
}

/// A cycle of unlabelled edges, as node indices with the first repeated at the end.
fn unlabelled_cycle(spec: &GraphSpec) -> Option<Vec<usize>> {
    let n = spec.nodes.len();
    let next = |i: usize| -> Vec<usize> {
        spec.edges
            .iter()
            .filter(|e| e.from == From::Node(i) && e.route == EdgeRoute::Always)
            .map(|e| e.to)
            .collect()
    };
    let mut done = HashSet::new();
    for start in 0..n {
        if done.contains(&start) {
            continue;
        }
        // Iterative DFS keeping the path.
        let mut path = vec![start];
        let mut iters = vec![next(start).into_iter()];
        while let Some(it) = iters.last_mut() {
            match it.next() {
                Some(m) if path.contains(&m) => {
                    let at = path.iter().position(|&p| p == m).unwrap_or(0);
                    let mut cycle = path[at..].to_vec();
                    cycle.push(m);
                    return Some(cycle);
                }
                Some(m) if !done.contains(&m) => {
                    path.push(m);
                    iters.push(next(m).into_iter());
                }
                Some(_) => {}
                None => {
                    iters.pop();
                    if let Some(p) = path.pop() {
                        done.insert(p);
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
    use super::expression_problem;

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
