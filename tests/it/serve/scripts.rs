//! `serve --script-beside`: each app answers from the `X.script.yaml` beside it, so a
//! folder of examples runs offline with each app's own replies (two apps' agents may
//! share a name); an edited script is used by the next session, a broken one is
//! reported and the last good one keeps serving.

use super::{Serve, workflows};
use serde_json::Value;

/// The texts of a turn's final events, in order.
fn texts(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["partial"] != true)
        .filter_map(|e| e["content"]["parts"][0]["text"].as_str())
        .map(str::to_owned)
        .collect()
}

async fn turn(s: &Serve, app: &str) -> Vec<String> {
    let id = s.session(app, None).await;
    texts(&s.run_sse(app, &id, "Go.", false).await)
}

#[tokio::test]
async fn each_app_answers_from_the_script_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "loop.yaml",
        "loop.script.yaml",
        "pipeline.yaml",
        "pipeline.script.yaml",
    ] {
        std::fs::copy(workflows().join(f), dir.path().join(f)).unwrap();
    }
    let s = Serve::start_in(dir, &[".", "--script-beside", "--db", "memory"]);
    // Both apps have a `writer`: each gets its own replies.
    let slogans = turn(&s, "loop").await;
    assert_eq!(
        slogans[0], "The coffee that wakes up your whole day",
        "{slogans:?}"
    );
    let post = turn(&s, "pipeline").await;
    assert_eq!(
        post,
        [
            "1. Why Rust. 2. Ownership. 3. Fearless concurrency.",
            "Rust gives you speed without a garbage collector...",
            "Rust: Fast, Safe, Fearless"
        ]
    );

    // An edited script: the next session answers from it.
    let file = s.path("pipeline.script.yaml");
    let script = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        script.replace("Rust: Fast, Safe, Fearless", "Rust, Plainly"),
    )
    .unwrap();
    s.wait_for_log("reloaded app=pipeline").await;
    assert_eq!(turn(&s, "pipeline").await[2], "Rust, Plainly");

    // A broken one is reported, located, and the last good script keeps serving.
    std::fs::write(&file, "replies:\n  titler: [{text: a, error: {code: X}}]\n").unwrap();
    s.wait_for_log("does not load").await;
    let (_, status) = s.get("/status").await;
    let app = status["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "pipeline")
        .unwrap();
    assert_eq!(app["status"], "invalid", "{status}");
    let problem = &app["problems"][0];
    assert!(
        problem["file"]
            .as_str()
            .unwrap()
            .ends_with("pipeline.script.yaml"),
        "{problem}"
    );
    assert_eq!(turn(&s, "pipeline").await[2], "Rust, Plainly");
}

#[tokio::test]
async fn a_folder_app_answers_from_its_script_yaml() {
    // An ADK Agent Config folder (root_agent.yaml) as the test data keeps it: its replies
    // in `script.yaml`, not `root_agent.script.yaml`.
    let dir = tempfile::tempdir().unwrap();
    let from = crate::common::repo().join("tests/data/graphs/helpdesk_escalate");
    let app = dir.path().join("desk");
    std::fs::create_dir(&app).unwrap();
    for f in ["root_agent.yaml", "script.yaml"] {
        std::fs::copy(from.join(f), app.join(f)).unwrap();
    }
    let s = Serve::start_in(dir, &[".", "--script-beside", "--db", "memory"]);
    let said = turn(&s, "desk").await;
    assert_eq!(said[0], "I am not sure which team this is for.", "{said:?}");
    assert_eq!(said.last().unwrap(), "Still vague.", "{said:?}");
    // The page says what answers instead of the YAML's models.
    let (_, info) = s.get("/adk-flow/apps/desk").await;
    assert_eq!(
        info["answeredBy"], "--script-beside (script.yaml)",
        "{info}"
    );
}

#[test]
fn script_beside_and_script_are_one_or_the_other() {
    let out = crate::common::bin()
        .args([
            "serve",
            "workflows",
            "--script",
            "x.yaml",
            "--script-beside",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[tokio::test]
async fn under_model_the_page_names_that_model() {
    // No request reaches the model: the page only asks what answers.
    let dir = tempfile::tempdir().unwrap();
    let from = crate::common::repo().join("tests/data/graphs/helpdesk_escalate/root_agent.yaml");
    std::fs::copy(from, dir.path().join("desk.yaml")).unwrap();
    let s = Serve::start_env(
        dir,
        &[".", "--model", "openai:smollm2", "--db", "memory"],
        &[("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")],
    );
    let (_, info) = s.get("/adk-flow/apps/desk").await;
    assert_eq!(info["answeredBy"], "--model openai:smollm2", "{info}");
}
