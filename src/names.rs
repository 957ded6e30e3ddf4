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
    "google_search",
    "url_context",
    "google_maps_grounding",
];

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
