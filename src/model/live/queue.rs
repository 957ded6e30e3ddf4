//! The client's side of a live run: a queue it keeps writing to while events stream back.

use crate::event::{Blob, Content};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// Realtime input: media and voice-activity signals, sent to the model as they come.
#[derive(Debug, Clone, PartialEq)]
pub enum RealtimeInput {
    /// A chunk of audio (16-bit PCM, 16 kHz, mono for Gemini), video or an image.
    Blob(Blob),
    /// The user started speaking (when automatic activity detection is off).
    ActivityStart,
    /// The user stopped speaking.
    ActivityEnd,
    /// The microphone was closed: flush what was buffered.
    AudioStreamEnd,
}

/// One thing the client sends into a live run (ADK's `LiveRequest`).
#[derive(Debug, Clone, PartialEq)]
pub enum LiveRequest {
    /// A user content: one user turn (stored in the session when it reaches a model).
    Content(Content),
    /// Realtime input (never stored).
    Realtime(RealtimeInput),
    /// The client is done: the run ends.
    Close,
}

/// The sending side of a live run. Cloneable; sending never blocks and never fails from
/// the client's point of view (input sent after the run ended is dropped, and `send`
/// says so).
#[derive(Clone)]
pub struct LiveRequestQueue {
    tx: mpsc::UnboundedSender<LiveRequest>,
    rx: Arc<Mutex<Option<mpsc::UnboundedReceiver<LiveRequest>>>>,
}

impl Default for LiveRequestQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl LiveRequestQueue {
    /// A new, open queue.
    pub fn new() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        LiveRequestQueue {
            tx,
            rx: Arc::new(Mutex::new(Some(rx))),
        }
    }

    /// Sends a request; `false` when the run reading this queue has ended.
    pub fn send(&self, request: LiveRequest) -> bool {
        self.tx.send(request).is_ok()
    }

    /// Sends a user content.
    pub fn send_content(&self, content: Content) -> bool {
        self.send(LiveRequest::Content(content))
    }

    /// Sends a chunk of realtime media.
    pub fn send_realtime(&self, blob: Blob) -> bool {
        self.send(LiveRequest::Realtime(RealtimeInput::Blob(blob)))
    }

    /// Signals that the user started speaking.
    pub fn send_activity_start(&self) -> bool {
        self.send(LiveRequest::Realtime(RealtimeInput::ActivityStart))
    }

    /// Signals that the user stopped speaking.
    pub fn send_activity_end(&self) -> bool {
        self.send(LiveRequest::Realtime(RealtimeInput::ActivityEnd))
    }

    /// Signals the end of the audio stream.
    pub fn send_audio_stream_end(&self) -> bool {
        self.send(LiveRequest::Realtime(RealtimeInput::AudioStreamEnd))
    }

    /// Ends the run: the model connection closes once the requests before it are handled.
    pub fn close(&self) {
        let _ = self.tx.send(LiveRequest::Close);
    }

    /// The receiving side, which one live run takes; `None` when a run already took it.
    pub fn take_receiver(&self) -> Option<LiveRequestReceiver> {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        rx.take()
            .map(|rx| LiveRequestReceiver { rx, closed: false })
    }
}

/// The receiving side of a [`LiveRequestQueue`], owned by the agent that is live at the
/// moment and handed on at a transfer, so nothing sent during a switch is lost.
pub struct LiveRequestReceiver {
    rx: mpsc::UnboundedReceiver<LiveRequest>,
    closed: bool,
}

impl LiveRequestReceiver {
    /// The next request; [`LiveRequest::Close`] once the client closed the queue or
    /// dropped every sender, and from then on. Cancel-safe.
    pub async fn recv(&mut self) -> LiveRequest {
        if self.closed {
            return LiveRequest::Close;
        }
        match self.rx.recv().await {
            Some(LiveRequest::Close) | None => {
                self.closed = true;
                LiveRequest::Close
            }
            Some(request) => request,
        }
    }
}
