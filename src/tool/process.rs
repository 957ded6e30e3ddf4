//! Programs started by tools (`command` tools, stdio MCP servers): one way to start them
//! and one way to end them.
//!
//! A program starts with a clean environment, only [`INHERITED_ENV`] of ours plus what the
//! workflow passes, so API keys in our environment stay ours. It runs in a process group
//! of its own, and [`GroupGuard`] kills the whole group (the program and anything it
//! started) when told to or when dropped, so nothing outlives the tool.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Variables a program inherits from our environment, as the official MCP SDKs choose
/// them (after sudo), plus the locale and time zone: nothing else leaks to it.
#[cfg(unix)]
pub const INHERITED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TZ",
];
/// Variables a program inherits from our environment, as the official MCP SDKs choose
/// them: nothing else leaks to it.
#[cfg(not(unix))]
pub const INHERITED_ENV: &[&str] = &[
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

/// A command for `program` with a clean environment (see [`INHERITED_ENV`]) plus `env`,
/// in its own process group, killed if the handle is dropped.
pub fn clean_command(
    program: &str,
    env: &[(String, String)],
    cwd: Option<&Path>,
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.env_clear().kill_on_drop(true);
    for key in INHERITED_ENV {
        // Values starting with `()` are exported shell functions; the SDKs skip them too.
        if let Some(value) = std::env::var_os(key)
            && !value.to_string_lossy().starts_with("()")
        {
            cmd.env(key, value);
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    cmd
}

/// Kills a program's process group when dropped (or when told to), at most once.
pub struct GroupGuard {
    #[cfg_attr(not(unix), allow(dead_code))]
    pid: u32,
    armed: AtomicBool,
}

impl GroupGuard {
    /// Guards the group led by `pid` (a program started with [`clean_command`]).
    pub fn new(pid: u32) -> Self {
        GroupGuard {
            pid,
            armed: AtomicBool::new(true),
        }
    }

    /// Sends SIGKILL to the whole process group. Errors (the group is already gone) are
    /// ignored. On other platforms the child's own kill-on-drop does the work.
    pub fn kill_group(&self) {
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

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill_group();
    }
}
