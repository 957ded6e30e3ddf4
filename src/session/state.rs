//! State key prefixes and their scopes.

/// Prefix of keys shared by every session of an app.
pub const APP_PREFIX: &str = "app:";
/// Prefix of keys shared by every session of one user.
pub const USER_PREFIX: &str = "user:";
/// Prefix of keys that live for one invocation and are never persisted.
pub const TEMP_PREFIX: &str = "temp:";

/// Where a state key lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateScope {
    /// Every session of the app.
    App,
    /// Every session of the user.
    User,
    /// The current invocation only.
    Temp,
    /// This session.
    Session,
}

/// The scope of a key and the key without its prefix.
pub fn scope_of(key: &str) -> (StateScope, &str) {
    if let Some(k) = key.strip_prefix(APP_PREFIX) {
        (StateScope::App, k)
    } else if let Some(k) = key.strip_prefix(USER_PREFIX) {
        (StateScope::User, k)
    } else if let Some(k) = key.strip_prefix(TEMP_PREFIX) {
        (StateScope::Temp, k)
    } else {
        (StateScope::Session, key)
    }
}
