use super::*;
use crate::event::{Part, Role};
use serde_json::json;

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

fn texts(entries: &[MemoryEntry]) -> Vec<String> {
    entries.iter().map(MemoryEntry::text).collect()
}

#[test]
fn words_are_letter_and_digit_runs_lowercased() {
    assert_eq!(
        words("Order #42 was PAID, thanks! Café-au-lait."),
        ["order", "42", "was", "paid", "thanks", "café", "au", "lait"]
    );
    assert!(words("?!  ...").is_empty());
}

#[test]
fn an_entry_has_adks_shape() {
    let entry = MemoryEntry::new(
        Content::text(Role::User, "I like tea"),
        "user",
        1_795_297_354.28,
    );
    assert_eq!(
        serde_json::to_value(&entry).unwrap(),
        json!({
            "content": {"parts": [{"text": "I like tea"}], "role": "user"},
            "custom_metadata": {},
            "author": "user",
            "timestamp": "2026-11-21T21:42:34.280000"
        })
    );
}

#[tokio::test]
async fn search_is_scoped_to_app_and_user() {
    let store = InMemoryMemoryService::new();
    store
        .add_events(
            &key("app", "alice", "s1"),
            &[said("user", "My cat is called Tom", 1.0)],
        )
        .await
        .unwrap();
    store
        .add_events(
            &key("app", "bob", "s2"),
            &[said("user", "My cat is called Felix", 2.0)],
        )
        .await
        .unwrap();
    store
        .add_events(
            &key("other", "alice", "s3"),
            &[said("user", "My cat is called Kitty", 3.0)],
        )
        .await
        .unwrap();
    let search = |user| SearchRequest {
        app: "app",
        user,
        query: "what is my CAT called?",
        not_before: None,
    };
    assert_eq!(
        texts(&store.search(&search("alice")).await.unwrap()),
        ["My cat is called Tom"]
    );
    assert_eq!(
        texts(&store.search(&search("bob")).await.unwrap()),
        ["My cat is called Felix"]
    );
    assert!(store.search(&search("carol")).await.unwrap().is_empty());
}

#[tokio::test]
async fn events_without_text_are_skipped_and_none_is_added_twice() {
    let store = InMemoryMemoryService::new();
    let k = key("app", "u", "s");
    let mut call = Event::new("e-1", "agent");
    call.content = Some(Content::new(
        Role::Model,
        vec![Part::function_call(crate::event::FunctionCall {
            id: None,
            args: json!({}),
            name: "lookup".into(),
        })],
    ));
    let first = vec![said("user", "hello there", 1.0), Arc::new(call)];
    assert_eq!(store.add_events(&k, &first).await.unwrap(), 1);
    let mut again = first.clone();
    again.push(said("agent", "hello back", 2.0));
    assert_eq!(store.add_events(&k, &again).await.unwrap(), 1);
    assert_eq!(store.list(None, None).await.unwrap().len(), 2);
}

#[tokio::test]
async fn forget_and_retention() {
    let store: Arc<dyn MemoryService> = Arc::new(InMemoryMemoryService::new());
    let old = now() - 10.0 * 86_400.0;
    store
        .add_events(&key("app", "u", "s1"), &[said("user", "old tea", old)])
        .await
        .unwrap();
    store
        .add_events(&key("app", "u", "s2"), &[said("user", "new tea", now())])
        .await
        .unwrap();
    let memory = Memory::new(
        Arc::clone(&store),
        MemoryPolicy {
            add_session: AddSession::AfterInvocation,
            retention: Some(Duration::from_secs(7 * 86_400)),
        },
    );
    assert_eq!(
        texts(&memory.search("app", "u", "tea").await.unwrap()),
        ["new tea"]
    );
    memory
        .add_events(&key("app", "u", "s2"), &[said("agent", "more tea", now())])
        .await
        .unwrap();
    // Adding purged the expired memory for good.
    assert_eq!(store.list(Some("app"), None).await.unwrap().len(), 2);
    let forgotten = store
        .forget(&Forget {
            app: "app",
            user: "u",
            session: Some("s2"),
        })
        .await
        .unwrap();
    assert_eq!(forgotten, 2);
    assert!(store.list(None, None).await.unwrap().is_empty());
}
