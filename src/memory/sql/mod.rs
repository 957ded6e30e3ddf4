//! Memories in SQL: SQLite with an FTS5 index, or PostgreSQL full-text search. By default
//! they live in the sessions database, in tables of their own.
//!
//! # Schema
//!
//! | table | columns |
//! |---|---|
//! | `memories` | `seq`, `app_name`, `user_id`, `session_id`, `event_id` (unique per session), `author`, `timestamp` (seconds), `content` (the event's content, JSON), `text` (its text), `words` (the words memory matches on, lowercased, space-separated) |
//! | `memories_fts` | SQLite only: an FTS5 index of `words`, kept in step by triggers |
//! | `memory_schema_version` | `version`, `applied_time` |
//!
//! PostgreSQL indexes a generated `tsvector` of `words` (the `simple` configuration: no
//! stemming, no stop words) with GIN. Both index the normalized `words`, not the raw text,
//! so both match exactly the words the in-memory store matches. Every query filters on
//! `app_name` and `user_id` in SQL.

use super::{
    Forget, MemoryEntry, MemoryError, MemoryService, SearchRequest, StoredMemory, remembered, words,
};
use crate::event::{Content, Event, now};
use crate::session::{DriverError, SessionError, SessionKey, SqlBackend, connect_backend};
use async_trait::async_trait;
use std::fmt;
use std::sync::Arc;

/// The SQL text of one backend.
struct Dialect {
    begin_write: &'static str,
    migration_lock: Option<&'static str>,
    create_version_table: &'static str,
    current_version: &'static str,
    record_version: &'static str,
    migrations: &'static [&'static [&'static str]],
    /// `$1` app, `$2` user, `$3` session, `$4` event id, `$5` author, `$6` timestamp,
    /// `$7` content JSON, `$8` text, `$9` words. Nothing when the event is there.
    insert: &'static str,
    /// `$1` match expression, `$2` app, `$3` user, `$4` not before →
    /// author, timestamp, content JSON; best match first.
    search: &'static str,
    /// `$1` app or NULL, `$2` user or NULL → app, user, session, event id, author,
    /// timestamp, text; oldest first.
    list: &'static str,
    /// `$1` app, `$2` user, `$3` session or NULL.
    forget: &'static str,
    /// `$1` app, `$2` cutoff.
    forget_before: &'static str,
}

const SQLITE: Dialect = Dialect {
    begin_write: "BEGIN IMMEDIATE",
    migration_lock: None,
    create_version_table: "CREATE TABLE IF NOT EXISTS memory_schema_version (
        version INTEGER PRIMARY KEY,
        applied_time INTEGER NOT NULL)",
    current_version: "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM memory_schema_version",
    record_version: "INSERT INTO memory_schema_version (version, applied_time) VALUES ($1, $2)
        ON CONFLICT (version) DO NOTHING",
    migrations: &[&[
        "CREATE TABLE IF NOT EXISTS memories (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            author TEXT NOT NULL,
            timestamp REAL NOT NULL,
            content TEXT NOT NULL,
            text TEXT NOT NULL,
            words TEXT NOT NULL,
            UNIQUE (app_name, user_id, session_id, event_id))",
        "CREATE INDEX IF NOT EXISTS memories_by_user ON memories (app_name, user_id, timestamp)",
        "CREATE INDEX IF NOT EXISTS memories_by_time ON memories (app_name, timestamp)",
        // Digits and letters only reach the index (`words`); diacritics are kept, as the
        // other stores keep them.
        "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
            words, content = 'memories', content_rowid = 'seq',
            tokenize = 'unicode61 remove_diacritics 0')",
        "CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, words) VALUES (new.seq, new.words);
        END",
        "CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, words)
                VALUES ('delete', old.seq, old.words);
        END",
    ]],
    insert: "INSERT INTO memories
        (app_name, user_id, session_id, event_id, author, timestamp, content, text, words)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
        ON CONFLICT (app_name, user_id, session_id, event_id) DO NOTHING",
    search: "SELECT m.author, m.timestamp, m.content
        FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
        WHERE memories_fts MATCH $1 AND m.app_name = $2 AND m.user_id = $3
            AND m.timestamp >= $4
        ORDER BY memories_fts.rank, m.seq",
    list: "SELECT app_name, user_id, session_id, event_id, author, timestamp, text
        FROM memories WHERE ($1 IS NULL OR app_name = $1) AND ($2 IS NULL OR user_id = $2)
        ORDER BY timestamp, seq",
    forget: "DELETE FROM memories WHERE app_name = $1 AND user_id = $2
        AND ($3 IS NULL OR session_id = $3)",
    forget_before: "DELETE FROM memories WHERE app_name = $1 AND timestamp < $2",
};

const POSTGRES: Dialect = Dialect {
    begin_write: "BEGIN",
    migration_lock: Some("SELECT pg_advisory_xact_lock(4242000002)"),
    create_version_table: "CREATE TABLE IF NOT EXISTS memory_schema_version (
        version BIGINT PRIMARY KEY,
        applied_time BIGINT NOT NULL)",
    current_version: "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM memory_schema_version",
    record_version: "INSERT INTO memory_schema_version (version, applied_time) VALUES ($1, $2)
        ON CONFLICT (version) DO NOTHING",
    migrations: &[&[
        "CREATE TABLE IF NOT EXISTS memories (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            author TEXT NOT NULL,
            timestamp DOUBLE PRECISION NOT NULL,
            content JSON NOT NULL,
            text TEXT NOT NULL,
            words TEXT NOT NULL,
            words_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', words)) STORED,
            UNIQUE (app_name, user_id, session_id, event_id))",
        "CREATE INDEX IF NOT EXISTS memories_by_user ON memories (app_name, user_id, timestamp)",
        "CREATE INDEX IF NOT EXISTS memories_by_time ON memories (app_name, timestamp)",
        "CREATE INDEX IF NOT EXISTS memories_words ON memories USING GIN (words_tsv)",
    ]],
    insert: "INSERT INTO memories
        (app_name, user_id, session_id, event_id, author, timestamp, content, text, words)
        VALUES ($1, $2, $3, $4, $5, $6, $7::json, $8, $9)
        ON CONFLICT (app_name, user_id, session_id, event_id) DO NOTHING",
    search: "SELECT author, timestamp, content::text FROM memories
        WHERE words_tsv @@ to_tsquery('simple', $1) AND app_name = $2 AND user_id = $3
            AND timestamp >= $4
        ORDER BY ts_rank(words_tsv, to_tsquery('simple', $1)) DESC, seq",
    list: "SELECT app_name, user_id, session_id, event_id, author, timestamp, text
        FROM memories
        WHERE ($1::text IS NULL OR app_name = $1) AND ($2::text IS NULL OR user_id = $2)
        ORDER BY timestamp, seq",
    forget: "DELETE FROM memories WHERE app_name = $1 AND user_id = $2
        AND ($3::text IS NULL OR session_id = $3)",
    forget_before: "DELETE FROM memories WHERE app_name = $1 AND timestamp < $2",
};

impl Dialect {
    /// The statements that create and upgrade the memory tables.
    fn schema(&self) -> crate::session::Schema {
        crate::session::Schema {
            create_version_table: self.create_version_table,
            current_version: self.current_version,
            record_version: self.record_version,
            migrations: self.migrations,
        }
    }
}

fn db<E: Into<DriverError>>(operation: &'static str) -> impl FnOnce(E) -> MemoryError {
    move |source| MemoryError::Database {
        operation,
        source: source.into(),
    }
}

impl From<crate::session::Closed> for MemoryError {
    fn from(closed: crate::session::Closed) -> Self {
        db("use the store")(closed)
    }
}

impl From<rusqlite::Error> for MemoryError {
    fn from(source: rusqlite::Error) -> Self {
        db("open a read connection")(source)
    }
}

impl crate::session::DbFailure for MemoryError {
    fn is_busy(&self) -> bool {
        matches!(self, MemoryError::Database { source: DriverError::Sqlite(e), .. }
            if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy))
    }
}

/// One memory to insert, encoded.
struct Row {
    event_id: String,
    author: String,
    timestamp: f64,
    content: String,
    text: String,
    words: String,
}

fn rows(events: &[Arc<Event>]) -> Result<Vec<Row>, MemoryError> {
    events
        .iter()
        .filter_map(|e| remembered(e))
        .map(|r| {
            Ok(Row {
                event_id: r.event.id.to_string(),
                author: r.event.author.to_string(),
                timestamp: r.event.timestamp,
                content: serde_json::to_string(r.content).map_err(MemoryError::Corrupt)?,
                text: r.text,
                words: r.words.join(" "),
            })
        })
        .collect()
}

/// The match expression of each backend, built only from words (letters and digits), so
/// nothing in a query can be read as an operator.
fn sqlite_match(words: &[String]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    quoted.join(" OR ")
}

fn postgres_match(words: &[String]) -> String {
    words.join(" | ")
}

fn entry(author: String, timestamp: f64, content: &str) -> Result<MemoryEntry, MemoryError> {
    let content: Content = serde_json::from_str(content).map_err(MemoryError::Corrupt)?;
    Ok(MemoryEntry::new(content, &author, timestamp))
}

type ListRow = (String, String, String, String, String, f64, String);

mod postgres;
mod sqlite;

/// Runs one backend function against whichever database the store holds.
macro_rules! dispatch {
    ($self:ident, $f:ident ( $($arg:expr),* )) => {
        match &$self.backend {
            SqlBackend::Sqlite(db) => sqlite::$f(db, &SQLITE, $($arg),*).await,
            SqlBackend::Postgres(pool) => postgres::$f(pool, &POSTGRES, $($arg),*).await,
        }
    };
}

/// Memories in a SQLite file (full-text search with FTS5) or a PostgreSQL server
/// (full-text search with a GIN-indexed `tsvector`).
pub struct SqlMemoryService {
    backend: SqlBackend,
    url: String,
    /// The connections are the session store's ([`SqlMemoryService::beside`]): closing
    /// is left to it.
    shared: bool,
}

impl fmt::Debug for SqlMemoryService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlMemoryService")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl SqlMemoryService {
    /// Opens the database at `url` (`sqlite:PATH` or `postgres://…`, as for sessions) and
    /// creates or upgrades the memory tables.
    ///
    /// # Errors
    /// The database cannot be opened or migrated.
    pub async fn connect(url: &str) -> Result<Self, MemoryError> {
        let shown = crate::redact::url(url);
        let (backend, shown) = connect_backend(url).await.map_err(|e| match e {
            SessionError::Connect { source, .. } => MemoryError::Open {
                url: shown.clone(),
                source: Box::new(source),
            },
            SessionError::CreateDir { source, .. } => MemoryError::Open {
                url: shown.clone(),
                source: Box::new(source),
            },
            SessionError::UnsupportedUrl { .. } => {
                MemoryError::UnsupportedUrl { url: shown.clone() }
            }
            other => MemoryError::Open {
                url: shown.clone(),
                source: Box::new(other),
            },
        })?;
        let service = SqlMemoryService {
            backend,
            url: shown,
            shared: false,
        };
        dispatch!(service, migrate((now() * 1e6) as i64))?;
        Ok(service)
    }

    /// Memories in the SQLite file of `sessions`, through its connections (one opening
    /// of the file per process instead of two, one writer instead of two); creates or
    /// upgrades the memory tables. `None` when `sessions` is not on SQLite.
    ///
    /// # Errors
    /// The memory tables cannot be migrated.
    pub async fn beside(
        sessions: &crate::session::SqlSessionService,
    ) -> Result<Option<Self>, MemoryError> {
        let Some(db) = sessions.sqlite_db() else {
            return Ok(None);
        };
        let service = SqlMemoryService {
            backend: SqlBackend::Sqlite(db),
            url: sessions.url().to_owned(),
            shared: true,
        };
        dispatch!(service, migrate((now() * 1e6) as i64))?;
        Ok(Some(service))
    }

    /// The URL the store was opened with, password removed.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Closes the connections (unless they are the session store's, which closes them).
    pub async fn close(&self) {
        if self.shared {
            return;
        }
        match &self.backend {
            SqlBackend::Sqlite(db) => db.close().await,
            SqlBackend::Postgres(pool) => pool.close().await,
        }
    }
}

#[async_trait]
impl MemoryService for SqlMemoryService {
    async fn add_events(
        &self,
        session: &SessionKey,
        events: &[Arc<Event>],
    ) -> Result<usize, MemoryError> {
        let rows = rows(events)?;
        dispatch!(self, insert(session, &rows))
    }

    async fn search(&self, request: &SearchRequest<'_>) -> Result<Vec<MemoryEntry>, MemoryError> {
        let wanted = words(request.query);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        match &self.backend {
            SqlBackend::Sqlite(db) => {
                sqlite::search(db, &SQLITE, &sqlite_match(&wanted), request).await
            }
            SqlBackend::Postgres(pool) => {
                postgres::search(pool, &POSTGRES, &postgres_match(&wanted), request).await
            }
        }
    }

    async fn list(
        &self,
        app: Option<&str>,
        user: Option<&str>,
    ) -> Result<Vec<StoredMemory>, MemoryError> {
        let rows = dispatch!(self, list(app, user))?;
        Ok(rows
            .into_iter()
            .map(
                |(app_name, user_id, session_id, event_id, author, timestamp, text)| StoredMemory {
                    session: SessionKey {
                        app_name,
                        user_id,
                        session_id,
                    },
                    event_id,
                    author,
                    timestamp,
                    text,
                },
            )
            .collect())
    }

    async fn forget(&self, what: &Forget<'_>) -> Result<u64, MemoryError> {
        dispatch!(self, forget(what))
    }

    async fn forget_before(&self, app: &str, cutoff: f64) -> Result<u64, MemoryError> {
        dispatch!(self, forget_before(app, cutoff))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_expressions_hold_only_words() {
        let w = words("order #42: \"paid\" OR NOT refunded*");
        assert_eq!(
            sqlite_match(&w),
            "\"order\" OR \"42\" OR \"paid\" OR \"or\" OR \"not\" OR \"refunded\""
        );
        assert_eq!(
            postgres_match(&w),
            "order | 42 | paid | or | not | refunded"
        );
    }
}
