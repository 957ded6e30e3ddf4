//! LLM-as-a-judge metrics on adk-flow's providers: `final_response_match_v2`, the two
//! rubric metrics and `hallucinations_v1`.
//!
//! The prompts are adk-flow's own; they ask for the answer formats ADK parses, so ADK's
//! parsing and aggregation apply unchanged: each invocation's prompt is sent
//! `num_samples` times in order; v2 labels are read with ADK's regular expression and
//! voted by majority (ties → invalid); rubric verdicts containing "yes" are 1, else
//! containing "no" are 0, voted per rubric (ties → no) and averaged; hallucination labels
//! supported/not_applicable are 1, unsupported/contradictory/disputed 0.

use super::config::JudgeOptions;
use super::metrics::{Evaluation, InvocationScore};
use super::results::EvalStatus;
use super::types::{
    GenaiContent, IntermediateData, Invocation, InvocationEvent, Rubric, RubricScore,
};
use crate::event::{Content, Role};
use crate::model::{CallContext, LlmRequest, Model};
use futures::StreamExt;
use regex::Regex;
use serde_json::{Value, json};
use std::sync::{Arc, LazyLock};

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
        model: options.model.clone(),
        contents: vec![Content::text(Role::User, prompt)],
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

fn text_of(content: Option<&GenaiContent>) -> String {
    GenaiContent::joined_text(content).unwrap_or_default()
}

// ---------------------------------------------------------------- final_response_match_v2

fn v2_prompt(user: &str, response: &str, reference: &str) -> String {
    format!(
        "You grade an AI agent. Decide whether the agent's answer to the user is as good as a \
reference answer: it must carry the same facts and conclusions as the reference (wording, \
length and order may differ), contradict nothing in it and leave out nothing the user needs.\n\n\
User request:\n{user}\n\nAgent answer:\n{response}\n\nReference answer:\n{reference}\n\n\
Reply with one JSON object and nothing else:\n\
{{\"reasoning\": \"<one or two sentences>\", \"is_the_agent_response_valid\": \"valid\" or \"invalid\"}}"
    )
}

static VALID_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#""is_the_agent_response_valid":\s*\[*[\n\s]*"*([^"^\]^\s]*)"*[\n\s]*\]*\s*[,\n\}]"#,
    )
    .expect("valid regex")
});
static INVALID_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#""is_the_agent_response_invalid":\s*\[*[\n\s]*"*([^"^\]^\s]*)"*[\n\s]*\]*\s*[,\n\}]"#,
    )
    .expect("valid regex")
});

/// ADK's reading of a v2 answer: 1.0 valid, 0.0 invalid, `None` when no label is found.
pub fn parse_v2(answer: &str) -> Option<f64> {
    // Python's str.strip(r"\s,\}") strips these characters from both ends.
    let strip = |s: &str| {
        s.trim_matches(|c| matches!(c, '\\' | 's' | ',' | '}'))
            .to_owned()
    };
    if let Some(c) = VALID_RE.captures(answer) {
        let label = strip(&c[1]);
        return match label.as_str() {
            "invalid" | "almost" | "false" | "partially_valid" | "partially valid"
            | "partially" => Some(0.0),
            "valid" | "true" => Some(1.0),
            _ => None,
        };
    }
    if let Some(c) = INVALID_RE.captures(answer) {
        let label = strip(&c[1]);
        return Some(if label == "true" || label == "invalid" {
            0.0
        } else {
            1.0
        });
    }
    None
}

/// Majority vote of sample scores: positives win only when more; `None` when none.
fn vote(samples: &[Option<f64>]) -> Option<f64> {
    let yes = samples.iter().filter(|s| **s == Some(1.0)).count();
    let no = samples.iter().filter(|s| **s == Some(0.0)).count();
    match (yes, no) {
        (0, 0) => None,
        (y, n) if y > n => Some(1.0),
        _ => Some(0.0),
    }
}

/// `final_response_match_v2`.
///
/// # Errors
/// A judge call failed.
pub async fn final_response_match_v2(
    judge: &Arc<dyn Model>,
    options: &JudgeOptions,
    threshold: f64,
    actual: &[Invocation],
    expected: &[Invocation],
) -> Result<Evaluation, JudgeError> {
    let mut per = Vec::new();
    for (a, e) in actual.iter().zip(expected) {
        let prompt = v2_prompt(
            &text_of(Some(&e.user_content)),
            &text_of(a.final_response.as_ref()),
            &text_of(e.final_response.as_ref()),
        );
        let mut samples = Vec::new();
        for _ in 0..options.num_samples {
            let answer = ask(judge, options, prompt.clone()).await?;
            samples.push(answer.as_deref().and_then(parse_v2));
        }
        let score = vote(&samples);
        per.push(InvocationScore {
            score,
            status: EvalStatus::of(score, threshold),
            rubric_scores: None,
        });
    }
    let evaluated: Vec<f64> = per.iter().filter_map(|p| p.score).collect();
    if evaluated.is_empty() {
        // ADK divides by zero here; the metric is not evaluated.
        return Ok(Evaluation::not_evaluated());
    }
    let overall = evaluated.iter().sum::<f64>() / evaluated.len() as f64;
    Ok(Evaluation {
        score: Some(overall),
        status: EvalStatus::of(Some(overall), threshold),
        per_invocation: per,
        rubric_scores: None,
    })
}

// ---------------------------------------------------------------- rubrics

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

fn agent_details(inv: &Invocation) -> Vec<(String, String, Vec<Value>)> {
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

fn tool_declarations(inv: &Invocation) -> String {
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

// ---------------------------------------------------------------- hallucinations_v1

fn segmenter_prompt(response: &str) -> String {
    format!(
        "Split the text below into its sentences. Copy every sentence exactly and wrap each in \
<sentence></sentence> tags, one after another, with nothing else in your reply.\n\nText:\n{response}"
    )
}

fn validator_prompt(context: &str, sentences: &str) -> String {
    format!(
        "You check whether each sentence an AI agent wrote is grounded in what the agent knew. \
The context holds its instructions, the user's request, its tools and what the tools returned.\n\n\
Context:\n{context}\n\nSentences:\n{sentences}\n\n\
For every sentence, in order, write exactly these five lines:\n\
sentence: <the sentence>\n\
label: supported | unsupported | contradictory | disputed | not_applicable\n\
rationale: <why>\n\
supporting_excerpt: <text of the context that supports it, or null>\n\
contradicting_excerpt: <text of the context that contradicts it, or null>\n\
Use not_applicable for sentences that claim nothing checkable (greetings, questions)."
    )
}

static SENTENCE_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)<sentence>(.*?)</sentence>").expect("regex"));
static BLOCK_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?is)sentence:(.*?)\nlabel:(.*?)\nrationale:(.*?)\nsupporting_excerpt:(.*?)\ncontradicting_excerpt:(.*)\z")
        .expect("regex")
});
static BLOCK_START: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\nsentence:").expect("regex"));

/// The labels of a validator answer, block by block.
pub fn parse_labels(answer: &str) -> Vec<String> {
    let text = answer.trim();
    let Some(first) = text.to_lowercase().find("sentence:") else {
        return Vec::new();
    };
    let text = &text[first..];
    let mut starts: Vec<usize> = vec![0];
    starts.extend(BLOCK_START.find_iter(text).map(|m| m.start() + 1));
    starts.push(text.len());
    starts
        .windows(2)
        .filter_map(|w| {
            let chunk = text[w[0]..w[1]].trim_end_matches('\n');
            BLOCK_RE.captures(chunk).map(|c| c[2].trim().to_lowercase())
        })
        .collect()
}

fn context_for(inv: &Invocation, events: &[&InvocationEvent]) -> String {
    let details = agent_details(inv);
    let instructions: Vec<String> = details
        .iter()
        .filter(|(_, i, _)| !i.is_empty())
        .map(|(n, i, _)| format!("{n}:\n{i}"))
        .collect();
    let mut parts = vec![
        format!("Developer instructions:\n{}\n", instructions.join("\n\n")),
        format!("User prompt:\n{}\n", text_of(Some(&inv.user_content))),
        "Tool definitions:".to_owned(),
        format!("{}\n", tool_declarations(inv)),
    ];
    for e in events {
        let Some(c) = &e.content else { continue };
        let texts: Vec<&str> = c
            .parts()
            .iter()
            .filter_map(|p| p.text.as_deref().filter(|t| !t.is_empty()))
            .collect();
        let calls: Vec<Value> = c
            .parts()
            .iter()
            .filter_map(|p| p.function_call.as_ref())
            .map(|f| json!({"name": f.name, "args": f.args}))
            .collect();
        let responses: Vec<Value> = c
            .parts()
            .iter()
            .filter_map(|p| p.function_response.as_ref())
            .map(|r| json!({"name": r.name, "response": r.response}))
            .collect();
        if !texts.is_empty() {
            parts.push(format!("{}\n", texts.join("\n")));
        }
        if !calls.is_empty() {
            parts.push("tool_calls:".into());
            parts.push(format!(
                "{}\n",
                serde_json::to_string_pretty(&calls).unwrap_or_default()
            ));
        }
        if !responses.is_empty() {
            parts.push("tool_outputs:".into());
            parts.push(format!(
                "{}\n",
                serde_json::to_string_pretty(&responses).unwrap_or_default()
            ));
        }
    }
    parts.join("\n")
}

async fn grounded_share(
    judge: &Arc<dyn Model>,
    options: &JudgeOptions,
    text: &str,
    context: &str,
) -> Result<Option<f64>, JudgeError> {
    let Some(answer) = ask(judge, options, segmenter_prompt(text)).await? else {
        return Ok(None);
    };
    let sentences: Vec<String> = SENTENCE_RE
        .captures_iter(&answer)
        .map(|c| c[1].to_owned())
        .collect();
    if sentences.is_empty() {
        return Ok(None);
    }
    let listed: Vec<String> = sentences
        .iter()
        .map(|s| format!("<sentence>{s}</sentence>"))
        .collect();
    let Some(answer) = ask(
        judge,
        options,
        validator_prompt(context, &listed.join("\n")),
    )
    .await?
    else {
        return Ok(None);
    };
    let scores: Vec<f64> = parse_labels(&answer)
        .iter()
        .filter_map(|l| match l.as_str() {
            "supported" | "not_applicable" => Some(1.0),
            "unsupported" | "contradictory" | "disputed" => Some(0.0),
            _ => None,
        })
        .collect();
    Ok(mean(&scores))
}

/// `hallucinations_v1`: the share of grounded sentences in the final response (and, when
/// asked, in intermediate texts), one segmenting and one labelling call per text.
///
/// # Errors
/// A judge call failed.
pub async fn hallucinations(
    judge: &Arc<dyn Model>,
    options: &JudgeOptions,
    threshold: f64,
    evaluate_intermediate: bool,
    actual: &[Invocation],
) -> Result<Evaluation, JudgeError> {
    let mut per = Vec::new();
    for inv in actual {
        let events: Vec<&InvocationEvent> = match &inv.intermediate_data {
            Some(IntermediateData::Events(e)) => e.invocation_events.iter().collect(),
            _ => Vec::new(),
        };
        let mut steps: Vec<(String, String)> = Vec::new();
        if evaluate_intermediate {
            for (i, e) in events.iter().enumerate() {
                let texts: Vec<String> = e
                    .content
                    .iter()
                    .flat_map(|c| c.parts())
                    .filter_map(|p| p.text.clone().filter(|t| !t.is_empty()))
                    .collect();
                if !texts.is_empty() {
                    let context = context_for(inv, &events[..i]);
                    steps.extend(texts.into_iter().map(|t| (t, context.clone())));
                }
            }
        }
        let final_text = text_of(inv.final_response.as_ref());
        if !final_text.is_empty() {
            steps.push((final_text, context_for(inv, &events)));
        }
        let mut scores = Vec::new();
        for (text, context) in &steps {
            if let Some(s) = grounded_share(judge, options, text, context).await? {
                scores.push(s);
            }
        }
        let score = mean(&scores);
        per.push(InvocationScore {
            score,
            status: EvalStatus::of(score, threshold),
            rubric_scores: Some(Vec::new()),
        });
    }
    let valid: Vec<f64> = per.iter().filter_map(|p| p.score).collect();
    let score = mean(&valid);
    Ok(Evaluation {
        score,
        status: EvalStatus::of(score, threshold),
        per_invocation: per,
        rubric_scores: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_labels_as_adk_reads_them() {
        assert_eq!(
            parse_v2(r#"{"reasoning": "ok", "is_the_agent_response_valid": "valid"}"#),
            Some(1.0)
        );
        assert_eq!(
            parse_v2("{\"is_the_agent_response_valid\": \"invalid\"\n}"),
            Some(0.0)
        );
        assert_eq!(
            parse_v2(r#"{"is_the_agent_response_valid": ["true"]}"#),
            Some(1.0)
        );
        assert_eq!(
            parse_v2(r#"{"is_the_agent_response_valid": "almost",}"#),
            Some(0.0)
        );
        assert_eq!(
            parse_v2(r#"{"is_the_agent_response_valid": "maybe"}"#),
            None
        );
        assert_eq!(
            parse_v2(r#"{"is_the_agent_response_invalid": "false"}"#),
            Some(1.0)
        );
        assert_eq!(parse_v2("no json here"), None);
        assert_eq!(vote(&[Some(1.0), Some(0.0)]), Some(0.0));
        assert_eq!(vote(&[Some(1.0), None, Some(1.0), Some(0.0)]), Some(1.0));
        assert_eq!(vote(&[None, None]), None);
    }

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

    #[test]
    fn hallucination_blocks() {
        let labels = parse_labels(
            "sentence: It is sunny.\nlabel: supported\nrationale: tool said so\nsupporting_excerpt: sunny\ncontradicting_excerpt: null\nsentence: It is 40C.\nlabel: Contradictory\nrationale: 25C\nsupporting_excerpt: null\ncontradicting_excerpt: 25",
        );
        assert_eq!(labels, vec!["supported", "contradictory"]);
        assert_eq!(mean(&[1.0, 0.0, 0.0]), Some(1.0 / 3.0));
    }
}
