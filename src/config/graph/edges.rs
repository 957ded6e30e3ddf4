//! A workflow's edge items: chains (START, node references, fan-outs, routing maps) and
//! explicit edges, with their labels; each refusal located at its key or value.

use super::load::Build;
use super::{DEFAULT_ROUTE, EdgeRoute, From, GraphEdge, Label, START};
use crate::config::Location;
use crate::config::load::Loader;
use crate::config::source::Source;
use crate::config::yaml::escape_segment;
use serde_json::Value;

/// One element of a chain, resolved.
enum Element {
    Start,
    /// One node, or a fan-out.
    Nodes(Vec<usize>),
    /// A routing map: labelled targets.
    Map(Vec<(EdgeRoute, Vec<usize>, Location)>),
}

impl Element {
    fn targets(&self) -> Vec<usize> {
        match self {
            Element::Start => Vec::new(),
            Element::Nodes(n) => n.clone(),
            Element::Map(m) => m.iter().flat_map(|(_, t, _)| t.iter().copied()).collect(),
        }
    }
}

impl Loader<'_> {
    /// One item of `edges`: a chain or an explicit edge.
    pub(super) fn edge_item(&mut self, src: &Source, build: &mut Build, item: &Value, ptr: &str) {
        match item {
            Value::Array(chain) => self.chain(src, build, chain, ptr),
            Value::Object(m) if m.contains_key("from_node") || m.contains_key("to_node") => {
                self.explicit_edge(src, build, m, ptr);
            }
            _ => self.diagnostics.push(src.error(
                ptr,
                "an edge item is a chain (a list such as `[START, a.yaml, b]`) or an explicit edge `{from_node: A, to_node: B, route: LABEL}`",
            )),
        }
    }

    fn chain(&mut self, src: &Source, build: &mut Build, chain: &[Value], ptr: &str) {
        if let [Value::Object(m)] = chain
            && (m.contains_key("from_node") || m.contains_key("to_node"))
        {
            // Reported as an element: an explicit edge in brackets.
            self.element(src, build, &chain[0], &format!("{ptr}/0"));
            return;
        }
        if chain.len() < 2 {
            self.diagnostics.push(src.error(
                ptr,
                "a chain needs at least 2 elements, such as `[START, agent.yaml]`",
            ));
            return;
        }
        let mut prev: Option<Element> = None;
        for (i, v) in chain.iter().enumerate() {
            let at = format!("{ptr}/{i}");
            let element = if v.as_str() == Some(START) {
                if i > 0 {
                    self.diagnostics.push(src.error(
                        &at,
                        "START can only be the first element of a chain: it never receives an edge",
                    ));
                    return;
                }
                Some(Element::Start)
            } else {
                self.element(src, build, v, &at)
            };
            let Some(element) = element else { return };
            if let Some(from) = &prev {
                let location = Location {
                    file: src.path.clone(),
                    pos: src.index.value(&at),
                };
                match &element {
                    Element::Map(routes) => match from {
                        Element::Start => {
                            self.diagnostics.push(src.error(
                                &at,
                                "a routing map cannot follow START: edges from START carry no label; put a node between them",
                            ));
                            return;
                        }
                        Element::Map(_) => {
                            self.diagnostics.push(src.error(
                                &at,
                                "two routing maps in a row: a routing map follows a node or a fan-out; split them into separate edge items",
                            ));
                            return;
                        }
                        Element::Nodes(froms) => {
                            for (route, targets, loc) in routes {
                                for f in froms {
                                    for t in targets {
                                        build.spec.edges.push(GraphEdge {
                                            from: From::Node(*f),
                                            to: *t,
                                            route: route.clone(),
                                            location: loc.clone(),
                                        });
                                    }
                                }
                            }
                        }
                    },
                    Element::Nodes(tos) => {
                        let froms: Vec<From> = match from {
                            Element::Start => vec![From::Start],
                            other => other.targets().into_iter().map(From::Node).collect(),
                        };
                        for f in &froms {
                            for t in tos {
                                build.spec.edges.push(GraphEdge {
                                    from: *f,
                                    to: *t,
                                    route: EdgeRoute::Always,
                                    location: location.clone(),
                                });
                            }
                        }
                    }
                    Element::Start => {}
                }
            }
            prev = Some(element);
        }
    }

    /// One element of a chain that is not START.
    fn element(&mut self, src: &Source, build: &mut Build, v: &Value, at: &str) -> Option<Element> {
        match v {
            Value::Array(items) => {
                if items.is_empty() {
                    self.diagnostics.push(
                        src.error(at, "an empty fan-out; list the nodes that run side by side"),
                    );
                    return None;
                }
                let mut nodes = Vec::new();
                for (j, item) in items.iter().enumerate() {
                    let item_at = format!("{at}/{j}");
                    if let Value::Object(m) = item
                        && !super::nodes::is_inline_node(m)
                    {
                        if !self.misspelled_node(src, m, &item_at) {
                            self.diagnostics.push(src.error(
                                &item_at,
                                "a routing map cannot be in a fan-out: it labels the edges from the element before it; make it the chain's next element, after the fan-out",
                            ));
                        }
                        return None;
                    }
                    if item.as_str() == Some(START) {
                        self.diagnostics.push(src.error(
                            &item_at,
                            "START cannot be in a fan-out: it begins a chain, before the fan-out (`[START, [a.yaml, b.yaml]]`)",
                        ));
                        return None;
                    }
                    if item.is_array() {
                        self.diagnostics.push(src.error(
                            &item_at,
                            "a fan-out lists nodes: file paths, node names or inline nodes",
                        ));
                        return None;
                    }
                    nodes.push(self.node_ref(src, build, item, &item_at)?);
                }
                Some(Element::Nodes(nodes))
            }
            Value::Object(m) if !super::nodes::is_inline_node(m) => {
                if m.contains_key("from_node") || m.contains_key("to_node") {
                    self.diagnostics.push(src.error(
                        at,
                        "an explicit edge is an edge item of its own, not an element of a chain: write `- {from_node: A, to_node: B}` directly under `edges`, without the brackets",
                    ));
                    return None;
                }
                if self.misspelled_node(src, m, at) {
                    return None;
                }
                self.routing_map(src, build, m, at).map(Element::Map)
            }
            _ => self
                .node_ref(src, build, v, at)
                .map(|n| Element::Nodes(vec![n])),
        }
    }

    /// Reports the unknown keys of a mapping meant as an inline LLM node (which ADK would
    /// read as a routing map); `true` when there were some.
    fn misspelled_node(
        &mut self,
        src: &Source,
        m: &serde_json::Map<String, Value>,
        at: &str,
    ) -> bool {
        let unknown = misspelled_node_keys(m);
        for (key, hint) in &unknown {
            let hint = hint
                .map(|h| format!(" (did you mean `{h}`?)"))
                .unwrap_or_default();
            self.diagnostics.push(src.key_error(
                &format!("{at}/{}", escape_segment(key)),
                format!("unknown key `{key}` in an inline LLM node{hint}; an inline node has only LlmAgent keys (with any other key, ADK reads the mapping as a routing map)"),
            ));
        }
        !unknown.is_empty()
    }

    fn routing_map(
        &mut self,
        src: &Source,
        build: &mut Build,
        m: &serde_json::Map<String, Value>,
        at: &str,
    ) -> Option<Vec<(EdgeRoute, Vec<usize>, Location)>> {
        if m.is_empty() {
            self.diagnostics
                .push(src.error(at, "an empty routing map; write `LABEL: target` entries"));
            return None;
        }
        let mut out = Vec::new();
        for (key, target) in m {
            let key_at = format!("{at}/{}", escape_segment(key));
            let label = self.map_label(src, key, &key_at)?;
            let targets = match target {
                Value::Array(items) if !items.is_empty() => {
                    let mut t = Vec::new();
                    for (j, item) in items.iter().enumerate() {
                        t.push(self.node_ref(src, build, item, &format!("{key_at}/{j}"))?);
                    }
                    t
                }
                Value::Array(_) => {
                    self.diagnostics.push(src.error(
                        &key_at,
                        format!("label `{key}` has no target; write `{key}: node` or `{key}: [node, ...]`"),
                    ));
                    return None;
                }
                other => vec![self.node_ref(src, build, other, &key_at)?],
            };
            let location = Location {
                file: src.path.clone(),
                pos: src.index.key(&key_at),
            };
            // PyYAML folds `1` and `true` (`0` and `false`) into one key of a mapping.
            if let EdgeRoute::Labels(ls) = &label
                && let Some(first) = out.iter().find_map(|(r, _, _)| match r {
                    EdgeRoute::Labels(o) if o[0] != ls[0] && o[0].same(&ls[0]) => {
                        Some(o[0].clone())
                    }
                    _ => None,
                })
            {
                self.diagnostics.push(src.key_error(
                    &key_at,
                    format!("labels `{}` and `{}` are one key for PyYAML (ADK), which keeps only one of them; give one of them an explicit edge (`{{from_node: ..., to_node: ..., route: {}}}`)", first, ls[0], ls[0]),
                ));
                return None;
            }
            out.push((label, targets, location));
        }
        Some(out)
    }

    /// A routing map's key as a label.
    fn map_label(&mut self, src: &Source, key: &str, key_at: &str) -> Option<EdgeRoute> {
        let key = key.trim_end_matches('\0');
        let pos = src.index.key(key_at);
        if let Some(trap) = src.index.yaml11_integer(pos) {
            self.diagnostics
                .push(src.key_error(key_at, yaml11_integer_message(trap)));
            return None;
        }
        match src.index.typed_key(key_at) {
            None => {
                if src.index.is_yaml11_boolean(pos) {
                    self.diagnostics
                        .push(src.key_error(key_at, yaml11_message(key)));
                    return None;
                }
                if key == DEFAULT_ROUTE {
                    return Some(EdgeRoute::Default);
                }
                Some(EdgeRoute::Labels(vec![Label::Str(key.to_owned())]))
            }
            Some(Value::Bool(b)) => Some(EdgeRoute::Labels(vec![Label::Bool(*b)])),
            Some(Value::Number(n)) if n.is_i64() => Some(EdgeRoute::Labels(vec![Label::Int(
                n.as_i64().unwrap_or_default(),
            )])),
            Some(other) => {
                self.diagnostics.push(src.key_error(
                    key_at,
                    not_a_label_message(other, src.index.float_written(pos)),
                ));
                None
            }
        }
    }

    fn explicit_edge(
        &mut self,
        src: &Source,
        build: &mut Build,
        m: &serde_json::Map<String, Value>,
        ptr: &str,
    ) {
        for key in m.keys() {
            if !["from_node", "to_node", "route"].contains(&key.as_str()) {
                self.diagnostics.push(src.key_error(
                    &format!("{ptr}/{}", escape_segment(key)),
                    format!(
                        "unknown key `{key}` in an explicit edge; {}it has `from_node`, `to_node` and `route`",
                        crate::config::schema::did_you_mean(key, ["from_node", "to_node", "route"])
                            .map(|k| format!("did you mean `{k}`? "))
                            .unwrap_or_default()
                    ),
                ));
                return;
            }
        }
        let (Some(from_v), Some(to_v)) = (m.get("from_node"), m.get("to_node")) else {
            self.diagnostics
                .push(src.error(ptr, "an explicit edge needs both `from_node` and `to_node`"));
            return;
        };
        let from_at = format!("{ptr}/from_node");
        let to_at = format!("{ptr}/to_node");
        let from = if from_v.as_str() == Some(START) {
            From::Start
        } else {
            match self.node_ref(src, build, from_v, &from_at) {
                Some(i) => From::Node(i),
                None => return,
            }
        };
        if to_v.as_str() == Some(START) {
            self.diagnostics
                .push(src.error(&to_at, "START never receives an edge"));
            return;
        }
        let Some(to) = self.node_ref(src, build, to_v, &to_at) else {
            return;
        };
        let route_at = format!("{ptr}/route");
        let route = match m.get("route") {
            None | Some(Value::Null) => EdgeRoute::Always,
            Some(v) => match self.route_labels(src, v, &route_at) {
                Some(r) => r,
                None => return,
            },
        };
        let pos = if m.contains_key("route") {
            src.index.value(&route_at)
        } else {
            src.index.value(&to_at)
        };
        build.spec.edges.push(GraphEdge {
            from,
            to,
            route,
            location: Location {
                file: src.path.clone(),
                pos,
            },
        });
    }

    /// An explicit edge's `route`: a label or a list of labels.
    fn route_labels(&mut self, src: &Source, v: &Value, at: &str) -> Option<EdgeRoute> {
        match v {
            Value::Array(items) if !items.is_empty() => {
                let mut labels = Vec::new();
                for (j, item) in items.iter().enumerate() {
                    let item_at = format!("{at}/{j}");
                    if item.as_str() == Some(DEFAULT_ROUTE) {
                        self.diagnostics.push(src.error(
                            &item_at,
                            "`__DEFAULT__` cannot be combined with other labels in a list; give it an edge of its own",
                        ));
                        return None;
                    }
                    labels.push(self.one_label(src, item, &item_at)?);
                }
                Some(EdgeRoute::Labels(labels))
            }
            Value::Array(_) => {
                self.diagnostics.push(src.error(
                    at,
                    "`route: []` lists no label; write a label, a list of labels, or leave `route` out",
                ));
                None
            }
            Value::String(s) if s == DEFAULT_ROUTE => Some(EdgeRoute::Default),
            other => Some(EdgeRoute::Labels(vec![self.one_label(src, other, at)?])),
        }
    }

    fn one_label(&mut self, src: &Source, v: &Value, at: &str) -> Option<Label> {
        if let Some(trap) = src.index.yaml11_integer(src.index.value(at)) {
            self.diagnostics
                .push(src.error(at, yaml11_integer_message(trap)));
            return None;
        }
        if let Value::String(s) = v
            && src.index.is_yaml11_boolean(src.index.value(at))
        {
            self.diagnostics.push(src.error(at, yaml11_message(s)));
            return None;
        }
        match Label::from_json(v) {
            Some(l) => Some(l),
            None => {
                self.diagnostics.push(src.error(
                    at,
                    not_a_label_message(v, src.index.float_written(src.index.value(at))),
                ));
                None
            }
        }
    }
}

/// Why a value is no label (a float, a list or mapping where one label belongs, null),
/// and what to write instead.
fn not_a_label_message(v: &Value, written: Option<&str>) -> String {
    if let Some(w) = written {
        let digits = w.trim_start_matches(['-', '+']);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
            return format!(
                "label `{w}` is an integer beyond the 64-bit integers adk-flow's labels hold (ADK would take it); quote it for a string (`\"{w}\"`) that a route must equal, or use a smaller integer"
            );
        }
        if !v
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
        {
            return format!(
                "label `{w}` is a float: labels are strings, integers or true/false (ADK refuses it too); quote it for a string (`\"{w}\"`) that a route must equal"
            );
        }
    }
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 && f.abs() < 9.2e18 {
                format!(
                    "label `{v}` is a float: labels are strings, integers or true/false (ADK reads `{v}` as the integer {i}); write `{i}`, or quote it for a string (`\"{v}\"`) that a route must equal",
                    i = f as i64
                )
            } else {
                format!(
                    "label `{v}` is a float: labels are strings, integers or true/false (ADK refuses it too); quote it for a string (`\"{v}\"`) that a route must equal"
                )
            }
        }
        _ => format!(
            "label `{v}` is neither a string, an integer nor true/false; quote it to make it a string"
        ),
    }
}

/// Why an unquoted YAML 1.1 trap used as a label is refused.
fn yaml11_integer_message(trap: &crate::config::yaml::Yaml11Integer) -> String {
    format!("label {}", yaml11_trap_message(trap))
}

/// Why an unquoted YAML 1.1 trap (an integer written `017`, `1_000`, `0o17`; a date) is
/// refused, and what to write instead.
pub(in crate::config) fn yaml11_trap_message(
    (written, old, new): &crate::config::yaml::Yaml11Integer,
) -> String {
    let instead = if old.starts_with("a date") {
        "quote it to make it a string"
    } else if old.contains("float") || new.contains("float") {
        "quote it to make it a string, or write the float with a dot and no `_` (such as `1000.0`, `1.0e+3`)"
    } else {
        "quote it to make it a string, or write the integer in plain decimal"
    };
    format!(
        "`{written}` is unquoted: ADK (PyYAML, YAML 1.1) reads it as {old}, adk-flow (YAML 1.2) as {new}; {instead}"
    )
}

/// Why an unquoted `yes`/`no`/`on`/`off` is refused, and what to write instead.
fn yaml11_message(word: &str) -> String {
    format!(
        "label `{word}` is unquoted: ADK (PyYAML, YAML 1.1) reads it as a boolean, adk-flow (YAML 1.2) as a string; quote it (`\"{word}\"`) or write true/false"
    )
}

/// The keys that keep a mapping from being an inline LLM node when it looks meant as one:
/// it has a `name` and another LlmAgent key, or a key a letter or two away from one
/// (`instrution`). ADK reads such a mapping as a routing map (labels `name`, `model`, ...).
fn misspelled_node_keys(m: &serde_json::Map<String, Value>) -> Vec<(&str, Option<&'static str>)> {
    if !m.get("name").is_some_and(Value::is_string) {
        return Vec::new();
    }
    let near =
        |k: &str| crate::config::schema::did_you_mean(k, super::nodes::LLM_KEYS.iter().copied());
    let unknown: Vec<(&str, Option<&'static str>)> = m
        .keys()
        .map(String::as_str)
        .filter(|k| !super::nodes::LLM_KEYS.contains(k) && !k.ends_with("_code"))
        .map(|k| (k, near(k)))
        .collect();
    let meant = m
        .keys()
        .any(|k| k != "name" && super::nodes::LLM_KEYS.contains(&k.as_str()))
        || unknown.iter().any(|(_, hint)| hint.is_some());
    if meant { unknown } else { Vec::new() }
}
