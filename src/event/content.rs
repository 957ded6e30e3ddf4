//! `Content` and `Part`: the genai message shapes shared by events and model requests.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who a piece of content is attributed to when it is sent to a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user, and function responses.
    User,
    /// The model.
    Model,
}

/// A message: an ordered list of parts and the role that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Content {
    /// The parts, in order.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// The producing role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
}

impl Content {
    /// A content with one text part.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Content {
            parts: vec![Part::text(text)],
            role: Some(role),
        }
    }

    /// A content made of `parts`.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Content {
            parts,
            role: Some(role),
        }
    }
}

/// A function call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// Call id, pairing the call with its response (`adk-` + uuid when the model gives none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Arguments, a JSON object.
    #[serde(default = "empty_object")]
    pub args: Value,
    /// Tool name.
    pub name: String,
}

/// The result of a function call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionResponse {
    /// Id of the call this answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// The result, a JSON object (`{"result": value}` when the tool returned a non-object).
    pub response: Value,
}

impl FunctionResponse {
    /// A tool's result as a function response body: objects as they are, anything else
    /// wrapped as `{"result": value}`, as ADK does.
    pub fn body(value: Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(map),
            other => {
                let mut map = serde_json::Map::with_capacity(1);
                map.insert("result".to_owned(), other);
                Value::Object(map)
            }
        }
    }
}

/// A copy of `value` whose JSON objects, at any depth, have room for their keys only: a
/// `serde_json` map (with `preserve_order`) makes room for three entries on its first
/// insert, and its clones keep that room (~112 bytes per unused entry). The runtime makes
/// such copies of what it keeps for the rest of a session (a scripted call's arguments,
/// an agent's view of the conversation).
pub fn compact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(compact_map(map)),
        Value::Array(items) => Value::Array(items.iter().map(compact).collect()),
        other => other.clone(),
    }
}

/// A copy of `map` (see [`compact`]).
pub fn compact_map(map: &serde_json::Map<String, Value>) -> serde_json::Map<String, Value> {
    // Collecting sizes the map from the iterator's exact length.
    map.iter().map(|(k, v)| (k.clone(), compact(v))).collect()
}

/// How many keys an owned object may have for [`compacted`] to move it into a map of its
/// size.
pub const COMPACT_KEYS: usize = 2;

/// `value`, with a small top-level object (up to [`COMPACT_KEYS`] keys, as a tool's result
/// usually is) moved into a map of its size: its keys and values are moved, not copied.
/// Anything else is returned as is.
pub fn compacted(value: Value) -> Value {
    match value {
        Value::Object(map) if map.len() <= COMPACT_KEYS => Value::Object(map.into_iter().collect()),
        other => other,
    }
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Inline bytes in a message: a file the user attached, or an artifact's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Blob {
    /// The file name shown to people.
    #[serde(skip_serializing_if = "Option::is_none", alias = "display_name")]
    pub display_name: Option<String>,
    /// The bytes, base64-encoded as they travel in JSON.
    #[serde(default)]
    pub data: String,
    /// MIME type, e.g. `image/png`.
    #[serde(default, alias = "mime_type")]
    pub mime_type: String,
}

impl Blob {
    /// Whether the bytes are audio, video or an image: media ADK never stores inline
    /// in a live run.
    pub fn is_media(&self) -> bool {
        ["audio/", "video/", "image/"]
            .iter()
            .any(|p| self.mime_type.starts_with(p))
    }
}

/// A reference to bytes kept elsewhere: in a live run with `save_live_blob`, the audio
/// of a turn saved as an artifact (`artifact://APP/USER/SESSION/_adk_live/NAME#VERSION`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileData {
    /// The file name shown to people.
    #[serde(skip_serializing_if = "Option::is_none", alias = "display_name")]
    pub display_name: Option<String>,
    /// Where the bytes are.
    #[serde(alias = "file_uri")]
    pub file_uri: String,
    /// MIME type, e.g. `audio/pcm`.
    #[serde(default, alias = "mime_type")]
    pub mime_type: String,
}

/// One piece of a content: text, inline data, a function call or a function response.
///
/// The kinds a part is seldom are boxed, so that a text part (most parts, kept in every
/// stored event and in each agent's view of the conversation) stays small.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Marks reasoning text, which is never quoted to other agents nor stored by output_key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought: Option<bool>,
    /// Inline bytes (an attached file).
    #[serde(skip_serializing_if = "Option::is_none", alias = "inline_data")]
    pub inline_data: Option<Box<Blob>>,
    /// Bytes kept elsewhere (a saved artifact), by reference.
    #[serde(skip_serializing_if = "Option::is_none", alias = "file_data")]
    pub file_data: Option<Box<FileData>>,
    /// Opaque signature of a thought, passed back to the provider (boxed: most parts have
    /// none, and a pointer keeps a text part at 72 bytes).
    #[serde(skip_serializing_if = "Option::is_none", alias = "thought_signature")]
    #[allow(clippy::box_collection)]
    pub thought_signature: Option<Box<String>>,
    /// A function call.
    #[serde(skip_serializing_if = "Option::is_none", alias = "function_call")]
    pub function_call: Option<Box<FunctionCall>>,
    /// A function response.
    #[serde(skip_serializing_if = "Option::is_none", alias = "function_response")]
    pub function_response: Option<Box<FunctionResponse>>,
    /// Text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part {
            text: Some(text.into()),
            ..Part::default()
        }
    }

    /// A function-call part.
    pub fn function_call(call: FunctionCall) -> Self {
        Part {
            function_call: Some(Box::new(call)),
            ..Part::default()
        }
    }

    /// A function-response part.
    pub fn function_response(response: FunctionResponse) -> Self {
        Part {
            function_response: Some(Box::new(response)),
            ..Part::default()
        }
    }
}
