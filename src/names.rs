//! Names from ADK's vocabulary that both the loader ([`crate::config`]) and the runtime
//! use: the author of the user's own events, the built-in tools, identifier syntax. Kept
//! here, below both, so that the loader never needs the runtime to know them.

/// The author of the user's own events (and so a name no agent may take).
pub const USER: &str = "user";

/// The tool that hands control to another agent; offered automatically.
pub const TRANSFER_TO_AGENT: &str = "transfer_to_agent";
/// The built-in loop exit.
pub const EXIT_LOOP: &str = "exit_loop";
/// The built-in that ends a step of a sequential pipeline.
pub const TASK_COMPLETED: &str = "task_completed";

/// ADK's memory search tool.
pub const LOAD_MEMORY: &str = "load_memory";
/// ADK's tool that puts matching memories in every request.
pub const PRELOAD_MEMORY: &str = "preload_memory";

/// ADK's tool that lists the session's artifacts and loads the ones the model asks for.
pub const LOAD_ARTIFACTS: &str = "load_artifacts";
/// ADK's long-running tool that asks the user to choose among options.
pub const GET_USER_CHOICE: &str = "get_user_choice";

/// ADK's Gemini built-ins: the ADK name and the Gemini tool key.
pub const GEMINI_TOOLS: &[(&str, &str)] = &[
    ("google_search", "googleSearch"),
    ("url_context", "urlContext"),
    ("google_maps_grounding", "googleMaps"),
];

/// Built-in tool names accepted in `tools:` by ADK name.
pub const BUILTIN_TOOLS: &[&str] = &[
    EXIT_LOOP,
    TASK_COMPLETED,
    LOAD_MEMORY,
    PRELOAD_MEMORY,
    LOAD_ARTIFACTS,
    GET_USER_CHOICE,
    "google_search",
    "url_context",
    "google_maps_grounding",
];

/// The module-qualified names ADK resolves to its tools (`name` with a dot is imported
/// as `module.attribute`): each with the short name it stands for. The package's own
/// exports (`google.adk.tools.NAME`) are read by [`adk_tool_name`] without this table.
const QUALIFIED_TOOLS: &[(&str, &str)] = &[
    ("google.adk.tools.exit_loop_tool.exit_loop", EXIT_LOOP),
    (
        "google.adk.tools.load_memory_tool.load_memory_tool",
        LOAD_MEMORY,
    ),
    (
        "google.adk.tools.preload_memory_tool.preload_memory_tool",
        PRELOAD_MEMORY,
    ),
    (
        "google.adk.tools.load_artifacts_tool.load_artifacts_tool",
        LOAD_ARTIFACTS,
    ),
    (
        "google.adk.tools.get_user_choice_tool.get_user_choice_tool",
        GET_USER_CHOICE,
    ),
    (
        "google.adk.tools.google_search_tool.google_search",
        "google_search",
    ),
    (
        "google.adk.tools.url_context_tool.url_context",
        "url_context",
    ),
    (
        "google.adk.tools.google_maps_grounding_tool.google_maps_grounding",
        "google_maps_grounding",
    ),
    (
        "google.adk.tools.transfer_to_agent_tool.transfer_to_agent",
        TRANSFER_TO_AGENT,
    ),
    ("google.adk.tools.agent_tool.AgentTool", "AgentTool"),
    ("google.adk.tools.mcp_tool.McpToolset", "McpToolset"),
    ("google.adk.tools.mcp_tool.MCPToolset", "McpToolset"),
    (
        "google.adk.tools.mcp_tool.mcp_toolset.McpToolset",
        "McpToolset",
    ),
    (
        "google.adk.tools.mcp_tool.mcp_toolset.MCPToolset",
        "McpToolset",
    ),
];

/// The ADK tool a `tools:` name stands for, as ADK resolves it: `exit_loop`,
/// `google.adk.tools.exit_loop` and `google.adk.tools.exit_loop_tool.exit_loop` are all
/// `exit_loop`. Other names come back as written.
pub fn adk_tool_name(name: &str) -> &str {
    if let Some((_, short)) = QUALIFIED_TOOLS.iter().find(|(q, _)| *q == name) {
        return short;
    }
    match name.strip_prefix("google.adk.tools.") {
        Some(short) if !short.contains('.') => short,
        _ => name,
    }
}

/// A Python identifier, as `str.isidentifier()` (which ADK applies to agent names and
/// template keys) decides: `_` or a character of Unicode's XID_Start, then characters of
/// XID_Continue. Not every letter or digit is one (`²`, `①`), and some that are neither
/// are (`·` after the first character, `℘`).
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || unicode_ident::is_xid_start(c))
        && chars.all(unicode_ident::is_xid_continue)
}

#[cfg(test)]
mod tests {
    #[test]
    fn adk_tool_names_resolve_as_adk_imports_them() {
        use super::adk_tool_name;
        for name in [
            "exit_loop",
            "google.adk.tools.exit_loop",
            "google.adk.tools.exit_loop_tool.exit_loop",
        ] {
            assert_eq!(adk_tool_name(name), "exit_loop");
        }
        assert_eq!(
            adk_tool_name("google.adk.tools.mcp_tool.mcp_toolset.MCPToolset"),
            "McpToolset"
        );
        assert_eq!(
            adk_tool_name("google.adk.tools.agent_tool.AgentTool"),
            "AgentTool"
        );
        // A function of a module, not the tool ADK exports: left as written.
        assert_eq!(
            adk_tool_name("google.adk.tools.get_user_choice_tool.get_user_choice"),
            "google.adk.tools.get_user_choice_tool.get_user_choice"
        );
        assert_eq!(adk_tool_name("my_pkg.tools.roll"), "my_pkg.tools.roll");
    }

    #[test]
    fn identifiers() {
        assert!(super::is_identifier("_a1"));
        assert!(super::is_identifier("é"));
        assert!(!super::is_identifier("1a"));
        assert!(!super::is_identifier("a-b"));
        assert!(!super::is_identifier(""));
        // Python's rules, not Rust's letters and digits.
        assert!(!super::is_identifier("a\u{b2}"));
        assert!(!super::is_identifier("\u{2460}"));
        assert!(super::is_identifier("a\u{b7}"));
        assert!(super::is_identifier("\u{2118}"));
    }

    #[test]
    fn every_gemini_tool_is_a_builtin() {
        for (name, _) in super::GEMINI_TOOLS {
            assert!(super::BUILTIN_TOOLS.contains(name), "{name}");
        }
    }
}
