//! Artifacts: named, versioned blobs (reports, files, images) saved by tools and read by
//! tools and instructions (`{artifact.NAME}`). Versions start at 0 and grow by one per save;
//! the event that saved one carries `artifactDelta: {NAME: VERSION}`. Names starting with
//! `user:` belong to the user (every session); others to one session.

mod file;
mod memory;

pub use file::FileArtifactService;
pub use memory::InMemoryArtifactService;

use async_trait::async_trait;

/// Where an artifact lives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArtifactKey {
    /// The app.
    pub app: String,
    /// The user.
    pub user: String,
    /// The session (ignored for `user:` names).
    pub session: String,
    /// The artifact's name.
    pub name: String,
}

impl ArtifactKey {
    /// Whether the artifact belongs to the user rather than one session.
    pub fn user_scoped(&self) -> bool {
        self.name.starts_with("user:")
    }
}

/// One version of an artifact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// MIME type, e.g. `text/plain`.
    pub mime_type: String,
    /// The bytes.
    pub data: Vec<u8>,
}

impl Artifact {
    /// A text artifact.
    pub fn text(mime_type: impl Into<String>, text: impl Into<String>) -> Self {
        Artifact {
            mime_type: mime_type.into(),
            data: text.into().into_bytes(),
        }
    }

    /// The content as text, when it is UTF-8.
    pub fn as_text(&self) -> Option<&str> {
        std::str::from_utf8(&self.data).ok()
    }
}

/// A failure of an artifact store.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The name cannot be stored (empty, `..`, control characters).
    #[error("invalid artifact name {0:?}")]
    InvalidName(String),
    /// The store failed.
    #[error("artifact store")]
    Io(#[from] std::io::Error),
}

/// Where artifacts are kept.
#[async_trait]
pub trait ArtifactService: Send + Sync {
    /// Saves a new version and returns its number.
    async fn save(&self, key: &ArtifactKey, artifact: Artifact) -> Result<u64, ArtifactError>;
    /// A version (the latest when `None`), or `None` when there is none.
    async fn load(
        &self,
        key: &ArtifactKey,
        version: Option<u64>,
    ) -> Result<Option<Artifact>, ArtifactError>;
    /// The versions of an artifact, oldest first.
    async fn versions(&self, key: &ArtifactKey) -> Result<Vec<u64>, ArtifactError>;
    /// Names visible in a session: its own and the user's.
    async fn list(
        &self,
        app: &str,
        user: &str,
        session: &str,
    ) -> Result<Vec<String>, ArtifactError>;
    /// Deletes every version.
    async fn delete(&self, key: &ArtifactKey) -> Result<(), ArtifactError>;
}

/// Rejects names that could escape a directory or break a path.
pub(crate) fn check_name(name: &str) -> Result<(), ArtifactError> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.contains("..")
        || name.chars().any(|c| c.is_control() || c == '\\');
    if bad {
        Err(ArtifactError::InvalidName(name.to_owned()))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
