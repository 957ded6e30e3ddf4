//! Conversations that outlive the process: resuming with --session, surviving kill -9,
//! stale appends from a second process, and `adk-flow sessions`.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

const PIPELINE: &str = r#"
agent_class: SequentialAgent
name: pipe
sub_agents:
  - name: first
    model: m
    instruction: "First. Seen before: {last?}"
    output_key: last
  - name: second
    model: m
    instruction: Second.
    tools: [{name: nap}]
define:
  tools:
    nap:
      description: Sleep.
      command: {program: sleep, args: ["{{ seconds }}"], timeout_secs: 60}
"#;

fn adk(dir: &std::path::Path) -> assert_cmd::Command {
    let mut c = common::bin();
    c.current_dir(dir).env_remove("ADK_FLOW_DB");
    c
}

#[test]
fn a_session_resumes_in_a_new_process_with_its_state() {
    let dir = common::write_files(&[
        (
            "flow.yaml",
            "name: solo\nmodel: m\ninstruction: \"Previous answer: {answer?}\"\noutput_key: answer\n",
        ),
        ("one.yaml", "replies:\n  solo: [{text: first answer}]\n"),
        ("two.yaml", "replies:\n  solo: [{text: second answer}]\n"),
    ]);
    let first = adk(dir.path())
        .args([
            "run",
            "flow.yaml",
            "--script",
            "one.yaml",
            "--session",
            "s1",
            "-m",
            "hi",
        ])
        .output()
        .unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let second = adk(dir.path())
        .args([
            "run",
            "flow.yaml",
            "--script",
            "two.yaml",
            "--session",
            "s1",
            "-m",
            "again",
        ])
        .args(["--dump-requests", "req.jsonl"])
        .output()
        .unwrap();
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let req = std::fs::read_to_string(dir.path().join("req.jsonl")).unwrap();
    let req: serde_json::Value = serde_json::from_str(req.lines().next().unwrap()).unwrap();
    assert!(
        req["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Previous answer: first answer")
    );
    assert_eq!(
        req["contents"].as_array().unwrap().len(),
        3,
        "the whole conversation is there"
    );
    let list = adk(dir.path()).args(["sessions", "list"]).output().unwrap();
    let list = String::from_utf8(list.stdout).unwrap();
    assert!(list.contains("solo") && list.contains("s1"), "{list}");
    let deleted = adk(dir.path())
        .args(["sessions", "delete", "s1"])
        .output()
        .unwrap();
    assert!(deleted.status.success());
    let show = adk(dir.path())
        .args(["sessions", "show", "s1"])
        .output()
        .unwrap();
    assert_eq!(show.status.code(), Some(1));
}

#[test]
fn events_printed_before_a_kill_9_are_stored_and_the_session_resumes() {
    let dir = common::write_files(&[
        ("flow.yaml", PIPELINE),
        (
            "script.yaml",
            "replies:\n  first: [{text: one}, {text: three}]\n  second: [{function_call: {name: nap, args: {seconds: \"30\"}}}]\n",
        ),
        (
            "resume.yaml",
            "replies:\n  first: [{text: three}]\n  second: [{text: four}]\n",
        ),
    ]);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("adk-flow"))
        .current_dir(dir.path())
        .env_remove("ADK_FLOW_DB")
        .args([
            "run",
            "flow.yaml",
            "--script",
            "script.yaml",
            "--session",
            "k",
            "--json",
            "--allow-commands",
            "-m",
            "go",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = Instant::now();
    let mut seen = Vec::new();
    // first's text, then second's call to nap: the run is now asleep inside the tool.
    while seen.len() < 2 {
        seen.push(lines.next().unwrap().unwrap());
        assert!(started.elapsed() < Duration::from_secs(30));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let show = adk(dir.path())
        .args(["sessions", "show", "k", "--json"])
        .output()
        .unwrap();
    let stored = String::from_utf8(show.stdout).unwrap();
    let stored: Vec<serde_json::Value> = stored
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let printed: Vec<serde_json::Value> = seen
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The user event, then exactly the events that were printed.
    assert_eq!(stored[0]["author"], "user");
    assert_eq!(&stored[1..], &printed[..]);
    let resumed = adk(dir.path())
        .args([
            "run",
            "flow.yaml",
            "--script",
            "resume.yaml",
            "--session",
            "k",
            "--json",
            "--allow-commands",
            "-m",
            "again",
        ])
        .args(["--dump-requests", "req.jsonl"])
        .output()
        .unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let req = std::fs::read_to_string(dir.path().join("req.jsonl")).unwrap();
    assert!(req.contains("Seen before: one"), "{req}");
}

#[test]
fn a_stale_append_from_another_process_is_rejected() {
    let dir = common::write_files(&[
        ("flow.yaml", PIPELINE),
        (
            "slow.yaml",
            "replies:\n  first: [{text: one}]\n  second: [{function_call: {name: nap, args: {seconds: \"2\"}}}, {text: done}]\n",
        ),
        (
            "quick.yaml",
            "replies:\n  first: [{text: other}]\n  second: [{text: quick}]\n",
        ),
    ]);
    let slow = std::process::Command::new(assert_cmd::cargo::cargo_bin("adk-flow"))
        .current_dir(dir.path())
        .env_remove("ADK_FLOW_DB")
        .args([
            "run",
            "flow.yaml",
            "--script",
            "slow.yaml",
            "--session",
            "shared",
            "--json",
            "--allow-commands",
            "-m",
            "go",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let quick = adk(dir.path())
        .args([
            "run",
            "flow.yaml",
            "--script",
            "quick.yaml",
            "--session",
            "shared",
            "--allow-commands",
            "-m",
            "meanwhile",
        ])
        .output()
        .unwrap();
    assert!(
        quick.status.success(),
        "{}",
        String::from_utf8_lossy(&quick.stderr)
    );
    let slow = slow.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&slow.stderr);
    assert_eq!(slow.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("modified in storage since it was loaded"),
        "{stderr}"
    );
}

#[test]
fn memory_sessions_leave_no_files() {
    let dir = common::write_files(&[
        ("flow.yaml", "name: solo\nmodel: m\ninstruction: Hi.\n"),
        ("script.yaml", "replies:\n  solo: [{text: hello}]\n"),
    ]);
    let out = adk(dir.path())
        .args([
            "run",
            "flow.yaml",
            "--script",
            "script.yaml",
            "--db",
            "memory",
            "-m",
            "hi",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(!dir.path().join(".adk-flow").exists());
}
