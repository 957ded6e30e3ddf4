//! The fields most events leave unset, boxed in two groups, and the flat form events are
//! read from.
//!
//! An event's error (`errorCode`, `errorMessage`) and its metadata (custom and usage
//! metadata, live transcriptions and resumption updates) take one pointer each in
//! [`Event`] instead of one per field: every stored event pays 16 bytes for them, not 88.
//! On the wire they stay flat keys, in ADK's order: the groups serialize flattened in
//! their place, and events are read through [`EventWire`], the flat form, so that reading
//! one costs no more than before (serde's `flatten` would buffer every key to read them).

use super::{Content, Event, EventActions, NodeInfo, StateMap, Transcription, UsageMetadata};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

/// What went wrong in a step: ADK's `errorCode` and `errorMessage` (see
/// [`Event::error_code`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventError {
    /// A machine-readable error code when the step failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<Box<str>>,
    /// A human-readable description of the error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<Box<str>>,
}

/// Metadata few events carry: custom and usage metadata, live mode's transcriptions and
/// session-resumption updates (see [`Event::meta`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventMeta {
    /// Free-form metadata attached by the caller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_metadata: Option<StateMap>,
    /// Token usage of the model call that produced this event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_metadata: Option<UsageMetadata>,
    /// A live connection's new session-resumption handle (`newHandle`, `resumable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_session_resumption_update: Option<Value>,
    /// What the user said, transcribed (live mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_transcription: Option<Transcription>,
    /// What the model said aloud, transcribed (live mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_transcription: Option<Transcription>,
}

impl EventMeta {
    fn is_empty(&self) -> bool {
        *self == EventMeta::default()
    }
}

impl Event {
    /// The error code, when the step failed.
    pub fn error_code(&self) -> Option<&str> {
        self.error.as_ref()?.error_code.as_deref()
    }

    /// The error's description.
    pub fn error_message(&self) -> Option<&str> {
        self.error.as_ref()?.error_message.as_deref()
    }

    /// Sets the error code and message (replacing both).
    pub fn set_error(&mut self, code: Option<Box<str>>, message: Option<Box<str>>) {
        self.error = (code.is_some() || message.is_some()).then(|| {
            Box::new(EventError {
                error_code: code,
                error_message: message,
            })
        });
    }

    /// The event's metadata; every field empty when it has none.
    pub fn meta(&self) -> &EventMeta {
        static NONE: EventMeta = EventMeta {
            custom_metadata: None,
            usage_metadata: None,
            live_session_resumption_update: None,
            input_transcription: None,
            output_transcription: None,
        };
        self.meta.as_deref().unwrap_or(&NONE)
    }

    /// The event's metadata, to set (allocated on first use).
    pub fn meta_mut(&mut self) -> &mut EventMeta {
        self.meta.get_or_insert_default()
    }
}

/// An event as it reads from JSON: every field flat, as ADK writes it. [`Event`] is read
/// through it (`#[serde(from)]`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EventWire {
    content: Option<Content>,
    partial: Option<bool>,
    turn_complete: Option<bool>,
    finish_reason: Option<Cow<'static, str>>,
    error_code: Option<Box<str>>,
    error_message: Option<Box<str>>,
    interrupted: Option<bool>,
    custom_metadata: Option<StateMap>,
    usage_metadata: Option<UsageMetadata>,
    live_session_resumption_update: Option<Value>,
    input_transcription: Option<Transcription>,
    output_transcription: Option<Transcription>,
    invocation_id: Arc<str>,
    author: Arc<str>,
    actions: EventActions,
    output: Option<Box<Value>>,
    node_info: Option<std::sync::Arc<NodeInfo>>,
    long_running_tool_ids: Option<Box<[String]>>,
    branch: Option<Box<str>>,
    id: Box<str>,
    timestamp: f64,
}

impl From<EventWire> for Event {
    fn from(w: EventWire) -> Event {
        let meta = EventMeta {
            custom_metadata: w.custom_metadata,
            usage_metadata: w.usage_metadata,
            live_session_resumption_update: w.live_session_resumption_update,
            input_transcription: w.input_transcription,
            output_transcription: w.output_transcription,
        };
        let mut event = Event {
            content: w.content,
            partial: w.partial,
            turn_complete: w.turn_complete,
            finish_reason: w.finish_reason,
            error: None,
            interrupted: w.interrupted,
            meta: (!meta.is_empty()).then(|| Box::new(meta)),
            invocation_id: w.invocation_id,
            author: w.author,
            actions: w.actions,
            output: w.output,
            node_info: w.node_info,
            long_running_tool_ids: w.long_running_tool_ids,
            branch: w.branch,
            id: w.id,
            timestamp: w.timestamp,
        };
        event.set_error(w.error_code, w.error_message);
        event
    }
}
