//! Many sessions at once; one turn at a time per session (a second run waits); a client
//! that disconnects cancels nothing committed and leaks nothing.

use super::{Serve, app_files, run_body};
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

async fn events_of(s: &Serve, app: &str, id: &str) -> Vec<Value> {
    let (status, session) = s.get(&format!("/apps/{app}/users/u/sessions/{id}")).await;
    assert_eq!(status, 200, "{session}");
    session["events"].as_array().unwrap().clone()
}

async fn wait_idle(s: &Serve) -> Value {
    let started = Instant::now();
    loop {
        let (_, status) = s.get("/status").await;
        if status["runs"] == 0 && status["busySessions"] == 0 {
            return status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "runs never ended: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_sessions_run_at_once_each_with_its_own_events() {
    let s = Serve::start(
        &app_files(),
        &["apps", "--script", "script.yaml", "--db", "memory"],
    );
    let s = &s;
    let ids: Vec<String> = futures::stream::iter(0..2000)
        .map(|_| async move { s.session("team", None).await })
        .buffer_unordered(64)
        .collect()
        .await;
    let answers: Vec<(String, Vec<Value>)> = futures::stream::iter(ids.iter().cloned())
        .map(|id| async move {
            let frames = s.run_sse("team", &id, "what is 40 + 2?", false).await;
            (id, frames)
        })
        .buffer_unordered(128)
        .collect()
        .await;
    assert_eq!(answers.len(), 2000);
    for (_, frames) in &answers {
        assert_eq!(frames.len(), 3);
        assert_eq!(
            frames[2]["content"]["parts"][0]["text"],
            "The answer is 42."
        );
    }
    // Each session holds exactly its own turn, in the order it was streamed.
    for (id, frames) in answers.iter().step_by(97) {
        let stored = events_of(s, "team", id).await;
        assert_eq!(stored.len(), 4);
        assert_eq!(&stored[1..], &frames[..]);
        let invocation = &stored[0]["invocationId"];
        assert!(stored.iter().all(|e| &e["invocationId"] == invocation));
    }
    assert_eq!(
        s.get("/apps/team/users/u/sessions")
            .await
            .1
            .as_array()
            .unwrap()
            .len(),
        2000
    );
    wait_idle(s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_on_a_busy_session_waits_for_the_first_to_end() {
    let s = Serve::sleeper("1", "memory", &[]);
    let id = s.session("sleeper", None).await;
    let first = s.spawn_run("sleeper", &id, "one");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (_, status) = s.get("/status").await;
    assert_eq!(
        (&status["runs"], &status["busySessions"]),
        (&json!(1), &json!(1))
    );
    let started = Instant::now();
    let (code, second) = s
        .send("POST", "/run", run_body("sleeper", &id, "two", false))
        .await;
    let first = first.await.unwrap();
    assert_eq!(code, 200, "{second}");
    // The second turn needed the first's second of sleep plus its own.
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    let first_end = first.as_array().unwrap().last().unwrap()["timestamp"]
        .as_f64()
        .unwrap();
    let second_start = second[0]["timestamp"].as_f64().unwrap();
    assert!(second_start > first_end, "the turns overlapped");
    // The stored session has the two turns one after the other, never interleaved.
    let stored = events_of(&s, "sleeper", &id).await;
    let invocations: Vec<&str> = stored
        .iter()
        .map(|e| e["invocationId"].as_str().unwrap())
        .collect();
    assert_eq!(stored.len(), 8);
    assert!(invocations[..4].iter().all(|i| *i == invocations[0]));
    assert!(invocations[4..].iter().all(|i| *i == invocations[4]));
    assert_ne!(invocations[0], invocations[4]);
    wait_idle(&s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_cancels_nothing_and_leaks_nothing() {
    let s = Serve::sleeper("1", "memory", &[]);
    let id = s.session("sleeper", None).await;
    let r = s
        .http
        .post(s.url("/run_sse"))
        .json(&run_body("sleeper", &id, "rest", false))
        .send()
        .await
        .unwrap();
    let mut chunks = r.bytes_stream();
    let first = chunks.next().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("\"nap\""));
    // Gone, in the middle of the nap.
    drop(chunks);
    let status = wait_idle(&s).await;
    assert_eq!(status["shuttingDown"], false);
    let stored = events_of(&s, "sleeper", &id).await;
    let texts: Vec<String> = stored.iter().map(crate::common::simplify).collect();
    assert_eq!(texts.len(), 4, "{texts:#?}");
    assert_eq!(texts[3], r#"sleeper: rested | state {"rested":"rested"}"#);
    // The session's turn was released: another run goes through.
    let (code, _) = s
        .send("POST", "/run", run_body("sleeper", &id, "again", false))
        .await;
    assert_eq!(code, 200);
}
