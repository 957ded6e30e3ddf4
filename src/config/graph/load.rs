//! A workflow file's own keys (`name`, `edges`, `max_concurrency`, `max_node_runs`, and
//! the root file's `define` and `state`), and the nodes it defines, each refusal located
//! at the key or value it is about; the edge items are read in `edges.rs`.

use super::nodes::NodeDef;
use super::{GraphNode, GraphSpec};
use crate::config::agent_config::Define;
use crate::config::load::{Loader, ROOT_ONLY_KEYS, RootKeys};
use crate::config::source::{Source, typed};
use crate::config::yaml::escape_segment;
use crate::config::{AgentSpec, AgentSpecKind, Location};
use crate::names::is_identifier;
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
    /// How each loaded node file was first written, by canonical path.
    pub(super) spelled: HashMap<PathBuf, String>,
    /// The strings that named a node file (ADK's loader finds a node file's node again by
    /// the string written, not by the file).
    pub(super) spellings: std::collections::HashSet<String>,
    /// Where each inline node of the workflow is defined, to tell a forward reference.
    pub(super) later: HashMap<String, crate::config::yaml::Pos>,
    /// Each defined node's index, by name.
    pub(super) names: HashMap<String, usize>,
    /// The names of nodes whose definition was refused (a reference to one says nothing
    /// more).
    pub(super) failed: std::collections::HashSet<String>,
    /// Each node file's node, by the file's name without its extension (`writer` for
    /// `writer.yaml`), to tell a reference by file name.
    pub(super) stems: HashMap<String, usize>,
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
    /// Notes that the definition of a node (its `name`, if a string) was refused.
    pub(super) fn refused(&mut self, name: Option<&Value>) {
        if let Some(Value::String(name)) = name {
            self.failed.insert(name.clone());
        }
    }

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
        if let Some(first) = self.names.get(&name).map(|&i| &self.spec.nodes[i]) {
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
        self.names.insert(name.clone(), self.spec.nodes.len());
        self.spec.nodes.push(GraphNode {
            name,
            kind,
            location,
            can_route,
        });
        Some(self.spec.nodes.len() - 1)
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
        // An alias copies its anchor's node, positions included: ADK (PyYAML) reads an
        // aliased node as the very node it repeats, adk-flow as a second definition at the
        // anchor. Refused where written, before anything is read twice.
        if pointer.is_empty() && !src.index.aliases().is_empty() {
            for (pos, written) in src.index.aliases() {
                self.diagnostics.push(crate::config::Diagnostic::error(
                    &src.path,
                    *pos,
                    format!("YAML alias `{written}` in a workflow file: ADK would read an aliased node as the node it repeats, adk-flow as a second node; refer to a node by its name, and write a repeated mapping or list out"),
                ));
            }
            return None;
        }
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
            } else if ROOT_ONLY_KEYS.contains(&key.as_str()) {
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
        // A refused name refuses the workflow, whose edges are read all the same, so that
        // their refusals are reported too.
        let name = match map.get("name") {
            // `user` too, as ADK 2.13 loads it: its Router and JoinNode events are then
            // authored `user`, and count as the user's wherever ADK counts them so.
            Some(Value::String(n)) if is_identifier(n) => n.clone(),
            Some(Value::String(n)) => {
                self.diagnostics.push(src.error(
                    &name_ptr,
                    format!("workflow name `{n}` must be an identifier (letters, digits and `_`, not starting with a digit)"),
                ));
                ok = false;
                n.clone()
            }
            Some(_) => {
                self.diagnostics
                    .push(src.error(&name_ptr, "`name` must be a string"));
                ok = false;
                String::new()
            }
            None => {
                self.diagnostics.push(src.error(
                    pointer,
                    "missing required key `name` (a Workflow needs a name)",
                ));
                ok = false;
                String::new()
            }
        };
        let description = match map.get("description") {
            None => String::new(),
            Some(Value::String(d)) => d.clone(),
            // ADK's Workflow (pydantic) refuses `description: null` too.
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
        if pointer.is_empty() && !map.contains_key("define") && !map.contains_key("state") {
            ok &= self.yaml11_values(src);
        }
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

    /// Every unquoted `yes`, `no`, `on`, `off` (any case), YAML 1.1 integer trap (`017`,
    /// `1_000`) and date (`2024-01-01`) of a file of a workflow's tree that no other check
    /// reported (labels are): PyYAML gives ADK a boolean, another integer or a date where
    /// adk-flow reads a string or another integer, and ADK refuses it where a string
    /// belongs (a Router's `route`, an `instruction`). `true` when there were none.
    pub(super) fn yaml11_values(&mut self, src: &Source) -> bool {
        // A value refused already (`instruction: 1e3`, "must be a string") says too how
        // the two YAML versions read it, when they differ.
        for d in self.diagnostics.iter_mut().filter(|d| d.file == src.path) {
            if let Some(trap) = src.index.yaml11_integer(d.pos)
                && !d.message.contains("is unquoted")
            {
                d.message = format!(
                    "{} ({})",
                    d.message,
                    super::labels::yaml11_trap_message(trap)
                );
            }
        }
        let reported = |pos: &crate::config::yaml::Pos| {
            self.diagnostics
                .iter()
                .any(|d| d.pos == *pos && d.file == src.path)
        };
        let mut found: Vec<(crate::config::yaml::Pos, String)> = src
            .index
            .yaml11_boolean_words()
            .filter(|(pos, _)| !reported(pos))
            .map(|(pos, word)| {
                (pos, format!("`{word}` is unquoted: ADK (PyYAML, YAML 1.1) reads it as a boolean, adk-flow (YAML 1.2) as a string; quote it (`\"{word}\"`) or write true/false"))
            })
            .chain(
                src.index
                    .yaml11_integers()
                    .filter(|(pos, _)| !reported(pos))
                    // `1e-3`: a string for PyYAML, which pydantic reads as the same float
                    // where ADK wants a number (`temperature`), and a value any string
                    // field refuses (reported above): nothing differs to refuse here.
                    .filter(|(_, trap)| !reads_as_same_number(trap))
                    .map(|(pos, trap)| (pos, super::labels::yaml11_trap_message(trap))),
            )
            .collect();
        found.sort_by_key(|(pos, _)| (pos.line, pos.col));
        for (pos, message) in &found {
            self.diagnostics.push(crate::config::Diagnostic::error(
                &src.path,
                *pos,
                message.clone(),
            ));
        }
        found.is_empty()
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
        // `max_concurrency` (`!positive`) as ADK's pydantic reads an optional integer in
        // lax mode: null (no limit), true/false, 2.0, "2", " 2 " and "2.0" are integers too.
        let n = match v {
            _ if positive => v.as_i64(),
            Value::Null => return None,
            Value::Bool(b) => Some(i64::from(*b)),
            // An integer past 64 bits (read as a float) is one for Python: no limit.
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0)
                    .map(|f| if f > 0.0 { i64::MAX } else { 0 })
            }),
            Value::String(s) => s.trim().parse().ok().or_else(|| {
                let s = s.trim();
                // A decimal point, no exponent ("1e3" is no integer for pydantic).
                s.chars()
                    .all(|c| c.is_ascii_digit() || matches!(c, '.' | '+' | '-'))
                    .then(|| s.parse::<f64>().ok())
                    .flatten()
                    .filter(|f| f.fract() == 0.0)
                    .map(|f| f.clamp(0.0, i64::MAX as f64) as i64)
            }),
            _ => None,
        };
        match n {
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
}

/// Whether a float trap is written where PyYAML reads a string and YAML 1.2 a float
/// (`1e-3`, `1.0e3`): ADK's pydantic turns that string into the same float where a
/// number belongs, so the two readings differ only where a string belongs, which the
/// type checks refuse with a message that says how each version reads it.
fn reads_as_same_number(trap: &crate::config::yaml::Yaml11Integer) -> bool {
    let (written, old, _) = trap;
    old == "a string" && crate::config::yaml11::float_trap(written).is_some()
}
