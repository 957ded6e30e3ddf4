//! An agent's tool list: ADK built-ins by name, tools declared under `define.tools`,
//! ADK's `AgentTool` and `McpToolset` written in the list, and messages for ADK tools
//! and Python functions adk-flow does not offer.

use super::ToolSpec;
use super::agent_config::{AgentToolConfig, McpToolsetConfig, ToolRef};
use super::load::Loader;
use super::source::{Source, typed};
use crate::names::{BUILTIN_TOOLS, TRANSFER_TO_AGENT, adk_tool_name};
use serde_json::Value;
use std::path::Path;

impl Loader<'_> {
    /// The tools an agent lists, and whether it lists `transfer_to_agent` (offered
    /// anyway, with the targets the tree allows). Unknown names are errors at the name.
    pub(super) fn tool_list(
        &mut self,
        src: &Source,
        pointer: &str,
        list: &[ToolRef],
    ) -> (Vec<ToolSpec>, bool) {
        let mut tools = Vec::with_capacity(list.len());
        let mut lists_transfer = false;
        let set_route_allowed = std::mem::take(&mut self.set_route_allowed);
        for (i, t) in list.iter().enumerate() {
            if t.name == super::graph::SET_ROUTE_TOOL {
                if set_route_allowed {
                    tools.push(ToolSpec::Builtin(t.name.clone()));
                } else {
                    self.diagnostics.push(src.error(
                        &format!("{pointer}/tools/{i}/name"),
                        "`adk_flow.set_route` is a tool of LLM nodes in a Workflow's `edges`; this agent is not one",
                    ));
                }
                continue;
            }
            if set_route_allowed && let Some(why) = set_route_misspelled(&t.name) {
                self.diagnostics
                    .push(src.error(&format!("{pointer}/tools/{i}/name"), why));
                continue;
            }
            let short = adk_tool_name(&t.name);
            if short == TRANSFER_TO_AGENT && set_route_allowed {
                // In a Workflow's LLM node (ADK 2.13): the plain function tool; a node's
                // agent has no transfer targets, so a call fails the node.
                tools.push(ToolSpec::Builtin(TRANSFER_TO_AGENT.to_owned()));
                continue;
            }
            if short == TRANSFER_TO_AGENT {
                // Offered automatically with the targets the tree allows.
                lists_transfer = true;
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
            } else if BUILTIN_TOOLS.contains(&short) {
                tools.push(ToolSpec::Builtin(short.to_owned()));
            } else {
                self.diagnostics.push(src.error(
                    &format!("{pointer}/tools/{i}/name"),
                    unknown_tool_message(&t.name, short, set_route_allowed),
                ));
            }
        }
        (tools, lists_transfer)
    }
}

/// Reads ADK's `McpToolset` args (`stdio_server_params`, `stdio_connection_params`,
/// `streamable_http_connection_params`, `sse_connection_params`, `tool_filter`) into our
/// MCP settings; errors carry the relative pointer.
fn adk_mcp_args(args: Option<&Value>) -> Result<McpToolsetConfig, (String, String)> {
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
    let mut config = McpToolsetConfig {
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
    } else if let Some((key, p)) = ["streamable_http_connection_params", "sse_connection_params"]
        .iter()
        .find_map(|k| args.get(*k).map(|p| (*k, p)))
    {
        config.sse = key == "sse_connection_params";
        config.url = p.get("url").and_then(Value::as_str).map(str::to_owned);
        config.headers = map(p.get("headers"));
        config.timeout_secs = timeout(p.get("timeout"));
        if config.url.is_none() {
            return Err((format!("/{key}"), "the connection params need `url`".into()));
        }
    } else {
        return Err((
            String::new(),
            "McpToolset needs stdio_server_params, stdio_connection_params, streamable_http_connection_params or sse_connection_params".into(),
        ));
    }
    Ok(config)
}

/// Why a tool of a Workflow's LLM node that names the `adk_flow` package, or is a bare
/// `set_route` however spelled (`setroute`, `SetRoute`), is refused: it meant
/// `adk_flow.set_route`. Any other name (`set_state`, `get_route`, `my_tools.set_route`)
/// may be some other tool.
fn set_route_misspelled(name: &str) -> Option<String> {
    let set_route = super::graph::SET_ROUTE_TOOL;
    if name == super::graph::ROUTER_CLASS {
        return Some(format!(
            "`{name}` is a node (`agent_class: {name}`), not a tool; the tool that sets an LLM node's route is `{set_route}`"
        ));
    }
    let near = !name.contains('.') && name.replace('_', "").eq_ignore_ascii_case("setroute");
    (name.starts_with("adk_flow.") || near).then(|| {
        format!("unknown tool `{name}`; did you mean `{set_route}` (the tool that sets this node's route)?")
    })
}

/// ADK tools and toolsets that exist but that adk-flow does not offer, with what they are.
const ADK_TOOLS_NOT_SUPPORTED: &[(&str, &str)] = &[
    ("enterprise_web_search", "tool"),
    ("ExampleTool", "tool class"),
    ("VertexAiSearchTool", "tool class"),
    ("DiscoveryEngineSearchTool", "tool class"),
    ("APIHubToolset", "toolset class"),
    ("ApiRegistry", "toolset class"),
    ("TransferToAgentTool", "tool class"),
];

/// What a dotted Python name most likely is, from Python's naming conventions: a class
/// is CamelCase (a toolset or tool class by its suffix), anything else a function or an
/// object.
fn python_kind(name: &str) -> &'static str {
    let last = name.rsplit('.').next().unwrap_or(name);
    if last.ends_with("Toolset") || last.ends_with("ToolSet") {
        "a Python toolset class"
    } else if last.ends_with("Tool") {
        "a Python tool class"
    } else if last.starts_with(|c: char| c.is_ascii_uppercase()) {
        "a Python class"
    } else {
        "a Python function"
    }
}

/// Why a tool name is refused, with the built-in tools to use instead: in a Workflow's
/// LLM node (`in_node`) those of ADK 2.13 (no `task_completed`) and `adk_flow.set_route`.
fn unknown_tool_message(name: &str, short: &str, in_node: bool) -> String {
    let offered: Vec<&str> = BUILTIN_TOOLS
        .iter()
        .copied()
        .filter(|t| !in_node || *t != crate::names::TASK_COMPLETED)
        .chain(in_node.then_some(super::graph::SET_ROUTE_TOOL))
        .collect();
    let builtins = offered.join(", ");
    if matches!(short, "LongRunningFunctionTool" | "FunctionTool") {
        format!(
            "`{name}` wraps a Python function, which adk-flow does not run; declare the tool in YAML instead (built-in tools: {builtins})"
        )
    } else if let Some((_, kind)) = ADK_TOOLS_NOT_SUPPORTED.iter().find(|(n, _)| *n == short) {
        format!("ADK {kind} `{name}` is not supported by adk-flow (built-in tools: {builtins})")
    } else if name.contains('.') {
        format!(
            "`{name}` references {}, which adk-flow does not run; declare the tool in YAML instead (built-in tools: {builtins})",
            python_kind(name)
        )
    } else {
        let hint = super::schema::did_you_mean(short, offered.iter().copied())
            .map(|s| format!("did you mean `{s}`? "))
            .unwrap_or_default();
        format!("unknown tool `{name}`; {hint}built-in tools are {builtins}")
    }
}
