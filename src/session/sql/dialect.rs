//! The SQL text of each backend: the schema migrations and every statement the store runs.
//!
//! Both backends use `$N` placeholders (SQLite reads `$N` as a named parameter, numbered in
//! the order of first use, so rusqlite binds them by position). They differ in column types
//! and in how JSON crosses the wire: SQLite keeps JSON in `TEXT` columns, PostgreSQL in
//! `JSON` columns (not `JSONB`, which would reorder object keys), so its statements cast
//! parameters with `::json` and results with `::text`.

/// The statements of one SQL backend.
pub(crate) struct Dialect {
    /// Opens a transaction that writes.
    pub begin_write: &'static str,
    /// Opens a transaction that reads one consistent snapshot.
    pub begin_read: &'static str,
    /// Serializes concurrent migrations (PostgreSQL's advisory lock), if needed.
    pub migration_lock: Option<&'static str>,
    /// Creates the `schema_version` table.
    pub create_version_table: &'static str,
    /// `SELECT` of the highest applied version, 0 when none.
    pub current_version: &'static str,
    /// Records an applied version: `$1` version, `$2` time (µs).
    pub record_version: &'static str,
    /// Migrations in order; `MIGRATIONS[i]` brings the schema to version `i + 1`.
    pub migrations: &'static [&'static [&'static str]],

    /// `$1..$3` → `state`, `update_time`.
    pub select_session: &'static str,
    /// `$1..$3` → `event_data`, oldest first.
    pub select_events: &'static str,
    /// `$1` app → `state`.
    pub select_app_state: &'static str,
    /// `$1` app, `$2` user → `state`.
    pub select_user_state: &'static str,
    /// `$1` app, `$2` user → `id`.
    pub list_ids: &'static str,
    /// `$1` app, `$2` user → `id`, `create_time`, `update_time`, event count.
    pub list_summaries: &'static str,
    /// → `app_name`, `user_id`, `id` of every session.
    pub list_all: &'static str,
    /// `$1..$3`.
    pub delete_events: &'static str,
    /// `$1..$3`.
    pub delete_session: &'static str,
}

impl Dialect {
    /// The schema-version bookkeeping, for the SQLite store's migration.
    pub(super) fn schema(&self) -> super::Schema {
        super::Schema {
            create_version_table: self.create_version_table,
            current_version: self.current_version,
            record_version: self.record_version,
            migrations: self.migrations,
        }
    }
}

/// The `WHERE` condition naming one session by `$1` app, `$2` user, `$3` id.
macro_rules! session_key {
    () => {
        "app_name = $1 AND user_id = $2 AND id = $3"
    };
}

/// SQLite: JSON as `TEXT`, times as `INTEGER` microseconds.
pub(crate) const SQLITE: Dialect = Dialect {
    // IMMEDIATE takes the write lock up front, so `busy_timeout` applies to it; a deferred
    // transaction that read first could fail with SQLITE_BUSY_SNAPSHOT instead of waiting.
    begin_write: "BEGIN IMMEDIATE",
    begin_read: "BEGIN",
    migration_lock: None,
    create_version_table: "CREATE TABLE IF NOT EXISTS schema_version (
        version INTEGER PRIMARY KEY,
        applied_time INTEGER NOT NULL)",
    current_version: "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM schema_version",
    record_version: "INSERT INTO schema_version (version, applied_time) VALUES ($1, $2)
        ON CONFLICT (version) DO NOTHING",
    migrations: &[
        &[
            "CREATE TABLE IF NOT EXISTS sessions (
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            id TEXT NOT NULL,
            state TEXT NOT NULL,
            create_time INTEGER NOT NULL,
            update_time INTEGER NOT NULL,
            PRIMARY KEY (app_name, user_id, id))",
            "CREATE TABLE IF NOT EXISTS events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL,
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            invocation_id TEXT NOT NULL,
            timestamp REAL NOT NULL,
            event_data TEXT NOT NULL,
            FOREIGN KEY (app_name, user_id, session_id)
                REFERENCES sessions (app_name, user_id, id) ON DELETE CASCADE)",
            "CREATE INDEX IF NOT EXISTS events_by_session
            ON events (app_name, user_id, session_id, seq)",
            "CREATE TABLE IF NOT EXISTS app_states (
            app_name TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            update_time INTEGER NOT NULL)",
            "CREATE TABLE IF NOT EXISTS user_states (
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            state TEXT NOT NULL,
            update_time INTEGER NOT NULL,
            PRIMARY KEY (app_name, user_id))",
        ],
        // Version 2: `events.seq` without `AUTOINCREMENT`. A new row's `seq` is still
        // above every row left (the largest rowid plus one), so commit order holds, and an
        // append no longer writes the `sqlite_sequence` page: three WAL pages instead of
        // four. The table is rebuilt, its rows and their `seq` kept.
        &[
            "CREATE TABLE events_v2 (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL,
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            invocation_id TEXT NOT NULL,
            timestamp REAL NOT NULL,
            event_data TEXT NOT NULL,
            FOREIGN KEY (app_name, user_id, session_id)
                REFERENCES sessions (app_name, user_id, id) ON DELETE CASCADE)",
            "INSERT INTO events_v2
                (seq, id, app_name, user_id, session_id, invocation_id, timestamp, event_data)
            SELECT seq, id, app_name, user_id, session_id, invocation_id, timestamp, event_data
            FROM events ORDER BY seq",
            "DROP TABLE events",
            "ALTER TABLE events_v2 RENAME TO events",
            "CREATE INDEX events_by_session ON events (app_name, user_id, session_id, seq)",
            "DELETE FROM sqlite_sequence WHERE name = 'events'",
        ],
    ],

    select_session: concat!(
        "SELECT state, update_time FROM sessions WHERE ",
        session_key!()
    ),
    select_events: "SELECT event_data FROM events
        WHERE app_name = $1 AND user_id = $2 AND session_id = $3 ORDER BY seq",
    select_app_state: "SELECT state FROM app_states WHERE app_name = $1",
    select_user_state: "SELECT state FROM user_states WHERE app_name = $1 AND user_id = $2",
    list_ids: "SELECT id FROM sessions WHERE app_name = $1 AND user_id = $2",
    list_summaries: "SELECT s.id, s.create_time, s.update_time,
            (SELECT COUNT(*) FROM events e WHERE e.app_name = s.app_name
                AND e.user_id = s.user_id AND e.session_id = s.id)
        FROM sessions s WHERE s.app_name = $1 AND s.user_id = $2",
    list_all: "SELECT app_name, user_id, id FROM sessions",
    delete_events: "DELETE FROM events WHERE app_name = $1 AND user_id = $2 AND session_id = $3",
    delete_session: concat!("DELETE FROM sessions WHERE ", session_key!()),
};

/// PostgreSQL: JSON as `JSON` (key order kept), times as `BIGINT` microseconds.
pub(crate) const POSTGRES: Dialect = Dialect {
    begin_write: "BEGIN",
    // One snapshot for the session row, its events and the app and user state.
    begin_read: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    // Concurrent `CREATE TABLE IF NOT EXISTS` can collide in the catalog; take a lock.
    migration_lock: Some("SELECT pg_advisory_xact_lock(4242000001)"),
    create_version_table: "CREATE TABLE IF NOT EXISTS schema_version (
        version BIGINT PRIMARY KEY,
        applied_time BIGINT NOT NULL)",
    current_version: "SELECT CAST(COALESCE(MAX(version), 0) AS BIGINT) FROM schema_version",
    record_version: "INSERT INTO schema_version (version, applied_time) VALUES ($1, $2)
        ON CONFLICT (version) DO NOTHING",
    migrations: &[
        &[
            "CREATE TABLE IF NOT EXISTS sessions (
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            id TEXT NOT NULL,
            state JSON NOT NULL,
            create_time BIGINT NOT NULL,
            update_time BIGINT NOT NULL,
            PRIMARY KEY (app_name, user_id, id))",
            "CREATE TABLE IF NOT EXISTS events (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id TEXT NOT NULL,
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            invocation_id TEXT NOT NULL,
            timestamp DOUBLE PRECISION NOT NULL,
            event_data JSON NOT NULL,
            FOREIGN KEY (app_name, user_id, session_id)
                REFERENCES sessions (app_name, user_id, id) ON DELETE CASCADE)",
            "CREATE INDEX IF NOT EXISTS events_by_session
            ON events (app_name, user_id, session_id, seq)",
            "CREATE TABLE IF NOT EXISTS app_states (
            app_name TEXT PRIMARY KEY,
            state JSON NOT NULL,
            update_time BIGINT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS user_states (
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            state JSON NOT NULL,
            update_time BIGINT NOT NULL,
            PRIMARY KEY (app_name, user_id))",
        ],
        // Version 2: sessions' turns held across replicas (see `sql/turns.rs`).
        &["CREATE TABLE IF NOT EXISTS session_turns (
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            session_id TEXT NOT NULL,
            owner TEXT NOT NULL,
            expires_at TIMESTAMPTZ NOT NULL,
            PRIMARY KEY (app_name, user_id, session_id))"],
    ],

    select_session: concat!(
        "SELECT state::text, update_time FROM sessions WHERE ",
        session_key!()
    ),
    select_events: "SELECT event_data::text FROM events
        WHERE app_name = $1 AND user_id = $2 AND session_id = $3 ORDER BY seq",
    select_app_state: "SELECT state::text FROM app_states WHERE app_name = $1",
    select_user_state: "SELECT state::text FROM user_states WHERE app_name = $1 AND user_id = $2",
    list_ids: "SELECT id FROM sessions WHERE app_name = $1 AND user_id = $2",
    list_summaries: "SELECT s.id, s.create_time, s.update_time,
            (SELECT COUNT(*) FROM events e WHERE e.app_name = s.app_name
                AND e.user_id = s.user_id AND e.session_id = s.id)
        FROM sessions s WHERE s.app_name = $1 AND s.user_id = $2",
    list_all: "SELECT app_name, user_id, id FROM sessions",
    delete_events: "DELETE FROM events WHERE app_name = $1 AND user_id = $2 AND session_id = $3",
    delete_session: concat!("DELETE FROM sessions WHERE ", session_key!()),
};
