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
