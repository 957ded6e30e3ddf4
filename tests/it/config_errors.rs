//! Bad workflow files fail before any model call, with `file:line:col` and a clear message.

use crate::common;

fn run_expect_error(files: &[(&str, &str)]) -> String {
    let dir = common::write_files(files);
    let out = common::bin()
        .current_dir(dir.path())
        .args([
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "--json",
            "-m",
            "hi",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "expected a config failure");
    assert!(out.stdout.is_empty(), "no events for an invalid workflow");
    String::from_utf8(out.stderr).unwrap()
}

const SCRIPT: (&str, &str) = ("script.yaml", "replies: {}\n");

#[test]
fn unknown_key_points_at_the_key() {
    let err = run_expect_error(&[
        (
            "root_agent.yaml",
            "name: a\ninstruction: x\nmodle: gemini\n",
        ),
        SCRIPT,
    ]);
    assert!(
        err.contains("root_agent.yaml:3:1: error: unknown key `modle`; did you mean `model`?"),
        "{err}"
    );
}

#[test]
fn wrong_type_points_at_the_value() {
    let err = run_expect_error(&[
        (
            "root_agent.yaml",
            "agent_class: LoopAgent\nname: l\nmax_iterations: lots\n",
        ),
        SCRIPT,
    ]);
    assert!(err.contains("root_agent.yaml:3:17: error:"), "{err}");
}

#[test]
fn missing_config_path_and_cycles() {
    let err = run_expect_error(&[
        (
            "root_agent.yaml",
            "agent_class: SequentialAgent\nname: s\nsub_agents:\n  - config_path: nope.yaml\n",
        ),
        SCRIPT,
    ]);
    assert!(
        err.contains("root_agent.yaml:4:18: error: config_path `nope.yaml` not found"),
        "{err}"
    );

    let err = run_expect_error(&[
        (
            "root_agent.yaml",
            "agent_class: SequentialAgent\nname: s\nsub_agents:\n  - config_path: b.yaml\n",
        ),
        (
            "b.yaml",
            "agent_class: SequentialAgent\nname: b\nsub_agents:\n  - config_path: root_agent.yaml\n",
        ),
        SCRIPT,
    ]);
    assert!(
        err.contains("b.yaml:4:18: error: config_path `root_agent.yaml` makes a cycle"),
        "{err}"
    );
}

#[test]
fn unknown_builtin_tool_is_named() {
    let err = run_expect_error(&[
        (
            "root_agent.yaml",
            "name: a\ninstruction: x\ntools:\n  - name: exit_lop\n  - name: enterprise_web_search\n  - name: my.tools.roll\n  - name: google.adk.tools.apihub_tool.apihub_toolset.APIHubToolset\n  - name: my_pkg.toolsets.CrmToolset\n  - name: google.adk.tools.exit_loop_tool.exit_loop\n  - name: google.adk.tools.load_artifacts\n",
        ),
        SCRIPT,
    ]);
    assert!(
        err.contains(
            "root_agent.yaml:4:11: error: unknown tool `exit_lop`; did you mean `exit_loop`?"
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "root_agent.yaml:5:11: error: ADK tool `enterprise_web_search` is not supported by adk-flow"
        ),
        "{err}"
    );
    assert!(
        err.contains("root_agent.yaml:6:11: error: `my.tools.roll` references a Python function"),
        "{err}"
    );
    // A toolset class is named as one, not as a function.
    assert!(
        err.contains("root_agent.yaml:7:11: error: `google.adk.tools.apihub_tool.apihub_toolset.APIHubToolset` references a Python toolset class"),
        "{err}"
    );
    assert!(
        err.contains(
            "root_agent.yaml:8:11: error: `my_pkg.toolsets.CrmToolset` references a Python toolset class"
        ),
        "{err}"
    );
    // Module-qualified ADK tools resolve as ADK resolves them.
    assert_eq!(err.matches(": error: ").count(), 5, "{err}");
}

#[test]
fn agent_names_are_identifiers_unique_and_not_user() {
    let err = run_expect_error(&[
        ("root_agent.yaml", "name: bad-name\ninstruction: x\n"),
        SCRIPT,
    ]);
    assert!(
        err.contains("root_agent.yaml:1:7: error: agent name `bad-name` must be an identifier"),
        "{err}"
    );
    let err = run_expect_error(&[("root_agent.yaml", "name: user\ninstruction: x\n"), SCRIPT]);
    assert!(err.contains("reserved"), "{err}");
    let err = run_expect_error(&[
        (
            "root_agent.yaml",
            "name: a\ninstruction: x\nsub_agents:\n  - name: b\n    instruction: y\n  - name: b\n    instruction: z\n",
        ),
        SCRIPT,
    ]);
    assert!(
        err.contains(
            "root_agent.yaml:6:11: error: agent name `b` is used twice; it was first declared at"
        ),
        "{err}"
    );
    // One node file named by two nested workflows is two agents of one name: said so,
    // not "first declared" at the very place it points to.
    let wf = |name: &str| {
        format!("agent_class: Workflow\nname: {name}\nedges:\n  - [START, writer.yaml]\n")
    };
    let (left, right) = (wf("left"), wf("right"));
    let err = run_expect_error(&[
        (
            "root_agent.yaml",
            "agent_class: Workflow\nname: top\nedges:\n  - [START, [left.yaml, right.yaml], {name: j, agent_class: JoinNode}]\n",
        ),
        ("left.yaml", &left),
        ("right.yaml", &right),
        ("writer.yaml", "name: writer\ninstruction: x\n"),
        SCRIPT,
    ]);
    assert!(
        err.contains("writer.yaml:1:7: error: the agent `writer` of this file is loaded twice")
            && !err.contains("first declared"),
        "{err}"
    );
}

#[test]
fn every_problem_is_reported_not_only_the_first() {
    let err = run_expect_error(&[
        (
            "root_agent.yaml",
            "agent_class: SequentialAgent\nname: s\nsub_agents:\n  - name: 1x\n    instruction: a\n  - config_path: gone.yaml\n  - name: c\n    instruction: a\n    tools: [{name: nope}]\n",
        ),
        SCRIPT,
    ]);
    assert_eq!(
        err.lines().filter(|l| l.contains(": error: ")).count(),
        3,
        "{err}"
    );
}

#[test]
fn unknown_agent_class_and_python_references() {
    let err = run_expect_error(&[
        ("root_agent.yaml", "agent_class: my_pkg.MyAgent\nname: a\n"),
        SCRIPT,
    ]);
    assert!(
        err.contains("root_agent.yaml:1:14: error: unknown agent_class `my_pkg.MyAgent`"),
        "{err}"
    );
    let err = run_expect_error(&[
        (
            "root_agent.yaml",
            "name: a\ninstruction: x\nbefore_model_callbacks:\n  - name: my.module.cb\n",
        ),
        SCRIPT,
    ]);
    assert!(
        err.contains("root_agent.yaml:4:11: error: `my.module.cb` references Python code"),
        "{err}"
    );
}

#[test]
fn yaml_syntax_empty_files_and_lists() {
    let err = run_expect_error(&[("root_agent.yaml", "name: [a\n"), SCRIPT]);
    assert!(err.starts_with("root_agent.yaml:"), "{err}");
    let err = run_expect_error(&[("root_agent.yaml", ""), SCRIPT]);
    assert!(err.contains("found an empty document"), "{err}");
    let err = run_expect_error(&[("root_agent.yaml", "- a\n- b\n"), SCRIPT]);
    assert!(err.contains("found a list"), "{err}");
    let err = run_expect_error(&[("root_agent.yaml", "name: a\nname: b\n"), SCRIPT]);
    assert!(err.contains("root_agent.yaml:2:"), "{err}");
}

#[test]
fn non_utf8_bytes_are_located() {
    let dir = common::write_files(&[SCRIPT]);
    std::fs::write(
        dir.path().join("root_agent.yaml"),
        b"name: a\ninstruction: caf\xe9\n",
    )
    .unwrap();
    let out = common::bin()
        .current_dir(dir.path())
        .args([
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "-m",
            "hi",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("root_agent.yaml:2:17: error: file is not valid UTF-8"),
        "{err}"
    );
}

#[test]
fn bad_script_files_are_located_too() {
    let err = run_expect_error(&[
        ("root_agent.yaml", "name: a\ninstruction: x\n"),
        ("script.yaml", "replies:\n  a:\n    - txt: hi\n"),
    ]);
    assert!(
        err.contains("script.yaml:3:7: error: unknown field `txt`"),
        "{err}"
    );
    let err = run_expect_error(&[
        ("root_agent.yaml", "name: a\ninstruction: x\n"),
        ("script.yaml", "replies:\n  a:\n    - {}\n"),
    ]);
    assert!(err.contains("replies.a[0]"), "{err}");
}
