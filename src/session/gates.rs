//! One async lock per session, for work that must take turns on a session: appends
//! through the SQL store, and whole turns in `serve`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::Mutex as AsyncMutex;

/// App, user and session id.
type GateKey = (String, String, String);

/// A map from session to its lock. A lock lives while someone holds or waits for it;
/// dead entries are pruned as the map grows, so the cost stays constant per call.
#[derive(Default)]
pub struct SessionGates {
    inner: Mutex<Gates>,
}

#[derive(Default)]
struct Gates {
    map: HashMap<GateKey, Weak<AsyncMutex<()>>>,
    /// Prune when the map reaches this size (doubling keeps the work amortized).
    prune_at: usize,
}

impl SessionGates {
    /// The session's lock, created on first use.
    pub fn get(&self, app: &str, user: &str, session: &str) -> Arc<AsyncMutex<()>> {
        let mut gates = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let key = (app.to_owned(), user.to_owned(), session.to_owned());
        if let Some(gate) = gates.map.get(&key).and_then(Weak::upgrade) {
            return gate;
        }
        if gates.map.len() >= gates.prune_at {
            gates.map.retain(|_, gate| gate.strong_count() > 0);
            gates.prune_at = (gates.map.len() * 2).max(64);
        }
        let gate = Arc::new(AsyncMutex::new(()));
        gates.map.insert(key, Arc::downgrade(&gate));
        gate
    }

    /// Sessions whose lock is held or awaited right now.
    pub fn in_use(&self) -> usize {
        let gates = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        gates.map.values().filter(|g| g.strong_count() > 0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lock_per_session_and_dead_locks_are_pruned() {
        let gates = SessionGates::default();
        let a = gates.get("app", "u", "s1");
        assert!(Arc::ptr_eq(&a, &gates.get("app", "u", "s1")));
        assert!(!Arc::ptr_eq(&a, &gates.get("app", "u", "s2")));
        for i in 0..1000 {
            drop(gates.get("app", "u", &format!("x{i}")));
        }
        let size = gates.inner.lock().unwrap().map.len();
        assert!(size < 200, "dead locks were not pruned: {size}");
        assert_eq!(gates.in_use(), 1);
        assert!(Arc::ptr_eq(&a, &gates.get("app", "u", "s1")));
    }
}
