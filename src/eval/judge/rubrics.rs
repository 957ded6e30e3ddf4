//! The rubric metrics (`rubric_based_final_response_quality_v1`,
//! `rubric_based_tool_use_quality_v1`): per rubric, `Property:`/`Rationale:`/`Verdict:`
//! answers voted by majority (ties → no), averaged per invocation and over the case.

use super::{ask, mean, text_of};
use crate::eval::config::JudgeOptions;
use crate::eval::metrics::{Evaluation, InvocationScore};
use crate::eval::results::EvalStatus;
use crate::eval::types::{IntermediateData, Invocation, Rubric, RubricScore};
use crate::model::Model;
use regex::Regex;
use serde_json::{Value, json};
use std::sync::{Arc, LazyLock};

/// Which rubric metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RubricMetric {
    /// `rubric_based_final_response_quality_v1`.
    FinalResponse,
    /// `rubric_based_tool_use_quality_v1`.
    ToolUse,
}

impl RubricMetric {
    /// The `type` a case or invocation rubric needs to apply to this metric.
    pub fn rubric_type(self) -> &'static str {
        match self {
            RubricMetric::FinalResponse => "FINAL_RESPONSE_QUALITY",
            RubricMetric::ToolUse => "TOOL_USE_QUALITY",
        }
    }
}

fn tool_steps(data: Option<&IntermediateData>) -> String {
    let calls = IntermediateData::tool_calls(data);
    if calls.is_empty() {
        return "No intermediate steps were taken.".into();
    }
    let responses = IntermediateData::tool_responses(data);
    let steps: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let response = responses
                .iter()
                .rev()
                .find(|r| r.id.is_some() && r.id == c.id)
                .map_or(json!("None"), |r| json!({"name": r.name, "response": r.response}));
            json!({"step": i, "tool_call": {"name": c.name, "args": c.args}, "tool_response": response})
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "tool_calls_and_response": steps })).unwrap_or_default()
}

pub(super) fn agent_details(inv: &Invocation) -> Vec<(String, String, Vec<Value>)> {
    let Some(details) = inv
        .app_details
        .as_ref()
        .and_then(|d| d.get("agent_details"))
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    details
        .iter()
        .map(|(name, d)| {
            (
                name.clone(),
                d.get("instructions")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                d.get("tool_declarations")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            )
        })
        .collect()
}

pub(super) fn tool_declarations(inv: &Invocation) -> String {
    let details = agent_details(inv);
    if inv.app_details.is_none() {
        return "Agent has no tools.".into();
    }
    let by_agent: serde_json::Map<String, Value> = details
        .into_iter()
        .map(|(n, _, t)| (n, Value::Array(t)))
        .collect();
    serde_json::to_string_pretty(&json!({ "tool_declarations": by_agent })).unwrap_or_default()
}

fn rubric_prompt(kind: RubricMetric, inv: &Invocation, rubrics: &[Rubric]) -> String {
    let properties: Vec<String> = rubrics
        .iter()
        .map(|r| {
            format!(
                "*  {}",
                r.rubric_content.text_property.as_deref().unwrap_or("")
            )
        })
        .collect();
    let answer_format = "For every property, in the order given, write exactly three lines:\n\
Property: <the property, copied word for word>\n\
Rationale: <why, in one or two sentences>\n\
Verdict: yes  (or: no)\n\
Answer \"yes\" only when the property clearly holds.";
    let user = text_of(Some(&inv.user_content));
    match kind {
        RubricMetric::FinalResponse => {
            let instructions = match &inv.intermediate_data {
                Some(IntermediateData::Events(e)) => e
                    .invocation_events
                    .first()
                    .and_then(|first| {
                        agent_details(inv)
                            .into_iter()
                            .find(|(n, _, _)| *n == first.author)
                            .map(|(_, i, _)| i)
                    })
                    .unwrap_or_default(),
                _ => String::new(),
            };
            format!(
                "You assess the final answer of an AI agent against a list of properties.\n\n\
The agent's instructions:\n{instructions}\n\nThe agent's tools:\n{}\n\n\
User request:\n{user}\n\nWhat the agent did (tool calls and results):\n{}\n\n\
The agent's final answer:\n{}\n\nProperties to check:\n{}\n\n{answer_format}",
                tool_declarations(inv),
                tool_steps(inv.intermediate_data.as_ref()),
                text_of(inv.final_response.as_ref()),
                properties.join("\n"),
            )
        }
        RubricMetric::ToolUse => format!(
            "You assess how an AI agent used its tools, against a list of properties.\n\n\
The agent's tools:\n{}\n\nUser request:\n{user}\n\n\
The tool calls the agent made, with their results:\n{}\n\nProperties to check:\n{}\n\n{answer_format}",
            tool_declarations(inv),
            tool_steps(inv.intermediate_data.as_ref()),
            properties.join("\n"),
        ),
    }
}

static PROPERTY_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Property: (.*)").expect("regex"));
static RATIONALE_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Rationale: (.*)").expect("regex"));
static VERDICT_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"Verdict: (.*)").expect("regex"));

/// ADK's reading of a rubric answer: (property, rationale, score) per block.
pub fn parse_rubric_answer(answer: &str) -> Vec<(String, String, Option<f64>)> {
    let all =
        |re: &Regex| -> Vec<String> { re.captures_iter(answer).map(|c| c[1].to_owned()).collect() };
    let (properties, rationales, verdicts) =
        (all(&PROPERTY_RE), all(&RATIONALE_RE), all(&VERDICT_RE));
    properties
        .into_iter()
        .zip(rationales)
        .zip(verdicts)
        .map(|((p, r), v)| {
            let v = v.to_lowercase();
            let score = if v.contains("yes") {
                Some(1.0)
            } else if v.contains("no") {
                Some(0.0)
            } else {
                None
            };
            (p.trim().to_owned(), r.trim().to_owned(), score)
        })
        .collect()
}

fn rubric_scores(answer: Option<&str>, rubrics: &[Rubric]) -> Vec<RubricScore> {
    let Some(answer) = answer else {
        return Vec::new();
    };
    let normalized = |s: &str| s.to_lowercase().trim().to_owned();
    parse_rubric_answer(answer)
        .into_iter()
        .filter_map(|(property, rationale, score)| {
            let rubric = rubrics.iter().rev().find(|r| {
                normalized(r.rubric_content.text_property.as_deref().unwrap_or(""))
                    == normalized(&property)
            })?;
            Some(RubricScore {
                rubric_id: rubric.rubric_id.clone(),
                rationale: Some(rationale),
                score,
            })
        })
        .collect()
}

/// The rubrics one invocation is judged on: the criterion's, then the invocation's of
/// this metric's type.
///
/// # Errors
/// Two rubrics with one id.
pub fn effective_rubrics(
    kind: RubricMetric,
    criterion: &[Rubric],
    invocation: &[Rubric],
) -> Result<Vec<Rubric>, String> {
    let mut out: Vec<Rubric> = Vec::new();
    let typed = invocation
        .iter()
        .filter(|r| r.kind.as_deref() == Some(kind.rubric_type()));
    for r in criterion.iter().chain(typed) {
        if out.iter().any(|o| o.rubric_id == r.rubric_id) {
            return Err(format!("two rubrics have the id `{}`", r.rubric_id));
        }
        out.push(r.clone());
    }
    Ok(out)
}

/// Majority vote per rubric over the samples (first-seen order; ties → the negative).
fn vote_rubrics(samples: &[Vec<RubricScore>]) -> Vec<RubricScore> {
    let mut ids: Vec<&str> = Vec::new();
    for s in samples.iter().flatten() {
        if !ids.contains(&s.rubric_id.as_str()) {
            ids.push(&s.rubric_id);
        }
    }
    ids.into_iter()
        .filter_map(|id| {
            let of_id: Vec<&RubricScore> = samples
                .iter()
                .flatten()
                .filter(|s| s.rubric_id == id)
                .collect();
            let pos: Vec<&&RubricScore> = of_id.iter().filter(|s| s.score == Some(1.0)).collect();
            let neg: Vec<&&RubricScore> = of_id
                .iter()
                .filter(|s| s.score.is_some() && s.score != Some(1.0))
                .collect();
            let chosen = if pos.is_empty() && neg.is_empty() {
                of_id.first().copied()
            } else if pos.len() > neg.len() {
                pos.first().map(|s| **s)
            } else {
                neg.first().map(|s| **s)
            };
            chosen.cloned()
        })
        .collect()
}

fn mean_scores(scores: &[RubricScore]) -> Option<f64> {
    mean(&scores.iter().filter_map(|s| s.score).collect::<Vec<_>>())
}

/// A rubric metric over a case's invocations; `invocation_rubrics[i]` are the case's and
/// the expected invocation's rubrics for invocation `i`.
///
/// # Errors
/// A judge call failed, or rubric ids collide.
pub async fn rubric_based(
    kind: RubricMetric,
    judge: &Arc<dyn Model>,
    options: &JudgeOptions,
    threshold: f64,
    criterion_rubrics: &[Rubric],
    actual: &[Invocation],
    invocation_rubrics: &[Vec<Rubric>],
) -> Result<Evaluation, String> {
    let mut per = Vec::new();
    for (i, inv) in actual.iter().enumerate() {
        let rubrics = effective_rubrics(
            kind,
            criterion_rubrics,
            invocation_rubrics.get(i).map_or(&[][..], Vec::as_slice),
        )?;
        let prompt = rubric_prompt(kind, inv, &rubrics);
        let mut samples = Vec::new();
        for _ in 0..options.num_samples {
            let answer = ask(judge, options, prompt.clone())
                .await
                .map_err(|e| e.to_string())?;
            samples.push(rubric_scores(answer.as_deref(), &rubrics));
        }
        let voted = vote_rubrics(&samples);
        let score = mean_scores(&voted);
        per.push(InvocationScore {
            score,
            status: EvalStatus::of(score, threshold),
            rubric_scores: Some(voted),
        });
    }
    if per.is_empty() {
        return Ok(Evaluation::not_evaluated());
    }
    let all: Vec<RubricScore> = per
        .iter()
        .flat_map(|p| p.rubric_scores.clone().unwrap_or_default())
        .collect();
    let mut ids: Vec<String> = Vec::new();
    for s in &all {
        if !ids.contains(&s.rubric_id) {
            ids.push(s.rubric_id.clone());
        }
    }
    let overall_rubrics = ids
        .into_iter()
        .map(|id| {
            let of_id: Vec<RubricScore> = all.iter().filter(|s| s.rubric_id == id).cloned().collect();
            RubricScore {
                score: mean_scores(&of_id),
                rubric_id: id,
                rationale: Some("Mean of this rubric's verdicts over the invocations; see each invocation for the judge's rationale.".into()),
            }
        })
        .collect();
    let score = mean_scores(&all);
    Ok(Evaluation {
        score,
        status: EvalStatus::of(score, threshold),
        per_invocation: per,
        rubric_scores: Some(overall_rubrics),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rubric_verdicts_as_adk_reads_them() {
        let parsed = parse_rubric_answer(
            "Property: Is concise\nRationale: short\nVerdict: yes\n\nProperty: Names the order\nRationale: ?\nVerdict: unknown\nProperty: x\nRationale: y\nVerdict: maybe",
        );
        assert_eq!(parsed[0], ("Is concise".into(), "short".into(), Some(1.0)));
        // "unknown" contains "no"
        assert_eq!(parsed[1].2, Some(0.0));
        assert_eq!(parsed[2].2, None);
        let s = |id: &str, v: Option<f64>| RubricScore {
            rubric_id: id.into(),
            rationale: None,
            score: v,
        };
        let voted = vote_rubrics(&[
            vec![s("a", Some(1.0)), s("b", Some(1.0))],
            vec![s("a", Some(0.0)), s("b", Some(1.0))],
        ]);
        assert_eq!(voted[0].score, Some(0.0));
        assert_eq!(voted[1].score, Some(1.0));
    }
}
