//! SQLite's commits, each one statement: one round trip to the connection's thread.
//!
//! sqlx runs a SQLite connection on a thread of its own and hands it each statement
//! through a channel, and hands back each statement's result the same way; a transaction
//! of separate statements (BEGIN, the compare-and-set, the state, the event, COMMIT) pays
//! two thread wake-ups per statement. Here appending an event is one `INSERT` into a view
//! whose `INSTEAD OF` trigger does the whole commit, and one statement is its own
//! transaction: atomic without BEGIN and COMMIT, and all-or-nothing even if the caller
//! stops waiting half way.
//!
//! The view and its trigger are `TEMP` objects each connection creates when it opens
//! ([`PREPARE_CONNECTION`]): nothing is added to the database file, whose schema stays
//! ADK's. The trigger checks the session's update time first (compare-and-set) and
//! raises [`STALE`] when it moved, which rolls the statement back; then it writes the
//! state deltas key by key inside SQLite ([`merge`]), never the whole state re-serialized
//! by adk-flow.

use super::backend::{Appended, Created, NewEvent, NewSession, db};
use super::dialect::SQLITE;
use super::encode::{parse_state, to_json};
use crate::event::StateMap;
use crate::session::SessionError;
use sqlx::pool::PoolConnection;
use sqlx::{ConnectOptions, Connection, Sqlite, SqliteConnection, SqlitePool};
use std::ops::{Deref, DerefMut};
use std::sync::LazyLock;
use tokio::sync::{MappedMutexGuard, Mutex, MutexGuard};

/// The message the commit trigger raises when the session's update time moved.
const STALE: &str = "adk-flow: stale session";

/// `S` with the keys of the JSON object `D` set, as the in-memory store merges a delta:
/// keys already in `S` keep their place and take `D`'s value (whole: objects are not merged,
/// `null` is a value); the others follow in `D`'s order. Values are copied as JSON text.
fn merge(s: &str, d: &str) -> String {
    format!(
        "(SELECT json_group_object(k, json(v) ORDER BY o1, o2) FROM (\
            SELECT s.key AS k, CASE WHEN d.key IS NULL THEN {s} -> s.fullkey \
                ELSE {d} -> d.fullkey END AS v, 0 AS o1, s.id AS o2 \
            FROM json_each({s}) s LEFT JOIN json_each({d}) d ON d.key = s.key \
            UNION ALL \
            SELECT d.key, {d} -> d.fullkey, 1, d.id FROM json_each({d}) d \
            WHERE d.key NOT IN (SELECT key FROM json_each({s}))))"
    )
}

/// Upserts the delta `NEW.{column}` into a scope's state row, when there is one.
fn upsert(table: &str, keys: &str, values: &str, column: &str) -> String {
    format!(
        "INSERT INTO {table} ({keys}, state, update_time) \
         SELECT {values}, json(NEW.{column}), NEW.time WHERE NEW.{column} IS NOT NULL \
         ON CONFLICT ({keys}) DO UPDATE SET state = {merged}, update_time = NEW.time;",
        merged = merge(&format!("{table}.state"), &format!("NEW.{column}"))
    )
}

/// What each connection runs when it opens: it creates the views that creating a session
/// and committing an event insert into, and the triggers that do the work.
pub(super) static PREPARE_CONNECTION: LazyLock<String> = LazyLock::new(prepare_connection);

fn prepare_connection() -> String {
    let session = "app_name = NEW.app AND user_id = NEW.usr AND id = NEW.sid";
    let app_upsert = upsert("app_states", "app_name", "NEW.app", "app_delta");
    let user_upsert = upsert(
        "user_states",
        "app_name, user_id",
        "NEW.app, NEW.usr",
        "user_delta",
    );
    format!(
        "CREATE TEMP VIEW IF NOT EXISTS adk_flow_commit AS SELECT \
            NULL AS app, NULL AS usr, NULL AS sid, NULL AS time, NULL AS expected, \
            NULL AS event_id, NULL AS invocation, NULL AS ts, NULL AS data, \
            NULL AS session_delta, NULL AS app_delta, NULL AS user_delta;\
         CREATE TEMP TRIGGER IF NOT EXISTS adk_flow_commit INSTEAD OF INSERT ON adk_flow_commit \
         BEGIN \
            SELECT RAISE(ABORT, '{STALE}') WHERE NOT EXISTS \
                (SELECT 1 FROM sessions WHERE {session} AND update_time = NEW.expected);\
            UPDATE sessions SET update_time = NEW.time, state = CASE \
                WHEN NEW.session_delta IS NULL THEN state \
                ELSE {session_merge} END WHERE {session};\
            INSERT INTO events \
                (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) \
                VALUES (NEW.event_id, NEW.app, NEW.usr, NEW.sid, NEW.invocation, NEW.ts, NEW.data);\
            {app_upsert} {user_upsert} \
         END;\
         CREATE TEMP VIEW IF NOT EXISTS adk_flow_create AS SELECT \
            NULL AS app, NULL AS usr, NULL AS sid, NULL AS state, NULL AS time, \
            NULL AS app_delta, NULL AS user_delta;\
         CREATE TEMP TRIGGER IF NOT EXISTS adk_flow_create INSTEAD OF INSERT ON adk_flow_create \
         BEGIN \
            INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time) \
                VALUES (NEW.app, NEW.usr, NEW.sid, NEW.state, NEW.time, NEW.time);\
            {app_upsert} {user_upsert} \
         END;",
        session_merge = merge("state", "NEW.session_delta"),
    )
}

/// Creates a new connection's views and triggers (`TEMP`: they live with the connection).
pub(super) async fn prepare(conn: &mut sqlx::SqliteConnection) -> Result<(), sqlx::Error> {
    use sqlx::Executor;
    conn.execute(PREPARE_CONNECTION.as_str()).await.map(|_| ())
}

/// A delta as the triggers take it: a JSON object, or NULL when empty.
fn delta_json(delta: &StateMap, what: &str) -> Result<Option<String>, SessionError> {
    if delta.is_empty() {
        Ok(None)
    } else {
        to_json(delta, what).map(Some)
    }
}

/// Whether `e` is the driver's report of a statement `RAISE`d with `message`, or of a
/// duplicate key.
fn is_raise(e: &sqlx::Error, message: &str) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.message() == message)
}

fn is_duplicate(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

/// The app's and the user's state, as JSON.
type ScopeRow = (Option<String>, Option<String>);

/// Inserts a session and routes its `app:`/`user:` keys in one statement, then returns the
/// app's and the user's state (read in the same statement when there are no such keys).
pub(super) async fn create(
    conn: &mut SqliteConnection,
    s: NewSession<'_>,
) -> Result<Created, SessionError> {
    let row: Option<ScopeRow> = if s.app_delta.is_empty() && s.user_delta.is_empty() {
        let sql = "INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time) \
            VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (app_name, user_id, id) DO NOTHING \
            RETURNING (SELECT state FROM app_states WHERE app_name = $1), \
            (SELECT state FROM user_states WHERE app_name = $1 AND user_id = $2)";
        sqlx::query_as(sql)
            .bind(s.app)
            .bind(s.user)
            .bind(s.id)
            .bind(s.state_json)
            .bind(s.now)
            .fetch_optional(&mut *conn)
            .await
            .map_err(db("insert the session"))?
    } else {
        let inserted = sqlx::query(
            "INSERT INTO adk_flow_create (app, usr, sid, state, time, app_delta, user_delta) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(s.app)
        .bind(s.user)
        .bind(s.id)
        .bind(s.state_json)
        .bind(s.now)
        .bind(delta_json(&s.app_delta, "app state")?)
        .bind(delta_json(&s.user_delta, "user state")?)
        .execute(&mut *conn)
        .await;
        match inserted {
            Err(e) if is_duplicate(&e) => None,
            Err(e) => return Err(db("insert the session")(e)),
            Ok(_) => Some(
                sqlx::query_as(
                    "SELECT (SELECT state FROM app_states WHERE app_name = $1), \
                     (SELECT state FROM user_states WHERE app_name = $1 AND user_id = $2)",
                )
                .bind(s.app)
                .bind(s.user)
                .fetch_one(&mut *conn)
                .await
                .map_err(db("read app and user state"))?,
            ),
        }
    };
    let Some((app, user)) = row else {
        return Ok(Created::AlreadyExists);
    };
    Ok(Created::Inserted {
        app: parse_state(app.as_deref(), "app state")?,
        user: parse_state(user.as_deref(), "user state")?,
    })
}

/// Commits one event in one statement: compare-and-set of the session's update time, its
/// state delta, the event row and the app's and user's deltas.
pub(super) async fn append(
    conn: &mut SqliteConnection,
    e: NewEvent<'_>,
) -> Result<Appended, SessionError> {
    let done = sqlx::query(
        "INSERT INTO adk_flow_commit (app, usr, sid, time, expected, event_id, invocation, ts, \
         data, session_delta, app_delta, user_delta) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(e.app)
    .bind(e.user)
    .bind(e.session_id)
    .bind(e.new_time)
    .bind(e.expected_time)
    .bind(e.event_id)
    .bind(e.invocation_id)
    .bind(e.timestamp)
    .bind(e.event_json)
    .bind(delta_json(&e.session_delta, "session state")?)
    .bind(delta_json(&e.app_delta, "app state")?)
    .bind(delta_json(&e.user_delta, "user state")?)
    .execute(&mut *conn)
    .await;
    match done {
        Ok(_) => return Ok(Appended::Committed),
        Err(err) if is_raise(&err, STALE) => {}
        Err(err) => return Err(db("commit the event")(err)),
    }
    // Nothing written: the session moved on, or is gone.
    let exists = sqlx::query(SQLITE.select_session)
        .bind(e.app)
        .bind(e.user)
        .bind(e.session_id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db("read the session"))?;
    Ok(if exists.is_some() {
        Appended::Stale
    } else {
        Appended::NotFound
    })
}

/// The connection a store writes through: one of its own, outside the pool.
///
/// A pooled connection costs a third thread round trip per statement (the pool pings a
/// connection each time it is given back) and a task to give it back, and the pool hands
/// out its connections in turn, so each write would find its page cache emptied by the
/// writes of the others. Writes take turns anyway: SQLite has one writer at a time.
pub(super) struct Writer(Mutex<Option<SqliteConnection>>);

impl Writer {
    /// Opens a connection like the pool's, prepared as the pool prepares its own.
    pub(super) async fn open(pool: &SqlitePool) -> Result<Self, sqlx::Error> {
        let mut conn = pool.connect_options().connect().await?;
        prepare(&mut conn).await?;
        Ok(Writer(Mutex::new(Some(conn))))
    }

    /// Creates or upgrades the schema through this connection.
    pub(super) async fn migrate(&self, now: i64) -> Result<(), SessionError> {
        let mut guard = self.0.lock().await;
        let conn = guard
            .as_mut()
            .ok_or_else(|| db("migrate the schema")(sqlx::Error::PoolClosed))?;
        super::backend::sqlite::migrate(conn, &SQLITE, now).await
    }

    /// Closes the connection; writes fail from then on, as they do on a closed pool.
    pub(super) async fn close(&self) {
        if let Some(conn) = self.0.lock().await.take() {
            let _ = conn.close().await;
        }
    }
}

/// A connection to write through: the store's [`Writer`], or one from the pool when it has
/// none (an in-memory database, whose pool holds its only connection).
pub(super) enum WriteConn<'a> {
    Own(MappedMutexGuard<'a, SqliteConnection>),
    Pooled(PoolConnection<Sqlite>),
}

impl WriteConn<'_> {
    /// The writer's connection, waiting for its turn, or a pooled one.
    pub(super) async fn get<'a>(
        writer: Option<&'a Writer>,
        pool: &SqlitePool,
    ) -> Result<WriteConn<'a>, SessionError> {
        Ok(match writer {
            Some(w) => WriteConn::Own(
                MutexGuard::try_map(w.0.lock().await, Option::as_mut)
                    .map_err(|_| db("connect")(sqlx::Error::PoolClosed))?,
            ),
            None => WriteConn::Pooled(pool.acquire().await.map_err(db("connect"))?),
        })
    }
}

impl Deref for WriteConn<'_> {
    type Target = SqliteConnection;
    fn deref(&self) -> &SqliteConnection {
        match self {
            WriteConn::Own(c) => c,
            WriteConn::Pooled(c) => c,
        }
    }
}

impl DerefMut for WriteConn<'_> {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        match self {
            WriteConn::Own(c) => c,
            WriteConn::Pooled(c) => c,
        }
    }
}
