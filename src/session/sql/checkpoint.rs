//! Checkpoints of a SQLite file's WAL, off the committing tasks.
//!
//! A checkpoint copies the WAL's pages into the database file and fsyncs both (4-8 ms
//! each on a virtual disk). SQLite's autocheckpoint runs it inside the commit that takes
//! the WAL past 1,000 pages, so some commit waits for two fsyncs. Here the writer only
//! asks ([`Checkpointer::request`]) and a thread of the store's own, with a connection of
//! its own, runs a `PASSIVE` checkpoint beside the commits.
//!
//! A passive checkpoint copies the frames that were there when it started; the WAL starts
//! over only when a commit finds every frame copied. Under continuous writes (a bench)
//! that never happens, so the WAL would grow without end: past [`HARD_LIMIT_PAGES`] the
//! writer runs the checkpoint itself, holding the write lock, which lets it complete; the
//! next commit then starts the WAL over ([`Checkpointer::run_now`]). With the background
//! checkpoints done, that one copies only the last frames, but still fsyncs.

use rusqlite::Connection;
use std::ffi::c_int;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// WAL pages after which the background thread checkpoints (SQLite's autocheckpoint).
pub(crate) const CHECKPOINT_PAGES: c_int = 1000;
/// WAL pages after which the writer checkpoints itself, so that the WAL starts over
/// (about 40 MiB of WAL with 4 KiB pages).
pub(crate) const HARD_LIMIT_PAGES: c_int = 10 * CHECKPOINT_PAGES;

/// What the writer asked of the thread.
#[derive(Default)]
struct Asked {
    /// A checkpoint is wanted.
    checkpoint: bool,
    /// The store is closing: the thread ends.
    stop: bool,
}

/// State shared by the writer and the thread.
struct Shared {
    path: PathBuf,
    asked: Mutex<Asked>,
    wake: Condvar,
    /// The checkpointing connection, opened on first use; held while a checkpoint runs,
    /// so the writer's own checkpoint ([`Checkpointer::run_now`]) waits for the thread's.
    conn: Mutex<Option<Connection>>,
    /// How each connection opens (the store's settings).
    open: fn(&std::path::Path) -> rusqlite::Result<Connection>,
}

impl Shared {
    /// Runs one checkpoint of `mode` on the checkpointing connection.
    fn checkpoint(&self, mode: &str) {
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        if conn.is_none() {
            // No busy timeout: a `PASSIVE` checkpoint never waits anyway, and the
            // `TRUNCATE` one at close gives up rather than wait for another process.
            match (self.open)(&self.path).and_then(|c| {
                c.busy_timeout(std::time::Duration::ZERO)?;
                Ok(c)
            }) {
                Ok(c) => *conn = Some(c),
                Err(e) => {
                    tracing::debug!(
                        "SQLite checkpoint: cannot open {}: {e}",
                        self.path.display()
                    );
                    return;
                }
            }
        }
        if let Some(c) = conn.as_ref()
            && let Err(e) = c.execute_batch(&format!("PRAGMA wal_checkpoint({mode})"))
        {
            tracing::debug!("SQLite checkpoint failed: {e}");
        }
    }

    /// The thread: waits for a request, checkpoints, until asked to stop.
    fn serve(&self) {
        loop {
            {
                let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
                while !asked.checkpoint && !asked.stop {
                    asked = self.wake.wait(asked).unwrap_or_else(|e| e.into_inner());
                }
                if asked.stop {
                    return;
                }
                asked.checkpoint = false;
            }
            self.checkpoint("PASSIVE");
        }
    }
}

/// The checkpoints of one database file: a thread started on the first request.
pub(crate) struct Checkpointer {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Checkpointer {
    /// Checkpoints of the file at `path`, whose connections `open` opens.
    pub(crate) fn new(
        path: PathBuf,
        open: fn(&std::path::Path) -> rusqlite::Result<Connection>,
    ) -> Checkpointer {
        Checkpointer {
            shared: Arc::new(Shared {
                path,
                asked: Mutex::new(Asked::default()),
                wake: Condvar::new(),
                conn: Mutex::new(None),
                open,
            }),
            thread: Mutex::new(None),
        }
    }

    /// Asks for a background checkpoint; returns at once. Requests made while one runs
    /// make one more.
    pub(crate) fn request(&self) {
        let mut thread = self.thread.lock().unwrap_or_else(|e| e.into_inner());
        if thread.is_none() {
            let shared = Arc::clone(&self.shared);
            match std::thread::Builder::new()
                .name("adk-flow-sqlite-checkpoint".into())
                .spawn(move || shared.serve())
            {
                Ok(handle) => *thread = Some(handle),
                Err(e) => {
                    // Without the thread the writer's hard limit still bounds the WAL.
                    tracing::debug!("SQLite checkpoint thread: {e}");
                    return;
                }
            }
        }
        drop(thread);
        let mut asked = self.shared.asked.lock().unwrap_or_else(|e| e.into_inner());
        asked.checkpoint = true;
        self.shared.wake.notify_one();
    }

    /// Checkpoints now, on the caller's thread, after any background checkpoint running:
    /// `mode` is `PASSIVE` (the caller holds the write lock, so it completes) or
    /// `TRUNCATE` (when closing: the WAL file is emptied).
    pub(crate) fn run_now(&self, mode: &str) {
        self.shared.checkpoint(mode);
    }

    /// Ends the thread (after the checkpoint it is running, if any) and closes its
    /// connection.
    pub(crate) fn stop(&self) {
        {
            let mut asked = self.shared.asked.lock().unwrap_or_else(|e| e.into_inner());
            asked.stop = true;
            self.shared.wake.notify_one();
        }
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
        let conn = self
            .shared
            .conn
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(conn);
    }
}
