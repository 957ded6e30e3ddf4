//! A workflow file's own keys and its `edges`: chains, fan-outs, routing maps, explicit
//! edges and labels, each refusal located at the key or value it is about.

use super::nodes::NodeDef;
use super::{DEFAULT_ROUTE, EdgeRoute, From, GraphEdge, GraphNode, GraphSpec, Label, START};
use crate::config::agent_config::Define;
use crate::config::load::{Loader, RootKeys};
use crate::config::source::{Source, typed};
use crate::config::yaml::escape_segment;
use crate::config::{AgentSpec, AgentSpecKind, Location};
use crate::names::{USER, is_identifier};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;

/// The keys of a workflow file.
const WORKFLOW_KEYS: &[&str] = &[
    "name",
    "agent_class",
    "description",
    "edges",
    "max_concurrency",
    "max_node_runs",
];

/// A workflow being built.
#[derive(Default)]
pub(super) struct Build {
    pub(super) spec: GraphSpec,
    /// LLM nodes and nested workflows.
    pub(super) agents: Vec<AgentSpec>,
    /// Node files already loaded, by canonical path.
    pub(super) files: HashMap<PathBuf, usize>,
    /// Where each inline node of the workflow is defined, to tell a forward reference.
    pub(super) later: HashMap<String, crate::config::yaml::Pos>,
}

/// The names of the inline nodes under `edges`, with where they are defined.
fn inline_names(
    src: &Source,
    v: &Value,
    pointer: &str,
) -> HashMap<String, crate::config::yaml::Pos> {
    let mut out = HashMap::new();
    let mut stack = vec![(v, pointer.to_owned())];
    while let Some((v, at)) = stack.pop() {
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    stack.push((item, format!("{at}/{i}")));
                }
            }
            Value::Object(m) if super::nodes::is_inline_node(m) => {
                if let Some(name) = m.get("name").and_then(Value::as_str) {
                    out.entry(name.to_owned())
                        .or_insert_with(|| src.index.value(&format!("{at}/name")));
                }
            }
            Value::Object(m) => {
                for (k, item) in m {
                    stack.push((item, format!("{at}/{}", escape_segment(k))));
                }
            }
            _ => {}
        }
    }
    out
}

impl Build {
    /// Adds a defined node; a name defined twice is reported and `None`.
    pub(super) fn add(&mut self, loader: &mut Loader<'_>, def: NodeDef) -> Option<usize> {
        let (name, kind, location, can_route) = match def {
            NodeDef::Agent(agent) => {
                let can_route = match &agent.kind {
                    AgentSpecKind::Llm(llm) => llm.tools.iter().any(|t| {
                        matches!(t, crate::config::ToolSpec::Builtin(n) if n == super::SET_ROUTE_TOOL)
                    }),
                    _ => false,
                };
                let name = agent.name.clone();
                let location = agent.location.clone();
                self.agents.push(agent);
                (
                    name,
                    super::GraphNodeKind::Agent(self.agents.len() - 1),
                    location,
                    can_route,
                )
            }
            NodeDef::Other {
                name,
                kind,
                location,
            } => {
                let can_route = matches!(kind, super::GraphNodeKind::Router(_));
                (name, kind, location, can_route)
            }
        };
        if let Some(first) = self.spec.nodes.iter().find(|n| n.name == name) {
            loader.diagnostics.push(crate::config::Diagnostic::error(
                &location.file,
                location.pos,
                format!(
                    "node name `{name}` is defined twice in this workflow (first at {}:{}:{}); refer to the node by its name, or give the new node another name",
                    first.location.file.display(),
                    first.location.pos.line,
                    first.location.pos.col
                ),
            ));
            return None;
        }
        self.spec.nodes.push(GraphNode {
            name,
            kind,
            location,
            can_route,
        });
        Some(self.spec.nodes.len() - 1)
    }
}

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
    /// A workflow (a file's top level, or an inline node): its keys, nodes and edges.
    pub(in crate::config) fn workflow(
        &mut self,
        src: &Source,
        value: &Value,
        pointer: &str,
        is_root: bool,
    ) -> Option<AgentSpec> {
        let map = value.as_object()?;
        let mut ok = true;
        for key in map.keys() {
            let at = format!("{pointer}/{}", escape_segment(key));
            if WORKFLOW_KEYS.contains(&key.as_str()) {
                continue;
            }
            if is_root && (key == "define" || key == "state") {
                continue;
            }
            ok = false;
            let message = if key.ends_with("_code") {
                format!(
                    "`{key}` references Python code, which adk-flow does not run; a Workflow routes with `adk_flow.Router` nodes"
                )
            } else if ["define", "state", "memory", "live"].contains(&key.as_str()) {
                format!("`{key}` belongs in the app's root file, at the top level")
            } else {
                let hint = crate::config::schema::did_you_mean(key, WORKFLOW_KEYS.iter().copied())
                    .map(|s| format!("did you mean `{s}`? "))
                    .unwrap_or_default();
                format!(
                    "unknown key `{key}` in a Workflow; {hint}a Workflow has `name`, `description`, `edges`, `max_concurrency` and `max_node_runs`"
                )
            };
            self.diagnostics.push(src.key_error(&at, message));
        }
        if is_root {
            let define = match map.get("define") {
                Some(v) => match typed::<Define>(src, v, &format!("{pointer}/define")) {
                    Ok(d) => Some(d),
                    Err(d) => {
                        self.diagnostics.push(d);
                        None
                    }
                },
                None => None,
            };
            let state = match map.get("state") {
                Some(Value::Object(m)) => Some(m.clone()),
                Some(_) => {
                    self.diagnostics.push(src.error(
                        &format!("{pointer}/state"),
                        "`state` is a mapping of initial session state",
                    ));
                    None
                }
                None => None,
            };
            let keys = RootKeys {
                define,
                state,
                memory: None,
                live: None,
            };
            self.root_keys(src, pointer, true, keys);
        }
        let name_ptr = format!("{pointer}/name");
        let name = match map.get("name") {
            Some(Value::String(n)) if is_identifier(n) && n != USER => n.clone(),
            Some(Value::String(n)) => {
                self.diagnostics.push(src.error(
                    &name_ptr,
                    format!("workflow name `{n}` must be an identifier (letters, digits and `_`, not starting with a digit), not `user`"),
                ));
                return None;
            }
            Some(_) => {
                self.diagnostics
                    .push(src.error(&name_ptr, "`name` must be a string"));
                return None;
            }
            None => {
                self.diagnostics.push(src.error(
                    pointer,
                    "missing required key `name` (a Workflow needs a name)",
                ));
                return None;
            }
        };
        let description = match map.get("description") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(d)) => d.clone(),
            Some(_) => {
                self.diagnostics.push(src.error(
                    &format!("{pointer}/description"),
                    "`description` must be a string",
                ));
                String::new()
            }
        };
        let max_concurrency = self.count(src, map, pointer, "max_concurrency", false);
        let max_node_runs = self.count(src, map, pointer, "max_node_runs", true);
        let mut build = Build::default();
        build.spec.max_concurrency = max_concurrency.filter(|&n| n > 0).map(|n| n as u32);
        build.spec.max_node_runs = max_node_runs.map(|n| n as u32);
        let edges_ptr = format!("{pointer}/edges");
        let before_edges = self.diagnostics.len();
        if let Some(edges) = map.get("edges") {
            build.later = inline_names(src, edges, &edges_ptr);
        }
        match map.get("edges") {
            Some(Value::Array(items)) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    self.edge_item(src, &mut build, item, &format!("{edges_ptr}/{i}"));
                }
            }
            Some(Value::Array(_)) => {
                ok = false;
                self.diagnostics.push(src.error(
                    &edges_ptr,
                    "`edges` is empty; write at least one chain, such as `- [START, agent.yaml]`",
                ));
            }
            Some(_) => {
                ok = false;
                self.diagnostics.push(src.error(
                    &edges_ptr,
                    "`edges` must be a list of chains (`- [START, a.yaml, b]`) and explicit edges (`- {from_node: a, to_node: b}`)",
                ));
            }
            None => {
                ok = false;
                self.diagnostics.push(src.error(
                    pointer,
                    "missing required key `edges`: a Workflow is its edges, such as `edges: [[START, agent.yaml]]`",
                ));
            }
        }
        ok &= self.diagnostics.len() == before_edges;
        let before = self.diagnostics.len();
        if ok {
            let at = Location {
                file: src.path.clone(),
                pos: src.index.key(&edges_ptr),
            };
            self.diagnostics
                .extend(super::rules::check(&build.spec, &name, &at));
        }
        ok &= self.diagnostics.len() == before;
        let positions = ["name", "edges", "agent_class"]
            .iter()
            .filter(|f| map.contains_key(**f))
            .map(|f| ((*f).to_owned(), src.index.value(&format!("{pointer}/{f}"))))
            .collect();
        ok.then(|| AgentSpec {
            name,
            description,
            kind: AgentSpecKind::Graph(Box::new(build.spec)),
            sub_agents: build.agents,
            location: Location {
                file: src.path.clone(),
                pos: src.index.value(&name_ptr),
            },
            positions,
            callbacks: crate::config::CallbackNames::default(),
        })
    }

    /// An integer setting of a workflow; `positive` ones must be at least 1.
    fn count(
        &mut self,
        src: &Source,
        map: &serde_json::Map<String, Value>,
        pointer: &str,
        key: &str,
        positive: bool,
    ) -> Option<i64> {
        let v = map.get(key)?;
        match v.as_i64() {
            Some(n) if !positive || n >= 1 => Some(n.min(i64::from(u32::MAX))),
            _ => {
                let want = if positive {
                    "an integer of at least 1"
                } else {
                    "an integer (0 or less: no limit)"
                };
                self.diagnostics.push(src.error(
                    &format!("{pointer}/{key}"),
                    format!("`{key}` must be {want}, found `{v}`"),
                ));
                None
            }
        }
    }

    /// One item of `edges`: a chain or an explicit edge.
    fn edge_item(&mut self, src: &Source, build: &mut Build, item: &Value, ptr: &str) {
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
                    if item.as_str() == Some(START) || item.is_array() {
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
                self.routing_map(src, build, m, at).map(Element::Map)
            }
            _ => self
                .node_ref(src, build, v, at)
                .map(|n| Element::Nodes(vec![n])),
        }
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
            out.push((label, targets, location));
        }
        Some(out)
    }

    /// A routing map's key as a label.
    fn map_label(&mut self, src: &Source, key: &str, key_at: &str) -> Option<EdgeRoute> {
        let key = key.trim_end_matches('\0');
        let pos = src.index.key(key_at);
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
                    format!("label `{other}` is neither a string, an integer nor true/false; quote it to make it a string"),
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
                    format!("unknown key `{key}` in an explicit edge; it has `from_node`, `to_node` and `route`"),
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
                    format!("route label `{v}` is neither a string, an integer nor true/false"),
                ));
                None
            }
        }
    }
}

/// Why an unquoted `yes`/`no`/`on`/`off` is refused, and what to write instead.
fn yaml11_message(word: &str) -> String {
    format!(
        "label `{word}` is unquoted: ADK (PyYAML, YAML 1.1) reads it as a boolean, adk-flow (YAML 1.2) as a string; quote it (`\"{word}\"`) or write true/false"
    )
}
