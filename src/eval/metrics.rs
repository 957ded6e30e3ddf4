//! The deterministic metrics and what every metric returns.
//!
//! Common rule (ADK): one score per (actual, expected) invocation pair, the overall score
//! is the arithmetic mean of those scores, PASSED iff overall `>=` threshold.

use super::config::MatchType;
use super::pyeq::py_eq;
use super::results::EvalStatus;
use super::rouge::rouge1;
use super::types::{FunctionCall, GenaiContent, IntermediateData, Invocation, RubricScore};
use serde_json::{Map, Value};

/// One invocation's score.
#[derive(Debug, Clone, PartialEq)]
pub struct InvocationScore {
    /// The score; `None` when this invocation was not scored.
    pub score: Option<f64>,
    /// Its status against the threshold.
    pub status: EvalStatus,
    /// Rubric verdicts (rubric metrics).
    pub rubric_scores: Option<Vec<RubricScore>>,
}

/// A metric's outcome for one case.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The overall score; `None` when nothing was scored.
    pub score: Option<f64>,
    /// Its status.
    pub status: EvalStatus,
    /// One entry per invocation, or empty when nothing was scored.
    pub per_invocation: Vec<InvocationScore>,
    /// Rubric scores aggregated over invocations (rubric metrics).
    pub rubric_scores: Option<Vec<RubricScore>>,
}

impl Evaluation {
    /// Nothing could be scored.
    pub fn not_evaluated() -> Self {
        Evaluation {
            score: None,
            status: EvalStatus::NotEvaluated,
            per_invocation: Vec::new(),
            rubric_scores: None,
        }
    }

    /// Per-invocation scores averaged as ADK does (sum in order, divided by the count).
    pub fn mean_of(scores: Vec<f64>, threshold: f64) -> Self {
        if scores.is_empty() {
            return Evaluation::not_evaluated();
        }
        let total: f64 = scores.iter().sum();
        let overall = total / scores.len() as f64;
        Evaluation {
            score: Some(overall),
            status: EvalStatus::of(Some(overall), threshold),
            per_invocation: scores
                .into_iter()
                .map(|s| InvocationScore {
                    score: Some(s),
                    status: EvalStatus::of(Some(s), threshold),
                    rubric_scores: None,
                })
                .collect(),
            rubric_scores: None,
        }
    }
}

/// How tool calls are compared: ADK's match type plus adk-flow's argument rules.
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryRules {
    /// EXACT, IN_ORDER or ANY_ORDER.
    pub match_type: MatchType,
    /// Arguments ignored in every call (`name`, or `tool.name` for one tool).
    pub ignore_args: Vec<String>,
    /// Expected calls name only the arguments that matter.
    pub subset_args: bool,
}

fn ignored(rules: &TrajectoryRules, expected: &FunctionCall, tool: &str, arg: &str) -> bool {
    let named = |s: &String| {
        s == arg
            || s.split_once('.')
                .is_some_and(|(t, a)| t == tool && a == arg)
    };
    rules.ignore_args.iter().any(named) || expected.ignore_args.iter().flatten().any(|s| s == arg)
}

fn strip(args: &Map<String, Value>, skip: impl Fn(&str) -> bool) -> Map<String, Value> {
    args.iter()
        .filter(|(k, _)| !skip(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Whether `actual` matches `expected`: same name and, by default, Python-equal args
/// (`None` and `{}` differ, as in ADK); ignored and (with `subset`) unnamed arguments
/// are left out.
pub fn call_matches(
    actual: &FunctionCall,
    expected: &FunctionCall,
    rules: &TrajectoryRules,
) -> bool {
    if actual.name != expected.name {
        return false;
    }
    let tool = expected.name.as_deref().unwrap_or_default();
    let subset = rules.subset_args || expected.args_match.as_deref() == Some("subset");
    let has_ignores = !rules.ignore_args.is_empty() || expected.ignore_args.is_some();
    if !subset && !has_ignores {
        return match (&actual.args, &expected.args) {
            (None, None) => true,
            (Some(a), Some(e)) => py_eq(a, e),
            _ => false,
        };
    }
    let empty = Map::new();
    let a = actual
        .args
        .as_ref()
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let e = expected
        .args
        .as_ref()
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let skip = |k: &str| ignored(rules, expected, tool, k);
    let (a, e) = (strip(a, skip), strip(e, skip));
    if subset {
        e.iter().all(|(k, v)| a.get(k).is_some_and(|w| py_eq(w, v)))
    } else {
        py_eq(&Value::Object(a), &Value::Object(e))
    }
}

/// ADK's trajectory comparison of one invocation.
pub fn trajectory_matches(
    actual: &[&FunctionCall],
    expected: &[&FunctionCall],
    rules: &TrajectoryRules,
) -> bool {
    let eq = |a: &FunctionCall, e: &FunctionCall| call_matches(a, e, rules);
    match rules.match_type {
        MatchType::Exact => {
            actual.len() == expected.len() && actual.iter().zip(expected).all(|(a, e)| eq(a, e))
        }
        MatchType::InOrder => {
            let mut wanted = expected.iter().peekable();
            for a in actual {
                if wanted.peek().is_some_and(|e| eq(a, e)) {
                    wanted.next();
                }
            }
            wanted.peek().is_none()
        }
        MatchType::AnyOrder => {
            let mut left: Vec<&FunctionCall> = actual.to_vec();
            expected
                .iter()
                .all(|e| match left.iter().position(|a| eq(a, e)) {
                    Some(i) => {
                        left.remove(i);
                        true
                    }
                    None => false,
                })
        }
    }
}

/// `tool_trajectory_avg_score`.
pub fn trajectory(
    actual: &[Invocation],
    expected: &[Invocation],
    rules: &TrajectoryRules,
    threshold: f64,
) -> Evaluation {
    let scores = actual
        .iter()
        .zip(expected)
        .map(|(a, e)| {
            let got = IntermediateData::tool_calls(a.intermediate_data.as_ref());
            let want = IntermediateData::tool_calls(e.intermediate_data.as_ref());
            if trajectory_matches(&got, &want, rules) {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    Evaluation::mean_of(scores, threshold)
}

/// `response_match_score`: ROUGE-1 F-measure of the final responses' texts.
pub fn response_match(
    actual: &[Invocation],
    expected: &[Invocation],
    threshold: f64,
) -> Evaluation {
    let scores = actual
        .iter()
        .zip(expected)
        .map(|(a, e)| {
            let reference =
                GenaiContent::joined_text(e.final_response.as_ref()).unwrap_or_default();
            let response = GenaiContent::joined_text(a.final_response.as_ref()).unwrap_or_default();
            rouge1(&reference, &response).fmeasure
        })
        .collect();
    Evaluation::mean_of(scores, threshold)
}

/// adk-flow's `final_session_state`: 1.0 when every key of the case's
/// `final_session_state` has a Python-equal value in the final state (`null` = absent),
/// scored on the last invocation; not evaluated when the case states none.
pub fn final_state(
    expected: Option<&Map<String, Value>>,
    actual: &Map<String, Value>,
    invocations: usize,
    threshold: f64,
) -> (Evaluation, Vec<String>) {
    let Some(expected) = expected.filter(|m| !m.is_empty()) else {
        return (Evaluation::not_evaluated(), Vec::new());
    };
    if invocations == 0 {
        return (Evaluation::not_evaluated(), Vec::new());
    }
    let mismatches: Vec<String> = expected
        .iter()
        .filter(|(k, v)| match actual.get(*k) {
            None => !v.is_null(),
            Some(a) => !py_eq(a, v),
        })
        .map(|(k, v)| {
            format!(
                "state `{k}`: expected {v}, got {}",
                actual.get(k).map_or("nothing".to_owned(), Value::to_string)
            )
        })
        .collect();
    let score = if mismatches.is_empty() { 1.0 } else { 0.0 };
    let mut per = vec![
        InvocationScore {
            score: None,
            status: EvalStatus::NotEvaluated,
            rubric_scores: None,
        };
        invocations - 1
    ];
    per.push(InvocationScore {
        score: Some(score),
        status: EvalStatus::of(Some(score), threshold),
        rubric_scores: None,
    });
    (
        Evaluation {
            score: Some(score),
            status: EvalStatus::of(Some(score), threshold),
            per_invocation: per,
            rubric_scores: None,
        },
        mismatches,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, args: Value) -> FunctionCall {
        FunctionCall {
            name: Some(name.into()),
            args: Some(args),
            ..FunctionCall::default()
        }
    }

    fn rules(m: MatchType) -> TrajectoryRules {
        TrajectoryRules {
            match_type: m,
            ignore_args: Vec::new(),
            subset_args: false,
        }
    }

    #[test]
    fn match_types_as_adk() {
        let (a, b, c) = (
            call("a", json!({"n": 3})),
            call("b", json!({})),
            call("c", json!({})),
        );
        let a_float = call("a", json!({"n": 3.0}));
        let a_str = call("a", json!({"n": "3"}));
        let exact = rules(MatchType::Exact);
        let in_order = rules(MatchType::InOrder);
        let any = rules(MatchType::AnyOrder);
        assert!(trajectory_matches(&[&a, &b], &[&a_float, &b], &exact));
        assert!(!trajectory_matches(&[&a, &b], &[&a_str, &b], &exact));
        assert!(!trajectory_matches(&[&a, &c, &b], &[&a, &b], &exact));
        assert!(trajectory_matches(&[&a, &c, &b], &[&a, &b], &in_order));
        assert!(!trajectory_matches(&[&b, &a], &[&a, &b], &in_order));
        assert!(trajectory_matches(&[&b, &c, &a], &[&a, &b], &any));
        assert!(!trajectory_matches(&[&a], &[&a, &a], &any));
        // an empty expectation: EXACT needs no calls, the others always match
        assert!(!trajectory_matches(&[&a], &[], &exact));
        assert!(trajectory_matches(&[&a], &[], &in_order));
        assert!(trajectory_matches(&[], &[], &any));
        // ids never matter
        let mut with_id = a.clone();
        with_id.id = Some("x".into());
        assert!(trajectory_matches(&[&with_id], &[&a], &exact));
    }

    #[test]
    fn ignored_and_subset_arguments() {
        let actual = call(
            "search",
            json!({"query": "weather paris", "ts": 17, "lang": "en"}),
        );
        let mut expected = call("search", json!({"query": "weather paris", "ts": 1}));
        let mut r = rules(MatchType::Exact);
        assert!(!call_matches(&actual, &expected, &r));
        r.ignore_args = vec!["search.ts".into()];
        r.subset_args = true;
        assert!(call_matches(&actual, &expected, &r));
        let r = rules(MatchType::Exact);
        expected.ignore_args = Some(vec!["ts".into()]);
        expected.args_match = Some("subset".into());
        assert!(call_matches(&actual, &expected, &r));
    }

    #[test]
    fn averages_and_threshold() {
        let e = Evaluation::mean_of(vec![1.0, 0.0, 1.0], 0.6);
        assert_eq!(e.score, Some(2.0 / 3.0));
        assert_eq!(e.status, EvalStatus::Passed);
        assert_eq!(
            Evaluation::mean_of(vec![0.8], 0.8).status,
            EvalStatus::Passed
        );
    }
}
