//! A session's turn held across processes: the lease a shared store gives one process at a
//! time, so that replicas of `serve` on one database never run two turns of a session at
//! once. A lock inside one process (see [`super::SessionGates`]) cannot see the others.
//!
//! A lease is a row in the store with an owner and an expiry. It is renewed while held and
//! deleted when released, so a process that dies mid-turn blocks the session only until its
//! lease expires.

use std::time::Duration;
use tokio::sync::oneshot;

/// How long a lease lasts without renewal: the longest a crashed replica can block a
/// session. Clocks of the replicas may disagree by less than [`RENEW_EVERY`].
pub const LEASE: Duration = Duration::from_secs(30);
/// How often a held lease is renewed.
pub const RENEW_EVERY: Duration = Duration::from_secs(10);

/// A session's turn held in a shared store; dropping it gives the turn back.
///
/// The release runs in the background (it is a database write), so the next holder may
/// wait a few milliseconds longer than the drop.
#[derive(Debug)]
pub struct TurnLease {
    release: Option<oneshot::Sender<()>>,
}

impl TurnLease {
    /// A lease whose keeper (the task renewing it) gives it back when `release` fires or
    /// its sender is dropped.
    pub(crate) fn new(release: oneshot::Sender<()>) -> Self {
        TurnLease {
            release: Some(release),
        }
    }
}

impl Drop for TurnLease {
    fn drop(&mut self) {
        if let Some(tx) = self.release.take() {
            let _ = tx.send(());
        }
    }
}
