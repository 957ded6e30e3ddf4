//! Printing events: JSON lines (`--json`) or a readable transcript.

use crate::event::Event;
use std::io::{self, Write};

/// Writes events to stdout as they arrive.
pub struct Printer {
    json: bool,
    out: io::Stdout,
    /// The author whose partial text is being streamed on the current line.
    streaming: Option<String>,
}

impl Printer {
    /// A printer for JSON lines or a transcript.
    pub fn new(json: bool) -> Self {
        Printer {
            json,
            out: io::stdout(),
            streaming: None,
        }
    }

    /// Prints one event and flushes, so output streams as it happens.
    pub fn event(&mut self, event: &Event) -> io::Result<()> {
        let mut out = self.out.lock();
        if self.json {
            serde_json::to_writer(&mut out, event)?;
            out.write_all(b"\n")?;
            return out.flush();
        }
        if event.is_partial() {
            if self.streaming.as_deref() != Some(event.author.as_str()) {
                if self.streaming.is_some() {
                    writeln!(out)?;
                }
                write!(out, "[{}] ", event.author)?;
                self.streaming = Some(event.author.clone());
            }
            if let Some(text) = event.text() {
                write!(out, "{text}")?;
            }
            return out.flush();
        }
        let streamed = self.streaming.take();
        let text_already_shown = streamed.as_deref() == Some(event.author.as_str());
        if streamed.is_some() {
            writeln!(out)?;
        }
        transcript(&mut out, event, text_already_shown)?;
        out.flush()
    }

    /// Shows the user's message in the transcript (JSON output never includes it, as in ADK).
    pub fn user(&mut self, text: &str) -> io::Result<()> {
        if self.json {
            return Ok(());
        }
        let mut out = self.out.lock();
        writeln!(out, "[user] {text}")?;
        out.flush()
    }

    /// Ends a streamed line left open.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.streaming.take().is_some() {
            let mut out = self.out.lock();
            writeln!(out)?;
            out.flush()?;
        }
        Ok(())
    }
}

fn transcript(out: &mut impl Write, event: &Event, text_already_shown: bool) -> io::Result<()> {
    let who = &event.author;
    if let Some(content) = &event.content {
        for part in &content.parts {
            if part.thought == Some(true) {
                continue;
            }
            if let Some(text) = &part.text {
                if !text_already_shown {
                    writeln!(out, "[{who}] {text}")?;
                }
            } else if let Some(call) = &part.function_call {
                writeln!(out, "[{who}] -> {}({})", call.name, call.args)?;
            } else if let Some(resp) = &part.function_response {
                writeln!(out, "[{who}] <- {}: {}", resp.name, resp.response)?;
            }
        }
    }
    if let Some(target) = &event.actions.transfer_to_agent {
        writeln!(out, "[{who}] transfers to {target}")?;
    }
    if event.actions.escalate == Some(true) {
        writeln!(out, "[{who}] escalates (exits the loop)")?;
    }
    if !event.actions.state_delta.is_empty() {
        let keys: Vec<&str> = event
            .actions
            .state_delta
            .keys()
            .map(String::as_str)
            .collect();
        writeln!(out, "[{who}] state: {}", keys.join(", "))?;
    }
    if let Some(code) = &event.error_code {
        let message = event.error_message.as_deref().unwrap_or("");
        writeln!(out, "[{who}] error {code}: {message}")?;
    }
    Ok(())
}
