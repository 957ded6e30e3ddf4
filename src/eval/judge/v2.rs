//! `final_response_match_v2`: the judge labels the answer valid or invalid against the
//! reference; samples are voted by majority (ties → invalid); the score is the share of
//! valid invocations among those the judge labelled.

use super::{JudgeError, ask, text_of};
use crate::eval::config::JudgeOptions;
use crate::eval::metrics::{Evaluation, InvocationScore};
use crate::eval::results::EvalStatus;
use crate::eval::types::Invocation;
use crate::model::Model;
use regex::Regex;
use std::sync::{Arc, LazyLock};

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
}
