//! Printing events: JSON lines (`--json`) or a readable transcript, coloured on a
//! terminal (unless `NO_COLOR` is set) and plain otherwise, with a spinner on stderr while
//! the model thinks.

use crate::event::Event;
use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};
use std::time::Duration;

/// Characters that would act on a terminal rather than show: C0 and C1 controls (ESC
/// starts colour and cursor sequences), DEL, and Unicode's bidirectional overrides, which
/// reorder what a reader sees.
fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(|c| acts_on_terminal(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts_on_terminal(c) && !keep(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// An id or name as printed: every control character escaped (`\u{1b}`, `\n`), so an id
/// cannot move the cursor, recolour the terminal or fake a line.
pub(super) fn printable(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// Free text as printed (a reply, an error message): line breaks and tabs stay, other
/// control characters are escaped.
pub(super) fn printable_text(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

/// How much of each event the transcript shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// Only what the agents say.
    Quiet,
    /// Text, tool calls and results, transfers, escalations, state keys, errors.
    Normal,
    /// Also state values, usage and finish reasons.
    Verbose,
}

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }
    fn author(&self, who: &str) -> String {
        self.paint("1;36", &format!("[{who}]"))
    }
    fn user(&self) -> String {
        self.paint("1;32", "[user]")
    }
    fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }
    fn call(&self, text: &str) -> String {
        self.paint("33", text)
    }
    fn error(&self, text: &str) -> String {
        self.paint("1;31", text)
    }
}

/// Writes events to stdout as they arrive.
pub struct Printer {
    json: bool,
    verbosity: Verbosity,
    style: Style,
    spinner: bool,
    out: io::Stdout,
    /// The author whose partial text is being streamed on the current line.
    streaming: Option<String>,
}

impl Printer {
    /// A printer for JSON lines or a transcript.
    pub fn new(json: bool, verbosity: Verbosity) -> Self {
        let color = io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Printer {
            json,
            verbosity,
            style: Style { on: color },
            spinner: !json && verbosity != Verbosity::Quiet && io::stderr().is_terminal(),
            out: io::stdout(),
            streaming: None,
        }
    }

    /// Whether a spinner should run while waiting for events.
    pub fn wants_spinner(&self) -> bool {
        self.spinner && self.streaming.is_none()
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
            if self.streaming.as_deref() != Some(&*event.author) {
                if self.streaming.is_some() {
                    writeln!(out)?;
                }
                write!(out, "{} ", self.style.author(&printable(&event.author)))?;
                self.streaming = Some(event.author.to_string());
            }
            if let Some(text) = event.text() {
                write!(out, "{}", printable_text(&text))?;
            }
            return out.flush();
        }
        let streamed = self.streaming.take();
        let text_already_shown = streamed.as_deref() == Some(&*event.author);
        if streamed.is_some() {
            writeln!(out)?;
        }
        transcript(
            &mut out,
            event,
            text_already_shown,
            self.verbosity,
            &self.style,
        )?;
        out.flush()
    }

    /// Shows the user's message in the transcript (JSON output never includes it, as in ADK).
    pub fn user(&mut self, text: &str) -> io::Result<()> {
        if self.json {
            return Ok(());
        }
        let mut out = self.out.lock();
        writeln!(out, "{} {}", self.style.user(), printable_text(text))?;
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

fn transcript(
    out: &mut impl Write,
    event: &Event,
    text_already_shown: bool,
    verbosity: Verbosity,
    style: &Style,
) -> io::Result<()> {
    let who = style.author(&printable(&event.author));
    let quiet = verbosity == Verbosity::Quiet;
    if let Some(content) = &event.content {
        for part in &content.parts {
            if part.thought == Some(true) {
                continue;
            }
            if let Some(text) = &part.text {
                if !text_already_shown {
                    writeln!(out, "{who} {}", printable_text(text))?;
                }
            } else if quiet {
                continue;
            } else if let Some(call) = &part.function_call {
                writeln!(
                    out,
                    "{who} {}",
                    style.call(&format!("-> {}({})", printable(&call.name), call.args))
                )?;
            } else if let Some(resp) = &part.function_response {
                writeln!(
                    out,
                    "{who} {}",
                    style.dim(&format!("<- {}: {}", printable(&resp.name), resp.response))
                )?;
            }
        }
    }
    if let Some(code) = event.error_code() {
        let message = event.error_message().unwrap_or("");
        writeln!(
            out,
            "{who} {}",
            style.error(&format!(
                "error {}: {}",
                printable(code),
                printable_text(message)
            ))
        )?;
    }
    // A workflow node's data output (a Router's, a JoinNode's): what it passes on.
    if let Some(output) = &event.output {
        let text = match output.as_ref() {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        writeln!(out, "{who} {}", printable_text(&text))?;
    }
    if quiet {
        return Ok(());
    }
    if let Some(route) = &event.actions.route {
        writeln!(
            out,
            "{who} {}",
            style.dim(&format!("routes {}", printable(&route.to_string())))
        )?;
    }
    if let Some(target) = &event.actions.transfer_to_agent {
        writeln!(
            out,
            "{who} {}",
            style.dim(&format!("transfers to {}", printable(target)))
        )?;
    }
    if event.actions.escalate == Some(true) {
        writeln!(out, "{who} {}", style.dim("escalates (exits the loop)"))?;
    }
    if !event.actions.artifact_delta.is_empty() {
        let saved: Vec<String> = event
            .actions
            .artifact_delta
            .iter()
            .map(|(k, v)| format!("{} v{v}", printable(k)))
            .collect();
        writeln!(
            out,
            "{who} {}",
            style.dim(&format!("artifacts: {}", saved.join(", ")))
        )?;
    }
    if !event.actions.state_delta.is_empty() {
        let shown: Vec<String> = if verbosity == Verbosity::Verbose {
            event
                .actions
                .state_delta
                .iter()
                .map(|(k, v)| format!("{} = {v}", printable(k)))
                .collect()
        } else {
            event
                .actions
                .state_delta
                .keys()
                .map(|k| printable(k).into_owned())
                .collect()
        };
        writeln!(
            out,
            "{who} {}",
            style.dim(&format!("state: {}", shown.join(", ")))
        )?;
    }
    if verbosity == Verbosity::Verbose {
        if let Some(u) = &event.meta().usage_metadata {
            writeln!(
                out,
                "{who} {}",
                style.dim(&format!(
                    "usage: {} prompt + {} reply tokens",
                    u.prompt_token_count.unwrap_or(0),
                    u.candidates_token_count.unwrap_or(0)
                ))
            )?;
        }
        if let Some(f) = &event.finish_reason {
            writeln!(
                out,
                "{who} {}",
                style.dim(&format!("finish: {}", printable(f)))
            )?;
        }
    }
    Ok(())
}

/// Draws a spinner on stderr until dropped.
pub struct Spinner {
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Spinner {
    /// Starts drawing (after a short delay, so fast steps do not flicker).
    pub fn start(enabled: bool) -> Spinner {
        if !enabled {
            return Spinner { task: None };
        }
        let task = tokio::spawn(async {
            const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
            tokio::time::sleep(Duration::from_millis(150)).await;
            let mut i = 0;
            loop {
                {
                    let mut err = io::stderr().lock();
                    let _ = write!(err, "\r{} thinking…", FRAMES[i % FRAMES.len()]);
                    let _ = err.flush();
                }
                i += 1;
                tokio::time::sleep(Duration::from_millis(80)).await;
            }
        });
        Spinner { task: Some(task) }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let mut err = io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
