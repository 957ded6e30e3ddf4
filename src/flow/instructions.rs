//! The system instruction: the agent's templated instruction, its identity, and the
//! transfer rules, joined as ADK's `append_instructions` does (blank line between).
//!
//! With a `static_instruction` (ADK 1.18+), the system instruction starts with it, sent
//! as written, and the templated instruction becomes a user message of the contents,
//! placed before the conversation's closing run of user messages (ADK's instructions
//! processor, then `_add_instructions_to_user_content`). The request carries that message
//! apart (`LlmRequest::instruction_message`, sent in its place by every provider), so the
//! contents it shares with the session's view are not copied per call. The system
//! instruction then stays the same from call to call, which is what a provider's prompt
//! cache needs.

use crate::invocation::RunError;
use crate::template;
use crate::tool::builtin::TASK_COMPLETED_INSTRUCTION;
use crate::tree::{AgentId, AgentKind, AgentTree};

/// Whether the agent's parent is a SequentialAgent that offers `task_completed`.
pub(crate) fn offers_task_completed(tree: &AgentTree, id: AgentId) -> bool {
    tree.get(id).parent.is_some_and(|p| {
        matches!(
            tree.get(p).kind,
            AgentKind::Sequential {
                task_completed: true
            }
        )
    })
}

/// Whether the agent's parent is a SequentialAgent: in live mode every such step is
/// offered `task_completed`, since a live step has no final reply that ends it.
pub(crate) fn in_sequence(tree: &AgentTree, id: AgentId) -> bool {
    tree.get(id)
        .parent
        .is_some_and(|p| matches!(tree.get(p).kind, AgentKind::Sequential { .. }))
}

/// An agent's instructions for one request.
pub(crate) struct Instructions {
    /// The system instruction.
    pub(crate) system: std::sync::Arc<String>,
    /// The templated instruction, when a `static_instruction` sends it as a user message.
    pub(crate) in_contents: Option<String>,
}

/// Builds the instructions of an LLM agent against the session's state (`state` reads a
/// key, the live session's or one taken earlier): its own instruction, templated (with
/// the `task_completed` sentence when `task_completed`), then `fixed` (see
/// [`fixed_part`]), a blank line between; with a `static_instruction`, that text first
/// and the templated instruction apart (see the module docs).
pub(crate) fn system_instruction(
    tree: &AgentTree,
    id: AgentId,
    state: &dyn Fn(&str) -> Option<serde_json::Value>,
    fixed: &str,
    artifacts: &std::collections::HashMap<String, Option<String>>,
    task_completed: bool,
    adk2: bool,
) -> Result<Instructions, RunError> {
    let node = tree.get(id);
    let raw = node.as_llm().map_or("", |l| l.instruction.as_str());
    // `adk2`: the run is ADK 2.13's (`InvocationContext::runs_adk2`: a workflow node's
    // agent, or an AgentTool's agent called from one): its templates skip `\\{...}` and
    // `${...}`, and it labels an instruction sent as a user message.
    let dialect = if adk2 {
        template::Dialect::Adk2
    } else {
        template::Dialect::Adk1
    };
    let rendered = if raw.is_empty() {
        String::new()
    } else {
        template::render_in(dialect, raw, state, |name| {
            artifacts.get(name).cloned().flatten()
        })
        .map_err(|source| RunError::Template {
            agent: node.name.clone(),
            source,
        })?
    };
    let static_text = node
        .as_llm()
        .and_then(|l| l.static_instruction.as_deref())
        .filter(|s| !s.is_empty());
    let (instruction, in_contents) = match static_text {
        Some(text) if adk2 => (
            text.to_owned(),
            (!raw.is_empty()).then(|| label_dynamic_instruction(&rendered)),
        ),
        Some(text) => (text.to_owned(), (!rendered.is_empty()).then_some(rendered)),
        None => (rendered, None),
    };
    Ok(Instructions {
        system: std::sync::Arc::new(join(instruction, fixed, task_completed)),
        in_contents,
    })
}

const INSTRUCTION_BEGIN: &str = "<<<BEGIN_SYSTEM_INSTRUCTION>>>";
const INSTRUCTION_END: &str = "<<<END_SYSTEM_INSTRUCTION>>>";

/// ADK 2.13's `_label_dynamic_instruction`: an instruction sent as a user message (beside
/// a `static_instruction`) goes between markers after a preamble; markers inside it are
/// elided so state cannot forge the block's end.
fn label_dynamic_instruction(instruction: &str) -> String {
    let fenced = instruction
        .replace(INSTRUCTION_BEGIN, "<<<ELIDED_MARKER>>>")
        .replace(INSTRUCTION_END, "<<<ELIDED_MARKER>>>");
    format!(
        "The text between {INSTRUCTION_BEGIN} and {INSTRUCTION_END} below is your own system instruction for this turn and carries the current session state. It is addressed to you. Nothing between those two markers was said by the user, so do not answer it or continue it as though it were their turn. Anything the user actually said appears outside the markers, and a real user turn may follow immediately after the end marker.\n{INSTRUCTION_BEGIN}\n{fenced}\n{INSTRUCTION_END}"
    )
}

/// The system instruction of an agent whose instruction has no template (no `{`) and no
/// `static_instruction`: the same on every call, so computed once per agent.
pub(crate) fn constant_system(
    tree: &AgentTree,
    id: AgentId,
    fixed: &str,
    task_completed: bool,
) -> Option<String> {
    let llm = tree.get(id).as_llm()?;
    let has_static = llm
        .static_instruction
        .as_deref()
        .is_some_and(|s| !s.is_empty());
    if has_static || llm.instruction.contains('{') {
        return None;
    }
    Some(join(llm.instruction.clone(), fixed, task_completed))
}

/// The agent's own instruction (with the `task_completed` sentence when `task_completed`),
/// then `fixed`, a blank line between.
fn join(mut instruction: String, fixed: &str, task_completed: bool) -> String {
    if task_completed {
        instruction.push_str(TASK_COMPLETED_INSTRUCTION);
    }
    if instruction.is_empty() {
        return fixed.to_owned();
    }
    if fixed.is_empty() {
        return instruction;
    }
    instruction.reserve(fixed.len() + 2);
    instruction.push_str("\n\n");
    instruction.push_str(fixed);
    instruction
}

/// The part of the system instruction that only depends on the tree: the agent's
/// identity and, when it has targets, ADK's transfer rules (computed once per agent);
/// nothing for an LLM node of a workflow graph.
pub(crate) fn fixed_part(tree: &AgentTree, id: AgentId, targets: &[AgentId]) -> String {
    let node = tree.get(id);
    // A workflow graph's LLM node runs single-turn, and ADK gives single-turn agents no
    // identity.
    if node
        .parent
        .is_some_and(|p| matches!(tree.get(p).kind, crate::tree::AgentKind::Graph(_)))
    {
        return String::new();
    }
    let mut parts: Vec<String> = Vec::with_capacity(2);
    let mut identity = format!("You are an agent. Your internal name is \"{}\".", node.name);
    if !node.description.is_empty() {
        identity.push_str(&format!(
            " The description about you is \"{}\".",
            node.description
        ));
    }
    parts.push(identity);
    if node.as_llm().is_some_and(super::output::uses_tool) {
        // ADK's output-schema processor runs after identity, before the transfer rules.
        parts.push(super::output::SET_MODEL_RESPONSE_INSTRUCTION.to_owned());
    }
    if !targets.is_empty() {
        parts.push(transfer_instruction(tree, id, targets));
    }
    parts.join("\n\n")
}

/// ADK's transfer instruction text, byte for byte.
fn transfer_instruction(tree: &AgentTree, id: AgentId, targets: &[AgentId]) -> String {
    let blocks: Vec<String> = targets
        .iter()
        .map(|&t| {
            let n = tree.get(t);
            format!(
                "\nAgent name: {}\nAgent description: {}\n",
                n.name, n.description
            )
        })
        .collect();
    let mut names: Vec<&str> = targets.iter().map(|&t| tree.get(t).name.as_str()).collect();
    names.sort_unstable();
    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    let mut out = format!(
        "\nYou have a list of other agents to transfer to:\n\n{}\n\n\
If you are the best to answer the question according to your description,\n\
you can answer it.\n\n\
If another agent is better for answering the question according to its\n\
description, call `transfer_to_agent` function to transfer the question to that\n\
agent. When transferring, do not generate any text other than the function\n\
call.\n\n\
**NOTE**: the only available agents for `transfer_to_agent` function are\n\
{}.\n",
        blocks.join("\n"),
        names.join(", ")
    );
    let node = tree.get(id);
    let disallow_parent = node.as_llm().is_some_and(|l| l.disallow_transfer_to_parent);
    if let (Some(parent), false) = (node.parent, disallow_parent) {
        out.push_str(&format!(
            "\nIf neither you nor the other agents are best for the question, transfer to your parent agent {}.\n",
            tree.get(parent).name
        ));
    }
    out
}
