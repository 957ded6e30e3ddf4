//! The eval routes of ADK's api_server (`adk_web_server.py`), answered by adk-flow's
//! eval engine ([`crate::eval`]) from the files ADK keeps beside each app (see
//! [`EvalStore`]): `{app folder}/{eval_set_id}.evalset.json` and
//! `{app folder}/.adk/eval_history/{result_id}.evalset_result.json`.
//!
//! Both spellings ADK serves are here: the current routes (`eval-sets`, `eval-cases`,
//! `eval-results`, `run`) and the legacy ones the dev UI calls (`eval_sets`, `evals`,
//! `eval_results`, `run_eval`), plus `GET`/`DELETE /apps/{app}/eval_sets/{id}`, which the
//! UI calls and 1.39.1 lacks. Answers are ADK's: camelCase without nulls (an `EvalSet`'s
//! own keys in snake_case, as pydantic writes that model), statuses as integers.
//!
//! Where ADK answers 500 (a missing eval set or session when adding a session, a missing
//! result, a hostile id), adk-flow answers 404 or 400 with a message. Ids that become file
//! names go through [`crate::segment::check`] first.

mod cases;
mod run;

pub(crate) use run::{run_eval, run_eval_legacy};

use super::AppState;
use super::error::ApiError;
use super::wire::json;
use crate::eval::script::EvalScript;
use crate::eval::store::{EvalStore, StoreError};
use crate::eval::wire::api_json;
use axum::extract::{Path, State};
use axum::response::Response;
use serde_json::{Value, json};
use std::path::PathBuf;

pub(crate) use cases::{
    add_session, create_set, create_set_legacy, delete_case, delete_set, get_case, get_set,
    list_cases, list_sets, list_sets_legacy, update_case,
};

/// How eval runs get their models.
#[derive(Debug, Clone, Default)]
pub struct EvalOptions {
    /// `serve --script` with `judge:`/`user:` replies (or only `replies:`): agents,
    /// judges and simulated users answer from it, restarting for every case run.
    pub script: Option<EvalScript>,
    /// A judge for every judge metric (`PROVIDER:MODEL`), instead of each criterion's.
    pub judge_model: Option<String>,
    /// Where `scripted:FILE` judge models are found.
    pub base_dir: PathBuf,
}

/// The store of a known app (404 for others).
fn store(s: &AppState, app: &str) -> Result<EvalStore, ApiError> {
    let slot = s.apps.slot(app)?;
    // `adk-flow eval` run where the server runs saves its results there.
    Ok(EvalStore::for_app(app, &slot.source().root)
        .with_cli_history(PathBuf::from(crate::eval::store::CLI_HISTORY_DIR)))
}

/// Runs one change of an eval set file, alone.
fn write<T>(s: &AppState, change: impl FnOnce() -> Result<T, StoreError>) -> Result<T, ApiError> {
    let _one = s.eval_writes.lock().unwrap_or_else(|e| e.into_inner());
    change().map_err(store_error)
}

/// A store failure as ADK answers it (404 for what is missing, 400 for the rest).
fn store_error(e: StoreError) -> ApiError {
    match e {
        StoreError::SetNotFound(_)
        | StoreError::CaseNotFound { .. }
        | StoreError::ResultNotFound(_) => ApiError::NotFound(e.to_string()),
        StoreError::Io { .. } => ApiError::internal("cannot read or write the eval files", &e),
        StoreError::File(_) | StoreError::BadResult { .. } => {
            ApiError::internal("an eval file cannot be read", &crate::errors::chain(&e))
        }
        other => ApiError::BadRequest(other.to_string()),
    }
}

/// `GET /apps/{app}/eval_results` (legacy): the result ids, a bare array.
pub(crate) async fn list_results_legacy(
    State(s): State<AppState>,
    Path(app): Path<String>,
) -> Result<Response, ApiError> {
    Ok(json(&store(&s, &app)?.result_ids().map_err(store_error)?))
}

/// `GET /apps/{app}/eval-results`: `{"evalResultIds": [...]}`.
pub(crate) async fn list_results(
    State(s): State<AppState>,
    Path(app): Path<String>,
) -> Result<Response, ApiError> {
    let ids = store(&s, &app)?.result_ids().map_err(store_error)?;
    Ok(json(&json!({ "evalResultIds": ids })))
}

/// `GET /apps/{app}/eval-results/{id}` and legacy `…/eval_results/{id}`: the stored
/// `EvalSetResult`, camelCase.
pub(crate) async fn get_result(
    State(s): State<AppState>,
    Path((app, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let result = store(&s, &app)?.result(&id).map_err(store_error)?;
    let value = serde_json::to_value(&result)
        .map_err(|e| ApiError::internal("cannot encode the result", &e))?;
    Ok(json(&api_json(value)))
}

/// What `GET /apps/{app}/metrics-info` lists: every metric adk-flow computes, with its
/// range (all are in [0, 1]).
const METRICS: &[(&str, &str)] = &[
    (
        "tool_trajectory_avg_score",
        "Compares the tool calls the agent made with the expected ones (EXACT, IN_ORDER or ANY_ORDER); 1.0 when they match. Higher is better.",
    ),
    (
        "response_match_score",
        "ROUGE-1 F-measure of the final response against the expected one. Higher is better.",
    ),
    (
        "final_response_match_v2",
        "An LLM judge decides whether the final response matches the expected one. Higher is better.",
    ),
    (
        "rubric_based_final_response_quality_v1",
        "An LLM judge checks the final response against the criterion's rubrics. Higher is better.",
    ),
    (
        "rubric_based_tool_use_quality_v1",
        "An LLM judge checks the tool calls against the criterion's rubrics. Higher is better.",
    ),
    (
        "hallucinations_v1",
        "An LLM judge checks that every claim of the response is supported by the context. Higher is better.",
    ),
    (
        "per_turn_user_simulator_quality_v1",
        "An LLM judge checks that each simulated user message follows the conversation scenario. Higher is better.",
    ),
    (
        "final_session_state",
        "adk-flow: 1.0 when every key of the case's final_session_state holds an equal value in the session at the end. Higher is better.",
    ),
];

/// `GET /apps/{app}/metrics-info`: `{"metricsInfo": [{metricName, description,
/// metricValueInfo: {interval}}]}`.
pub(crate) async fn metrics_info(
    State(s): State<AppState>,
    Path(app): Path<String>,
) -> Result<Response, ApiError> {
    s.apps.slot(&app)?;
    let info: Vec<Value> = METRICS
        .iter()
        .map(|(name, description)| {
            json!({
                "metricName": name,
                "description": description,
                "metricValueInfo": {"interval": {
                    "minValue": 0.0, "openAtMin": false, "maxValue": 1.0, "openAtMax": false,
                }},
            })
        })
        .collect();
    Ok(json(&json!({ "metricsInfo": info })))
}

#[cfg(test)]
mod tests {
    #[test]
    fn metrics_info_lists_what_the_engine_computes() {
        let listed: Vec<&str> = super::METRICS.iter().map(|(n, _)| *n).collect();
        assert_eq!(listed, crate::eval::config::SUPPORTED);
    }
}
