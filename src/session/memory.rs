//! The in-memory session service: sessions shared by handle, app and user state in maps.
//!
//! Two locks meet here: the store's (`Stores`) and each session's. Whoever needs both
//! takes the store lock first.

use super::{
    APP_PREFIX, Session, SessionError, SessionHandle, SessionService, StateScope, USER_PREFIX,
    commit_shared, scope_of,
};
use crate::event::{Event, StateMap, now};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

/// A session's key (app, user, session id) with its hash, computed once when the key is
/// made. Growing the table rehashes every key: with the hash computed from the three
/// strings, each time, that was most of creating a session in `adk-flow bench` (reading
/// three strings per session from all over the heap; docs/performance.md).
#[derive(PartialEq, Eq)]
struct SessionKey {
    hash: u64,
    app: String,
    user: String,
    id: String,
}

impl Hash for SessionKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// A hasher for keys whose hash is computed already (a [`SessionKey`] hashed with the
/// store's keyed SipHash, a view's call ids): `write_u64` hands the table that hash as it
/// is; anything else written is folded in.
#[derive(Default)]
pub(crate) struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The sessions, by [`SessionKey`].
#[derive(Default)]
struct SessionMap {
    /// Keyed once per store (SipHash, as std's maps): the hashes of ids a client chooses
    /// are not predictable, so a client cannot make them collide. Computed once per key,
    /// its cost does not matter.
    seed: std::hash::RandomState,
    map: HashMap<SessionKey, SessionHandle, BuildHasherDefault<Prehashed>>,
}

impl SessionMap {
    fn key(&self, app: &str, user: &str, id: String) -> SessionKey {
        SessionKey {
            hash: self.seed.hash_one((app, user, id.as_str())),
            app: app.to_owned(),
            user: user.to_owned(),
            id,
        }
    }
}

#[derive(Default)]
struct Stores {
    sessions: SessionMap,
    scoped: Scoped,
}

/// `app:` and `user:` state, shared by the sessions of an app or of a user.
#[derive(Default)]
struct Scoped {
    app_state: HashMap<String, StateMap>,
    user_state: HashMap<(String, String), StateMap>,
}

/// Keeps sessions in process memory. Reads return the live handle, not a copy.
#[derive(Default)]
pub struct InMemorySessionService {
    stores: Mutex<Stores>,
}

impl InMemorySessionService {
    /// An empty service.
    pub fn new() -> Self {
        Self::default()
    }

    fn stores(&self) -> MutexGuard<'_, Stores> {
        self.stores.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Routes `app:`/`user:` keys of `delta` into the shared stores.
fn route_scoped<'a>(
    stores: &mut Scoped,
    app: &str,
    user: &str,
    delta: impl IntoIterator<Item = (&'a String, &'a Value)>,
) {
    for (k, v) in delta {
        match scope_of(k).0 {
            StateScope::App => {
                stores
                    .app_state
                    .entry(app.to_owned())
                    .or_default()
                    .insert(k.clone(), v.clone());
            }
            StateScope::User => {
                stores
                    .user_state
                    .entry((app.to_owned(), user.to_owned()))
                    .or_default()
                    .insert(k.clone(), v.clone());
            }
            StateScope::Temp | StateScope::Session => {}
        }
    }
}

/// Refreshes a session's `app:`/`user:` keys from the shared stores.
fn merge_scoped(stores: &Scoped, session: &mut Session) {
    session
        .state
        .retain(|k, _| !k.starts_with(APP_PREFIX) && !k.starts_with(USER_PREFIX));
    if let Some(app) = stores.app_state.get(&session.app_name) {
        session
            .state
            .extend(app.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    if stores.user_state.is_empty() {
        return;
    }
    let user_key = (session.app_name.clone(), session.user_id.clone());
    if let Some(user) = stores.user_state.get(&user_key) {
        session
            .state
            .extend(user.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

#[async_trait]
impl SessionService for InMemorySessionService {
    async fn create_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: Option<&str>,
        mut state: StateMap,
    ) -> Result<SessionHandle, SessionError> {
        let id = super::new_session_id(session_id);
        let mut guard = self.stores();
        let stores = &mut *guard;
        let key = stores.sessions.key(app_name, user_id, id);
        // One lookup: the entry says whether the id is taken, and takes the new session.
        let slot = match stores.sessions.map.entry(key) {
            Entry::Occupied(taken) => {
                return Err(SessionError::AlreadyExists {
                    session_id: taken.key().id.clone(),
                });
            }
            Entry::Vacant(slot) => slot,
        };
        state.retain(|k, _| scope_of(k).0 != StateScope::Temp);
        route_scoped(&mut stores.scoped, app_name, user_id, &state);
        let mut session = Session {
            id: slot.key().id.clone(),
            app_name: app_name.to_owned(),
            user_id: user_id.to_owned(),
            state,
            last_update_time: now(),
            ..Session::default()
        };
        merge_scoped(&stores.scoped, &mut session);
        let handle = SessionHandle::new(session);
        slot.insert(handle.clone());
        Ok(handle)
    }

    async fn get_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<Option<SessionHandle>, SessionError> {
        let stores = self.stores();
        let key = stores
            .sessions
            .key(app_name, user_id, session_id.to_owned());
        let Some(handle) = stores.sessions.map.get(&key).cloned() else {
            return Ok(None);
        };
        merge_scoped(&stores.scoped, &mut handle.lock());
        Ok(Some(handle))
    }

    async fn list_sessions(
        &self,
        app_name: &str,
        user_id: &str,
    ) -> Result<Vec<String>, SessionError> {
        let stores = self.stores();
        let mut ids: Vec<String> = stores
            .sessions
            .map
            .keys()
            .filter(|k| k.app == app_name && k.user == user_id)
            .map(|k| k.id.clone())
            .collect();
        ids.sort();
        Ok(ids)
    }

    async fn delete_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<(), SessionError> {
        let mut stores = self.stores();
        let key = stores
            .sessions
            .key(app_name, user_id, session_id.to_owned());
        stores.sessions.map.remove(&key);
        Ok(())
    }

    async fn append_event(
        &self,
        session: &SessionHandle,
        event: Event,
    ) -> Result<Arc<Event>, SessionError> {
        self.append_shared(session, Arc::new(event)).await
    }

    async fn append_shared(
        &self,
        session: &SessionHandle,
        event: Arc<Event>,
    ) -> Result<Arc<Event>, SessionError> {
        if event.is_partial() {
            return Ok(event);
        }
        // Lock order, everywhere: the store lock first, then the session's (as in
        // `get_session`); the opposite order deadlocks two tasks on one session.
        // Only `app:` and `user:` keys need the store; most deltas (output keys) do not.
        let shared_keys = event
            .actions
            .state_delta
            .keys()
            .any(|k| matches!(scope_of(k).0, StateScope::App | StateScope::User));
        let mut stores = shared_keys.then(|| self.stores());
        let mut live = session.lock();
        if let Some(stores) = stores.as_mut() {
            let (app, user) = (live.app_name.clone(), live.user_id.clone());
            route_scoped(&mut stores.scoped, &app, &user, &event.actions.state_delta);
        }
        Ok(commit_shared(&mut live, event))
    }
}
