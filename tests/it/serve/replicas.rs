//! Scale-out: two `serve` replicas on one PostgreSQL share sessions, and a session's turns
//! are serialized across them by the database, not only by each process.

use super::{Serve, run_body};
use crate::common::pg::PgServer;
use serde_json::Value;
use std::time::{Duration, Instant};

/// The session's stored events, through `s`.
async fn events_of(s: &Serve, id: &str) -> Vec<Value> {
    let (status, session) = s.get(&format!("/apps/sleeper/users/u/sessions/{id}")).await;
    assert_eq!(status, 200, "{session}");
    session["events"].as_array().unwrap().clone()
}

/// Invocation ids in stored order, each run of equal ids collapsed to one.
fn turns(events: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = events
        .iter()
        .map(|e| e["invocationId"].as_str().unwrap().to_owned())
        .collect();
    ids.dedup();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_database_take_turns_on_a_session() {
    let pg = PgServer::start();
    let a = Serve::sleeper("1", &pg.url, &[]);
    let b = Serve::sleeper("1", &pg.url, &[]);
    let id = a.session("sleeper", None).await;

    // A turn on replica A naps a second; replica B's turn on the same session waits for
    // it, then runs on the session as A left it (no stale-session error).
    let first = a.spawn_run("sleeper", &id, "one");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let (code, second) = b
        .send("POST", "/run", run_body("sleeper", &id, "two", false))
        .await;
    let first = first.await.unwrap();
    assert_eq!(code, 200, "{second}");
    assert!(
        started.elapsed() >= Duration::from_millis(1400),
        "B did not wait for A's turn: {:?}",
        started.elapsed()
    );
    for events in [&first, &second] {
        assert_eq!(events.as_array().unwrap().len(), 3, "{events}");
        assert!(
            events
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["errorCode"].is_null()),
            "{events}"
        );
    }
    let first_end = first.as_array().unwrap().last().unwrap()["timestamp"]
        .as_f64()
        .unwrap();
    assert!(second[0]["timestamp"].as_f64().unwrap() > first_end);

    // Both replicas see both turns, one after the other.
    let stored = events_of(&b, &id).await;
    assert_eq!(stored, events_of(&a, &id).await);
    assert_eq!(stored.len(), 8);
    assert_eq!(turns(&stored).len(), 2, "turns interleaved: {stored:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_racing_on_one_session_through_two_replicas_all_commit_in_whole_turns() {
    let pg = PgServer::start();
    let a = Serve::sleeper("0.3", &pg.url, &[]);
    let b = Serve::sleeper("0.3", &pg.url, &[]);
    let id = a.session("sleeper", None).await;

    // Each replica's script holds two turns per session: four runs at once, two each.
    let runs = [
        a.spawn_run("sleeper", &id, "a1"),
        b.spawn_run("sleeper", &id, "b1"),
        a.spawn_run("sleeper", &id, "a2"),
        b.spawn_run("sleeper", &id, "b2"),
    ];
    for run in runs {
        let events = run.await.unwrap();
        let events = events.as_array().unwrap();
        assert_eq!(events.len(), 3, "{events:?}");
        assert!(
            events.iter().all(|e| e["errorCode"].is_null()),
            "{events:?}"
        );
    }
    let stored = events_of(&a, &id).await;
    assert_eq!(stored.len(), 16);
    assert_eq!(turns(&stored).len(), 4, "turns interleaved: {stored:?}");
    let texts: Vec<&str> = stored
        .iter()
        .filter(|e| e["author"] == "user")
        .map(|e| e["content"]["parts"][0]["text"].as_str().unwrap())
        .collect();
    let mut sorted = texts.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["a1", "a2", "b1", "b2"]);
}
