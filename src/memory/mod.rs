//! Memory: what a user said and was told in earlier sessions, searchable from later ones
//! (ADK's `MemoryService`, the third service beside sessions and artifacts).
//!
//! A session's events are added to memory (after each invocation, on demand, or never, as
//! the workflow's `memory.add_session` says); the `load_memory` and `preload_memory` tools
//! search it with a query. Memories are strictly scoped: every call names the app and the
//! user, and no search ever returns another user's or another app's memories.
//!
//! Matching is by words, the same in every store: a word is a run of letters and digits,
//! compared lowercased, and a memory matches when it shares any word with the query (ADK's
//! in-memory service matches the same way, on letters only). The SQL stores rank matches by
//! relevance (SQLite FTS5's bm25, PostgreSQL's `ts_rank`); the in-memory store returns them
//! in the order they were added.
//!
//! - `in_memory.rs`: [`InMemoryMemoryService`] (tests, `--db memory`);
//! - `sql/`: [`SqlMemoryService`], SQLite with FTS5 and PostgreSQL full-text search.

mod in_memory;
mod sql;

pub use in_memory::InMemoryMemoryService;
pub use sql::SqlMemoryService;

use crate::event::{Content, Event, now};
use crate::session::{Session, SessionKey};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// One memory as a search returns it, in ADK's `MemoryEntry` shape (what `load_memory`
/// hands the model): the event's content, who said it and when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEntry {
    /// The remembered content (the event's content, as it was committed).
    pub content: Content,
    /// Metadata of the entry (always empty here; ADK's field).
    #[serde(default)]
    pub custom_metadata: Map<String, Value>,
    /// The entry's id; search results leave it out, as ADK's in-memory service does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The author of the remembered event (`user` or an agent name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// When the event happened: ISO 8601 without an offset, UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

impl MemoryEntry {
    /// The entry for a remembered event.
    pub fn new(content: Content, author: &str, timestamp: f64) -> Self {
        MemoryEntry {
            content,
            custom_metadata: Map::new(),
            id: None,
            author: Some(author.to_owned()),
            timestamp: Some(crate::time::UtcTime::from_unix(timestamp).isoformat()),
        }
    }

    /// The entry's text parts joined with spaces (ADK's `extract_text`).
    pub fn text(&self) -> String {
        content_text(&self.content).unwrap_or_default()
    }
}

/// One stored memory as `adk-flow memory list` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMemory {
    /// The session it came from.
    pub session: SessionKey,
    /// The id of the remembered event.
    pub event_id: String,
    /// Its author.
    pub author: String,
    /// When it happened, seconds since the Unix epoch.
    pub timestamp: f64,
    /// Its text.
    pub text: String,
}

/// What to forget: one user's memories of an app, or only those of one session.
#[derive(Debug, Clone, Copy)]
pub struct Forget<'a> {
    /// The app.
    pub app: &'a str,
    /// The user.
    pub user: &'a str,
    /// Only this session's memories, when set.
    pub session: Option<&'a str>,
}

/// A search of one user's memories of one app.
#[derive(Debug, Clone, Copy)]
pub struct SearchRequest<'a> {
    /// The app.
    pub app: &'a str,
    /// The user.
    pub user: &'a str,
    /// Free text; its words are matched.
    pub query: &'a str,
    /// Only memories at or after this time (seconds since the epoch), when set.
    pub not_before: Option<f64>,
}

/// Failures of a memory store.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The URL names no supported store.
    #[error("unsupported memory store `{url}`: expected sqlite:PATH, postgres://... or memory")]
    UnsupportedUrl {
        /// The URL, password removed.
        url: String,
    },
    /// The store could not be opened (the cause says why: a bad path, a server down).
    #[error("cannot open the memory store `{url}`")]
    Open {
        /// The URL, password removed.
        url: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A database statement failed.
    #[error("memory store: cannot {operation}")]
    Database {
        /// What the store was doing.
        operation: &'static str,
        /// The driver's error.
        #[source]
        source: crate::session::DriverError,
    },
    /// Stored content could not be read back, or content could not be written as JSON.
    #[error("memory store: invalid JSON content")]
    Corrupt(#[source] serde_json::Error),
    /// The memory store was migrated by a newer adk-flow.
    #[error(
        "memory store schema version {found} is newer than this adk-flow supports ({supported})"
    )]
    SchemaTooNew {
        /// The version in the database.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
}

/// Where memories are kept. Every method is scoped by app and user (or by session, which
/// names both); implementations never mix users.
#[async_trait]
pub trait MemoryService: Send + Sync {
    /// Adds events of one session. Events without text are skipped, and an event already
    /// remembered (same session, same id) is not added twice, so adding a whole session
    /// again after more turns only adds the new events.
    ///
    /// Returns how many memories were added.
    async fn add_events(
        &self,
        session: &SessionKey,
        events: &[Arc<Event>],
    ) -> Result<usize, MemoryError>;

    /// The user's memories of the app that share a word with the query.
    async fn search(&self, request: &SearchRequest<'_>) -> Result<Vec<MemoryEntry>, MemoryError>;

    /// Every stored memory, optionally of one app and one user, oldest first.
    async fn list(
        &self,
        app: Option<&str>,
        user: Option<&str>,
    ) -> Result<Vec<StoredMemory>, MemoryError>;

    /// Removes memories; returns how many.
    async fn forget(&self, what: &Forget<'_>) -> Result<u64, MemoryError>;

    /// Removes the app's memories of events before `cutoff` (seconds since the epoch), for
    /// every user: the retention rule. Returns how many.
    async fn forget_before(&self, app: &str, cutoff: f64) -> Result<u64, MemoryError>;

    /// Adds a whole session (ADK's `add_session_to_memory`).
    async fn add_session(&self, session: &Session) -> Result<usize, MemoryError> {
        let key = SessionKey {
            app_name: session.app_name.clone(),
            user_id: session.user_id.clone(),
            session_id: session.id.clone(),
        };
        self.add_events(&key, &session.events).await
    }
}

/// Opens the memory store named by `url`: `memory` (an [`InMemoryMemoryService`]),
/// `sqlite:PATH` or `postgres://…` (a [`SqlMemoryService`]).
///
/// # Errors
/// The database cannot be opened or migrated.
pub async fn open_memory_service(url: &str) -> Result<Arc<dyn MemoryService>, MemoryError> {
    if url == "memory" {
        return Ok(Arc::new(InMemoryMemoryService::new()));
    }
    Ok(Arc::new(SqlMemoryService::connect(url).await?))
}

/// When a session is added to memory (`memory.add_session` in the workflow).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AddSession {
    /// After every invocation, the invocation's events.
    AfterInvocation,
    /// Only when asked (`adk-flow memory add`, the server's memory route), as ADK.
    #[default]
    OnDemand,
    /// Never: memory is only read.
    Never,
}

/// A workflow's memory settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryPolicy {
    /// When sessions are added.
    pub add_session: AddSession,
    /// How long memories are kept, counted from the remembered event; forever when `None`.
    pub retention: Option<Duration>,
}

/// A memory store with the app's policy: what runners and tools use.
#[derive(Clone)]
pub struct Memory {
    service: Arc<dyn MemoryService>,
    policy: MemoryPolicy,
}

impl Memory {
    /// The store with a policy.
    pub fn new(service: Arc<dyn MemoryService>, policy: MemoryPolicy) -> Self {
        Memory { service, policy }
    }

    /// A fresh, empty in-memory store that adds nothing by itself (what an AgentTool's
    /// inner run gets, as in ADK).
    pub fn scratch() -> Self {
        Memory::new(
            Arc::new(InMemoryMemoryService::new()),
            MemoryPolicy::default(),
        )
    }

    /// The policy.
    pub fn policy(&self) -> MemoryPolicy {
        self.policy
    }

    /// The store.
    pub fn service(&self) -> &Arc<dyn MemoryService> {
        &self.service
    }

    fn cutoff(&self) -> Option<f64> {
        self.policy.retention.map(|r| now() - r.as_secs_f64())
    }

    /// The user's memories that match `query`, within the retention period.
    ///
    /// # Errors
    /// The store fails.
    pub async fn search(
        &self,
        app: &str,
        user: &str,
        query: &str,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        self.service
            .search(&SearchRequest {
                app,
                user,
                query,
                not_before: self.cutoff(),
            })
            .await
    }

    /// Adds events of a session, then drops the app's memories past the retention period.
    ///
    /// # Errors
    /// The store fails.
    pub async fn add_events(
        &self,
        session: &SessionKey,
        events: &[Arc<Event>],
    ) -> Result<usize, MemoryError> {
        let added = self.service.add_events(session, events).await?;
        if let Some(cutoff) = self.cutoff() {
            self.service
                .forget_before(&session.app_name, cutoff)
                .await?;
        }
        Ok(added)
    }
}

/// The text of a content's text parts joined with spaces, or `None` when it has none.
pub(crate) fn content_text(content: &Content) -> Option<String> {
    let texts: Vec<&str> = content
        .parts
        .iter()
        .filter_map(|p| p.text.as_deref())
        .filter(|t| !t.is_empty())
        .collect();
    (!texts.is_empty()).then(|| texts.join(" "))
}

/// The words memory matches on: runs of letters and digits, lowercased, in order.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// What one event contributes to memory: its content, text and words; `None` when it has
/// no text.
pub(crate) struct Remembered<'a> {
    pub event: &'a Event,
    pub content: &'a Content,
    pub text: String,
    pub words: Vec<String>,
}

pub(crate) fn remembered(event: &Event) -> Option<Remembered<'_>> {
    if event.is_partial() {
        return None;
    }
    let content = event.content.as_ref()?;
    let text = content_text(content)?;
    let words = words(&text);
    if words.is_empty() {
        return None;
    }
    Some(Remembered {
        event,
        content,
        text,
        words,
    })
}

#[cfg(test)]
mod tests;
