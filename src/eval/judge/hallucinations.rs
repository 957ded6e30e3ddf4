//! `hallucinations_v1`: each text is split into sentences by the judge, then every
//! sentence labelled against what the agent knew; the score is the share of grounded
//! sentences.

use super::rubrics::{agent_details, tool_declarations};
use super::{JudgeError, ask, mean, text_of};
use crate::eval::config::JudgeOptions;
use crate::eval::metrics::{Evaluation, InvocationScore};
use crate::eval::results::EvalStatus;
use crate::eval::types::{IntermediateData, Invocation, InvocationEvent};
use crate::model::Model;
use regex::Regex;
use serde_json::{Value, json};
use std::sync::{Arc, LazyLock};

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
    fn hallucination_blocks() {
        let labels = parse_labels(
            "sentence: It is sunny.\nlabel: supported\nrationale: tool said so\nsupporting_excerpt: sunny\ncontradicting_excerpt: null\nsentence: It is 40C.\nlabel: Contradictory\nrationale: 25C\nsupporting_excerpt: null\ncontradicting_excerpt: 25",
        );
        assert_eq!(labels, vec!["supported", "contradictory"]);
        assert_eq!(mean(&[1.0, 0.0, 0.0]), Some(1.0 / 3.0));
    }
}
