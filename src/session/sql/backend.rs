//! The rows the SQL store reads and writes, shared by both drivers, and PostgreSQL's
//! reads, schema and deletes through sqlx (SQLite's are in `sqlite.rs`, through
//! rusqlite). The statements come from a [`Dialect`].

use super::DriverError;
use super::dialect::Dialect;
use crate::event::StateMap;
use crate::session::SessionError;

/// Wraps a driver error with what the store was doing.
pub(super) fn db<E: Into<DriverError>>(operation: &'static str) -> impl FnOnce(E) -> SessionError {
    move |source| SessionError::Database {
        operation,
        source: source.into(),
    }
}

/// A session to insert.
pub(super) struct NewSession<'a> {
    pub app: &'a str,
    pub user: &'a str,
    pub id: &'a str,
    /// Session-scoped state, as JSON.
    pub state_json: String,
    /// `app:` keys of the initial state, prefix stripped.
    pub app_delta: StateMap,
    /// `user:` keys of the initial state, prefix stripped.
    pub user_delta: StateMap,
    /// Creation time, µs since the epoch.
    pub now: i64,
}

/// What [`NewSession`] produced.
pub(super) enum Created {
    /// Inserted; the app's and the user's state after the insert, prefixes stripped.
    Inserted { app: StateMap, user: StateMap },
    /// The id was taken.
    AlreadyExists,
}

/// A stored session, still as JSON text.
pub(super) struct Loaded {
    pub state_json: String,
    pub update_time: i64,
    pub events_json: Vec<String>,
    pub app_json: Option<String>,
    pub user_json: Option<String>,
}

/// An event to commit.
pub(super) struct NewEvent<'a> {
    pub app: &'a str,
    pub user: &'a str,
    pub session_id: &'a str,
    /// The update time the handle was loaded with; the commit happens only if it still holds.
    pub expected_time: i64,
    /// The session's update time after the commit.
    pub new_time: i64,
    pub event_id: &'a str,
    pub invocation_id: &'a str,
    pub timestamp: f64,
    /// The event as stored (`temp:` keys trimmed), as JSON.
    pub event_json: String,
    /// Unprefixed keys of the delta.
    pub session_delta: StateMap,
    /// `app:` keys of the delta, prefix stripped.
    pub app_delta: StateMap,
    /// `user:` keys of the delta, prefix stripped.
    pub user_delta: StateMap,
}

/// What [`NewEvent`] produced.
pub(super) enum Appended {
    /// Committed.
    Committed,
    /// Someone else committed to the session since the handle was loaded; nothing written.
    Stale,
    /// The session no longer exists; nothing written.
    NotFound,
}

/// One row of a session listing: id, create time, update time (µs), event count.
pub(super) type SummaryRow = (String, i64, i64, i64);

/// PostgreSQL's reads, schema and deletes.
pub(super) mod postgres {
    use super::*;

    type Pool = sqlx::PgPool;

    /// Creates or upgrades the sessions schema on `conn` (see
    /// [`crate::session::sql::postgres::migrate_schema`]).
    pub(in crate::session::sql) async fn migrate(
        conn: &mut sqlx::PgConnection,
        d: &Dialect,
        now: i64,
    ) -> Result<(), SessionError> {
        let schema = d.schema();
        let migrated = crate::session::sql::postgres::migrate_schema(
            conn,
            &schema,
            d.begin_write,
            d.migration_lock,
            now,
        )
        .await
        .map_err(|(operation, e)| db(operation)(e))?;
        match migrated {
            crate::session::sql::Migrated::Current => Ok(()),
            crate::session::sql::Migrated::TooNew(found, supported) => {
                Err(SessionError::SchemaTooNew { found, supported })
            }
        }
    }

    /// Reads a session, its events and its app and user state from one snapshot.
    pub(in crate::session::sql) async fn load(
        pool: &Pool,
        d: &Dialect,
        app: &str,
        user: &str,
        id: &str,
    ) -> Result<Option<Loaded>, SessionError> {
        let mut tx = pool.begin_with(d.begin_read).await.map_err(db("begin"))?;
        let row: Option<(String, i64)> = sqlx::query_as(d.select_session)
            .bind(app)
            .bind(user)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db("read the session"))?;
        let Some((state_json, update_time)) = row else {
            tx.rollback().await.map_err(db("end the read"))?;
            return Ok(None);
        };
        let events_json: Vec<String> = sqlx::query_scalar(d.select_events)
            .bind(app)
            .bind(user)
            .bind(id)
            .fetch_all(&mut *tx)
            .await
            .map_err(db("read events"))?;
        let app_json: Option<String> = sqlx::query_scalar(d.select_app_state)
            .bind(app)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db("read app state"))?;
        let user_json: Option<String> = sqlx::query_scalar(d.select_user_state)
            .bind(app)
            .bind(user)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db("read user state"))?;
        tx.commit().await.map_err(db("end the read"))?;
        Ok(Some(Loaded {
            state_json,
            update_time,
            events_json,
            app_json,
            user_json,
        }))
    }

    /// Ids of the user's sessions, unsorted.
    pub(in crate::session::sql) async fn list_ids(
        pool: &Pool,
        d: &Dialect,
        app: &str,
        user: &str,
    ) -> Result<Vec<String>, SessionError> {
        sqlx::query_scalar(d.list_ids)
            .bind(app)
            .bind(user)
            .fetch_all(pool)
            .await
            .map_err(db("list sessions"))
    }

    /// The user's sessions with times and event counts, unsorted.
    pub(in crate::session::sql) async fn list_summaries(
        pool: &Pool,
        d: &Dialect,
        app: &str,
        user: &str,
    ) -> Result<Vec<SummaryRow>, SessionError> {
        sqlx::query_as(d.list_summaries)
            .bind(app)
            .bind(user)
            .fetch_all(pool)
            .await
            .map_err(db("list sessions"))
    }

    /// App, user and id of every session, unsorted.
    pub(in crate::session::sql) async fn list_all(
        pool: &Pool,
        d: &Dialect,
    ) -> Result<Vec<(String, String, String)>, SessionError> {
        sqlx::query_as(d.list_all)
            .fetch_all(pool)
            .await
            .map_err(db("list sessions"))
    }

    /// Deletes a session and its events in one transaction.
    pub(in crate::session::sql) async fn delete(
        pool: &Pool,
        d: &Dialect,
        app: &str,
        user: &str,
        id: &str,
    ) -> Result<(), SessionError> {
        let mut tx = pool.begin_with(d.begin_write).await.map_err(db("begin"))?;
        for (sql, what) in [
            (d.delete_events, "delete events"),
            (d.delete_session, "delete the session"),
        ] {
            sqlx::query(sql)
                .bind(app)
                .bind(user)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(db(what))?;
        }
        tx.commit().await.map_err(db("commit the delete"))
    }
}
