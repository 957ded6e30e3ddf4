//! The text and transcriptions of a live model turn, merged into ADK's events: each
//! chunk a partial event, the merged text (or utterance) a final one.

use crate::event::{Content, Event, Part, Role, Transcription};
use crate::names;

/// Text and transcriptions of the model turn under way, merged as ADK merges them.
pub(super) struct TurnText {
    pub(super) invocation_id: String,
    pub(super) agent: String,
    pub(super) branch: Option<String>,
    pub(super) text: String,
    pub(super) thought: bool,
    pub(super) heard: String,
    pub(super) said: String,
}

impl TurnText {
    pub(super) fn event(&self, author: &str) -> Event {
        let mut event = Event::new(self.invocation_id.clone(), author);
        event.branch = self.branch.as_deref().map(Box::from);
        event
    }

    /// A text chunk: the merged text of the other kind first (thought/answer switch),
    /// then the chunk as a partial event.
    pub(super) fn chunk(&mut self, text: String, thought: bool) -> (Option<Event>, Event) {
        let flushed = if thought != self.thought {
            self.flush(false)
        } else {
            None
        };
        self.thought = thought;
        self.text.push_str(&text);
        let mut event = self.event(&self.agent);
        let part = Part {
            thought: thought.then_some(true),
            ..Part::text(text)
        };
        event.content = Some(Content::new(Role::Model, vec![part]));
        event.partial = Some(true);
        (flushed, event)
    }

    /// The merged text of the turn so far, as a final event.
    pub(super) fn flush(&mut self, interrupted: bool) -> Option<Event> {
        if self.text.is_empty() {
            return None;
        }
        let mut event = self.event(&self.agent);
        let part = Part {
            thought: self.thought.then_some(true),
            ..Part::text(std::mem::take(&mut self.text))
        };
        event.content = Some(Content::new(Role::Model, vec![part]));
        event.partial = Some(false);
        event.interrupted = interrupted.then_some(true);
        Some(event)
    }

    /// A transcription chunk (partial event) and, when finished, the whole utterance.
    pub(super) fn transcription(&mut self, input: bool, t: Transcription) -> Vec<Event> {
        let mut out = Vec::new();
        if let Some(text) = t.text.filter(|t| !t.is_empty()) {
            if input {
                self.heard.push_str(&text);
            } else {
                self.said.push_str(&text);
            }
            let mut event = self.transcription_event(input, text, false);
            event.partial = Some(true);
            out.push(event);
        }
        if t.finished == Some(true) {
            out.extend(self.finish_transcription(input));
        }
        out
    }

    fn transcription_event(&self, input: bool, text: String, finished: bool) -> Event {
        let t = Transcription {
            text: Some(text),
            finished: Some(finished),
        };
        if input {
            let mut event = self.event(names::USER);
            event.meta_mut().input_transcription = Some(t);
            event
        } else {
            let mut event = self.event(&self.agent);
            event.meta_mut().output_transcription = Some(t);
            event
        }
    }

    /// The finished utterance, if one was being transcribed.
    fn finish_transcription(&mut self, input: bool) -> Option<Event> {
        let text = std::mem::take(if input {
            &mut self.heard
        } else {
            &mut self.said
        });
        if text.is_empty() {
            return None;
        }
        let mut event = self.transcription_event(input, text, true);
        event.partial = Some(false);
        Some(event)
    }

    /// Both transcriptions, finished (at an interruption or the end of a turn).
    pub(super) fn finish_transcriptions(&mut self) -> Vec<Event> {
        [true, false]
            .into_iter()
            .filter_map(|input| self.finish_transcription(input))
            .collect()
    }
}
