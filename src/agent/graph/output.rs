//! A node's output on its way to the nodes it triggers ([`Output`]), and the forms of the
//! user's message a node's input can take: the Content ADK hands the root workflow, its
//! text, a user message's text made of any value.

use crate::event::{Content, Event, Part, Role};
use crate::pyrepr::{json_dumps, py_str};
use serde_json::Value;
use std::sync::Arc;

/// A node's output on its way to the nodes it triggers (their input), or kept for a
/// JoinNode or the terminal-output rule.
///
/// 32 bytes: every outcome, trigger, slot and node run holds one and is moved several
/// times per node run, so a value of its own is boxed (a `serde_json::Value` is 80
/// bytes) and an LLM node's text has a variant of its own rather than a boxed value.
#[derive(Debug, Clone)]
pub(super) enum Output {
    /// A value of its own (a JoinNode's input, a mapping).
    Value(Box<Value>),
    /// The `output` of this event (a Router's or a JoinNode's), shared with the event
    /// rather than copied.
    Event(Arc<Event>),
    /// An LLM node's output, the text of its final reply: a string value, kept as the
    /// text, as [`Output::User`] is ([`Output::value`] is `None`).
    Text(String),
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
        Output::Text(event.text().unwrap_or_default())
    }

    /// The value, `None` for a text (the user's message, see [`Output::User`], or an LLM
    /// node's reply, [`Output::Text`]).
    pub(super) fn value(&self) -> Option<&Value> {
        match self {
            Output::Value(v) => Some(v),
            Output::Event(e) => Some(e.output.as_deref().unwrap_or(&Value::Null)),
            Output::Text(_) | Output::User(_) => None,
        }
    }

    /// A copy of the value (the user's message as its Content).
    pub(super) fn to_value(&self) -> Value {
        match self {
            Output::User(text) => user_content(text),
            Output::Text(text) => Value::String(text.clone()),
            other => other.value().cloned().unwrap_or(Value::Null),
        }
    }

    /// The value, owned: moved out of its own, copied out of an event.
    pub(super) fn into_value(self) -> Value {
        match self {
            Output::Value(v) => *v,
            Output::Event(e) => e.output.as_deref().cloned().unwrap_or(Value::Null),
            Output::Text(text) => Value::String(text),
            Output::User(text) => user_content(&text),
        }
    }

    /// The text of the user message an LLM node's input is: the user's message and a
    /// text as they are, any other value as [`input_text`] makes it (a Content as its
    /// text); `None` for no value. A string in an event is copied without copying the
    /// value around it.
    pub(super) fn into_message(self) -> Option<String> {
        let value = match self {
            Output::User(text) | Output::Text(text) => return Some(text),
            Output::Event(e) => match e.output.as_deref() {
                Some(Value::String(s)) => return Some(s.clone()),
                _ => Output::Event(e).into_value(),
            },
            Output::Value(v) => *v,
        };
        match value {
            Value::Null => None,
            v if is_content(&v) => Some(content_text(&v)),
            v => Some(input_text(v)),
        }
    }
}

/// ADK 2.13's `output_key` of an LLM node (`LlmAgent._run_async_impl` adding up the
/// agent's text): a model event with function calls and text stores all the node's text
/// so far, a reply with no text part stores "", and the final reply keeps its own text (as
/// the flow's `save_output` stored it).
///
/// A reply's text is the node's output ([`Output::Text`]), so it is added to the text so
/// far only when an event follows it: a reply is almost always the node's last event,
/// and its text is then not copied a second time.
#[derive(Default)]
pub(super) struct TextSoFar {
    /// The text of the node's events so far, but for the last reply's while `pending`.
    text: String,
    /// The node's output is a reply whose text is not in `text` yet.
    pending: bool,
}

impl TextSoFar {
    /// Adds up `event`, a complete event of the node, storing the text so far under
    /// `key` where ADK 2.13 does. `output` is the node's output so far (the last reply's
    /// text); `reply`: `event` is a reply, about to become the output.
    pub(super) fn add(
        &mut self,
        event: &mut Event,
        key: &str,
        output: Option<&Output>,
        reply: bool,
    ) {
        if std::mem::take(&mut self.pending)
            && let Some(Output::Text(text)) = output
        {
            self.text.push_str(text);
        }
        if event.texts().all(str::is_empty) {
            if reply && event.text().is_none() {
                let empty = Value::String(String::new());
                event.actions.state_delta.insert(key.to_owned(), empty);
            }
            return;
        }
        if reply {
            self.pending = true;
            return;
        }
        event.texts().for_each(|t| self.text.push_str(t));
        if event.function_calls().next().is_some() {
            let text = Value::String(self.text.clone());
            event.actions.state_delta.insert(key.to_owned(), text);
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

/// Whether `message` is a user message of `text` alone, as a node input of that text is
/// made: one text part and nothing else. (Every field of the part is named, so that a new
/// one is considered here.)
pub(super) fn is_text_message(message: &Content, text: &str) -> bool {
    match (message.role, message.parts.as_slice()) {
        (
            Some(Role::User),
            [
                Part {
                    text: Some(t),
                    thought: None,
                    inline_data: None,
                    file_data: None,
                    thought_signature: None,
                    function_call: None,
                    function_response: None,
                },
            ],
        ) => t == text,
        _ => false,
    }
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

    /// A model event of `parts`, as the node's flow yields it.
    fn model_event(parts: Vec<Part>) -> Event {
        let mut event = Event::new("inv", "writer");
        event.content = Some(Content::new(Role::Model, parts));
        event
    }

    /// Adds up `events` as the node does (a reply becomes its output) and returns what
    /// each stores under `draft`.
    fn stored(events: Vec<Event>) -> Vec<Option<Value>> {
        let (mut so_far, mut output) = (TextSoFar::default(), None);
        events
            .into_iter()
            .map(|mut event| {
                let reply = event.function_calls().next().is_none();
                so_far.add(&mut event, "draft", output.as_ref(), reply);
                if reply {
                    output = Some(Output::Text(event.text().unwrap_or_default()));
                }
                event.actions.state_delta.get("draft").cloned()
            })
            .collect()
    }

    #[test]
    fn a_nodes_output_key_holds_its_text_so_far_on_calls() {
        use crate::event::FunctionCall;
        let call = |text: &str| {
            let call = FunctionCall {
                id: None,
                args: serde_json::json!({}),
                name: "lookup".into(),
            };
            vec![Part::text(text), Part::function_call(call)]
        };
        // A reply followed by a call (a stream's text, then its call): the call stores
        // both texts; the final reply stores nothing here (the flow stores its own text).
        let events = vec![
            model_event(vec![Part::text("a")]),
            model_event(call("b")),
            model_event(vec![Part::text("c")]),
            model_event(call("d")),
        ];
        let s = |t: &str| Some(Value::String(t.into()));
        assert_eq!(stored(events), vec![None, s("ab"), None, s("abcd")]);
        // A reply without a text part stores "" (ADK 2.13's node output); a call without
        // text stores nothing.
        let events = vec![
            model_event(Vec::new()),
            model_event(call("")),
            model_event(call("e")),
        ];
        assert_eq!(stored(events), vec![s(""), None, s("e")]);
    }

    #[test]
    fn only_a_message_of_one_plain_text_part_is_the_text_it_holds() {
        let plain = Content::text(Role::User, "hi");
        assert!(is_text_message(&plain, "hi"));
        assert!(!is_text_message(&plain, "hello"));
        assert!(!is_text_message(&Content::text(Role::Model, "hi"), "hi"));
        let two = Content::new(Role::User, vec![Part::text("h"), Part::text("i")]);
        assert!(!is_text_message(&two, "hi"));
        let mut thought = Part::text("hi");
        thought.thought = Some(true);
        assert!(!is_text_message(
            &Content::new(Role::User, vec![thought]),
            "hi"
        ));
    }

    #[test]
    fn a_reply_is_a_string_value_and_a_message_as_it_is() {
        let reply = Output::Text("draft one".into());
        assert!(reply.value().is_none());
        assert_eq!(reply.to_value(), Value::String("draft one".into()));
        assert_eq!(
            reply.clone().into_value(),
            Value::String("draft one".into())
        );
        assert_eq!(reply.into_message().as_deref(), Some("draft one"));
        // Other values become a message as ADK 2.13 json.dumps or str()s them.
        let map = serde_json::json!({"a": [1, true]});
        let value = Output::Value(Box::new(map));
        assert_eq!(value.into_message().as_deref(), Some(r#"{"a": [1, true]}"#));
        assert_eq!(Output::Value(Box::new(Value::Null)).into_message(), None);
        assert_eq!(
            Output::Value(Box::new(3.into())).into_message().as_deref(),
            Some("3")
        );
        let content = Output::User("hi".into()).to_value();
        let boxed = Output::Value(Box::new(content));
        assert_eq!(boxed.into_message().as_deref(), Some("hi"));
    }
}
