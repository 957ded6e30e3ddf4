//! ADK's AgentTool: an agent run as a tool, in a fresh session seeded with the caller's
//! state. The child's state changes flow back into the caller's pending delta; the result
//! is the text of the child's last reply (parsed, when the agent has an output schema).
//!
//! The tool takes one string argument, `request`, which becomes the agent's message;
//! when the agent has an `input_schema` (its own, or its first sub-agent's), the tool's
//! parameters are that schema instead, and the arguments, checked against it, go to the
//! agent as JSON the way pydantic's `model_dump_json(exclude_none=True)` writes them.

use crate::event::{Event, StateMap};
use crate::invocation::RunError;
use crate::model::FunctionDeclaration;
use crate::model::schema::OutputSchema;
use crate::telemetry::TraceParent;
use crate::tool::{Tool, ToolContext, ToolError};
use crate::tree::AgentTree;
use async_trait::async_trait;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Value, json};
use std::sync::Arc;

/// How an AgentTool's agent runs: as one turn of a session of its own. The Runner
/// provides it (`runner::IsolatedRunner`), so that agents need not know the Runner.
pub trait IsolatedRun: Send + Sync {
    /// Sends `request` as the user's message to `tree`'s root agent, in a new session of
    /// app `app` that starts with `state`; yields the events as they are committed. The
    /// run's spans hang under `trace` (the call's `execute_tool` span), as ADK's do. With
    /// `adk2` (a call from a workflow graph) its agents run as ADK 2.13 runs them
    /// ([`crate::invocation::RunConfig::adk2`]).
    fn run_isolated(
        &self,
        tree: Arc<AgentTree>,
        app: &str,
        state: StateMap,
        request: String,
        trace: Option<TraceParent>,
        adk2: bool,
    ) -> BoxStream<'static, Result<Arc<Event>, RunError>>;
}

/// An agent offered to a model as a tool.
pub struct AgentTool {
    name: String,
    description: String,
    tree: Arc<AgentTree>,
    runner: Arc<dyn IsolatedRun>,
    skip_summarization: bool,
    input_schema: Option<Arc<OutputSchema>>,
}

impl AgentTool {
    /// A tool named `name` that runs `tree`'s root agent through `runner`.
    pub fn new(
        name: impl Into<String>,
        tree: Arc<AgentTree>,
        runner: Arc<dyn IsolatedRun>,
        skip_summarization: bool,
    ) -> Self {
        let description = tree.get(tree.root()).description.clone();
        let input_schema = tree.input_schema(tree.root()).cloned();
        AgentTool {
            name: name.into(),
            description,
            tree,
            runner,
            skip_summarization,
            input_schema,
        }
    }
}

#[async_trait]
impl Tool for AgentTool {
    fn trace_type(&self) -> &'static str {
        "AgentTool"
    }

    fn runs_llm_agent(&self) -> bool {
        self.tree.get(self.tree.root()).as_llm().is_some()
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: Some(match &self.input_schema {
                Some(schema) => schema.json_schema().clone(),
                None => json!({
                    "type": "object",
                    "properties": {"request": {"type": "string"}},
                    "required": ["request"],
                }),
            }),
        }
    }

    async fn run(&self, args: Value, ctx: &mut ToolContext) -> Result<Value, ToolError> {
        let request = match (&self.input_schema, args.get("request")) {
            (Some(schema), _) => {
                schema.check(&args).map_err(|problems| {
                    ToolError::new(format!(
                        "the arguments of `{}` do not match its input_schema: {problems}",
                        self.name
                    ))
                })?;
                dump_json(&schema.written, &args).to_string()
            }
            (None, Some(Value::String(s))) => s.clone(),
            (None, Some(other)) => other.to_string(),
            (None, None) => {
                return Err(ToolError::new(format!(
                    "`{}` needs a string argument `request`",
                    self.name
                )));
            }
        };
        let mut state = ctx.caller_state();
        state.retain(|k, _| !k.starts_with("_adk"));
        let mut events = self.runner.run_isolated(
            Arc::clone(&self.tree),
            &self.name,
            state,
            request,
            ctx.trace_parent().cloned(),
            ctx.adk2(),
        );
        let mut last_text: Option<String> = None;
        // Events with function calls: each adds a call, its response and a model call to
        // what ADK 2.13's tasks go through before the response (see `add_queue_entries`).
        let mut calls = Calls::default();
        while let Some(item) = events.next().await {
            let event = item.map_err(|e| {
                ToolError::new(format!(
                    "agent `{}` failed: {}",
                    self.name,
                    crate::errors::chain(&e)
                ))
            })?;
            if event.is_partial() {
                continue;
            }
            if event.function_calls().next().is_some() {
                calls.events += 1;
                calls.agent_tools += u32::from(self.calls_agent_tool(&event));
            }
            if event.actions.escalate == Some(true) && event.function_responses().next().is_some() {
                calls.escalated = true;
            }
            for (k, v) in &event.actions.state_delta {
                ctx.set_state(k.clone(), v.clone());
            }
            if let Some(content) = &event.content {
                let texts: Vec<&str> = content
                    .parts
                    .iter()
                    .filter(|p| p.thought != Some(true))
                    .filter_map(|p| p.text.as_deref())
                    .filter(|t| !t.is_empty())
                    .collect();
                last_text = Some(texts.join("\n"));
            }
        }
        if self.skip_summarization {
            ctx.actions.skip_summarization = Some(true);
        }
        if ctx.adk2() && self.runs_llm_agent() {
            ctx.add_queue_entries(queue_entries(&self.tree, &calls));
        }
        let text = last_text.unwrap_or_default();
        // An agent that ends with a structured reply answers with the parsed JSON (ADK's
        // `validate_schema`); its own run has already checked the reply.
        match self.tree.output_schema(self.tree.root()) {
            Some(schema) => schema
                .parse(&text)
                .map_err(|e| ToolError::new(format!("agent `{}`: {e}", self.name))),
            None => Ok(Value::String(text)),
        }
    }
}

/// `value` as pydantic's `model_dump_json(exclude_none=True)` writes a model validated
/// from it: the schema's properties in the order written, defaults filled in for the
/// missing ones, nulls and undeclared keys left out; nested objects alike.
fn dump_json(schema: &Value, value: &Value) -> Value {
    match (schema.get("properties").and_then(Value::as_object), value) {
        (Some(properties), Value::Object(given)) => {
            let mut out = serde_json::Map::new();
            for (name, sub) in properties {
                let v = match given.get(name) {
                    Some(v) => dump_json(sub, v),
                    None => match sub.get("default") {
                        Some(default) => default.clone(),
                        None => continue,
                    },
                };
                if !v.is_null() {
                    out.insert(name.clone(), v);
                }
            }
            Value::Object(out)
        }
        (None, Value::Array(items)) => match schema.get("items") {
            Some(item) => Value::Array(items.iter().map(|v| dump_json(item, v)).collect()),
            None => value.clone(),
        },
        _ => value.clone(),
    }
}

/// The events with function calls an AgentTool's agent made, for [`queue_entries`].
#[derive(Default)]
struct Calls {
    /// Events with function calls.
    events: u32,
    /// Of those, events calling an AgentTool of its own (whose agent is an LlmAgent).
    agent_tools: u32,
    /// A call's response escalated (`exit_loop`): no model call follows it.
    escalated: bool,
}

impl AgentTool {
    /// Whether `event` calls an AgentTool of this tool's agent whose agent is an LlmAgent.
    fn calls_agent_tool(&self, event: &Event) -> bool {
        let Some(agent) = self.tree.get(self.tree.root()).as_llm() else {
            return false;
        };
        event.function_calls().any(|call| {
            agent
                .tools
                .iter()
                .any(|t| t.name() == call.name && t.runs_llm_agent())
        })
    }
}

/// Ready-queue entries that an AgentTool's LlmAgent with tools, or making `calls`,
/// adds to its call's response beyond one plain reply's (measured against ADK 2.13 with
/// one call per event: its tools converted before each model call, then each call, its
/// response and the next model call through its own runner's tasks and consumer; a call
/// of an AgentTool of its own adds what that tool's runner adds to a plain call, 15 - 6;
/// a response that escalates has no model call after it, 7 fewer).
fn queue_entries(tree: &AgentTree, calls: &Calls) -> u32 {
    const TOOLS: u32 = 4;
    const PER_CALL: u32 = 17;
    const PER_AGENT_TOOL: u32 = 9;
    const ESCALATED: u32 = 7;
    let has_tools = tree
        .get(tree.root())
        .as_llm()
        .is_some_and(|l| !l.tools.is_empty());
    (u32::from(has_tools) * TOOLS + calls.events * PER_CALL + calls.agent_tools * PER_AGENT_TOOL)
        .saturating_sub(u32::from(calls.escalated) * ESCALATED)
}
