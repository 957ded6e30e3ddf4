//! Hot reload: edits take effect on the next run; an edit that does not load keeps the
//! last good version and is reported (logs and `GET /status`); a run already going
//! finishes on the version it started with.

use super::{Serve, app_files};
use serde_json::json;
use std::time::Duration;

fn edit(s: &Serve, rel: &str, text: &str) {
    std::fs::write(s.path(rel), text).unwrap();
}

async fn state_keys_after_a_turn(s: &Serve, app: &str) -> Vec<String> {
    let id = s.session(app, None).await;
    let events = s.run_sse(app, &id, "hi", false).await;
    let last = events.last().unwrap();
    assert!(last.get("errorCode").is_none(), "{events:#?}");
    last["actions"]["stateDelta"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[tokio::test]
async fn an_edit_is_used_by_the_next_run_and_a_broken_edit_keeps_the_last_good_version() {
    let s = Serve::start(
        &app_files(),
        &["apps", "--script", "script.yaml", "--db", "memory"],
    );
    assert_eq!(state_keys_after_a_turn(&s, "greeter").await, ["greeting"]);

    edit(
        &s,
        "apps/greeter.yaml",
        &super::GREETER.replace("output_key: greeting", "output_key: salutation"),
    );
    assert_eq!(state_keys_after_a_turn(&s, "greeter").await, ["salutation"]);
    let (_, status) = s.get("/status").await;
    let greeter = &status["apps"][0];
    assert_eq!(
        (&greeter["name"], &greeter["status"], &greeter["version"]),
        (&json!("greeter"), &json!("ok"), &json!(2))
    );

    // A schema error on line 5: reported with its position, and the previous version serves.
    let broken = super::GREETER
        .replace("output_key: salutation", "output_key: [not, a, key]")
        .replace("output_key: greeting", "output_key: [not, a, key]");
    edit(&s, "apps/greeter.yaml", &broken);
    assert_eq!(state_keys_after_a_turn(&s, "greeter").await, ["salutation"]);
    let (_, status) = s.get("/status").await;
    let greeter = &status["apps"][0];
    assert_eq!(greeter["status"], "invalid");
    assert_eq!(greeter["version"], 2);
    let problem = &greeter["problems"][0];
    assert!(
        problem["file"].as_str().unwrap().ends_with("greeter.yaml"),
        "{problem}"
    );
    assert_eq!(
        (&problem["line"], &problem["column"]),
        (&json!(6), &json!(13)),
        "{problem}"
    );
    assert_eq!(problem["severity"], "error");
    let logs = s.wait_for_log("greeter.yaml:6:13: error").await;
    assert!(logs.contains("version 2 keeps serving"), "{logs}");
    // The other app is untouched.
    assert_eq!(status["apps"][1]["status"], "ok");

    // Fixed: the next version loads.
    edit(&s, "apps/greeter.yaml", super::GREETER);
    assert_eq!(state_keys_after_a_turn(&s, "greeter").await, ["greeting"]);
    let (_, status) = s.get("/status").await;
    assert_eq!(
        (&status["apps"][0]["status"], &status["apps"][0]["version"]),
        (&json!("ok"), &json!(3))
    );
    assert_eq!(status["apps"][0]["problems"], json!([]));
}

#[tokio::test]
async fn edits_to_a_sub_agent_file_and_new_files_are_picked_up() {
    let s = Serve::start(
        &app_files(),
        &["apps", "--script", "script.yaml", "--db", "memory"],
    );
    assert_eq!(state_keys_after_a_turn(&s, "team").await, ["answer"]);
    edit(
        &s,
        "apps/team/helper.yaml",
        &super::TEAM_HELPER.replace("output_key: answer", "output_key: reply"),
    );
    assert_eq!(state_keys_after_a_turn(&s, "team").await, ["reply"]);

    // A new workflow in the folder becomes an app; the background check logs it.
    edit(
        &s,
        "apps/second.yaml",
        &super::GREETER.replace("name: greeter", "name: second"),
    );
    assert_eq!(
        s.get("/list-apps").await.1,
        json!(["greeter", "second", "team"])
    );
    s.wait_for_log("new app").await;
}

#[tokio::test]
async fn an_invalid_edit_is_logged_without_any_request() {
    let s = Serve::start(
        &app_files(),
        &["apps", "--script", "script.yaml", "--db", "memory"],
    );
    edit(
        &s,
        "apps/team/helper.yaml",
        "name: helper\nmodel: m\ninstruction: [1, 2]\n",
    );
    let logs = s.wait_for_log("helper.yaml:3:14: error").await;
    assert!(
        logs.contains("app `team` does not load; version 1 keeps serving"),
        "{logs}"
    );
}

#[tokio::test]
async fn a_run_that_started_before_an_edit_finishes_on_its_version() {
    let s = Serve::sleeper("1", "memory", &[]);
    let id = s.session("sleeper", None).await;
    let running = s.spawn_run("sleeper", &id, "rest");
    // Wait until the nap has started, then edit.
    tokio::time::sleep(Duration::from_millis(400)).await;
    edit(
        &s,
        "sleeper.yaml",
        &super::SLEEPER.replace("output_key: rested", "output_key: refreshed"),
    );
    let next = s.session("sleeper", None).await;
    let (_, after) = s
        .send(
            "POST",
            "/run",
            super::run_body("sleeper", &next, "rest", false),
        )
        .await;
    let events = running.await.unwrap();
    let last = events.as_array().unwrap().last().unwrap();
    assert_eq!(
        last["actions"]["stateDelta"],
        json!({"rested": "rested"}),
        "{events:#?}"
    );
    let last = after.as_array().unwrap().last().unwrap();
    assert_eq!(
        last["actions"]["stateDelta"],
        json!({"refreshed": "rested"}),
        "{after:#?}"
    );
}
