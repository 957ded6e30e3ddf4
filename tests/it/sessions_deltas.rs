//! State deltas as the SQL stores write them (SQLite: `json_set` of the changed keys inside
//! the database), against the in-memory store: a delta replaces each key it names whole
//! (nested objects are not merged, `null` is a value, not a deletion), keeps the order of
//! keys already there, and stores any key, whatever characters it holds. `postgres_scenarios`
//! (`sessions_sql.rs`) runs [`deltas`] on PostgreSQL.

use adk_flow::event::{Event, StateMap};
use adk_flow::session::{InMemorySessionService, SessionService, SqlSessionService};
use serde_json::{Value, json};

fn map(v: Value) -> StateMap {
    v.as_object().cloned().unwrap()
}

fn event_with_delta(delta: Value) -> Event {
    let mut e = Event::new("e-1", "agent");
    e.actions.state_delta = map(delta).into();
    e
}

/// Keys a JSON path would misread if they were not quoted and escaped.
const ODD: &str = "we\"ird.key[0]\\ $.x";

/// The session's state after three commits, as the handle and as a fresh read show it.
async fn run(svc: &dyn SessionService, app: &str) -> (String, Value) {
    let h = svc
        .create_session(
            app,
            "u",
            Some("d"),
            map(json!({"a": 1, "nested": {"x": 1, "y": 2}, "z": true, "app:o": {"p": 1}})),
        )
        .await
        .unwrap();
    let deltas = [
        json!({
            "nested": {"y": 3},
            "n": null,
            "a": 2,
            ODD: "v",
            "line\nbreak\u{1}": [1, {"k": null}],
            "é ключ 🔑": 1.5,
            "app:o": {"q": 2},
            "user:q": null,
            "user:r": "text with \"quotes\" and \\",
        }),
        json!({"nested": null, "z": false, ODD: {"deep": [true]}}),
        json!({}),
    ];
    for delta in deltas {
        svc.append_event(&h, event_with_delta(delta)).await.unwrap();
    }
    let live = serde_json::to_string(&h.lock().state).unwrap();
    let read = svc.get_session(app, "u", "d").await.unwrap().unwrap();
    let stored = Value::Object(read.lock().state.clone());
    (live, stored)
}

/// Runs the commits on `svc` and compares with the in-memory store.
pub(crate) async fn deltas(svc: &dyn SessionService, app: &str) {
    let (want_live, want_stored) = run(&InMemorySessionService::new(), app).await;
    let (live, stored) = run(svc, app).await;
    assert_eq!(live, want_live, "the live session, key order included");
    assert_eq!(stored, want_stored);
    // Session keys come back in the order they were first written.
    let order: Vec<&str> = stored
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| !k.contains(':'))
        .collect();
    assert_eq!(
        order,
        [
            "a",
            "nested",
            "z",
            "n",
            ODD,
            "line\nbreak\u{1}",
            "é ключ 🔑"
        ]
    );
}

#[tokio::test]
async fn sqlite_deltas_match_the_in_memory_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("s.db").display());
    let svc = SqlSessionService::connect(&url).await.unwrap();
    deltas(&svc, "app").await;
}

#[tokio::test]
async fn wide_deltas_are_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("s.db").display());
    let svc = SqlSessionService::connect(&url).await.unwrap();
    let h = svc
        .create_session("app", "u", Some("w"), StateMap::new())
        .await
        .unwrap();
    let wide: StateMap = (0..750)
        .map(|i| {
            let scope = ["", "app:", "user:"][i % 3];
            (format!("{scope}k{i}"), json!(i))
        })
        .collect();
    svc.append_event(&h, event_with_delta(Value::Object(wide.clone())))
        .await
        .unwrap();
    let read = svc.get_session("app", "u", "w").await.unwrap().unwrap();
    assert_eq!(
        Value::Object(read.lock().state.clone()),
        Value::Object(wide)
    );
}
