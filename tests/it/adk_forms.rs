//! ADK's remaining built-in tools and spellings, through `run` with scripted replies:
//! `load_artifacts`, `get_user_choice`, module-qualified class and tool names.

use crate::common;

use common::run;
use serde_json::{Value, json};

#[test]
fn load_artifacts_lists_the_artifacts_and_loads_the_requested_ones_into_that_request_only() {
    let root = r#"
name: reader
model: gemini-2.5-flash
instruction: Answer from the files.
tools: [{name: save_note}, {name: google.adk.tools.load_artifacts}]
define:
  tools:
    save_note:
      description: Save a note.
      parameters: {type: object, properties: {text: {type: string}}, required: [text]}
      save_artifact: {name: notes.txt, content: "{{ text }}"}
"#;
    let script = r#"
replies:
  reader:
    - function_call: {name: save_note, args: {text: "The door code is 4711."}}
    - function_call: {name: load_artifacts, args: {artifact_names: [notes.txt, missing.txt]}}
    - text: "The code is 4711."
    - text: "Still 4711."
"#;
    let out = run(
        &[("root_agent.yaml", root), ("script.yaml", script)],
        &[
            "-m",
            "remember 4711",
            "-m",
            "and?",
            "--artifacts",
            "memory",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines()[3],
        r#"reader: resp load_artifacts {"artifact_names":["notes.txt","missing.txt"],"status":"artifact contents temporarily inserted and removed. to access these artifacts, call load_artifacts tool again."}"#
    );
    let requests = out.requests();
    let si = |r: &Value| {
        r["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // No artifact yet: nothing added.
    assert!(
        !si(&requests[0]).contains("artifacts"),
        "{}",
        si(&requests[0])
    );
    let listed = "\n\nYou have a list of artifacts:\n  [\"notes.txt\"]\n\n  When the user asks questions about any of the artifacts, you should call the\n  `load_artifacts` function to load the artifact.";
    for r in &requests[1..] {
        assert!(si(r).contains(listed), "{}", si(r));
    }
    // After the tool's response, the artifact follows it in that request.
    let contents = requests[2]["contents"].as_array().unwrap();
    assert_eq!(
        contents.last().unwrap(),
        &json!({"parts": [{"text": "Artifact notes.txt is:"}, {"text": "The door code is 4711."}],
                "role": "user"})
    );
    // Never stored: the next turn's request does not carry it.
    let next = requests[3]["contents"].to_string();
    assert!(!next.contains("Artifact notes.txt is:"), "{next}");
    assert!(
        out.events
            .iter()
            .all(|e| !e.to_string().contains("Artifact notes.txt is:"))
    );
}

#[test]
fn get_user_choice_waits_for_the_client_and_its_answer_resumes_the_agent() {
    let root = r#"
name: shop
model: gemini-2.5-flash
instruction: Offer a choice.
tools: [{name: google.adk.tools.get_user_choice_tool.get_user_choice_tool}]
"#;
    // One process per turn, each with the reply of its own turn.
    let first = "replies:\n  shop:\n    - function_call: {name: get_user_choice, args: {options: [red, blue]}}\n";
    let second = "replies:\n  shop:\n    - text: Blue it is.\n";
    let dir = common::write_files(&[
        ("root_agent.yaml", root),
        ("first.yaml", first),
        ("second.yaml", second),
    ]);
    let turn = |script: &str, args: &[&str]| {
        let out = common::bin()
            .current_dir(dir.path())
            .args([
                "run",
                "root_agent.yaml",
                "--script",
                script,
                "--json",
                "--db",
                "sqlite:sessions.db",
                "--session",
                "s1",
                "--dump-requests",
                "requests.jsonl",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    let first = turn("first.yaml", &["-m", "which colour?"]);
    assert_eq!(first.len(), 1, "{first:?}");
    let call_id = first[0]["content"]["parts"][0]["functionCall"]["id"].clone();
    assert_eq!(first[0]["longRunningToolIds"], json!([call_id]));
    let declaration = {
        let text = std::fs::read_to_string(dir.path().join("requests.jsonl")).unwrap();
        let r: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        r["tools"][0]["functionDeclarations"][0].clone()
    };
    assert_eq!(
        declaration,
        json!({"name": "get_user_choice",
               "description": "Provides the options to the user and asks them to choose one.\n\nNOTE: This is a long-running operation. Do not call this tool again if it has already returned some intermediate or pending status.",
               "parametersJsonSchema": {"type": "object",
                   "properties": {"options": {"type": "array", "items": {"type": "string"}}},
                   "required": ["options"]}})
    );
    let second = turn(
        "second.yaml",
        &["--respond", r#"get_user_choice={"choice": "blue"}"#],
    );
    let last = second.last().unwrap();
    assert_eq!(last["author"], "shop");
    assert_eq!(last["content"]["parts"][0]["text"], "Blue it is.");
}

#[test]
fn module_qualified_class_and_tool_names_resolve_as_adk_resolves_them() {
    let root = r#"
agent_class: google.adk.agents.sequential_agent.SequentialAgent
name: pipeline
sub_agents:
  - agent_class: google.adk.agents.loop_agent.LoopAgent
    name: refine
    max_iterations: 3
    sub_agents:
      - agent_class: google.adk.agents.llm_agent.LlmAgent
        name: critic
        model: gemini-2.5-flash
        instruction: Check.
        tools:
          - name: google.adk.tools.exit_loop_tool.exit_loop
          - name: google.adk.tools.agent_tool.AgentTool
            args:
              agent:
                config_path: helper.yaml
  - agent_class: google.adk.agents.parallel_agent.ParallelAgent
    name: fan
    sub_agents:
      - agent_class: google.adk.agents.llm_agent.Agent
        name: closer
        model: gemini-2.5-flash
        instruction: Close.
"#;
    let helper = "agent_class: google.adk.Agent\nname: helper\nmodel: gemini-2.5-flash\ninstruction: Help.\n";
    let script = r#"
replies:
  critic:
    - function_call: {name: helper, args: {request: "is it fine?"}}
    - function_call: {name: exit_loop, args: {}}
  helper:
    - text: "fine"
  closer:
    - text: "done"
"#;
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("helper.yaml", helper),
            ("script.yaml", script),
        ],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            r#"critic: call helper {"request":"is it fine?"}"#,
            r#"critic: resp helper {"result":"fine"}"#,
            "critic: call exit_loop {}",
            r#"critic: resp exit_loop {"result":null} | escalate"#,
            "closer [fan.closer]: done",
        ]
    );
}

#[test]
fn callbacks_read_the_message_that_started_the_invocation() {
    let root = r#"
name: desk
model: gemini-2.5-flash
instruction: "Help with: {temp:question?}"
before_agent_callbacks: [{name: remember}]
before_model_callbacks: [{name: refunds}]
define:
  callbacks:
    remember:
      set_state: {"temp:question": "{{ message }}"}
    refunds:
      when: "'refund' in message"
      reply: "Refunds are handled by email."
"#;
    let script = "replies:\n  desk:\n    - text: ok\n";
    let out = run(
        &[("root_agent.yaml", root), ("script.yaml", script)],
        &[
            "-m",
            "I want a refund",
            "-m",
            "hello",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Each turn: the before_agent callback's state event (temp: keys are not stored), then
    // the reply.
    assert_eq!(
        out.lines(),
        vec![
            "desk: ",
            "desk: Refunds are handled by email.",
            "desk: ",
            "desk: ok"
        ]
    );
    let si = out.requests()[0]["systemInstruction"]["parts"][0]["text"].clone();
    assert!(
        si.as_str().unwrap().starts_with("Help with: hello\n"),
        "{si}"
    );
}
