//! A throwaway PostgreSQL server for the SQL store tests, started by `scripts/postgres.sh`
//! (which installs the server when it is missing) on a free port.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A server started by `scripts/postgres.sh`, stopped (and its data removed) on drop.
pub struct PgServer {
    dir: PathBuf,
    /// `postgres://postgres@127.0.0.1:PORT/adkflow`.
    pub url: String,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/postgres.sh")
}

impl PgServer {
    /// Starts a server; panics when it cannot (the SQL stores must be tested on a real one).
    pub fn start() -> PgServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = std::env::temp_dir().join(format!("adk-flow-pg-{}-{port}", std::process::id()));
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .arg(&dir)
            .arg(port.to_string())
            .stderr(Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("cannot run scripts/postgres.sh: {e}"));
        let server = PgServer {
            dir,
            url: String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        };
        assert!(
            out.status.success() && server.url.starts_with("postgres://"),
            "scripts/postgres.sh could not install or start PostgreSQL ({}); see its messages \
             above. The SQL session store must be tested against a real server.",
            out.status
        );
        server
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let status = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .status();
        if !matches!(status, Ok(s) if s.success()) {
            eprintln!(
                "scripts/postgres.sh stop {} failed: {status:?}",
                self.dir.display()
            );
        }
    }
}
