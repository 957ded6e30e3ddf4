//! The in-memory memory store: per app and user, sessions in the order they were added,
//! each with its remembered events in order.

use super::{
    Forget, MemoryEntry, MemoryError, MemoryService, SearchRequest, StoredMemory, remembered, words,
};
use crate::event::{Content, Event};
use crate::session::SessionKey;
use async_trait::async_trait;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

struct Item {
    event_id: String,
    author: String,
    timestamp: f64,
    content: Content,
    text: String,
    words: HashSet<String>,
}

/// (app, user) → sessions in insertion order, each with its items.
type Users = HashMap<(String, String), Vec<(String, Vec<Item>)>>;

/// Keeps memories in process memory (tests, `--db memory`); lost when the process ends.
#[derive(Default)]
pub struct InMemoryMemoryService {
    users: Mutex<Users>,
}

impl InMemoryMemoryService {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn users(&self) -> MutexGuard<'_, Users> {
        self.users.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl MemoryService for InMemoryMemoryService {
    async fn add_events(
        &self,
        session: &SessionKey,
        events: &[Arc<Event>],
    ) -> Result<usize, MemoryError> {
        let mut users = self.users();
        let sessions = users
            .entry((session.app_name.clone(), session.user_id.clone()))
            .or_default();
        let index = match sessions
            .iter()
            .position(|(id, _)| *id == session.session_id)
        {
            Some(i) => i,
            None => {
                sessions.push((session.session_id.clone(), Vec::new()));
                sessions.len() - 1
            }
        };
        let items = &mut sessions[index].1;
        let mut added = 0;
        for r in events.iter().filter_map(|e| remembered(e)) {
            if items.iter().any(|i| *i.event_id == *r.event.id) {
                continue;
            }
            items.push(Item {
                event_id: r.event.id.to_string(),
                author: r.event.author.to_string(),
                timestamp: r.event.timestamp,
                content: r.content.clone(),
                text: r.text,
                words: r.words.into_iter().collect(),
            });
            added += 1;
        }
        Ok(added)
    }

    async fn search(&self, request: &SearchRequest<'_>) -> Result<Vec<MemoryEntry>, MemoryError> {
        let wanted = words(request.query);
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let users = self.users();
        let Some(sessions) = users.get(&(request.app.to_owned(), request.user.to_owned())) else {
            return Ok(Vec::new());
        };
        Ok(sessions
            .iter()
            .flat_map(|(_, items)| items)
            .filter(|i| request.not_before.is_none_or(|t| i.timestamp >= t))
            .filter(|i| wanted.iter().any(|w| i.words.contains(w)))
            .map(|i| MemoryEntry::new(i.content.clone(), &i.author, i.timestamp))
            .collect())
    }

    async fn list(
        &self,
        app: Option<&str>,
        user: Option<&str>,
    ) -> Result<Vec<StoredMemory>, MemoryError> {
        let users = self.users();
        let mut out: Vec<StoredMemory> = users
            .iter()
            .filter(|((a, u), _)| app.is_none_or(|x| x == a) && user.is_none_or(|x| x == u))
            .flat_map(|((a, u), sessions)| {
                sessions.iter().flat_map(move |(sid, items)| {
                    items.iter().map(move |i| StoredMemory {
                        session: SessionKey {
                            app_name: a.clone(),
                            user_id: u.clone(),
                            session_id: sid.clone(),
                        },
                        event_id: i.event_id.clone(),
                        author: i.author.clone(),
                        timestamp: i.timestamp,
                        text: i.text.clone(),
                    })
                })
            })
            .collect();
        out.sort_by(|a, b| a.timestamp.total_cmp(&b.timestamp));
        Ok(out)
    }

    async fn forget(&self, what: &Forget<'_>) -> Result<u64, MemoryError> {
        let mut users = self.users();
        let key = (what.app.to_owned(), what.user.to_owned());
        let Some(sessions) = users.get_mut(&key) else {
            return Ok(0);
        };
        let mut removed = 0;
        sessions.retain(|(sid, items)| {
            let gone = what.session.is_none_or(|s| s == sid);
            if gone {
                removed += items.len() as u64;
            }
            !gone
        });
        if sessions.is_empty() {
            users.remove(&key);
        }
        Ok(removed)
    }

    async fn forget_before(&self, app: &str, cutoff: f64) -> Result<u64, MemoryError> {
        let mut users = self.users();
        let mut removed = 0;
        for ((a, _), sessions) in users.iter_mut() {
            if a != app {
                continue;
            }
            for (_, items) in sessions.iter_mut() {
                let before = items.len();
                items.retain(|i| i.timestamp >= cutoff);
                removed += (before - items.len()) as u64;
            }
        }
        Ok(removed)
    }
}
