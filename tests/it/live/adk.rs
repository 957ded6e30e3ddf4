//! Scripted live runs through `adk-flow live --script --json`, compared with what ADK
//! 1.39.1's `Runner.run_live` yielded and stored for the same scenario
//! (`scripts/live-adk-reference.py` regenerates tests/live/*/expected.*.jsonl), both
//! after the reference normalizer.

use crate::common;
use std::io::Write;
use std::process::{Command, Stdio};

fn normalize(jsonl: &[u8]) -> String {
    let script = common::repo().join("tests/golden/normalize.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs the reference normalizer");
    child.stdin.take().unwrap().write_all(jsonl).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

fn check(scenario: &str) {
    let dir = common::repo().join("tests/live").join(scenario);
    let tmp = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", tmp.path().join("s.db").display());
    let messages = std::fs::read(dir.join("messages.txt")).unwrap();
    let out = common::bin()
        .current_dir(&dir)
        .args([
            "live",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "--json",
        ])
        .args(["--db", &db, "--session", "s"])
        .write_stdin(messages)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{scenario}: exit {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = std::fs::read_to_string(dir.join("expected.events.jsonl")).unwrap();
    assert_eq!(
        normalize(&out.stdout),
        expected,
        "{scenario}: the live event stream differs from ADK 1.39.1's"
    );
    let stored = common::bin()
        .current_dir(&dir)
        .args(["sessions", "show", "s", "--json", "--db", &db])
        .output()
        .unwrap();
    assert!(
        stored.status.success(),
        "{}",
        String::from_utf8_lossy(&stored.stderr)
    );
    let expected = std::fs::read_to_string(dir.join("expected.session.jsonl")).unwrap();
    assert_eq!(
        normalize(&stored.stdout),
        expected,
        "{scenario}: the stored session differs from ADK 1.39.1's"
    );
}

#[test]
fn sequential_pipeline_hands_over_with_task_completed() {
    check("pipeline");
}

#[test]
fn transfer_switches_agents_mid_stream() {
    check("transfer");
}

#[test]
fn interruption_and_error_replies() {
    check("interrupt_error");
}
