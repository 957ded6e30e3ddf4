//! Every route of ADK's api_server that `serve` answers: shapes, status codes, errors.

use super::{Serve, app_files, run_body};
use serde_json::{Value, json};

fn serve() -> Serve {
    Serve::start(
        &app_files(),
        &["apps", "--script", "script.yaml", "--db", "memory"],
    )
}

#[tokio::test]
async fn apps_are_files_and_folders_but_not_tests_or_sub_agent_files() {
    let s = serve();
    assert_eq!(
        s.get("/list-apps?relative_path=./").await,
        (200, json!(["greeter", "team"]))
    );
    let (status, detailed) = s.get("/list-apps?detailed=true").await;
    assert_eq!(status, 200);
    assert_eq!(
        detailed["apps"][1],
        json!({"name": "team", "rootAgentName": "coordinator", "description": "Routes questions.",
               "language": "yaml", "isComputerUse": false, "agents": null})
    );
    assert_eq!(s.get("/health").await, (200, json!({"status": "ok"})));
    let (status, version) = s.get("/version").await;
    assert_eq!(status, 200);
    assert_eq!(version["version"], env!("CARGO_PKG_VERSION"));
    assert!(version["language"].is_string() && version["language_version"].is_string());
}

#[tokio::test]
async fn sessions_are_created_listed_read_patched_and_deleted_as_adk_does() {
    let files = [
        (
            "greeter.yaml",
            &*format!("{}state:\n  mood: calm\n", super::GREETER),
        ),
        ("script.yaml", super::SCRIPT),
    ];
    let s = Serve::start(
        &files,
        &["greeter.yaml", "--script", "script.yaml", "--db", "memory"],
    );
    let base = "/apps/greeter/users/u/sessions";

    // No body, `{}`, `null`: a fresh uuid and the workflow's state.
    let r = s.http.post(s.url(base)).send().await.unwrap();
    let (status, created) = super::status_and_body(r).await;
    assert_eq!(status, 200);
    let id = created["id"].as_str().unwrap();
    assert_eq!(uuid::Uuid::parse_str(id).unwrap().get_version_num(), 4);
    assert_eq!(created["appName"], "greeter");
    assert_eq!(created["userId"], "u");
    assert_eq!(created["state"], json!({"mood": "calm"}));
    assert_eq!(created["events"], json!([]));
    assert!(
        created["lastUpdateTime"].as_f64().unwrap() > 1.7e9,
        "seconds, not ms"
    );
    assert!(created["lastUpdateTime"].as_f64().unwrap() < 1e11);
    assert_eq!(s.send("POST", base, json!({})).await.0, 200);
    assert_eq!(s.send("POST", base, Value::Null).await.0, 200);

    // An id and state, camelCase or snake_case; a duplicate id is a 409.
    let (status, fixed) = s
        .send(
            "POST",
            base,
            json!({"sessionId": "s1", "state": {"mood": "happy", "n": 1}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(fixed["id"], "s1");
    assert_eq!(fixed["state"], json!({"mood": "happy", "n": 1}));
    assert_eq!(
        s.send("POST", base, json!({"session_id": "s2"})).await.1["id"],
        "s2"
    );
    assert_eq!(
        s.send("POST", base, json!({"sessionId": "s1"})).await,
        (409, json!({"detail": "Session already exists: s1"}))
    );
    // ADK's deprecated create-with-id: the body is the state.
    let (status, s3) = s
        .send("POST", &format!("{base}/s3"), json!({"k": "v"}))
        .await;
    assert_eq!(
        (status, &s3["id"], &s3["state"]["k"]),
        (200, &json!("s3"), &json!("v"))
    );

    // A turn, then the stored session: the user's event first, in order, camelCase.
    let frames = s.run_sse("greeter", "s1", "hi", false).await;
    assert_eq!(frames.len(), 1);
    let (status, got) = s.get(&format!("{base}/s1")).await;
    assert_eq!(status, 200);
    let events = got["events"].as_array().unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0]["author"], "user");
    assert_eq!(
        events[0]["content"],
        json!({"parts": [{"text": "hi"}], "role": "user"})
    );
    assert!(
        events[0]["invocationId"]
            .as_str()
            .unwrap()
            .starts_with("e-")
    );
    assert_eq!(events[1], frames[0]);
    assert_eq!(got["state"]["greeting"], "Hello there!");
    assert_eq!(got["lastUpdateTime"], events[1]["timestamp"]);

    // The listing: a bare array, events left out, state kept.
    let (status, list) = s.get(base).await;
    assert_eq!(status, 200);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 6);
    let s1 = list.iter().find(|x| x["id"] == "s1").unwrap();
    assert_eq!(s1["events"], json!([]));
    assert_eq!(s1["state"]["greeting"], "Hello there!");
    assert_eq!(
        s.get("/apps/greeter/users/nobody/sessions").await,
        (200, json!([]))
    );

    // PATCH: the delta is committed as a content-less user event with a `p-` invocation.
    let (status, patched) = s
        .send(
            "PATCH",
            &format!("{base}/s1"),
            json!({"stateDelta": {"mood": "sleepy"}}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(patched["state"]["mood"], "sleepy");
    let last = patched["events"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["invocationId"].as_str().unwrap().starts_with("p-"),
        "{last}"
    );
    assert_eq!(last["author"], "user");
    assert!(last.get("content").is_none());
    assert_eq!(last["actions"]["stateDelta"], json!({"mood": "sleepy"}));
    assert_eq!(
        s.send("PATCH", &format!("{base}/nope"), json!({"stateDelta": {}}))
            .await,
        (404, json!({"detail": "Session not found"}))
    );

    // DELETE answers `null`, for unknown ids too.
    let r = s
        .http
        .delete(s.url(&format!("{base}/s1")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(super::status_and_body(r).await, (200, Value::Null));
    assert_eq!(
        s.send("DELETE", &format!("{base}/s1"), Value::Null).await,
        (200, Value::Null)
    );
    assert_eq!(
        s.get(&format!("{base}/s1")).await,
        (404, json!({"detail": "Session not found"}))
    );
}

#[tokio::test]
async fn imported_events_keep_their_times_and_adk_protocol_events_are_refused() {
    let s = serve();
    let base = "/apps/greeter/users/u/sessions";
    let events = json!([
        {"author": "user", "content": {"role": "user", "parts": [{"text": "earlier"}]},
         "timestamp": 1700000000.5, "invocationId": "e-old"},
        {"author": "greeter", "content": {"role": "model", "parts": [{"text": "reply"}]},
         "timestamp": 1700000001.25, "id": "kept-id"},
    ]);
    let (status, session) = s
        .send("POST", base, json!({"events": events, "state": {"x": 1}}))
        .await;
    assert_eq!(status, 200, "{session}");
    let got = session["events"].as_array().unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["timestamp"], 1700000000.5);
    assert!(!got[0]["id"].as_str().unwrap().is_empty());
    assert_eq!(got[1]["id"], "kept-id");
    assert_eq!(session["lastUpdateTime"], 1700000001.25);
    assert_eq!(session["state"], json!({"x": 1}));

    let forged =
        json!({"events": [{"author": "greeter", "actions": {"stateDelta": {"admin": true}}}]});
    assert_eq!(
        s.send("POST", base, forged).await,
        (
            400,
            json!({"detail": "Session initialization event 0 cannot include event actions."})
        )
    );
    let reserved = json!({"events": [{"author": "greeter", "content": {"role": "model",
        "parts": [{"functionCall": {"name": "adk_request_confirmation", "args": {}}}]}}]});
    assert_eq!(
        s.send("POST", base, reserved).await.1["detail"],
        "Session initialization event 0 cannot include ADK protocol function calls."
    );
}

#[tokio::test]
async fn run_answers_every_event_of_the_turn_and_reads_snake_case() {
    let s = serve();
    let id = s.session("team", None).await;
    let body = json!({
        "app_name": "team", "user_id": "u", "session_id": id,
        "new_message": {"role": "user", "parts": [{"text": "what is 40 + 2?"}]},
    });
    let (status, events) = s.send("POST", "/run", body).await;
    assert_eq!(status, 200, "{events}");
    assert_eq!(
        super::lines(&events),
        [
            r#"coordinator: call transfer_to_agent {"agent_name":"helper"}"#,
            r#"coordinator: resp transfer_to_agent {"result":null} | transfer helper"#,
            r#"helper: The answer is 42. | state {"answer":"The answer is 42."}"#,
        ]
    );
    let first = &events[0];
    for key in [
        "invocationId",
        "author",
        "actions",
        "id",
        "timestamp",
        "longRunningToolIds",
    ] {
        assert!(first.get(key).is_some(), "{key} missing in {first}");
    }
    assert!(first.get("invocation_id").is_none());
    assert_eq!(
        first["actions"],
        json!({"stateDelta": {}, "artifactDelta": {}, "requestedAuthConfigs": {}, "requestedToolConfirmations": {}})
    );
}

#[tokio::test]
async fn bad_requests_get_adk_status_codes_and_detail_bodies() {
    let s = serve();
    assert_eq!(
        s.send("POST", "/run", run_body("greeter", "nope", "hi", false))
            .await,
        (404, json!({"detail": "Session not found: nope"}))
    );
    assert_eq!(
        s.send("POST", "/run_sse", run_body("greeter", "nope", "hi", false))
            .await,
        (404, json!({"detail": "Session not found: nope"}))
    );
    let (status, missing) = s
        .send("POST", "/run", json!({"appName": "greeter", "userId": "u"}))
        .await;
    assert_eq!(status, 422);
    assert_eq!(missing["detail"][0]["type"], "missing");
    assert_eq!(missing["detail"][0]["loc"], json!(["body", "sessionId"]));
    let r = s
        .http
        .post(s.url("/run"))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    let (status, bad) = super::status_and_body(r).await;
    assert_eq!(
        (status, &bad["detail"][0]["type"]),
        (422, &json!("json_invalid"))
    );
    assert_eq!(
        s.send("POST", "/run", run_body("nope", "x", "hi", false))
            .await,
        (404, json!({"detail": "App not found: nope"}))
    );
    assert_eq!(
        s.get("/no/such/route").await,
        (404, json!({"detail": "Not Found"}))
    );
    assert_eq!(
        s.send("PUT", "/list-apps", Value::Null).await,
        (405, json!({"detail": "Method Not Allowed"}))
    );
    let id = s.session("greeter", None).await;
    let (status, empty) = s
        .send(
            "POST",
            "/run",
            json!({"appName": "greeter", "userId": "u", "sessionId": id,
                                     "newMessage": {"role": "user", "parts": []}}),
        )
        .await;
    assert_eq!(
        (status, empty),
        (400, json!({"detail": "No parts in the new_message."}))
    );
}

#[tokio::test]
async fn graph_builder_eval_and_trace_routes_answer_what_the_ui_expects() {
    let s = serve();
    let (status, graph) = s.get("/dev/build_graph/team").await;
    assert_eq!(status, 200);
    assert_eq!(
        graph,
        json!({"name": "team", "root_agent": {
            "name": "coordinator", "description": "Routes questions.",
            "sub_agents": [{
                "name": "helper", "description": "Answers.", "sub_agents": [],
                "model": "m", "instruction": "Answer.", "global_instruction": "",
                "disallow_transfer_to_parent": false, "disallow_transfer_to_peers": false,
                "include_contents": "default", "output_key": "answer"}],
            "model": "m", "instruction": "Hand every question to helper.", "global_instruction": "",
            "disallow_transfer_to_parent": false, "disallow_transfer_to_peers": false,
            "include_contents": "default"}})
    );
    let (status, image) = s.get("/dev/build_graph_image/team?dark_mode=false").await;
    assert_eq!(status, 200);
    let dot = image["root_agent"]["dotSrc"].as_str().unwrap();
    assert!(
        dot.starts_with("digraph") && dot.contains("\"coordinator\" -> \"helper\""),
        "{dot}"
    );
    let (_, dark) = s.get("/dev/build_graph_image/team?dark_mode=true").await;
    assert_ne!(dark["root_agent"]["dotSrc"], image["root_agent"]["dotSrc"]);
    let (_, node) = s.get("/dev/build_graph_image/team?node=helper").await;
    assert!(node["dotSrc"].is_string());

    let r = s
        .http
        .get(s.url("/builder/app/team?ts=1"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/x-yaml");
    assert_eq!(r.headers()["cache-control"], "no-store");
    assert_eq!(r.text().await.unwrap(), super::TEAM_ROOT);
    let r = s
        .http
        .get(s.url("/builder/app/team?file_path=helper.yaml"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.text().await.unwrap(), super::TEAM_HELPER);
    assert_eq!(
        s.get("/builder/app/team?file_path=../script.yaml").await.0,
        404
    );
    let r = s
        .http
        .get(s.url("/builder/app/greeter"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.text().await.unwrap(), super::GREETER);

    assert_eq!(s.get("/apps/team/eval_sets").await, (200, json!([])));
    assert_eq!(s.get("/apps/team/eval_results").await, (200, json!([])));
    assert_eq!(
        s.get("/debug/trace/session/whatever").await,
        (200, json!([]))
    );
    assert_eq!(
        s.get("/debug/trace/some-event").await,
        (404, json!({"detail": "Trace not found"}))
    );
    assert_eq!(
        s.get("/dev/build_graph/nope").await,
        (404, json!({"detail": "App not found: nope"}))
    );
}

#[tokio::test]
async fn artifacts_are_listed_read_by_version_and_deleted() {
    let s = Serve::start(
        &[
            ("writer.yaml", super::WRITER),
            ("script.yaml", super::WRITER_SCRIPT),
        ],
        &["writer.yaml", "--script", "script.yaml", "--db", "memory"],
    );
    let id = s.session("writer", None).await;
    let frames = s.run_sse("writer", &id, "write", false).await;
    assert_eq!(
        frames.last().unwrap()["content"]["parts"][0]["text"],
        "saved twice"
    );
    let base = format!("/apps/writer/users/u/sessions/{id}/artifacts");
    assert_eq!(s.get(&base).await, (200, json!(["report.md"])));
    assert_eq!(
        s.get(&format!("{base}/report.md/versions")).await,
        (200, json!([0, 1]))
    );
    let (status, v0) = s.get(&format!("{base}/report.md/versions/0")).await;
    assert_eq!(status, 200);
    // pydantic writes bytes as URL-safe base64 with padding.
    use base64::Engine;
    let expected = base64::engine::general_purpose::URL_SAFE.encode("what?>>? ~~");
    assert!(
        expected.contains('_') || expected.contains('-'),
        "{expected}"
    );
    assert_eq!(
        v0,
        json!({"inlineData": {"data": expected, "mimeType": "text/markdown"}})
    );
    let (_, latest) = s.get(&format!("{base}/report.md")).await;
    let second = base64::engine::general_purpose::URL_SAFE.encode("second");
    assert_eq!(latest["inlineData"]["data"], second);
    assert_eq!(s.get(&format!("{base}/report.md?version=0")).await.1, v0);
    assert_eq!(
        s.get(&format!("{base}/report.md/versions/7")).await,
        (404, json!({"detail": "Artifact not found"}))
    );
    assert_eq!(s.get(&format!("{base}/report.md/versions/x")).await.0, 422);
    assert_eq!(
        s.send("DELETE", &format!("{base}/report.md"), Value::Null)
            .await,
        (200, Value::Null)
    );
    assert_eq!(s.get(&base).await, (200, json!([])));
}

#[tokio::test]
async fn the_ui_folder_is_served_as_adk_web_serves_it() {
    let files = [
        ("greeter.yaml", super::GREETER),
        ("script.yaml", super::SCRIPT),
        (
            "ui/index.html",
            "<!doctype html><base href=\"./\"><title>ui</title>",
        ),
        ("ui/main-X.js", "console.log(1)"),
        ("ui/styles.css", "body{}"),
        ("ui/assets/logo.svg", "<svg/>"),
        (
            "ui/assets/config/runtime-config.json",
            "{\"backendUrl\": \"http://elsewhere\"}",
        ),
        ("secret.txt", "do not serve"),
    ];
    let s = Serve::start(
        &files,
        &[
            "greeter.yaml",
            "--script",
            "script.yaml",
            "--db",
            "memory",
            "--ui",
            "ui",
        ],
    );
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for path in ["/", "/dev-ui"] {
        let r = http.get(s.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 307, "{path}");
        assert_eq!(r.headers()["location"], "/dev-ui/");
    }
    let r = http.get(s.url("/dev-ui/")).send().await.unwrap();
    assert_eq!(r.headers()["content-type"], "text/html; charset=utf-8");
    assert!(r.text().await.unwrap().contains("<title>ui</title>"));
    for (path, mime) in [
        ("/dev-ui/main-X.js", "text/javascript; charset=utf-8"),
        ("/dev-ui/styles.css", "text/css; charset=utf-8"),
        ("/dev-ui/assets/logo.svg", "image/svg+xml"),
    ] {
        let r = http.get(s.url(path)).send().await.unwrap();
        assert_eq!(
            (r.status().as_u16(), &r.headers()["content-type"]),
            (200, &mime.parse().unwrap()),
            "{path}"
        );
    }
    // The runtime config comes from the server, not from the folder.
    assert_eq!(
        s.get("/dev-ui/assets/config/runtime-config.json").await,
        (200, json!({"backendUrl": ""}))
    );
    // No fallback to index.html, and nothing outside the folder.
    assert_eq!(
        s.get("/dev-ui/missing.js").await,
        (404, json!({"detail": "Not Found"}))
    );
    assert_eq!(s.get("/dev-ui/%2e%2e/secret.txt").await.0, 404);
    assert_eq!(s.get("/dev-ui/..%2fsecret.txt").await.0, 404);
}

#[tokio::test]
async fn a_folder_of_apps_and_the_repository_workflows_serve_together() {
    let s = Serve::start(
        &[("script.yaml", super::SCRIPT)],
        &[
            super::workflows().to_str().unwrap(),
            "--script",
            &super::workflows()
                .join("support.script.yaml")
                .display()
                .to_string(),
            "--db",
            "memory",
        ],
    );
    assert_eq!(
        s.get("/list-apps").await.1,
        json!(["helpdesk", "loop", "parallel", "pipeline", "support"])
    );
    let id = s.session("support", None).await;
    let frames = s.run_sse("support", &id, "Was order 42 paid?", false).await;
    assert_eq!(
        frames.last().unwrap()["content"]["parts"][0]["text"],
        "Order 42 (USB-C cable, 19.90 EUR): paid on 2026-03-03."
    );
}
