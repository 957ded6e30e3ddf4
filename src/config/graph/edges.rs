//! A workflow's edge items: chains (START, node references, fan-outs, routing maps) and
//! explicit edges (their labels read in `labels.rs`); each refusal located at its key or
//! value.

use super::load::Build;
use super::{EdgeRoute, From, GraphEdge, START};
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
        // Every element is read, those after a refused one too, so that the nodes defined
        // there are defined and their refusals reported; a refused element breaks the
        // chain (no edge into the element after it).
        let mut prev: Option<Element> = None;
        for (i, v) in chain.iter().enumerate() {
            let at = format!("{ptr}/{i}");
            let element = if v.as_str() == Some(START) {
                if i > 0 {
                    self.diagnostics.push(src.error(
                        &at,
                        "START can only be the first element of a chain: it never receives an edge",
                    ));
                    prev = None;
                    continue;
                }
                Some(Element::Start)
            } else {
                self.element(src, build, v, &at)
            };
            let Some(element) = element else {
                prev = None;
                continue;
            };
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
                            prev = None;
                            continue;
                        }
                        Element::Map(_) => {
                            self.diagnostics.push(src.error(
                                &at,
                                "two routing maps in a row: a routing map follows a node or a fan-out; split them into separate edge items",
                            ));
                            prev = None;
                            continue;
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
                // Every item is read, so that each refusal is reported and each node
                // defined; one refused item refuses the fan-out.
                let mut nodes = Some(Vec::with_capacity(items.len()));
                for (j, item) in items.iter().enumerate() {
                    let item_at = format!("{at}/{j}");
                    let why = match item {
                        Value::Object(m) if !super::nodes::is_inline_node(m) => {
                            (!self.misspelled_node(src, m, &item_at)).then_some(
                                "a routing map cannot be in a fan-out: it labels the edges from the element before it; make it the chain's next element, after the fan-out",
                            )
                        }
                        Value::String(s) if s == START => Some(
                            "START cannot be in a fan-out: it begins a chain, before the fan-out (`[START, [a.yaml, b.yaml]]`)",
                        ),
                        Value::Array(_) => {
                            Some("a fan-out lists nodes: file paths, node names or inline nodes")
                        }
                        _ => match self.node_ref(src, build, item, &item_at) {
                            Some(n) => {
                                nodes.iter_mut().for_each(|ns| ns.push(n));
                                continue;
                            }
                            None => None,
                        },
                    };
                    if let Some(why) = why {
                        self.diagnostics.push(src.error(&item_at, why));
                    }
                    nodes = None;
                }
                nodes.map(Element::Nodes)
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
        // Every entry is read, a refused label's targets too, so that the nodes defined
        // there are defined (no later "used before it is defined" for them) and every
        // refusal of the map is reported.
        let mut out = Vec::new();
        let mut failed = false;
        for (key, target) in m {
            let key_at = format!("{at}/{}", escape_segment(key));
            let label = self.map_label(src, key, &key_at);
            let targets = match target {
                Value::Array(items) if !items.is_empty() => {
                    let mut t = Some(Vec::with_capacity(items.len()));
                    for (j, item) in items.iter().enumerate() {
                        match self.node_ref(src, build, item, &format!("{key_at}/{j}")) {
                            Some(n) => t.iter_mut().for_each(|t| t.push(n)),
                            None => t = None,
                        }
                    }
                    t
                }
                Value::Array(_) => {
                    self.diagnostics.push(src.error(
                        &key_at,
                        format!("label `{key}` has no target; write `{key}: node` or `{key}: [node, ...]`"),
                    ));
                    None
                }
                other => self.node_ref(src, build, other, &key_at).map(|n| vec![n]),
            };
            let (Some(label), Some(targets)) = (label, targets) else {
                failed = true;
                continue;
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
                failed = true;
                continue;
            }
            out.push((label, targets, location));
        }
        (!failed).then_some(out)
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
}

/// The keys that keep a mapping from being an inline LLM node when it looks meant as one:
/// it has a `name` and another LlmAgent key, or a key a letter or two away from one
/// (`instrution`). ADK reads such a mapping as a routing map (labels `name`, `model`, ...).
fn misspelled_node_keys(m: &serde_json::Map<String, Value>) -> Vec<(&str, Option<&'static str>)> {
    if !m.get("name").is_some_and(Value::is_string) {
        return Vec::new();
    }
    let near =
        |k: &str| crate::config::schema::did_you_mean(k, super::llm_node::LLM_KEYS.iter().copied());
    let unknown: Vec<(&str, Option<&'static str>)> = m
        .keys()
        .map(String::as_str)
        .filter(|k| !super::llm_node::LLM_KEYS.contains(k) && !k.ends_with("_code"))
        .map(|k| (k, near(k)))
        .collect();
    let meant = m
        .keys()
        .any(|k| k != "name" && super::llm_node::LLM_KEYS.contains(&k.as_str()))
        || unknown.iter().any(|(_, hint)| hint.is_some());
    if meant { unknown } else { Vec::new() }
}
