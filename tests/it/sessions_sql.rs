//! The SQL session stores against the in-memory store's semantics, on SQLite files and on a
//! real PostgreSQL server that `scripts/postgres.sh` installs (if needed) and starts.
//!
//! Every scenario runs on SQLite (one temp file each); `postgres_scenarios` runs them all
//! against one throwaway server. The kill -9 scenario starts a child process (the
//! `sql_append_child` example), lets it append events, SIGKILLs it and reopens the database.

use crate::common::pg::PgServer;
use adk_flow::event::{Content, Event, FunctionCall, Part, Role, StateMap};
use adk_flow::session::{
    InMemorySessionService, SessionError, SessionHandle, SessionKey, SessionService,
    SqlSessionService,
};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn map(v: Value) -> StateMap {
    v.as_object().cloned().unwrap()
}

fn event_with_delta(delta: Value) -> Event {
    let mut e = Event::new("e-1", "agent");
    e.actions.state_delta = map(delta).into();
    e
}

fn state_of(h: &SessionHandle) -> Value {
    Value::Object(h.lock().state.clone())
}

async fn connect(url: &str) -> SqlSessionService {
    SqlSessionService::connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect {url}: {e}"))
}

/// A SQLite URL in a fresh temp dir, with a parent directory that does not exist yet.
fn sqlite_url(dir: &tempfile::TempDir) -> String {
    format!(
        "sqlite:{}",
        dir.path().join("nested/dir/sessions.db").display()
    )
}

// ---------------------------------------------------------------------------------------
// Scenarios. Each takes the URL of an empty-enough database and an app name of its own.
// ---------------------------------------------------------------------------------------

/// src/session/tests.rs `scopes_state_like_adk`, on any service.
async fn scopes(svc: &dyn SessionService, app: &str) {
    let s1 = svc
        .create_session(
            app,
            "u1",
            Some("s1"),
            map(json!({"a": 1, "app:x": "A", "user:y": "U", "temp:t": 0})),
        )
        .await
        .unwrap();
    assert_eq!(state_of(&s1), json!({"a": 1, "app:x": "A", "user:y": "U"}));

    let stored = svc
        .append_event(
            &s1,
            event_with_delta(json!({"b": 2, "app:x": "A2", "user:y": "U2", "temp:t2": 3})),
        )
        .await
        .unwrap();
    assert_eq!(s1.get_state("temp:t2"), Some(json!(3)));
    assert_eq!(
        Value::Object(stored.actions.state_delta.clone().into_map()),
        json!({"b": 2, "app:x": "A2", "user:y": "U2"})
    );
    assert_eq!(
        state_of(&s1),
        json!({"a": 1, "app:x": "A2", "user:y": "U2", "b": 2})
    );

    let same_user = svc
        .create_session(app, "u1", Some("s2"), StateMap::new())
        .await
        .unwrap();
    assert_eq!(state_of(&same_user), json!({"app:x": "A2", "user:y": "U2"}));
    let other_user = svc
        .create_session(app, "u2", None, StateMap::new())
        .await
        .unwrap();
    assert_eq!(state_of(&other_user), json!({"app:x": "A2"}));

    s1.begin_invocation();
    assert_eq!(s1.get_state("temp:t2"), None);
    let reread = svc.get_session(app, "u1", "s1").await.unwrap().unwrap();
    assert_eq!(reread.get_state("b"), Some(json!(2)));
    assert_eq!(reread.get_state("temp:t2"), None);
    assert_eq!(reread.lock().events.len(), 1);
    assert_eq!(*reread.lock().events[0], *stored);
}

/// src/session/tests.rs `app_state_written_elsewhere_shows_on_next_read`.
async fn app_state_elsewhere(svc: &dyn SessionService, app: &str) {
    let s1 = svc
        .create_session(app, "u1", Some("s1"), StateMap::new())
        .await
        .unwrap();
    let s2 = svc
        .create_session(app, "u2", Some("s2"), StateMap::new())
        .await
        .unwrap();
    svc.append_event(&s2, event_with_delta(json!({"app:n": 5})))
        .await
        .unwrap();
    assert_eq!(s1.get_state("app:n"), None);
    let s1 = svc.get_session(app, "u1", "s1").await.unwrap().unwrap();
    assert_eq!(s1.get_state("app:n"), Some(json!(5)));
}

/// src/session/tests.rs `duplicate_session_id_is_rejected`.
async fn duplicate_id(svc: &dyn SessionService, app: &str) {
    svc.create_session(app, "u", Some("x"), StateMap::new())
        .await
        .unwrap();
    let err = svc
        .create_session(app, "u", Some("x"), StateMap::new())
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::AlreadyExists { .. }), "{err}");
}

/// Partial events reach neither the handle nor the database.
async fn partial_never_stored(url: &str, app: &str) {
    let svc = connect(url).await;
    let s = svc
        .create_session(app, "u", Some("p"), StateMap::new())
        .await
        .unwrap();
    let mut e = event_with_delta(json!({"k": 1, "app:k": 1}));
    e.partial = Some(true);
    let returned = svc.append_event(&s, e.clone()).await.unwrap();
    assert_eq!(*returned, e, "a partial event is returned untouched");
    assert!(s.lock().events.is_empty());
    assert_eq!(s.get_state("k"), None);

    let other = connect(url).await;
    let reloaded = other.get_session(app, "u", "p").await.unwrap().unwrap();
    assert!(reloaded.lock().events.is_empty());
    assert_eq!(state_of(&reloaded), json!({}));
    let summary = &other.list_session_summaries(app, "u").await.unwrap()[0];
    assert_eq!(summary.event_count, 0);
}

/// A second service on the same database (another process) sees the same events, in
/// order, and the same state, without `temp:` keys.
async fn reload_elsewhere(url: &str, app: &str) {
    let svc = connect(url).await;
    let h = svc
        .create_session(
            app,
            "u",
            Some("r"),
            map(json!({"z": {"nested": [1, 2]}, "a": "first", "user:lang": "fr"})),
        )
        .await
        .unwrap();
    let user = Event::new("e-r", "user").with_content(Content::text(Role::User, "hello"));
    let mut call = event_with_delta(json!({"temp:scratch": true, "count": 1}));
    call.content = Some(Content::new(
        Role::Model,
        vec![Part::function_call(FunctionCall {
            id: Some("adk-1".into()),
            args: json!({"q": "x", "b": 2, "a": 1}),
            name: "lookup".into(),
        })],
    ));
    call.long_running_tool_ids = Some(Box::default());
    let mut reply = event_with_delta(json!({"count": 2, "app:hits": 1}));
    reply.content = Some(Content::text(Role::Model, "done"));
    reply.branch = Some("root.child".into());
    // Committed out of timestamp order: storage keeps commit order.
    reply.timestamp = user.timestamp - 10.0;
    for e in [user, call, reply] {
        svc.append_event(&h, e).await.unwrap();
    }
    assert_eq!(h.get_state("temp:scratch"), Some(json!(true)));

    let other = connect(url).await;
    let r = other.get_session(app, "u", "r").await.unwrap().unwrap();
    let (live, loaded) = (h.lock().clone(), r.lock().clone());
    assert_eq!(loaded.events.len(), 3);
    for (a, b) in live.events.iter().zip(&loaded.events) {
        assert_eq!(**a, **b);
    }
    assert_eq!(
        Value::Object(loaded.state),
        json!({"z": {"nested": [1, 2]}, "a": "first", "count": 2,
               "app:hits": 1, "user:lang": "fr"}),
        "session keys keep their order, then app:, then user:"
    );
    assert!(loaded.temp_state.is_empty());
    assert_eq!(loaded.last_update_time, live.last_update_time);
    assert!(
        loaded.events[1]
            .actions
            .state_delta
            .get("temp:scratch")
            .is_none()
    );

    // The reloaded handle is current: it can append, and then the first one is stale.
    other
        .append_event(&r, event_with_delta(json!({"count": 3})))
        .await
        .unwrap();
    let err = svc
        .append_event(&h, event_with_delta(json!({"count": 4})))
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::Stale { .. }), "{err}");
}

/// Two services (two processes) on one database: an append through a handle loaded before
/// another process appended is rejected with ADK's message and changes nothing.
async fn stale_rejected(url: &str, app: &str) {
    let a = connect(url).await;
    let b = connect(url).await;
    let ha = a
        .create_session(app, "u", Some("st"), map(json!({"k": 0})))
        .await
        .unwrap();
    let hb = b.get_session(app, "u", "st").await.unwrap().unwrap();

    a.append_event(&ha, event_with_delta(json!({"k": 1, "app:v": 1})))
        .await
        .unwrap();

    let before = hb.lock().clone();
    let err = b
        .append_event(
            &hb,
            event_with_delta(json!({"k": 2, "app:v": 2, "temp:t": 1})),
        )
        .await
        .unwrap_err();
    match &err {
        SessionError::Stale { session_id } => assert_eq!(session_id, "st"),
        other => panic!("expected Stale, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "The session has been modified in storage since it was loaded. \
         Please reload the session before appending more events."
    );
    let after = hb.lock().clone();
    assert_eq!(after.events.len(), before.events.len());
    assert_eq!(after.state, before.state);
    assert!(after.temp_state.is_empty());
    assert_eq!(after.last_update_time, before.last_update_time);

    // Nothing of the rejected event reached storage.
    let fresh = b.get_session(app, "u", "st").await.unwrap().unwrap();
    assert_eq!(fresh.lock().events.len(), 1);
    assert_eq!(state_of(&fresh), json!({"k": 1, "app:v": 1}));
    // After a reload, B appends fine, and now A's handle is the stale one.
    b.append_event(&fresh, event_with_delta(json!({"k": 2})))
        .await
        .unwrap();
    let err = a
        .append_event(&ha, event_with_delta(json!({"k": 3})))
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::Stale { .. }), "{err}");

    // Two handles of one session in one service: the older one is stale too.
    let h1 = a.get_session(app, "u", "st").await.unwrap().unwrap();
    let h2 = a.get_session(app, "u", "st").await.unwrap().unwrap();
    a.append_event(&h1, event_with_delta(json!({})))
        .await
        .unwrap();
    let err = a
        .append_event(&h2, event_with_delta(json!({})))
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::Stale { .. }), "{err}");
}

/// Concurrent appends through one handle of one service take turns; none is stale.
async fn concurrent_appends_one_handle(url: &str, app: &str) {
    let svc = connect(url).await;
    let h = svc
        .create_session(app, "u", Some("c"), StateMap::new())
        .await
        .unwrap();
    let appends = (0..8).map(|i| svc.append_event(&h, event_with_delta(json!({ "k": i }))));
    for r in futures::future::join_all(appends).await {
        r.unwrap();
    }
    let reloaded = connect(url)
        .await
        .get_session(app, "u", "c")
        .await
        .unwrap()
        .unwrap();
    let ids = |h: &SessionHandle| -> Vec<Box<str>> {
        h.lock().events.iter().map(|e| e.id.clone()).collect()
    };
    assert_eq!(ids(&reloaded).len(), 8);
    assert_eq!(ids(&reloaded), ids(&h));
    assert_eq!(reloaded.get_state("k"), h.get_state("k"));
}

/// Listing and deleting, plus what the CLI's `sessions list` needs.
async fn list_and_delete(url: &str, app: &str) {
    let svc = connect(url).await;
    for id in ["b", "a", "c"] {
        svc.create_session(app, "u", Some(id), StateMap::new())
            .await
            .unwrap();
    }
    svc.create_session(app, "other", Some("z"), StateMap::new())
        .await
        .unwrap();
    let b = svc.get_session(app, "u", "b").await.unwrap().unwrap();
    for i in 0..3 {
        svc.append_event(&b, event_with_delta(json!({ "i": i })))
            .await
            .unwrap();
    }
    assert_eq!(svc.list_sessions(app, "u").await.unwrap(), ["a", "b", "c"]);

    let summaries = svc.list_session_summaries(app, "u").await.unwrap();
    let counts: Vec<(&str, u64)> = summaries
        .iter()
        .map(|s| (s.id.as_str(), s.event_count))
        .collect();
    assert_eq!(counts, [("a", 0), ("b", 3), ("c", 0)]);
    assert_eq!(summaries[1].update_time, b.lock().last_update_time);
    assert!(summaries[1].update_time > summaries[1].create_time);

    let all: Vec<SessionKey> = svc
        .list_all_sessions()
        .await
        .unwrap()
        .into_iter()
        .filter(|k| k.app_name == app)
        .collect();
    let names: Vec<(&str, &str)> = all
        .iter()
        .map(|k| (k.user_id.as_str(), k.session_id.as_str()))
        .collect();
    assert_eq!(names, [("other", "z"), ("u", "a"), ("u", "b"), ("u", "c")]);

    svc.delete_session(app, "u", "b").await.unwrap();
    svc.delete_session(app, "u", "missing").await.unwrap();
    assert!(svc.get_session(app, "u", "b").await.unwrap().is_none());
    assert_eq!(svc.list_sessions(app, "u").await.unwrap(), ["a", "c"]);
    // Its events went with it: a new session of the same id starts empty.
    let again = svc
        .create_session(app, "u", Some("b"), StateMap::new())
        .await
        .unwrap();
    let again_read = svc.get_session(app, "u", "b").await.unwrap().unwrap();
    assert!(again_read.lock().events.is_empty());
    assert_eq!(again_read.get_state("i"), None);
    // Appending through a handle of a deleted session fails instead of resurrecting it.
    svc.delete_session(app, "u", "b").await.unwrap();
    let err = svc
        .append_event(&again, event_with_delta(json!({})))
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::NotFound { .. }), "{err}");
}

// ---------------------------------------------------------------------------------------
// kill -9
// ---------------------------------------------------------------------------------------

/// Kills the child if the test ends before it does.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `sql_append_child` example, which `cargo test` builds beside the test binaries.
fn append_child() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().and_then(Path::parent).unwrap();
    let child = debug
        .join("examples")
        .join(format!("sql_append_child{}", std::env::consts::EXE_SUFFIX));
    assert!(
        child.exists(),
        "{} is missing: run `cargo test`, which builds the examples",
        child.display()
    );
    child
}

/// Events a child process committed survive its SIGKILL.
async fn kill9(url: &str, app: &str) {
    kill9_after(url, app, 20).await;
}

/// [`kill9`] after `n` appends.
async fn kill9_after(url: &str, app: &str, n: u32) {
    let mut child = ChildGuard(
        Command::new(append_child())
            .args([url, app, &n.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let want = format!("appended {n}");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line == want => break,
            Ok(_) => {}
            Err(e) => panic!("the child never reported {n} appended events: {e}"),
        }
    }
    child.0.kill().unwrap(); // SIGKILL
    let status = child.0.wait().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "{status:?}");
    }

    let svc = connect(url).await;
    let h = svc.get_session(app, "u", "killed").await.unwrap().unwrap();
    let texts: Vec<String> = h.lock().events.iter().filter_map(|e| e.text()).collect();
    let expected: Vec<String> = (1..=n).map(|i| format!("event {i}")).collect();
    assert_eq!(texts, expected);
    assert_eq!(state_of(&h), json!({"n": n, "app:n": n, "user:n": n}));
}

// ---------------------------------------------------------------------------------------
// SQLite
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn in_memory_parity_of_the_shared_scenarios() {
    let mem = InMemorySessionService::new();
    scopes(&mem, "scopes").await;
    app_state_elsewhere(&mem, "elsewhere").await;
    duplicate_id(&mem, "dup").await;
}

#[tokio::test]
async fn sqlite_scopes() {
    let dir = tempfile::tempdir().unwrap();
    scopes(&connect(&sqlite_url(&dir)).await, "app").await;
}

#[tokio::test]
async fn sqlite_app_state_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    app_state_elsewhere(&connect(&sqlite_url(&dir)).await, "app").await;
}

#[tokio::test]
async fn sqlite_duplicate_id() {
    let dir = tempfile::tempdir().unwrap();
    duplicate_id(&connect(&sqlite_url(&dir)).await, "app").await;
}

#[tokio::test]
async fn sqlite_partial_never_stored() {
    let dir = tempfile::tempdir().unwrap();
    partial_never_stored(&sqlite_url(&dir), "app").await;
}

#[tokio::test]
async fn sqlite_reload_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    reload_elsewhere(&sqlite_url(&dir), "app").await;
}

#[tokio::test]
async fn sqlite_stale_rejected() {
    let dir = tempfile::tempdir().unwrap();
    stale_rejected(&sqlite_url(&dir), "app").await;
}

#[tokio::test]
async fn sqlite_concurrent_appends_one_handle() {
    let dir = tempfile::tempdir().unwrap();
    concurrent_appends_one_handle(&sqlite_url(&dir), "app").await;
}

#[tokio::test]
async fn sqlite_list_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    list_and_delete(&sqlite_url(&dir), "app").await;
}

#[tokio::test]
async fn sqlite_kill9() {
    let dir = tempfile::tempdir().unwrap();
    kill9(&sqlite_url(&dir), "app").await;
}

/// Killed after 1,500 commits (some 7,000 WAL pages): background checkpoints ran and may
/// be running when the process dies; every commit is still there.
#[tokio::test]
async fn sqlite_kill9_while_checkpointing() {
    let dir = tempfile::tempdir().unwrap();
    kill9_after(&sqlite_url(&dir), "app", 1_500).await;
}

#[tokio::test]
async fn sqlite_memory_url_is_private_and_works() {
    let svc = connect("sqlite::memory:").await;
    scopes(&svc, "app").await;
    assert!(
        connect("sqlite::memory:")
            .await
            .list_all_sessions()
            .await
            .unwrap()
            .is_empty()
    );
}

/// What the tables hold: session state without prefixes, scoped state without prefixes,
/// camelCase event JSON, times in microseconds, schema version 2. Read with sqlx directly.
#[tokio::test]
async fn sqlite_storage_layout() {
    use sqlx::Row;
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let svc = connect(&url).await;
    let h = svc
        .create_session("app", "u", Some("s"), map(json!({"a": 1, "app:x": 1})))
        .await
        .unwrap();
    let mut e = event_with_delta(json!({"b": 2, "user:y": 2, "temp:t": 3}));
    e.long_running_tool_ids = Some(Box::default());
    svc.append_event(&h, e).await.unwrap();
    svc.close().await;

    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let row = sqlx::query("SELECT state, update_time FROM sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    let state: String = row.get(0);
    assert_eq!(state, r#"{"a":1,"b":2}"#);
    let update_time: i64 = row.get(1);
    assert_eq!(update_time as f64 / 1e6, h.lock().last_update_time);
    let app: String = sqlx::query_scalar("SELECT state FROM app_states")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(app, r#"{"x":1}"#);
    let user: String = sqlx::query_scalar("SELECT state FROM user_states")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(user, r#"{"y":2}"#);
    let event: String = sqlx::query_scalar("SELECT event_data FROM events")
        .fetch_one(&pool)
        .await
        .unwrap();
    let event: Value = serde_json::from_str(&event).unwrap();
    assert_eq!(event["actions"]["stateDelta"], json!({"b": 2, "user:y": 2}));
    assert_eq!(event["invocationId"], json!("e-1"));
    assert_eq!(event["longRunningToolIds"], json!([]));
    let version: i64 = sqlx::query_scalar("SELECT MAX(version) FROM schema_version")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(version, 2);
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(mode, "wal");

    // A database from a newer adk-flow is refused, not misread.
    sqlx::query("INSERT INTO schema_version (version, applied_time) VALUES (99, 0)")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let err = SqlSessionService::connect(&url).await.unwrap_err();
    assert!(
        matches!(
            err,
            SessionError::SchemaTooNew {
                found: 99,
                supported: 2
            }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn bad_urls_are_reported_without_passwords() {
    let err = SqlSessionService::connect("mysql://root:hunter2@localhost/x")
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::UnsupportedUrl { .. }), "{err}");
    assert!(!err.to_string().contains("hunter2"), "{err}");

    // Nothing listens on port 1.
    let err = SqlSessionService::connect("postgres://bob:hunter2@127.0.0.1:1/x?connect_timeout=5")
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::Connect { .. }), "{err}");
    let text = format!("{err} {err:?}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.contains("postgres://bob:[REDACTED]@127.0.0.1:1/x"),
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------
// PostgreSQL
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_scenarios() {
    let t0 = Instant::now();
    let server = tokio::task::spawn_blocking(PgServer::start).await.unwrap();
    let started = t0.elapsed();
    let url = server.url.as_str();
    let svc = connect(url).await;
    scopes(&svc, "scopes").await;
    app_state_elsewhere(&svc, "elsewhere").await;
    duplicate_id(&svc, "dup").await;
    partial_never_stored(url, "partial").await;
    reload_elsewhere(url, "reload").await;
    stale_rejected(url, "stale").await;
    concurrent_appends_one_handle(url, "concurrent").await;
    list_and_delete(url, "list").await;
    kill9(url, "kill9").await;
    crate::sessions_deltas::deltas(&svc, "deltas").await;
    // A second connect finds the schema in place.
    let again = connect(url).await;
    assert!(again.list_all_sessions().await.unwrap().len() >= 10);
    assert!(format!("{again:?}").contains("postgres://postgres@127.0.0.1:"));
    svc.close().await;
    again.close().await;
    eprintln!(
        "postgres_scenarios: server up in {:.1} s, scenarios took {:.1} s",
        started.as_secs_f64(),
        (t0.elapsed() - started).as_secs_f64()
    );
    drop(server);
}
