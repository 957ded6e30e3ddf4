//! The child process behind a stdio MCP server: spawned in its own process group, its
//! stderr kept (last lines) for error messages, and the whole group killed when the
//! toolset goes away, so neither the server nor anything it started (`npx` → `node`)
//! outlives us.

use rmcp::transport::TokioChildProcess;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::{AsyncBufReadExt, BufReader};

/// How many stderr lines an error message quotes.
const TAIL_LINES: usize = 12;
/// Longest stderr line kept (characters).
const TAIL_LINE_CHARS: usize = 400;

/// Variables a server inherits from our environment, as the official MCP SDKs choose them
/// (`DEFAULT_INHERITED_ENV_VARS`, after sudo): nothing else leaks to the server, so API
/// keys in our environment stay ours unless the configuration passes them on.
#[cfg(unix)]
const INHERITED_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
#[cfg(not(unix))]
const INHERITED_ENV: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
];

/// What a stdio server is started with.
pub(super) struct Launch<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub cwd: Option<&'a PathBuf>,
}

/// Kills the server's process group when dropped (or when told to), at most once.
pub(super) struct ChildGuard {
    #[cfg_attr(not(unix), allow(dead_code))]
    pid: u32,
    armed: AtomicBool,
}

impl ChildGuard {
    /// Sends SIGKILL to the whole process group. Errors (the group is already gone) are
    /// ignored. On other platforms the child's own kill-on-drop does the work.
    pub(super) fn kill_group(&self) {
        if !self.armed.swap(false, Ordering::SeqCst) {
            return;
        }
        #[cfg(unix)]
        if let Ok(pgid) = i32::try_from(self.pid) {
            use nix::sys::signal::{Signal, killpg};
            use nix::unistd::Pid;
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill_group();
    }
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
) -> std::io::Result<(TokioChildProcess, ChildGuard, StderrTail)> {
    let mut cmd = tokio::process::Command::new(launch.command);
    cmd.args(launch.args).env_clear().kill_on_drop(true);
    for key in INHERITED_ENV {
        // Values starting with `()` are exported shell functions; the SDKs skip them too.
        if let Some(value) = std::env::var_os(key)
            && !value.to_string_lossy().starts_with("()")
        {
            cmd.env(key, value);
        }
    }
    cmd.envs(launch.env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = launch.cwd {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    let (process, stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()?;
    let pid = process
        .id()
        .ok_or_else(|| std::io::Error::other("the process exited before it could be tracked"))?;
    let guard = ChildGuard {
        pid,
        armed: AtomicBool::new(true),
    };
    let tail = StderrTail::default();
    if let Some(stderr) = stderr {
        let tail = tail.clone();
        let server_name = server_name.to_owned();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "adk_flow::mcp", server = %server_name, "{line}");
                tail.push(&line);
            }
        });
    }
    Ok((process, guard, tail))
}
