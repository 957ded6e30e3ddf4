//! The eval routes, driven as ADK's dev UI drives them (create a set, add a session as a
//! case, run it, list and read the results), each answer compared with what ADK 1.39.1's
//! api_server answered for the same calls (`tests/fixtures/serve/adk_eval_routes.json`,
//! made by `scripts/eval-routes-adk-reference.py`) after ids and times are normalized;
//! then hostile ids, which must never reach a file outside the app's folder.

use super::Serve;
use serde_json::{Value, json};
use std::path::Path;

/// The app ADK's reference served: one agent that calls `get_weather`, then answers.
const WEATHER: &str = r#"
name: weather
model: m
instruction: "Answer about {city} for {user_name?} and {app:x?}."
tools: [{name: get_weather}]
define:
  tools:
    get_weather:
      description: Gets the weather.
      parameters: {type: object, properties: {city: {type: string}}, required: [city]}
      lookup: {key: "{{ city }}", table: {Paris: {weather: sunny}}}
"#;

/// Its replies, for the chat and for every eval case run; and a judge's.
const SCRIPT: &str = r#"
replies:
  weather:
    - function_call: {name: get_weather, args: {city: Paris}}
    - text: It is sunny in Paris.
judge:
  - '{"reasoning": "same", "is_the_agent_response_valid": "valid"}'
"#;

fn reference() -> Value {
    let path = crate::common::repo().join("tests/fixtures/serve/adk_eval_routes.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Ids and times replaced by placeholders, the parts that differ by design (what the
/// agent was told, the stored session) taken out and checked on their own.
fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "appDetails" | "sessionDetails"))
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "creationTimestamp" | "creation_timestamp" => json!(0),
                        "invocationId" => json!("INVOCATION"),
                        "sessionId" => json!("SESSION"),
                        "evalSetResultId" | "evalSetResultName" => json!("RESULT"),
                        "id" if v.is_string() => json!("ID"),
                        _ => normalize(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::String(id) if id.starts_with("weather_smoke_") => json!("RESULT"),
        other => other.clone(),
    }
}

/// Sends the reference's request `name` (with `session` for the recorded session id,
/// and our oldest result for ADK's) and checks status and normalized body against
/// ADK's; returns our body.
async fn same_as_adk(s: &Serve, adk: &Value, name: &str, session: &str) -> Value {
    let r = &adk[name];
    let method = r["method"].as_str().unwrap();
    let mut path = r["path"].as_str().unwrap().to_owned();
    if let Some((route, _)) = path.rsplit_once("/weather_smoke_") {
        let (_, ids) = s.get("/apps/weather/eval_results").await;
        path = format!("{route}/{}", ids[0].as_str().unwrap());
    }
    let path = path.as_str();
    let mut body = r["request"].clone();
    if body.get("sessionId").is_some() {
        body["sessionId"] = json!(session);
    }
    let (status, ours) = if method == "GET" {
        s.get(path).await
    } else if body.is_null() {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let resp = s.http.request(method, s.url(path)).send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.json::<Value>().await.unwrap_or(Value::Null))
    } else {
        s.send(method, path, body).await
    };
    assert_eq!(status, r["status"], "{name}: {method} {path}: {ours}");
    assert_eq!(
        normalize(&ours),
        normalize(&r["body"]),
        "{name}: {method} {path}\nours: {ours:#}"
    );
    ours
}

fn serve() -> Serve {
    Serve::start(
        &[("apps/weather.yaml", WEATHER), ("script.yaml", SCRIPT)],
        &["apps", "--script", "script.yaml", "--db", "memory"],
    )
}

#[tokio::test]
async fn the_dev_uis_eval_tab_gets_adks_answers() {
    let adk = reference();
    let s = serve();
    let (status, session) = s
        .send(
            "POST",
            "/apps/weather/users/u1/sessions",
            json!({"state": {"city": "Paris"}}),
        )
        .await;
    assert_eq!(status, 200, "{session}");
    let sid = session["id"].as_str().unwrap().to_owned();
    let (status, events) = s
        .send(
            "POST",
            "/run",
            json!({"appName": "weather", "userId": "u1", "sessionId": sid,
                   "newMessage": {"role": "user", "parts": [{"text": "Weather?"}]}}),
        )
        .await;
    assert_eq!(status, 200, "{events}");
    for name in [
        "create_eval_set",
        "create_eval_set_dup",
        "create_eval_set_bad",
        "create_eval_set_legacy",
        "list_eval_sets",
        "list_eval_sets_legacy",
        "add_session",
        "add_session_dup",
        "list_evals",
        "list_evals_missing",
        "get_eval",
        "get_eval_new",
        "get_eval_missing",
        "add_session2",
    ] {
        same_as_adk(&s, &adk, name, &sid).await;
    }
    // The eval set file is ADK's: snake_case, no nulls, beside the app.
    let file: Value = serde_json::from_str(
        &std::fs::read_to_string(s.path("apps/weather/smoke.evalset.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        file["eval_cases"][0]["session_input"]["state"],
        json!({"city": ""})
    );
    assert!(!file.to_string().contains("null"), "{file:#}");
    assert!(file["eval_cases"][0]["conversation"][0]["intermediate_data"]["invocation_events"][0]
        ["content"]["parts"][0]["function_call"]
        .is_object());
    // The UI sends back what it read, under another id: ADK's answers again.
    let (_, case) = s.get("/apps/weather/eval_sets/smoke/evals/case1").await;
    let mut renamed = case.clone();
    renamed["evalId"] = json!("case2");
    let (status, body) = s
        .send("PUT", "/apps/weather/eval_sets/smoke/evals/case2", renamed)
        .await;
    assert_eq!((status, body), (200, Value::Null));
    for name in [
        "update_eval_mismatch",
        "delete_eval",
        "delete_eval_missing",
        "run_eval_legacy",
    ] {
        same_as_adk(&s, &adk, name, &sid).await;
    }
    let ours = same_as_adk(&s, &adk, "run_eval", &sid).await;
    let actual = &ours["runEvalResults"][0]["evalMetricResultPerInvocation"][0]["actualInvocation"];
    let details = &actual["appDetails"]["agentDetails"]["weather"];
    assert_eq!(details["name"], "weather");
    assert!(
        details["instructions"]
            .as_str()
            .unwrap()
            .starts_with("Answer about  for  and ."),
        "{details}"
    );
    assert_eq!(
        details["toolDeclarations"][0]["functionDeclarations"][0]["name"],
        "get_weather"
    );
    for name in [
        "run_eval_missing",
        "list_eval_results_legacy",
        "list_eval_results",
        "get_eval_result_legacy",
    ] {
        same_as_adk(&s, &adk, name, &sid).await;
    }
    let result = same_as_adk(&s, &adk, "get_eval_result", &sid).await;
    let session = &result["evalCaseResults"][0]["sessionDetails"];
    assert_eq!(session["appName"], "weather");
    assert_eq!(session["userId"], "u1");
    assert_eq!(session["events"].as_array().unwrap().len(), 4, "{session}");
    // The results are ADK's eval-history files, where ADK keeps them.
    let history = s.path("apps/weather/.adk/eval_history");
    let files: Vec<_> = std::fs::read_dir(&history).unwrap().collect();
    assert_eq!(files.len(), 2);
    // The metric picker lists what the engine computes, in ADK's shape.
    let (status, info) = s.get("/apps/weather/metrics-info").await;
    assert_eq!(status, 200);
    let adk_first = &adk["metrics_info"]["body"]["metricsInfo"][0];
    assert_eq!(
        info["metricsInfo"][0]["metricName"],
        adk_first["metricName"]
    );
    assert_eq!(
        info["metricsInfo"][0]["metricValueInfo"],
        adk_first["metricValueInfo"]
    );
    // The UI's own calls that 1.39.1 lacks.
    let (status, set) = s.get("/apps/weather/eval_sets/smoke").await;
    assert_eq!(status, 200);
    assert_eq!(set["eval_set_id"], "smoke");
    assert_eq!(set["eval_cases"][0]["evalId"], "case1");
    assert_eq!(
        s.send("DELETE", "/apps/weather/eval_sets/legacy1", Value::Null)
            .await,
        (200, Value::Null)
    );
    assert_eq!(
        s.get("/apps/weather/eval_sets").await,
        (200, json!(["smoke"]))
    );
    assert_eq!(s.get("/apps/weather/eval_sets/legacy1").await.0, 404);
}

#[tokio::test]
async fn judge_metrics_take_the_scripts_judge_replies() {
    let s = serve();
    let set = json!({"eval_set_id": "j", "eval_cases": [{"eval_id": "c", "conversation": [{
        "invocation_id": "i", "user_content": {"parts": [{"text": "Weather?"}], "role": "user"},
        "final_response": {"parts": [{"text": "Sunny in Paris."}], "role": "model"}}],
        "session_input": {"app_name": "weather", "user_id": "u", "state": {"city": "Paris"}}}]});
    std::fs::create_dir_all(s.path("apps/weather")).unwrap();
    std::fs::write(s.path("apps/weather/j.evalset.json"), set.to_string()).unwrap();
    let metric = json!({"metricName": "final_response_match_v2", "threshold": 0.5,
        "criterion": {"threshold": 0.5, "judge_model_options": {"num_samples": 1}}});
    let (status, body) = s
        .send(
            "POST",
            "/apps/weather/eval-sets/j/run",
            json!({"evalMetrics": [metric]}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let result = &body["runEvalResults"][0];
    assert_eq!(result["finalEvalStatus"], 1, "{result:#}");
    assert_eq!(result["overallEvalMetricResults"][0]["score"], 1.0);
    assert_eq!(
        result["overallEvalMetricResults"][0]["criterion"],
        metric["criterion"]
    );
    // A metric the engine cannot compute is refused before anything runs.
    let (status, body) = s
        .send(
            "POST",
            "/apps/weather/eval_sets/j/run_eval",
            json!({"evalIds": [], "evalMetrics": [{"metricName": "safety_v1", "threshold": 0.5}]}),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        body["detail"].as_str().unwrap().contains("Vertex AI"),
        "{body}"
    );
}

/// `GET` over a raw connection, so that `..` reaches the server as written.
async fn raw_get(s: &Serve, path: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let host = s.base.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(host).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).await.unwrap();
    answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap()
}

fn files_under(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p.display().to_string());
        }
    }
}

#[tokio::test]
async fn hostile_ids_never_leave_the_apps_folder() {
    let s = serve();
    // Bait outside the app's folder, one and two levels up.
    let bait = json!({"eval_set_id": "secret", "eval_cases": []}).to_string();
    std::fs::write(s.path("apps/secret.evalset.json"), &bait).unwrap();
    std::fs::write(s.path("secret.evalset.json"), &bait).unwrap();
    std::fs::create_dir_all(s.path("apps/.adk/eval_history")).unwrap();
    std::fs::write(s.path("apps/secret.evalset_result.json"), "{}").unwrap();
    assert_eq!(
        s.send("POST", "/apps/weather/eval_sets/smoke", Value::Null)
            .await,
        (200, Value::Null)
    );
    let mut before = Vec::new();
    files_under(s.dir.path(), &mut before);
    let hostile = [
        "..%2Fsecret",
        "..%2F..%2Fsecret",
        "..%5Csecret",
        "%2E%2E%2Fsecret",
        "a%00b",
        "a%0Ab",
        "%1B",
        "%2Fetc%2Fpasswd",
    ];
    for id in hostile {
        for (method, path, body) in [
            (
                "GET",
                format!("/apps/weather/eval_sets/{id}/evals"),
                Value::Null,
            ),
            ("GET", format!("/apps/weather/eval_sets/{id}"), Value::Null),
            (
                "DELETE",
                format!("/apps/weather/eval_sets/{id}"),
                Value::Null,
            ),
            ("POST", format!("/apps/weather/eval_sets/{id}"), Value::Null),
            (
                "POST",
                "/apps/weather/eval-sets".to_owned(),
                json!({"eval_set": {"eval_set_id": urlish(id), "eval_cases": []}}),
            ),
            (
                "POST",
                format!("/apps/weather/eval_sets/{id}/add_session"),
                json!({"evalId": "x", "sessionId": "s", "userId": "u"}),
            ),
            (
                "GET",
                format!("/apps/weather/eval_sets/{id}/evals/x"),
                Value::Null,
            ),
            (
                "DELETE",
                format!("/apps/weather/eval-sets/{id}/eval-cases/x"),
                Value::Null,
            ),
            (
                "POST",
                format!("/apps/weather/eval_sets/{id}/run_eval"),
                json!({"evalMetrics": []}),
            ),
            (
                "GET",
                format!("/apps/weather/eval_results/{id}"),
                Value::Null,
            ),
            (
                "GET",
                format!("/apps/weather/eval-results/{id}"),
                Value::Null,
            ),
        ] {
            let (status, answer) = s.send(method, &path, body).await;
            assert!(
                matches!(status, 400 | 404),
                "{method} {path}: {status} {answer}"
            );
            assert!(!answer.to_string().contains("secret\""), "{answer}");
        }
    }
    // `..` as a whole segment, as a client that does not normalize paths sends it.
    for path in [
        "/apps/weather/eval_sets/../evals",
        "/apps/weather/eval_results/..",
        "/apps/weather/eval-results/.",
    ] {
        assert!(matches!(raw_get(&s, path).await, 400 | 404), "{path}");
    }
    let mut after = Vec::new();
    files_under(s.dir.path(), &mut after);
    assert_eq!(before, after, "a hostile request changed the files");
    assert!(s.path("apps/secret.evalset.json").exists());
}

/// A percent-encoded id as the server decodes it.
fn urlish(id: &str) -> String {
    let mut out = Vec::new();
    let b = id.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            out.push(u8::from_str_radix(&id[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// `adk-flow eval` run where the server runs saves results the Eval tab lists: each app's
/// own, never another app's whose name starts the same way.
#[tokio::test]
async fn results_of_adk_flow_eval_beside_the_server_are_listed_for_their_app() {
    let s = Serve::start(
        &[
            ("apps/weather.yaml", WEATHER),
            (
                "apps/weather_x.yaml",
                &WEATHER.replace("name: weather", "name: weather_x"),
            ),
            ("script.yaml", SCRIPT),
        ],
        &["apps", "--script", "script.yaml", "--db", "memory"],
    );
    let set = json!({
        "eval_set_id": "paris",
        "eval_cases": [{
            "eval_id": "sunny",
            "conversation": [{
                "invocation_id": "i1",
                "user_content": {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                "final_response": {"role": "model", "parts": [{"text": "It is sunny in Paris."}]},
                "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]},
            }],
            "session_input": {"app_name": "weather", "user_id": "u", "state": {"city": "Paris"}},
        }],
    });
    std::fs::write(s.path("paris.evalset.json"), set.to_string()).unwrap();
    let script = SCRIPT.replace("  weather:", "  weather_x:");
    std::fs::write(s.path("script_x.yaml"), script).unwrap();
    for (app, script) in [("weather", "script.yaml"), ("weather_x", "script_x.yaml")] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_adk-flow"))
            .current_dir(s.dir.path())
            .args(["eval", &format!("apps/{app}.yaml"), "paris.evalset.json"])
            .args(["--script", script])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for app in ["weather", "weather_x"] {
        let (status, ids) = s.get(&format!("/apps/{app}/eval_results")).await;
        assert_eq!(status, 200, "{ids}");
        let ids = ids.as_array().unwrap();
        assert_eq!(ids.len(), 1, "{app}: {ids:?}");
        let id = ids[0].as_str().unwrap();
        assert!(id.starts_with(&format!("{app}_paris_")), "{id}");
        let (status, result) = s.get(&format!("/apps/{app}/eval_results/{id}")).await;
        assert_eq!(status, 200, "{result}");
        assert_eq!(result["evalSetId"], "paris", "{result}");
        // Another app's result is not this app's.
        let other = if app == "weather" {
            "weather_x"
        } else {
            "weather"
        };
        let (status, _) = s.get(&format!("/apps/{other}/eval_results/{id}")).await;
        assert_eq!(status, 404, "{other} read {id}");
    }
}
