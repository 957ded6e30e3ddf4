//! PostgreSQL's commits: a transaction of separate statements, with row locks on the
//! app and user state (SQLite commits in one batch instead: `sqlite.rs`).

use super::backend::{Appended, Created, NewEvent, NewSession, db};
use super::dialect::POSTGRES;
use super::encode::{merge_state, parse_state};
use crate::event::StateMap;
use crate::session::SessionError;

type Pool = sqlx::PgPool;
type Tx = sqlx::Transaction<'static, sqlx::Postgres>;

/// Creates or upgrades a schema on PostgreSQL inside one transaction (begun with
/// `begin_write`, serialized across processes by `lock`), as [`super::migrate`] does on
/// SQLite; the sessions and the memory stores both use it. A database already at the
/// latest version is recognized by one read, without taking the lock.
///
/// # Errors
/// The failing step, named, with the driver's error.
pub(crate) async fn migrate_schema(
    conn: &mut sqlx::PgConnection,
    schema: &super::Schema,
    begin_write: &'static str,
    lock: Option<&'static str>,
    now: i64,
) -> Result<super::Migrated, (&'static str, sqlx::Error)> {
    use sqlx::Connection;
    let step = |operation: &'static str| move |e| (operation, e);
    let latest = i64::try_from(schema.migrations.len()).unwrap_or(i64::MAX);
    // Fails when the table is missing (a new database): then migrate.
    let current: Result<i64, _> = sqlx::query_scalar(schema.current_version)
        .fetch_one(&mut *conn)
        .await;
    if matches!(current, Ok(v) if v == latest) {
        return Ok(super::Migrated::Current);
    }
    let mut tx = conn
        .begin_with(begin_write)
        .await
        .map_err(step("begin migration"))?;
    if let Some(lock) = lock {
        sqlx::query(lock)
            .execute(&mut *tx)
            .await
            .map_err(step("lock the schema"))?;
    }
    sqlx::query(schema.create_version_table)
        .execute(&mut *tx)
        .await
        .map_err(step("create the version table"))?;
    let current: i64 = sqlx::query_scalar(schema.current_version)
        .fetch_one(&mut *tx)
        .await
        .map_err(step("read the schema version"))?;
    if current > latest {
        return Ok(super::Migrated::TooNew(current, latest));
    }
    for (version, steps) in (1_i64..)
        .zip(schema.migrations)
        .skip(usize::try_from(current).unwrap_or(0))
    {
        for statement in *steps {
            sqlx::query(*statement)
                .execute(&mut *tx)
                .await
                .map_err(step("migrate the schema"))?;
        }
        sqlx::query(schema.record_version)
            .bind(version)
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(step("record the schema version"))?;
    }
    tx.commit().await.map_err(step("commit the migration"))?;
    Ok(super::Migrated::Current)
}

const INSERT_SESSION: &str =
    "INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time)
        VALUES ($1, $2, $3, $4::json, $5, $5) ON CONFLICT (app_name, user_id, id) DO NOTHING";

// Under READ COMMITTED a concurrent UPDATE of the same row waits for the other
// transaction, then re-checks `update_time = $5` against the row it committed.
const TOUCH_SESSION: &str = "UPDATE sessions SET update_time = $4
    WHERE app_name = $1 AND user_id = $2 AND id = $3 AND update_time = $5 RETURNING state::text";

const SET_SESSION_STATE: &str = "UPDATE sessions SET state = $4::json
    WHERE app_name = $1 AND user_id = $2 AND id = $3";

const INSERT_EVENT: &str = "INSERT INTO events
        (id, app_name, user_id, session_id, invocation_id, timestamp, event_data)
        VALUES ($1, $2, $3, $4, $5, $6, $7::json)";

const ENSURE_APP_STATE: &str =
    "INSERT INTO app_states (app_name, state, update_time) VALUES ($1, '{}', $2)
        ON CONFLICT (app_name) DO NOTHING";

const LOCK_APP_STATE: &str = "SELECT state::text FROM app_states WHERE app_name = $1 FOR UPDATE";

const SET_APP_STATE: &str =
    "UPDATE app_states SET state = $2::json, update_time = $3 WHERE app_name = $1";

const ENSURE_USER_STATE: &str = "INSERT INTO user_states (app_name, user_id, state, update_time)
        VALUES ($1, $2, '{}', $3) ON CONFLICT (app_name, user_id) DO NOTHING";

const LOCK_USER_STATE: &str = "SELECT state::text FROM user_states
        WHERE app_name = $1 AND user_id = $2 FOR UPDATE";

const SET_USER_STATE: &str = "UPDATE user_states SET state = $3::json, update_time = $4
        WHERE app_name = $1 AND user_id = $2";

/// Merges `delta` into the app's stored state and returns the result. Reads
/// without locking when there is nothing to write.
async fn merge_app(
    tx: &mut Tx,
    app: &str,
    delta: &StateMap,
    now: i64,
) -> Result<StateMap, SessionError> {
    if delta.is_empty() {
        let stored: Option<String> = sqlx::query_scalar(POSTGRES.select_app_state)
            .bind(app)
            .fetch_optional(&mut **tx)
            .await
            .map_err(db("read app state"))?;
        return parse_state(stored.as_deref(), "app state");
    }
    sqlx::query(ENSURE_APP_STATE)
        .bind(app)
        .bind(now)
        .execute(&mut **tx)
        .await
        .map_err(db("insert app state"))?;
    let stored: Option<String> = sqlx::query_scalar(LOCK_APP_STATE)
        .bind(app)
        .fetch_optional(&mut **tx)
        .await
        .map_err(db("lock app state"))?;
    let (state, json) = merge_state(stored.as_deref(), delta, "app state")?;
    sqlx::query(SET_APP_STATE)
        .bind(app)
        .bind(json)
        .bind(now)
        .execute(&mut **tx)
        .await
        .map_err(db("update app state"))?;
    Ok(state)
}

/// [`merge_app`] for the user's state.
async fn merge_user(
    tx: &mut Tx,
    app: &str,
    user: &str,
    delta: &StateMap,
    now: i64,
) -> Result<StateMap, SessionError> {
    if delta.is_empty() {
        let stored: Option<String> = sqlx::query_scalar(POSTGRES.select_user_state)
            .bind(app)
            .bind(user)
            .fetch_optional(&mut **tx)
            .await
            .map_err(db("read user state"))?;
        return parse_state(stored.as_deref(), "user state");
    }
    sqlx::query(ENSURE_USER_STATE)
        .bind(app)
        .bind(user)
        .bind(now)
        .execute(&mut **tx)
        .await
        .map_err(db("insert user state"))?;
    let stored: Option<String> = sqlx::query_scalar(LOCK_USER_STATE)
        .bind(app)
        .bind(user)
        .fetch_optional(&mut **tx)
        .await
        .map_err(db("lock user state"))?;
    let (state, json) = merge_state(stored.as_deref(), delta, "user state")?;
    sqlx::query(SET_USER_STATE)
        .bind(app)
        .bind(user)
        .bind(json)
        .bind(now)
        .execute(&mut **tx)
        .await
        .map_err(db("update user state"))?;
    Ok(state)
}

/// Inserts a session and routes its `app:`/`user:` keys, in one transaction.
pub(super) async fn create(pool: &Pool, s: &NewSession<'_>) -> Result<Created, SessionError> {
    let mut tx = pool
        .begin_with(POSTGRES.begin_write)
        .await
        .map_err(db("begin"))?;
    let inserted = sqlx::query(INSERT_SESSION)
        .bind(s.app)
        .bind(s.user)
        .bind(s.id)
        .bind(s.state_json.as_str())
        .bind(s.now)
        .execute(&mut *tx)
        .await
        .map_err(db("insert the session"))?;
    if inserted.rows_affected() == 0 {
        tx.rollback().await.map_err(db("roll back"))?;
        return Ok(Created::AlreadyExists);
    }
    let app = merge_app(&mut tx, s.app, &s.app_delta, s.now).await?;
    let user = merge_user(&mut tx, s.app, s.user, &s.user_delta, s.now).await?;
    tx.commit().await.map_err(db("commit the session"))?;
    Ok(Created::Inserted { app, user })
}

/// Commits one event: compare-and-set of the session's update time, then the
/// event row and the three scopes of state, in one transaction.
pub(super) async fn append(pool: &Pool, e: &NewEvent<'_>) -> Result<Appended, SessionError> {
    let mut tx = pool
        .begin_with(POSTGRES.begin_write)
        .await
        .map_err(db("begin"))?;
    let state: Option<String> = sqlx::query_scalar(TOUCH_SESSION)
        .bind(e.app)
        .bind(e.user)
        .bind(e.session_id)
        .bind(e.new_time)
        .bind(e.expected_time)
        .fetch_optional(&mut *tx)
        .await
        .map_err(db("update the session"))?;
    let Some(state) = state else {
        let exists: Option<(String, i64)> = sqlx::query_as(POSTGRES.select_session)
            .bind(e.app)
            .bind(e.user)
            .bind(e.session_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db("read the session"))?;
        tx.rollback().await.map_err(db("roll back"))?;
        return Ok(if exists.is_some() {
            Appended::Stale
        } else {
            Appended::NotFound
        });
    };
    if !e.session_delta.is_empty() {
        let (_, json) = merge_state(Some(&state), &e.session_delta, "session state")?;
        sqlx::query(SET_SESSION_STATE)
            .bind(e.app)
            .bind(e.user)
            .bind(e.session_id)
            .bind(json)
            .execute(&mut *tx)
            .await
            .map_err(db("update session state"))?;
    }
    sqlx::query(INSERT_EVENT)
        .bind(e.event_id)
        .bind(e.app)
        .bind(e.user)
        .bind(e.session_id)
        .bind(e.invocation_id)
        .bind(e.timestamp)
        .bind(e.event_json.as_str())
        .execute(&mut *tx)
        .await
        .map_err(db("insert the event"))?;
    if !e.app_delta.is_empty() {
        merge_app(&mut tx, e.app, &e.app_delta, e.new_time).await?;
    }
    if !e.user_delta.is_empty() {
        merge_user(&mut tx, e.app, e.user, &e.user_delta, e.new_time).await?;
    }
    tx.commit().await.map_err(db("commit the event"))?;
    Ok(Appended::Committed)
}
