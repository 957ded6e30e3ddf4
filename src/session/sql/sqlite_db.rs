//! One SQLite file, called through rusqlite on the caller's own thread.
//!
//! A commit is tens of microseconds of SQLite's work; handing it to another thread and
//! back (what sqlx's SQLite driver does for every statement) costs two thread wake-ups,
//! more than the commit itself. So the stores call SQLite synchronously, inside their
//! async functions, holding the tokio worker only while SQLite works:
//!
//! - **Writes** go through one connection (SQLite has one writer at a time anyway), behind
//!   an async lock that is never held across an `.await`: the task waits for its turn
//!   without blocking its thread, then runs the statement without yielding. The writer's
//!   busy timeout is zero, so a write never sleeps on the worker waiting for another
//!   process's write lock: when it gets `SQLITE_BUSY` the same work is retried with the
//!   busy timeout, off the runtime's workers ([`blocking`]).
//! - **Checkpoints** run on a thread of the store's own (`checkpoint.rs`): the writer
//!   replaces SQLite's autocheckpoint, which would run inside the commit that takes the
//!   WAL past 1,000 pages, with a WAL hook that notes the WAL's size ([`note_wal_pages`])
//!   and asks that thread for a checkpoint; no commit waits for a checkpoint's fsyncs
//!   until the WAL passes [`HARD_LIMIT_PAGES`].
//! - **Reads** (a whole session, listings) can be large; each takes an idle read
//!   connection (opened when none is idle) and runs off the workers too.
//! - A private in-memory database (`sqlite::memory:`) is one connection: reads go through
//!   the writer.
//!
//! Every connection opens in WAL mode with `synchronous=NORMAL`: a commit is in the WAL
//! file (the OS's page cache) when the statement returns, so it survives the process being
//! killed; only an OS crash or a power cut can lose the last commits, never the file's
//! consistency. No connection checkpoints when it closes
//! (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`): a short-lived process does not pay a checkpoint's
//! fsyncs at exit. A store whose WAL is past 1,000 pages when it closes checkpoints and
//! empties it (`TRUNCATE`), so that the next process does not read it all back.

use rusqlite::config::DbConfig;
use rusqlite::hooks::Wal;
use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};
use std::cell::Cell;
use std::ffi::c_int;
use std::path::{Path, PathBuf};
use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;

use super::checkpoint::{CHECKPOINT_PAGES, Checkpointer, HARD_LIMIT_PAGES};

/// How long a write waits for another connection's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Idle read connections kept.
const MAX_IDLE_READERS: usize = 4;

thread_local! {
    /// The WAL's size in pages after the last commit on this thread ([`note_wal_pages`]).
    static WAL_PAGES: Cell<c_int> = const { Cell::new(0) };
}

/// The writer's WAL hook: SQLite calls it on the committing thread after each commit,
/// with the WAL's size. It replaces SQLite's autocheckpoint (itself a WAL hook), which
/// would checkpoint inside the commit, on a runtime worker; [`Db::write`] reads the size
/// right after the statement, on the same thread, and asks for a checkpoint.
fn note_wal_pages(_: &Wal, pages: c_int) -> rusqlite::Result<()> {
    WAL_PAGES.with(|p| p.set(pages));
    Ok(())
}

/// Errors of [`Db`]'s callers can say that the database is closed and that a statement
/// found it locked by another connection.
pub(crate) trait DbFailure: From<Closed> {
    /// Whether this is SQLite's `SQLITE_BUSY` (another connection holds the write lock).
    fn is_busy(&self) -> bool;
}

/// The store was closed.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the database is closed")]
pub struct Closed;

/// Whether a rusqlite error is `SQLITE_BUSY`.
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
}

/// Runs `f`, which blocks, where it does not stall other tasks: on a multi-threaded
/// runtime the worker hands its tasks to another thread first; elsewhere (a
/// current-thread runtime, no runtime) it simply runs.
pub(crate) fn blocking<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// A SQLite database file (or a private in-memory database) and its connections.
pub(crate) struct Db {
    /// The file; `None` for a private in-memory database.
    path: Option<PathBuf>,
    /// The connection every write goes through; `None` once closed.
    writer: Mutex<Option<Connection>>,
    /// Idle read connections.
    readers: StdMutex<Vec<Connection>>,
    /// Set by [`Db::close`].
    closed: AtomicBool,
    /// The WAL's size in pages after the last commit.
    wal_pages: AtomicI32,
    /// The WAL's size when a checkpoint was last asked for; 0 since it started over.
    asked_at: AtomicI32,
    /// Checkpoints off the committing tasks; `None` for an in-memory database.
    checkpoints: Option<Checkpointer>,
}

impl Db {
    /// Opens the file at `path` (created when missing; its directory must exist), or a
    /// private in-memory database when `path` is `None`.
    pub(crate) fn open(path: Option<&Path>) -> rusqlite::Result<Db> {
        let writer = match path {
            Some(path) => open_file(path)?,
            None => Connection::open_in_memory()?,
        };
        writer.pragma_update(None, "foreign_keys", true)?;
        if path.is_some() {
            // Persistent in the file; here so that a new file starts in WAL mode.
            writer.pragma_update(None, "journal_mode", "WAL")?;
        }
        // From now on a busy write is retried off the runtime's workers (`write`), and the
        // WAL checkpointed by the checkpoint thread.
        writer.busy_timeout(Duration::ZERO)?;
        writer.wal_hook(Some(note_wal_pages));
        Ok(Db {
            path: path.map(Path::to_path_buf),
            writer: Mutex::new(Some(writer)),
            readers: StdMutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            wal_pages: AtomicI32::new(0),
            asked_at: AtomicI32::new(0),
            checkpoints: path.map(|p| Checkpointer::new(p.to_path_buf(), open_file)),
        })
    }

    /// Runs `f` on the writer. When it fails with `SQLITE_BUSY` (another process, or
    /// another store of this one, is writing), `f` runs again, waiting up to the busy
    /// timeout for the lock, off the runtime's workers; `f` must therefore leave nothing
    /// behind when it fails (one statement, or a transaction it rolls back).
    pub(crate) async fn write<T, E: DbFailure>(
        &self,
        mut f: impl FnMut(&mut Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut guard = self.writer.lock().await;
        let conn = guard.as_mut().ok_or(Closed)?;
        WAL_PAGES.with(|p| p.set(0));
        let done = match f(conn) {
            Err(e) if e.is_busy() => blocking(|| {
                conn.busy_timeout(BUSY_TIMEOUT).map_err(|_| e)?;
                let done = f(conn);
                // Back to failing at once; if this fails, later writes merely wait.
                let _ = conn.busy_timeout(Duration::ZERO);
                done
            }),
            done => done,
        };
        let pages = WAL_PAGES.with(Cell::get);
        if pages > 0 {
            self.wal_pages.store(pages, Ordering::Relaxed);
        }
        if let Some(checkpoints) = &self.checkpoints
            && pages > 0
        {
            let asked_at = self.asked_at.load(Ordering::Relaxed);
            if pages >= HARD_LIMIT_PAGES {
                // The background checkpoints never caught up with the commits: this one,
                // with the write lock held, copies the rest, so the next commit starts
                // the WAL over. Off the worker: its fsyncs take milliseconds.
                blocking(|| checkpoints.run_now("PASSIVE"));
                self.asked_at.store(0, Ordering::Relaxed);
            } else if pages < CHECKPOINT_PAGES {
                // The WAL started over.
                self.asked_at.store(0, Ordering::Relaxed);
            } else if pages >= asked_at + CHECKPOINT_PAGES {
                // One checkpoint per 1,000 pages the WAL grows, not one per commit: each
                // fsyncs the WAL, which stalls the commits appending to it meanwhile.
                self.asked_at.store(pages, Ordering::Relaxed);
                checkpoints.request();
            }
        }
        done
    }

    /// Runs `f` on a read connection (the writer, for an in-memory database), off the
    /// runtime's workers.
    pub(crate) async fn read<T, E: DbFailure + From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let Some(path) = &self.path else {
            let mut guard = self.writer.lock().await;
            let conn = guard.as_mut().ok_or(Closed)?;
            return blocking(|| f(conn));
        };
        if self.closed.load(Ordering::Acquire) {
            return Err(Closed.into());
        }
        let idle = self.readers.lock().map(|mut r| r.pop()).unwrap_or(None);
        blocking(|| {
            let mut conn = match idle {
                Some(conn) => conn,
                None => open_file(path)?,
            };
            let done = f(&mut conn);
            if let Ok(mut idle) = self.readers.lock()
                && idle.len() < MAX_IDLE_READERS
            {
                idle.push(conn);
            }
            done
        })
    }

    /// Closes every connection; calls fail with [`Closed`] from then on. A WAL past
    /// 1,000 pages is checkpointed and emptied first ([`Db::finish`]).
    pub(crate) async fn close(&self) {
        let writer = self.writer.lock().await.take();
        blocking(|| self.finish(writer));
    }

    /// What closing does once the writer is taken: closes the read connections, stops
    /// the checkpoint thread, empties a large WAL, closes the writer.
    fn finish(&self, writer: Option<Connection>) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let readers = self
            .readers
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default();
        drop(readers);
        if let Some(checkpoints) = &self.checkpoints {
            checkpoints.stop();
            if writer.is_some() && self.wal_is_large() {
                checkpoints.run_now("TRUNCATE");
                checkpoints.stop();
            }
        }
        drop(writer);
    }
}

impl Db {
    /// Whether the WAL is worth emptying at close: more than 1,000 pages to read back for
    /// the next process, or a file grown past twice that (it keeps its size when the WAL
    /// starts over).
    fn wal_is_large(&self) -> bool {
        if self.wal_pages.load(Ordering::Relaxed) >= CHECKPOINT_PAGES {
            return true;
        }
        let Some(path) = &self.path else {
            return false;
        };
        let mut wal = path.clone().into_os_string();
        wal.push("-wal");
        std::fs::metadata(wal).is_ok_and(|m| m.len() > 2 * CHECKPOINT_PAGES as u64 * 4096)
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let writer = self.writer.get_mut().take();
        self.finish(writer);
    }
}

/// Opens a connection to the file at `path` with the settings every connection shares.
fn open_file(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    Ok(conn)
}

/// The schema-version bookkeeping of one store (sessions, memories): its statements.
pub(crate) struct Schema {
    /// Creates the version table.
    pub create_version_table: &'static str,
    /// `SELECT` of the highest applied version, 0 when none.
    pub current_version: &'static str,
    /// Records an applied version: `$1` version, `$2` time (µs).
    pub record_version: &'static str,
    /// Migrations in order; `migrations[i]` brings the schema to version `i + 1`.
    pub migrations: &'static [&'static [&'static str]],
}

/// What [`migrate`] found.
pub(crate) enum Migrated {
    /// The schema is current.
    Current,
    /// The database was migrated by a newer build: found, supported.
    TooNew(i64, i64),
}

/// Creates or upgrades a store's schema in one `IMMEDIATE` transaction. A database
/// already at the latest version is recognized by one read, without the write lock.
pub(crate) fn migrate(
    conn: &mut Connection,
    schema: &Schema,
    now: i64,
) -> rusqlite::Result<Migrated> {
    let latest = i64::try_from(schema.migrations.len()).unwrap_or(i64::MAX);
    // Fails when the table is missing (a new database): then migrate.
    let current = conn.query_row(schema.current_version, [], |r| r.get::<_, i64>(0));
    if matches!(current, Ok(v) if v == latest) {
        return Ok(Migrated::Current);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(schema.create_version_table, [])?;
    let current: i64 = tx.query_row(schema.current_version, [], |r| r.get(0))?;
    if current > latest {
        return Ok(Migrated::TooNew(current, latest));
    }
    for (version, steps) in (1_i64..)
        .zip(schema.migrations)
        .skip(usize::try_from(current).unwrap_or(0))
    {
        for step in *steps {
            tx.execute(step, [])?;
        }
        tx.execute(schema.record_version, (version, now))?;
    }
    tx.commit()?;
    Ok(Migrated::Current)
}
