//! Results in the shape of ADK's eval-history files (`EvalSetResult`,
//! `EvalCaseResult`, `EvalMetricResult`): snake_case, nulls kept, statuses as integers
//! 1 PASSED / 2 FAILED / 3 NOT_EVALUATED. `adk-flow eval --json` prints them and saves
//! them under `.adk-flow/eval_history/`; a server reads them back through
//! [`super::store::EvalStore::with_cli_history`].

use super::types::{Invocation, RubricScore};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// ADK's `EvalStatus`, written as its integer value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalStatus {
    /// 1.
    Passed,
    /// 2.
    Failed,
    /// 3: nothing could be scored.
    NotEvaluated,
}

impl EvalStatus {
    /// PASSED when `score >= threshold`; NOT_EVALUATED without a score.
    pub fn of(score: Option<f64>, threshold: f64) -> Self {
        match score {
            None => EvalStatus::NotEvaluated,
            Some(s) if s >= threshold => EvalStatus::Passed,
            Some(_) => EvalStatus::Failed,
        }
    }

    /// The word the report prints.
    pub fn label(self) -> &'static str {
        match self {
            EvalStatus::Passed => "PASSED",
            EvalStatus::Failed => "FAILED",
            EvalStatus::NotEvaluated => "NOT_EVALUATED",
        }
    }

    /// ADK's case status (local_eval_service.py): NOT_EVALUATED metrics are skipped;
    /// FAILED if any evaluated metric failed, PASSED if one passed and none failed,
    /// NOT_EVALUATED if nothing was evaluated.
    pub fn of_case(metrics: impl IntoIterator<Item = EvalStatus>) -> Self {
        let mut out = EvalStatus::NotEvaluated;
        for s in metrics {
            match s {
                EvalStatus::Passed => out = EvalStatus::Passed,
                EvalStatus::Failed => return EvalStatus::Failed,
                EvalStatus::NotEvaluated => {}
            }
        }
        out
    }
}

impl Serialize for EvalStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(match self {
            EvalStatus::Passed => 1,
            EvalStatus::Failed => 2,
            EvalStatus::NotEvaluated => 3,
        })
    }
}

impl<'de> Deserialize<'de> for EvalStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match u8::deserialize(d)? {
            1 => Ok(EvalStatus::Passed),
            2 => Ok(EvalStatus::Failed),
            3 => Ok(EvalStatus::NotEvaluated),
            n => Err(serde::de::Error::custom(format!("unknown eval status {n}"))),
        }
    }
}

/// Per-rubric details of a judge metric.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricDetails {
    /// Rubric verdicts (rubric metrics only).
    #[serde(default)]
    pub rubric_scores: Option<Vec<RubricScore>>,
}

/// One metric's result, overall or for one invocation (ADK's `EvalMetricResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricResult {
    /// The metric.
    pub metric_name: String,
    /// Its threshold.
    pub threshold: Option<f64>,
    /// Its criterion as configured.
    pub criterion: Option<Value>,
    /// Always null (custom Python metrics are refused).
    pub custom_function_path: Option<String>,
    /// The score; null when not evaluated.
    pub score: Option<f64>,
    /// PASSED, FAILED or NOT_EVALUATED.
    pub eval_status: EvalStatus,
    /// Rubric details.
    #[serde(default)]
    pub details: MetricDetails,
}

/// The metric results of one invocation (ADK's `EvalMetricResultPerInvocation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerInvocationResult {
    /// What the agent did.
    pub actual_invocation: Invocation,
    /// What was expected (none for conversation scenarios).
    pub expected_invocation: Option<Invocation>,
    /// One result per metric, in config order.
    pub eval_metric_results: Vec<MetricResult>,
}

/// One eval case's result (ADK's `EvalCaseResult`, plus adk-flow's `run` and `error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalCaseResult {
    /// Deprecated copy of the eval set id, kept for ADK's readers.
    pub eval_set_file: Option<String>,
    /// The eval set.
    pub eval_set_id: String,
    /// The case.
    pub eval_id: String,
    /// The case's status by ADK's rule (FAILED on an inference error).
    pub final_eval_status: EvalStatus,
    /// Deprecated; always null.
    pub eval_metric_results: Option<Value>,
    /// One result per metric, in config order.
    pub overall_eval_metric_results: Vec<MetricResult>,
    /// Per invocation.
    pub eval_metric_result_per_invocation: Vec<PerInvocationResult>,
    /// The session the case ran in.
    pub session_id: String,
    /// That session (events and state), with `--verbose` only.
    #[serde(default)]
    pub session_details: Option<Value>,
    /// The user id it ran as.
    pub user_id: Option<String>,
    /// adk-flow: which run (1-based) with `--runs N`; absent for the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<u32>,
    /// adk-flow: why inference or a metric failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One eval set's results (ADK's `EvalSetResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalSetResult {
    /// `<app>_<eval set>_<unix time>`.
    pub eval_set_result_id: String,
    /// The id with `/` replaced.
    pub eval_set_result_name: Option<String>,
    /// The eval set.
    pub eval_set_id: String,
    /// Case results, in file order (run by run).
    pub eval_case_results: Vec<EvalCaseResult>,
    /// Seconds since the epoch.
    pub creation_timestamp: f64,
}

impl EvalSetResult {
    /// A result named as ADK names them.
    pub fn new(app: &str, eval_set_id: &str, cases: Vec<EvalCaseResult>) -> Self {
        let ts = crate::event::now();
        let id = format!("{app}_{eval_set_id}_{ts}");
        EvalSetResult {
            eval_set_result_name: Some(id.replace('/', "_")),
            eval_set_result_id: id,
            eval_set_id: eval_set_id.to_owned(),
            eval_case_results: cases,
            creation_timestamp: ts,
        }
    }
}

/// Writes `result` as `DIR/<app>_<evalset>_<ts>.evalset_result.json` (ADK's name and
/// format); returns the path. The name must be a file name ([`crate::segment::check`]:
/// an eval set id from a file's JSON could hold `\`, NUL or control characters).
///
/// # Errors
/// A name that cannot be a file name; the folder or file cannot be written.
pub fn save(dir: &Path, result: &EvalSetResult) -> std::io::Result<PathBuf> {
    let name = result
        .eval_set_result_name
        .clone()
        .unwrap_or_else(|| result.eval_set_result_id.replace('/', "_"));
    crate::segment::check(&name, "eval_set_result_name")
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{name}.evalset_result.json"));
    let text = serde_json::to_string_pretty(result).map_err(std::io::Error::other)?;
    std::fs::write(&path, text)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::EvalStatus::{self, *};

    #[test]
    fn adks_case_status_rule() {
        assert_eq!(EvalStatus::of_case([NotEvaluated, Passed]), Passed);
        assert_eq!(EvalStatus::of_case([Passed, Failed, NotEvaluated]), Failed);
        assert_eq!(EvalStatus::of_case([NotEvaluated]), NotEvaluated);
        assert_eq!(EvalStatus::of_case([]), NotEvaluated);
        assert_eq!(EvalStatus::of(Some(0.8), 0.8), Passed);
    }
}
