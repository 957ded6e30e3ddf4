//! Conversation scenarios: an LLM plays the user (ADK's `LlmBackedUserSimulator`), and
//! `per_turn_user_simulator_quality_v1` judges how well it did.
//!
//! The first message is the scenario's `starting_prompt`, sent as is; each later one is
//! asked of the simulator model with the plan and the conversation so far. The
//! conversation ends when the reply contains the stop signal `</finished>` or after
//! `max_allowed_invocations` user messages (20 by default, the first included; -1 = no
//! limit). Prompts are adk-flow's own.

use super::config::JudgeOptions;
use super::judge::ask_as;
use super::metrics::{Evaluation, InvocationScore};
use super::results::EvalStatus;
use super::types::{ConversationScenario, EvalCase, GenaiContent, Invocation};
use crate::event::Event;
use crate::model::Model;
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::{Arc, LazyLock};

/// The simulator's stop signal.
pub const STOP_SIGNAL: &str = "</finished>";

/// A running user simulator.
pub struct Simulator<'a> {
    scenario: &'a ConversationScenario,
    model: Option<Arc<dyn Model>>,
    options: JudgeOptions,
    limit: i64,
    include_calls: bool,
    sent: i64,
}

fn persona_text(p: Option<&Value>) -> String {
    match p {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v
            .get("description")
            .and_then(Value::as_str)
            .map_or_else(|| v.to_string(), str::to_owned),
    }
}

impl<'a> Simulator<'a> {
    /// A simulator for `scenario` with the config's `user_simulator_config`.
    ///
    /// # Errors
    /// The config names a model that cannot be made.
    pub fn new(
        scenario: &'a ConversationScenario,
        config: Option<&Map<String, Value>>,
        models: &super::engine::ModelFn<'_>,
    ) -> Result<Self, String> {
        let get =
            |snake: &str, camel: &str| config.and_then(|c| c.get(snake).or_else(|| c.get(camel)));
        let model_name = get("model", "model")
            .and_then(Value::as_str)
            .unwrap_or(super::config::DEFAULT_JUDGE)
            .to_owned();
        Ok(Simulator {
            scenario,
            model: None,
            options: JudgeOptions {
                model: model_name.clone(),
                config: get("model_configuration", "modelConfiguration").cloned(),
                num_samples: 1,
            },
            limit: get("max_allowed_invocations", "maxAllowedInvocations")
                .and_then(Value::as_i64)
                .unwrap_or(20),
            include_calls: get("include_function_calls", "includeFunctionCalls")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            sent: 0,
        }
        .with_model(models(&model_name)?))
    }

    fn with_model(mut self, model: Arc<dyn Model>) -> Self {
        self.model = Some(model);
        self
    }

    fn transcript(&self, events: &[Event]) -> String {
        let mut lines = Vec::new();
        for e in events {
            let Some(c) = &e.content else { continue };
            for p in &c.parts {
                if let Some(t) = p
                    .text
                    .as_deref()
                    .filter(|t| !t.is_empty() && p.thought != Some(true))
                {
                    lines.push(format!("{}: {t}", e.author));
                } else if let (true, Some(f)) = (self.include_calls, &p.function_call) {
                    lines.push(format!(
                        "{} called tool '{}' with args: {}",
                        e.author, f.name, f.args
                    ));
                } else if let (true, Some(r)) = (self.include_calls, &p.function_response) {
                    lines.push(format!("Tool '{}' returned: {}", r.name, r.response));
                }
            }
        }
        lines.join("\n\n")
    }

    /// The next user message, or `None` when the conversation is over.
    ///
    /// # Errors
    /// The simulator model failed or answered nothing.
    pub async fn next_message(&mut self, events: &[Event]) -> Result<Option<String>, String> {
        if self.limit >= 0 && self.sent >= self.limit {
            return Ok(None);
        }
        let reply = if self.sent == 0 {
            self.scenario.starting_prompt.clone()
        } else {
            let persona = persona_text(self.scenario.user_persona.as_ref());
            let persona = if persona.is_empty() {
                String::new()
            } else {
                format!("Your persona: {persona}\n\n")
            };
            let prompt = format!(
                "You play the user of an AI agent, to test it. Write the user's next message only, \
as the user would type it.\n\n{persona}Your plan for this conversation:\n{}\n\n\
The conversation so far:\n{}\n\nWhen every goal of the plan is done, or the agent cannot \
help any further, reply with {STOP_SIGNAL} and nothing else.",
                self.scenario.conversation_plan,
                self.transcript(events)
            );
            let model = self.model.as_ref().ok_or("no user simulator model")?;
            ask_as(model, "user", &self.options, prompt)
                .await
                .map_err(|e| format!("user simulator: {e}"))?
                .filter(|t| !t.is_empty())
                .ok_or("user simulator: the model answered nothing")?
        };
        self.sent += 1;
        if reply.to_lowercase().contains(STOP_SIGNAL) {
            return Ok(None);
        }
        Ok(Some(reply))
    }
}

static IS_VALID_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""is_valid":\s*\[*[\n\s]*"*([^"\]]*)"*[\n\s]*\]*\s*[,\n\}]"#).expect("regex")
});

/// ADK's reading of a simulator-quality answer: 1.0 valid, 0.0 invalid, `None` otherwise.
pub fn parse_is_valid(answer: &str) -> Option<f64> {
    let c = IS_VALID_RE.captures(answer)?;
    let label = c[1]
        .trim_matches('}')
        .replace(',', "")
        .trim()
        .to_lowercase();
    match label.as_str() {
        "invalid" | "almost" | "false" | "partially_valid" | "partially valid" | "partially" => {
            Some(0.0)
        }
        "valid" | "true" => Some(1.0),
        _ => None,
    }
}

fn history(invocations: &[Invocation]) -> String {
    let mut lines = Vec::new();
    for inv in invocations {
        if !inv.user_content.parts().is_empty() {
            lines.push(format!(
                "user: {}",
                GenaiContent::joined_text(Some(&inv.user_content)).unwrap_or_default()
            ));
        }
        if let Some(f) = &inv.final_response {
            lines.push(format!(
                "{}: {}",
                f.role.as_deref().unwrap_or("None"),
                GenaiContent::joined_text(Some(f)).unwrap_or_default()
            ));
        }
    }
    lines.join("\n\n")
}

async fn judge_turn(
    judge: &Arc<dyn Model>,
    options: &JudgeOptions,
    threshold: f64,
    scenario: &ConversationScenario,
    stop_signal: &str,
    message: &str,
    before: &[Invocation],
) -> Result<InvocationScore, String> {
    let persona = persona_text(scenario.user_persona.as_ref());
    let prompt = format!(
        "You review a simulated user talking to an AI agent. The simulated user must follow its \
plan{}, sound like a real user, reveal only what the plan gives it, and end the conversation \
with {stop_signal} exactly when the plan is done.\n\nPlan:\n{}\n\nConversation so far:\n{}\n\n\
The simulated user's next message:\n{message}\n\nReply with one JSON object and nothing else:\n\
{{\"reasoning\": \"<one or two sentences>\", \"is_valid\": \"valid\" or \"invalid\"}}",
        if persona.is_empty() {
            String::new()
        } else {
            format!(" and persona ({persona})")
        },
        scenario.conversation_plan,
        history(before),
    );
    let mut samples = Vec::new();
    for _ in 0..options.num_samples {
        let answer = super::judge::ask(judge, options, prompt.clone())
            .await
            .map_err(|e| e.to_string())?;
        samples.push(
            answer
                .as_deref()
                .filter(|a| !a.is_empty())
                .and_then(parse_is_valid),
        );
    }
    let yes = samples.iter().filter(|s| **s == Some(1.0)).count();
    let no = samples.iter().filter(|s| **s == Some(0.0)).count();
    let score = match (yes, no) {
        (0, 0) => None,
        (y, n) if y > n => Some(1.0),
        _ => Some(0.0),
    };
    Ok(InvocationScore {
        score,
        status: EvalStatus::of(score, threshold),
        rubric_scores: None,
    })
}

/// `per_turn_user_simulator_quality_v1`: the first message must be the starting prompt;
/// every later one is judged against the plan; the missing stop signal is judged last
/// and replaces the last turn's result when it fails. Score = passing turns / turns.
///
/// # Errors
/// Not a conversation scenario, or a judge call failed.
pub async fn quality(
    judge: &Arc<dyn Model>,
    options: &JudgeOptions,
    threshold: f64,
    stop_signal: &str,
    case: &EvalCase,
    actual: &[Invocation],
) -> Result<Evaluation, String> {
    let scenario = case
        .conversation_scenario
        .as_ref()
        .ok_or("per_turn_user_simulator_quality_v1 needs a conversation_scenario")?;
    let Some(first) = actual.first() else {
        return Ok(Evaluation::not_evaluated());
    };
    let first_text = GenaiContent::joined_text(Some(&first.user_content)).unwrap_or_default();
    let score = if first_text.trim() == scenario.starting_prompt.trim() {
        1.0
    } else {
        0.0
    };
    let mut per = vec![InvocationScore {
        score: Some(score),
        status: EvalStatus::of(Some(score), threshold),
        rubric_scores: None,
    }];
    for i in 1..actual.len() {
        let message = GenaiContent::joined_text(Some(&actual[i].user_content)).unwrap_or_default();
        per.push(
            judge_turn(
                judge,
                options,
                threshold,
                scenario,
                stop_signal,
                &message,
                &actual[..i],
            )
            .await?,
        );
    }
    let stop = judge_turn(
        judge,
        options,
        threshold,
        scenario,
        stop_signal,
        stop_signal,
        actual,
    )
    .await?;
    if stop.status == EvalStatus::Failed
        && let Some(last) = per.last_mut()
    {
        *last = stop;
    }
    let passed: f64 = per
        .iter()
        .filter(|p| p.status == EvalStatus::Passed)
        .filter_map(|p| p.score)
        .sum();
    let overall = passed / per.len() as f64;
    Ok(Evaluation {
        score: Some(overall),
        status: EvalStatus::of(Some(overall), threshold),
        per_invocation: per,
        rubric_scores: None,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_is_valid;

    #[test]
    fn is_valid_labels() {
        assert_eq!(
            parse_is_valid(r#"{"reasoning": "x", "is_valid": "valid"}"#),
            Some(1.0)
        );
        assert_eq!(parse_is_valid(r#"{"is_valid": "Invalid"}"#), Some(0.0));
        assert_eq!(parse_is_valid(r#"{"is_valid": "perhaps"}"#), None);
    }
}
