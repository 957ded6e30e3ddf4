//! Eval sets and their cases: create, list, read, delete; a stored session added as a
//! case; cases read, replaced and deleted.

use super::{store, store_error, write};
use crate::config::{AgentSpec, AgentSpecKind};
use crate::eval::invocations;
use crate::eval::types::{EvalCase, EvalSet, SessionInput};
use crate::eval::wire::{api_json, file_json};
use crate::server::AppState;
use crate::server::error::ApiError;
use crate::server::wire::{JsonBody, json};
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// ADK's `CreateEvalSetRequest`: `{"eval_set": {"eval_set_id": ...}}` (camelCase too;
/// other fields of the set are ignored, as ADK ignores them).
#[derive(Debug, Deserialize)]
pub(crate) struct CreateSetRequest {
    #[serde(alias = "evalSet")]
    eval_set: NewSet,
}

#[derive(Debug, Deserialize)]
struct NewSet {
    #[serde(alias = "evalSetId")]
    eval_set_id: String,
}

/// ADK's `AddSessionToEvalSetRequest`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AddSessionRequest {
    #[serde(alias = "eval_id")]
    eval_id: String,
    #[serde(alias = "session_id")]
    session_id: String,
    #[serde(alias = "user_id")]
    user_id: String,
}

/// An eval case as the API answers it: camelCase without nulls, and
/// `finalSessionState` `{}` when the case states none (pydantic's default).
fn case_json(case: &EvalCase) -> Result<Value, ApiError> {
    let value =
        serde_json::to_value(case).map_err(|e| ApiError::internal("cannot encode a case", &e))?;
    let mut value = api_json(value);
    if let Value::Object(map) = &mut value {
        map.entry("finalSessionState")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(value)
}

/// An eval set as the API answers it: the set's own keys in snake_case (ADK's `EvalSet`
/// has no aliases), its cases as [`case_json`].
fn set_json(set: &EvalSet) -> Result<Value, ApiError> {
    let top = EvalSet {
        eval_set_id: set.eval_set_id.clone(),
        name: set.name.clone(),
        description: set.description.clone(),
        eval_cases: Vec::new(),
        creation_timestamp: set.creation_timestamp,
    };
    let mut value = file_json(
        serde_json::to_value(&top).map_err(|e| ApiError::internal("cannot encode a set", &e))?,
    );
    let cases = set
        .eval_cases
        .iter()
        .map(case_json)
        .collect::<Result<Vec<_>, _>>()?;
    value["eval_cases"] = Value::Array(cases);
    Ok(value)
}

fn not_found(set: &str) -> String {
    format!("Eval set `{set}` not found.")
}

/// `POST /apps/{app}/eval-sets`: creates an empty set; the set (snake_case).
pub(crate) async fn create_set(
    State(s): State<AppState>,
    Path(app): Path<String>,
    JsonBody(req): JsonBody<CreateSetRequest>,
) -> Result<Response, ApiError> {
    let store = store(&s, &app)?;
    let set = write(&s, || store.create_set(&req.eval_set.eval_set_id))?;
    Ok(json(&set_json(&set)?))
}

/// `POST /apps/{app}/eval_sets/{id}` (legacy): creates an empty set; `null`.
pub(crate) async fn create_set_legacy(
    State(s): State<AppState>,
    Path((app, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let store = store(&s, &app)?;
    write(&s, || store.create_set(&id))?;
    Ok(json(&Value::Null))
}

/// `GET /apps/{app}/eval_sets` (legacy): the set ids, sorted, a bare array.
pub(crate) async fn list_sets_legacy(
    State(s): State<AppState>,
    Path(app): Path<String>,
) -> Result<Response, ApiError> {
    Ok(json(&store(&s, &app)?.set_ids().map_err(store_error)?))
}

/// `GET /apps/{app}/eval-sets`: `{"evalSetIds": [...]}`.
pub(crate) async fn list_sets(
    State(s): State<AppState>,
    Path(app): Path<String>,
) -> Result<Response, ApiError> {
    let ids = store(&s, &app)?.set_ids().map_err(store_error)?;
    Ok(json(&json!({ "evalSetIds": ids })))
}

/// `GET /apps/{app}/eval_sets/{id}` (the dev UI's; not in ADK 1.39.1): the set.
pub(crate) async fn get_set(
    State(s): State<AppState>,
    Path((app, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    match store(&s, &app)?.set(&id).map_err(store_error)? {
        Some(set) => Ok(json(&set_json(&set)?)),
        None => Err(ApiError::NotFound(not_found(&id))),
    }
}

/// `DELETE /apps/{app}/eval_sets/{id}` (the dev UI's; not in ADK 1.39.1): `null`.
pub(crate) async fn delete_set(
    State(s): State<AppState>,
    Path((app, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let store = store(&s, &app)?;
    write(&s, || store.delete_set(&id))?;
    Ok(json(&Value::Null))
}

/// The `{key}` names an instruction reads, as ADK's `create_empty_state` finds them
/// (`{(\w+)}`: no `?`, no `app:`/`user:` prefix).
fn instruction_keys(instruction: &str, out: &mut Map<String, Value>) {
    let mut rest = instruction;
    while let Some(i) = rest.find('{') {
        rest = &rest[i + 1..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end > 0 && rest[end..].starts_with('}') {
            out.insert(rest[..end].to_owned(), Value::from(""));
            rest = &rest[end + 1..];
        }
    }
}

/// ADK's initial state of a case made from a session: `""` for every `{key}` the LLM
/// agents' instructions read (sub-agents first), not the session's own state.
fn empty_state(agent: &AgentSpec, out: &mut Map<String, Value>) {
    for sub in &agent.sub_agents {
        empty_state(sub, out);
    }
    if let AgentSpecKind::Llm(llm) = &agent.kind {
        instruction_keys(&llm.instruction, out);
    }
}

/// `POST /apps/{app}/eval-sets/{id}/add-session` and legacy `…/eval_sets/{id}/add_session`:
/// the session's invocations (ADK's event rule) become a new case; `null`.
pub(crate) async fn add_session(
    State(s): State<AppState>,
    Path((app, id)): Path<(String, String)>,
    JsonBody(req): JsonBody<AddSessionRequest>,
) -> Result<Response, ApiError> {
    let store = store(&s, &app)?;
    if store.set(&id).map_err(store_error)?.is_none() {
        return Err(ApiError::NotFound(not_found(&id)));
    }
    let session = s.session(&app, &req.user_id, &req.session_id).await?;
    let conversation = {
        let live = session.lock();
        let events: Vec<&crate::event::Event> = live.events.iter().map(|e| &**e).collect();
        invocations::from_events(&events, &HashMap::new())
    };
    let version = s.apps.version(&app).await?;
    let mut state = Map::new();
    empty_state(&version.workflow().root, &mut state);
    let case = EvalCase {
        eval_id: req.eval_id,
        conversation: Some(conversation),
        conversation_scenario: None,
        session_input: Some(SessionInput {
            app_name: app,
            user_id: req.user_id,
            state,
        }),
        creation_timestamp: crate::event::now(),
        rubrics: None,
        final_session_state: None,
    };
    write(&s, || store.add_case(&id, case))?;
    Ok(json(&Value::Null))
}

/// `GET /apps/{app}/eval_sets/{id}/evals`: the case ids, sorted; 400 for an unknown set
/// (ADK's status).
pub(crate) async fn list_cases(
    State(s): State<AppState>,
    Path((app, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let Some(set) = store(&s, &app)?.set(&id).map_err(store_error)? else {
        return Err(ApiError::BadRequest(not_found(&id)));
    };
    let mut ids: Vec<String> = set.eval_cases.into_iter().map(|c| c.eval_id).collect();
    ids.sort();
    Ok(json(&ids))
}

/// `GET /apps/{app}/eval-sets/{id}/eval-cases/{case}` and legacy
/// `…/eval_sets/{id}/evals/{case}`: the case.
pub(crate) async fn get_case(
    State(s): State<AppState>,
    Path((app, id, case_id)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let set = store(&s, &app)?.set(&id).map_err(store_error)?;
    match set.and_then(|set| set.eval_cases.into_iter().find(|c| c.eval_id == case_id)) {
        Some(case) => Ok(json(&case_json(&case)?)),
        None => Err(ApiError::NotFound(format!(
            "Eval set `{id}` or Eval `{case_id}` not found."
        ))),
    }
}

/// `PUT` of a case: replaces it (its `evalId`, when given, must be the route's); `null`.
pub(crate) async fn update_case(
    State(s): State<AppState>,
    Path((app, id, case_id)): Path<(String, String, String)>,
    JsonBody(mut case): JsonBody<EvalCase>,
) -> Result<Response, ApiError> {
    if !case.eval_id.is_empty() && case.eval_id != case_id {
        return Err(ApiError::BadRequest(
            "Eval id in EvalCase should match the eval id in the API route.".into(),
        ));
    }
    if case.conversation.is_some() == case.conversation_scenario.is_some() {
        return Err(ApiError::body_problem(
            "value_error",
            &[],
            "Value error, Exactly one of conversation and conversation_scenario must be provided in an EvalCase.",
            Value::Null,
        ));
    }
    case.eval_id = case_id;
    let store = store(&s, &app)?;
    write(&s, || store.update_case(&id, case))?;
    Ok(json(&Value::Null))
}

/// `DELETE` of a case; `null`.
pub(crate) async fn delete_case(
    State(s): State<AppState>,
    Path((app, id, case_id)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let store = store(&s, &app)?;
    write(&s, || store.delete_case(&id, &case_id))?;
    Ok(json(&Value::Null))
}

#[cfg(test)]
mod tests {
    use super::instruction_keys;
    use serde_json::{Map, json};

    #[test]
    fn keys_as_adks_regex_finds_them() {
        let mut out = Map::new();
        instruction_keys(
            "Hi {name}, {user:x} {opt?} {{double}} {a b} {ünï_1} {",
            &mut out,
        );
        assert_eq!(
            serde_json::Value::Object(out),
            json!({"name": "", "double": "", "ünï_1": ""})
        );
    }
}
