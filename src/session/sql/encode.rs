//! Conversions between live sessions and rows: state scopes, JSON, times and URLs.

use crate::event::StateMap;
use crate::session::{APP_PREFIX, SessionError, StateScope, USER_PREFIX, scope_of};

/// Splits state into session-scoped keys, `app:` keys and `user:` keys (the last two with
/// their prefixes stripped). `temp:` keys are dropped.
pub(super) fn split_by_scope<'a>(
    state: impl IntoIterator<Item = (&'a String, &'a serde_json::Value)>,
) -> (StateMap, StateMap, StateMap) {
    let (mut session, mut app, mut user) = (StateMap::new(), StateMap::new(), StateMap::new());
    for (key, value) in state {
        match scope_of(key) {
            (StateScope::Session, _) => {
                session.insert(key.clone(), value.clone());
            }
            (StateScope::App, bare) => {
                app.insert(bare.to_owned(), value.clone());
            }
            (StateScope::User, bare) => {
                user.insert(bare.to_owned(), value.clone());
            }
            (StateScope::Temp, _) => {}
        }
    }
    (session, app, user)
}

/// The state a handle shows: session keys, then `app:` keys, then `user:` keys.
pub(super) fn merged_view(mut state: StateMap, app: StateMap, user: StateMap) -> StateMap {
    state.extend(
        app.into_iter()
            .map(|(k, v)| (format!("{APP_PREFIX}{k}"), v)),
    );
    state.extend(
        user.into_iter()
            .map(|(k, v)| (format!("{USER_PREFIX}{k}"), v)),
    );
    state
}

/// Parses a stored state object; a missing row is empty state.
pub(super) fn parse_state(json: Option<&str>, what: &str) -> Result<StateMap, SessionError> {
    match json {
        None => Ok(StateMap::new()),
        Some(json) => serde_json::from_str(json).map_err(|source| SessionError::Corrupt {
            what: what.to_owned(),
            source,
        }),
    }
}

/// Stored state with `delta` applied, as a map and as JSON.
pub(super) fn merge_state(
    json: Option<&str>,
    delta: &StateMap,
    what: &str,
) -> Result<(StateMap, String), SessionError> {
    let mut state = parse_state(json, what)?;
    state.extend(delta.iter().map(|(k, v)| (k.clone(), v.clone())));
    let json = to_json(&state, what)?;
    Ok((state, json))
}

pub(super) fn to_json(state: &StateMap, what: &str) -> Result<String, SessionError> {
    serde_json::to_string(state).map_err(|source| SessionError::Corrupt {
        what: what.to_owned(),
        source,
    })
}

/// Seconds to whole microseconds, the unit of the stored times.
pub(super) fn to_micros(seconds: f64) -> i64 {
    (seconds * 1e6).round() as i64
}

/// Microseconds to seconds; `to_micros(from_micros(t)) == t` for any time before 2106
/// (2^32 s), after which an f64 of seconds no longer resolves microseconds.
pub(super) fn from_micros(micros: i64) -> f64 {
    micros as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::now;

    #[test]
    fn stored_times_round_trip_exactly() {
        for t in [
            0.0,
            1.5,
            1_779_000_000.123_456,
            1_779_000_000.999_999_7,
            now(),
        ] {
            let us = to_micros(t);
            assert_eq!(to_micros(from_micros(us)), us, "{t}");
        }
        // Stored times from 2001 to 2106 (2^32 s), sampled with an odd stride. Past that, an
        // f64 of seconds has less than microsecond resolution.
        let mut us: i64 = 1_000_000_000_000_000;
        while us < 4_294_967_296_000_000 {
            assert_eq!(to_micros(from_micros(us)), us);
            us += 12_345_678_901;
        }
    }
}
