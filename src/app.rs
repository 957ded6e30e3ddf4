//! Lowers a checked configuration into a runnable agent tree.

use crate::agent::{AgentId, AgentKind, AgentTree, IncludeContents, LlmAgent};
use crate::config::{AgentSpec, AgentSpecKind};
use crate::model::Model;
use crate::tool::Tool;
use crate::tool::builtin::{EXIT_LOOP, ExitLoop, TASK_COMPLETED, TaskCompleted};
use std::sync::Arc;

/// The model ADK 1.x uses when no agent up the tree names one.
pub const DEFAULT_MODEL: &str = "gemini-2.5-flash";

/// A model name that no provider can serve.
#[derive(Debug, thiserror::Error)]
#[error("agent `{agent}`: {message}")]
pub struct BuildError {
    /// The agent whose model could not be made.
    pub agent: String,
    /// Why.
    pub message: String,
}

/// Makes the model object for a model name.
pub type ModelFactory<'a> = dyn Fn(&str) -> Result<Arc<dyn Model>, String> + 'a;

fn builtin_tool(name: &str) -> Option<Arc<dyn Tool>> {
    match name {
        EXIT_LOOP => Some(Arc::new(ExitLoop)),
        TASK_COMPLETED => Some(Arc::new(TaskCompleted)),
        _ => None,
    }
}

/// Builds the agent tree of a workflow, resolving each LLM agent's model (its own, else
/// the nearest LLM ancestor's, else [`DEFAULT_MODEL`]) through `models`.
///
/// # Errors
/// A model name the factory refuses.
pub fn build_tree(spec: &AgentSpec, models: &ModelFactory<'_>) -> Result<AgentTree, BuildError> {
    let mut tree = AgentTree::new();
    add(&mut tree, None, spec, None, models)?;
    Ok(tree)
}

fn add(
    tree: &mut AgentTree,
    parent: Option<AgentId>,
    spec: &AgentSpec,
    inherited_model: Option<&str>,
    models: &ModelFactory<'_>,
) -> Result<(), BuildError> {
    let mut model_for_children = inherited_model.map(str::to_owned);
    let kind = match &spec.kind {
        AgentSpecKind::Llm(llm) => {
            let model_name = llm
                .model
                .as_deref()
                .or(inherited_model)
                .unwrap_or(DEFAULT_MODEL)
                .to_owned();
            let model = models(&model_name).map_err(|message| BuildError {
                agent: spec.name.clone(),
                message,
            })?;
            model_for_children = Some(model_name.clone());
            AgentKind::Llm(Box::new(LlmAgent {
                model,
                model_name,
                instruction: llm.instruction.clone(),
                tools: llm.tools.iter().filter_map(|t| builtin_tool(t)).collect(),
                output_key: llm.output_key.clone(),
                include_contents: if llm.current_turn_only {
                    IncludeContents::None
                } else {
                    IncludeContents::Default
                },
                disallow_transfer_to_parent: llm.disallow_transfer_to_parent,
                disallow_transfer_to_peers: llm.disallow_transfer_to_peers,
                generate_content_config: llm.generate_content_config.clone(),
            }))
        }
        AgentSpecKind::Sequential { task_completed } => AgentKind::Sequential {
            task_completed: *task_completed,
        },
        AgentSpecKind::Parallel => AgentKind::Parallel,
        AgentSpecKind::Loop { max_iterations } => AgentKind::Loop {
            max_iterations: *max_iterations,
        },
    };
    let id = tree.add(parent, &spec.name, &spec.description, kind);
    for sub in &spec.sub_agents {
        add(tree, Some(id), sub, model_for_children.as_deref(), models)?;
    }
    Ok(())
}
