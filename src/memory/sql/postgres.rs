//! PostgreSQL's side of the memory store, through sqlx.

use super::{
    Dialect, Forget, ListRow, MemoryEntry, MemoryError, Row, SearchRequest, SessionKey, db, entry,
};

type Pool = sqlx::PgPool;

/// Creates or upgrades the memory tables (the sessions' PostgreSQL migration, with the
/// memory store's statements).
pub(super) async fn migrate(pool: &Pool, d: &Dialect, applied: i64) -> Result<(), MemoryError> {
    let mut conn = pool.acquire().await.map_err(db("connect"))?;
    let migrated = crate::session::migrate_postgres(
        &mut conn,
        &d.schema(),
        d.begin_write,
        d.migration_lock,
        applied,
    )
    .await
    .map_err(|(operation, e)| db(operation)(e))?;
    match migrated {
        crate::session::Migrated::Current => Ok(()),
        crate::session::Migrated::TooNew(found, supported) => {
            Err(MemoryError::SchemaTooNew { found, supported })
        }
    }
}

pub(super) async fn insert(
    pool: &Pool,
    d: &Dialect,
    key: &SessionKey,
    rows: &[Row],
) -> Result<usize, MemoryError> {
    if rows.is_empty() {
        return Ok(0);
    }
    let mut tx = pool
        .begin_with(d.begin_write)
        .await
        .map_err(db("begin adding memories"))?;
    let mut added = 0;
    for r in rows {
        let done = sqlx::query(d.insert)
            .bind(&key.app_name)
            .bind(&key.user_id)
            .bind(&key.session_id)
            .bind(&r.event_id)
            .bind(&r.author)
            .bind(r.timestamp)
            .bind(&r.content)
            .bind(&r.text)
            .bind(&r.words)
            .execute(&mut *tx)
            .await
            .map_err(db("add a memory"))?;
        added += done.rows_affected() as usize;
    }
    tx.commit().await.map_err(db("commit memories"))?;
    Ok(added)
}

pub(super) async fn search(
    pool: &Pool,
    d: &Dialect,
    expression: &str,
    request: &SearchRequest<'_>,
) -> Result<Vec<MemoryEntry>, MemoryError> {
    let rows: Vec<(String, f64, String)> = sqlx::query_as(d.search)
        .bind(expression)
        .bind(request.app)
        .bind(request.user)
        .bind(request.not_before.unwrap_or(f64::MIN))
        .fetch_all(pool)
        .await
        .map_err(db("search memories"))?;
    rows.into_iter()
        .map(|(author, timestamp, content)| entry(author, timestamp, &content))
        .collect()
}

pub(super) async fn list(
    pool: &Pool,
    d: &Dialect,
    app: Option<&str>,
    user: Option<&str>,
) -> Result<Vec<ListRow>, MemoryError> {
    sqlx::query_as(d.list)
        .bind(app)
        .bind(user)
        .fetch_all(pool)
        .await
        .map_err(db("list memories"))
}

pub(super) async fn forget(
    pool: &Pool,
    d: &Dialect,
    what: &Forget<'_>,
) -> Result<u64, MemoryError> {
    let done = sqlx::query(d.forget)
        .bind(what.app)
        .bind(what.user)
        .bind(what.session)
        .execute(pool)
        .await
        .map_err(db("forget memories"))?;
    Ok(done.rows_affected())
}

pub(super) async fn forget_before(
    pool: &Pool,
    d: &Dialect,
    app: &str,
    cutoff: f64,
) -> Result<u64, MemoryError> {
    let done = sqlx::query(d.forget_before)
        .bind(app)
        .bind(cutoff)
        .execute(pool)
        .await
        .map_err(db("forget old memories"))?;
    Ok(done.rows_affected())
}
