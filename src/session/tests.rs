use super::*;
use crate::event::Event;
use serde_json::{Value, json};

fn map(v: Value) -> StateMap {
    v.as_object().cloned().unwrap()
}

fn event_with_delta(delta: Value) -> Event {
    let mut e = Event::new("e-1", "agent");
    e.actions.state_delta = map(delta).into();
    e
}

#[tokio::test]
async fn scopes_state_like_adk() {
    let svc = InMemorySessionService::new();
    let s1 = svc
        .create_session(
            "app",
            "u1",
            Some("s1"),
            map(json!({"a": 1, "app:x": "A", "user:y": "U", "temp:t": 0})),
        )
        .await
        .unwrap();
    assert_eq!(
        Value::Object(s1.lock().state.clone()),
        json!({"a": 1, "app:x": "A", "user:y": "U"})
    );

    let stored = svc
        .append_event(
            &s1,
            event_with_delta(json!({"b": 2, "app:x": "A2", "user:y": "U2", "temp:t2": 3})),
        )
        .await
        .unwrap();
    // temp: is visible for the rest of the invocation but trimmed from what is stored.
    assert_eq!(s1.get_state("temp:t2"), Some(json!(3)));
    assert_eq!(
        Value::Object(stored.actions.state_delta.clone().into_map()),
        json!({"b": 2, "app:x": "A2", "user:y": "U2"})
    );

    let same_user = svc
        .create_session("app", "u1", Some("s2"), StateMap::new())
        .await
        .unwrap();
    assert_eq!(
        Value::Object(same_user.lock().state.clone()),
        json!({"app:x": "A2", "user:y": "U2"})
    );
    let other_user = svc
        .create_session("app", "u2", None, StateMap::new())
        .await
        .unwrap();
    assert_eq!(
        Value::Object(other_user.lock().state.clone()),
        json!({"app:x": "A2"})
    );

    s1.begin_invocation();
    assert_eq!(s1.get_state("temp:t2"), None);
    let reread = svc.get_session("app", "u1", "s1").await.unwrap().unwrap();
    assert_eq!(reread.get_state("b"), Some(json!(2)));
}

#[tokio::test]
async fn app_state_written_elsewhere_shows_on_next_read() {
    let svc = InMemorySessionService::new();
    let s1 = svc
        .create_session("app", "u1", Some("s1"), StateMap::new())
        .await
        .unwrap();
    let s2 = svc
        .create_session("app", "u2", Some("s2"), StateMap::new())
        .await
        .unwrap();
    svc.append_event(&s2, event_with_delta(json!({"app:n": 5})))
        .await
        .unwrap();
    assert_eq!(s1.get_state("app:n"), None);
    let s1 = svc.get_session("app", "u1", "s1").await.unwrap().unwrap();
    assert_eq!(s1.get_state("app:n"), Some(json!(5)));
}

#[tokio::test]
async fn partial_events_are_never_committed() {
    let svc = InMemorySessionService::new();
    let s = svc
        .create_session("app", "u", None, StateMap::new())
        .await
        .unwrap();
    let mut e = event_with_delta(json!({"k": 1}));
    e.partial = Some(true);
    svc.append_event(&s, e).await.unwrap();
    assert!(s.lock().events.is_empty());
    assert_eq!(s.get_state("k"), None);
}

#[tokio::test]
async fn duplicate_session_id_is_rejected() {
    let svc = InMemorySessionService::new();
    svc.create_session("app", "u", Some("x"), StateMap::new())
        .await
        .unwrap();
    let err = svc
        .create_session("app", "u", Some("x"), StateMap::new())
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::AlreadyExists { .. }));
}

/// Many threads reading and committing to one session at once: every append and every
/// read must finish (a store lock and a session lock taken in opposite orders deadlock
/// here within a few thousand rounds), and no commit may be lost.
#[test]
fn one_session_hammered_from_many_threads_never_deadlocks() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 2_000;
    let svc = Arc::new(InMemorySessionService::new());
    let handle =
        futures::executor::block_on(svc.create_session("app", "u", Some("s"), StateMap::new()))
            .unwrap();
    let (done, finished) = std::sync::mpsc::channel();
    for t in 0..THREADS {
        let (svc, handle, done) = (Arc::clone(&svc), handle.clone(), done.clone());
        std::thread::spawn(move || {
            for i in 0..ROUNDS {
                let delta = json!({"app:n": i, "user:t": t, format!("k{t}"): i});
                futures::executor::block_on(svc.append_event(&handle, event_with_delta(delta)))
                    .unwrap();
                let read = futures::executor::block_on(svc.get_session("app", "u", "s"));
                assert!(read.unwrap().is_some());
            }
            let _ = done.send(());
        });
    }
    for _ in 0..THREADS {
        finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("a thread is stuck: the session store deadlocked");
    }
    let session = handle.lock();
    assert_eq!(session.events.len(), THREADS * ROUNDS);
    for t in 0..THREADS {
        assert_eq!(session.state[&format!("k{t}")], json!(ROUNDS - 1));
    }
}

#[tokio::test]
async fn empty_session_ids_are_generated_and_ids_trimmed() {
    let svc = InMemorySessionService::new();
    let a = svc
        .create_session("app", "u", Some(""), StateMap::new())
        .await
        .unwrap();
    let b = svc
        .create_session("app", "u", Some("  "), StateMap::new())
        .await
        .unwrap();
    assert!(!a.id().is_empty() && !b.id().is_empty() && a.id() != b.id());
    let c = svc
        .create_session("app", "u", Some(" s1 "), StateMap::new())
        .await
        .unwrap();
    assert_eq!(c.id(), "s1");
}
