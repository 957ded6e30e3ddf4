//! ADK's memory tools. `load_memory` is a function the model calls with a query; its
//! result is `{"memories": [MemoryEntry, ...]}`. `preload_memory` is never called: before
//! every model call it searches memory with the user's message and puts what it finds in
//! the system instruction. Both only read the current user's memories of this app.

use super::{Tool, ToolContext, ToolError};
use crate::model::{FunctionDeclaration, LlmRequest};
use async_trait::async_trait;
use serde_json::{Value, json};

use crate::names::{LOAD_MEMORY, PRELOAD_MEMORY};

/// The sentence ADK adds to the system instruction of an agent that has `load_memory`.
const LOAD_MEMORY_INSTRUCTION: &str = "\nYou have memory. You can use it to answer questions. If any questions need\nyou to look up the memory, you should call load_memory function with a query.\n";

/// `load_memory(query)`: the current user's memories that match the query.
pub struct LoadMemory;

#[async_trait]
impl Tool for LoadMemory {
    fn trace_type(&self) -> &'static str {
        "LoadMemoryTool"
    }

    fn name(&self) -> &str {
        LOAD_MEMORY
    }

    fn declaration(&self) -> FunctionDeclaration {
        // ADK sends the function's docstring, cleaned of its indentation.
        FunctionDeclaration {
            name: LOAD_MEMORY.into(),
            description: "Loads the memory for the current user.\n\nArgs:\n  query: The query to load the memory for.\n\nReturns:\n  A list of memory results.".into(),
            parameters: Some(json!({
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"]
            })),
        }
    }

    fn processes_requests(&self) -> bool {
        true
    }

    async fn process_request(
        &self,
        _ctx: &ToolContext,
        request: &mut LlmRequest,
    ) -> Result<(), ToolError> {
        request.append_instruction(LOAD_MEMORY_INSTRUCTION);
        Ok(())
    }

    async fn run(&self, args: Value, ctx: &mut ToolContext) -> Result<Value, ToolError> {
        let query = match args.get("query") {
            Some(Value::String(q)) => q.clone(),
            _ => {
                return Err(ToolError::new(
                    "`load_memory` needs a string argument `query`",
                ));
            }
        };
        let memories = ctx.search_memory(&query).await?;
        // ADK returns a model object, which its flow wraps as {"result": ...}.
        Ok(json!({"result": {"memories": memories}}))
    }
}

/// `preload_memory`: memories matching the user's message, in the system instruction.
pub struct PreloadMemory;

#[async_trait]
impl Tool for PreloadMemory {
    fn trace_type(&self) -> &'static str {
        "PreloadMemoryTool"
    }

    fn name(&self) -> &str {
        PRELOAD_MEMORY
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: PRELOAD_MEMORY.into(),
            description: PRELOAD_MEMORY.into(),
            parameters: None,
        }
    }

    fn offered_to_model(&self) -> bool {
        false
    }

    fn processes_requests(&self) -> bool {
        true
    }

    async fn process_request(
        &self,
        ctx: &ToolContext,
        request: &mut LlmRequest,
    ) -> Result<(), ToolError> {
        // ADK searches with the first part of the message, when it is text.
        let Some(query) = ctx
            .user_content()
            .and_then(|c| c.parts.first())
            .and_then(|p| p.text.clone())
            .filter(|t| !t.is_empty())
        else {
            return Ok(());
        };
        let memories = match ctx.search_memory(&query).await {
            Ok(m) => m,
            Err(e) => {
                // As ADK: a failed preload is logged and the call goes on without it.
                tracing::warn!(error = %e, "preload_memory: cannot search memory");
                return Ok(());
            }
        };
        let mut lines = Vec::new();
        for memory in &memories {
            if let Some(time) = &memory.timestamp {
                lines.push(format!("Time: {time}"));
            }
            let text = memory.text();
            if !text.is_empty() {
                lines.push(match &memory.author {
                    Some(author) => format!("{author}: {text}"),
                    None => text,
                });
            }
        }
        if lines.is_empty() {
            return Ok(());
        }
        request.append_instruction(&format!(
            "The following content is from your previous conversations with the user.\nThey may be useful for answering the user's current query.\n<PAST_CONVERSATIONS>\n{}\n</PAST_CONVERSATIONS>\n",
            lines.join("\n")
        ));
        Ok(())
    }

    async fn run(&self, _args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        Err(ToolError::new(
            "`preload_memory` is not a function; it adds memories to the request by itself",
        ))
    }
}
