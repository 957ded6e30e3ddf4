//! Turn leases in PostgreSQL (see [`TurnLease`]): one row per session whose turn is held,
//! with its owner and an expiry on the database's clock, so replicas whose clocks disagree
//! still agree on when a lease has run out.

use super::backend::db;
use crate::session::{LEASE, RENEW_EVERY, SessionError, TurnLease};
use sqlx::PgPool;
use std::time::Duration;
use tokio::sync::oneshot;

/// Takes the turn when nobody holds it or the holder's lease expired.
const CLAIM: &str = "INSERT INTO session_turns (app_name, user_id, session_id, owner, expires_at)
    VALUES ($1, $2, $3, $4, clock_timestamp() + make_interval(secs => $5))
    ON CONFLICT (app_name, user_id, session_id) DO UPDATE
        SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
        WHERE session_turns.expires_at < clock_timestamp()";
/// Pushes the expiry of a lease still held by `$4`.
const RENEW: &str = "UPDATE session_turns
    SET expires_at = clock_timestamp() + make_interval(secs => $5)
    WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND owner = $4";
/// Gives the turn back, if `$4` still holds it.
const RELEASE: &str = "DELETE FROM session_turns
    WHERE app_name = $1 AND user_id = $2 AND session_id = $3 AND owner = $4";

/// The first and the longest pause between two claims while another replica holds the
/// turn: short turns hand over fast, long ones cost a query every tenth of a second.
const FIRST_WAIT: Duration = Duration::from_millis(2);
const MAX_WAIT: Duration = Duration::from_millis(100);

/// One session's lease row.
#[derive(Clone)]
struct Key {
    app: String,
    user: String,
    session: String,
    owner: String,
}

impl Key {
    /// Runs `sql` on this row; `lease`, when given, is bound as `$5` (seconds).
    async fn run(
        &self,
        pool: &PgPool,
        sql: &'static str,
        lease: Option<Duration>,
    ) -> Result<u64, sqlx::Error> {
        let query = sqlx::query(sql)
            .bind(&self.app)
            .bind(&self.user)
            .bind(&self.session)
            .bind(&self.owner);
        let query = match lease {
            Some(lease) => query.bind(lease.as_secs_f64()),
            None => query,
        };
        Ok(query.execute(pool).await?.rows_affected())
    }
}

/// Waits until the session's turn is free, takes it and keeps it renewed until the lease
/// is dropped.
///
/// A caller that stops waiting between a successful claim and its answer leaves a lease
/// without keeper; it blocks the session until it expires ([`LEASE`]).
pub(super) async fn hold(
    pool: &PgPool,
    app: &str,
    user: &str,
    session: &str,
) -> Result<TurnLease, SessionError> {
    let key = Key {
        app: app.to_owned(),
        user: user.to_owned(),
        session: session.to_owned(),
        owner: uuid::Uuid::new_v4().to_string(),
    };
    let mut wait = FIRST_WAIT;
    while key
        .run(pool, CLAIM, Some(LEASE))
        .await
        .map_err(db("claim the session's turn"))?
        == 0
    {
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(MAX_WAIT);
    }
    let (release, released) = oneshot::channel();
    tokio::spawn(keep(pool.clone(), key, released));
    Ok(TurnLease::new(release))
}

/// Renews the lease until it is released (or its holder dropped), then deletes it.
async fn keep(pool: PgPool, key: Key, mut released: oneshot::Receiver<()>) {
    let mut renew =
        tokio::time::interval_at(tokio::time::Instant::now() + RENEW_EVERY, RENEW_EVERY);
    loop {
        tokio::select! {
            _ = &mut released => break,
            _ = renew.tick() => match key.run(&pool, RENEW, Some(LEASE)).await {
                Ok(1) => {}
                Ok(_) => {
                    // Only after the database was unreachable for a whole lease.
                    tracing::error!(
                        app = %key.app, session = %key.session,
                        "the session's turn lease expired while its turn was running; \
                         another replica may have taken it"
                    );
                    return;
                }
                Err(e) => tracing::warn!(
                    app = %key.app, session = %key.session,
                    "cannot renew the session's turn lease: {}", crate::errors::chain(&e)
                ),
            },
        }
    }
    if let Err(e) = key.run(&pool, RELEASE, None).await {
        tracing::warn!(
            app = %key.app, session = %key.session,
            "cannot give the session's turn back; it frees itself within {} s: {}",
            LEASE.as_secs(), crate::errors::chain(&e)
        );
    }
}
