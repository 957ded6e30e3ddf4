//! LLM-as-a-judge metrics on adk-flow's providers: `final_response_match_v2`, the two
//! rubric metrics and `hallucinations_v1`.
//!
//! The prompts are adk-flow's own; they ask for the answer formats ADK parses, so ADK's
//! parsing and aggregation apply unchanged: each invocation's prompt is sent
//! `num_samples` times in order; v2 labels are read with ADK's regular expression and
//! voted by majority (ties → invalid); rubric verdicts containing "yes" are 1, else
//! containing "no" are 0, voted per rubric (ties → no) and averaged; hallucination labels
//! supported/not_applicable are 1, unsupported/contradictory/disputed 0.

mod hallucinations;
mod rubrics;
mod v2;

pub use hallucinations::{hallucinations, parse_labels};
pub use rubrics::{RubricMetric, effective_rubrics, parse_rubric_answer, rubric_based};
pub use v2::{final_response_match_v2, parse_v2};

use super::config::JudgeOptions;
use super::types::GenaiContent;
use crate::event::{Content, Role};
use crate::model::{CallContext, LlmRequest, Model};
use futures::StreamExt;
use std::sync::Arc;

/// A judge call that failed (unreachable provider, exhausted script).
#[derive(Debug, thiserror::Error)]
#[error("judge `{model}`: {message}")]
pub struct JudgeError {
    /// The judge model.
    pub model: String,
    /// What happened.
    pub message: String,
}

/// Sends one prompt to the judge and returns the text of its answer (`None` when the
/// answer has no parts).
///
/// # Errors
/// The model call failed.
pub async fn ask(
    model: &Arc<dyn Model>,
    options: &JudgeOptions,
    prompt: String,
) -> Result<Option<String>, JudgeError> {
    ask_as(model, "judge", options, prompt).await
}

/// [`ask`] under another caller name (`user` for the simulator; scripted models serve
/// replies by it).
///
/// # Errors
/// The model call failed.
pub async fn ask_as(
    model: &Arc<dyn Model>,
    who: &str,
    options: &JudgeOptions,
    prompt: String,
) -> Result<Option<String>, JudgeError> {
    let request = LlmRequest {
        model: options.model.as_str().into(),
        contents: crate::model::contents_of(vec![Content::text(Role::User, prompt)]),
        generation_config: options.config.clone(),
        ..LlmRequest::default()
    };
    let fail = |message: String| JudgeError {
        model: options.model.clone(),
        message,
    };
    let mut stream = model
        .generate(
            &request,
            CallContext {
                agent_name: who,
                stream: false,
                conversation: "",
                graph_node: false,
            },
        )
        .await
        .map_err(|e| fail(e.to_string()))?;
    let mut text: Option<String> = None;
    while let Some(item) = stream.next().await {
        let response = item.map_err(|e| fail(e.to_string()))?;
        if let Some(code) = &response.error_code {
            return Err(fail(format!(
                "{code}: {}",
                response.error_message.as_deref().unwrap_or("")
            )));
        }
        if response.partial == Some(true) {
            continue;
        }
        if let Some(c) = &response.content {
            text = GenaiContent::joined_text(Some(&GenaiContent::from_runtime(c)));
        }
    }
    Ok(text)
}

/// Mean as Python's `statistics.mean` (compensated sum, then one division).
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let (mut sum, mut carry) = (0.0f64, 0.0f64);
    for &v in values {
        let t = sum + v;
        carry += if sum.abs() >= v.abs() {
            (sum - t) + v
        } else {
            (v - t) + sum
        };
        sum = t;
    }
    Some((sum + carry) / values.len() as f64)
}

pub(super) fn text_of(content: Option<&GenaiContent>) -> String {
    GenaiContent::joined_text(content).unwrap_or_default()
}
