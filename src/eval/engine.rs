//! Running eval cases: a fresh session per case and per run (with its `session_input`),
//! the user turns sent one by one, events cut into invocations by ADK's rule, every
//! metric computed in config order. Callable from the CLI and from a server: give it a
//! workflow, a [`ModelSource`] and the cases; it returns ADK-format results.

use super::config::{Metric, MetricKind};
use super::inference::{infer, session_json};
use super::judge::{self, RubricMetric};
use super::metrics::{self, Evaluation, TrajectoryRules};
use super::results::{
    EvalCaseResult, EvalStatus, MetricDetails, MetricResult, PerInvocationResult,
};
use super::types::{EvalCase, GenaiContent, Invocation, Rubric};
use crate::app::{App, ModelOptions};
use crate::event::StateMap;
use crate::model::Model;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Resolves a model name to a model.
pub type ModelFn<'a> = Box<dyn Fn(&str) -> Result<Arc<dyn Model>, String> + Send + Sync + 'a>;

/// The models of one case run: scripted replies restart for every case and run, so each
/// run gets fresh ones.
pub struct CaseModels<'a> {
    /// How the agents get their models (a fixed scripted model, `--model`, or the
    /// workflow's own choice).
    pub agents: ModelOptions,
    /// The judge, by `judge_model`.
    pub judge: ModelFn<'a>,
    /// The user simulator, by `user_simulator_config.model`.
    pub user: ModelFn<'a>,
}

/// Makes [`CaseModels`] for each case run.
pub trait ModelSource: Sync {
    /// Fresh models for one run of one case.
    ///
    /// # Errors
    /// A script or provider that cannot be set up.
    fn case_models(&self) -> Result<CaseModels<'_>, String>;
}

/// What is evaluated: a started app, and how its cases start.
pub struct Target<'a> {
    /// The app; every case run gets its own runner of it (`App::runner_with`).
    pub app: &'a App,
    /// State added to every case's initial state (`--state`).
    pub extra_state: StateMap,
    /// Keep the session (events and state) in the results.
    pub session_details: bool,
    /// `user_simulator_config` of the config, for conversation scenarios.
    pub user_simulator: Option<Map<String, Value>>,
}

/// Rubrics per actual invocation: the case's, then the expected invocation's (ADK
/// copies both onto the actual invocations).
fn invocation_rubrics(case: &EvalCase, count: usize) -> Result<Vec<Vec<Rubric>>, String> {
    (0..count)
        .map(|i| {
            let mut out: Vec<Rubric> = case.rubrics.clone().unwrap_or_default();
            let expected = case
                .conversation
                .as_ref()
                .and_then(|c| c.get(i))
                .and_then(|e| e.rubrics.clone())
                .unwrap_or_default();
            for r in expected {
                if out.iter().any(|o| o.rubric_id == r.rubric_id) {
                    return Err(format!(
                        "rubric id `{}` is given twice for invocation {}",
                        r.rubric_id,
                        i + 1
                    ));
                }
                out.push(r);
            }
            Ok(out)
        })
        .collect()
}

async fn evaluate(
    metric: &Metric,
    models: &CaseModels<'_>,
    case: &EvalCase,
    actual: &[Invocation],
    final_state: &StateMap,
    notes: &mut Vec<String>,
) -> Result<Evaluation, String> {
    let expected = case.conversation.as_deref();
    let need_expected = || {
        expected.ok_or_else(|| format!("`{}` compares with expected invocations, which a conversation scenario has none of", metric.name))
    };
    let judge = |j: &super::config::JudgeOptions| (models.judge)(&j.model);
    match &metric.kind {
        MetricKind::Trajectory {
            match_type,
            ignore_args,
            subset_args,
        } => {
            let rules = TrajectoryRules {
                match_type: *match_type,
                ignore_args: ignore_args.clone(),
                subset_args: *subset_args,
            };
            Ok(metrics::trajectory(
                actual,
                need_expected()?,
                &rules,
                metric.threshold,
            ))
        }
        MetricKind::ResponseMatch => Ok(metrics::response_match(
            actual,
            need_expected()?,
            metric.threshold,
        )),
        MetricKind::FinalResponseMatchV2(j) => judge::final_response_match_v2(
            &judge(j)?,
            j,
            metric.threshold,
            actual,
            need_expected()?,
        )
        .await
        .map_err(|e| e.to_string()),
        MetricKind::RubricFinalResponse(j, rubrics) | MetricKind::RubricToolUse(j, rubrics) => {
            let kind = if matches!(metric.kind, MetricKind::RubricToolUse(..)) {
                RubricMetric::ToolUse
            } else {
                RubricMetric::FinalResponse
            };
            let per = invocation_rubrics(case, actual.len())?;
            judge::rubric_based(kind, &judge(j)?, j, metric.threshold, rubrics, actual, &per).await
        }
        MetricKind::Hallucinations {
            judge: j,
            evaluate_intermediate,
        } => judge::hallucinations(
            &judge(j)?,
            j,
            metric.threshold,
            *evaluate_intermediate,
            actual,
        )
        .await
        .map_err(|e| e.to_string()),
        MetricKind::UserSimulatorQuality {
            judge: j,
            stop_signal,
        } => {
            super::simulator::quality(&judge(j)?, j, metric.threshold, stop_signal, case, actual)
                .await
        }
        MetricKind::FinalSessionState => {
            let (evaluation, mismatches) = metrics::final_state(
                case.final_session_state.as_ref(),
                final_state,
                actual.len(),
                metric.threshold,
            );
            notes.extend(mismatches);
            Ok(evaluation)
        }
    }
}

fn metric_result(
    metric: &Metric,
    score: Option<f64>,
    status: EvalStatus,
    rubric_scores: Option<Vec<super::types::RubricScore>>,
) -> MetricResult {
    MetricResult {
        metric_name: metric.name.clone(),
        threshold: Some(metric.threshold),
        criterion: Some(metric.criterion.clone()),
        custom_function_path: None,
        score,
        eval_status: status,
        details: MetricDetails { rubric_scores },
    }
}

/// A case's result plus what the report shows beyond ADK's fields.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    /// The ADK-format result.
    pub result: EvalCaseResult,
    /// Explanations (state mismatches, metric errors).
    pub notes: Vec<String>,
}

/// Runs one case once and scores it.
pub async fn run_case(
    target: &Target<'_>,
    source: &dyn ModelSource,
    eval_set_id: &str,
    case: &EvalCase,
    metrics_list: &[Metric],
    run: u32,
) -> CaseOutcome {
    let mut result = EvalCaseResult {
        eval_set_file: Some(eval_set_id.to_owned()),
        eval_set_id: eval_set_id.to_owned(),
        eval_id: case.eval_id.clone(),
        final_eval_status: EvalStatus::Failed,
        eval_metric_results: None,
        overall_eval_metric_results: Vec::new(),
        eval_metric_result_per_invocation: Vec::new(),
        session_id: String::new(),
        session_details: None,
        user_id: Some(
            case.session_input
                .as_ref()
                .map_or("test_user_id".to_owned(), |s| s.user_id.clone()),
        ),
        run: (run > 1).then_some(run),
        error: None,
    };
    let mut notes = Vec::new();
    let models = match source.case_models() {
        Ok(m) => m,
        Err(e) => {
            result.error = Some(e);
            return CaseOutcome { result, notes };
        }
    };
    let inference = match infer(target, &models, case).await {
        Ok(i) => i,
        Err(e) => {
            result.error = Some(e);
            return CaseOutcome { result, notes };
        }
    };
    result.session_id = inference.session.id();
    result.user_id = Some(inference.user_id.clone());
    if target.session_details {
        result.session_details = Some(session_json(&inference.session));
    }
    if let Some(e) = inference.error {
        result.error = Some(format!("inference failed: {e}"));
        return CaseOutcome { result, notes };
    }
    let actual = inference.invocations;
    if let Some(conversation) = &case.conversation
        && conversation.len() != actual.len()
    {
        result.error = Some(format!(
            "the case has {} turns but the run produced {} invocations (a turn that yields no event cannot be scored)",
            conversation.len(),
            actual.len()
        ));
        return CaseOutcome { result, notes };
    }
    let final_state: StateMap = inference.session.lock().state.clone();
    let mut per: Vec<PerInvocationResult> = actual
        .iter()
        .enumerate()
        .map(|(i, a)| PerInvocationResult {
            actual_invocation: a.clone(),
            expected_invocation: case.conversation.as_ref().and_then(|c| c.get(i).cloned()),
            eval_metric_results: Vec::new(),
        })
        .collect();
    let mut failed_metric = None;
    for metric in metrics_list {
        let evaluation =
            match evaluate(metric, &models, case, &actual, &final_state, &mut notes).await {
                Ok(e) => e,
                Err(e) => {
                    notes.push(format!("{}: {e}", metric.name));
                    failed_metric.get_or_insert(format!(
                        "metric `{}` could not be computed: {e}",
                        metric.name
                    ));
                    Evaluation::not_evaluated()
                }
            };
        result.overall_eval_metric_results.push(metric_result(
            metric,
            evaluation.score,
            evaluation.status,
            evaluation.rubric_scores.clone(),
        ));
        for (i, inv) in per.iter_mut().enumerate() {
            let (score, status, rubrics) = match evaluation.per_invocation.get(i) {
                Some(p) => (p.score, p.status, p.rubric_scores.clone()),
                None => (None, EvalStatus::NotEvaluated, None),
            };
            inv.eval_metric_results
                .push(metric_result(metric, score, status, rubrics));
        }
    }
    result.eval_metric_result_per_invocation = per;
    result.final_eval_status = EvalStatus::of_case(
        result
            .overall_eval_metric_results
            .iter()
            .map(|m| m.eval_status),
    );
    if let Some(e) = failed_metric {
        // ADK would skip the metric and could pass the case; a metric that cannot be
        // computed fails it here.
        result.final_eval_status = EvalStatus::Failed;
        result.error = Some(e);
    }
    CaseOutcome { result, notes }
}

/// The text of an invocation's final response (for reports).
pub fn final_text(inv: &Invocation) -> String {
    GenaiContent::joined_text(inv.final_response.as_ref()).unwrap_or_default()
}
