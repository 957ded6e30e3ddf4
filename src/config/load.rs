//! Loading an ADK Agent Config tree: files, `config_path` references, inline sub-agents.

use super::agent_config::{
    AgentClass, Define, IncludeContentsConfig, LlmAgentConfig, LoopAgentConfig,
    ParallelAgentConfig, SequentialAgentConfig,
};
use super::define::tool_config_errors;
use super::env::substitute_all;
use super::inline_schema::SchemaKey;
use super::source::{Fence, FileAccess, Source, read_yaml, typed};
use super::{
    AgentSpec, AgentSpecKind, DefinedTool, Diagnostic, LlmSpec, Location, Severity, Workflow,
};
use crate::names::{USER, is_identifier};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How to load: where environment variables come from and how strict to be about them.
pub struct LoadOptions<'a> {
    /// Looks up an environment variable for `${VAR}` substitution.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// An unset `${VAR}` without default is an error (`run`) rather than a warning
    /// (`validate`, where CI may not have the variable).
    pub unset_env_is_error: bool,
    /// Which files references may name.
    pub files: FileAccess,
}

/// The fields of an agent whose positions later checks point at.
const LOCATED_FIELDS: &[&str] = &[
    "name",
    "model",
    "instruction",
    "tools",
    "max_iterations",
    "disallow_transfer_to_parent",
    "disallow_transfer_to_peers",
    "sub_agents",
    "agent_class",
];

/// The keys only an app's root file may have (held in [`RootKeys`]).
pub(super) const ROOT_ONLY_KEYS: [&str; 4] = ["define", "state", "memory", "live"];

/// The keys only the root file may have.
pub(super) struct RootKeys {
    pub(super) define: Option<Define>,
    pub(super) state: Option<serde_json::Map<String, Value>>,
    pub(super) memory: Option<super::agent_config::MemoryConfig>,
    pub(super) live: Option<super::agent_config::LiveConfig>,
}

/// Takes the root-file keys out of any agent class's config.
macro_rules! root_keys {
    ($c:ident) => {
        RootKeys {
            define: $c.define.take(),
            state: $c.state.take(),
            memory: $c.memory.take(),
            live: $c.live.take(),
        }
    };
}

pub(super) struct Loader<'a> {
    pub(super) options: &'a LoadOptions<'a>,
    /// The folder referenced files must be in.
    pub(super) fence: Fence,
    pub(super) diagnostics: Vec<Diagnostic>,
    /// Canonical paths of the files being loaded, to catch config_path cycles.
    pub(super) stack: Vec<PathBuf>,
    /// Every file loaded, canonical.
    pub(super) files: Vec<PathBuf>,
    pub(super) define: Option<Define>,
    pub(super) state: Option<serde_json::Map<String, Value>>,
    pub(super) memory: Option<super::agent_config::MemoryConfig>,
    pub(super) live: Option<super::agent_config::LiveConfig>,
    pub(super) tools: std::collections::BTreeMap<String, DefinedTool>,
    pub(super) mcp_servers:
        std::collections::BTreeMap<String, (super::agent_config::McpToolsetConfig, PathBuf)>,
    /// Callback names of the agent being parsed.
    pub(super) callbacks: super::CallbackNames,
    /// The next tool list read is an LLM node's, which may hold `adk_flow.set_route`.
    pub(super) set_route_allowed: bool,
}

impl Loader<'_> {
    /// One agent file; the root file also holds `define`, `state` and `memory`.
    pub(super) fn file(&mut self, path: &Path, is_root: bool) -> Option<AgentSpec> {
        let (value, raw, src, canonical) = self.open_agent_file(path, is_root)?;
        if let Some(class) = value.get("agent_class").and_then(Value::as_str)
            && super::graph::is_workflow_class(class)
        {
            if !is_root {
                self.diagnostics.push(src.error(
                    "/agent_class",
                    "a Workflow is the root of an app or a node of another Workflow's `edges`, not a sub-agent; list it in the edges of a Workflow",
                ));
                return None;
            }
            self.stack.push(canonical);
            let spec = self.workflow(&src, &value, "", true);
            self.stack.pop();
            return spec;
        }
        let violations = super::schema::check(&value);
        self.stack.push(canonical);
        let spec = if violations.is_empty() {
            self.agent(&src, &value, "", is_root)
        } else {
            self.report_violations(&src, &raw, &value, "", violations);
            // Keep going into referenced files so every problem is reported at once.
            self.follow_references(&src, &value, "");
            None
        };
        self.stack.pop();
        spec
    }

    /// Reports schema violations of the value at `pointer`, located in its file.
    pub(super) fn report_violations(
        &mut self,
        src: &Source,
        raw: &Value,
        value: &Value,
        pointer: &str,
        violations: Vec<super::schema::Violation>,
    ) {
        for v in violations {
            let at = format!("{pointer}{}", v.pointer);
            let message = as_written(raw, value, &v.pointer, v.message);
            self.diagnostics.push(if v.at_key {
                src.key_error(&at, message)
            } else {
                src.error(&at, message)
            });
        }
    }

    /// Reads an agent file: its `${VAR}`-substituted value, the value as written, its
    /// source and canonical path; `None` (reported) when it is no agent file.
    pub(super) fn open_agent_file(
        &mut self,
        path: &Path,
        is_root: bool,
    ) -> Option<(Value, Value, Source, PathBuf)> {
        let (mut value, src) = match read_yaml(path) {
            Ok(v) => v,
            Err(d) => {
                self.diagnostics.extend(d);
                return None;
            }
        };
        if !value.is_object() {
            let found = match &value {
                Value::Null => "an empty document",
                Value::Array(_) => "a list",
                _ => "a scalar",
            };
            self.diagnostics.push(src.error(
                "",
                format!("an agent file must be a mapping with at least `name`; found {found}"),
            ));
            return None;
        }
        // A referenced file that is no agent file at all is not quoted back (its keys
        // and values may be anything, secrets included): one error says what it is not.
        if !is_root && value.get("name").is_none() && value.get("agent_class").is_none() {
            self.diagnostics.push(src.error(
                "",
                "not an agent file: its top level has neither `name` nor `agent_class`",
            ));
            return None;
        }
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        if !self.files.contains(&canonical) {
            self.files.push(canonical.clone());
        }
        // `${VAR}` first, so every string (enum-typed keys such as `agent_class` or
        // `include_contents` included) is checked as it will be used; a violation in a
        // substituted string names the reference, not the value (which may be a secret).
        let raw = value.clone();
        let mut problems = Vec::new();
        substitute_all(&mut value, "", self.options.env, &mut problems);
        for p in problems {
            let mut d = src.error(&p.pointer, p.message);
            if p.unset && !self.options.unset_env_is_error {
                d.severity = Severity::Warning;
            }
            self.diagnostics.push(d);
        }
        Some((value, raw, src, canonical))
    }

    /// Takes the root file's `define`, `state`, `memory` and `live` (the agent's own keys are
    /// checked elsewhere), then prepares the declared tools and checks the declared
    /// callbacks.
    pub(super) fn root_keys(&mut self, src: &Source, pointer: &str, is_root: bool, keys: RootKeys) {
        if !is_root {
            return;
        }
        self.define = keys.define;
        self.state = keys.state;
        self.memory = keys.memory;
        self.live = keys.live;
        self.tools = self.defined_tools(src, pointer);
        self.check_callbacks(src, pointer);
    }

    /// One agent (inline or a file's top level) of any class, its references followed.
    pub(super) fn agent(
        &mut self,
        src: &Source,
        value: &Value,
        pointer: &str,
        is_root: bool,
    ) -> Option<AgentSpec> {
        for key in ROOT_ONLY_KEYS {
            if value.get(key).is_some() && !is_root {
                self.diagnostics.push(src.key_error(
                    &format!("{pointer}/{key}"),
                    format!("`{key}` belongs in the workflow's root file, at the top level"),
                ));
            }
        }
        let class = match value.get("agent_class") {
            None | Some(Value::Null) => AgentClass::Llm,
            Some(Value::String(s)) if super::graph::is_workflow_class(s) => {
                self.diagnostics.push(src.error(
                    &format!("{pointer}/agent_class"),
                    "a Workflow is the root of an app or a node of another Workflow's `edges`, not a sub-agent; list it in the edges of a Workflow",
                ));
                return None;
            }
            Some(Value::String(s)) => match AgentClass::parse(s) {
                Some(c) => c,
                None => {
                    self.diagnostics.push(src.error(
                        &format!("{pointer}/agent_class"),
                        format!(
                            "unknown agent_class `{s}`; expected LlmAgent, SequentialAgent, ParallelAgent, LoopAgent or Workflow (custom Python agent classes are not supported)"
                        ),
                    ));
                    return None;
                }
            },
            Some(_) => {
                self.diagnostics.push(src.error(
                    &format!("{pointer}/agent_class"),
                    "agent_class must be a string such as LlmAgent or LoopAgent",
                ));
                return None;
            }
        };
        let parsed = match class {
            AgentClass::Llm => typed::<LlmAgentConfig>(src, value, pointer).map(|mut c| {
                self.root_keys(src, pointer, is_root, root_keys!(c));
                self.llm_agent(src, pointer, c)
            }),
            AgentClass::Sequential => {
                typed::<SequentialAgentConfig>(src, value, pointer).map(|mut c| {
                    self.root_keys(src, pointer, is_root, root_keys!(c));
                    self.agent_callbacks(
                        src,
                        pointer,
                        &c.before_agent_callbacks,
                        &c.after_agent_callbacks,
                    );
                    let kind = AgentSpecKind::Sequential {
                        task_completed: c.task_completed,
                    };
                    (c.name, c.description, kind, c.sub_agents)
                })
            }
            AgentClass::Parallel => {
                typed::<ParallelAgentConfig>(src, value, pointer).map(|mut c| {
                    self.root_keys(src, pointer, is_root, root_keys!(c));
                    self.agent_callbacks(
                        src,
                        pointer,
                        &c.before_agent_callbacks,
                        &c.after_agent_callbacks,
                    );
                    (c.name, c.description, AgentSpecKind::Parallel, c.sub_agents)
                })
            }
            AgentClass::Loop => typed::<LoopAgentConfig>(src, value, pointer).map(|mut c| {
                self.root_keys(src, pointer, is_root, root_keys!(c));
                self.agent_callbacks(
                    src,
                    pointer,
                    &c.before_agent_callbacks,
                    &c.after_agent_callbacks,
                );
                let kind = AgentSpecKind::Loop {
                    max_iterations: c.max_iterations,
                };
                (c.name, c.description, kind, c.sub_agents)
            }),
        };
        let callbacks = std::mem::take(&mut self.callbacks);
        let (name, description, kind, subs) = match parsed {
            Ok(p) => p,
            Err(d) => {
                self.diagnostics.push(d);
                return None;
            }
        };
        let name_ptr = format!("{pointer}/name");
        if !is_identifier(&name) {
            self.diagnostics.push(src.error(
                &name_ptr,
                format!("agent name `{name}` must be an identifier (letters, digits and `_`, not starting with a digit)"),
            ));
        } else if name == USER {
            self.diagnostics.push(src.error(
                &name_ptr,
                "agent name `user` is reserved for the user's own messages",
            ));
        }
        let mut sub_agents = Vec::with_capacity(subs.len());
        for (i, sub) in subs.iter().enumerate() {
            let sub_ptr = format!("{pointer}/sub_agents/{i}");
            if let Some(spec) = self.sub_agent(src, sub, &sub_ptr) {
                sub_agents.push(spec);
            }
        }
        let positions = LOCATED_FIELDS
            .iter()
            .filter(|f| value.get(**f).is_some())
            .map(|f| ((*f).to_owned(), src.index.value(&format!("{pointer}/{f}"))))
            .collect();
        Some(AgentSpec {
            name,
            description,
            kind,
            sub_agents,
            location: Location {
                file: src.path.clone(),
                pos: src.index.value(&name_ptr),
            },
            positions,
            callbacks,
        })
    }

    fn llm_agent(
        &mut self,
        src: &Source,
        pointer: &str,
        c: LlmAgentConfig,
    ) -> (String, String, AgentSpecKind, Vec<Value>) {
        for (key, refs) in [
            ("before_agent_callbacks", &c.before_agent_callbacks),
            ("after_agent_callbacks", &c.after_agent_callbacks),
            ("before_model_callbacks", &c.before_model_callbacks),
            ("after_model_callbacks", &c.after_model_callbacks),
            ("before_tool_callbacks", &c.before_tool_callbacks),
            ("after_tool_callbacks", &c.after_tool_callbacks),
        ] {
            self.callback_refs(src, pointer, key, refs);
        }
        let input_schema = self.inline_schema(src, pointer, SchemaKey::Input, c.input_schema);
        let output_schema = self.inline_schema(src, pointer, SchemaKey::Output, c.output_schema);
        let static_instruction = c.static_instruction.as_ref().and_then(|v| {
            super::static_instruction::text(src, &format!("{pointer}/static_instruction"), v)
                .map_err(|d| self.diagnostics.push(d))
                .ok()
        });
        let (tools, lists_transfer) = self.tool_list(src, pointer, &c.tools);
        self.diagnostics.extend(tool_config_errors(
            src,
            pointer,
            c.generate_content_config.as_ref(),
            &tools,
            self.define.as_ref(),
        ));
        let spec = LlmSpec {
            model: c.model,
            instruction: c.instruction,
            static_instruction,
            tools,
            output_key: c.output_key,
            output_schema,
            input_schema,
            current_turn_only: c.include_contents == IncludeContentsConfig::None,
            lists_transfer,
            disallow_transfer_to_parent: c.disallow_transfer_to_parent,
            disallow_transfer_to_peers: c.disallow_transfer_to_peers,
            generate_content_config: c
                .generate_content_config
                .and_then(|g| serde_json::to_value(g).ok()),
        };
        (
            c.name,
            c.description,
            AgentSpecKind::Llm(Box::new(spec)),
            c.sub_agents,
        )
    }
}

/// A message about the value at `pointer`, showing a substituted string as written
/// (`` `${MODE}` ``) instead of its value.
fn as_written(raw: &Value, substituted: &Value, pointer: &str, message: String) -> String {
    match (raw.pointer(pointer), substituted.pointer(pointer)) {
        (Some(Value::String(written)), Some(Value::String(value))) if written != value => {
            message.replace(&format!("`{value}`"), &format!("`{written}`"))
        }
        _ => message,
    }
}

/// What loading a workflow produced.
pub struct Loaded {
    /// The workflow, when it has no error.
    pub workflow: Option<Workflow>,
    /// Every problem found, warnings included.
    pub diagnostics: Vec<Diagnostic>,
    /// Every file read (canonical paths), even when some failed.
    pub files: Vec<PathBuf>,
}

/// Loads a workflow from its root agent file and checks the whole tree.
pub fn load(path: &Path, options: &LoadOptions<'_>) -> Loaded {
    let mut loader = Loader {
        options,
        fence: Fence::new(path, options.files),
        diagnostics: Vec::new(),
        stack: Vec::new(),
        files: Vec::new(),
        define: None,
        state: None,
        memory: None,
        live: None,
        tools: std::collections::BTreeMap::new(),
        mcp_servers: std::collections::BTreeMap::new(),
        callbacks: super::CallbackNames::default(),
        set_route_allowed: false,
    };
    let root = loader.file(path, true);
    let loader_fence = loader.fence;
    let mut diagnostics = loader.diagnostics;
    if let Some(root) = &root {
        diagnostics.extend(super::checks::duplicate_names(root));
    }
    let files = loader.files;
    let define_callbacks = loader
        .define
        .as_ref()
        .map(|d| d.callbacks.clone())
        .unwrap_or_default();
    let workflow = root.map(|root| Workflow {
        root,
        models: loader.define.map(|d| d.models).unwrap_or_default(),
        tools: loader.tools,
        callbacks: define_callbacks,
        mcp_servers: loader.mcp_servers,
        state: loader.state.unwrap_or_default(),
        memory: loader.memory.unwrap_or_default(),
        live: loader.live.unwrap_or_default(),
        files: files.clone(),
        path: path.to_owned(),
    });
    // Whole-tree checks only make sense on a tree that loaded completely.
    if let Some(w) = &workflow
        && !diagnostics.iter().any(|d| d.severity == Severity::Error)
    {
        diagnostics.extend(super::checks::check(w, &loader_fence));
    }
    let has_error = diagnostics.iter().any(|d| d.severity == Severity::Error);
    Loaded {
        workflow: workflow.filter(|_| !has_error),
        diagnostics,
        files,
    }
}

/// Loads a workflow for running: any error fails; warnings are dropped.
///
/// # Errors
/// Every error found, in file order.
pub fn load_workflow(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    files: FileAccess,
) -> Result<Workflow, Vec<Diagnostic>> {
    let options = LoadOptions {
        env,
        unset_env_is_error: true,
        files,
    };
    let loaded = load(path, &options);
    match loaded.workflow {
        Some(w) => Ok(w),
        None => Err(loaded
            .diagnostics
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect()),
    }
}
