//! Memory: the three stores against one set of scenarios (scoping above all: one user's
//! memories never reach another user's search), then `load_memory` and `preload_memory`
//! end to end through `adk-flow run`, and the `adk-flow memory` commands.

use crate::common::pg::PgServer;
use crate::common::{self, bin};
use adk_flow::event::{Content, Event, Role};
use adk_flow::memory::{
    Forget, InMemoryMemoryService, MemoryEntry, MemoryService, SearchRequest, SqlMemoryService,
};
use adk_flow::session::SessionKey;
use serde_json::{Value, json};
use std::sync::Arc;

fn key(app: &str, user: &str, session: &str) -> SessionKey {
    SessionKey {
        app_name: app.into(),
        user_id: user.into(),
        session_id: session.into(),
    }
}

fn said(author: &str, text: &str, at: f64) -> Arc<Event> {
    let role = if author == "user" {
        Role::User
    } else {
        Role::Model
    };
    let mut e = Event::new("e-1", author).with_content(Content::text(role, text));
    e.timestamp = at;
    Arc::new(e)
}

async fn search(store: &dyn MemoryService, app: &str, user: &str, query: &str) -> Vec<String> {
    let mut found: Vec<String> = store
        .search(&SearchRequest {
            app,
            user,
            query,
            not_before: None,
        })
        .await
        .unwrap()
        .iter()
        .map(MemoryEntry::text)
        .collect();
    found.sort();
    found
}

/// Every store behaves the same on these (in-memory order aside, so results are sorted).
async fn scenarios(store: &dyn MemoryService, app: &str) {
    let other_app = format!("{app}_other");
    let alice = [
        said("user", "My cat is called Tom.", 100.0),
        said("helper", "Tom is a fine name for a cat!", 101.0),
    ];
    assert_eq!(
        store
            .add_events(&key(app, "alice", "a1"), &alice)
            .await
            .unwrap(),
        2
    );
    store
        .add_events(
            &key(app, "bob", "b1"),
            &[said("user", "My cat is called Felix.", 102.0)],
        )
        .await
        .unwrap();
    store
        .add_events(
            &key(&other_app, "alice", "x1"),
            &[said("user", "My cat is called Kitty.", 103.0)],
        )
        .await
        .unwrap();

    // Scoping: by user, and by app.
    assert_eq!(
        search(store, app, "alice", "what is my CAT called?").await,
        ["My cat is called Tom.", "Tom is a fine name for a cat!"]
    );
    assert_eq!(
        search(store, app, "bob", "cat").await,
        ["My cat is called Felix."]
    );
    assert_eq!(
        search(store, &other_app, "alice", "cat").await,
        ["My cat is called Kitty."]
    );
    assert!(search(store, app, "carol", "cat").await.is_empty());
    // A query naming another user's words finds nothing of theirs.
    assert!(search(store, app, "alice", "Felix Kitty").await.is_empty());
    // Any word matches; case and punctuation do not matter; words with no match are fine.
    assert_eq!(
        search(store, app, "bob", "FELIX?! zebra").await,
        ["My cat is called Felix."]
    );
    // Nothing that looks like query syntax does anything.
    assert!(
        search(store, app, "alice", "\" OR * NEAR( -")
            .await
            .is_empty()
    );
    assert!(search(store, app, "alice", "").await.is_empty());

    // The entry carries ADK's fields.
    let found = store
        .search(&SearchRequest {
            app,
            user: "bob",
            query: "felix",
            not_before: None,
        })
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&found[0]).unwrap(),
        json!({
            "content": {"parts": [{"text": "My cat is called Felix."}], "role": "user"},
            "custom_metadata": {},
            "author": "user",
            "timestamp": "1970-01-01T00:01:42"
        })
    );

    // Adding a session again adds only what is new.
    let mut longer = alice.to_vec();
    longer.push(said("user", "I also have a dog.", 104.0));
    assert_eq!(
        store
            .add_events(&key(app, "alice", "a1"), &longer)
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        search(store, app, "alice", "tom").await.len(),
        2,
        "no duplicates"
    );

    // Time filter and retention.
    let recent = store
        .search(&SearchRequest {
            app,
            user: "alice",
            query: "cat dog",
            not_before: Some(101.5),
        })
        .await
        .unwrap();
    assert_eq!(
        recent.iter().map(MemoryEntry::text).collect::<Vec<_>>(),
        ["I also have a dog."]
    );
    assert_eq!(store.forget_before(app, 101.5).await.unwrap(), 2);
    assert_eq!(
        search(store, &other_app, "alice", "cat").await.len(),
        1,
        "other apps keep theirs"
    );

    // Listing and forgetting.
    let listed = store.list(Some(app), None).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().all(|m| m.session.app_name == app));
    assert_eq!(
        store
            .forget(&Forget {
                app,
                user: "alice",
                session: Some("nope"),
            })
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        store
            .forget(&Forget {
                app,
                user: "alice",
                session: None,
            })
            .await
            .unwrap(),
        1
    );
    assert!(
        store
            .list(Some(app), Some("alice"))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn in_memory_store() {
    scenarios(&InMemoryMemoryService::new(), "app").await;
}

#[tokio::test]
async fn sqlite_store_in_the_sessions_database() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("sessions.db").display());
    // The sessions store and the memory store share the file, each with its own tables.
    let sessions = adk_flow::session::SqlSessionService::connect(&url)
        .await
        .unwrap();
    let store = SqlMemoryService::connect(&url).await.unwrap();
    scenarios(&store, "app").await;
    store.close().await;
    // Memories survive a reopen (and the schema is found in place).
    let store = SqlMemoryService::connect(&url).await.unwrap();
    store
        .add_events(
            &key("again", "u", "s"),
            &[said("user", "persisted words", 1.0)],
        )
        .await
        .unwrap();
    store.close().await;
    let store = SqlMemoryService::connect(&url).await.unwrap();
    assert_eq!(
        search(&store, "again", "u", "words").await,
        ["persisted words"]
    );
    assert!(sessions.list_all_sessions().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store() {
    let server = tokio::task::spawn_blocking(PgServer::start).await.unwrap();
    let store = SqlMemoryService::connect(&server.url).await.unwrap();
    scenarios(&store, "app").await;
    // A second connect finds the schema in place; both see the same rows.
    let again = SqlMemoryService::connect(&server.url).await.unwrap();
    again
        .add_events(&key("pg", "u", "s"), &[said("user", "shared rows", 1.0)])
        .await
        .unwrap();
    assert_eq!(search(&store, "pg", "u", "rows").await, ["shared rows"]);
    store.close().await;
    again.close().await;
    drop(server);
}

#[tokio::test]
async fn a_bad_memory_url_is_named() {
    let err = adk_flow::memory::open_memory_service("mysql://x")
        .await
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("unsupported memory store `mysql://x`"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------
// Through `adk-flow run`
// ---------------------------------------------------------------------------------------

const WORKFLOW: &str = "name: helper
instruction: Answer from memory.
tools: [{name: load_memory}, {name: preload_memory}]
memory: {add_session: after_invocation}
";

/// Runs one turn as `user` in a fresh session, the store in `dir`.
fn turn(
    dir: &std::path::Path,
    user: &str,
    script: &str,
    message: &str,
) -> (Vec<Value>, Vec<Value>) {
    std::fs::write(dir.join("script.yaml"), script).unwrap();
    let _ = std::fs::remove_file(dir.join("requests.jsonl"));
    let out = bin()
        .current_dir(dir)
        .args([
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "--json",
            "--user",
            user,
        ])
        .args(["--dump-requests", "requests.jsonl", "--message", message])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let requests = std::fs::read_to_string(dir.join("requests.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (events, requests)
}

fn system_text(request: &Value) -> String {
    request["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn load_memory_and_preload_memory_see_only_the_users_own_memories() {
    let dir = common::write_files(&[("root_agent.yaml", WORKFLOW)]);
    let d = dir.path();
    let remember = "replies:\n  helper:\n    - text: Noted, your locker code is 4417.\n";
    turn(d, "alice", remember, "My locker code is 4417.");
    turn(
        d,
        "bob",
        "replies:\n  helper:\n    - text: Noted.\n",
        "My locker is the blue one.",
    );

    let recall = "replies:\n  helper:\n    - function_call: {name: load_memory, args: {query: locker code}}\n    - text: It is 4417.\n";
    let (events, requests) = turn(d, "alice", recall, "What is my locker code?");
    let response = &events[1]["content"]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "load_memory");
    let memories = response["response"]["result"]["memories"]
        .as_array()
        .unwrap();
    let texts: Vec<&str> = memories
        .iter()
        .map(|m| m["content"]["parts"][0]["text"].as_str().unwrap())
        .collect();
    assert!(texts.contains(&"My locker code is 4417."), "{texts:?}");
    assert!(
        texts.contains(&"Noted, your locker code is 4417."),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.contains("blue")),
        "bob's memory reached alice: {texts:?}"
    );
    assert_eq!(memories[0]["custom_metadata"], json!({}));
    assert!(memories[0]["timestamp"].as_str().unwrap().contains('T'));
    // load_memory is declared and explained; preload_memory is never declared but put
    // alice's past conversation in the instruction.
    let first = &requests[0];
    let declared: Vec<&str> = first["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(declared, ["load_memory"]);
    let system = system_text(first);
    assert!(system.contains("You have memory."), "{system}");
    assert!(system.contains("<PAST_CONVERSATIONS>"), "{system}");
    assert!(system.contains("user: My locker code is 4417."), "{system}");
    assert!(!system.contains("blue"), "{system}");

    // Bob asks the same: he gets only his own.
    let (events, requests) = turn(d, "bob", recall, "What is my locker code?");
    let memories =
        &events[1]["content"]["parts"][0]["functionResponse"]["response"]["result"]["memories"];
    let text = memories.to_string();
    assert!(text.contains("blue one"), "{text}");
    assert!(!text.contains("4417"), "alice's memory reached bob: {text}");
    assert!(!system_text(&requests[0]).contains("4417"));

    // The CLI sees what the runs stored, scoped the same way.
    let out = bin()
        .current_dir(d)
        .args(["memory", "search", "locker", "--user", "bob"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(
        stdout.contains("user: My locker is the blue one."),
        "{stdout}"
    );
    assert!(!stdout.contains("4417"), "{stdout}");
}

#[test]
fn memory_settings_decide_when_sessions_are_added() {
    let never = WORKFLOW.replace("after_invocation", "never");
    let dir = common::write_files(&[("root_agent.yaml", &never)]);
    let d = dir.path();
    let (events, _) = turn(
        d,
        "alice",
        "replies:\n  helper:\n    - text: Noted.\n",
        "My locker code is 4417.",
    );
    let session = events[0]["id"].as_str().map(|_| ()).is_some();
    assert!(session);
    let list = bin()
        .current_dir(d)
        .args(["memory", "list"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).trim().is_empty());
    assert!(String::from_utf8_lossy(&list.stderr).contains("no memories"));

    // On demand: `adk-flow memory add SESSION` adds a stored session.
    let sessions = bin()
        .current_dir(d)
        .args(["sessions", "list"])
        .output()
        .unwrap();
    let listing = String::from_utf8(sessions.stdout).unwrap();
    let id = listing
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_owned();
    let add = bin()
        .current_dir(d)
        .args(["memory", "add", &id])
        .output()
        .unwrap();
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    assert!(String::from_utf8_lossy(&add.stderr).contains("added 2 memories"));
    let list = bin()
        .current_dir(d)
        .args(["memory", "list", "--json"])
        .output()
        .unwrap();
    let rows: Vec<Value> = String::from_utf8(list.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["user"], "alice");
    assert_eq!(rows[0]["app"], "helper");

    // Forgetting removes them.
    let forget = bin()
        .current_dir(d)
        .args(["memory", "forget", "--user", "alice"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&forget.stderr).contains("forgot 2 memories"));
    let add = bin()
        .current_dir(d)
        .args(["memory", "add", "no-such-session"])
        .output()
        .unwrap();
    assert_eq!(add.status.code(), Some(1));
}

#[test]
fn retention_days_must_be_positive_and_memory_is_root_only() {
    let out = common::run(
        &[
            (
                "root_agent.yaml",
                "name: a\nmemory: {retention_days: 0, add_session: sometimes}\n",
            ),
            ("script.yaml", "replies: {}\n"),
        ],
        &["--message", "hi"],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("root_agent.yaml:2:26: error: `retention_days` must be at least 1"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("sometimes"), "{}", out.stderr);
    let out = common::run(
        &[
            (
                "root_agent.yaml",
                "name: a\nsub_agents:\n  - name: b\n    memory: {add_session: never}\n",
            ),
            ("script.yaml", "replies: {}\n"),
        ],
        &["--message", "hi"],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("`memory` belongs in the workflow's root file"),
        "{}",
        out.stderr
    );
}
