//! Sessions: a conversation's events and state, and the services that store them.
//!
//! A [`Session`] lives behind a [`SessionHandle`], one lock per conversation, never held
//! across an `.await`. The Runner and the tools of one invocation share the handle, so
//! nothing is copied per event: [`SessionService::append_event`] mutates the session in
//! place and stores the event once, as an `Arc<Event>`.
//!
//! State keys are scoped by prefix, as in ADK: `app:` keys are shared by every session of
//! the app, `user:` keys by every session of one user, `temp:` keys live for the current
//! invocation only and are never persisted, and unprefixed keys belong to the session.

mod gates;
mod memory;
mod sql;
mod state;
mod turns;

pub use gates::SessionGates;
pub use memory::InMemorySessionService;
pub(crate) use memory::Prehashed;
pub(crate) use sql::{
    Backend as SqlBackend, Closed, DbFailure, Migrated, Schema, SqliteDb, connect_backend, migrate,
    migrate_postgres,
};
pub use sql::{
    DriverError, SessionKey, SessionSummary, SqlSessionService, open_session_service, sqlite_path,
};
pub use state::{APP_PREFIX, StateScope, TEMP_PREFIX, USER_PREFIX, scope_of};
pub use turns::{LEASE, RENEW_EVERY, TurnLease};

use crate::event::{Event, SparseMap, StateMap};
use async_trait::async_trait;
use serde_json::Value;
use std::sync::{Arc, Mutex, MutexGuard};

/// Errors of a session service.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No session with that id exists for the app and user.
    #[error("session not found: {session_id}")]
    NotFound {
        /// The id that was looked up.
        session_id: String,
    },
    /// A session with that id already exists.
    #[error("session already exists: {session_id}")]
    AlreadyExists {
        /// The id that was requested.
        session_id: String,
    },
    /// Another handle or process committed to the session after this handle was loaded
    /// (ADK's `DatabaseSessionService` message). Nothing was written; reload the session.
    #[error(
        "The session has been modified in storage since it was loaded. Please reload the session before appending more events."
    )]
    Stale {
        /// The session appended to.
        session_id: String,
    },
    /// The database URL names no supported store.
    #[error("unsupported session database `{url}`: expected sqlite:PATH, postgres://... or memory")]
    UnsupportedUrl {
        /// The URL, password removed.
        url: String,
    },
    /// The database could not be opened.
    #[error("cannot open session database `{url}`")]
    Connect {
        /// The URL, password removed.
        url: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// The directory of a SQLite database could not be created.
    #[error("cannot create directory `{}` for the session database", path.display())]
    CreateDir {
        /// The directory.
        path: std::path::PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A database statement failed.
    #[error("session database: cannot {operation}")]
    Database {
        /// What the store was doing.
        operation: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// Stored JSON could not be read back, or a value could not be written as JSON.
    #[error("session database: invalid JSON in {what}")]
    Corrupt {
        /// Which value.
        what: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
    /// The database was migrated by a newer adk-flow.
    #[error(
        "session database schema version {found} is newer than this adk-flow supports ({supported})"
    )]
    SchemaTooNew {
        /// The version in the database.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
}

/// One conversation: its identity, its events and its current state.
#[derive(Debug, Clone, Default)]
pub struct Session {
    /// Session id.
    pub id: String,
    /// The app (workflow) it belongs to.
    pub app_name: String,
    /// The user it belongs to.
    pub user_id: String,
    /// Session, `app:` and `user:` state, with prefixes kept.
    pub state: StateMap,
    /// `temp:` state of the current invocation, with prefixes kept.
    pub temp_state: StateMap,
    /// Committed events, oldest first.
    pub events: Vec<Arc<Event>>,
    /// Time of the last commit, seconds since the epoch.
    pub last_update_time: f64,
    /// What the runtime derives from `events` and keeps between turns (never stored).
    pub derived: Derived,
}

/// Views the runtime derives from a session's events (such as the conversation an agent
/// sees) and keeps with the session, so that each turn extends them by the events
/// committed since, instead of rebuilding them from the whole history. Never persisted; a
/// copy of the session starts without them, and each view checks that it still matches
/// the events before it is extended.
///
/// A session holds a few views (one per agent and branch that called a model), so they are
/// kept in a list sized to them and found by comparing keys: no hashing per call, no
/// table with room to spare in every session.
#[derive(Default)]
pub struct Derived {
    views: Vec<(Arc<str>, Box<dyn std::any::Any + Send + Sync>)>,
}

impl Derived {
    /// The view stored under `key`, created empty when missing or of another type
    /// (`None` only if the store cannot hold a `T`, which does not happen). The key is
    /// shared, not copied: callers make it once (per agent) for all sessions.
    pub fn view<T: Default + Send + Sync + 'static>(&mut self, key: &Arc<str>) -> Option<&mut T> {
        let i = match self
            .views
            .iter()
            .position(|(k, _)| Arc::ptr_eq(k, key) || **k == **key)
        {
            Some(i) => {
                if !self.views[i].1.is::<T>() {
                    self.views[i].1 = Box::new(T::default());
                }
                i
            }
            None => {
                self.views.reserve_exact(1);
                self.views.push((Arc::clone(key), Box::new(T::default())));
                self.views.len() - 1
            }
        };
        self.views[i].1.downcast_mut::<T>()
    }
}

impl Clone for Derived {
    /// Views are caches: a copy rebuilds its own.
    fn clone(&self) -> Self {
        Derived::default()
    }
}

impl std::fmt::Debug for Derived {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Derived({} views)", self.views.len())
    }
}

impl Session {
    /// The value of a state key, looking in `temp:` state for `temp:` keys.
    pub fn get(&self, key: &str) -> Option<&Value> {
        if key.starts_with(TEMP_PREFIX) {
            self.temp_state.get(key)
        } else {
            self.state.get(key)
        }
    }

    /// All state visible in this invocation, `temp:` keys included (a copy).
    pub fn visible_state(&self) -> StateMap {
        let mut state = self.state.clone();
        state.extend(self.temp_state.iter().map(|(k, v)| (k.clone(), v.clone())));
        state
    }

    /// Applies a state delta to the live session: `temp:` keys go to invocation state.
    pub fn apply_delta(&mut self, delta: &SparseMap) {
        if self.state.is_empty() {
            // Sized to the delta: an empty map would make room for three keys on its first.
            let kept = delta.keys().filter(|k| !k.starts_with(TEMP_PREFIX)).count();
            if kept > 0 {
                self.state = StateMap::with_capacity(kept);
            }
        }
        for (k, v) in delta {
            if k.starts_with(TEMP_PREFIX) {
                self.temp_state.insert(k.clone(), v.clone());
            } else {
                self.state.insert(k.clone(), v.clone());
            }
        }
    }
}

/// A shared handle on one live session. Cheap to clone.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    inner: Arc<Mutex<Session>>,
}

impl SessionHandle {
    /// Wraps a session in a new handle.
    pub fn new(session: Session) -> Self {
        SessionHandle {
            inner: Arc::new(Mutex::new(session)),
        }
    }

    /// Locks the session. Never hold the guard across an `.await`.
    pub fn lock(&self) -> MutexGuard<'_, Session> {
        // A poisoned lock means a panic mid-update elsewhere; the data is still the best we have.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// All state visible in the current invocation, `temp:` keys included (a copy).
    pub fn visible_state(&self) -> StateMap {
        self.lock().visible_state()
    }

    /// A copy of one state value.
    pub fn get_state(&self, key: &str) -> Option<Value> {
        self.lock().get(key).cloned()
    }

    /// The session id.
    pub fn id(&self) -> String {
        self.lock().id.clone()
    }

    /// Starts a new invocation: `temp:` state of the previous one is dropped.
    pub fn begin_invocation(&self) {
        self.lock().temp_state.clear();
    }

    /// Ends an invocation: its `temp:` state is gone, as in ADK, where it never reaches
    /// the stored session (a test or a client reading the session after the turn sees
    /// what ADK's would).
    pub fn end_invocation(&self) {
        self.lock().temp_state.clear();
    }

    /// Whether two handles point at the same session.
    pub fn same_as(&self, other: &SessionHandle) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// Where sessions live. Implementations: in memory (tests, `--db memory`) and SQL
/// ([`SqlSessionService`]: SQLite or PostgreSQL).
#[async_trait]
pub trait SessionService: Send + Sync {
    /// Creates a session, with a fresh id when `session_id` is `None`. `temp:` keys of
    /// `state` are dropped; `app:` and `user:` keys go to their scopes.
    async fn create_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: Option<&str>,
        state: StateMap,
    ) -> Result<SessionHandle, SessionError>;

    /// The session, with current `app:` and `user:` state merged in, or `None`.
    async fn get_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<Option<SessionHandle>, SessionError>;

    /// Ids of the user's sessions.
    async fn list_sessions(
        &self,
        app_name: &str,
        user_id: &str,
    ) -> Result<Vec<String>, SessionError>;

    /// Deletes a session; deleting a missing one is not an error.
    async fn delete_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<(), SessionError>;

    /// Commits an event: partial events are returned untouched and never stored; otherwise
    /// the state delta is applied (`temp:` keys to the live session only, trimmed from the
    /// stored delta), the event is appended and returned as stored.
    async fn append_event(
        &self,
        session: &SessionHandle,
        event: Event,
    ) -> Result<Arc<Event>, SessionError>;

    /// [`SessionService::append_event`] for an event the runtime already holds in an
    /// `Arc` (agents make each event's `Arc` once). A store that keeps events in memory
    /// keeps this `Arc`, unless something else shares it; the others store a copy.
    async fn append_shared(
        &self,
        session: &SessionHandle,
        event: Arc<Event>,
    ) -> Result<Arc<Event>, SessionError> {
        if event.is_partial() {
            return Ok(event);
        }
        self.append_event(session, Arc::unwrap_or_clone(event))
            .await
    }

    /// Takes the session's turn for every process that shares this store, waiting while
    /// another holds it, and gives it back when the lease is dropped. A store only one
    /// process can reach answers `None`: a lock inside the process is enough there.
    async fn hold_turn(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<Option<TurnLease>, SessionError> {
        let _ = (app_name, user_id, session_id);
        Ok(None)
    }
}

/// The id a new session gets: the requested one without surrounding white space, or a
/// fresh UUID when none (or only white space) was requested, as ADK's services do.
pub fn new_session_id(requested: Option<&str>) -> String {
    match requested.map(str::trim) {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => {
            // Formatted on the stack, then one exact allocation (no `fmt` machinery).
            let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
            uuid::Uuid::new_v4()
                .hyphenated()
                .encode_lower(&mut buf)
                .to_owned()
        }
    }
}

/// The commit every service shares: applies the delta to the live session, trims `temp:`
/// keys from the stored event and appends it. Returns the stored event.
pub fn commit_to_session(session: &mut Session, event: Event) -> Arc<Event> {
    commit_shared(session, Arc::new(event))
}

/// [`commit_to_session`] for an event already in an `Arc`: the session keeps that `Arc`
/// (an event with `temp:` keys that something else shares is copied to trim them).
pub fn commit_shared(session: &mut Session, mut event: Arc<Event>) -> Arc<Event> {
    session.apply_delta(&event.actions.state_delta);
    let is_temp = |k: &String| k.starts_with(TEMP_PREFIX);
    if event.actions.state_delta.keys().any(is_temp) {
        Arc::make_mut(&mut event)
            .actions
            .state_delta
            .retain(|k, _| !is_temp(k));
    }
    session.last_update_time = event.timestamp;
    session.events.push(Arc::clone(&event));
    event
}

#[cfg(test)]
mod tests;
