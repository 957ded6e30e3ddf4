//! An agent's structured output (`output_schema`), as ADK 1.39.1 handles it:
//!
//! - Without tools, or on a model that takes a response schema beside tools (the
//!   OpenAI-compatible provider, as LiteLLM in ADK), the schema rides on the request
//!   (`LlmRequest::output_schema`).
//! - With tools on any other model (Gemini, the scripted model), the request offers
//!   `set_model_response` instead, whose arguments are the reply (an object schema's
//!   properties, or one `response` argument), and the system instruction says to use it
//!   (ADK's `_OutputSchemaRequestProcessor`). When the model calls it, the function
//!   response is followed by a model event whose text is the arguments as JSON (ADK's
//!   `create_final_model_response_event`), which ends the agent's turn.
//! - The final reply's text is parsed and checked against the schema. A reply that is not
//!   JSON, or breaks the schema, ends the invocation with an error event
//!   (`OUTPUT_NOT_JSON`, `OUTPUT_SCHEMA_MISMATCH`), as ADK's pydantic check raises. ADK
//!   checks only when there is an `output_key`; adk-flow checks whenever there is a
//!   schema. The value stored under `output_key` is the parsed JSON, so state holds an
//!   object that `{key}` renders as Python's `str()` and callbacks read field by field.

use crate::event::{Content, Event, Part, Role};
use crate::invocation::{InvocationContext, RunError};
use crate::model::FunctionDeclaration;
use crate::model::schema::{OutputError, OutputSchema};
use crate::pyrepr::json_dumps;
use crate::tool::{Tool, ToolContext, ToolError};
use crate::tree::LlmAgent;
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;

/// The tool that carries a structured reply when tools share the request.
pub(crate) const SET_MODEL_RESPONSE: &str = "set_model_response";

/// What the system instruction gains when `set_model_response` is offered (ADK's text).
pub(crate) const SET_MODEL_RESPONSE_INSTRUCTION: &str = "IMPORTANT: You have access to other tools, but you must provide your final response using the set_model_response tool with the required structured format. After using any other tools needed to complete the task, always call set_model_response with your final answer in the specified schema format.";

/// Whether the agent answers through `set_model_response` (schema and tools, on a model
/// that cannot take both).
pub(crate) fn uses_tool(llm: &LlmAgent) -> bool {
    llm.output_schema.is_some() && !llm.tools.is_empty() && !llm.model.output_schema_with_tools()
}

/// The schema the agent's requests carry, if they carry one.
pub(crate) fn request_schema(llm: &LlmAgent) -> Option<Arc<OutputSchema>> {
    llm.output_schema.clone().filter(|_| !uses_tool(llm))
}

/// ADK's `SetModelResponseTool` for an inline schema.
pub(crate) struct SetModelResponse {
    schema: Arc<OutputSchema>,
}

impl SetModelResponse {
    /// The tool for `schema`.
    pub(crate) fn new(schema: Arc<OutputSchema>) -> Self {
        SetModelResponse { schema }
    }
}

#[async_trait]
impl Tool for SetModelResponse {
    fn name(&self) -> &str {
        SET_MODEL_RESPONSE
    }

    fn declaration(&self) -> FunctionDeclaration {
        let parameters = if self.schema.is_object() {
            self.schema.json_schema().clone()
        } else {
            json!({
                "type": "object",
                "properties": {"response": self.schema.json_schema()},
                "required": ["response"],
            })
        };
        FunctionDeclaration {
            name: SET_MODEL_RESPONSE.into(),
            // The function's docstring, stripped, as ADK sends it.
            description: "Set your final response using the required output schema.\n\n      Use this tool to provide your final structured answer instead\n      of outputting text directly.".into(),
            parameters: Some(parameters),
        }
    }

    async fn run(&self, args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        if self.schema.is_object() {
            Ok(args)
        } else {
            Ok(args.get("response").cloned().unwrap_or(Value::Null))
        }
    }
}

/// The reply a `set_model_response` response carries, as the JSON text of the model
/// event that follows it (ADK's `get_structured_model_response`: a `result` wrapper is
/// unwrapped, the value written as Python's `json.dumps`).
pub(crate) fn structured_text(response_event: &Event) -> Option<String> {
    let response = response_event
        .function_responses()
        .find(|r| r.name == SET_MODEL_RESPONSE)?;
    let value = match response.response.get("result") {
        Some(inner) if response.response.is_object() => inner,
        _ => &response.response,
    };
    Some(json_dumps(value))
}

/// The model event that stands for a structured reply given through the tool.
pub(crate) fn reply_event(ctx: &InvocationContext, agent: &Arc<str>, text: String) -> Event {
    let mut event = ctx.new_event(Arc::clone(agent));
    event.content = Some(Content::new(Role::Model, vec![Part::text(text)]));
    event
}

/// Checks a final reply against the agent's schema and stores it under its output_key,
/// in the event's own delta: the parsed JSON with a schema, the text without.
///
/// # Errors
/// A final reply with text that is not JSON, or that breaks the schema.
pub(crate) fn save_output(
    event: &mut Event,
    agent: &str,
    output_key: Option<&str>,
    schema: Option<&OutputSchema>,
) -> Result<(), RunError> {
    if (output_key.is_none() && schema.is_none()) || !event.is_final_response() {
        return Ok(());
    }
    let Some(text) = event.text() else {
        return Ok(());
    };
    let value = match schema {
        // An empty last chunk of a stream is not a reply (ADK skips it too).
        Some(_) if text.trim().is_empty() => return Ok(()),
        Some(schema) => schema
            .parse(&text)
            .map_err(|source| output_error(agent, source))?,
        None => Value::String(text),
    };
    if let Some(key) = output_key {
        event.actions.state_delta.insert(key.to_owned(), value);
    }
    Ok(())
}

/// ADK 2.13's output_key (`LlmAgent._run_async_impl` accumulating the agent's text) for
/// an agent run outside a workflow graph (an AgentTool's agent called from one): a model
/// event that carries text stores all the agent's text so far (`"a"`, then `"ab"`).
/// `text` is that text so far. (A graph node adds up its text itself: the graph runtime's
/// `TextSoFar`.)
pub(crate) fn accumulate(event: &mut Event, key: &str, text: &mut String) {
    // The event's text is added in place (no copy of it first).
    let before = text.len();
    event.texts().for_each(|t| text.push_str(t));
    if text.len() == before {
        // A model reply with no text part and no call (`parts: []`): ADK 2.13's node
        // output is "", which its output_key stores too.
        let model_reply = event
            .content
            .as_ref()
            .is_some_and(|c| c.role == Some(Role::Model));
        if model_reply && event.text().is_none() && event.function_calls().next().is_none() {
            event
                .actions
                .state_delta
                .insert(key.to_owned(), Value::String(String::new()));
        }
        return;
    }
    event
        .actions
        .state_delta
        .insert(key.to_owned(), Value::String(text.clone()));
}

fn output_error(agent: &str, source: OutputError) -> RunError {
    RunError::Output {
        agent: agent.to_owned(),
        source,
    }
}
