//! Artifacts in process memory (tests, `--db memory`).

use super::{Artifact, ArtifactError, ArtifactKey, ArtifactService, check_name};
use async_trait::async_trait;
use std::collections::HashMap;
use std::sync::Mutex;

/// (app, user, session — `None` for `user:` names, name).
type Slot = (String, String, Option<String>, String);

/// Keeps every version in memory.
#[derive(Default)]
pub struct InMemoryArtifactService {
    store: Mutex<HashMap<Slot, Vec<Artifact>>>,
}

impl InMemoryArtifactService {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

fn slot(key: &ArtifactKey) -> Slot {
    let session = (!key.user_scoped()).then(|| key.session.clone());
    (key.app.clone(), key.user.clone(), session, key.name.clone())
}

#[async_trait]
impl ArtifactService for InMemoryArtifactService {
    async fn save(&self, key: &ArtifactKey, artifact: Artifact) -> Result<u64, ArtifactError> {
        check_name(&key.name)?;
        let mut store = self.store.lock().unwrap_or_else(|e| e.into_inner());
        let versions = store.entry(slot(key)).or_default();
        versions.push(artifact);
        Ok(versions.len() as u64 - 1)
    }

    async fn load(
        &self,
        key: &ArtifactKey,
        version: Option<u64>,
    ) -> Result<Option<Artifact>, ArtifactError> {
        check_name(&key.name)?;
        let store = self.store.lock().unwrap_or_else(|e| e.into_inner());
        let Some(versions) = store.get(&slot(key)) else {
            return Ok(None);
        };
        Ok(match version {
            None => versions.last().cloned(),
            Some(v) => usize::try_from(v)
                .ok()
                .and_then(|v| versions.get(v))
                .cloned(),
        })
    }

    async fn versions(&self, key: &ArtifactKey) -> Result<Vec<u64>, ArtifactError> {
        check_name(&key.name)?;
        let store = self.store.lock().unwrap_or_else(|e| e.into_inner());
        Ok(store
            .get(&slot(key))
            .map(|v| (0..v.len() as u64).collect())
            .unwrap_or_default())
    }

    async fn list(
        &self,
        app: &str,
        user: &str,
        session: &str,
    ) -> Result<Vec<String>, ArtifactError> {
        let store = self.store.lock().unwrap_or_else(|e| e.into_inner());
        let mut names: Vec<String> = store
            .keys()
            .filter(|(a, u, s, _)| {
                a == app && u == user && s.as_deref().is_none_or(|s| s == session)
            })
            .map(|(_, _, _, n)| n.clone())
            .collect();
        names.sort();
        Ok(names)
    }

    async fn delete(&self, key: &ArtifactKey) -> Result<(), ArtifactError> {
        check_name(&key.name)?;
        self.store
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&slot(key));
        Ok(())
    }
}
