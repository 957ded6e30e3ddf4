//! Every example workflow in `workflows/` loads and runs with its script.

use crate::common;

#[test]
fn every_example_runs_with_its_script() {
    let dir = common::repo().join("workflows");
    let mut ran = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        if !name.ends_with(".yaml")
            || name.ends_with(".script.yaml")
            || name.ends_with(".test.yaml")
        {
            continue;
        }
        let script = dir.join(name.replace(".yaml", ".script.yaml"));
        assert!(script.exists(), "{name} has no script");
        let out = common::bin()
            .args([
                "run",
                path.to_str().unwrap(),
                "--script",
                script.to_str().unwrap(),
                "--json",
                // Nothing is written into the repository.
                "--db",
                "memory",
            ])
            .args([
                "-m",
                "Was invoice 42 paid?",
                "-m",
                "The app crashes on start.",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let events: Vec<serde_json::Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(!events.is_empty(), "{name} yielded nothing");
        // Single-turn examples run out of script on the second message; that is the only
        // acceptable failure.
        if !out.status.success() {
            assert_eq!(
                events.last().unwrap()["errorCode"],
                "SCRIPT_EXHAUSTED",
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        ran += 1;
    }
    assert!(
        ran >= 4,
        "expected the support, pipeline, parallel and loop examples"
    );
}

#[test]
fn the_support_example_routes_then_loops_until_the_checker_approves() {
    let root = common::repo();
    let out = common::bin()
        .current_dir(&root)
        .args([
            "run",
            "workflows/support.yaml",
            "--script",
            "workflows/support.script.yaml",
            "--json",
            "--db",
            "memory",
        ])
        .args([
            "-m",
            "Was invoice 42 paid?",
            "-m",
            "The app crashes on start.",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| common::simplify(&serde_json::from_str(l).unwrap()))
        .collect();
    let authors: Vec<&str> = lines.iter().map(|l| l.split(':').next().unwrap()).collect();
    // Each turn opens with the router's before_agent callback (the message kept in
    // temp: state), an event of its own as in ADK.
    assert_eq!(
        authors,
        vec![
            "support_router",
            "support_router",
            "support_router",
            "billing_ticket",
            "order_desk",
            "order_desk",
            "order_desk",
            "support_router",
            "support_router",
            "support_router",
            "tech_ticket",
            "drafter",
            "checker",
            "drafter",
            "checker",
            "checker",
        ]
    );
    assert!(lines.last().unwrap().ends_with("escalate"));
}

#[test]
fn every_example_workflow_has_passing_tests() {
    let dir = common::repo().join("workflows");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_str().unwrap().to_owned();
        if name.ends_with(".yaml") && !name.contains(".script.") && !name.contains(".test.") {
            let test = dir.join(name.replace(".yaml", ".test.yaml"));
            assert!(test.exists(), "{name} has no test file");
        }
    }
    let out = common::bin().arg("test").arg(&dir).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.trim_end().ends_with(" passed, 0 failed"), "{stdout}");
}

#[test]
fn a_failing_workflow_test_is_reported_clearly() {
    let dir = common::write_files(&[
        (
            "flow.yaml",
            "name: solo\nmodel: m\ninstruction: Hi.\noutput_key: out\n",
        ),
        (
            "flow.test.yaml",
            "workflow: flow.yaml\ntests:\n  - name: greets\n    replies: {solo: [{text: Hello}]}\n    turns:\n      - user: hi\n        expect:\n          final_text: {equals: Goodbye}\n          state: {out: Hello, missing: 1}\n          authors: [solo]\n  - name: passes\n    replies: {solo: [{text: Hello}]}\n    turns: [{user: hi, expect: {final_text: {contains: Hell}}}]\n",
        ),
    ]);
    let out = common::bin()
        .current_dir(dir.path())
        .args(["test", "flow.test.yaml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAILED greets"), "{stdout}");
    assert!(
        stdout.contains(r#"turn 1 ("hi"): final text: expected "Goodbye", got "Hello""#),
        "{stdout}"
    );
    assert!(
        stdout.contains("state `missing`: expected 1, got absent"),
        "{stdout}"
    );
    assert!(stdout.contains("ok     passes"), "{stdout}");
    assert!(
        stdout.trim_end().ends_with("1 passed, 1 failed"),
        "{stdout}"
    );
}

/// `temp:` state lives for one invocation: a later agent of the turn reads it, a test
/// reading the session after the turn does not (ADK never stores it).
#[test]
fn a_test_sees_no_temp_state_after_the_turn() {
    let dir = common::write_files(&[
        (
            "flow.yaml",
            "agent_class: SequentialAgent\nname: flow\nsub_agents:\n  - {name: a, model: m, instruction: Note., output_key: \"temp:note\"}\n  - {name: b, model: m, instruction: \"Use {temp:note}.\", output_key: used}\n",
        ),
        (
            "flow.test.yaml",
            "workflow: flow.yaml\ntests:\n  - name: temp is gone\n    replies: {a: [{text: scratch}], b: [{text: done}]}\n    turns:\n      - user: hi\n        expect:\n          state: {used: done, \"temp:note\": null}\n",
        ),
    ]);
    let out = common::bin()
        .current_dir(dir.path())
        .args(["test", "flow.test.yaml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("ok     temp is gone"), "{stdout}");
}

#[test]
fn the_test_flows_pass() {
    let out = common::bin()
        .arg("test")
        .arg(common::repo().join("tests/flows"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
}
