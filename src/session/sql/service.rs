//! [`SessionService`] for [`SqlSessionService`]: what each call reads and writes.

use super::backend::{Appended, Created, NewEvent, NewSession};
use super::encode::{from_micros, merged_view, parse_state, split_by_scope, to_json, to_micros};
use super::{Backend, SqlSessionService, backend, dialect, postgres, sqlite, turns};
use crate::event::{Event, StateMap, now};
use crate::session::{
    Session, SessionError, SessionHandle, SessionService, StateScope, TurnLease, commit_to_session,
    scope_of,
};
use async_trait::async_trait;
use std::sync::Arc;

#[async_trait]
impl SessionService for SqlSessionService {
    async fn create_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: Option<&str>,
        state: StateMap,
    ) -> Result<SessionHandle, SessionError> {
        let id = crate::session::new_session_id(session_id);
        let (session_state, app_delta, user_delta) = split_by_scope(&state);
        let created_at = to_micros(now());
        let new = NewSession {
            app: app_name,
            user: user_id,
            id: &id,
            state_json: to_json(&session_state, "session state")?,
            app_delta,
            user_delta,
            now: created_at,
        };
        let created = match &self.backend {
            Backend::Sqlite(db) => {
                let deltas =
                    sqlite::Deltas::new(&StateMap::new(), &new.app_delta, &new.user_delta)?;
                db.write(|conn| sqlite::create(conn, &new, &deltas)).await?
            }
            Backend::Postgres(pool) => postgres::create(pool, &new).await?,
        };
        let (app, user) = match created {
            Created::Inserted { app, user } => (app, user),
            Created::AlreadyExists => return Err(SessionError::AlreadyExists { session_id: id }),
        };
        Ok(SessionHandle::new(Session {
            id,
            app_name: app_name.to_owned(),
            user_id: user_id.to_owned(),
            state: merged_view(session_state, app, user),
            last_update_time: from_micros(created_at),
            ..Session::default()
        }))
    }

    async fn get_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<Option<SessionHandle>, SessionError> {
        let Some(loaded) = dispatch!(self, load(app_name, user_id, session_id))? else {
            return Ok(None);
        };
        let session_state = parse_state(Some(&loaded.state_json), "session state")?;
        let app = parse_state(loaded.app_json.as_deref(), "app state")?;
        let user = parse_state(loaded.user_json.as_deref(), "user state")?;
        let events = loaded
            .events_json
            .iter()
            .enumerate()
            .map(|(i, json)| {
                serde_json::from_str::<Event>(json)
                    .map(Arc::new)
                    .map_err(|source| SessionError::Corrupt {
                        what: format!("event #{i} of session {session_id}"),
                        source,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(SessionHandle::new(Session {
            id: session_id.to_owned(),
            app_name: app_name.to_owned(),
            user_id: user_id.to_owned(),
            state: merged_view(session_state, app, user),
            temp_state: StateMap::new(),
            events,
            last_update_time: from_micros(loaded.update_time),
            ..Session::default()
        })))
    }

    async fn list_sessions(
        &self,
        app_name: &str,
        user_id: &str,
    ) -> Result<Vec<String>, SessionError> {
        let mut ids = dispatch!(self, list_ids(app_name, user_id))?;
        ids.sort();
        Ok(ids)
    }

    async fn delete_session(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<(), SessionError> {
        match &self.backend {
            Backend::Sqlite(db) => {
                db.write(|conn| sqlite::delete(conn, app_name, user_id, session_id))
                    .await
            }
            Backend::Postgres(pool) => {
                backend::postgres::delete(pool, &dialect::POSTGRES, app_name, user_id, session_id)
                    .await
            }
        }
    }

    async fn append_event(
        &self,
        session: &SessionHandle,
        mut event: Event,
    ) -> Result<Arc<Event>, SessionError> {
        if event.is_partial() {
            return Ok(Arc::new(event));
        }
        let key = {
            let live = session.lock();
            (live.app_name.clone(), live.user_id.clone(), live.id.clone())
        };
        // Held across the database round trip: it is an async lock, one per session.
        let gate = self.gates.get(&key.0, &key.1, &key.2);
        let _turn = gate.lock().await;
        let expected_time = to_micros(session.lock().last_update_time);

        // Store the event without its `temp:` keys; they go back in for `commit_to_session`,
        // which applies them to the live session and trims them from the returned event.
        let mut temp = StateMap::new();
        event.actions.state_delta.retain(|k, v| {
            if scope_of(k).0 == StateScope::Temp {
                temp.insert(k.clone(), v.take());
                false
            } else {
                true
            }
        });
        let (session_delta, app_delta, user_delta) = split_by_scope(&event.actions.state_delta);
        // Strictly increasing, so that a commit always changes what others compare against.
        let new_time = to_micros(event.timestamp).max(expected_time.saturating_add(1));
        let (app, user, id) = &key;
        let row = NewEvent {
            app,
            user,
            session_id: id,
            expected_time,
            new_time,
            event_id: &event.id,
            invocation_id: &event.invocation_id,
            timestamp: event.timestamp,
            event_json: serde_json::to_string(&event).map_err(|source| SessionError::Corrupt {
                what: format!("event {}", event.id),
                source,
            })?,
            session_delta,
            app_delta,
            user_delta,
        };
        let appended = match &self.backend {
            Backend::Sqlite(db) => {
                let deltas =
                    sqlite::Deltas::new(&row.session_delta, &row.app_delta, &row.user_delta)?;
                db.write(|conn| sqlite::append(conn, &row, &deltas)).await?
            }
            Backend::Postgres(pool) => postgres::append(pool, &row).await?,
        };
        match appended {
            Appended::Committed => {}
            Appended::Stale => {
                return Err(SessionError::Stale {
                    session_id: id.clone(),
                });
            }
            Appended::NotFound => {
                return Err(SessionError::NotFound {
                    session_id: id.clone(),
                });
            }
        }
        event.actions.state_delta.extend(temp);
        let mut live = session.lock();
        let stored = commit_to_session(&mut live, event);
        live.last_update_time = from_micros(new_time);
        Ok(stored)
    }

    /// PostgreSQL holds the turn in a lease row, so replicas on one database take turns.
    /// SQLite answers `None`: replicas need a server database (see docs/serve.md).
    async fn hold_turn(
        &self,
        app_name: &str,
        user_id: &str,
        session_id: &str,
    ) -> Result<Option<TurnLease>, SessionError> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(None),
            Backend::Postgres(pool) => turns::hold(pool, app_name, user_id, session_id)
                .await
                .map(Some),
        }
    }
}
