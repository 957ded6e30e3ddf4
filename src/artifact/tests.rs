use super::*;

fn key(session: &str, name: &str) -> ArtifactKey {
    ArtifactKey {
        app: "app".into(),
        user: "u".into(),
        session: session.into(),
        name: name.into(),
    }
}

async fn behaves_like_adk(store: &dyn ArtifactService) {
    assert_eq!(
        store
            .save(&key("s1", "report.txt"), Artifact::text("text/plain", "v0"))
            .await
            .unwrap(),
        0
    );
    assert_eq!(
        store
            .save(&key("s1", "report.txt"), Artifact::text("text/plain", "v1"))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        store
            .load(&key("s1", "report.txt"), None)
            .await
            .unwrap()
            .unwrap()
            .as_text(),
        Some("v1")
    );
    assert_eq!(
        store
            .load(&key("s1", "report.txt"), Some(0))
            .await
            .unwrap()
            .unwrap()
            .as_text(),
        Some("v0")
    );
    assert_eq!(
        store.load(&key("s2", "report.txt"), None).await.unwrap(),
        None,
        "session-scoped"
    );
    store
        .save(
            &key("s1", "user:prefs"),
            Artifact::text("application/json", "{}"),
        )
        .await
        .unwrap();
    assert!(
        store
            .load(&key("s2", "user:prefs"), None)
            .await
            .unwrap()
            .is_some(),
        "user-scoped"
    );
    assert_eq!(
        store.versions(&key("s1", "report.txt")).await.unwrap(),
        vec![0, 1]
    );
    assert_eq!(
        store.list("app", "u", "s1").await.unwrap(),
        vec!["report.txt", "user:prefs"]
    );
    assert_eq!(
        store.list("app", "u", "s2").await.unwrap(),
        vec!["user:prefs"]
    );
    store.delete(&key("s1", "report.txt")).await.unwrap();
    assert_eq!(
        store.load(&key("s1", "report.txt"), None).await.unwrap(),
        None
    );
    assert!(matches!(
        store
            .save(&key("s1", "../escape"), Artifact::text("text/plain", "x"))
            .await,
        Err(ArtifactError::InvalidName(_))
    ));
}

#[tokio::test]
async fn memory_store() {
    behaves_like_adk(&InMemoryArtifactService::new()).await;
}

#[tokio::test]
async fn file_store_keeps_versions_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    behaves_like_adk(&FileArtifactService::new(dir.path())).await;
    let again = FileArtifactService::new(dir.path());
    assert!(
        again
            .load(&key("other", "user:prefs"), None)
            .await
            .unwrap()
            .is_some()
    );
}

/// Ids that would be path tricks (`..`, `/`, NUL, empty, `_user`) stay inside the store's
/// folder, each its own place: nothing is written next to the store, and no id reads
/// another's artifacts.
#[tokio::test]
async fn hostile_ids_stay_inside_the_file_store() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let store = FileArtifactService::new(&root);
    let hostile = [
        "..",
        ".",
        "",
        "../..",
        "/etc",
        "a/../../b",
        "x\0y",
        "_user",
        "%2e%2e",
    ];
    for (i, id) in hostile.iter().enumerate() {
        let k = ArtifactKey {
            app: (*id).into(),
            user: (*id).into(),
            session: (*id).into(),
            name: format!("n{i}"),
        };
        store
            .save(&k, Artifact::text("text/plain", *id))
            .await
            .unwrap();
        assert_eq!(
            store.load(&k, None).await.unwrap().unwrap().as_text(),
            Some(*id)
        );
    }
    let outside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, vec![std::ffi::OsString::from("store")]);
    // A session named `_user` is not the user's shared folder, nor is the empty session.
    let in_session = ArtifactKey {
        app: "app".into(),
        user: "u".into(),
        session: "_user".into(),
        name: "mine".into(),
    };
    store
        .save(&in_session, Artifact::text("text/plain", "s"))
        .await
        .unwrap();
    assert_eq!(
        store.list("app", "u", "other").await.unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        store.list("app", "u", "").await.unwrap(),
        Vec::<String>::new()
    );
    // A name that is a dot segment is refused before any path is built, on every operation.
    for name in ["..", "."] {
        let k = key("s1", name);
        assert!(matches!(
            store.load(&k, None).await,
            Err(ArtifactError::InvalidName(_))
        ));
        assert!(matches!(
            store.delete(&k).await,
            Err(ArtifactError::InvalidName(_))
        ));
    }
}

#[tokio::test]
async fn the_empty_session_is_not_the_user_scope_in_memory() {
    let store = InMemoryArtifactService::new();
    store
        .save(&key("", "mine"), Artifact::text("text/plain", "x"))
        .await
        .unwrap();
    assert_eq!(
        store.list("app", "u", "other").await.unwrap(),
        Vec::<String>::new()
    );
}
