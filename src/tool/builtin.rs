//! ADK's built-in tools that need nothing but the tool context.

use super::{Tool, ToolContext, ToolError};
use crate::model::FunctionDeclaration;
use crate::names::{EXIT_LOOP, GEMINI_TOOLS, TASK_COMPLETED};
use async_trait::async_trait;
use serde_json::Value;

/// A tool Gemini runs on its side (search grounding, URL context, Maps grounding).
pub struct GeminiTool {
    name: &'static str,
    key: &'static str,
}

impl GeminiTool {
    /// The tool with this ADK name, if it is one.
    pub fn named(name: &str) -> Option<GeminiTool> {
        GEMINI_TOOLS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(name, key)| GeminiTool { name, key })
    }
}

#[async_trait]
impl Tool for GeminiTool {
    fn name(&self) -> &str {
        self.name
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: self.name.into(),
            description: format!("Gemini's built-in `{}` tool.", self.key),
            parameters: None,
        }
    }

    fn provider_tool(&self) -> Option<&str> {
        Some(self.key)
    }

    async fn run(&self, _args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        Err(ToolError::new(format!(
            "`{}` runs inside Gemini; it cannot be called as a function",
            self.name
        )))
    }
}

/// `exit_loop`: escalates, which ends every enclosing LoopAgent, and skips summarization.
pub struct ExitLoop;

#[async_trait]
impl Tool for ExitLoop {
    fn name(&self) -> &str {
        EXIT_LOOP
    }

    fn declaration(&self) -> FunctionDeclaration {
        // ADK sends the raw Python docstring, indentation included.
        FunctionDeclaration {
            name: EXIT_LOOP.into(),
            description:
                "Exits the loop.\n\n  Call this function only when you are instructed to do so.\n  "
                    .into(),
            parameters: None,
        }
    }

    async fn run(&self, _args: Value, ctx: &mut ToolContext) -> Result<Value, ToolError> {
        ctx.actions.escalate = Some(true);
        ctx.actions.skip_summarization = Some(true);
        Ok(Value::Null)
    }
}

/// `task_completed`: ends the calling agent so the next step of a sequential pipeline runs.
pub struct TaskCompleted;

/// The sentence appended to the instruction of each step of a SequentialAgent that
/// offers `task_completed` (ADK's live-mode text).
pub const TASK_COMPLETED_INSTRUCTION: &str = "If you finished the user's request\n          according to its description, call the task_completed function\n          to exit so the next agents can take over. When calling this function,\n          do not generate any text other than the function call.";

#[async_trait]
impl Tool for TaskCompleted {
    fn name(&self) -> &str {
        TASK_COMPLETED
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: TASK_COMPLETED.into(),
            description: "\n        Signals that the agent has successfully completed the user's question\n        or task.\n        ".into(),
            parameters: None,
        }
    }

    async fn run(&self, _args: Value, ctx: &mut ToolContext) -> Result<Value, ToolError> {
        ctx.end_invocation = true;
        Ok(Value::String("Task completion signaled.".into()))
    }
}

/// `adk_flow.set_route`: an LLM node of a workflow graph sets its route, the label of the
/// outgoing edge to follow (the last one set during the node's run counts).
pub struct SetRoute;

/// The name the model calls `adk_flow.set_route` by.
pub const SET_ROUTE: &str = "set_route";

#[async_trait]
impl Tool for SetRoute {
    fn name(&self) -> &str {
        SET_ROUTE
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: SET_ROUTE.into(),
            description:
                "Sets the route of this workflow step: the label of the outgoing edge to follow."
                    .into(),
            parameters: Some(serde_json::json!({
                "type": "object",
                "properties": {"route": {"type": "string", "title": "Route"}},
                "required": ["route"],
            })),
        }
    }

    /// As ADK's FunctionTool runs the Python function: a missing `route` is its
    /// missing-parameter answer; any other value is taken as it is (no type check: an
    /// integer routes as an integer label), and `null` sets no route.
    async fn run(&self, args: Value, ctx: &mut ToolContext) -> Result<Value, ToolError> {
        let Some(route) = args.get("route").cloned() else {
            return Ok(serde_json::json!({"error": format!(
                "Invoking `{SET_ROUTE}()` failed as the following mandatory input parameters are not present:\nroute\nYou could retry calling this tool, but it is IMPORTANT for you to provide all the mandatory parameters."
            )}));
        };
        if !route.is_null() {
            ctx.actions.route = Some(Box::new(route.clone()));
        }
        Ok(serde_json::json!({ "route": route }))
    }
}
