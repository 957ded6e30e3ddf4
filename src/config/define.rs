//! The root file's declarations: tools (`define.tools`) and callbacks
//! (`define.callbacks`), checked when the root file loads.

use super::DefinedTool;
use super::agent_config::{Define, FunctionCallingMode, GenerateContentConfig, ToolDef, ToolKind};
use super::load::Loader;
use super::source::{Source, normalize_path, read_yaml};
use super::yaml::escape_segment;
use super::{Diagnostic, ToolSpec};
use crate::hosts::{AllowedHosts, literal_host};
use crate::names::{BUILTIN_TOOLS, TRANSFER_TO_AGENT, is_identifier};
use serde_json::Value;
use std::path::Path;

/// Syntax errors in a declared tool's templates, as (relative JSON pointer, message).
fn check_tool_templates(def: &ToolDef) -> Vec<(String, String)> {
    use crate::template::jinja::syntax_error;
    let mut templates: Vec<(String, &str)> = Vec::new();
    match &def.kind {
        ToolKind::Lookup(l) => templates.push(("lookup/key".into(), &l.key)),
        ToolKind::Http(h) => {
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
        ToolKind::Command(c) => templates.extend(
            c.args
                .iter()
                .enumerate()
                .map(|(i, a)| (format!("command/args/{i}"), a.as_str())),
        ),
        ToolKind::SetState(s) => templates.extend(
            s.iter()
                .map(|(k, v)| (format!("set_state/{}", escape_segment(k)), v.as_str())),
        ),
        ToolKind::Agent(_)
        | ToolKind::GetState(_)
        | ToolKind::Client(_)
        | ToolKind::SaveArtifact(_)
        | ToolKind::LoadArtifact(_)
        | ToolKind::Mcp(_) => {}
    }
    templates
        .into_iter()
        .filter_map(|(ptr, t)| syntax_error(t).map(|m| (ptr, m)))
        .collect()
}

impl Loader<'_> {
    /// Checks the callbacks under `define.callbacks`: conditions, templates, patterns.
    pub(super) fn check_callbacks(&mut self, src: &Source, pointer: &str) {
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
    pub(super) fn defined_tools(
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
            if BUILTIN_TOOLS.contains(&name.as_str()) || name == TRANSFER_TO_AGENT {
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
            if let ToolKind::Http(h) = &def.kind {
                if h.allow_hosts.is_none() && literal_host(&h.url).is_none() {
                    self.diagnostics.push(src.error(
                        &format!("{at}/http/url"),
                        "the URL's host is templated or missing; list the hosts it may take in `allow_hosts`",
                    ));
                }
                for (i, entry) in h.allow_hosts.iter().flatten().enumerate() {
                    if let Err(e) = AllowedHosts::parse(&[entry]) {
                        self.diagnostics
                            .push(src.error(&format!("{at}/http/allow_hosts/{i}"), e.to_string()));
                    }
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
            if let ToolKind::Mcp(m) = &def.kind {
                if m.command.is_some() == m.url.is_some() {
                    self.diagnostics.push(src.error(
                        &format!("{at}/mcp"),
                        "an MCP server has exactly one of `command` (a local program) or `url` (streamable HTTP)",
                    ));
                }
                self.mcp_servers
                    .insert(name.clone(), (m.clone(), base_dir.clone()));
            }
            let agent = match &def.kind {
                ToolKind::Agent(cfg) => self.agent_tool(src, cfg, &format!("{at}/agent/agent")),
                _ => None,
            };
            let mut table = None;
            if let ToolKind::Lookup(lookup) = &def.kind {
                match (&lookup.table, &lookup.file) {
                    (Some(t), None) => table = Some(t.clone()),
                    (None, Some(f)) => {
                        let path = normalize_path(&base_dir.join(f));
                        let outside = path
                            .is_file()
                            .then(|| self.fence.refusal("lookup file", f, &path))
                            .flatten();
                        if let Some(why) = outside {
                            self.diagnostics
                                .push(src.error(&format!("{at}/lookup/file"), why));
                        } else {
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
}

/// `allowed_function_names` is taken with mode `ANY` only, and names the agent's own
/// tools (unchecked when an MCP server, whose tools are known at run time, is listed).
pub(super) fn tool_config_errors(
    src: &Source,
    pointer: &str,
    config: Option<&GenerateContentConfig>,
    tools: &[ToolSpec],
    define: Option<&Define>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(fc) = config
        .and_then(|g| g.tool_config.as_ref())
        .and_then(|t| t.function_calling_config.as_ref())
    else {
        return out;
    };
    let Some(names) = &fc.allowed_function_names else {
        return out;
    };
    let at = format!("{pointer}/generate_content_config/tool_config/function_calling_config");
    if fc.mode != Some(FunctionCallingMode::Any) {
        out.push(src.key_error(
            &format!("{at}/allowed_function_names"),
            "allowed_function_names is taken with `mode: ANY` only",
        ));
        return out;
    }
    let mut known = Vec::new();
    for t in tools {
        match t {
            ToolSpec::Builtin(n) => known.push(n.clone()),
            ToolSpec::Defined(n) => {
                let mcp = define
                    .and_then(|d| d.tools.get(n))
                    .is_some_and(|d| matches!(d.kind, ToolKind::Mcp(_)));
                if mcp {
                    return out;
                }
                known.push(n.clone());
            }
            ToolSpec::Agent(a) => known.push(a.agent.name.clone()),
            ToolSpec::Mcp { .. } => return out,
        }
    }
    known.push(TRANSFER_TO_AGENT.to_owned());
    for (i, name) in names.iter().enumerate() {
        if !known.contains(name) {
            out.push(src.error(
                &format!("{at}/allowed_function_names/{i}"),
                format!(
                    "allowed function `{name}` is not one of this agent's tools ({})",
                    known.join(", ")
                ),
            ));
        }
    }
    out
}
