//! Verdicts over `--runs N`: with one run a case's verdict is ADK's case status; with
//! several, each metric's verdict is AgentEvaluator's (the mean of every scored
//! per-invocation score of every run, `>=` threshold), combined by ADK's case rule, and a
//! case whose runs disagree is flaky.

use super::config::Metric;
use super::results::{EvalCaseResult, EvalStatus};

/// One metric over the runs of one case.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSummary {
    /// The metric.
    pub name: String,
    /// Its threshold.
    pub threshold: f64,
    /// The score the verdict is based on.
    pub score: Option<f64>,
    /// Lowest and highest overall score of a run (with several runs).
    pub range: Option<(f64, f64)>,
    /// The metric's verdict.
    pub status: EvalStatus,
}

/// A case over its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseSummary {
    /// The eval set.
    pub eval_set_id: String,
    /// The case.
    pub eval_id: String,
    /// The verdict.
    pub status: EvalStatus,
    /// Per metric, in config order.
    pub metrics: Vec<MetricSummary>,
    /// Each run's status.
    pub runs: Vec<EvalStatus>,
    /// Runs disagree.
    pub flaky: bool,
    /// Errors of any run.
    pub errors: Vec<String>,
}

/// Summarizes the runs of one case (`runs` non-empty, in run order).
pub fn summarize(metrics: &[Metric], runs: &[&EvalCaseResult]) -> CaseSummary {
    let first = runs[0];
    let statuses: Vec<EvalStatus> = runs.iter().map(|r| r.final_eval_status).collect();
    let errors: Vec<String> = runs.iter().filter_map(|r| r.error.clone()).collect();
    let summaries: Vec<MetricSummary> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let overall: Vec<f64> = runs
                .iter()
                .filter_map(|r| r.overall_eval_metric_results.get(i).and_then(|x| x.score))
                .collect();
            let range = (runs.len() > 1 && !overall.is_empty()).then(|| {
                (
                    overall.iter().copied().fold(f64::INFINITY, f64::min),
                    overall.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                )
            });
            if runs.len() == 1 {
                let r = first.overall_eval_metric_results.get(i);
                return MetricSummary {
                    name: m.name.clone(),
                    threshold: m.threshold,
                    score: r.and_then(|x| x.score),
                    range,
                    status: r.map_or(EvalStatus::NotEvaluated, |x| x.eval_status),
                };
            }
            let scores: Vec<f64> = runs
                .iter()
                .flat_map(|r| r.eval_metric_result_per_invocation.iter())
                .filter_map(|p| p.eval_metric_results.get(i).and_then(|x| x.score))
                .collect();
            let score =
                (!scores.is_empty()).then(|| scores.iter().sum::<f64>() / scores.len() as f64);
            MetricSummary {
                name: m.name.clone(),
                threshold: m.threshold,
                score,
                range,
                status: EvalStatus::of(score, m.threshold),
            }
        })
        .collect();
    let status = if !errors.is_empty() {
        EvalStatus::Failed
    } else if runs.len() == 1 {
        first.final_eval_status
    } else {
        EvalStatus::of_case(summaries.iter().map(|s| s.status))
    };
    CaseSummary {
        eval_set_id: first.eval_set_id.clone(),
        eval_id: first.eval_id.clone(),
        status,
        metrics: summaries,
        flaky: statuses.iter().any(|s| *s != statuses[0]),
        runs: statuses,
        errors,
    }
}
