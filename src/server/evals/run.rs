//! `POST /apps/{app}/eval-sets/{id}/run` and legacy `…/eval_sets/{id}/run_eval`: the
//! selected cases run by the eval engine on the app's current version, each in a fresh
//! session (as `adk-flow eval` runs them), scored with the request's metrics; the results
//! are saved as one eval-history file per run.

use super::{EvalOptions, store, store_error};
use crate::eval::config::{self as eval_config, Metric};
use crate::eval::engine::{self, CaseOutcome, Target};
use crate::eval::models::EvalModels;
use crate::eval::results::{EvalCaseResult, EvalSetResult};
use crate::eval::wire::api_json;
use crate::server::AppState;
use crate::server::error::ApiError;
use crate::server::wire::{JsonBody, json};
use axum::extract::{Path, State};
use axum::response::Response;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// How many cases of one request run at once (ADK's default parallelism).
const PARALLEL: usize = 4;

/// ADK's `EvalMetric` in a request.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestMetric {
    #[serde(alias = "metric_name")]
    metric_name: String,
    #[serde(default)]
    threshold: Option<f64>,
    #[serde(default)]
    criterion: Option<Value>,
}

/// ADK's `RunEvalRequest`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunEvalRequest {
    #[serde(default, alias = "eval_ids")]
    eval_ids: Vec<String>,
    #[serde(default, alias = "eval_case_ids")]
    eval_case_ids: Vec<String>,
    #[serde(alias = "eval_metrics")]
    eval_metrics: Vec<RequestMetric>,
}

/// The engine's metric for a requested one; ADK would skip what it cannot compute,
/// adk-flow refuses it (400) before any case runs.
fn metric(m: &RequestMetric) -> Result<Metric, ApiError> {
    let criterion = match (&m.criterion, m.threshold) {
        (Some(Value::Object(c)), threshold) => {
            let mut c = c.clone();
            if let Some(t) = threshold {
                c.entry("threshold").or_insert(Value::from(t));
            }
            Value::Object(c)
        }
        (_, Some(t)) => Value::from(t),
        (_, None) => {
            return Err(ApiError::BadRequest(format!(
                "metric `{}`: give a threshold or a criterion with one",
                m.metric_name
            )));
        }
    };
    eval_config::metric(&m.metric_name, &criterion)
        .map_err(|reason| ApiError::BadRequest(format!("metric `{}`: {reason}", m.metric_name)))
}

/// Each metric result echoes the metric as the request gave it (threshold and criterion
/// or nothing), as ADK copies the request's `EvalMetric` into its results.
fn echo_request(result: &mut EvalCaseResult, requested: &[RequestMetric]) {
    let fix = |r: &mut crate::eval::results::MetricResult, m: &RequestMetric| {
        r.threshold = m.threshold;
        r.criterion = m.criterion.clone();
    };
    for (r, m) in result.overall_eval_metric_results.iter_mut().zip(requested) {
        fix(r, m);
    }
    for inv in &mut result.eval_metric_result_per_invocation {
        for (r, m) in inv.eval_metric_results.iter_mut().zip(requested) {
            fix(r, m);
        }
    }
}

/// ADK's `RunEvalResult` of a case result: camelCase, the deprecated
/// `evalMetricResults` as `[]`, no session details.
fn run_result_json(result: &EvalCaseResult) -> Result<Value, ApiError> {
    let mut value = serde_json::to_value(result)
        .map_err(|e| ApiError::internal("cannot encode a result", &e))?;
    if let Value::Object(map) = &mut value {
        map.remove("session_details");
        map.remove("run");
        map.insert("eval_metric_results".into(), Value::Array(Vec::new()));
    }
    let value = api_json(value);
    // In ADK's field order.
    let Value::Object(mut map) = value else {
        return Ok(value);
    };
    let mut out = Map::new();
    for key in [
        "evalSetFile",
        "evalSetId",
        "evalId",
        "finalEvalStatus",
        "evalMetricResults",
        "overallEvalMetricResults",
        "evalMetricResultPerInvocation",
        "userId",
        "sessionId",
        "error",
    ] {
        if let Some(v) = map.remove(key) {
            out.insert(key.to_owned(), v);
        }
    }
    Ok(Value::Object(out))
}

async fn run_cases(
    s: &AppState,
    app: &str,
    id: &str,
    req: RunEvalRequest,
) -> Result<Vec<Value>, ApiError> {
    let store = store(s, app)?;
    let Some(set) = store.set(id).map_err(store_error)? else {
        return Err(ApiError::BadRequest(format!("Eval set `{id}` not found.")));
    };
    let metrics = req
        .eval_metrics
        .iter()
        .map(metric)
        .collect::<Result<Vec<_>, _>>()?;
    let wanted = if req.eval_case_ids.is_empty() {
        req.eval_ids
    } else {
        req.eval_case_ids
    };
    for w in &wanted {
        if !set.eval_cases.iter().any(|c| &c.eval_id == w) {
            return Err(ApiError::BadRequest(format!(
                "Eval case `{w}` not found in eval set `{id}`."
            )));
        }
    }
    let cases: Vec<_> = set
        .eval_cases
        .iter()
        .filter(|c| wanted.is_empty() || wanted.contains(&c.eval_id))
        .collect();
    for case in &cases {
        if case.conversation_scenario.is_some()
            && let Some(m) = metrics.iter().find(|m| m.kind.needs_expected())
        {
            return Err(ApiError::BadRequest(format!(
                "eval case `{}` is a conversation scenario, which has no expected invocations for `{}`",
                case.eval_id, m.name
            )));
        }
    }
    let options: &EvalOptions = &s.evals;
    let models = EvalModels {
        script: options.script.clone(),
        spec: None,
        judge_override: options.judge_model.clone(),
        base_dir: options.base_dir.clone(),
        env: Arc::clone(&s.apps.settings().env),
    };
    models
        .check_judges(&metrics)
        .map_err(ApiError::BadRequest)?;
    let version = s.apps.version(app).await?;
    let target = Target {
        app: &version.app,
        extra_state: Default::default(),
        session_details: true,
        user_simulator: None,
    };
    let (target, models, metrics, cases) = (&target, &models, &metrics, &cases);
    let outcomes: Vec<CaseOutcome> = futures::stream::iter(0..cases.len())
        .map(|i| engine::run_case(target, models, id, cases[i], metrics, 1))
        .buffered(PARALLEL)
        .collect()
        .await;
    let mut results: Vec<EvalCaseResult> = outcomes.into_iter().map(|o| o.result).collect();
    for r in &mut results {
        echo_request(r, &req.eval_metrics);
    }
    let answer = results
        .iter()
        .map(run_result_json)
        .collect::<Result<Vec<_>, _>>()?;
    let saved = EvalSetResult::new(app, id, results);
    store.save_result(&saved).map_err(store_error)?;
    Ok(answer)
}

/// `POST /apps/{app}/eval-sets/{id}/run`: `{"runEvalResults": [...]}`.
pub(crate) async fn run_eval(
    State(s): State<AppState>,
    Path((app, id)): Path<(String, String)>,
    JsonBody(req): JsonBody<RunEvalRequest>,
) -> Result<Response, ApiError> {
    let results = bounded(&s, run_cases(&s, &app, &id, req)).await?;
    Ok(json(&json!({ "runEvalResults": results })))
}

/// `POST /apps/{app}/eval_sets/{id}/run_eval` (legacy): the results, a bare array.
pub(crate) async fn run_eval_legacy(
    State(s): State<AppState>,
    Path((app, id)): Path<(String, String)>,
    JsonBody(req): JsonBody<RunEvalRequest>,
) -> Result<Response, ApiError> {
    Ok(json(&bounded(&s, run_cases(&s, &app, &id, req)).await?))
}

/// An eval run is bounded by `--run-timeout`, as a turn is (504 when it takes longer;
/// nothing is saved then), and is a run for shutdown: refused (503) once the server is
/// shutting down, waited for during the grace period, stopped after it (503, nothing
/// saved).
async fn bounded(
    s: &AppState,
    run: impl std::future::Future<Output = Result<Vec<Value>, ApiError>>,
) -> Result<Vec<Value>, ApiError> {
    if s.runs.draining() {
        return Err(ApiError::Unavailable("the server is shutting down".into()));
    }
    let limit = s.options.limits.timeout;
    let (_, cancel) = s.runs.shutdown_signals();
    let run = s.runs.track(tokio::time::timeout(limit, run));
    tokio::select! {
        result = run => result.unwrap_or_else(|_| {
            Err(ApiError::Timeout(format!(
                "the eval run took longer than {} s (--run-timeout)",
                limit.as_secs()
            )))
        }),
        () = cancel.cancelled() => Err(ApiError::Unavailable(
            "the server is shutting down; the eval run was stopped and nothing was saved".into(),
        )),
    }
}
