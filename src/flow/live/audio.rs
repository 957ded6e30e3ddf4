//! ADK's `save_live_blob`: the audio of a live turn kept as artifacts, with a file
//! reference to each in the session instead of the bytes.
//!
//! The user's audio chunks (realtime blobs from the client) and the model's (inline audio
//! in its replies) are cached as they pass. An interruption saves the model's audio; the
//! end of a turn saves the user's, then the model's. Each saved recording is one artifact
//! named as ADK 1.39.1 names it, `adk_live_audio_storage_{input_audio|output_audio}_{MS}.{EXT}`
//! (MS: when its first chunk arrived, in milliseconds; EXT: what follows the `/` of the
//! first chunk's MIME type), and one event authored by `user` or the agent whose content
//! holds a single `file_data` part: `artifact://APP/USER/SESSION/_adk_live/NAME#VERSION`.

use crate::artifact::{Artifact, ArtifactKey};
use crate::event::{Blob, Content, Event, FileData, Part, Role};
use crate::invocation::InvocationContext;
use crate::names;
use base64::Engine;

/// One cached chunk.
struct Chunk {
    data: Vec<u8>,
    mime_type: String,
    timestamp: f64,
}

/// The audio of the turn under way, the user's and the model's.
#[derive(Default)]
pub(super) struct AudioCache {
    input: Vec<Chunk>,
    output: Vec<Chunk>,
}

/// The bytes of a blob: base64, standard or URL-safe, padded or not.
fn decode(data: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    [STANDARD, URL_SAFE, STANDARD_NO_PAD, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(data).ok())
}

impl AudioCache {
    /// Keeps an audio chunk: the user's (`input`) or the model's. Other media is not kept
    /// (ADK does not save video either).
    pub(super) fn cache(&mut self, input: bool, blob: &Blob) {
        if !blob.mime_type.starts_with("audio/") {
            return;
        }
        let Some(data) = decode(&blob.data) else {
            tracing::warn!(mime_type = %blob.mime_type, "an audio chunk that is not base64 is not saved");
            return;
        };
        let chunk = Chunk {
            data,
            mime_type: blob.mime_type.clone(),
            timestamp: crate::event::now(),
        };
        if input {
            self.input.push(chunk);
        } else {
            self.output.push(chunk);
        }
    }

    /// Saves the cached audio (the user's when `user`, then the model's when `model`) and
    /// returns the events that refer to it. A recording that cannot be saved becomes an
    /// error event; the run goes on.
    pub(super) async fn flush(
        &mut self,
        ctx: &InvocationContext,
        agent: &str,
        user: bool,
        model: bool,
    ) -> Vec<Event> {
        let mut out = Vec::new();
        if user && !self.input.is_empty() {
            let chunks = std::mem::take(&mut self.input);
            out.push(save(ctx, names::USER, Role::User, "input_audio", chunks).await);
        }
        if model && !self.output.is_empty() {
            let chunks = std::mem::take(&mut self.output);
            out.push(save(ctx, agent, Role::Model, "output_audio", chunks).await);
        }
        out
    }
}

/// Saves one recording as an artifact; the event referring to it (or reporting why not).
async fn save(
    ctx: &InvocationContext,
    author: &str,
    role: Role,
    kind: &str,
    chunks: Vec<Chunk>,
) -> Event {
    let mut event = Event::new(ctx.invocation_id(), author);
    event.branch = ctx.branch().map(Box::from);
    let (mime_type, timestamp) = match chunks.first() {
        Some(c) => (c.mime_type.clone(), c.timestamp),
        None => return event,
    };
    event.timestamp = timestamp;
    let ext = mime_type.rsplit('/').next().unwrap_or_default();
    // ADK's name: the first chunk's time in whole milliseconds.
    let name = format!(
        "adk_live_audio_storage_{kind}_{}.{ext}",
        (timestamp * 1000.0) as i64
    );
    let data: Vec<u8> = chunks.into_iter().flat_map(|c| c.data).collect();
    let key = {
        let s = ctx.session().lock();
        ArtifactKey {
            app: s.app_name.clone(),
            user: s.user_id.clone(),
            session: s.id.clone(),
            name: name.clone(),
        }
    };
    let Some(store) = ctx.artifacts() else {
        event.set_error(
            Some("LIVE_AUDIO_NOT_SAVED".into()),
            Some(format!("{name}: the app has no artifact service").into()),
        );
        return event;
    };
    let artifact = Artifact {
        mime_type: mime_type.clone(),
        data,
    };
    match store.save(&key, artifact).await {
        Ok(version) => {
            let uri = format!(
                "artifact://{}/{}/{}/_adk_live/{name}#{version}",
                key.app, key.user, key.session
            );
            let part = Part {
                file_data: Some(Box::new(FileData {
                    display_name: None,
                    file_uri: uri,
                    mime_type,
                })),
                ..Part::default()
            };
            event.content = Some(Content::new(role, vec![part]));
        }
        Err(e) => {
            event.set_error(
                Some("LIVE_AUDIO_NOT_SAVED".into()),
                Some(format!("{name}: {}", crate::errors::chain(&e)).into()),
            );
        }
    }
    event
}
