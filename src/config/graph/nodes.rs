//! The nodes of a workflow: references (a file, a name defined earlier), inline nodes,
//! `adk_flow.Router`, `JoinNode`, nested workflows (LLM nodes and what they may not have:
//! `llm_node.rs`).

use super::load::Build;
use super::{GraphNodeKind, JOIN_CLASSES, ROUTER_CLASS, START, is_workflow_class};
use crate::config::agent_config::AgentClass;
use crate::config::load::Loader;
use crate::config::source::{Source, normalize_path};
use crate::config::{AgentSpec, AgentSpecKind, Location};
use crate::names::{USER, is_identifier};
use serde_json::{Map, Value};
use std::path::Path;

/// A node as defined, before it is added to its workflow.
pub(super) enum NodeDef {
    /// An LLM node or a nested workflow.
    Agent(AgentSpec),
    /// A Router or a JoinNode.
    Other {
        name: String,
        kind: GraphNodeKind,
        location: Location,
    },
}

/// Whether a mapping in a chain is an inline node rather than a routing map.
pub(super) fn is_inline_node(m: &Map<String, Value>) -> bool {
    m.contains_key("agent_class")
        || m.contains_key("config_path")
        || m.contains_key("code")
        || (m.contains_key("name")
            && m.keys()
                .all(|k| super::llm_node::LLM_KEYS.contains(&k.as_str()) || k.ends_with("_code")))
}

/// What to write instead of an unknown node name: a defined name it is close to (`wirter`:
/// `writer`), `START`, the name a node file defines (`w` for `w.yaml`), else how to define it.
fn unknown_name_hint(build: &Build, s: &str) -> String {
    if s.eq_ignore_ascii_case(START) {
        return format!("did you mean `{START}` (in capitals)?");
    }
    if let Some(&i) = build.stems.get(s) {
        return format!(
            "a node file's node is named by its `name`: did you mean `{}`?",
            build.spec.nodes[i].name
        );
    }
    if let Some(inner) = nested_owner(&build.agents, s) {
        return format!(
            "`{s}` is a node of the nested workflow `{inner}`, and a workflow's edges name only its own nodes; refer to `{inner}` instead"
        );
    }
    // The names are compared only while there are few enough to keep an error cheap.
    let near = (build.names.len() <= 2000)
        .then(|| {
            crate::config::schema::did_you_mean(s, build.spec.nodes.iter().map(|n| n.name.as_str()))
        })
        .flatten();
    match near {
        Some(name) => format!("did you mean `{name}`?"),
        None => "define it in an earlier edge item (a file path or an inline node), as references only look back".to_owned(),
    }
}

/// The name of the workflow among `agents` (or nested in one of them) whose graph has a
/// node named `name`.
fn nested_owner<'a>(agents: &'a [crate::config::AgentSpec], name: &str) -> Option<&'a str> {
    agents.iter().find_map(|a| match &a.kind {
        AgentSpecKind::Graph(g) if g.index_of(name).is_some() => Some(a.name.as_str()),
        AgentSpecKind::Graph(_) => nested_owner(&a.sub_agents, name),
        _ => None,
    })
}

/// Whether a string is a Python reference (`.mod.func`, `pkg.mod.func`).
fn is_python_ref(s: &str) -> bool {
    s.contains('.') && !s.contains('/') && !s.ends_with(".yaml") && !s.ends_with(".yml")
}

impl Loader<'_> {
    /// A node reference or an inline node: its index in the workflow.
    pub(super) fn node_ref(
        &mut self,
        src: &Source,
        build: &mut Build,
        v: &Value,
        at: &str,
    ) -> Option<usize> {
        match v {
            Value::String(s) if s.ends_with(".yaml") || s.ends_with(".yml") => {
                self.file_node(src, build, s, at, false)
            }
            Value::String(s) if s == START => {
                self.diagnostics
                    .push(src.error(at, "START can only start a chain (or be a `from_node`)"));
                None
            }
            Value::String(s) if is_python_ref(s) => {
                self.diagnostics.push(src.error(
                    at,
                    format!("`{s}` names a Python function, which adk-flow does not run; route with an `adk_flow.Router` node (`agent_class: adk_flow.Router`, `route: \"...\"`)"),
                ));
                None
            }
            Value::String(s) => match build.names.get(s).copied() {
                Some(i) => Some(i),
                // Its definition was refused, and said why.
                None if build.failed.contains(s) => None,
                None if build.later.get(s).is_some_and(|def| {
                    let here = src.index.value(at);
                    (def.line, def.col) < (here.line, here.col)
                }) =>
                {
                    None
                }
                None if build.later.contains_key(s) => {
                    let pos = build.later[s];
                    self.diagnostics.push(src.error(
                        at,
                        format!("node `{s}` is used before it is defined (at {}:{}); references only look back: define the node here, inline, and refer to it by name after", pos.line, pos.col),
                    ));
                    None
                }
                None => {
                    let hint = unknown_name_hint(build, s);
                    self.diagnostics.push(src.error(
                        at,
                        format!("no node named `{s}` is defined before this point; {hint}"),
                    ));
                    None
                }
            },
            Value::Object(m) => {
                if m.contains_key("code") {
                    self.diagnostics.push(src.key_error(
                        &format!("{at}/code"),
                        "`code:` references Python code, which adk-flow does not run; use a node file, an inline node or an `adk_flow.Router`",
                    ));
                    return None;
                }
                if let Some(path) = m.get("config_path") {
                    if m.len() > 1 {
                        self.diagnostics.push(src.error(
                            at,
                            "a node with `config_path` has no other keys; put them in the file",
                        ));
                        return None;
                    }
                    let Some(path) = path.as_str() else {
                        self.diagnostics.push(src.error(
                            &format!("{at}/config_path"),
                            "`config_path` must be a file path",
                        ));
                        return None;
                    };
                    return self.file_node(src, build, path, &format!("{at}/config_path"), true);
                }
                if !m.contains_key("name") && !m.contains_key("agent_class") {
                    self.diagnostics.push(src.error(
                        at,
                        "this mapping is no node: a node needs `name` (an LLM node `instruction` too); a routing map cannot stand here, it follows a node in a chain, never inside a routing map or an explicit edge",
                    ));
                    return None;
                }
                let Some(def) = self.node_value(src, v, at) else {
                    build.refused(m.get("name"));
                    return None;
                };
                build.add(self, def)
            }
            _ => {
                self.diagnostics.push(src.error(
                    at,
                    "a node is a file path (`agent.yaml`), the name of a node defined earlier, or an inline node (a mapping with `name`)",
                ));
                None
            }
        }
    }

    /// A node file: loaded once per path, then the same node wherever it appears
    /// (`mapping`: written `{config_path: FILE}`).
    fn file_node(
        &mut self,
        src: &Source,
        build: &mut Build,
        rel: &str,
        at: &str,
        mapping: bool,
    ) -> Option<usize> {
        let rel_path = Path::new(rel);
        if rel_path.is_absolute()
            || rel_path
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            self.diagnostics.push(src.error(
                at,
                format!("node file `{rel}` must be a relative path inside this workflow's folder (no absolute paths, no `..`)"),
            ));
            return None;
        }
        let base = src.path.parent().unwrap_or(Path::new("."));
        let target = normalize_path(&base.join(rel));
        if target.is_dir() {
            self.diagnostics
                .push(src.error(at, format!("node file `{rel}` is a folder, not a file")));
            return None;
        }
        if !target.is_file() {
            self.diagnostics.push(src.error(
                at,
                format!(
                    "node file `{rel}` not found (looked for {})",
                    target.display()
                ),
            ));
            return None;
        }
        if let Some(why) = self.fence.refusal("node file", rel, &target) {
            self.diagnostics.push(src.error(at, why));
            return None;
        }
        let canonical = target.canonicalize().unwrap_or_else(|_| target.clone());
        if let Some(&i) = build.files.get(&canonical) {
            // ADK's loader keeps a node file's node by the string written: the same string
            // again is that node, but `{config_path: FILE}` and another spelling of the path
            // load the file anew, a second node of the same name, which ADK refuses.
            let name = &build.spec.nodes[i].name;
            let first = build.spelled.get(&canonical).cloned().unwrap_or_default();
            if mapping {
                self.diagnostics.push(src.error(
                    at,
                    format!("`{{config_path: {rel}}}` loads the file `{first}` again in ADK, as a second node named `{name}` (ADK refuses two nodes of one name); refer to the node by its name `{name}`"),
                ));
                return None;
            }
            if !build.spellings.contains(rel) {
                self.diagnostics.push(src.error(
                    at,
                    format!("`{rel}` is the node file written `{first}` before: ADK takes each spelling of a path as a node of its own and refuses two nodes named `{name}`; write `{first}`, or the node's name `{name}`"),
                ));
                return None;
            }
            return Some(i);
        }
        if self.stack.contains(&canonical) {
            self.diagnostics.push(src.error(
                at,
                format!("node file `{rel}` makes a cycle: the file is already being loaded above this one"),
            ));
            return None;
        }
        if self.stack.len() >= crate::config::references::MAX_FILE_DEPTH {
            self.diagnostics
                .push(src.error(at, crate::config::references::too_deep("node file", rel)));
            return None;
        }
        let (value, raw, file_src, canonical) = self.open_agent_file(&target, false)?;
        self.stack.push(canonical.clone());
        let def = self.node_value_raw(&file_src, &value, &raw, "");
        // A node file is read by ADK's PyYAML as a whole, as a workflow file is (a nested
        // workflow file has reported its own already).
        self.yaml11_values(&file_src);
        self.stack.pop();
        let Some(def) = def else {
            build.refused(value.get("name"));
            return None;
        };
        let i = build.add(self, def)?;
        build.spelled.insert(canonical.clone(), rel.to_owned());
        build.spellings.insert(rel.to_owned());
        build.files.insert(canonical, i);
        if let Some(stem) = Path::new(rel).file_stem().and_then(|s| s.to_str()) {
            build.stems.insert(stem.to_owned(), i);
        }
        Some(i)
    }

    /// An inline node's definition.
    fn node_value(&mut self, src: &Source, value: &Value, at: &str) -> Option<NodeDef> {
        self.node_value_raw(src, value, value, at)
    }

    /// A node's definition from its mapping (`raw`: as written, before `${VAR}`).
    fn node_value_raw(
        &mut self,
        src: &Source,
        value: &Value,
        raw: &Value,
        at: &str,
    ) -> Option<NodeDef> {
        let Some(m) = value.as_object() else {
            self.diagnostics
                .push(src.error(at, "a node is a mapping with at least `name`"));
            return None;
        };
        let class = match m.get("agent_class") {
            None => "LlmAgent".to_owned(),
            // A node file's top level is read by ADK's `from_config`, which takes null as
            // LlmAgent; an inline node's class must be a string.
            Some(Value::Null) if at.is_empty() => "LlmAgent".to_owned(),
            Some(Value::Null) => {
                self.diagnostics.push(src.error(
                    &format!("{at}/agent_class"),
                    "`agent_class: null` in an inline node: ADK's loader refuses it (agent_class must be a string); remove the key for an LLM node",
                ));
                return None;
            }
            Some(Value::String(s)) if s.is_empty() => {
                self.diagnostics.push(src.error(
                    &format!("{at}/agent_class"),
                    "`agent_class` is empty: ADK reads an empty class as LlmAgent, the contract does not; remove the key (or write `LlmAgent`)",
                ));
                return None;
            }
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                self.diagnostics
                    .push(src.error(&format!("{at}/agent_class"), "agent_class must be a string"));
                return None;
            }
        };
        let class_at = format!("{at}/agent_class");
        if is_workflow_class(&class) {
            return self.workflow(src, value, at, false).map(NodeDef::Agent);
        }
        if class == ROUTER_CLASS {
            return self.router(src, m, at);
        }
        if JOIN_CLASSES.contains(&class.as_str()) {
            return self.join(src, m, at);
        }
        let short = class.rsplit('.').next().unwrap_or(&class);
        match AgentClass::parse(&class) {
            Some(AgentClass::Llm) => self.llm_node(src, value, raw, at).map(NodeDef::Agent),
            Some(_) => {
                self.diagnostics.push(src.error(
                    &class_at,
                    format!("a {short} cannot be a Workflow node; write its steps as edges: a chain for a sequence, a fan-out list for parallel steps, a labelled back edge from an `adk_flow.Router` for a loop"),
                ));
                None
            }
            None => match class.as_str() {
                "FunctionNode" | "google.adk.workflow.FunctionNode" => {
                    self.diagnostics.push(src.error(
                    &class_at,
                    "a FunctionNode runs Python, which adk-flow does not; use an `adk_flow.Router` (Jinja expressions for route, output and state)",
                ));
                    None
                }
                other => {
                    self.diagnostics.push(src.error(
                    &class_at,
                    format!("unknown node agent_class `{other}`; a Workflow node is an LlmAgent, `adk_flow.Router`, `JoinNode` or `Workflow`"),
                ));
                    None
                }
            },
        }
    }

    pub(super) fn node_name(
        &mut self,
        src: &Source,
        m: &Map<String, Value>,
        at: &str,
    ) -> Option<String> {
        match m.get("name") {
            Some(Value::String(n)) if is_identifier(n) && n != USER && n != START => {
                Some(n.clone())
            }
            Some(v) => {
                self.diagnostics.push(src.error(
                    &format!("{at}/name"),
                    format!("node name `{}` must be an identifier (letters, digits and `_`, not starting with a digit), not `user` or `START`", v.as_str().unwrap_or(&v.to_string())),
                ));
                None
            }
            None => {
                self.diagnostics
                    .push(src.error(at, "missing required key `name` (every node has a name)"));
                None
            }
        }
    }
}
