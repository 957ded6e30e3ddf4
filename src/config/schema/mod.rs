//! The published JSON Schema (2020-12) of workflow files, generated from the YAML types
//! (this file), and the structural check that reports every schema violation with a
//! friendly message (`explain.rs`).
//!
//! A process does not generate the schema: the committed `schemas/workflow.schema.json`
//! (which `tests/it/schema.rs` keeps equal to what the types generate) is compiled in, as
//! text and as a validator generated at build time (`jsonschema`'s `macros` feature), so
//! checking a file compiles nothing at run time. The schema's value is parsed only when a
//! file has violations to explain, or for `adk-flow schema`.
//!
//! The agent shapes are tagged by `agent_class` with `if`/`then`/`else`, not a vague
//! `anyOf`, so an editor (and this check) knows exactly which keys apply.

mod explain;
mod graph;
#[cfg(test)]
mod same_answers;

pub use explain::{Violation, check, did_you_mean};

use super::agent_config::{
    AgentRef, LlmAgentConfig, LoopAgentConfig, ParallelAgentConfig, SequentialAgentConfig,
};
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};
use std::sync::OnceLock;

// Every spelling ADK 1.39.1 resolves to the class: the short name (looked up in
// `google.adk.agents`), the package's export, the defining module's name, and for
// LlmAgent its `Agent` alias (also exported by `google.adk`).
pub(crate) const LLM_CLASSES: &[&str] = &[
    "LlmAgent",
    "Agent",
    "google.adk.agents.LlmAgent",
    "google.adk.agents.Agent",
    "google.adk.agents.llm_agent.LlmAgent",
    "google.adk.agents.llm_agent.Agent",
    "google.adk.Agent",
];
pub(crate) const SEQUENTIAL_CLASSES: &[&str] = &[
    "SequentialAgent",
    "google.adk.agents.SequentialAgent",
    "google.adk.agents.sequential_agent.SequentialAgent",
];
pub(crate) const PARALLEL_CLASSES: &[&str] = &[
    "ParallelAgent",
    "google.adk.agents.ParallelAgent",
    "google.adk.agents.parallel_agent.ParallelAgent",
];
pub(crate) const LOOP_CLASSES: &[&str] = &[
    "LoopAgent",
    "google.adk.agents.LoopAgent",
    "google.adk.agents.loop_agent.LoopAgent",
];

/// Every accepted spelling of `agent_class`.
pub fn agent_class_names() -> Vec<&'static str> {
    [
        LLM_CLASSES,
        SEQUENTIAL_CLASSES,
        PARALLEL_CLASSES,
        LOOP_CLASSES,
    ]
    .concat()
}

fn class_branch(classes: &[&str], def: &str, otherwise: Value) -> Value {
    json!({
        "if": {
            "properties": {"agent_class": {"enum": classes}},
            "required": ["agent_class"]
        },
        "then": {"$ref": format!("#/$defs/{def}")},
        "else": otherwise
    })
}

/// `Option<Struct>` fields come out as `anyOf: [{$ref}, {type: null}]`, which hides the
/// real errors inside the struct behind "not valid under any of anyOf". Absent keys are
/// already optional, so the reference alone is both stricter and clearer.
fn strip_nullable_refs(node: &mut Value) {
    match node {
        Value::Object(map) => {
            let replacement =
                map.get("anyOf")
                    .and_then(Value::as_array)
                    .and_then(|alts| match alts.as_slice() {
                        [a, b] if b == &json!({"type": "null"}) && a.get("$ref").is_some() => {
                            Some(a.clone())
                        }
                        _ => None,
                    });
            if let Some(r) = replacement {
                map.remove("anyOf");
                if let Value::Object(r) = r {
                    map.extend(r);
                }
            }
            for v in map.values_mut() {
                strip_nullable_refs(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nullable_refs),
        _ => {}
    }
}

/// The schema as generated from the types (what `schemas/workflow.schema.json` must hold).
pub fn generated_schema() -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    generator.subschema_for::<LlmAgentConfig>();
    generator.subschema_for::<SequentialAgentConfig>();
    generator.subschema_for::<ParallelAgentConfig>();
    generator.subschema_for::<LoopAgentConfig>();
    generator.subschema_for::<AgentRef>();
    let mut defs = generator.take_definitions(true);
    for def in defs.values_mut() {
        strip_nullable_refs(def);
    }

    for (def, classes) in [
        ("LlmAgentConfig", LLM_CLASSES),
        ("SequentialAgentConfig", SEQUENTIAL_CLASSES),
        ("ParallelAgentConfig", PARALLEL_CLASSES),
        ("LoopAgentConfig", LOOP_CLASSES),
    ] {
        if let Some(props) = defs
            .get_mut(def)
            .and_then(|d| d.get_mut("properties"))
            .and_then(Value::as_object_mut)
        {
            if let Some(class) = props.get_mut("agent_class").and_then(Value::as_object_mut) {
                class.remove("type");
                class.insert("enum".into(), json!(classes));
            }
            if let Some(subs) = props.get_mut("sub_agents").and_then(Value::as_object_mut) {
                subs.insert("items".into(), json!({"$ref": "#/$defs/SubAgent"}));
            }
        }
    }
    if let Some(r) = defs.get_mut("ToolDef").and_then(Value::as_object_mut) {
        r.insert(
            "oneOf".into(),
            Value::Array(
                super::agent_config::TOOL_KINDS
                    .iter()
                    .map(|k| json!({"required": [k]}))
                    .collect(),
            ),
        );
    }
    if let Some(props) = defs
        .get_mut("AgentToolConfig")
        .and_then(|d| d.get_mut("properties"))
        .and_then(Value::as_object_mut)
        && let Some(agent) = props.get_mut("agent").and_then(Value::as_object_mut)
    {
        agent.insert("$ref".into(), json!("#/$defs/SubAgent"));
    }
    // AgentRef needs exactly one of its keys.
    if let Some(r) = defs.get_mut("AgentRef").and_then(Value::as_object_mut) {
        r.insert(
            "oneOf".into(),
            json!([{"required": ["config_path"]}, {"required": ["code"]}]),
        );
    }
    let llm = json!({"$ref": "#/$defs/LlmAgentConfig"});
    let workflow_branch = class_branch(crate::config::graph::WORKFLOW_CLASSES, "Workflow", llm);
    let loop_branch = class_branch(LOOP_CLASSES, "LoopAgentConfig", workflow_branch);
    let parallel_branch = class_branch(PARALLEL_CLASSES, "ParallelAgentConfig", loop_branch);
    let mut agent = class_branch(SEQUENTIAL_CLASSES, "SequentialAgentConfig", parallel_branch);
    if let Some(a) = agent.as_object_mut() {
        a.insert("type".into(), json!("object"));
        a.insert(
            "description".into(),
            json!("An agent. `agent_class` picks its kind: LlmAgent (the default), SequentialAgent, ParallelAgent, LoopAgent or an ADK 2 Workflow graph."),
        );
    }
    defs.insert("Agent".into(), agent);
    defs.extend(graph::defs());
    defs.insert(
        "SubAgent".into(),
        json!({
            "description": "A sub-agent: `config_path: file.yaml` (relative to this file), or the agent written inline.",
            "if": {
                "anyOf": [{"required": ["config_path"]}, {"required": ["code"]}]
            },
            "then": {"$ref": "#/$defs/AgentRef"},
            "else": {"$ref": "#/$defs/Agent"}
        }),
    );
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "adk-flow workflow",
        "description": "An adk-flow workflow file: an ADK Agent Config (root_agent.yaml) agent, plus adk-flow's `define` and `state` in the root file.",
        "$ref": "#/$defs/Agent",
        "$defs": defs
    })
}

/// [`generated_schema`] as committed: pretty JSON with a trailing newline.
pub fn generated_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&generated_schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// `schemas/workflow.schema.json`, compiled in.
const COMMITTED: &str = include_str!("../../../schemas/workflow.schema.json");

/// Whether a value satisfies `schemas/workflow.schema.json`, generated at build time: no
/// schema to compile (nor to check against the meta-schema) when a process checks a valid
/// file. It answers as the runtime validator does (`same_answers.rs` compares them on every
/// YAML file of the repository and the fuzz corpus, and variations of them); the errors
/// of an invalid file come from the runtime validator (`explain::check`).
#[jsonschema::validator(
    path = "schemas/workflow.schema.json",
    draft = Draft202012,
    methods = { is_valid = true, validate = false, iter_errors = false }
)]
pub(super) struct Validator;

/// The workflow JSON Schema, as committed in `schemas/workflow.schema.json` (equal to
/// [`generated_schema`]; a test fails on drift).
pub fn workflow_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::from_str(COMMITTED).unwrap_or_else(|_| generated_schema()))
}

/// The schema as committed: pretty JSON with a trailing newline.
pub fn schema_text() -> String {
    COMMITTED.to_owned()
}
