//! `serve` runs ADK 2 Workflow apps: `/run` and `/run_sse` answer the same events as
//! `adk-flow run` (ADK 2.13's, `nodeInfo` included), turn after turn.

use super::Serve;
use serde_json::Value;

const ROOT: &str = include_str!("../../data/graphs/appendix_loop/root_agent.yaml");
const WRITER: &str = include_str!("../../data/graphs/appendix_loop/writer.yaml");
const SCRIPT: &str = "replies:\n  writer:\n    - text: draft one\n    - text: draft two FINAL\n    - text: only FINAL\n";

fn paths(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                e["author"].as_str().unwrap_or(""),
                e["nodeInfo"]["path"].as_str().unwrap_or(""),
                e["actions"]["route"]
            )
        })
        .collect()
}

#[tokio::test]
async fn run_and_run_sse_answer_the_workflow_events() {
    let s = Serve::start(
        &[
            ("apps/headline_wf/root_agent.yaml", ROOT),
            ("apps/headline_wf/writer.yaml", WRITER),
            ("script.yaml", SCRIPT),
        ],
        &["apps", "--script", "script.yaml", "--db", "memory"],
    );
    let id = s.session("headline_wf", None).await;
    let (status, events) = s
        .send(
            "POST",
            "/run",
            super::run_body("headline_wf", &id, "tea", false),
        )
        .await;
    assert_eq!(status, 200, "{events}");
    let events = events.as_array().cloned().unwrap_or_default();
    assert_eq!(
        paths(&events),
        [
            "writer headline_wf@1/writer@1 null",
            "headline_wf headline_wf@1/judge@1 \"retry\"",
            "writer headline_wf@1/writer@2 null",
            "headline_wf headline_wf@1/judge@2 \"done\"",
            "headline_wf headline_wf@1/publish@1 null",
        ]
    );
    assert_eq!(events[4]["output"]["published"], "DRAFT TWO FINAL");
    assert_eq!(
        events[4]["nodeInfo"]["outputFor"],
        serde_json::json!(["headline_wf@1/publish@1", "headline_wf@1"])
    );
    assert_eq!(events[0]["nodeInfo"]["messageAsOutput"], true);
    assert!(events[0].get("output").is_none(), "{}", events[0]);
    // The next turn starts afresh from START (run ids restart at @1); state carries over.
    let frames = s.run_sse("headline_wf", &id, "coffee", false).await;
    assert_eq!(
        paths(&frames),
        [
            "writer headline_wf@1/writer@1 null",
            "headline_wf headline_wf@1/judge@1 \"done\"",
            "headline_wf headline_wf@1/publish@1 null",
        ]
    );
    assert_eq!(frames[1]["actions"]["stateDelta"]["attempts"], 3);
}

/// A Router whose route matches no edge (ADK only warns; the branch ends).
const FORK: &str = r#"
agent_class: Workflow
name: fork
edges:
  - - START
    - {name: decide, agent_class: adk_flow.Router, route: "input"}
    - "yes": {name: yes_path, agent_class: adk_flow.Router, route: "none", output: "'took yes'"}
      "no": {name: no_path, agent_class: adk_flow.Router, route: "none"}
"#;

/// The stored session is what `/run` and `/run_sse` answered plus each turn's user
/// message, as ADK stores it; a route that matches no edge is warned about in the
/// server's log, naming the workflow, the node run and the route.
#[tokio::test]
async fn the_session_holds_the_answers_and_the_log_names_a_route_without_edge() {
    let s = Serve::start(&[("apps/fork.yaml", FORK)], &["apps", "--db", "memory"]);
    let id = s.session("fork", None).await;
    let (status, first) = s
        .send("POST", "/run", super::run_body("fork", &id, "maybe", false))
        .await;
    assert_eq!(status, 200, "{first}");
    let first = first.as_array().cloned().unwrap_or_default();
    assert_eq!(paths(&first), ["fork fork@1/decide@1 \"maybe\""]);
    let logs = s.wait_for_log("matches no edge").await;
    assert!(
        logs.contains(
            "workflow `fork`: node `decide` (fork@1/decide@1) emitted route \"maybe\", which matches no edge; this branch ends"
        ),
        "{logs}"
    );
    let second = s.run_sse("fork", &id, "yes", true).await;
    assert_eq!(second.last().unwrap()["output"], "took yes");
    let (status, session) = s.get(&format!("/apps/fork/users/u/sessions/{id}")).await;
    assert_eq!(status, 200, "{session}");
    let stored = session["events"].as_array().unwrap();
    let (users, answers): (Vec<&Value>, Vec<&Value>) =
        stored.iter().partition(|e| e["author"] == "user");
    let users: Vec<&Value> = users
        .iter()
        .map(|e| &e["content"]["parts"][0]["text"])
        .collect();
    assert_eq!(users, ["maybe", "yes"]);
    assert_eq!(users.len() + answers.len(), stored.len());
    let answered: Vec<&Value> = first.iter().chain(&second).collect();
    assert_eq!(answers, answered, "stored vs answered");
}

/// A workflow that fails is logged with the failing node's error event, not the turn's
/// last error event: here a sibling's model error reply comes after the failure
/// (recorded case `fanout_failure_then_sibling_error`).
#[tokio::test]
async fn the_log_names_the_node_a_workflow_failed_at() {
    let root = include_str!("../../data/graphs/fanout_failure_then_sibling_error/root_agent.yaml");
    let script = include_str!("../../data/graphs/fanout_failure_then_sibling_error/script.yaml");
    let s = Serve::start(
        &[
            ("apps/fails/root_agent.yaml", root),
            ("script.yaml", script),
        ],
        &["apps", "--script", "script.yaml", "--db", "memory"],
    );
    let id = s.session("fails", None).await;
    let _ = s
        .send("POST", "/run", super::run_body("fails", &id, "go", false))
        .await;
    let log = s
        .wait_for_log("workflow `fails` failed (error event at fails@1/b@1: KeyError")
        .await;
    assert!(!log.contains("RESOURCE_EXHAUSTED: quota)"), "{log}");
}
