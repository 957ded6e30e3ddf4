//! The command tool: a program run with an argument list built from templates, never
//! through a shell; output captured and bounded.
//!
//! The program starts with a clean environment and in a process group of its own
//! ([`super::process`]). When it exits, whatever it left running in its group is killed
//! and the output read so far is its answer (children that linger do not turn an exit into
//! a timeout). At its timeout the whole group is killed, children that ignore SIGTERM
//! included.

use super::ToolError;
use super::process::{GroupGuard, clean_command};
use crate::template::jinja;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Output beyond this many bytes per stream is cut (and says so).
const MAX_OUTPUT: usize = 64 * 1024;

/// How long output may still arrive after the program's group is gone.
const DRAIN: Duration = Duration::from_secs(1);

/// A program to run.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// Program name or path.
    pub program: String,
    /// Argument templates.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Environment the workflow passes (on top of [`super::process::INHERITED_ENV`]).
    pub env: Vec<(String, String)>,
    /// Kill after this long.
    pub timeout: Duration,
}

/// What one output stream produced so far; shared with its reader, so that a reader cut
/// short still leaves what it read.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    truncated: bool,
}

impl Captured {
    fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.bytes).into_owned();
        if self.truncated {
            s.push_str("\n[output truncated]");
        }
        s
    }
}

/// Reads `r` to its end, keeping the first [`MAX_OUTPUT`] bytes and dropping the rest.
async fn read_bounded(mut r: impl tokio::io::AsyncRead + Unpin, into: Arc<Mutex<Captured>>) {
    let mut chunk = [0u8; 8192];
    loop {
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut c = into.lock().unwrap_or_else(PoisonError::into_inner);
                let take = n.min(MAX_OUTPUT - c.bytes.len());
                c.bytes.extend_from_slice(&chunk[..take]);
                c.truncated |= take < n;
            }
        }
    }
}

impl CommandSpec {
    /// Runs the program with arguments rendered from `ctx`; returns exit code and output.
    ///
    /// # Errors
    /// A template that does not render, a program that cannot start, or a timeout.
    pub async fn run(&self, ctx: &Value) -> Result<Value, ToolError> {
        let args: Vec<String> = self
            .args
            .iter()
            .map(|a| jinja::render(a, ctx))
            .collect::<Result<_, _>>()
            .map_err(|e| ToolError::new(e.0))?;
        let mut cmd = clean_command(&self.program, &self.env, Some(&self.cwd));
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| ToolError::new(format!("cannot run `{}`: {e}", self.program)))?;
        // Dropped on every way out (a cancelled call too): the group dies with it.
        let group = child.id().map(GroupGuard::new);
        let (out, err) = (Arc::default(), Arc::default());
        let readers = [
            child
                .stdout
                .take()
                .map(|s| tokio::spawn(read_bounded(s, Arc::clone(&out)))),
            child
                .stderr
                .take()
                .map(|s| tokio::spawn(read_bounded(s, Arc::clone(&err)))),
        ];
        let waited = tokio::time::timeout(self.timeout, child.wait()).await;
        // Exited or timed out, the program's group goes now: lingering children hold its
        // pipes open and would outlive the tool.
        if let Some(g) = &group {
            g.kill_group();
        }
        let status = match waited {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => return Err(ToolError::new(format!("`{}` failed: {e}", self.program))),
            Err(_) => {
                let _ = child.wait().await;
                for r in readers.into_iter().flatten() {
                    r.abort();
                }
                return Err(ToolError::new(format!(
                    "`{}` timed out after {} s and was killed",
                    self.program,
                    self.timeout.as_secs_f64()
                )));
            }
        };
        // The pipes close once the group is gone; a process that left the group (setsid)
        // may keep them open, so the rest of the output gets a moment, not forever.
        for r in readers.into_iter().flatten() {
            let abort = r.abort_handle();
            if tokio::time::timeout(DRAIN, r).await.is_err() {
                abort.abort();
            }
        }
        let text =
            |c: &Arc<Mutex<Captured>>| c.lock().unwrap_or_else(PoisonError::into_inner).text();
        let mut result = json!({
            "exit_code": status.code(),
            "stdout": text(&out),
            "stderr": text(&err),
        });
        #[cfg(unix)]
        if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
            result["signal"] = json!(signal);
        }
        Ok(result)
    }
}
