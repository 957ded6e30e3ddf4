//! SQLite's side of the memory store, through rusqlite on the caller's thread (the
//! sessions' `SqliteDb`: one writer, read connections; see `session/sql/sqlite_db.rs`).

use super::{Dialect, ListRow, MemoryEntry, MemoryError, Row, SearchRequest, db, entry};
use crate::memory::Forget;
use crate::session::{Migrated, SessionKey, SqliteDb, migrate as migrate_schema};
use rusqlite::{TransactionBehavior, params};

/// Creates or upgrades the memory tables.
pub(super) async fn migrate(db_: &SqliteDb, d: &Dialect, now: i64) -> Result<(), MemoryError> {
    let migrated = db_
        .write(|conn| migrate_schema(conn, &d.schema(), now).map_err(db("migrate the schema")))
        .await?;
    match migrated {
        Migrated::Current => Ok(()),
        Migrated::TooNew(found, supported) => Err(MemoryError::SchemaTooNew { found, supported }),
    }
}

/// Inserts the memories not stored yet, in one transaction; returns how many.
pub(super) async fn insert(
    db_: &SqliteDb,
    d: &Dialect,
    key: &SessionKey,
    rows: &[Row],
) -> Result<usize, MemoryError> {
    if rows.is_empty() {
        return Ok(0);
    }
    db_.write(|conn| {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db("begin adding memories"))?;
        let mut added = 0;
        {
            let mut q = tx.prepare_cached(d.insert).map_err(db("add a memory"))?;
            for r in rows {
                added += q
                    .execute(params![
                        key.app_name,
                        key.user_id,
                        key.session_id,
                        r.event_id,
                        r.author,
                        r.timestamp,
                        r.content,
                        r.text,
                        r.words
                    ])
                    .map_err(db("add a memory"))?;
            }
        }
        tx.commit().map_err(db("commit memories"))?;
        Ok(added)
    })
    .await
}

/// The user's memories matching `expression`, best first.
pub(super) async fn search(
    db_: &SqliteDb,
    d: &Dialect,
    expression: &str,
    request: &SearchRequest<'_>,
) -> Result<Vec<MemoryEntry>, MemoryError> {
    let rows: Vec<(String, f64, String)> = db_
        .read(|conn| {
            conn.prepare_cached(d.search)
                .and_then(|mut q| {
                    q.query_map(
                        params![
                            expression,
                            request.app,
                            request.user,
                            request.not_before.unwrap_or(f64::MIN)
                        ],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                    )?
                    .collect()
                })
                .map_err(db("search memories"))
        })
        .await?;
    rows.into_iter()
        .map(|(author, timestamp, content)| entry(author, timestamp, &content))
        .collect()
}

/// Memories of one app and user (or all), oldest first.
pub(super) async fn list(
    db_: &SqliteDb,
    d: &Dialect,
    app: Option<&str>,
    user: Option<&str>,
) -> Result<Vec<ListRow>, MemoryError> {
    db_.read(|conn| {
        conn.prepare_cached(d.list)
            .and_then(|mut q| {
                q.query_map(params![app, user], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                    ))
                })?
                .collect()
            })
            .map_err(db("list memories"))
    })
    .await
}

/// Deletes a user's memories (of one session, or all); returns how many.
pub(super) async fn forget(
    db_: &SqliteDb,
    d: &Dialect,
    what: &Forget<'_>,
) -> Result<u64, MemoryError> {
    db_.write(|conn| {
        conn.prepare_cached(d.forget)
            .and_then(|mut q| q.execute(params![what.app, what.user, what.session]))
            .map(|n| n as u64)
            .map_err(db("forget memories"))
    })
    .await
}

/// Deletes an app's memories older than `cutoff`; returns how many.
pub(super) async fn forget_before(
    db_: &SqliteDb,
    d: &Dialect,
    app: &str,
    cutoff: f64,
) -> Result<u64, MemoryError> {
    db_.write(|conn| {
        conn.prepare_cached(d.forget_before)
            .and_then(|mut q| q.execute(params![app, cutoff]))
            .map(|n| n as u64)
            .map_err(db("forget old memories"))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::super::SQLITE;
    use super::*;

    /// Every statement binds `$N` as its N-th parameter, as positional binding assumes.
    #[test]
    fn parameters_are_numbered_in_order() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        migrate_schema(&mut conn, &SQLITE.schema(), 0).unwrap();
        for sql in [
            SQLITE.record_version,
            SQLITE.insert,
            SQLITE.search,
            SQLITE.list,
            SQLITE.forget,
            SQLITE.forget_before,
        ] {
            let q = conn.prepare(sql).unwrap();
            for i in 1..=q.parameter_count() {
                assert_eq!(q.parameter_name(i), Some(format!("${i}").as_str()), "{sql}");
            }
        }
    }
}
