//! `adk-flow live` as a command (a contract): stdin lines in, JSON lines or a transcript
//! out, exit codes, refusals, sessions.

use crate::common;
use serde_json::{Value, json};
use std::time::Duration;

const TALKER: &str = "name: talker\nmodel: m\ninstruction: Talk.\n";

fn live(dir: &std::path::Path, args: &[&str], stdin: &str) -> std::process::Output {
    common::bin()
        .current_dir(dir)
        .arg("live")
        .args(args)
        .write_stdin(stdin.to_owned())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

#[test]
fn a_run_that_ends_in_an_error_exits_1_with_only_events_on_stdout() {
    let dir = common::write_files(&[
        ("talker.yaml", TALKER),
        ("script.yaml", "replies:\n  talker:\n    - text: \"Hi.\"\n"),
    ]);
    let out = live(
        dir.path(),
        &[
            "talker.yaml",
            "--script",
            "script.yaml",
            "--json",
            "--db",
            "memory",
        ],
        "hello\nand again\n",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = json_lines(&out.stdout);
    let last = events.last().unwrap();
    assert_eq!(last["errorCode"], "SCRIPT_EXHAUSTED");
    assert_eq!(last["author"], "talker");
    assert_eq!(events[events.len() - 2]["turnComplete"], true);
    assert!(String::from_utf8_lossy(&out.stderr).contains("talker"));
}

#[test]
fn loop_agents_are_refused_before_anything_runs() {
    let dir = common::write_files(&[
        (
            "root.yaml",
            "agent_class: LoopAgent\nname: again\nmax_iterations: 2\nsub_agents:\n  - config_path: talker.yaml\n",
        ),
        ("talker.yaml", TALKER),
        ("script.yaml", "replies:\n  talker:\n    - text: \"Hi.\"\n"),
    ]);
    let out = live(
        dir.path(),
        &[
            "root.yaml",
            "--script",
            "script.yaml",
            "--json",
            "--db",
            "memory",
        ],
        "hello\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`again` is a LoopAgent, which has no live mode"),
        "{stderr}"
    );
}

#[test]
fn the_transcript_streams_each_reply_once() {
    let dir = common::write_files(&[
        ("talker.yaml", TALKER),
        (
            "script.yaml",
            "replies:\n  talker:\n    - text: \"One two\"\n      chunks: [\"One\", \" two\"]\n",
        ),
    ]);
    let out = live(
        dir.path(),
        &["talker.yaml", "--script", "script.yaml", "--db", "memory"],
        "count\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("One two").count(), 1, "{stdout}");
    assert!(stdout.contains("[talker] One two"), "{stdout}");
}

#[test]
fn a_named_session_is_created_then_resumed_with_its_history() {
    let dir = common::write_files(&[
        ("talker.yaml", TALKER),
        (
            "script.yaml",
            "replies:\n  talker:\n    - text: \"First.\"\n    - text: \"Second.\"\n",
        ),
    ]);
    let db = format!("sqlite:{}", dir.path().join("s.db").display());
    let args = [
        "talker.yaml",
        "--script",
        "script.yaml",
        "--json",
        "--db",
        &db,
        "--session",
        "s1",
    ];
    let first = live(dir.path(), &args, "one\n");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // The script restarts with the new process; its first reply answers again.
    let second = live(dir.path(), &args, "two\n");
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let shown = common::bin()
        .current_dir(dir.path())
        .args(["sessions", "show", "s1", "--json", "--db", &db])
        .output()
        .unwrap();
    let stored: Vec<String> = json_lines(&shown.stdout)
        .iter()
        .map(common::simplify)
        .collect();
    assert_eq!(
        stored,
        [
            "user: one",
            "talker: First.",
            "talker: ",
            "user: two",
            "talker: First.",
            "talker: "
        ]
    );
    let ids: std::collections::HashSet<String> = json_lines(&shown.stdout)
        .iter()
        .map(|e| e["invocationId"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 2, "one invocation per live run");
}

#[test]
fn a_live_run_adds_its_session_to_memory_when_the_app_says_after_invocation() {
    let dir = common::write_files(&[
        (
            "root.yaml",
            "name: talker\nmodel: m\ninstruction: Talk.\nmemory: {add_session: after_invocation}\n",
        ),
        (
            "script.yaml",
            "replies:\n  talker:\n    - text: \"Noted, your locker code is 4417.\"\n",
        ),
    ]);
    let out = live(
        dir.path(),
        &[
            "root.yaml",
            "--script",
            "script.yaml",
            "--json",
            "--user",
            "alice",
        ],
        "My locker code is 4417.\n",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = common::bin()
        .current_dir(dir.path())
        .args(["memory", "list", "--json"])
        .output()
        .unwrap();
    let rows = json_lines(&list.stdout);
    let text = serde_json::to_string(&rows).unwrap();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        rows.iter()
            .all(|r| r["user"] == "alice" && r["app"] == "talker"),
        "{text}"
    );
    assert!(text.contains("My locker code is 4417."), "{text}");
    assert!(text.contains("Noted, your locker code is 4417."), "{text}");
    // The default (on_demand) adds nothing.
    let dir = common::write_files(&[
        ("talker.yaml", TALKER),
        (
            "script.yaml",
            "replies:\n  talker:\n    - text: \"Noted.\"\n",
        ),
    ]);
    let out = live(
        dir.path(),
        &["talker.yaml", "--script", "script.yaml", "--json"],
        "My locker code is 4417.\n",
    );
    assert_eq!(out.status.code(), Some(0));
    let list = common::bin()
        .current_dir(dir.path())
        .args(["memory", "list", "--json"])
        .output()
        .unwrap();
    assert!(json_lines(&list.stdout).is_empty());
}

#[test]
fn a_live_run_keeps_its_memories_where_memory_says_as_run_does() {
    let dir = common::write_files(&[
        (
            "root.yaml",
            "name: talker\nmodel: m\ninstruction: Talk.\nmemory: {add_session: after_invocation}\n",
        ),
        (
            "script.yaml",
            "replies:\n  talker:\n    - text: \"Noted.\"\n",
        ),
    ]);
    let args = ["root.yaml", "--script", "script.yaml", "--json"];
    let memory = ["--memory", "sqlite:memories.db"];
    let out = live(
        dir.path(),
        &[&args[..], &memory[..]].concat(),
        "Code 4417.\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let list = |extra: &[&str]| {
        let out = common::bin()
            .current_dir(dir.path())
            .args(["memory", "list", "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json_lines(&out.stdout)
    };
    let kept = list(&memory);
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        list(&[]).is_empty(),
        "nothing in the session store's memory"
    );
}

#[test]
fn a_before_model_reply_stands_in_for_the_live_models_turn() {
    let root = r#"
name: desk
model: m
instruction: Help.
output_key: answer
before_model_callbacks: [{name: closed}]
define:
  callbacks:
    closed:
      when: "state.closed == 'yes'"
      set_state: {notified: "yes"}
      reply: "We are closed today, {{ state.name }}."
"#;
    let dir = common::write_files(&[
        ("root.yaml", root),
        ("script.yaml", "replies:\n  desk: [{text: open answer}]\n"),
    ]);
    let run = |closed: &str, stdin: &str| {
        let out = live(
            dir.path(),
            &[
                "root.yaml",
                "--script",
                "script.yaml",
                "--json",
                "--db",
                "memory",
                "--state",
                &format!("closed={closed}"),
                "--state",
                "name=Ann",
            ],
            stdin,
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        json_lines(&out.stdout)
            .iter()
            .map(common::simplify)
            .collect::<Vec<_>>()
    };
    // The model has one reply only: two turns would exhaust it, but it is never called;
    // the callback runs (and writes its state) before each turn.
    let closed = r#"desk: We are closed today, Ann. | state {"notified":"yes","answer":"We are closed today, Ann."}"#;
    assert_eq!(
        run("yes", "hi\nanyone there?\n"),
        [
            "desk: We are closed today, Ann. | (partial)",
            closed,
            "desk: ",
            "desk: We are closed today, Ann. | (partial)",
            closed,
            "desk: ",
        ]
    );
    // When the condition does not hold, the model answers.
    assert_eq!(
        run("no", "hi\n"),
        [
            "desk: open answer | (partial)",
            r#"desk: open answer | state {"answer":"open answer"}"#,
            "desk: ",
        ]
    );
}

/// As ADK's live agent does: a text turn of an agent with an `output_schema` is parsed
/// and checked; a conforming reply is stored as an object, a broken one ends the run with
/// the error ADK's check raises (and exit 1), rather than storing text that is not JSON.
#[test]
fn a_live_text_turn_is_checked_against_the_output_schema() {
    let root = r#"
name: grader
model: m
instruction: Grade the answer.
output_key: grade
output_schema:
  type: object
  properties:
    score: {type: integer}
  required: [score]
"#;
    let run = |reply: &str| {
        let dir = common::write_files(&[
            ("root.yaml", root),
            (
                "script.yaml",
                &format!("replies:\n  grader:\n    - text: '{reply}'\n"),
            ),
        ]);
        let out = live(
            dir.path(),
            &[
                "root.yaml",
                "--script",
                "script.yaml",
                "--json",
                "--db",
                "memory",
            ],
            "grade this\n",
        );
        (out.status.code(), json_lines(&out.stdout))
    };
    let (code, events) = run(r#"{"score": 7}"#);
    assert_eq!(code, Some(0), "{events:#?}");
    let sealed = events
        .iter()
        .find(|e| e["partial"] != true && e["content"]["parts"][0]["text"].is_string())
        .unwrap();
    assert_eq!(
        sealed["actions"]["stateDelta"]["grade"],
        json!({"score": 7})
    );

    let (code, events) = run(r#"{"score": "high"}"#);
    assert_eq!(code, Some(1), "{events:#?}");
    let last = events.last().unwrap();
    assert_eq!(last["errorCode"], "OUTPUT_SCHEMA_MISMATCH", "{events:#?}");
    assert!(
        events
            .iter()
            .all(|e| e["actions"]["stateDelta"].get("grade").is_none()),
        "{events:#?}"
    );
}
