//! The `transfer_to_agent` tool, offered with the targets ADK allows.

use super::{Tool, ToolContext, ToolError};
use crate::model::FunctionDeclaration;
use crate::names::TRANSFER_TO_AGENT;
use async_trait::async_trait;
use serde_json::{Value, json};

/// `transfer_to_agent(agent_name)`: records the target; the flow runs it after the
/// function response is committed.
pub struct TransferToAgent {
    /// The agents it may name (empty in a Workflow node, which lists the plain function).
    pub targets: Vec<String>,
}

#[async_trait]
impl Tool for TransferToAgent {
    fn trace_type(&self) -> &'static str {
        "TransferToAgentTool"
    }

    fn name(&self) -> &str {
        TRANSFER_TO_AGENT
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: TRANSFER_TO_AGENT.into(),
            description: "Transfer the question to another agent.\n\n  This tool hands off control to another agent when it's more suitable to\n  answer the user's question according to the agent's description.\n\n  Note:\n    For most use cases, you should use TransferToAgentTool instead of this\n    function directly. TransferToAgentTool provides additional enum constraints\n    that prevent LLMs from hallucinating invalid agent names.\n\n  Args:\n    agent_name: the agent name to transfer to.\n  ".into(),
            // No targets (a Workflow node lists the plain function): no enum.
            parameters: Some(if self.targets.is_empty() {
                json!({
                    "type": "object",
                    "properties": {"agent_name": {"type": "string"}},
                    "required": ["agent_name"],
                })
            } else {
                json!({
                    "type": "object",
                    "properties": {"agent_name": {"type": "string", "enum": self.targets}},
                    "required": ["agent_name"],
                })
            }),
        }
    }

    async fn run(&self, args: Value, ctx: &mut ToolContext) -> Result<Value, ToolError> {
        let Some(target) = args.get("agent_name").and_then(Value::as_str) else {
            return Err(ToolError::new(
                "transfer_to_agent needs a string argument `agent_name`",
            ));
        };
        ctx.actions.transfer_to_agent = Some(target.into());
        Ok(Value::Null)
    }
}
