//! SQLite's side of the store, through rusqlite on the caller's thread (`sqlite_db.rs`): each
//! commit is one statement.
//!
//! Appending an event is one `INSERT` into a view whose `INSTEAD OF` trigger does the
//! whole commit, and one statement is its own transaction: atomic without BEGIN and
//! COMMIT (one prepared statement, kept in the connection's cache, instead of five).
//!
//! The view and its trigger are `TEMP` objects the writer creates, after the schema is
//! migrated, when a commit first needs them ([`TempView`]): nothing is added to the
//! database file, whose schema stays ADK's. An event without app or user delta (most
//! events) goes through a view whose trigger leaves out the app's and the user's upserts. The trigger checks the session's update time first (compare-and-set) and
//! raises [`STALE`] when it moved, which rolls the statement back; then it writes the
//! state deltas key by key inside SQLite ([`merge`]), never the whole state re-serialized
//! by adk-flow.

use super::backend::{Appended, Created, Loaded, NewEvent, NewSession, SummaryRow, db};
use super::dialect::SQLITE;
use super::encode::{parse_state, to_json};
use crate::event::StateMap;
use crate::session::SessionError;
use rusqlite::{
    CachedStatement, Connection, ErrorCode, OptionalExtension, TransactionBehavior, params,
};
use std::sync::LazyLock;

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

/// A `TEMP` view that a commit inserts into, and its `INSTEAD OF` trigger: created on the
/// writer the first time a statement names it ([`statement`]), not when the connection
/// opens. Compiling a trigger program with its JSON merges is most of the SQL a one-shot
/// `run` compiles (~0.9 ms for the three views together, ~0.4 ms for the one such a run
/// uses), so a connection creates only the views its commits need.
pub(super) struct TempView {
    /// The view's name, as the statements inserting into it name it.
    name: &'static str,
    /// `CREATE TEMP VIEW` and `CREATE TEMP TRIGGER`, both `IF NOT EXISTS`.
    ddl: LazyLock<String>,
}

/// The session's key in a trigger.
const SESSION_KEY: &str = "app_name = NEW.app AND user_id = NEW.usr AND id = NEW.sid";

/// An event's commit with the app's or the user's delta: compare-and-set of the session's
/// update time, its state delta, the event row, the app's and the user's deltas.
static COMMIT_VIEW: TempView = TempView {
    name: "adk_flow_commit",
    ddl: LazyLock::new(|| commit_view("adk_flow_commit", true)),
};

/// An event's commit without app or user delta (most events): the same, without the two
/// upserts, whose merges would be compiled for nothing.
static SESSION_COMMIT_VIEW: TempView = TempView {
    name: "adk_flow_commit_session",
    ddl: LazyLock::new(|| commit_view("adk_flow_commit_session", false)),
};

/// A session created with `app:`/`user:` keys.
static CREATE_VIEW: TempView = TempView {
    name: "adk_flow_create",
    ddl: LazyLock::new(create_view),
};

/// The app's and the user's upserts of a trigger.
fn scope_upserts() -> String {
    let app_upsert = upsert("app_states", "app_name", "NEW.app", "app_delta");
    let user_upsert = upsert(
        "user_states",
        "app_name, user_id",
        "NEW.app, NEW.usr",
        "user_delta",
    );
    format!("{app_upsert} {user_upsert}")
}

fn commit_view(name: &str, scopes: bool) -> String {
    let (scope_columns, upserts) = if scopes {
        (", NULL AS app_delta, NULL AS user_delta", scope_upserts())
    } else {
        ("", String::new())
    };
    format!(
        "CREATE TEMP VIEW IF NOT EXISTS {name} AS SELECT \
            NULL AS app, NULL AS usr, NULL AS sid, NULL AS time, NULL AS expected, \
            NULL AS event_id, NULL AS invocation, NULL AS ts, NULL AS data, \
            NULL AS session_delta{scope_columns};\
         CREATE TEMP TRIGGER IF NOT EXISTS {name} INSTEAD OF INSERT ON {name} \
         BEGIN \
            SELECT RAISE(ABORT, '{STALE}') WHERE NOT EXISTS \
                (SELECT 1 FROM sessions WHERE {SESSION_KEY} AND update_time = NEW.expected);\
            UPDATE sessions SET update_time = NEW.time, state = CASE \
                WHEN NEW.session_delta IS NULL THEN state \
                ELSE {session_merge} END WHERE {SESSION_KEY};\
            INSERT INTO events \
                (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) \
                VALUES (NEW.event_id, NEW.app, NEW.usr, NEW.sid, NEW.invocation, NEW.ts, NEW.data);\
            {upserts} \
         END;",
        session_merge = merge("state", "NEW.session_delta"),
    )
}

fn create_view() -> String {
    format!(
        "CREATE TEMP VIEW IF NOT EXISTS adk_flow_create AS SELECT \
            NULL AS app, NULL AS usr, NULL AS sid, NULL AS state, NULL AS time, \
            NULL AS app_delta, NULL AS user_delta;\
         CREATE TEMP TRIGGER IF NOT EXISTS adk_flow_create INSTEAD OF INSERT ON adk_flow_create \
         BEGIN \
            INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time) \
                VALUES (NEW.app, NEW.usr, NEW.sid, NEW.state, NEW.time, NEW.time);\
            {upserts} \
         END;",
        upserts = scope_upserts(),
    )
}

/// `sql`, prepared (from the connection's cache), which inserts into `view`: the view and
/// its trigger are created first when the connection does not have them yet (they are
/// `TEMP`: they live with the connection). Creating them is idempotent, so a write that
/// runs twice (`Db::write`) is safe.
fn statement<'c>(
    conn: &'c Connection,
    sql: &str,
    view: &TempView,
) -> rusqlite::Result<CachedStatement<'c>> {
    match conn.prepare_cached(sql) {
        Err(e) if names_missing_table(&e, view.name) => {
            conn.execute_batch(view.ddl.as_str())?;
            conn.prepare_cached(sql)
        }
        prepared => prepared,
    }
}

/// Whether `e` is SQLite's "no such table" for `name`.
fn names_missing_table(e: &rusqlite::Error, name: &str) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(_, Some(m))
        if m.strip_prefix("no such table: ") == Some(name))
}

/// A delta as the triggers take it: a JSON object, or NULL when empty.
fn delta_json(delta: &StateMap, what: &str) -> Result<Option<String>, SessionError> {
    if delta.is_empty() {
        Ok(None)
    } else {
        to_json(delta, what).map(Some)
    }
}

/// The session's, the app's and the user's deltas as the triggers take them, encoded once
/// before the write (which may run twice: see `Db::write`).
pub(super) struct Deltas {
    session: Option<String>,
    app: Option<String>,
    user: Option<String>,
}

impl Deltas {
    /// `session` is empty when creating a session (its state is written whole).
    pub(super) fn new(
        session: &StateMap,
        app: &StateMap,
        user: &StateMap,
    ) -> Result<Deltas, SessionError> {
        Ok(Deltas {
            session: delta_json(session, "session state")?,
            app: delta_json(app, "app state")?,
            user: delta_json(user, "user state")?,
        })
    }
}

/// Whether `e` is SQLite's report of a statement `RAISE`d with `message`.
fn is_raise(e: &rusqlite::Error, message: &str) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(_, Some(m)) if m == message)
}

/// Whether `e` is a duplicate key.
fn is_duplicate(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if f.code == ErrorCode::ConstraintViolation
            && matches!(f.extended_code, rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                | rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE))
}

// Parameters are bound by position: `$N` is the N-th distinct parameter of each statement
// (a unit test checks every statement).

/// A session without `app:`/`user:` keys, and the app's and the user's state.
const INSERT_SESSION: &str = "INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time) \
    VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (app_name, user_id, id) DO NOTHING \
    RETURNING (SELECT state FROM app_states WHERE app_name = $1), \
    (SELECT state FROM user_states WHERE app_name = $1 AND user_id = $2)";
/// A session with `app:`/`user:` keys, through the trigger.
const CREATE_SESSION: &str = "INSERT INTO adk_flow_create (app, usr, sid, state, time, app_delta, user_delta) \
    VALUES ($1, $2, $3, $4, $5, $6, $7)";
/// The app's and the user's state.
const SELECT_SCOPES: &str = "SELECT (SELECT state FROM app_states WHERE app_name = $1), \
    (SELECT state FROM user_states WHERE app_name = $1 AND user_id = $2)";
/// An event's commit, through the trigger ([`COMMIT_VIEW`]).
const COMMIT: &str = "INSERT INTO adk_flow_commit (app, usr, sid, time, expected, event_id, \
    invocation, ts, data, session_delta, app_delta, user_delta) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
/// An event's commit without app or user delta ([`SESSION_COMMIT_VIEW`]).
const SESSION_COMMIT: &str = "INSERT INTO adk_flow_commit_session (app, usr, sid, time, \
    expected, event_id, invocation, ts, data, session_delta) \
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

/// The app's and the user's state, as JSON.
type ScopeRow = (Option<String>, Option<String>);

fn scope_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ScopeRow> {
    Ok((r.get(0)?, r.get(1)?))
}

/// Inserts a session and routes its `app:`/`user:` keys in one statement, then returns the
/// app's and the user's state (read in the same statement when there are no such keys).
pub(super) fn create(
    conn: &Connection,
    s: &NewSession<'_>,
    d: &Deltas,
) -> Result<Created, SessionError> {
    let row: Option<ScopeRow> = if d.app.is_none() && d.user.is_none() {
        conn.prepare_cached(INSERT_SESSION)
            .and_then(|mut q| {
                q.query_row(params![s.app, s.user, s.id, s.state_json, s.now], scope_row)
                    .optional()
            })
            .map_err(db("insert the session"))?
    } else {
        let inserted = statement(conn, CREATE_SESSION, &CREATE_VIEW).and_then(|mut q| {
            q.execute(params![
                s.app,
                s.user,
                s.id,
                s.state_json,
                s.now,
                d.app,
                d.user
            ])
        });
        match inserted {
            Err(e) if is_duplicate(&e) => None,
            Err(e) => return Err(db("insert the session")(e)),
            Ok(_) => Some(
                conn.prepare_cached(SELECT_SCOPES)
                    .and_then(|mut q| q.query_row(params![s.app, s.user], scope_row))
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
pub(super) fn append(
    conn: &Connection,
    e: &NewEvent<'_>,
    d: &Deltas,
) -> Result<Appended, SessionError> {
    // An event without app or user delta commits through the lighter view, which reads
    // the same parameters but the last two.
    let all: [&dyn rusqlite::ToSql; 12] = [
        &e.app,
        &e.user,
        &e.session_id,
        &e.new_time,
        &e.expected_time,
        &e.event_id,
        &e.invocation_id,
        &e.timestamp,
        &e.event_json,
        &d.session,
        &d.app,
        &d.user,
    ];
    let (sql, view, used) = if d.app.is_none() && d.user.is_none() {
        (SESSION_COMMIT, &SESSION_COMMIT_VIEW, 10)
    } else {
        (COMMIT, &COMMIT_VIEW, 12)
    };
    let done = statement(conn, sql, view).and_then(|mut q| q.execute(&all[..used]));
    match done {
        Ok(_) => return Ok(Appended::Committed),
        Err(err) if is_raise(&err, STALE) => {}
        Err(err) => return Err(db("commit the event")(err)),
    }
    // Nothing written: the session moved on, or is gone.
    let exists = conn
        .prepare_cached(SQLITE.select_session)
        .and_then(|mut q| q.exists(params![e.app, e.user, e.session_id]))
        .map_err(db("read the session"))?;
    Ok(if exists {
        Appended::Stale
    } else {
        Appended::NotFound
    })
}

/// Reads a session, its events and its app and user state from one snapshot.
pub(super) fn load(
    conn: &mut Connection,
    app: &str,
    user: &str,
    id: &str,
) -> Result<Option<Loaded>, SessionError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Deferred)
        .map_err(db("begin"))?;
    let row = tx
        .prepare_cached(SQLITE.select_session)
        .and_then(|mut q| {
            q.query_row(params![app, user, id], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
        })
        .map_err(db("read the session"))?;
    let Some((state_json, update_time)) = row else {
        return Ok(None);
    };
    let events_json = tx
        .prepare_cached(SQLITE.select_events)
        .and_then(|mut q| {
            q.query_map(params![app, user, id], |r| r.get(0))?
                .collect::<Result<Vec<String>, _>>()
        })
        .map_err(db("read events"))?;
    let app_json = tx
        .prepare_cached(SQLITE.select_app_state)
        .and_then(|mut q| q.query_row(params![app], |r| r.get(0)).optional())
        .map_err(db("read app state"))?;
    let user_json = tx
        .prepare_cached(SQLITE.select_user_state)
        .and_then(|mut q| q.query_row(params![app, user], |r| r.get(0)).optional())
        .map_err(db("read user state"))?;
    tx.commit().map_err(db("end the read"))?;
    Ok(Some(Loaded {
        state_json,
        update_time,
        events_json,
        app_json,
        user_json,
    }))
}

/// Runs the listing `sql` with `args` and reads each row with `row`.
fn list<T>(
    conn: &Connection,
    sql: &str,
    args: impl rusqlite::Params,
    row: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, SessionError> {
    conn.prepare_cached(sql)
        .and_then(|mut q| q.query_map(args, row)?.collect())
        .map_err(db("list sessions"))
}

/// Ids of the user's sessions, unsorted.
pub(super) fn list_ids(
    conn: &Connection,
    app: &str,
    user: &str,
) -> Result<Vec<String>, SessionError> {
    list(conn, SQLITE.list_ids, params![app, user], |r| r.get(0))
}

/// The user's sessions with times and event counts, unsorted.
pub(super) fn list_summaries(
    conn: &Connection,
    app: &str,
    user: &str,
) -> Result<Vec<SummaryRow>, SessionError> {
    list(conn, SQLITE.list_summaries, params![app, user], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })
}

/// App, user and id of every session, unsorted.
pub(super) fn list_all(conn: &Connection) -> Result<Vec<(String, String, String)>, SessionError> {
    list(conn, SQLITE.list_all, [], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })
}

/// Deletes a session and its events in one transaction.
pub(super) fn delete(
    conn: &mut Connection,
    app: &str,
    user: &str,
    id: &str,
) -> Result<(), SessionError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(db("begin"))?;
    for (sql, what) in [
        (SQLITE.delete_events, "delete events"),
        (SQLITE.delete_session, "delete the session"),
    ] {
        tx.prepare_cached(sql)
            .and_then(|mut q| q.execute(params![app, user, id]))
            .map_err(db(what))?;
    }
    tx.commit().map_err(db("commit the delete"))
}

#[cfg(test)]
mod tests {
    use super::super::migrate;
    use super::*;

    /// Every statement binds `$N` as its N-th parameter, as positional binding assumes.
    #[test]
    fn parameters_are_numbered_in_order() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, &SQLITE.schema(), 0).unwrap();
        for view in [&COMMIT_VIEW, &SESSION_COMMIT_VIEW, &CREATE_VIEW] {
            conn.execute_batch(view.ddl.as_str()).unwrap();
        }
        let d = &SQLITE;
        for sql in [
            INSERT_SESSION,
            CREATE_SESSION,
            SELECT_SCOPES,
            COMMIT,
            SESSION_COMMIT,
            d.record_version,
            d.select_session,
            d.select_events,
            d.select_app_state,
            d.select_user_state,
            d.list_ids,
            d.list_summaries,
            d.list_all,
            d.delete_events,
            d.delete_session,
        ] {
            let q = conn.prepare(sql).unwrap();
            for i in 1..=q.parameter_count() {
                assert_eq!(q.parameter_name(i), Some(format!("${i}").as_str()), "{sql}");
            }
        }
    }

    /// A commit's view is created on first use, once per connection: SQLite's "no such
    /// table" names it as [`statement`] expects.
    #[test]
    fn views_are_created_on_first_use() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, &SQLITE.schema(), 0).unwrap();
        let err = conn.prepare(SESSION_COMMIT).map(|_| ()).unwrap_err();
        assert!(names_missing_table(&err, SESSION_COMMIT_VIEW.name), "{err}");
        for (sql, view) in [
            (SESSION_COMMIT, &SESSION_COMMIT_VIEW),
            (COMMIT, &COMMIT_VIEW),
            (CREATE_SESSION, &CREATE_VIEW),
        ] {
            statement(&conn, sql, view).unwrap();
            statement(&conn, sql, view).unwrap();
        }
        let views: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_temp_master WHERE type = 'view'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(views, 3);
    }
}
