//! The two JSON forms ADK gives its eval data besides the eval-history files (which
//! keep nulls, see [`super::results`]):
//! - [`file_json`]: eval set files as `LocalEvalSetsManager` writes them: snake_case,
//!   unset fields (nulls) left out;
//! - [`api_json`]: the api_server's answers (`response_model_exclude_none`, by alias):
//!   camelCase, nulls left out.
//!
//! User data keeps its keys and its nulls: tool arguments and responses, state, a
//! metric's criterion (as the request gave it), event deltas, schemas; the agent names
//! keying `agent_details` stay as they are.

use serde_json::{Map, Value};

/// Keys whose values are user data, kept verbatim.
const DATA: &[&str] = &[
    "args",
    "response",
    "state",
    "final_session_state",
    "criterion",
    "state_delta",
    "artifact_delta",
    "custom_metadata",
    "agent_state",
    "parameters",
    "parameters_json_schema",
    "response_json_schema",
];

/// Keys whose values are maps keyed by names (kept) of model objects (converted).
const NAMED: &[&str] = &["agent_details"];

use crate::pyrepr::{camel, snake};

fn convert(value: Value, to_camel: bool) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                if v.is_null() {
                    continue;
                }
                let key = snake(&k);
                let name = if to_camel { camel(&key) } else { key.clone() };
                let v = if DATA.contains(&key.as_str()) {
                    v
                } else if NAMED.contains(&key.as_str()) {
                    match v {
                        Value::Object(named) => Value::Object(
                            named
                                .into_iter()
                                .map(|(n, x)| (n, convert(x, to_camel)))
                                .collect(),
                        ),
                        other => convert(other, to_camel),
                    }
                } else {
                    convert(v, to_camel)
                };
                out.insert(name, v);
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| convert(v, to_camel)).collect())
        }
        other => other,
    }
}

/// The api_server's form: camelCase, nulls left out (user data kept as it is).
pub fn api_json(value: Value) -> Value {
    convert(value, true)
}

/// The eval set file form: snake_case, nulls left out (user data kept as it is).
pub fn file_json(value: Value) -> Value {
    convert(value, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn camel_without_nulls_but_data_untouched() {
        let v = json!({
            "eval_id": "c",
            "rubrics": null,
            "session_input": {"app_name": "a", "user_id": "u", "state": {"my_key": null}},
            "conversation": [{"intermediate_data": {"invocation_events": [{"author": "x",
                "content": {"parts": [{"function_call": {"id": null, "args": {"a_b": null}, "name": "t"}}]}}]},
                "app_details": {"agent_details": {"my_agent": {"tool_declarations": []}}}}],
        });
        assert_eq!(
            api_json(v.clone()),
            json!({
                "evalId": "c",
                "sessionInput": {"appName": "a", "userId": "u", "state": {"my_key": null}},
                "conversation": [{"intermediateData": {"invocationEvents": [{"author": "x",
                    "content": {"parts": [{"functionCall": {"args": {"a_b": null}, "name": "t"}}]}}]},
                    "appDetails": {"agentDetails": {"my_agent": {"toolDeclarations": []}}}}],
            })
        );
        assert_eq!(file_json(api_json(v.clone())), file_json(v));
        assert_eq!(
            camel("eval_metric_result_per_invocation"),
            "evalMetricResultPerInvocation"
        );
    }
}
