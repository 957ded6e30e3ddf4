//! `/run_sse`: one whole `data:` frame per event, partial events when streaming, the
//! artifact split, and errors that end a run.

use super::{Serve, app_files, frames, run_body};
use futures::StreamExt;
use serde_json::json;

fn serve() -> Serve {
    Serve::start(
        &app_files(),
        &["apps", "--script", "script.yaml", "--db", "memory"],
    )
}

#[tokio::test]
async fn each_event_is_one_whole_frame_and_the_user_event_is_not_sent() {
    let s = serve();
    let id = s.session("team", None).await;
    let r = s
        .http
        .post(s.url("/run_sse"))
        .header("accept", "text/event-stream")
        .json(&run_body("team", &id, "what is 40 + 2?", false))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "text/event-stream; charset=utf-8"
    );
    // Every chunk the network delivers holds whole frames: the UI's parser re-emits
    // frames when one is split across reads.
    let mut body = String::new();
    let mut chunks = r.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = String::from_utf8(chunk.unwrap().to_vec()).unwrap();
        assert!(
            chunk.starts_with("data: ") && chunk.ends_with("\n\n"),
            "{chunk:?}"
        );
        body.push_str(&chunk);
    }
    let events = frames(&body);
    assert_eq!(events.len(), 3);
    assert!(events.iter().all(|e| e["author"] != "user"));
    assert!(events.iter().all(|e| e.get("partial").is_none()));
    assert_eq!(
        events[2]["content"]["parts"][0]["text"],
        "The answer is 42."
    );
}

#[tokio::test]
async fn streaming_sends_partial_chunks_then_stores_only_the_final_event() {
    let s = serve();
    let id = s.session("greeter", None).await;
    let events = s.run_sse("greeter", &id, "hi", true).await;
    let texts: Vec<(&str, bool)> = events
        .iter()
        .map(|e| {
            (
                e["content"]["parts"][0]["text"].as_str().unwrap(),
                e["partial"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        texts,
        [
            ("Hel", true),
            ("lo ", true),
            ("there!", true),
            ("Hello there!", false)
        ]
    );
    let ids: std::collections::HashSet<&str> =
        events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 4, "each partial has its own id");
    let (_, session) = s.get(&format!("/apps/greeter/users/u/sessions/{id}")).await;
    let stored = session["events"].as_array().unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[1], events[3]);
    assert_eq!(stored[1]["partial"], false);
}

#[tokio::test]
async fn an_event_with_content_and_an_artifact_delta_is_sent_twice_for_the_ui() {
    let files = [
        ("writer.yaml", super::WRITER),
        ("script.yaml", super::WRITER_SCRIPT),
    ];
    let s = Serve::start(
        &files,
        &["writer.yaml", "--script", "script.yaml", "--db", "memory"],
    );
    let id = s.session("writer", None).await;
    let events = s.run_sse("writer", &id, "write", false).await;
    // call, response (split in two), call, response (split in two), text
    assert_eq!(events.len(), 7, "{events:#?}");
    let (content, delta) = (&events[1], &events[2]);
    assert_eq!(content["id"], delta["id"]);
    assert!(content["content"]["parts"][0]["functionResponse"].is_object());
    assert_eq!(content["actions"]["artifactDelta"], json!({}));
    assert!(delta.get("content").is_none());
    assert_eq!(delta["actions"]["artifactDelta"], json!({"report.md": 0}));
    // The stored event is whole.
    let (_, session) = s.get(&format!("/apps/writer/users/u/sessions/{id}")).await;
    let stored = &session["events"][2];
    assert_eq!(stored["id"], content["id"]);
    assert!(stored["content"].is_object());
    assert_eq!(stored["actions"]["artifactDelta"], json!({"report.md": 0}));

    // Answering a function call (functionCallEventId) turns the split off.
    let id = s.session("writer", None).await;
    let mut body = run_body("writer", &id, "write", false);
    body["functionCallEventId"] = json!("some-event");
    let r = s
        .http
        .post(s.url("/run_sse"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let events = frames(&r.text().await.unwrap());
    assert_eq!(events.len(), 5);
    assert_eq!(
        events[1]["actions"]["artifactDelta"],
        json!({"report.md": 0})
    );
    assert!(events[1]["content"].is_object());
}

#[tokio::test]
async fn a_run_that_fails_sends_its_error_event_then_an_error_frame() {
    let s = serve();
    let id = s.session("greeter", None).await;
    s.run_sse("greeter", &id, "one", false).await;
    s.run_sse("greeter", &id, "two", false).await;
    // The script has no third reply for greeter.
    let events = s.run_sse("greeter", &id, "three", false).await;
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["errorCode"], "SCRIPT_EXHAUSTED");
    assert_eq!(events[0]["author"], "greeter");
    let error = events[1]["error"].as_str().unwrap();
    assert!(
        error.contains("no reply left for agent `greeter`"),
        "{error}"
    );
    assert_eq!(events[1].as_object().unwrap().len(), 1);
    // The error event is committed; the session goes on.
    let (_, session) = s.get(&format!("/apps/greeter/users/u/sessions/{id}")).await;
    assert_eq!(session["events"].as_array().unwrap().len(), 6);
}

#[tokio::test]
async fn each_session_consumes_the_script_from_its_start() {
    let s = serve();
    for _ in 0..3 {
        let id = s.session("greeter", None).await;
        let events = s.run_sse("greeter", &id, "hi", false).await;
        assert_eq!(events[0]["content"]["parts"][0]["text"], "Hello there!");
        let events = s.run_sse("greeter", &id, "hi", false).await;
        assert_eq!(events[0]["content"]["parts"][0]["text"], "Hello again.");
    }
    // A deleted session's place in the script is forgotten: the id starts over.
    let id = s.session("greeter", Some("reused")).await;
    s.run_sse("greeter", &id, "hi", false).await;
    s.send(
        "DELETE",
        "/apps/greeter/users/u/sessions/reused",
        serde_json::Value::Null,
    )
    .await;
    let id = s.session("greeter", Some("reused")).await;
    let events = s.run_sse("greeter", &id, "hi", false).await;
    assert_eq!(events[0]["content"]["parts"][0]["text"], "Hello there!");
}
