//! The golden scenarios: adk-flow must yield the event stream ADK 1.39.1 yielded, field
//! for field once normalized by the reference `normalize.py` (vendored in tests/golden).

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};

fn check(scenario: &str) {
    let dir = common::repo().join("tests/golden").join(scenario);
    let messages = std::fs::read_to_string(dir.join("messages.txt")).unwrap();
    let mut cmd = common::bin();
    cmd.current_dir(&dir).args([
        "run",
        "root_agent.yaml",
        "--script",
        "script.yaml",
        "--json",
        // The recorded streams are one process's events; nothing is written beside them.
        "--db",
        "memory",
    ]);
    if dir.join("stream").exists() {
        cmd.arg("--stream");
    }
    for m in messages.lines().filter(|l| !l.is_empty()) {
        cmd.args(["--message", m]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{scenario}: exit {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = normalize(&out.stdout);
    let expected = std::fs::read_to_string(dir.join("expected.normalized.jsonl")).unwrap();
    assert_eq!(
        ours, expected,
        "{scenario}: normalized stream differs from ADK 1.39.1"
    );
}

fn normalize(stdout: &[u8]) -> String {
    use std::io::Write;
    let script = common::repo().join("tests/golden/normalize.py");
    let mut child = Command::new("python3")
        .arg(Path::new(&script))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the reference normalizer");
    child.stdin.take().unwrap().write_all(stdout).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn tool_free_text() {
    check("tool_free_text");
}

#[test]
fn sequential_output_key() {
    check("sequential_output_key");
}

#[test]
fn loop_exit_loop() {
    check("loop_exit_loop");
}

#[test]
fn transfer_and_answer() {
    check("transfer_and_answer");
}

#[test]
fn stream_text() {
    check("stream_text");
}

#[test]
fn raw_events_have_adk_key_order() {
    // Beyond normalization: the raw JSON keys appear in the order ADK prints them.
    let dir = common::repo().join("tests/golden/transfer_and_answer");
    let out = common::bin()
        .current_dir(&dir)
        .args([
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "--json",
            "--db",
            "memory",
        ])
        .args(["--message", "where is order 7?"])
        .output()
        .unwrap();
    let ours = String::from_utf8(out.stdout).unwrap();
    let adk = std::fs::read_to_string(dir.join("adk.events.jsonl")).unwrap();
    let keys = |line: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        v.as_object().unwrap().keys().cloned().collect()
    };
    for (a, b) in ours.lines().zip(adk.lines()) {
        assert_eq!(keys(a), keys(b));
    }
    assert_eq!(ours.lines().count(), adk.lines().count());
}
