//! Declarative callbacks with ADK's order and short-circuit rules.

use crate::common;

use common::run;
use serde_json::json;

#[test]
fn a_before_model_callback_answers_instead_of_the_model() {
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
    // The model has no replies: it must not be called while the shop is closed.
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("script.yaml", "replies:\n  desk: [{text: open answer}]\n"),
        ],
        &["-m", "hi", "--state", "closed=yes", "--state", "name=Ann"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            r#"desk: We are closed today, Ann. | state {"notified":"yes","answer":"We are closed today, Ann."}"#
        ]
    );
    // When the condition does not hold, the model answers.
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("script.yaml", "replies:\n  desk: [{text: open answer}]\n"),
        ],
        &["-m", "hi", "--state", "closed=no", "--state", "name=Ann"],
    );
    assert_eq!(
        out.lines(),
        vec![r#"desk: open answer | state {"answer":"open answer"}"#]
    );
}

#[test]
fn a_before_tool_callback_blocks_a_call_and_the_model_recovers() {
    let root = r#"
name: desk
model: m
instruction: Help.
tools: [{name: refund}]
before_tool_callbacks: [{name: audit}, {name: cap}]
define:
  tools:
    refund:
      description: Refund an order.
      parameters: {type: object, properties: {amount: {type: number}}, required: [amount]}
      set_state: {refunded: "{{ amount }}"}
  callbacks:
    audit:
      set_state: {last_tool: "{{ tool }}"}
    cap:
      when: "tool == 'refund' and args.amount > 100"
      block: "Refunds over 100 need a human; asked for {{ args.amount }}."
"#;
    let script = r#"
replies:
  desk:
    - function_call: {name: refund, args: {amount: 250}}
    - function_call: {name: refund, args: {amount: 20}}
    - text: "Refunded 20."
"#;
    let out = run(
        &[("root_agent.yaml", root), ("script.yaml", script)],
        &["-m", "refund"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines = out.lines();
    assert_eq!(
        lines[1],
        r#"desk: resp refund {"error":"Refunds over 100 need a human; asked for 250."} | state {"last_tool":"refund"}"#
    );
    assert_eq!(
        lines[3],
        r#"desk: resp refund {"written":{"refunded":"20"}} | state {"last_tool":"refund","refunded":"20"}"#
    );
    assert_eq!(lines[4], "desk: Refunded 20.");
}

#[test]
fn agent_callbacks_set_state_read_by_the_next_agent_and_can_skip_an_agent() {
    let root = r#"
agent_class: SequentialAgent
name: flow
sub_agents:
  - name: first
    model: m
    instruction: One.
    after_agent_callbacks: [{name: stamp}]
  - name: second
    model: m
    instruction: "Stamp is {stamp}."
    before_agent_callbacks: [{name: skip_when_vip}]
  - name: third
    model: m
    instruction: "Stamp is {stamp}."
define:
  callbacks:
    stamp:
      set_state: {stamp: "approved by {{ agent }}"}
    skip_when_vip:
      when: "state.vip"
      reply: "VIPs skip this step."
"#;
    let script =
        "replies:\n  first: [{text: one}]\n  second: [{text: two}]\n  third: [{text: three}]\n";
    let out = run(
        &[("root_agent.yaml", root), ("script.yaml", script)],
        &[
            "-m",
            "go",
            "--state",
            "vip=true",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            "first: one",
            r#"first: state {"stamp":"approved by first"}"#,
            "second: VIPs skip this step.",
            "third: three",
        ]
    );
    let third = out
        .requests()
        .into_iter()
        .find(|r| r["agent"] == "third")
        .unwrap();
    assert!(
        third["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Stamp is approved by first.")
    );
}

#[test]
fn after_model_redacts_and_after_tool_rewrites_results() {
    let root = r#"
name: desk
model: m
instruction: Help.
tools: [{name: account}]
after_model_callbacks: [{name: cards}]
after_tool_callbacks: [{name: hide_pin}]
define:
  tools:
    account:
      description: Account data.
      lookup: {key: "me", table: {me: {card: "4111 1111 1111 1111", pin: "1234"}}}
  callbacks:
    cards:
      redact: [{pattern: '\b\d{4} \d{4} \d{4} \d{4}\b', replacement: "[card]"}]
    hide_pin:
      when: "result.pin is defined"
      result: {card: "{{ result.card }}", pin: "****"}
"#;
    let script = r#"
replies:
  desk:
    - function_call: {name: account, args: {}}
    - text: "Your card is 4111 1111 1111 1111."
"#;
    let out = run(
        &[("root_agent.yaml", root), ("script.yaml", script)],
        &["-m", "card?"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.events[1]["content"]["parts"][0]["functionResponse"]["response"],
        json!({"card": "4111 1111 1111 1111", "pin": "****"})
    );
    assert_eq!(out.lines().last().unwrap(), "desk: Your card is [card].");
}

#[test]
fn callbacks_are_checked_before_running() {
    let root = r#"
name: desk
model: m
instruction: Help.
before_tool_callbacks: [{name: greet}, {name: ghost}, {name: my.module.cb}]
define:
  callbacks:
    greet:
      when: "state.x =="
      reply: "hi"
"#;
    let dir = common::write_files(&[("root_agent.yaml", root)]);
    let out = common::bin()
        .current_dir(dir.path())
        .args(["validate", "root_agent.yaml"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text.contains("root_agent.yaml:5:32: error: callback `greet`: `reply` cannot be used in before_tool_callbacks"), "{text}");
    assert!(
        text.contains("root_agent.yaml:5:47: error: unknown callback `ghost`"),
        "{text}"
    );
    assert!(
        text.contains("root_agent.yaml:5:62: error: `my.module.cb` references Python code"),
        "{text}"
    );
    assert!(
        text.contains("root_agent.yaml:9:13: error: `when` is not a valid expression"),
        "{text}"
    );
}
