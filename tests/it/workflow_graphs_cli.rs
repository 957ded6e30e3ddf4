//! Workflow graphs through the CLI beyond ADK's reference runs: adk-flow's `max_node_runs`,
//! the per-invocation model-call limit inside a loop, `adk-flow test` on a workflow, and
//! nothing but JSON lines on stdout.

use crate::common::{self, bin, write_files};
use serde_json::Value;

const LOOP: &str = r#"
name: loop_wf
agent_class: Workflow
max_node_runs: MAX
edges:
  - - START
    - writer.yaml
    - name: judge
      agent_class: adk_flow.Router
      route: "'done' if 'FINAL' in input else 'retry'"
  - [judge, {retry: writer.yaml, done: {name: publish, agent_class: adk_flow.Router, route: "none"}}]
"#;
const WRITER: &str = "name: writer\ninstruction: Write.\n";

fn run(root: &str, script: &str, args: &[&str]) -> (Vec<Value>, i32, String) {
    let out = common::run(
        &[
            ("root_agent.yaml", root),
            ("writer.yaml", WRITER),
            ("script.yaml", script),
        ],
        args,
    );
    (out.events, out.code, out.stderr)
}

fn drafts(n: usize) -> String {
    let mut s = String::from("replies:\n  writer:\n");
    for i in 0..n {
        s.push_str(&format!("    - text: draft {i}\n"));
    }
    s
}

#[test]
fn max_node_runs_ends_a_runaway_loop_with_an_error_naming_the_node() {
    let (events, code, stderr) = run(
        &LOOP.replace("MAX", "2"),
        &drafts(5),
        &["-m", "go", "-m", "again"],
    );
    assert_eq!(code, 1, "{stderr}");
    let last = events.last().unwrap();
    assert_eq!(last["author"], "loop_wf");
    assert_eq!(last["errorCode"], "MaxNodeRunsExceeded");
    let message = last["errorMessage"].as_str().unwrap();
    assert!(
        message.contains("`writer`")
            && message.contains("would run a 3rd time")
            && message.contains("max_node_runs is 2"),
        "{message}"
    );
    assert_eq!(last["nodeInfo"]["path"], "loop_wf@1/writer@3");
    // writer, judge, writer, judge, then the error: the second message is never sent.
    assert_eq!(events.len(), 5, "{events:?}");
}

#[test]
fn the_model_call_limit_holds_inside_a_graph() {
    let root = LOOP.replace("max_node_runs: MAX\n", "");
    let (events, code, stderr) = run(&root, &drafts(501), &["-m", "go"]);
    assert_eq!(code, 1, "{stderr}");
    let last = events.last().unwrap();
    assert_eq!(last["errorCode"], "LlmCallsLimitExceededError");
    assert_eq!(
        last["errorMessage"],
        "Max number of llm calls limit of `500` exceeded"
    );
    assert_eq!(last["author"], "loop_wf");
    assert_eq!(last["nodeInfo"]["path"], "loop_wf@1/writer@501");
    let writer_events = events.iter().filter(|e| e["author"] == "writer").count();
    assert_eq!(writer_events, 500);
}

#[test]
fn test_files_run_workflows() {
    let dir = write_files(&[
        ("loop.yaml", &LOOP.replace("max_node_runs: MAX\n", "")),
        ("writer.yaml", WRITER),
        (
            "loop.test.yaml",
            "workflow: loop.yaml\ntests:\n  - name: loops until FINAL\n    replies:\n      writer: [{text: one}, {text: two FINAL}]\n    turns:\n      - user: go\n        expect:\n          authors: [writer, loop_wf, writer, loop_wf]\n",
        ),
    ]);
    let out = bin()
        .current_dir(dir.path())
        .args(["test", "loop.test.yaml"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("loops until FINAL"), "{text}");
}

/// `final_text` of a graph turn is its last node output (a Router's, as text), and a
/// failed workflow's test failure says which node failed and why, not only the workflow.
#[test]
fn test_files_read_router_outputs_and_say_why_a_workflow_failed() {
    let root = LOOP.replace("max_node_runs: MAX\n", "").replace(
        "route: \"none\"}",
        "route: \"none\", output: \"{'published': input, 'n': 2}\"}",
    );
    let cases = r#"workflow: loop.yaml
tests:
  - name: the published mapping is the final text
    replies:
      writer: [{text: one FINAL}]
    turns:
      - user: go
        expect:
          final_text: {equals: '{"published": "one FINAL", "n": 2}'}
  - name: the script runs out in the loop
    replies:
      writer: [{text: one}]
    turns:
      - user: go
"#;
    let dir = write_files(&[
        ("loop.yaml", &root),
        ("writer.yaml", WRITER),
        ("loop.test.yaml", cases),
    ]);
    let out = bin()
        .current_dir(dir.path())
        .args(["test", "loop.test.yaml"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("ok     the published mapping is the final text"),
        "{text}"
    );
    assert!(
        text.contains("turn 1 (\"go\"): the run failed: workflow `loop_wf` failed (error event at loop_wf@1/writer@2: SCRIPT_EXHAUSTED: "),
        "{text}"
    );
    assert!(text.contains("1 passed, 1 failed"), "{text}");
}

#[test]
fn a_file_that_is_refused_prints_nothing_on_stdout_and_exits_1() {
    let (events, code, stderr) = run(
        "name: wf\nagent_class: Workflow\nedges:\n  - [START, writer.yaml, {yes: writer.yaml}]\n",
        &drafts(1),
        &["-m", "go"],
    );
    assert!(events.is_empty());
    assert_eq!(code, 1);
    assert!(
        stderr.contains("root_agent.yaml:4:27: error: label `yes` is unquoted"),
        "{stderr}"
    );
}

/// YAML 1.1 integer traps as labels: PyYAML (ADK) reads `017` as 15 and `1_000` as 1000,
/// YAML 1.2 (adk-flow) as 17 and a string; each is refused where it is written.
#[test]
fn labels_yaml_1_1_reads_as_other_integers_are_refused() {
    let (events, code, stderr) = run(
        "name: wf\nagent_class: Workflow\nedges:\n  - [START, {name: r, agent_class: adk_flow.Router, route: \"input\"}, {017: writer.yaml}]\n  - {from_node: r, to_node: writer.yaml, route: [a, 1_000]}\n",
        &drafts(1),
        &["-m", "go"],
    );
    assert!(events.is_empty());
    assert_eq!(code, 1);
    assert!(
        stderr.contains("root_agent.yaml:4:71: error: label `017` is unquoted: ADK (PyYAML, YAML 1.1) reads it as the integer 15, adk-flow (YAML 1.2) as the integer 17"),
        "{stderr}"
    );
    assert!(
        stderr.contains("root_agent.yaml:5:53: error: label `1_000` is unquoted"),
        "{stderr}"
    );
}

#[test]
fn the_transcript_shows_routes_and_outputs() {
    let dir = write_files(&[
        ("root_agent.yaml", &LOOP.replace("max_node_runs: MAX\n", "")),
        ("writer.yaml", WRITER),
        (
            "script.yaml",
            "replies:\n  writer:\n    - text: one\n    - text: two FINAL\n",
        ),
    ]);
    let out = bin()
        .current_dir(dir.path())
        .args([
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "--db",
            "memory",
            "-m",
            "go",
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[loop_wf] routes \"retry\""), "{text}");
    assert!(text.contains("[loop_wf] routes \"done\""), "{text}");
    assert!(text.contains("[loop_wf] two FINAL"), "{text}");
}

/// ADK's pydantic reads `max_concurrency: "2.0"` as the integer 2 (lax mode), so adk-flow
/// loads it too (the JSON schema, for editors, keeps to integers); `"1e3"` is no integer
/// for pydantic and stays refused.
#[test]
fn max_concurrency_as_text_is_read_as_pydantic_reads_it() {
    for (text, code) in [("\"2.0\"", 0), ("\" 2 \"", 0), ("\"1e3\"", 1)] {
        let dir = write_files(&[(
            "root_agent.yaml",
            &format!(
                "name: wf\nagent_class: Workflow\nmax_concurrency: {text}\nedges:\n  - [START, {{name: a, instruction: x}}]\n"
            ),
        )]);
        let out = bin()
            .current_dir(dir.path())
            .args(["validate", "root_agent.yaml"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{text}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// A workflow that fails is said on stderr with the error event that tells why, as ADK's
/// runner says the exception: a node's agent that transfers to itself fails the workflow
/// with a WorkflowDataError (recorded case `transfer_to_self`).
#[test]
fn run_says_why_a_workflow_failed() {
    let case =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphs/transfer_to_self");
    let read = |f: &str| std::fs::read_to_string(case.join(f)).unwrap();
    let (root, script) = (read("root_agent.yaml"), read("script.yaml"));
    let out = common::run(
        &[("root_agent.yaml", &root), ("script.yaml", &script)],
        &["-m", "hi", "-m", "please hand over", "-m", "third"],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.events.len(), 6, "{:?}", out.events);
    assert_eq!(
        out.stderr.trim(),
        "error: workflow `relay` failed (error event at relay@1: WorkflowDataError: Agent 'front' cannot transfer to itself.)"
    );
}

/// A workflow's failure is said with the failing node's error event, not the turn's last
/// error event: in a fan-out a sibling's model error (which fails nothing) comes after the
/// failure (recorded case `fanout_failure_then_sibling_error`) or before it
/// (`fanout_sibling_error_then_failure`). `run` and `test` name the node that failed and
/// why; the events on stdout are ADK's.
#[test]
fn a_failed_workflow_names_the_failing_node_not_a_siblings_error() {
    let cases = [
        (
            "fanout_failure_then_sibling_error",
            "error: workflow `fails` failed (error event at fails@1/b@1: KeyError: \"Context variable not found: `missing_key` in agent 'b'.\")",
        ),
        (
            "fanout_sibling_error_then_failure",
            "error: workflow `relay` failed (error event at relay@1/front@1: ValueError: Agent back not found in the agent tree.)",
        ),
    ];
    for (name, said) in cases {
        let case = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/graphs")
            .join(name);
        let read = |f: &str| std::fs::read_to_string(case.join(f)).unwrap();
        let (root, script) = (read("root_agent.yaml"), read("script.yaml"));
        let expected = read("expected.events.jsonl").lines().count();
        let out = common::run(
            &[("root_agent.yaml", &root), ("script.yaml", &script)],
            &["-m", "go", "-m", "never sent"],
        );
        assert_eq!(out.code, 1, "{name}: {}", out.stderr);
        assert_eq!(out.events.len(), expected, "{name}: {:?}", out.events);
        assert_eq!(out.stderr.trim(), said, "{name}");
    }
    let case = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/graphs/fanout_failure_then_sibling_error/root_agent.yaml");
    let root = std::fs::read_to_string(case).unwrap();
    let tests = r#"workflow: root_agent.yaml
tests:
  - name: fails
    replies:
      e: [{error: {code: "RESOURCE_EXHAUSTED", message: "quota"}}]
    turns:
      - user: go
"#;
    let dir = write_files(&[("root_agent.yaml", &root), ("wf.test.yaml", tests)]);
    let out = bin()
        .current_dir(dir.path())
        .args(["test", "wf.test.yaml"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("turn 1 (\"go\"): the run failed: workflow `fails` failed (error event at fails@1/b@1: KeyError: \"Context variable not found: `missing_key` in agent 'b'.\")\n"),
        "{text}"
    );
}

/// In a Workflow app `validate` reads instructions as ADK 2.13 templates them: `\{draft}`
/// and `${cost}` are text, so it warns only about `{style}`, which is read.
#[test]
fn validate_warns_only_about_keys_a_workflow_instruction_reads() {
    let root = r#"
agent_class: Workflow
name: esc
edges:
  - - START
    - name: w
      instruction: 'Write \{draft} and $${cost} for {topic?} and {style}.'
"#;
    let dir = write_files(&[("root_agent.yaml", root)]);
    let out = bin()
        .current_dir(dir.path())
        .args(["validate", "root_agent.yaml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = format!("{stdout}{stderr}");
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert_eq!(text.matches(": warning: ").count(), 1, "{text}");
    assert!(
        text.contains("root_agent.yaml:7:66: warning: instruction reads `{style}`"),
        "{text}"
    );
}

/// A loop of Routers calls no model, so the model-call limit never ends it: `run` warns
/// before it starts, naming the cycle and `max_node_runs` (here the routes leave it).
#[test]
fn run_warns_about_a_loop_of_routers_nothing_caps() {
    let root = r#"
agent_class: Workflow
name: spin
edges:
  - - START
    - {name: a, agent_class: adk_flow.Router, route: "'again'"}
    - again:
        name: b
        agent_class: adk_flow.Router
        route: "'again' if (state.n | default(0)) < 3 else 'out'"
        state: {n: "(state.n | default(0)) + 1"}
  - [b, {again: a, out: {name: done, agent_class: adk_flow.Router, route: "none", output: "'done'"}}]
"#;
    let out = common::run(
        &[("root_agent.yaml", root), ("script.yaml", "replies: {}\n")],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.events.len(), 9, "{:?}", out.events);
    assert!(
        out.stderr
            .contains("root_agent.yaml:6:14: warning: the cycle a -> b -> a calls no model")
            && out
                .stderr
                .contains("set `max_node_runs` on workflow `spin`"),
        "{}",
        out.stderr
    );
    let capped = root.replace("name: spin\n", "name: spin\nmax_node_runs: 10\n");
    let out = common::run(
        &[
            ("root_agent.yaml", &capped),
            ("script.yaml", "replies: {}\n"),
        ],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
}
