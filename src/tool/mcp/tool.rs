//! One MCP tool as an agent sees it: a declaration from the server's listing, and a run
//! that is one `tools/call` bounded by the toolset's timeout.

use super::error::redact;
use super::{Session, result};
use crate::model::FunctionDeclaration;
use crate::tool::{Tool, ToolContext, ToolError};
use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Map, Value};
use std::sync::Arc;

/// One tool of an MCP server.
pub(super) struct McpTool {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) parameters: Value,
    pub(super) session: Arc<Session>,
}

impl McpTool {
    fn failure(&self, what: &str) -> ToolError {
        let what = redact(what.to_owned(), self.session.url.as_deref());
        ToolError::new(format!(
            "MCP tool `{}` (server {}): {what}",
            self.name, self.session.server
        ))
    }
}

#[async_trait]
impl Tool for McpTool {
    fn trace_type(&self) -> &'static str {
        "McpTool"
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: Some(self.parameters.clone()),
        }
    }

    async fn run(&self, args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(self.failure(&format!(
                    "arguments must be an object, got {}",
                    json_kind(&other)
                )));
            }
        };
        let mut params = CallToolRequestParams::new(self.name.clone());
        params.arguments = Some(arguments);
        let call = self.session.peer.call_tool_once(params);
        match tokio::time::timeout(self.session.timeout, call).await {
            Err(_) => Err(self.failure(&format!(
                "no answer within {} s",
                self.session.timeout.as_secs_f64()
            ))),
            Ok(Err(e)) => {
                let mut what = result::describe_service(&e);
                if result::server_gone(&e)
                    && let Some(stderr) = &self.session.stderr
                {
                    what.push_str(&stderr.suffix());
                }
                Err(self.failure(&what))
            }
            Ok(Ok(CallToolResponse::Complete(r))) => result::to_json(r),
            Ok(Ok(CallToolResponse::InputRequired(_))) => Err(self.failure(
                "the server asked for interactive input, which adk-flow does not provide",
            )),
            Ok(Ok(_)) => Err(self.failure(
                "the server answered with a task to poll, which adk-flow does not support",
            )),
        }
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
