//! The SQLite store as rusqlite drives it: a database file written by the previous driver
//! (sqlx) still opens, reads and takes new commits; writers of two stores (or processes)
//! on one file wait for each other instead of failing.

use adk_flow::event::{Content, Event, Role, StateMap};
use adk_flow::memory::{MemoryService, SearchRequest, SqlMemoryService};
use adk_flow::session::{SessionService, SqlSessionService};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// `tests/fixtures/sessions/v1-sqlx.db`: written by adk-flow 9f51a5b (sqlx's SQLite
/// driver, schema version 1 of sessions and of memories) with
/// `adk-flow run workflows/support.yaml --script workflows/support.script.yaml
/// -m "Was order 42 paid?" --session s1 --user u1 --state app:plan=gold
/// --state user:name=Ann --state topic=orders`, then `adk-flow memory add s1`, then
/// checkpointed (the WAL folded into the file).
fn copy_fixture(dir: &Path) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions/v1-sqlx.db");
    let dst = dir.join("sessions.db");
    std::fs::copy(src, &dst).unwrap();
    format!("sqlite:{}", dst.display())
}

fn text_event(author: &str, text: &str, delta: Value) -> Event {
    let mut e = Event::new("e-new", author);
    e.content = Some(Content::text(Role::Model, text));
    e.actions.state_delta = delta.as_object().cloned().unwrap().into();
    e
}

#[tokio::test]
async fn a_file_written_by_the_previous_driver_opens_and_takes_commits() {
    let dir = tempfile::tempdir().unwrap();
    let url = copy_fixture(dir.path());
    let svc = SqlSessionService::connect(&url).await.unwrap();
    let h = svc
        .get_session("support_router", "u1", "s1")
        .await
        .unwrap()
        .expect("the stored session");
    {
        let s = h.lock();
        assert_eq!(s.events.len(), 7);
        assert_eq!(
            s.events.last().and_then(|e| e.text()).as_deref(),
            Some("Order 42 (19.90 EUR) was paid on 3 March 2026.")
        );
        assert_eq!(
            Value::Object(s.state.clone()),
            json!({
                "topic": "orders",
                "billing_answer": "Order 42 (19.90 EUR) was paid on 3 March 2026.",
                "app:plan": "gold",
                "user:name": "Ann"
            })
        );
    }
    let summaries = svc
        .list_session_summaries("support_router", "u1")
        .await
        .unwrap();
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0].event_count, 7);

    // A commit merges into the stored state of every scope.
    svc.append_event(
        &h,
        text_event(
            "billing",
            "anything else?",
            json!({"topic": "refunds", "app:plan": "silver", "user:seen": true, "temp:x": 1}),
        ),
    )
    .await
    .unwrap();
    svc.close().await;
    let again = SqlSessionService::connect(&url).await.unwrap();
    let h = again
        .get_session("support_router", "u1", "s1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(h.lock().events.len(), 8);
    assert_eq!(
        Value::Object(h.lock().state.clone()),
        json!({
            "topic": "refunds",
            "billing_answer": "Order 42 (19.90 EUR) was paid on 3 March 2026.",
            "app:plan": "silver",
            "user:name": "Ann",
            "user:seen": true
        })
    );
    again.close().await;

    // The memories of the same file.
    let memory = SqlMemoryService::connect(&url).await.unwrap();
    let found = memory
        .search(&SearchRequest {
            app: "support_router",
            user: "u1",
            query: "paid",
            not_before: None,
        })
        .await
        .unwrap();
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(memory.list(None, None).await.unwrap().len(), 2);
    memory.close().await;
}

/// Another connection holds the write lock for a while: an append waits for it (the busy
/// timeout) and commits, without blocking the runtime's other tasks meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_waits_for_another_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let url = format!("sqlite:{}", path.display());
    let svc = SqlSessionService::connect(&url).await.unwrap();
    let h = svc
        .create_session("app", "u", Some("s"), StateMap::new())
        .await
        .unwrap();

    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        locked_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        conn.execute_batch("COMMIT").unwrap();
    });
    locked_rx.recv().unwrap();
    let ticks = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let ticker = {
        let ticks = Arc::clone(&ticks);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                ticks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
    };
    let started = std::time::Instant::now();
    svc.append_event(&h, text_event("agent", "after the lock", json!({"k": 1})))
        .await
        .unwrap();
    let waited = started.elapsed();
    ticker.abort();
    holder.join().unwrap();
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    // Other tasks kept running while the append waited.
    assert!(
        ticks.load(std::sync::atomic::Ordering::Relaxed) >= 5,
        "{}",
        ticks.load(std::sync::atomic::Ordering::Relaxed)
    );
    let h = svc.get_session("app", "u", "s").await.unwrap().unwrap();
    assert_eq!(h.lock().events.len(), 1);
    svc.close().await;
}

/// Two stores on one file (two writers, as two processes would be) commit concurrently to
/// sessions of their own, many tasks each, and every commit lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_stores_on_one_file_commit_concurrently() {
    const SESSIONS: usize = 16;
    const EVENTS: usize = 20;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("sessions.db").display());
    let stores = [
        Arc::new(SqlSessionService::connect(&url).await.unwrap()),
        Arc::new(SqlSessionService::connect(&url).await.unwrap()),
    ];
    let mut tasks = Vec::new();
    for i in 0..SESSIONS {
        let svc = Arc::clone(&stores[i % 2]);
        tasks.push(tokio::spawn(async move {
            let id = format!("s{i}");
            let h = svc
                .create_session("app", "u", Some(&id), StateMap::new())
                .await
                .unwrap();
            for n in 0..EVENTS {
                let delta = json!({"n": n, "app:last": i, "user:count": n});
                svc.append_event(&h, text_event("agent", &format!("{n}"), delta))
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let summaries = stores[0].list_session_summaries("app", "u").await.unwrap();
    assert_eq!(summaries.len(), SESSIONS);
    assert!(
        summaries.iter().all(|s| s.event_count == EVENTS as u64),
        "{summaries:?}"
    );
    for s in &stores {
        s.close().await;
    }
}

/// A store on the SQLite file `path` with one session `s` of `events` text events of
/// `chars` characters each, committed one by one.
async fn commits_of(path: &std::path::Path, events: usize, chars: usize) -> SqlSessionService {
    let svc = SqlSessionService::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let h = svc
        .create_session("app", "u", Some("s"), StateMap::new())
        .await
        .unwrap();
    let text = "x".repeat(chars);
    for _ in 0..events {
        svc.append_event(&h, text_event("agent", &text, json!({})))
            .await
            .unwrap();
    }
    svc
}

/// Once the WAL passes 1,000 pages a thread of the store checkpoints it beside the
/// commits (the database file grows while the store is open); closing the store empties
/// a large WAL, so that the next process has little to read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_is_checkpointed_as_it_grows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    // About 4 pages per commit: some 2,400 pages in all.
    let svc = commits_of(&path, 600, 12_000).await;
    let db_len = || std::fs::metadata(&path).unwrap().len();
    let started = std::time::Instant::now();
    while db_len() < 4_000_000 && started.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(db_len() > 4_000_000, "database file of {} bytes", db_len());
    svc.close().await;
    let wal = std::fs::metadata(dir.path().join("sessions.db-wal"))
        .map(|m| m.len())
        .unwrap_or(0);
    // Emptied, or (when the WAL started over meanwhile) no larger than 2,000 pages.
    assert!(wal <= 2_000 * 4_096, "WAL of {wal} bytes after close");
    let again = SqlSessionService::connect(&format!("sqlite:{}", path.display()))
        .await
        .unwrap();
    let h = again.get_session("app", "u", "s").await.unwrap().unwrap();
    assert_eq!(h.lock().events.len(), 600);
    again.close().await;
}

/// Under continuous commits the background checkpoints never let the WAL start over;
/// past 10,000 pages the writer checkpoints itself and the WAL starts over, so it stays
/// bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wal_stays_bounded_under_continuous_commits() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    // About 13 pages per commit: some 26,000 pages in all, 2.6 times the bound.
    let svc = commits_of(&path, 2_000, 48_000).await;
    let wal = std::fs::metadata(dir.path().join("sessions.db-wal"))
        .unwrap()
        .len();
    assert!(wal < 10_100 * 4_120, "WAL of {wal} bytes");
    svc.close().await;
}

/// Schema version 2 rebuilds `events` without `AUTOINCREMENT` (one WAL page fewer per
/// append): a version-1 file keeps its rows, their `seq` and their order, and new commits
/// follow them.
#[tokio::test]
async fn a_version_1_file_migrates_to_events_without_autoincrement() {
    let dir = tempfile::tempdir().unwrap();
    let url = copy_fixture(dir.path());
    let path = dir.path().join("sessions.db");
    let rows = |conn: &rusqlite::Connection| -> Vec<(i64, String)> {
        conn.prepare("SELECT seq, id FROM events ORDER BY seq")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let table_sql = |conn: &rusqlite::Connection| -> String {
        conn.query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let before = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        assert!(table_sql(&conn).contains("AUTOINCREMENT"));
        rows(&conn)
    };
    assert_eq!(before.len(), 7);

    let svc = SqlSessionService::connect(&url).await.unwrap();
    let h = svc
        .get_session("support_router", "u1", "s1")
        .await
        .unwrap()
        .unwrap();
    svc.append_event(&h, text_event("billing", "one more", json!({})))
        .await
        .unwrap();
    svc.close().await;

    let conn = rusqlite::Connection::open(&path).unwrap();
    assert!(
        !table_sql(&conn).contains("AUTOINCREMENT"),
        "{}",
        table_sql(&conn)
    );
    let version: i64 = conn
        .query_row("SELECT MAX(version) FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 2);
    let after = rows(&conn);
    assert_eq!(after[..7], before[..]);
    assert_eq!(after.len(), 8);
    assert!(after[7].0 > before[6].0);
    let sequences: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'events'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sequences, 0);
    let indexes: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'events_by_session'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 1);
    // The memories' tables, in the same file, are untouched and still migrate on their own.
    drop(conn);
    let memory = SqlMemoryService::connect(&url).await.unwrap();
    assert_eq!(memory.list(None, None).await.unwrap().len(), 2);
    memory.close().await;
}

/// The memory store can share the session store's connections to one file (what `run`
/// does when `--memory` is the session store's): memories land in the same file, and
/// closing the memory store leaves the sessions' connections open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memories_beside_the_sessions_share_their_connections() {
    use adk_flow::session::SessionKey;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("sessions.db").display());
    let sessions = SqlSessionService::connect(&url).await.unwrap();
    let memory = SqlMemoryService::beside(&sessions)
        .await
        .unwrap()
        .expect("a SQLite store");
    let h = sessions
        .create_session("app", "u", Some("s"), StateMap::new())
        .await
        .unwrap();
    let mut e = text_event("user", "my order 42 was paid", json!({}));
    e.content = Some(Content::text(Role::User, "my order 42 was paid"));
    let stored = sessions.append_event(&h, e).await.unwrap();
    let key = SessionKey {
        app_name: "app".into(),
        user_id: "u".into(),
        session_id: "s".into(),
    };
    assert_eq!(memory.add_events(&key, &[stored]).await.unwrap(), 1);
    memory.close().await;
    // The sessions' connections are still open.
    sessions
        .append_event(&h, text_event("agent", "noted", json!({})))
        .await
        .unwrap();
    sessions.close().await;

    let again = SqlMemoryService::connect(&url).await.unwrap();
    let found = again
        .search(&SearchRequest {
            app: "app",
            user: "u",
            query: "paid",
            not_before: None,
        })
        .await
        .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    again.close().await;
}
