//! End-to-end runs of small workflows with scripted replies, one ADK rule per test.

use crate::common;

use common::run;
use serde_json::json;

const LLM: &str = "model: gemini-2.5-flash\n";

fn agent(name: &str, extra: &str) -> String {
    format!("name: {name}\n{LLM}instruction: Be {name}.\n{extra}")
}

#[test]
fn escalate_exits_every_enclosing_loop() {
    let root = "agent_class: LoopAgent\nname: outer\nmax_iterations: 3\nsub_agents:\n  - config_path: inner.yaml\n  - config_path: after.yaml\n";
    let inner = "agent_class: LoopAgent\nname: inner\nmax_iterations: 5\nsub_agents:\n  - config_path: worker.yaml\n";
    let script = r#"
replies:
  worker:
    - text: "w1"
    - function_call: {name: exit_loop, args: {}}
  after:
    - text: "never"
"#;
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("inner.yaml", inner),
            (
                "worker.yaml",
                &agent("worker", "tools:\n  - name: exit_loop\n"),
            ),
            ("after.yaml", &agent("after", "")),
            ("script.yaml", script),
        ],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            "worker: w1",
            "worker: call exit_loop {}",
            r#"worker: resp exit_loop {"result":null} | escalate"#,
        ]
    );
}

#[test]
fn a_sequence_goes_on_after_its_loop_exits() {
    let root = "agent_class: SequentialAgent\nname: pipeline\nsub_agents:\n  - agent_class: LoopAgent\n    name: refine\n    max_iterations: 4\n    sub_agents:\n      - config_path: critic.yaml\n  - config_path: summary.yaml\n";
    let script = r#"
replies:
  critic:
    - text: "needs work"
    - parts: [{text: "good now"}, {function_call: {name: exit_loop, args: {}}}]
  summary:
    - text: "done"
"#;
    let out = run(
        &[
            ("root_agent.yaml", root),
            (
                "critic.yaml",
                &agent("critic", "tools:\n  - name: exit_loop\n"),
            ),
            ("summary.yaml", &agent("summary", "")),
            ("script.yaml", script),
        ],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            "critic: needs work",
            "critic: good now | call exit_loop {}",
            r#"critic: resp exit_loop {"result":null} | escalate"#,
            "summary: done",
        ]
    );
}

#[test]
fn max_iterations_bounds_a_loop() {
    let root = "agent_class: LoopAgent\nname: twice\nmax_iterations: 2\nsub_agents:\n  - config_path: a.yaml\n  - config_path: b.yaml\n";
    let script = "replies:\n  a: [{text: a1}, {text: a2}]\n  b: [{text: b1}, {text: b2}]\n";
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("a.yaml", &agent("a", "")),
            ("b.yaml", &agent("b", "")),
            ("script.yaml", script),
        ],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.lines(), vec!["a: a1", "b: b1", "a: a2", "b: b2"]);
}

#[test]
fn parallel_branches_are_isolated_and_merged_later() {
    let root = "agent_class: SequentialAgent\nname: flow\nsub_agents:\n  - agent_class: ParallelAgent\n    name: par\n    sub_agents:\n      - config_path: p1.yaml\n      - config_path: p2.yaml\n  - config_path: merge.yaml\n";
    let script = "replies:\n  p1: [{text: one}]\n  p2: [{text: two}]\n  merge: [{text: both}]\n";
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("p1.yaml", &agent("p1", "output_key: r1\n")),
            ("p2.yaml", &agent("p2", "output_key: r2\n")),
            ("merge.yaml", &agent("merge", "")),
            ("script.yaml", script),
        ],
        &["-m", "go", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut lines = out.lines();
    lines[..2].sort();
    assert_eq!(
        lines,
        vec![
            r#"p1 [par.p1]: one | state {"r1":"one"}"#,
            r#"p2 [par.p2]: two | state {"r2":"two"}"#,
            "merge: both",
        ]
    );
    let requests = out.requests();
    let p2 = requests.iter().find(|r| r["agent"] == "p2").unwrap();
    assert_eq!(
        p2["contents"],
        json!([{"parts": [{"text": "go"}], "role": "user"}]),
        "a branch never sees its sibling's events"
    );
    let merge = requests.iter().find(|r| r["agent"] == "merge").unwrap();
    let merge_text = merge["contents"].to_string();
    assert!(merge_text.contains("[p1] said: one"), "{merge_text}");
    assert!(merge_text.contains("[p2] said: two"), "{merge_text}");
}

#[test]
fn nested_parallel_branches_extend_the_parent_branch() {
    let root = "agent_class: ParallelAgent\nname: outer\nsub_agents:\n  - agent_class: ParallelAgent\n    name: inner\n    sub_agents:\n      - config_path: leaf.yaml\n";
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("leaf.yaml", &agent("leaf", "")),
            ("script.yaml", "replies:\n  leaf: [{text: hi}]\n"),
        ],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.lines(), vec!["leaf [outer.inner.inner.leaf]: hi"]);
}

fn team(extra_billing: &str, extra_tech: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "root_agent.yaml",
            format!(
                "name: desk\n{LLM}description: Front desk.\ninstruction: Route.\nsub_agents:\n  - config_path: billing.yaml\n  - config_path: tech.yaml\n"
            ),
        ),
        (
            "billing.yaml",
            format!(
                "name: billing\n{LLM}description: Bills.\ninstruction: Bills.\n{extra_billing}"
            ),
        ),
        (
            "tech.yaml",
            format!("name: tech\n{LLM}description: Tech.\ninstruction: Tech.\n{extra_tech}"),
        ),
    ]
}

fn run_team(files: Vec<(&'static str, String)>, script: &str, args: &[&str]) -> common::Outcome {
    let mut all: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    all.push(("script.yaml", script));
    run(&all, args)
}

#[test]
fn transfer_to_parent_and_to_peer() {
    let script = r#"
replies:
  desk:
    - function_call: {name: transfer_to_agent, args: {agent_name: billing}}
    - text: "desk answers"
  billing:
    - function_call: {name: transfer_to_agent, args: {agent_name: tech}}
  tech:
    - function_call: {name: transfer_to_agent, args: {agent_name: desk}}
"#;
    let out = run_team(team("", ""), script, &["-m", "help"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let authors: Vec<String> = out.lines();
    assert_eq!(
        authors,
        vec![
            r#"desk: call transfer_to_agent {"agent_name":"billing"}"#,
            r#"desk: resp transfer_to_agent {"result":null} | transfer billing"#,
            r#"billing: call transfer_to_agent {"agent_name":"tech"}"#,
            r#"billing: resp transfer_to_agent {"result":null} | transfer tech"#,
            r#"tech: call transfer_to_agent {"agent_name":"desk"}"#,
            r#"tech: resp transfer_to_agent {"result":null} | transfer desk"#,
            "desk: desk answers",
        ]
    );
}

#[test]
fn the_agent_transferred_to_answers_the_next_message() {
    let script = r#"
replies:
  desk:
    - function_call: {name: transfer_to_agent, args: {agent_name: billing}}
  billing:
    - text: "paid"
    - text: "still paid"
"#;
    let out = run_team(team("", ""), script, &["-m", "bill?", "-m", "sure?"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.lines().last().unwrap(), "billing: still paid");
    let invocations: std::collections::BTreeSet<String> = out
        .events
        .iter()
        .map(|e| e["invocationId"].to_string())
        .collect();
    assert_eq!(invocations.len(), 2);
}

#[test]
fn disallow_transfer_to_parent_sends_the_next_message_to_the_root() {
    let script = r#"
replies:
  desk:
    - function_call: {name: transfer_to_agent, args: {agent_name: billing}}
    - text: "desk again"
  billing:
    - text: "paid"
"#;
    let out = run_team(
        team("disallow_transfer_to_parent: true\n", ""),
        script,
        &["-m", "bill?", "-m", "thanks"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.lines().last().unwrap(), "desk: desk again");
}

#[test]
fn disallow_flags_shape_the_offered_targets() {
    let script = r#"
replies:
  desk:
    - function_call: {name: transfer_to_agent, args: {agent_name: billing}}
  billing:
    - text: "paid"
"#;
    let out = run_team(
        team("disallow_transfer_to_peers: true\n", ""),
        script,
        &["-m", "bill?", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = out.requests();
    let enum_of = |agent: &str| {
        let r = requests.iter().find(|r| r["agent"] == agent).unwrap();
        let decls = r["tools"][0]["functionDeclarations"].as_array().unwrap();
        let t = decls
            .iter()
            .find(|d| d["name"] == "transfer_to_agent")
            .unwrap();
        t["parametersJsonSchema"]["properties"]["agent_name"]["enum"].clone()
    };
    assert_eq!(enum_of("desk"), json!(["billing", "tech"]));
    assert_eq!(enum_of("billing"), json!(["desk"]));
    let billing = requests.iter().find(|r| r["agent"] == "billing").unwrap();
    let si = billing["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(si.starts_with("Bills.\n\nYou are an agent. Your internal name is \"billing\". The description about you is \"Bills.\"."), "{si}");
    assert!(
        si.contains("Agent name: desk\nAgent description: Front desk.\n"),
        "{si}"
    );
    assert!(
        si.ends_with("transfer to your parent agent desk.\n"),
        "{si}"
    );
}

#[test]
fn include_contents_none_sees_only_the_current_turn() {
    let root = "agent_class: SequentialAgent\nname: flow\nsub_agents:\n  - config_path: writer.yaml\n  - config_path: critic.yaml\n";
    let script = "replies:\n  writer: [{text: draft v1}, {text: draft v2}]\n  critic: [{text: ok1}, {text: ok2}]\n";
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("writer.yaml", &agent("writer", "")),
            ("critic.yaml", &agent("critic", "include_contents: none\n")),
            ("script.yaml", script),
        ],
        &[
            "-m",
            "first",
            "-m",
            "second",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = out.requests();
    let critic: Vec<_> = requests.iter().filter(|r| r["agent"] == "critic").collect();
    assert_eq!(
        critic[1]["contents"],
        json!([{"parts": [{"text": "For context:"}, {"text": "[writer] said: draft v2"}], "role": "user"}])
    );
    let writer: Vec<_> = requests.iter().filter(|r| r["agent"] == "writer").collect();
    assert_eq!(
        writer[1]["contents"].as_array().unwrap().len(),
        4,
        "default contents keep the whole conversation: {}",
        writer[1]["contents"]
    );
}

#[test]
fn temp_state_lives_for_one_invocation_and_is_never_stored() {
    let root = "agent_class: SequentialAgent\nname: flow\nsub_agents:\n  - config_path: a.yaml\n  - config_path: b.yaml\n";
    let script =
        "replies:\n  a: [{text: scratch}, {text: scratch2}]\n  b: [{text: used}, {text: again}]\n";
    let out = run(
        &[
            ("root_agent.yaml", root),
            (
                "a.yaml",
                &format!(
                    "name: a\n{LLM}instruction: \"prev={{temp:note?}}\"\noutput_key: temp:note\n"
                ),
            ),
            (
                "b.yaml",
                &format!(
                    "name: b\n{LLM}instruction: \"note={{temp:note}} user={{user:lang}} app={{app:tier?}}\"\noutput_key: user:last\n"
                ),
            ),
            ("script.yaml", script),
        ],
        &[
            "-m",
            "one",
            "-m",
            "two",
            "--state",
            "user:lang=en",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            "a: scratch",
            r#"b: used | state {"user:last":"used"}"#,
            "a: scratch2",
            r#"b: again | state {"user:last":"again"}"#,
        ],
        "temp: keys are trimmed from the committed delta"
    );
    let si: Vec<String> = out
        .requests()
        .iter()
        .map(|r| {
            let s = r["systemInstruction"]["parts"][0]["text"].as_str().unwrap();
            s.split("\n\n").next().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        si,
        vec![
            "prev=",
            "note=scratch user=en app=",
            "prev=",
            "note=scratch2 user=en app=",
        ]
    );
}

#[test]
fn a_missing_template_key_ends_the_run_with_an_error_event() {
    let out = run(
        &[
            (
                "root_agent.yaml",
                &format!("name: solo\n{LLM}instruction: \"Use {{nope}}.\"\n"),
            ),
            (
                "script.yaml",
                "replies:\n  solo: [{text: never}, {text: never}]\n",
            ),
        ],
        &["-m", "one", "-m", "two"],
    );
    assert_ne!(out.code, 0);
    assert_eq!(out.lines(), vec!["solo: error MISSING_STATE_KEY"]);
    assert!(
        out.events[0]["errorMessage"]
            .as_str()
            .unwrap()
            .contains("`nope`")
    );
    assert!(out.stderr.contains("nope"), "{}", out.stderr);
}

#[test]
fn verbatim_braces_and_optional_keys_render_like_adk() {
    let out = run(
        &[
            (
                "root_agent.yaml",
                &format!(
                    "name: solo\n{LLM}instruction: 'Reply as {{\"a\": 1}} for {{who?}}{{{{ x }}}}.'\n"
                ),
            ),
            ("script.yaml", "replies:\n  solo: [{text: ok}]\n"),
        ],
        &[
            "-m",
            "one",
            "--state",
            "x=42",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let si = out.requests()[0]["systemInstruction"]["parts"][0]["text"].clone();
    assert!(
        si.as_str()
            .unwrap()
            .starts_with("Reply as {\"a\": 1} for 42."),
        "{si}"
    );
}

#[test]
fn transfer_to_an_unknown_agent_is_an_error_event() {
    let script = "replies:\n  desk:\n    - function_call: {name: transfer_to_agent, args: {agent_name: ghost}}\n";
    let out = run_team(team("", ""), script, &["-m", "x", "-m", "y"]);
    assert_ne!(out.code, 0);
    let lines = out.lines();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[2], "desk: error AGENT_NOT_FOUND");
    let msg = out.events[2]["errorMessage"].as_str().unwrap();
    assert!(msg.contains("ghost") && msg.contains("billing"), "{msg}");
}

#[test]
fn several_calls_in_one_reply_and_unknown_tools() {
    let script = r#"
replies:
  solo:
    - function_calls: [{name: lookup, args: {id: 1}}, {name: exit_loop, args: {}}]
    - text: "recovered"
"#;
    let out = run(
        &[
            (
                "root_agent.yaml",
                &agent("solo", "tools:\n  - name: exit_loop\n"),
            ),
            ("script.yaml", script),
        ],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let calls = &out.events[0]["content"]["parts"];
    assert_eq!(calls.as_array().unwrap().len(), 2);
    let responses = out.events[1]["content"]["parts"].as_array().unwrap();
    assert_eq!(responses.len(), 2, "one merged response event");
    assert_eq!(
        responses[0]["functionResponse"]["id"],
        calls[0]["functionCall"]["id"]
    );
    let err = responses[0]["functionResponse"]["response"]["error"]
        .as_str()
        .unwrap();
    assert!(err.contains("lookup") && err.contains("exit_loop"), "{err}");
    assert_eq!(out.events[1]["actions"]["escalate"], true);
    // exit_loop skips summarization, so the agent stops; the second reply is never used.
    assert_eq!(out.events.len(), 2);
}

#[test]
fn an_unknown_tool_alone_lets_the_model_recover() {
    let script =
        "replies:\n  solo:\n    - function_call: {name: lookup, args: {}}\n    - text: recovered\n";
    let out = run(
        &[
            ("root_agent.yaml", &agent("solo", "")),
            ("script.yaml", script),
        ],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.lines().last().unwrap(), "solo: recovered");
}

#[test]
fn a_model_error_reply_is_a_final_event_and_the_run_goes_on() {
    let script =
        "replies:\n  solo:\n    - error: {code: SAFETY, message: blocked}\n    - text: fine\n";
    let out = run(
        &[
            ("root_agent.yaml", &agent("solo", "output_key: out\n")),
            ("script.yaml", script),
        ],
        &["-m", "one", "-m", "two"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec!["solo: error SAFETY", r#"solo: fine | state {"out":"fine"}"#]
    );
    assert_eq!(out.events[0]["errorMessage"], "blocked");
    assert!(out.events[0].get("content").is_none());
}

#[test]
fn streaming_yields_chunks_then_the_aggregate() {
    let script = "replies:\n  solo:\n    - text: Hello world\n      chunks: [Hello, \" world\"]\n    - function_call: {name: exit_loop, args: {}}\n";
    let out = run(
        &[
            (
                "root_agent.yaml",
                &agent("solo", "tools:\n  - name: exit_loop\n"),
            ),
            ("script.yaml", script),
        ],
        &["-m", "a", "-m", "b", "--stream"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            "solo: Hello | (partial)",
            "solo:  world | (partial)",
            "solo: Hello world",
            "solo: call exit_loop {} | (partial)",
            "solo: call exit_loop {}",
            r#"solo: resp exit_loop {"result":null} | escalate"#,
        ]
    );
    assert_eq!(out.events[2]["partial"], false);
    // ADK streams a call as a partial chunk, then the aggregate; only the aggregate runs.
    let id = |i: usize| out.events[i]["content"]["parts"][0]["functionCall"]["id"].clone();
    assert_eq!(id(3), id(4));
    assert_eq!(
        id(4),
        out.events[5]["content"]["parts"][0]["functionResponse"]["id"]
    );
}

/// As ADK 1.39.1's progressive streaming aggregator: a reply without `chunks` is a stream
/// of one chunk (one partial event, then the final), and a `parts` reply's chunk carries
/// every part, text and call, in order, in the partial and in the final; only the final's
/// call runs.
#[test]
fn under_stream_a_reply_without_chunks_and_a_parts_reply_are_one_chunk_each() {
    let script = "replies:\n  solo:\n    - text: Hello\n    - parts:\n        - text: Done.\n        - function_call: {name: exit_loop, args: {}}\n";
    let out = run(
        &[
            (
                "root_agent.yaml",
                &agent("solo", "tools:\n  - name: exit_loop\n"),
            ),
            ("script.yaml", script),
        ],
        &["-m", "a", "-m", "b", "--stream"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            "solo: Hello | (partial)",
            "solo: Hello",
            "solo: Done. | call exit_loop {} | (partial)",
            "solo: Done. | call exit_loop {}",
            r#"solo: resp exit_loop {"result":null} | escalate"#,
        ]
    );
    let parts = |i: usize| out.events[i]["content"]["parts"].clone();
    assert_eq!(parts(2), parts(3), "the final aggregates the one chunk");
    assert_eq!(
        parts(3)[1]["functionCall"]["id"],
        out.events[4]["content"]["parts"][0]["functionResponse"]["id"]
    );
}

#[test]
fn chunks_are_ignored_without_stream() {
    let script = "replies:\n  solo:\n    - text: Hello world\n      chunks: [Hello, \" world\"]\n";
    let out = run(
        &[
            ("root_agent.yaml", &agent("solo", "")),
            ("script.yaml", script),
        ],
        &["-m", "a"],
    );
    assert_eq!(out.lines(), vec!["solo: Hello world"]);
    assert!(out.events[0].get("partial").is_none());
}

#[test]
fn an_exhausted_script_ends_the_run_and_later_messages_are_not_sent() {
    let out = run(
        &[
            ("root_agent.yaml", &agent("solo", "")),
            ("script.yaml", "replies:\n  solo: [{text: only}]\n"),
        ],
        &["-m", "one", "-m", "two", "-m", "three"],
    );
    assert_ne!(out.code, 0);
    assert_eq!(
        out.lines(),
        vec!["solo: only", "solo: error SCRIPT_EXHAUSTED"]
    );
    assert_ne!(
        out.events[0]["invocationId"], out.events[1]["invocationId"],
        "the error comes on the second turn; the third is never sent"
    );
}

#[test]
fn task_completed_ends_a_sequential_step() {
    let root = "agent_class: SequentialAgent\nname: steps\ntask_completed: true\nsub_agents:\n  - config_path: a.yaml\n  - config_path: b.yaml\n";
    let script = "replies:\n  a:\n    - function_call: {name: task_completed, args: {}}\n  b: [{text: b done}]\n";
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("a.yaml", &agent("a", "")),
            ("b.yaml", &agent("b", "")),
            ("script.yaml", script),
        ],
        &["-m", "go", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            "a: call task_completed {}",
            r#"a: resp task_completed {"result":"Task completion signaled."}"#,
            "b: b done",
        ]
    );
    let si = out.requests()[0]["systemInstruction"]["parts"][0]["text"].clone();
    assert!(
        si.as_str()
            .unwrap()
            .contains("call the task_completed function")
    );
}

#[test]
fn output_key_feeds_the_next_agents_instruction() {
    let root = "agent_class: SequentialAgent\nname: p\nsub_agents:\n  - config_path: a.yaml\n  - config_path: b.yaml\n";
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("a.yaml", &agent("a", "output_key: draft\n")),
            (
                "b.yaml",
                &format!("name: b\n{LLM}instruction: \"Review {{draft}}\"\n"),
            ),
            (
                "script.yaml",
                "replies:\n  a: [{text: v1}]\n  b: [{text: ok}]\n",
            ),
        ],
        &["-m", "go", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let req = &out.requests()[1];
    assert!(
        req["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Review v1\n\n")
    );
}

#[test]
fn model_inherits_from_the_nearest_llm_ancestor() {
    let out = run(
        &[
            (
                "root_agent.yaml",
                "name: top\nmodel: my-model\ninstruction: x\nsub_agents:\n  - name: child\n    instruction: y\n",
            ),
            (
                "script.yaml",
                "replies:\n  top: [{function_call: {name: transfer_to_agent, args: {agent_name: child}}}]\n  child: [{text: hi}]\n",
            ),
        ],
        &["-m", "go", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let models: Vec<_> = out.requests().iter().map(|r| r["model"].clone()).collect();
    assert_eq!(models, vec![json!("my-model"), json!("my-model")]);
}

#[test]
fn gemini_built_in_tools_are_sent_as_provider_tools() {
    let out = run(
        &[
            (
                "root_agent.yaml",
                &agent(
                    "solo",
                    "tools:\n  - name: google_search\n  - name: exit_loop\n",
                ),
            ),
            ("script.yaml", "replies:\n  solo: [{text: found it}]\n"),
        ],
        &["-m", "search", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let tools = &out.requests()[0]["tools"];
    assert_eq!(tools[0]["functionDeclarations"][0]["name"], "exit_loop");
    assert_eq!(
        tools[0]["functionDeclarations"].as_array().unwrap().len(),
        1
    );
    assert_eq!(tools[1], json!({"googleSearch": {}}));
}

#[test]
fn only_a_function_calls_args_read_yes_as_a_boolean() {
    // PyYAML's `yes` is a boolean inside a call's `args` only: an agent named `args`
    // still says the word, and the call after it gets the boolean.
    let out = run(
        &[
            (
                "root_agent.yaml",
                &agent("args", "tools:\n  - name: exit_loop\n"),
            ),
            (
                "script.yaml",
                "replies:\n  args:\n    - text: yes\n    - function_call: {name: exit_loop, args: {really: yes}}\n",
            ),
        ],
        &["-m", "one", "-m", "two"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines = out.lines();
    assert_eq!(lines[0], "args: yes", "{lines:?}");
    assert_eq!(
        lines[1], r#"args: call exit_loop {"really":true}"#,
        "{lines:?}"
    );
}

#[test]
fn a_message_may_be_a_negative_number_but_never_swallows_a_flag() {
    let files = [
        ("root_agent.yaml", agent("solo", "")),
        (
            "script.yaml",
            "replies:\n  solo: [{text: a}, {text: b}]\n".into(),
        ),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(n, t)| (*n, t.as_str())).collect();
    // `-1` is a message; other text starting with `-` is written `--message=-TEXT`.
    let out = run(
        &files,
        &[
            "-m",
            "-1",
            "--message=-hi",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let users: Vec<_> = out.requests()[1]["contents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["role"] == "user")
        .map(|c| c["parts"][0]["text"].clone())
        .collect();
    assert_eq!(users, vec![json!("-1"), json!("-hi")]);
    // `-m -q` and `-m --model x` send no message "-q" or "--model": the missing message
    // is an error.
    for args in [&["-m", "-q"][..], &["-m", "--model", "x"]] {
        let out = run(&files, args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.events.is_empty(), "no turn ran");
        assert!(
            out.stderr
                .contains("a value is required for '--message <TEXT>' but none was supplied"),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("--message=-TEXT"), "{}", out.stderr);
    }
}
