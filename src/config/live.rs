//! The YAML type of the root file's `live` block: the run config of live runs
//! (`adk-flow live`, `/run_live`), ADK's `RunConfig` fields for `run_live`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the model answers in a live run (genai's `Modality`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum LiveModality {
    /// Text parts.
    Text,
    /// Spoken audio.
    Audio,
}

/// Settings of live runs (root file only). Every key is optional: an absent one takes
/// the command's default, and the command line (`adk-flow live` flags, the `/run_live`
/// query) overrides what is written here.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LiveConfig {
    /// How the model answers: `[TEXT]`, `[AUDIO]` or both. Default: TEXT for
    /// `adk-flow live`, AUDIO for `/run_live` (ADK's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub response_modalities: Option<Vec<LiveModality>>,
    /// Ask the model to transcribe what the user says (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_transcription: Option<bool>,
    /// Ask the model to transcribe what it says aloud (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_transcription: Option<bool>,
    /// Save the audio of each turn (the user's and the model's) as artifacts, with an
    /// event holding a file reference to each in the session, as ADK's `save_live_blob`
    /// (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub save_live_blob: Option<bool>,
    /// End a live run after this many seconds (default: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_duration_secs: Option<u64>,
    /// Ask the model for session-resumption handles and reconnect with them (default
    /// false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_resumption: Option<bool>,
}
