//! Artifacts on disk: `ROOT/APP/USER/SESSION/NAME/VERSION/` holding `data` and
//! `meta.json` (`user:` names under `ROOT/APP/USER/_user/`). Every id and name is one
//! percent-encoded path segment (see [`crate::segment::encode`]), so none can leave its folder.

use super::{Artifact, ArtifactError, ArtifactKey, ArtifactService, check_name};
use crate::segment::{decode, encode};
use async_trait::async_trait;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Keeps artifacts under a directory.
pub struct FileArtifactService {
    root: PathBuf,
}

impl FileArtifactService {
    /// A store rooted at `root` (created on first save).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FileArtifactService { root: root.into() }
    }

    fn dir(&self, key: &ArtifactKey) -> PathBuf {
        let scope = if key.user_scoped() {
            "_user".to_owned()
        } else {
            encode(&key.session)
        };
        self.root
            .join(encode(&key.app))
            .join(encode(&key.user))
            .join(scope)
            .join(encode(&key.name))
    }
}

async fn versions_in(dir: &Path) -> Result<Vec<u64>, ArtifactError> {
    let mut out = Vec::new();
    let mut entries = match tokio::fs::read_dir(dir).await {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e.into()),
    };
    while let Some(entry) = entries.next_entry().await? {
        if let Some(v) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u64>().ok())
        {
            out.push(v);
        }
    }
    out.sort_unstable();
    Ok(out)
}

async fn names_in(dir: &Path, out: &mut Vec<String>) -> Result<(), ArtifactError> {
    let mut entries = match tokio::fs::read_dir(dir).await {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    while let Some(entry) = entries.next_entry().await? {
        if let Some(n) = entry.file_name().to_str() {
            out.push(decode(n));
        }
    }
    Ok(())
}

#[async_trait]
impl ArtifactService for FileArtifactService {
    async fn save(&self, key: &ArtifactKey, artifact: Artifact) -> Result<u64, ArtifactError> {
        check_name(&key.name)?;
        let dir = self.dir(key);
        tokio::fs::create_dir_all(&dir).await?;
        let next = versions_in(&dir).await?.last().map_or(0, |v| v + 1);
        // Write into a temporary directory, then rename: a reader never sees half a version.
        let tmp = dir.join(format!(".tmp-{next}-{}", uuid::Uuid::new_v4()));
        tokio::fs::create_dir_all(&tmp).await?;
        tokio::fs::write(tmp.join("data"), &artifact.data).await?;
        let meta = json!({"mimeType": artifact.mime_type, "size": artifact.data.len()});
        tokio::fs::write(tmp.join("meta.json"), meta.to_string()).await?;
        tokio::fs::rename(&tmp, dir.join(next.to_string())).await?;
        Ok(next)
    }

    async fn load(
        &self,
        key: &ArtifactKey,
        version: Option<u64>,
    ) -> Result<Option<Artifact>, ArtifactError> {
        check_name(&key.name)?;
        let dir = self.dir(key);
        let version = match version {
            Some(v) => v,
            None => match versions_in(&dir).await?.last() {
                Some(v) => *v,
                None => return Ok(None),
            },
        };
        let vdir = dir.join(version.to_string());
        let data = match tokio::fs::read(vdir.join("data")).await {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let meta = tokio::fs::read_to_string(vdir.join("meta.json"))
            .await
            .unwrap_or_default();
        let mime_type = serde_json::from_str::<serde_json::Value>(&meta)
            .ok()
            .and_then(|m| m["mimeType"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "application/octet-stream".into());
        Ok(Some(Artifact { mime_type, data }))
    }

    async fn versions(&self, key: &ArtifactKey) -> Result<Vec<u64>, ArtifactError> {
        check_name(&key.name)?;
        versions_in(&self.dir(key)).await
    }

    async fn list(
        &self,
        app: &str,
        user: &str,
        session: &str,
    ) -> Result<Vec<String>, ArtifactError> {
        let base = self.root.join(encode(app)).join(encode(user));
        let mut names = Vec::new();
        names_in(&base.join(encode(session)), &mut names).await?;
        names_in(&base.join("_user"), &mut names).await?;
        names.sort();
        Ok(names)
    }

    async fn delete(&self, key: &ArtifactKey) -> Result<(), ArtifactError> {
        check_name(&key.name)?;
        match tokio::fs::remove_dir_all(self.dir(key)).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }
}
