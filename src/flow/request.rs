//! The request of one model call, as ADK's request processors build it: the tools an
//! agent offers, what its requests share (computed once per agent), the system
//! instruction and contents, and the tools' own changes to the request.

use super::{contents, instructions, output};
use crate::event::{Content, Role};
use crate::invocation::{InvocationContext, RunError};
use crate::model::{FunctionDeclaration, InstructionMessage, LlmRequest};
use crate::tool::Tool;
use crate::tool::builtin::TaskCompleted;
use crate::tool::transfer::TransferToAgent;
use crate::tree::{AgentId, AgentTree, IncludeContents};
use std::collections::HashMap;
use std::sync::Arc;

/// The tools an agent offers: `set_model_response` when its structured reply needs it
/// (added by a request processor in ADK, so before the agent's own tools), its own, then
/// `transfer_to_agent` when it has targets, then `task_completed` when its
/// SequentialAgent parent offers it.
pub(super) fn effective_tools(
    tree: &AgentTree,
    id: AgentId,
    targets: &[AgentId],
) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    if let Some(llm) = tree.get(id).as_llm() {
        if let Some(schema) = llm
            .output_schema
            .as_ref()
            .filter(|_| output::uses_tool(llm))
        {
            tools.push(Arc::new(output::SetModelResponse::new(Arc::clone(schema))));
        }
        tools.extend(llm.tools.iter().cloned());
    }
    if !targets.is_empty() {
        tools.push(Arc::new(TransferToAgent {
            targets: targets.iter().map(|&t| tree.get(t).name.clone()).collect(),
        }));
    }
    if instructions::offers_task_completed(tree, id) {
        tools.push(Arc::new(TaskCompleted));
    }
    tools
}

/// What an LLM agent's requests share, computed once per agent (the tree never changes).
pub(super) struct Prepared {
    /// The tools the agent offers (see [`effective_tools`]).
    pub(super) tools: Vec<Arc<dyn Tool>>,
    /// The declarations of the tools the model is offered.
    pub(super) declarations: Arc<Vec<FunctionDeclaration>>,
    /// The tools the provider runs itself.
    pub(super) provider_tools: Vec<String>,
    /// Whether any tool changes the request that offers it.
    pub(super) processes_requests: bool,
    /// Whether the instruction names artifacts (`{artifact.NAME}`).
    pub(super) reads_artifacts: bool,
    /// Whether the instruction ends with the `task_completed` sentence.
    pub(super) task_completed: bool,
    /// The system instruction after the agent's own: identity and transfer rules.
    pub(super) fixed_instruction: String,
    /// The whole system instruction, when it is the same on every call (see
    /// [`instructions::constant_system`]).
    pub(super) constant_system: Option<Arc<String>>,
    /// The agent's name, shared by its events as their author.
    pub(super) author: Arc<str>,
    /// The model name its requests carry.
    pub(super) model_name: Arc<str>,
    /// The key of the agent's view of the conversation (see [`contents::view_key`]).
    pub(super) view_key: Arc<str>,
}

impl Prepared {
    /// The constants of an agent run by `Runner::run`.
    pub(super) fn of(tree: &AgentTree, id: AgentId) -> Prepared {
        let targets = tree.transfer_targets(id);
        let tools = effective_tools(tree, id, &targets);
        let task_completed = instructions::offers_task_completed(tree, id);
        Prepared::with_tools(tree, id, &targets, tools, task_completed)
    }

    /// The constants of an agent offering `tools` (live mode adds `task_completed`).
    pub(super) fn with_tools(
        tree: &AgentTree,
        id: AgentId,
        targets: &[AgentId],
        tools: Vec<Arc<dyn Tool>>,
        task_completed: bool,
    ) -> Prepared {
        let declarations = tools
            .iter()
            .filter(|t| t.provider_tool().is_none() && t.offered_to_model())
            .map(|t| t.declaration())
            .collect();
        let provider_tools = tools
            .iter()
            .filter_map(|t| t.provider_tool().map(str::to_owned))
            .collect();
        let fixed_instruction = instructions::fixed_part(tree, id, targets);
        Prepared {
            constant_system: instructions::constant_system(
                tree,
                id,
                &fixed_instruction,
                task_completed,
            )
            .map(Arc::new),
            author: Arc::from(tree.get(id).name.as_str()),
            model_name: Arc::from(tree.get(id).as_llm().map_or("", |l| l.model_name.as_str())),
            view_key: contents::view_key(&tree.get(id).name),
            fixed_instruction,
            processes_requests: tools.iter().any(|t| t.processes_requests()),
            reads_artifacts: tree
                .get(id)
                .as_llm()
                .is_some_and(|l| l.instruction.contains("artifact.")),
            declarations: Arc::new(declarations),
            provider_tools,
            task_completed,
            tools,
        }
    }
}

/// The artifacts an instruction names (`{artifact.NAME}`), loaded before the request is
/// built so that building stays synchronous under the session lock.
pub(super) async fn instruction_artifacts(
    ctx: &InvocationContext,
    instruction: &str,
) -> HashMap<String, Option<String>> {
    let mut out = HashMap::new();
    let names: Vec<String> = crate::template::keys_in(ctx.template_dialect(), instruction)
        .into_iter()
        .filter(|k| k.artifact)
        .map(|k| k.name)
        .collect();
    let Some(store) = ctx.artifacts() else {
        return out;
    };
    for name in names {
        let key = {
            let s = ctx.session().lock();
            crate::artifact::ArtifactKey {
                app: s.app_name.clone(),
                user: s.user_id.clone(),
                session: s.id.clone(),
                name: name.clone(),
            }
        };
        let text = match store.load(&key, None).await {
            Ok(Some(a)) => Some(a.as_text().map_or_else(
                || format!("[{} bytes of {}]", a.data.len(), a.mime_type),
                str::to_owned,
            )),
            _ => None,
        };
        out.insert(name, text);
    }
    out
}

pub(super) fn build_request(
    ctx: &InvocationContext,
    id: AgentId,
    prepared: &Prepared,
    artifacts: &HashMap<String, Option<String>>,
) -> Result<LlmRequest, RunError> {
    let tree = ctx.tree();
    let node = tree.get(id);
    let Some(llm) = node.as_llm() else {
        return Ok(LlmRequest::default());
    };
    // A workflow node's state taken before its model call, when it was (see
    // `StateAtStart`); else the live session's.
    let taken = ctx.take_instruction_state();
    let mut session = ctx.session().lock();
    let instructions = match &prepared.constant_system {
        Some(system) => instructions::Instructions {
            system: Arc::clone(system),
            in_contents: None,
        },
        None => instructions::system_instruction(
            tree,
            id,
            &|k: &str| match &taken {
                Some(state) => state.get(k).cloned(),
                None => session.get(k).cloned(),
            },
            &prepared.fixed_instruction,
            artifacts,
            prepared.task_completed,
            ctx.runs_adk2(),
        )?,
    };
    let contents = match (ctx.node_path(), ctx.node_input(), llm.include_contents) {
        (Some(path), Some(input), include) => Arc::new(contents::with_node_input(
            &session.events,
            &node.name,
            ctx.branch(),
            include == IncludeContents::None,
            input,
            path,
            ctx.runs_adk2(),
        )),
        (Some(path), None, IncludeContents::Default) => Arc::new(contents::node_history(
            &session.events,
            &node.name,
            ctx.branch(),
            path,
            ctx.runs_adk2(),
        )),
        (_, _, IncludeContents::Default) => contents::build_shared(
            &mut session,
            &node.name,
            ctx.branch(),
            &prepared.view_key,
            ctx.runs_adk2(),
        ),
        (_, _, IncludeContents::None) => Arc::new(contents::build(
            &session.events,
            &node.name,
            ctx.branch(),
            true,
            ctx.runs_adk2(),
        )),
    };
    drop(session);
    let instruction_message = instructions.in_contents.map(|text| InstructionMessage {
        at: contents::instruction_position(&contents),
        content: Content::text(Role::User, text),
    });
    Ok(LlmRequest {
        model: Arc::clone(&prepared.model_name),
        system_instruction: Some(instructions.system),
        contents,
        tools: Arc::clone(&prepared.declarations),
        provider_tools: prepared.provider_tools.clone(),
        generation_config: llm.generate_content_config.clone(),
        output_schema: output::request_schema(llm),
        instruction_message,
    })
}

/// Lets each tool change the request that offers it (ADK runs these after the
/// instruction and contents processors, in tool order).
pub(super) async fn process_request(
    ctx: &InvocationContext,
    agent: &str,
    tools: &[Arc<dyn Tool>],
    request: &mut LlmRequest,
) -> Result<(), RunError> {
    let mut tool_ctx = None;
    for tool in tools.iter().filter(|t| t.processes_requests()) {
        let tc = tool_ctx.get_or_insert_with(|| ctx.tool_context(agent, ""));
        tool.process_request(tc, request)
            .await
            .map_err(|source| RunError::ToolRequest {
                agent: agent.to_owned(),
                tool: tool.name().to_owned(),
                source,
            })?;
    }
    Ok(())
}
