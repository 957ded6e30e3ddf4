//! Loading an ADK Agent Config tree: files, `config_path` references, inline sub-agents.

use super::agent_config::{
    AgentClass, AgentRef, CodeRef, Define, IncludeContentsConfig, LlmAgentConfig, LoopAgentConfig,
    ParallelAgentConfig, SequentialAgentConfig,
};
use super::agent_config::{AgentToolConfig, ToolDef};
use super::env::substitute_all;
use super::yaml::{self, Pos, SpanIndex, escape_segment};
use super::{
    AgentSpec, AgentSpecKind, AgentToolSpec, DefinedTool, Diagnostic, LlmSpec, Location, Severity,
    ToolSpec, Workflow,
};
use crate::tool::builtin::BUILTIN_NAMES;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Files larger than this are refused before parsing.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One parsed file: its JSON form and positions.
struct Source {
    path: PathBuf,
    index: SpanIndex,
}

impl Source {
    fn error(&self, pointer: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(&self.path, self.index.value(pointer), message)
    }

    fn key_error(&self, pointer: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(&self.path, self.index.key(pointer), message)
    }
}

/// Reads and parses a YAML file.
fn read_yaml(path: &Path) -> Result<(Value, Source), Vec<Diagnostic>> {
    let at_start = |m: String| vec![Diagnostic::error(path, Pos { line: 1, col: 1 }, m)];
    let meta = std::fs::metadata(path).map_err(|e| at_start(format!("cannot read file: {e}")))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(at_start(format!(
            "file is {} bytes; workflow files are limited to {MAX_FILE_BYTES} bytes",
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| at_start(format!("cannot read file: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let text = String::from_utf8_lossy(valid);
        let line = text.matches('\n').count() + 1;
        let col = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        vec![Diagnostic::error(
            path,
            Pos { line, col },
            "file is not valid UTF-8",
        )]
    })?;
    let (value, index) = yaml::parse(&text).map_err(|errs| {
        errs.into_iter()
            .map(|e| Diagnostic::error(path, e.pos, e.message))
            .collect::<Vec<_>>()
    })?;
    Ok((
        value,
        Source {
            path: path.to_owned(),
            index,
        },
    ))
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => out.push_str(&format!("/{}", escape_segment(key))),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    out
}

/// Deserializes the value at `pointer` into `T`, locating any error.
fn typed<T: DeserializeOwned>(src: &Source, value: &Value, pointer: &str) -> Result<T, Diagnostic> {
    serde_path_to_error::deserialize::<_, T>(value.clone()).map_err(|e| {
        let inner = pointer_of(e.path());
        let message = e.inner().to_string();
        let full = format!("{pointer}{inner}");
        if let Some(field) = message
            .strip_prefix("unknown field `")
            .and_then(|r| r.split('`').next())
        {
            let segment = format!("/{}", escape_segment(field));
            let at = if full.ends_with(&segment) {
                full
            } else {
                format!("{full}{segment}")
            };
            return src.key_error(&at, message);
        }
        src.error(&full, message)
    })
}

/// Loads a YAML file into any deserializable type, with located errors (script files).
///
/// # Errors
/// Unreadable, malformed or mistyped files, as diagnostics.
pub fn load_typed<T: DeserializeOwned>(path: &Path) -> Result<T, Vec<Diagnostic>> {
    load_checked(path, |_: &T| Vec::new())
}

/// Like [`load_typed`], then runs `check`, whose problems (JSON pointer, message) are
/// located in the file.
///
/// # Errors
/// Unreadable, malformed or mistyped files, and every problem `check` reports.
pub fn load_checked<T: DeserializeOwned>(
    path: &Path,
    check: impl FnOnce(&T) -> Vec<(String, String)>,
) -> Result<T, Vec<Diagnostic>> {
    let (value, src) = read_yaml(path)?;
    let parsed: T = typed(&src, &value, "").map_err(|d| vec![d])?;
    let problems: Vec<Diagnostic> = check(&parsed)
        .into_iter()
        .map(|(pointer, message)| src.error(&pointer, message))
        .collect();
    if problems.is_empty() {
        Ok(parsed)
    } else {
        Err(problems)
    }
}

/// Why a callback's actions do not fit a hook, if they do not.
fn callback_fits(hook: &str, def: &super::agent_config::CallbackDef) -> Option<String> {
    let mut used = Vec::new();
    if def.reply.is_some() {
        used.push("reply");
    }
    if def.block.is_some() {
        used.push("block");
    }
    if def.result.is_some() {
        used.push("result");
    }
    if def.rewrite_args.is_some() {
        used.push("rewrite_args");
    }
    if def.redact.is_some() {
        used.push("redact");
    }
    let allowed: &[&str] = match hook {
        "before_agent" | "after_agent" | "before_model" => &["reply"],
        "after_model" => &["reply", "redact"],
        "before_tool" => &["block", "result", "rewrite_args"],
        _ => &["result", "redact"],
    };
    let bad: Vec<&str> = used.into_iter().filter(|u| !allowed.contains(u)).collect();
    if bad.is_empty() {
        None
    } else {
        Some(format!(
            "`{}` cannot be used in {hook}_callbacks (allowed there: set_state, {})",
            bad.join("`, `"),
            allowed.join(", ")
        ))
    }
}

/// Reads ADK's `McpToolset` args (`stdio_server_params`, `stdio_connection_params`,
/// `streamable_http_connection_params`, `tool_filter`) into our MCP settings; errors carry
/// the relative pointer.
fn adk_mcp_args(
    args: Option<&Value>,
) -> Result<super::agent_config::McpToolsetConfig, (String, String)> {
    let whole = args.cloned().unwrap_or(Value::Null);
    let args = args.and_then(Value::as_object).ok_or_else(|| {
        (
            String::new(),
            "McpToolset needs `args` with the server's connection params".to_owned(),
        )
    })?;
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let map = |v: Option<&Value>| -> std::collections::BTreeMap<String, String> {
        v.and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let timeout = |v: Option<&Value>| v.and_then(Value::as_f64).map(|t| t.ceil().max(1.0) as u64);
    let mut config = super::agent_config::McpToolsetConfig {
        tool_filter: args.get("tool_filter").map(|f| strings(Some(f))),
        ..Default::default()
    };
    if let Some(p) = args
        .get("stdio_server_params")
        .or_else(|| whole.pointer("/stdio_connection_params/server_params"))
    {
        config.command = p.get("command").and_then(Value::as_str).map(str::to_owned);
        config.args = strings(p.get("args"));
        config.env = map(p.get("env"));
        config.cwd = p.get("cwd").and_then(Value::as_str).map(str::to_owned);
        config.timeout_secs = timeout(whole.pointer("/stdio_connection_params/timeout"));
        if config.command.is_none() {
            return Err((
                "/stdio_server_params".into(),
                "the server params need `command`".into(),
            ));
        }
    } else if let Some(p) = args.get("streamable_http_connection_params") {
        config.url = p.get("url").and_then(Value::as_str).map(str::to_owned);
        config.headers = map(p.get("headers"));
        config.timeout_secs = timeout(p.get("timeout"));
        if config.url.is_none() {
            return Err((
                "/streamable_http_connection_params".into(),
                "the connection params need `url`".into(),
            ));
        }
    } else if args.get("sse_connection_params").is_some() {
        return Err((
            "/sse_connection_params".into(),
            "MCP over SSE (the deprecated HTTP+SSE transport) is not supported; use streamable_http_connection_params".into(),
        ));
    } else {
        return Err((
            String::new(),
            "McpToolset needs stdio_server_params, stdio_connection_params or streamable_http_connection_params".into(),
        ));
    }
    Ok(config)
}

/// Syntax errors in a declared tool's templates, as (relative JSON pointer, message).
fn check_tool_templates(def: &ToolDef) -> Vec<(String, String)> {
    use crate::template::jinja::syntax_error;
    let mut templates: Vec<(String, &str)> = Vec::new();
    if let Some(l) = &def.lookup {
        templates.push(("lookup/key".into(), &l.key));
    }
    if let Some(h) = &def.http {
        templates.push(("http/url".into(), &h.url));
        templates.extend(
            h.headers
                .iter()
                .map(|(k, v)| (format!("http/headers/{}", escape_segment(k)), v.as_str())),
        );
        templates.extend(
            h.query
                .iter()
                .map(|(k, v)| (format!("http/query/{}", escape_segment(k)), v.as_str())),
        );
    }
    if let Some(c) = &def.command {
        templates.extend(
            c.args
                .iter()
                .enumerate()
                .map(|(i, a)| (format!("command/args/{i}"), a.as_str())),
        );
    }
    if let Some(s) = &def.set_state {
        templates.extend(
            s.iter()
                .map(|(k, v)| (format!("set_state/{}", escape_segment(k)), v.as_str())),
        );
    }
    templates
        .into_iter()
        .filter_map(|(ptr, t)| syntax_error(t).map(|m| (ptr, m)))
        .collect()
}

/// ADK tools that exist but that adk-flow does not offer (yet).
const ADK_TOOLS_NOT_SUPPORTED: &[&str] = &[
    "enterprise_web_search",
    "load_memory",
    "preload_memory",
    "load_artifacts",
    "get_user_choice",
    "AgentTool",
    "ExampleTool",
    "VertexAiSearchTool",
    "LongRunningFunctionTool",
    "FunctionTool",
];

fn unknown_tool_message(name: &str, short: &str) -> String {
    let builtins = BUILTIN_NAMES.join(", ");
    if matches!(short, "LongRunningFunctionTool" | "FunctionTool") {
        format!(
            "`{name}` wraps a Python function, which adk-flow does not run; declare the tool in YAML instead (built-in tools: {builtins})"
        )
    } else if ADK_TOOLS_NOT_SUPPORTED.contains(&short) {
        format!("ADK tool `{name}` is not supported by adk-flow yet (built-in tools: {builtins})")
    } else if name.contains('.') {
        format!(
            "`{name}` references a Python function, which adk-flow does not run; declare the tool in YAML instead (built-in tools: {builtins})"
        )
    } else {
        let hint = super::schema::did_you_mean(short, BUILTIN_NAMES.iter().copied())
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        format!("unknown tool `{name}`; {hint}built-in tools are {builtins}")
    }
}

/// Removes `.` components and folds `dir/..`, so reported paths stay readable.
pub fn normalize_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// How to load: where environment variables come from and how strict to be about them.
pub struct LoadOptions<'a> {
    /// Looks up an environment variable for `${VAR}` substitution.
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// An unset `${VAR}` without default is an error (`run`) rather than a warning
    /// (`validate`, where CI may not have the variable).
    pub unset_env_is_error: bool,
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

struct Loader<'a> {
    options: &'a LoadOptions<'a>,
    diagnostics: Vec<Diagnostic>,
    /// Canonical paths of the files being loaded, to catch config_path cycles.
    stack: Vec<PathBuf>,
    /// Every file loaded, canonical.
    files: Vec<PathBuf>,
    define: Option<Define>,
    state: Option<serde_json::Map<String, Value>>,
    tools: std::collections::BTreeMap<String, DefinedTool>,
    mcp_servers:
        std::collections::BTreeMap<String, (super::agent_config::McpToolsetConfig, PathBuf)>,
    /// Callback names of the agent being parsed.
    callbacks: super::CallbackNames,
}

impl Loader<'_> {
    fn file(&mut self, path: &Path, is_root: bool) -> Option<AgentSpec> {
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
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        if !self.files.contains(&canonical) {
            self.files.push(canonical.clone());
        }
        let violations = super::schema::check(&value);
        self.stack.push(canonical);
        let spec = if violations.is_empty() {
            let mut problems = Vec::new();
            substitute_all(&mut value, "", self.options.env, &mut problems);
            for p in problems {
                let mut d = src.error(&p.pointer, p.message);
                if p.unset && !self.options.unset_env_is_error {
                    d.severity = Severity::Warning;
                }
                self.diagnostics.push(d);
            }
            self.agent(&src, &value, "", is_root)
        } else {
            for v in violations {
                self.diagnostics.push(if v.at_key {
                    src.key_error(&v.pointer, v.message)
                } else {
                    src.error(&v.pointer, v.message)
                });
            }
            // Keep going into referenced files so every problem is reported at once.
            self.follow_references(&src, &value, "");
            None
        };
        self.stack.pop();
        spec
    }

    /// Loads the files a (schema-invalid) agent references, for their diagnostics only.
    fn follow_references(&mut self, src: &Source, value: &Value, pointer: &str) {
        let Some(subs) = value.get("sub_agents").and_then(Value::as_array) else {
            return;
        };
        for (i, sub) in subs.iter().enumerate() {
            let sub_ptr = format!("{pointer}/sub_agents/{i}");
            match sub.get("config_path") {
                Some(Value::String(_)) => {
                    self.sub_agent(src, sub, &sub_ptr);
                }
                _ if sub.is_object() => self.follow_references(src, sub, &sub_ptr),
                _ => {}
            }
        }
    }

    fn python_refs(&mut self, src: &Source, pointer: &str, key: &str, refs: &[CodeRef]) {
        if let Some(first) = refs.first() {
            self.diagnostics.push(src.key_error(
                &format!("{pointer}/{key}"),
                format!(
                    "`{key}` references Python code (`{}`), which adk-flow does not run; declare the behaviour in YAML instead",
                    first.name
                ),
            ));
        }
    }

    /// Takes the root file's `define` and `state` (the agent's own keys are checked
    /// elsewhere), then prepares the declared tools and checks the declared callbacks.
    fn root_keys(
        &mut self,
        src: &Source,
        pointer: &str,
        is_root: bool,
        define: Option<Define>,
        state: Option<serde_json::Map<String, Value>>,
    ) {
        if !is_root {
            return;
        }
        self.define = define;
        self.state = state;
        self.tools = self.defined_tools(src, pointer);
        self.check_callbacks(src, pointer);
    }

    /// The before/after agent callbacks every agent class has.
    fn agent_callbacks(
        &mut self,
        src: &Source,
        pointer: &str,
        before: &[CodeRef],
        after: &[CodeRef],
    ) {
        self.callback_refs(src, pointer, "before_agent_callbacks", before);
        self.callback_refs(src, pointer, "after_agent_callbacks", after);
    }

    /// Resolves a callback list against `define.callbacks`; records the names for the
    /// agent being parsed. Python references and unknown names are errors.
    fn callback_refs(&mut self, src: &Source, pointer: &str, key: &str, refs: &[CodeRef]) {
        let hook = key.trim_end_matches("_callbacks");
        let mut names = Vec::with_capacity(refs.len());
        for (i, r) in refs.iter().enumerate() {
            let at = format!("{pointer}/{key}/{i}/name");
            let declared = self.define.as_ref().and_then(|d| d.callbacks.get(&r.name));
            match declared {
                Some(def) => {
                    if let Some(problem) = callback_fits(hook, def) {
                        self.diagnostics.push(src.error(&at, format!("callback `{}`: {problem}", r.name)));
                    }
                    names.push(r.name.clone());
                }
                None if r.name.contains('.') => self.diagnostics.push(src.error(
                    &at,
                    format!(
                        "`{}` references Python code, which adk-flow does not run; declare the callback under `define.callbacks`",
                        r.name
                    ),
                )),
                None => {
                    let known: Vec<&str> = self
                        .define
                        .as_ref()
                        .map(|d| d.callbacks.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    let hint = super::schema::did_you_mean(&r.name, known.iter().copied())
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default();
                    self.diagnostics.push(src.error(
                        &at,
                        format!("unknown callback `{}`: declare it under `define.callbacks`{hint}", r.name),
                    ));
                }
            }
        }
        let slot = match hook {
            "before_agent" => &mut self.callbacks.before_agent,
            "after_agent" => &mut self.callbacks.after_agent,
            "before_model" => &mut self.callbacks.before_model,
            "after_model" => &mut self.callbacks.after_model,
            "before_tool" => &mut self.callbacks.before_tool,
            _ => &mut self.callbacks.after_tool,
        };
        *slot = names;
    }

    fn agent(
        &mut self,
        src: &Source,
        value: &Value,
        pointer: &str,
        is_root: bool,
    ) -> Option<AgentSpec> {
        for key in ["define", "state"] {
            if value.get(key).is_some() && !is_root {
                self.diagnostics.push(src.key_error(
                    &format!("{pointer}/{key}"),
                    format!("`{key}` belongs in the workflow's root file, at the top level"),
                ));
            }
        }
        let class = match value.get("agent_class") {
            None | Some(Value::Null) => AgentClass::Llm,
            Some(Value::String(s)) => match AgentClass::parse(s) {
                Some(c) => c,
                None => {
                    self.diagnostics.push(src.error(
                        &format!("{pointer}/agent_class"),
                        format!(
                            "unknown agent_class `{s}`; expected LlmAgent, SequentialAgent, ParallelAgent or LoopAgent (custom Python agent classes are not supported)"
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
                self.root_keys(src, pointer, is_root, c.define.take(), c.state.take());
                self.llm_agent(src, pointer, c)
            }),
            AgentClass::Sequential => {
                typed::<SequentialAgentConfig>(src, value, pointer).map(|mut c| {
                    self.root_keys(src, pointer, is_root, c.define.take(), c.state.take());
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
                    self.root_keys(src, pointer, is_root, c.define.take(), c.state.take());
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
                self.root_keys(src, pointer, is_root, c.define.take(), c.state.take());
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
        } else if name == "user" {
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
        for (key, r) in [
            ("input_schema", &c.input_schema),
            ("output_schema", &c.output_schema),
        ] {
            if let Some(r) = r {
                self.python_refs(src, pointer, key, std::slice::from_ref(r));
            }
        }
        if c.static_instruction.is_some() {
            self.diagnostics.push(src.key_error(
                &format!("{pointer}/static_instruction"),
                "static_instruction is not supported yet; put the text in `instruction`",
            ));
        }
        let mut tools = Vec::with_capacity(c.tools.len());
        for (i, t) in c.tools.iter().enumerate() {
            let short = t.name.strip_prefix("google.adk.tools.").unwrap_or(&t.name);
            if short == "transfer_to_agent" {
                // Offered automatically with the targets the tree allows.
                continue;
            }
            let defined = self
                .define
                .as_ref()
                .is_some_and(|d| d.tools.contains_key(&t.name));
            if defined {
                tools.push(ToolSpec::Defined(t.name.clone()));
            } else if short == "AgentTool" {
                let at = format!("{pointer}/tools/{i}/args");
                let args = t.args.clone().unwrap_or(Value::Null);
                match typed::<AgentToolConfig>(src, &args, &at) {
                    Ok(cfg) => {
                        if let Some(spec) = self.agent_tool(src, &cfg, &format!("{at}/agent")) {
                            tools.push(ToolSpec::Agent(Box::new(spec)));
                        }
                    }
                    Err(d) => self.diagnostics.push(d),
                }
            } else if short == "McpToolset" || short == "MCPToolset" {
                let at = format!("{pointer}/tools/{i}/args");
                match adk_mcp_args(t.args.as_ref()) {
                    Ok(config) => {
                        let key = format!("{}#{}", src.path.display(), at);
                        self.mcp_servers.insert(
                            key.clone(),
                            (
                                config.clone(),
                                src.path.parent().unwrap_or(Path::new(".")).to_owned(),
                            ),
                        );
                        tools.push(ToolSpec::Mcp {
                            key,
                            config: Box::new(config),
                        });
                    }
                    Err((rel, message)) => self
                        .diagnostics
                        .push(src.error(&format!("{at}{rel}"), message)),
                }
            } else if BUILTIN_NAMES.contains(&short) {
                tools.push(ToolSpec::Builtin(short.to_owned()));
            } else {
                self.diagnostics.push(src.error(
                    &format!("{pointer}/tools/{i}/name"),
                    unknown_tool_message(&t.name, short),
                ));
            }
        }
        let spec = LlmSpec {
            model: c.model,
            instruction: c.instruction,
            tools,
            output_key: c.output_key,
            current_turn_only: c.include_contents == IncludeContentsConfig::None,
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

    /// Loads the agent of an AgentTool (a tree of its own).
    fn agent_tool(
        &mut self,
        src: &Source,
        cfg: &AgentToolConfig,
        pointer: &str,
    ) -> Option<AgentToolSpec> {
        let agent = self.sub_agent(src, &cfg.agent, pointer)?;
        Some(AgentToolSpec {
            agent,
            skip_summarization: cfg.skip_summarization,
        })
    }

    /// Checks the callbacks under `define.callbacks`: conditions, templates, patterns.
    fn check_callbacks(&mut self, src: &Source, pointer: &str) {
        let defs: Vec<(String, super::agent_config::CallbackDef)> = self
            .define
            .as_ref()
            .map(|d| {
                d.callbacks
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        for (name, def) in defs {
            let at = format!("{pointer}/define/callbacks/{}", escape_segment(&name));
            if let Some(when) = &def.when
                && let Some(e) = crate::template::jinja::expression_error(when)
            {
                self.diagnostics.push(src.error(
                    &format!("{at}/when"),
                    format!("`when` is not a valid expression: {e}"),
                ));
            }
            for (key, t) in [("reply", &def.reply), ("block", &def.block)] {
                if let Some(e) = t.as_deref().and_then(crate::template::jinja::syntax_error) {
                    self.diagnostics.push(src.error(&format!("{at}/{key}"), e));
                }
            }
            for (i, r) in def.redact.iter().flatten().enumerate() {
                if let Err(e) = regex::Regex::new(&r.pattern) {
                    self.diagnostics.push(src.error(
                        &format!("{at}/redact/{i}/pattern"),
                        format!("not a valid regular expression: {e}"),
                    ));
                }
            }
            let acts = def.set_state.is_some()
                || def.reply.is_some()
                || def.block.is_some()
                || def.result.is_some()
                || def.rewrite_args.is_some()
                || def.redact.is_some();
            if !acts {
                self.diagnostics.push(src.key_error(&at, format!("callback `{name}` does nothing: give it set_state, reply, block, result, rewrite_args or redact")));
            }
        }
    }

    /// Checks and prepares the tools under `define.tools`.
    fn defined_tools(
        &mut self,
        src: &Source,
        pointer: &str,
    ) -> std::collections::BTreeMap<String, DefinedTool> {
        let mut out = std::collections::BTreeMap::new();
        let defs: Vec<(String, ToolDef)> = self
            .define
            .as_ref()
            .map(|d| {
                d.tools
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let base_dir = src.path.parent().unwrap_or(Path::new(".")).to_owned();
        for (name, def) in defs {
            let at = format!("{pointer}/define/tools/{}", escape_segment(&name));
            if !is_identifier(&name) {
                self.diagnostics.push(src.key_error(
                    &at,
                    format!("tool name `{name}` must be an identifier (letters, digits and `_`)"),
                ));
            }
            if BUILTIN_NAMES.contains(&name.as_str()) || name == "transfer_to_agent" {
                self.diagnostics.push(src.key_error(
                    &at,
                    format!("tool name `{name}` is taken by an ADK built-in"),
                ));
            }
            if let Some(params) = &def.parameters {
                if params.get("type").and_then(Value::as_str) != Some("object") {
                    self.diagnostics.push(src.error(
                        &format!("{at}/parameters"),
                        "`parameters` must be a JSON Schema with `type: object`",
                    ));
                } else if !jsonschema::meta::is_valid(params) {
                    self.diagnostics.push(src.error(
                        &format!("{at}/parameters"),
                        "`parameters` is not a valid JSON Schema",
                    ));
                }
            }
            if let Some(h) = &def.http {
                if h.allow_hosts.is_none() && crate::tool::http::literal_host(&h.url).is_none() {
                    self.diagnostics.push(src.error(
                        &format!("{at}/http/url"),
                        "the URL's host is templated or missing; list the hosts it may take in `allow_hosts`",
                    ));
                }
                if !matches!(
                    h.method.to_ascii_uppercase().as_str(),
                    "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD"
                ) {
                    self.diagnostics.push(src.error(
                        &format!("{at}/http/method"),
                        format!(
                            "unknown HTTP method `{}`; use GET, POST, PUT, PATCH, DELETE or HEAD",
                            h.method
                        ),
                    ));
                }
            }
            for problem in check_tool_templates(&def) {
                self.diagnostics
                    .push(src.error(&format!("{at}/{}", problem.0), problem.1));
            }
            if let Some(m) = &def.mcp {
                if m.command.is_some() == m.url.is_some() {
                    self.diagnostics.push(src.error(
                        &format!("{at}/mcp"),
                        "an MCP server has exactly one of `command` (a local program) or `url` (streamable HTTP)",
                    ));
                }
                self.mcp_servers
                    .insert(name.clone(), (m.clone(), base_dir.clone()));
            }
            let agent = match &def.agent {
                Some(cfg) => self.agent_tool(src, cfg, &format!("{at}/agent/agent")),
                None => None,
            };
            let mut table = None;
            if let Some(lookup) = &def.lookup {
                match (&lookup.table, &lookup.file) {
                    (Some(t), None) => table = Some(t.clone()),
                    (None, Some(f)) => {
                        let path = normalize_path(&base_dir.join(f));
                        match read_yaml(&path) {
                            Ok((Value::Object(map), _)) => table = Some(map),
                            Ok(_) => self.diagnostics.push(src.error(
                                &format!("{at}/lookup/file"),
                                format!("`{f}` must hold a mapping of keys to entries"),
                            )),
                            Err(d) => {
                                if path.is_file() {
                                    self.diagnostics.extend(d);
                                } else {
                                    self.diagnostics.push(src.error(
                                        &format!("{at}/lookup/file"),
                                        format!(
                                            "lookup file `{f}` not found (looked for {})",
                                            path.display()
                                        ),
                                    ));
                                }
                            }
                        }
                    }
                    _ => self.diagnostics.push(src.error(
                        &format!("{at}/lookup"),
                        "a lookup tool has exactly one of `table` or `file`",
                    )),
                }
            }
            out.insert(
                name,
                DefinedTool {
                    def,
                    agent,
                    table,
                    base_dir: base_dir.clone(),
                },
            );
        }
        out
    }

    fn sub_agent(&mut self, src: &Source, value: &Value, pointer: &str) -> Option<AgentSpec> {
        let Some(map) = value.as_object() else {
            self.diagnostics.push(src.error(
                pointer,
                "a sub-agent is a mapping: `config_path: file.yaml` or an inline agent",
            ));
            return None;
        };
        if !map.contains_key("config_path") && !map.contains_key("code") {
            return self.agent(src, value, pointer, false);
        }
        let r: AgentRef = match typed(src, value, pointer) {
            Ok(r) => r,
            Err(d) => {
                self.diagnostics.push(d);
                return None;
            }
        };
        match (r.config_path, r.code) {
            (Some(_), Some(_)) => {
                self.diagnostics.push(src.error(
                    pointer,
                    "a sub-agent reference has either `config_path` or `code`, not both",
                ));
                None
            }
            (None, Some(code)) => {
                self.diagnostics.push(src.error(
                    &format!("{pointer}/code"),
                    format!("`code: {code}` references a Python agent, which adk-flow does not run; use `config_path` or an inline agent"),
                ));
                None
            }
            (Some(rel), None) => {
                let base = src.path.parent().unwrap_or(Path::new("."));
                let target = normalize_path(&base.join(&rel));
                let at = format!("{pointer}/config_path");
                if !target.is_file() {
                    self.diagnostics.push(src.error(
                        &at,
                        format!(
                            "config_path `{rel}` not found (looked for {})",
                            target.display()
                        ),
                    ));
                    return None;
                }
                let canonical = target.canonicalize().unwrap_or_else(|_| target.clone());
                if self.stack.contains(&canonical) {
                    self.diagnostics.push(src.error(
                        &at,
                        format!("config_path `{rel}` makes a cycle: the file is already being loaded above this one"),
                    ));
                    return None;
                }
                self.file(&target, false)
            }
            (None, None) => None,
        }
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
        diagnostics: Vec::new(),
        stack: Vec::new(),
        files: Vec::new(),
        define: None,
        state: None,
        tools: std::collections::BTreeMap::new(),
        mcp_servers: std::collections::BTreeMap::new(),
        callbacks: super::CallbackNames::default(),
    };
    let root = loader.file(path, true);
    let mut diagnostics = loader.diagnostics;
    if let Some(root) = &root {
        let mut seen: HashMap<&str, &Location> = HashMap::new();
        for agent in root.walk() {
            if let Some(first) = seen.get(agent.name.as_str()) {
                diagnostics.push(Diagnostic::error(
                    &agent.location.file,
                    agent.location.pos,
                    format!(
                        "agent name `{}` is used twice; it was first declared at {}:{}:{}",
                        agent.name,
                        first.file.display(),
                        first.pos.line,
                        first.pos.col
                    ),
                ));
            } else {
                seen.insert(&agent.name, &agent.location);
            }
        }
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
        files: files.clone(),
        path: path.to_owned(),
    });
    // Whole-tree checks only make sense on a tree that loaded completely.
    if let Some(w) = &workflow
        && !diagnostics.iter().any(|d| d.severity == Severity::Error)
    {
        diagnostics.extend(super::checks::check(w));
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
) -> Result<Workflow, Vec<Diagnostic>> {
    let options = LoadOptions {
        env,
        unset_env_is_error: true,
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
