//! SQL session stores: SQLite (a local file) and PostgreSQL, behind [`SessionService`].
//!
//! # Schema
//!
//! Tables follow ADK's `DatabaseSessionService`:
//!
//! | table | columns |
//! |---|---|
//! | `sessions` | `app_name`, `user_id`, `id`, `state` (session-scoped keys only, no prefixes), `create_time`, `update_time` |
//! | `events` | `seq` (commit order), `id`, `app_name`, `user_id`, `session_id`, `invocation_id`, `timestamp` (seconds), `event_data` |
//! | `app_states` | `app_name`, `state` (keys without `app:`), `update_time` |
//! | `user_states` | `app_name`, `user_id`, `state` (keys without `user:`), `update_time` |
//! | `schema_version` | `version`, `applied_time` |
//! | `session_turns` (PostgreSQL) | `app_name`, `user_id`, `session_id`, `owner`, `expires_at`: turns held across replicas (schema version 2) |
//!
//! Differences from ADK: `event_data` is the event in this crate's wire format (camelCase
//! keys, the same JSON the CLI prints), where ADK stores snake_case; events are ordered by
//! `seq`, the order they were committed in, not by timestamp; and `create_time` /
//! `update_time` are integer microseconds since the Unix epoch, so the stale-session check
//! compares integers exactly. JSON columns are `TEXT` in SQLite and `JSON` (which keeps key
//! order, unlike `JSONB`) in PostgreSQL. On SQLite `seq` is the rowid, without
//! `AUTOINCREMENT` since schema version 2 (a new event's `seq` is still above every stored
//! one; an append writes one page fewer); PostgreSQL's schema version 2 is `session_turns`.
//!
//! # Concurrency
//!
//! Each append is one transaction that first moves `sessions.update_time` from the value the
//! handle was loaded with to a strictly greater one (compare-and-set). If another process
//! appended in between, nothing is written and [`SessionError::Stale`] is returned, as ADK's
//! database service does. Appends through one service to one session are serialized by an
//! async lock, so concurrent tasks of one process never see each other as stale.
//!
//! On SQLite an append is one statement (`sqlite.rs`: an insert into a `TEMP` view whose
//! trigger does the commit and merges the delta's keys into the stored state), run through
//! rusqlite on the calling task's thread, on a connection kept for writes (`sqlite_db.rs`);
//! on PostgreSQL, through sqlx, it is a transaction of several statements that reads the
//! state rows it changes, locked, and writes them back (`postgres.rs`).

mod backend;
mod checkpoint;
mod dialect;
mod encode;
mod sqlite_db;

pub(crate) use postgres::migrate_schema as migrate_postgres;
pub(crate) use sqlite_db::{Closed, Db as SqliteDb, DbFailure, Migrated, Schema, migrate};

use super::SessionGates;
use super::{InMemorySessionService, SessionError, SessionService};
use crate::event::now;
use encode::{from_micros, to_micros};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{ConnectOptions, Connection};
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

/// Connections per PostgreSQL pool.
const MAX_CONNECTIONS: u32 = 4;

/// An error of the database driver: sqlx for PostgreSQL, rusqlite for SQLite.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// PostgreSQL (sqlx).
    #[error(transparent)]
    Postgres(#[from] sqlx::Error),
    /// SQLite (rusqlite).
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// The store was closed.
    #[error(transparent)]
    Closed(#[from] Closed),
}

impl From<Closed> for SessionError {
    fn from(closed: Closed) -> Self {
        SessionError::Database {
            operation: "use the store",
            source: closed.into(),
        }
    }
}

impl DbFailure for SessionError {
    fn is_busy(&self) -> bool {
        matches!(self, SessionError::Database { source: DriverError::Sqlite(e), .. }
            if sqlite_db::is_busy(e))
    }
}

impl From<rusqlite::Error> for SessionError {
    fn from(source: rusqlite::Error) -> Self {
        backend::db("open a read connection")(source)
    }
}

/// One stored session as a listing shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    /// Session id.
    pub id: String,
    /// Creation time, seconds since the Unix epoch.
    pub create_time: f64,
    /// Time of the last commit, seconds since the Unix epoch.
    pub update_time: f64,
    /// Number of committed events.
    pub event_count: u64,
}

/// The full name of a stored session.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionKey {
    /// The app (workflow) it belongs to.
    pub app_name: String,
    /// The user it belongs to.
    pub user_id: String,
    /// Session id.
    pub session_id: String,
}

/// The connections to one of the supported databases; the memory store shares the way
/// sessions connect.
pub(crate) enum Backend {
    /// A SQLite file (or a private in-memory database); the memory store may share the
    /// sessions' ([`SqlSessionService::sqlite_db`]).
    Sqlite(Arc<SqliteDb>),
    /// A PostgreSQL server.
    Postgres(PgPool),
}

/// Opens the database at `url` (see [`SqlSessionService::connect`]); returns its
/// connections and the URL with its password removed.
pub(crate) async fn connect_backend(url: &str) -> Result<(Backend, String), SessionError> {
    let shown = crate::redact::url(url);
    let connect_err = |source: sqlx::Error| SessionError::Connect {
        url: shown.clone(),
        source: source.into(),
    };
    let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let options = PgConnectOptions::from_str(url)
            .map_err(connect_err)?
            .disable_statement_logging();
        // The pool retries refused connections until its acquire timeout (30 s); one
        // direct connection first makes a wrong URL or a stopped server fail at once.
        options
            .connect()
            .await
            .map_err(connect_err)?
            .close()
            .await
            .map_err(connect_err)?;
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .connect_with(options)
            .await
            .map_err(connect_err)?;
        Backend::Postgres(pool)
    } else if let Some(path) = sqlite_path(url) {
        Backend::Sqlite(Arc::new(open_sqlite(path, &shown).await?))
    } else {
        return Err(SessionError::UnsupportedUrl { url: shown });
    };
    Ok((backend, shown))
}

/// The file (or `:memory:`) a `sqlite:PATH` or `sqlite://PATH` store URL names; `None`
/// for any other URL.
pub fn sqlite_path(url: &str) -> Option<&str> {
    url.strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
}

/// Runs one read of the store against whichever database the service holds: `sqlite::f`
/// on a read connection, or `backend::postgres::f` on the pool.
macro_rules! dispatch {
    ($self:ident, $f:ident ( $($arg:expr),* )) => {
        match &$self.backend {
            Backend::Sqlite(db) => db.read(|conn| sqlite::$f(conn, $($arg),*)).await,
            Backend::Postgres(pool) => {
                backend::postgres::$f(pool, &dialect::POSTGRES, $($arg),*).await
            }
        }
    };
}

mod postgres;
mod service;
mod sqlite;
mod turns;

/// Sessions in a SQL database: a SQLite file or a PostgreSQL server.
///
/// Every committed event is in the database (and, for SQLite, in its write-ahead log) before
/// [`SessionService::append_event`] returns. Handles returned by `create_session` and
/// `get_session` are snapshots: a handle goes stale once another handle or process commits
/// to the same session, and appending through it then fails with [`SessionError::Stale`].
pub struct SqlSessionService {
    backend: Backend,
    url: String,
    gates: SessionGates,
}

impl fmt::Debug for SqlSessionService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqlSessionService")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl SqlSessionService {
    /// Opens the database at `url` and creates or upgrades its schema.
    ///
    /// `url` is `sqlite:PATH` (also `sqlite://PATH`; the file and its parent directory are
    /// created when missing; `sqlite::memory:` is a private in-memory database) or
    /// `postgres://…` / `postgresql://…` (any libpq-style URL sqlx accepts).
    pub async fn connect(url: &str) -> Result<Self, SessionError> {
        let (backend, shown) = connect_backend(url).await?;
        let service = SqlSessionService {
            backend,
            url: shown,
            gates: SessionGates::default(),
        };
        let now = to_micros(now());
        match &service.backend {
            Backend::Sqlite(db) => {
                let migrated = db
                    .write(|conn| {
                        migrate(conn, &dialect::SQLITE.schema(), now)
                            .map_err(backend::db("migrate the schema"))
                    })
                    .await?;
                if let Migrated::TooNew(found, supported) = migrated {
                    return Err(SessionError::SchemaTooNew { found, supported });
                }
                // The writer's `TEMP` views and triggers are created when a commit first
                // needs them (`sqlite::statement`), after the migration: they name tables
                // it may rebuild.
            }
            Backend::Postgres(pool) => {
                let mut conn = pool
                    .acquire()
                    .await
                    .map_err(|source| SessionError::Connect {
                        url: service.url.clone(),
                        source: source.into(),
                    })?;
                backend::postgres::migrate(&mut conn, &dialect::POSTGRES, now).await?;
            }
        }
        Ok(service)
    }

    /// The URL the service was opened with, password removed.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The SQLite database the service writes to, for a store that keeps its tables in
    /// the same file (memories) and shares its connections; `None` on PostgreSQL.
    pub(crate) fn sqlite_db(&self) -> Option<Arc<SqliteDb>> {
        match &self.backend {
            Backend::Sqlite(db) => Some(Arc::clone(db)),
            Backend::Postgres(_) => None,
        }
    }

    /// The user's sessions with their times and event counts, sorted by id.
    pub async fn list_session_summaries(
        &self,
        app_name: &str,
        user_id: &str,
    ) -> Result<Vec<SessionSummary>, SessionError> {
        let rows = dispatch!(self, list_summaries(app_name, user_id))?;
        let mut out: Vec<SessionSummary> = rows
            .into_iter()
            .map(|(id, create, update, count)| SessionSummary {
                id,
                create_time: from_micros(create),
                update_time: from_micros(update),
                event_count: u64::try_from(count).unwrap_or(0),
            })
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    /// Every stored session of every app and user, sorted.
    pub async fn list_all_sessions(&self) -> Result<Vec<SessionKey>, SessionError> {
        let rows = dispatch!(self, list_all())?;
        let mut out: Vec<SessionKey> = rows
            .into_iter()
            .map(|(app_name, user_id, session_id)| SessionKey {
                app_name,
                user_id,
                session_id,
            })
            .collect();
        out.sort();
        Ok(out)
    }

    /// Closes the connections, waiting for connections in use to be returned.
    pub async fn close(&self) {
        match &self.backend {
            Backend::Sqlite(db) => db.close().await,
            Backend::Postgres(pool) => pool.close().await,
        }
    }
}

/// Opens the session store named by `db`: `memory` (an [`InMemorySessionService`]),
/// `sqlite:PATH` or `postgres://…` (a [`SqlSessionService`]).
pub async fn open_session_service(db: &str) -> Result<Arc<dyn SessionService>, SessionError> {
    if db == "memory" {
        return Ok(Arc::new(InMemorySessionService::new()));
    }
    Ok(Arc::new(SqlSessionService::connect(db).await?))
}

/// Opens (creating if needed) a SQLite database file, or a private in-memory one.
async fn open_sqlite(path: &str, shown: &str) -> Result<SqliteDb, SessionError> {
    let file = match path {
        ":memory:" => None,
        "" => {
            return Err(SessionError::UnsupportedUrl {
                url: shown.to_owned(),
            });
        }
        path => Some(Path::new(path)),
    };
    if let Some(dir) = file
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty())
    {
        // A metadata call or two (the directory usually exists): `tokio::fs` would start a
        // blocking-pool thread for it.
        std::fs::create_dir_all(dir).map_err(|source| SessionError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    SqliteDb::open(file).map_err(|source| SessionError::Connect {
        url: shown.to_owned(),
        source: source.into(),
    })
}
