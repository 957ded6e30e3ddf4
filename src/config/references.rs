//! What an agent file refers to: sub-agents in other files (`config_path`, loaded in
//! turn, inside the workflow's folder, without cycles) or written inline; callbacks by
//! name, resolved against `define.callbacks` and checked against their hook; Python code
//! (`code:`, dotted names), which adk-flow does not run and reports.

use super::agent_config::{AgentRef, AgentToolConfig, CallbackDef, CodeRef};
use super::load::Loader;
use super::source::{Source, normalize_path, typed};
use super::{AgentSpec, AgentToolSpec};
use serde_json::Value;
use std::path::Path;

/// Why a callback's actions do not fit a hook, if they do not.
fn callback_fits(hook: &str, def: &CallbackDef) -> Option<String> {
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

/// How many files deep references (`config_path`, a Workflow's node files) may nest: each
/// level is a recursion of the loader, and a deeper tree would overflow its stack.
pub(super) const MAX_FILE_DEPTH: usize = 256;

/// Why a reference is refused when the files above it are already [`MAX_FILE_DEPTH`] deep.
pub(super) fn too_deep(what: &str, rel: &str) -> String {
    format!(
        "{what} `{rel}` is more than {MAX_FILE_DEPTH} files deep (each file referring to the next); flatten the tree"
    )
}

impl Loader<'_> {
    /// A Python reference (`input_schema`, `output_schema`...), which adk-flow does not
    /// run: an error at the key.
    pub(super) fn python_refs(&mut self, src: &Source, pointer: &str, key: &str, refs: &[CodeRef]) {
        if let Some(first) = refs.first() {
            let instead = if key == "output_schema" {
                "write the JSON Schema inline instead (`output_schema: {type: object, properties: ...}`)"
            } else if key == "input_schema" {
                "write the JSON Schema inline instead (`input_schema: {type: object, properties: ...}`)"
            } else {
                "declare the behaviour in YAML instead"
            };
            self.diagnostics.push(src.key_error(
                &format!("{pointer}/{key}"),
                format!(
                    "`{key}` references Python code (`{}`), which adk-flow does not run; {instead}",
                    first.name
                ),
            ));
        }
    }

    /// The before/after agent callbacks every agent class has.
    pub(super) fn agent_callbacks(
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
    pub(super) fn callback_refs(
        &mut self,
        src: &Source,
        pointer: &str,
        key: &str,
        refs: &[CodeRef],
    ) {
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

    /// Loads the files a (schema-invalid) agent references, for their diagnostics only.
    pub(super) fn follow_references(&mut self, src: &Source, value: &Value, pointer: &str) {
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

    /// Loads the agent of an AgentTool (a tree of its own).
    pub(super) fn agent_tool(
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

    pub(super) fn sub_agent(
        &mut self,
        src: &Source,
        value: &Value,
        pointer: &str,
    ) -> Option<AgentSpec> {
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
                if let Some(why) = self.fence.refusal("config_path", &rel, &target) {
                    self.diagnostics.push(src.error(&at, why));
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
                if self.stack.len() >= MAX_FILE_DEPTH {
                    self.diagnostics
                        .push(src.error(&at, too_deep("config_path", &rel)));
                    return None;
                }
                self.file(&target, false)
            }
            (None, None) => None,
        }
    }
}
