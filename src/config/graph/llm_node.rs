//! A workflow's LLM nodes: which keys make a mapping an inline LLM node, and what a
//! single-turn node may not have (each refusal at its key, saying what to do instead).

use crate::config::AgentSpec;
use crate::config::AgentSpecKind;
use crate::config::agent_config::ToolRef;
use crate::config::load::Loader;
use crate::config::source::Source;
use crate::config::yaml::escape_segment;
use serde_json::Value;

/// The keys of an LLM agent, which make a mapping with `name` an inline LLM node.
pub(super) const LLM_KEYS: &[&str] = &[
    "name",
    "agent_class",
    "description",
    "model",
    "instruction",
    "static_instruction",
    "tools",
    "output_key",
    "include_contents",
    "generate_content_config",
    "disallow_transfer_to_parent",
    "disallow_transfer_to_peers",
    "sub_agents",
    "mode",
    "input_schema",
    "output_schema",
    "before_agent_callbacks",
    "after_agent_callbacks",
    "before_model_callbacks",
    "after_model_callbacks",
    "before_tool_callbacks",
    "after_tool_callbacks",
];

impl Loader<'_> {
    /// An LLM node: an LLM agent without what a single-turn node cannot have.
    pub(super) fn llm_node(
        &mut self,
        src: &Source,
        value: &Value,
        raw: &Value,
        at: &str,
    ) -> Option<AgentSpec> {
        let m = value.as_object()?;
        let mut refused = false;
        for (key, v) in m {
            let key_at = format!("{at}/{}", escape_segment(key));
            let why = match key.as_str() {
                "mode" => Some("`mode` is not supported: an LLM node of a Workflow runs single-turn; remove it".to_owned()),
                "sub_agents" if v.as_array().is_some_and(|a| !a.is_empty()) => Some(
                    "an LLM node has no `sub_agents`; connect agents with the workflow's edges".to_owned(),
                ),
                "input_schema" | "output_schema"
                    if v.is_string() || v.get("name").is_some() =>
                {
                    Some(format!(
                        "`{key}` names a Python class, which adk-flow does not run; remove it"
                    ))
                }
                "input_schema" | "output_schema" => Some(format!(
                    "`{key}` is not supported on an LLM node of a Workflow (it runs single-turn, with plain text output); remove it"
                )),
                k if k.ends_with("_code") => Some(format!(
                    "`{key}` references Python code, which adk-flow does not run; remove it"
                )),
                k if k.ends_with("_callbacks") && v.as_array().is_some_and(|a| !a.is_empty()) => {
                    Some(format!(
                        "`{key}` is not supported on a Workflow node; remove it"
                    ))
                }
                _ => None,
            };
            if let Some(why) = why {
                self.diagnostics.push(src.key_error(&key_at, why));
                refused = true;
            }
        }
        // ADK's LlmAgentConfig requires an instruction (a string).
        if m.get("instruction").is_none_or(Value::is_null) {
            let name = m.get("name").and_then(Value::as_str).unwrap_or("?");
            self.diagnostics.push(src.error(
                at,
                format!("LLM node `{name}` has no `instruction`, which ADK requires of an LlmAgent (its YAML loader refuses the file); write one (`instruction: \"\"` for none)"),
            ));
            refused = true;
        }
        for (i, tool) in m
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let (name, name_at) = match tool {
                Value::String(n) => (n.as_str(), format!("{at}/tools/{i}")),
                _ => match tool.get("name").and_then(Value::as_str) {
                    Some(n) => (n, format!("{at}/tools/{i}/name")),
                    None => continue,
                },
            };
            // ADK calls a function named with `args` to make the tool, and these two
            // functions fail when called so: ADK cannot load the node (`args: null` is
            // no arguments: ADK makes the tool from the function itself).
            if tool.get("args").is_some_and(|a| !a.is_null())
                && (crate::names::adk_tool_name(name) == crate::names::EXIT_LOOP
                    || name == super::SET_ROUTE_TOOL)
            {
                self.diagnostics.push(src.key_error(
                    &format!("{at}/tools/{i}/args"),
                    format!("`{name}` is a function tool and takes no `args` (ADK calls the function with them to make the tool, which fails); remove `args`"),
                ));
                refused = true;
            }
            if name.strip_prefix("google.adk.tools.").unwrap_or(name)
                == crate::names::TASK_COMPLETED
            {
                self.diagnostics.push(src.error(
                    &name_at,
                    format!("`{name}` is not a tool of ADK 2.13 (google.adk.tools has no task_completed), so ADK cannot load this node; remove it (a node ends with its final reply)"),
                ));
                refused = true;
            }
        }
        if refused {
            // Its tool names are checked all the same (the node's agent is not made, and
            // they would be said only once the refusals above were fixed).
            let tools = m.get("tools").cloned().unwrap_or(Value::Null);
            if let Ok(list) = serde_json::from_value::<Vec<ToolRef>>(tools) {
                self.set_route_allowed = true;
                let _ = self.tool_list(src, at, &list);
            }
            return None;
        }
        let violations = crate::config::schema::check(value);
        if !violations.is_empty() {
            self.report_violations(src, raw, value, at, violations);
            return None;
        }
        self.set_route_allowed = true;
        let spec = self.agent(src, value, at, false);
        self.set_route_allowed = false;
        let mut spec = spec?;
        if let AgentSpecKind::Llm(llm) = &mut spec.kind {
            // A single-turn node sees only its input unless the file says otherwise.
            llm.current_turn_only = m
                .get("include_contents")
                .is_none_or(|v| v.as_str() == Some("none"));
        }
        Some(spec)
    }
}
