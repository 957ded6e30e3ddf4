//! The command tool: a program run with an argument list built from templates, never
//! through a shell; killed at its timeout; output captured and bounded.

use super::ToolError;
use crate::template::jinja;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Output beyond this many bytes per stream is cut (and says so).
const MAX_OUTPUT: usize = 64 * 1024;

/// A program to run.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    /// Program name or path.
    pub program: String,
    /// Argument templates.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// Kill after this long.
    pub timeout: Duration,
}

async fn read_bounded(mut r: impl tokio::io::AsyncRead + Unpin) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut truncated = false;
    loop {
        match r.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if buf.len() < MAX_OUTPUT {
                    let take = n.min(MAX_OUTPUT - buf.len());
                    buf.extend_from_slice(&chunk[..take]);
                    truncated |= take < n;
                } else {
                    truncated = true;
                }
            }
        }
    }
    let mut s = String::from_utf8_lossy(&buf).into_owned();
    if truncated {
        s.push_str("\n[output truncated]");
    }
    s
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
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&args)
            .current_dir(&self.cwd)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .map_err(|e| ToolError::new(format!("cannot run `{}`: {e}", self.program)))?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let work = async {
            let out = async {
                match stdout {
                    Some(s) => read_bounded(s).await,
                    None => String::new(),
                }
            };
            let err = async {
                match stderr {
                    Some(s) => read_bounded(s).await,
                    None => String::new(),
                }
            };
            let (out, err) = tokio::join!(out, err);
            let status = child.wait().await;
            (out, err, status)
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok((stdout, stderr, Ok(status))) => Ok(json!({
                "exit_code": status.code(),
                "stdout": stdout,
                "stderr": stderr,
            })),
            Ok((_, _, Err(e))) => Err(ToolError::new(format!("`{}` failed: {e}", self.program))),
            // Dropping the future drops the child, which kill_on_drop kills.
            Err(_) => Err(ToolError::new(format!(
                "`{}` timed out after {} s and was killed",
                self.program,
                self.timeout.as_secs_f64()
            ))),
        }
    }
}
