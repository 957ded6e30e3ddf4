//! A node's output on its way to the nodes it triggers ([`Output`]), and the forms of the
//! user's message a node's input can take: the Content ADK hands the root workflow, its
//! text, a user message's text made of any value.

use crate::event::Event;
use crate::pyrepr::{json_dumps, py_str};
use serde_json::Value;
use std::sync::Arc;

/// A node's output on its way to the nodes it triggers (their input), or kept for a
/// JoinNode or the terminal-output rule.
#[derive(Debug, Clone)]
pub(super) enum Output {
    /// A value of its own.
    Value(Value),
    /// The `output` of this event (a Router's or a JoinNode's), shared with the event
    /// rather than copied.
    Event(Arc<Event>),
    /// The user's message ADK hands the root workflow, a Content (its JSON form is
    /// [`user_content`]), kept as its text: an LLM node sends that text and a Router reads
    /// it, so the Content's JSON form is only made where a value is kept (a JoinNode's
    /// input).
    User(String),
}

impl Output {
    /// The output of an LLM node's final reply `event`: its non-thought text, empty when
    /// it has none.
    pub(super) fn reply(event: &Event) -> Output {
        Output::Value(Value::String(event.text().unwrap_or_default()))
    }

    /// The value, `None` for the user's message (see [`Output::User`]).
    pub(super) fn value(&self) -> Option<&Value> {
        match self {
            Output::Value(v) => Some(v),
            Output::Event(e) => Some(e.output.as_deref().unwrap_or(&Value::Null)),
            Output::User(_) => None,
        }
    }

    /// A copy of the value (the user's message as its Content).
    pub(super) fn to_value(&self) -> Value {
        match self {
            Output::User(text) => user_content(text),
            other => other.value().cloned().unwrap_or(Value::Null),
        }
    }

    /// The value, owned: moved out of its own, copied out of an event.
    pub(super) fn into_value(self) -> Value {
        match self {
            Output::Value(v) => v,
            Output::Event(e) => e.output.as_deref().cloned().unwrap_or(Value::Null),
            Output::User(text) => user_content(&text),
        }
    }
}

/// A node input as the text of a user message: strings as they are, mappings and lists
/// as Python's `json.dumps`, numbers and booleans as Python's `str()`.
pub(super) fn input_text(v: Value) -> String {
    match v {
        Value::String(s) => s,
        Value::Object(_) | Value::Array(_) => json_dumps(&v),
        other => py_str(&other),
    }
}

/// The user's message as ADK hands it to the root workflow, a Content, in the form a
/// JoinNode's output prints it (the root's START output in a JoinNode's input).
pub(super) fn user_content(text: &str) -> Value {
    serde_json::json!({"parts": [{"text": text}], "role": "user"})
}

/// Whether `v` is such a Content.
pub(super) fn is_content(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.len() == 2
            && m.get("role").and_then(Value::as_str) == Some("user")
            && m.get("parts").is_some_and(Value::is_array)
    })
}

/// Whether `v` is or holds such a Content.
pub(super) fn holds_content(v: &Value) -> bool {
    match v {
        Value::Object(m) => is_content(v) || m.values().any(holds_content),
        Value::Array(a) => a.iter().any(holds_content),
        _ => false,
    }
}

/// A Content's text parts joined.
pub(super) fn content_text(v: &Value) -> String {
    v["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect()
}

/// `v` with every Content in it as its text, as a Router's `input` shows it.
pub(super) fn contents_as_text(v: &Value) -> Value {
    match v {
        _ if is_content(v) => Value::String(content_text(v)),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), contents_as_text(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(contents_as_text).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_message_is_its_content_where_a_value_is_kept() {
        let user = Output::User("hi".into());
        assert!(user.value().is_none());
        let content = serde_json::json!({"parts": [{"text": "hi"}], "role": "user"});
        assert_eq!(user.to_value(), content);
        assert!(is_content(&user.to_value()));
        assert_eq!(content_text(&user.to_value()), "hi");
        assert_eq!(user.into_value(), content);
    }
}
