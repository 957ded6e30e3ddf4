//! The child process behind a stdio MCP server: spawned in its own process group, its
//! stderr kept (last lines) for error messages, and the whole group killed when the
//! toolset goes away, so neither the server nor anything it started (`npx` → `node`)
//! outlives us.

use crate::tool::process::{GroupGuard, clean_command};
use rmcp::transport::TokioChildProcess;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

/// How many stderr lines an error message quotes.
const TAIL_LINES: usize = 12;
/// Longest stderr line kept (characters).
const TAIL_LINE_CHARS: usize = 400;
/// Longest stderr line read at once (bytes); longer lines arrive in pieces.
const MAX_LINE_BYTES: u64 = 16 * 1024;

/// What a stdio server is started with.
pub(super) struct Launch<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub cwd: Option<&'a PathBuf>,
}

/// The last lines the server wrote to stderr.
#[derive(Clone, Default)]
pub(super) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: &str) {
        let line: String = line.chars().take(TAIL_LINE_CHARS).collect();
        let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// `"; stderr: …"` with the kept lines, or nothing when the server wrote none.
    pub(super) fn suffix(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let text: Vec<&str> = lines
            .iter()
            .map(|l| l.trim_end())
            .filter(|l| !l.is_empty())
            .collect();
        if text.is_empty() {
            String::new()
        } else {
            format!("; server stderr: {}", text.join(" | "))
        }
    }
}

/// Starts the server: a new process group, piped stdio, killed on drop.
pub(super) fn spawn(
    server_name: &str,
    launch: &Launch<'_>,
) -> std::io::Result<(TokioChildProcess, GroupGuard, StderrTail)> {
    let mut cmd = clean_command(launch.command, launch.env, launch.cwd.map(PathBuf::as_path));
    cmd.args(launch.args);
    let (process, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = process
        .id()
        .ok_or_else(|| std::io::Error::other("the process exited before it could be tracked"))?;
    let guard = GroupGuard::new(pid);
    let tail = StderrTail::default();
    if let Some(stderr) = stderr {
        let tail = tail.clone();
        let server_name = server_name.to_owned();
        tokio::spawn(async move {
            // Read line by line, a long line in pieces: a server that never writes a
            // newline cannot grow our memory.
            let mut reader = BufReader::new(stderr);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match (&mut reader)
                    .take(MAX_LINE_BYTES)
                    .read_until(b'\n', &mut buf)
                    .await
                {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end_matches(['\n', '\r']);
                        tracing::debug!(target: "adk_flow::mcp", server = %server_name, "{line}");
                        tail.push(line);
                    }
                }
            }
        });
    }
    Ok((process, guard, tail))
}
