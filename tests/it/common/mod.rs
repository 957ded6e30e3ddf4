//! Helpers shared by the integration tests: run the binary on workflow files written to a
//! temporary directory, and project its events into short lines.

#![allow(dead_code)]

pub mod pg;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What one `adk-flow run` printed and how it ended.
pub struct Outcome {
    pub events: Vec<Value>,
    pub code: i32,
    pub stderr: String,
    pub dir: tempfile::TempDir,
}

impl Outcome {
    /// Events as `author: what` lines (see [`simplify`]).
    pub fn lines(&self) -> Vec<String> {
        self.events.iter().map(simplify).collect()
    }

    /// The request dump, if `--dump-requests requests.jsonl` was passed.
    pub fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.dir.path().join("requests.jsonl")).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// Writes `files` into a fresh directory.
pub fn write_files(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

pub fn bin() -> Command {
    Command::cargo_bin("adk-flow").unwrap()
}

/// Runs `adk-flow run root_agent.yaml --script script.yaml --json --db memory ARGS` in a
/// directory holding `files` (which must include `root_agent.yaml` and `script.yaml`).
/// Sessions (and, unless `--artifacts` says otherwise, artifacts) stay in memory: these
/// runs test one conversation, not what outlives the process.
pub fn run(files: &[(&str, &str)], args: &[&str]) -> Outcome {
    let dir = write_files(files);
    let out = bin()
        .current_dir(dir.path())
        .args([
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "--json",
            "--db",
            "memory",
        ])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let events = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect();
    Outcome {
        events,
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8(out.stderr).unwrap(),
        dir,
    }
}

/// One event as a short line: `author: text`, `author: call name {args}`,
/// `author: resp name {response}`, plus `[branch]`, `partial`, actions and errors.
pub fn simplify(e: &Value) -> String {
    let mut bits = Vec::new();
    if let Some(parts) = e["content"]["parts"].as_array() {
        for p in parts {
            if let Some(t) = p["text"].as_str() {
                bits.push(t.to_owned());
            } else if !p["functionCall"].is_null() {
                bits.push(format!(
                    "call {} {}",
                    p["functionCall"]["name"].as_str().unwrap(),
                    p["functionCall"]["args"]
                ));
            } else if !p["functionResponse"].is_null() {
                bits.push(format!(
                    "resp {} {}",
                    p["functionResponse"]["name"].as_str().unwrap(),
                    p["functionResponse"]["response"]
                ));
            }
        }
    }
    if e["partial"] == Value::Bool(true) {
        bits.push("(partial)".into());
    }
    let a = &e["actions"];
    if let Some(d) = a["stateDelta"].as_object().filter(|d| !d.is_empty()) {
        bits.push(format!("state {}", Value::Object(d.clone())));
    }
    if let Some(t) = a["transferToAgent"].as_str() {
        bits.push(format!("transfer {t}"));
    }
    if a["escalate"] == Value::Bool(true) {
        bits.push("escalate".into());
    }
    if let Some(code) = e["errorCode"].as_str() {
        bits.push(format!("error {code}"));
    }
    let branch = e["branch"]
        .as_str()
        .map(|b| format!(" [{b}]"))
        .unwrap_or_default();
    format!(
        "{}{branch}: {}",
        e["author"].as_str().unwrap(),
        bits.join(" | ")
    )
}

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_owned()
}

/// Installs the npm packages of `tests/fixtures/<fixture>/` (`npm ci`, pinned by its
/// committed lock file) under `target/npm/` once, and returns the install directory.
/// Panics with a clear message when npm or the registry is unavailable: tests that need
/// a package never skip. `what` names it in messages.
pub fn npm_install(fixture: &str, what: &str) -> PathBuf {
    use std::hash::{Hash, Hasher};
    let fixture_dir = repo().join("tests/fixtures").join(fixture);
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("npm");
    let lock = std::fs::read(fixture_dir.join("package-lock.json")).expect("the npm lock file");
    let mut h = std::hash::DefaultHasher::new();
    lock.hash(&mut h);
    let dir = target.join(format!("{fixture}-{:016x}", h.finish()));
    if dir.join("node_modules").is_dir() {
        return dir;
    }
    // Install into a private directory and rename it into place, so concurrent test
    // processes never see a half-installed tree.
    let staging = target.join(format!(".staging-{fixture}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).expect("create the staging dir");
    for f in ["package.json", "package-lock.json"] {
        std::fs::copy(fixture_dir.join(f), staging.join(f)).expect("copy the npm fixture");
    }
    let started = std::time::Instant::now();
    let out = std::process::Command::new("npm")
        .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
        // Fail in seconds, not minutes, when the registry is unreachable.
        .args(["--fetch-retries=2", "--fetch-retry-mintimeout=2000"])
        .args(["--fetch-retry-maxtimeout=10000", "--fetch-timeout=60000"])
        .arg("--prefix")
        .arg(&staging)
        .output()
        .unwrap_or_else(|e| panic!("installing {what} needs npm (and node) on PATH: {e}"));
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&staging);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        panic!(
            "`npm ci` of {what} failed ({}); this test needs the npm registry.\n{}",
            out.status,
            lines[lines.len().saturating_sub(30)..].join("\n")
        );
    }
    eprintln!(
        "installed {what} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if std::fs::rename(&staging, &dir).is_err() {
        // Another process won the race; its copy is complete.
        let _ = std::fs::remove_dir_all(&staging);
    }
    dir
}
