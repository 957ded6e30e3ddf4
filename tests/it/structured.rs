//! `output_schema` written inline and `static_instruction`, through `run` with scripted
//! replies: what the request carries, what state stores, what an invalid reply does.

use crate::common;

use common::run;
use serde_json::json;

/// A classifier with a schema, then an agent that reads the stored object: its
/// instruction renders it as Python's `str()`, a callback reads its fields.
const PIPELINE: &str = r#"
agent_class: SequentialAgent
name: desk
sub_agents:
  - name: classify
    model: gemini-2.5-flash
    instruction: Classify the message.
    output_key: route
    output_schema:
      type: object
      title: Route
      properties:
        category: {type: string, enum: [orders, tech]}
        urgent: {type: boolean}
        note: {type: [string, "null"]}
      required: [category, urgent]
  - name: answer
    model: gemini-2.5-flash
    instruction: "Route: {route}"
    before_model_callbacks: [{name: orders_desk}]
define:
  callbacks:
    orders_desk:
      when: "state.route.category == 'orders' and state.route.urgent"
      reply: "Urgent {{ state.route.category }} question: passed to the orders desk."
"#;

#[test]
fn a_structured_reply_is_stored_as_json_that_templates_and_callbacks_read() {
    let script = r#"
replies:
  classify:
    - text: '{"category": "orders", "urgent": true, "note": null}'
  answer:
    - text: "never: the callback answers"
"#;
    let out = run(
        &[("root_agent.yaml", PIPELINE), ("script.yaml", script)],
        &[
            "-m",
            "where is order 42?",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            r#"classify: {"category": "orders", "urgent": true, "note": null} | state {"route":{"category":"orders","urgent":true,"note":null}}"#,
            "answer: Urgent orders question: passed to the orders desk.",
        ]
    );
    let requests = out.requests();
    assert_eq!(
        requests[0]["generationConfig"],
        json!({
            "responseMimeType": "application/json",
            "responseSchema": {
                "type": "OBJECT",
                "title": "Route",
                "propertyOrdering": ["category", "urgent", "note"],
                "properties": {
                    "category": {"type": "STRING", "enum": ["orders", "tech"]},
                    "urgent": {"type": "BOOLEAN"},
                    "note": {"type": "STRING", "nullable": true}
                },
                "required": ["category", "urgent"]
            }
        })
    );
    // The callback answered: the model of `answer` was never asked.
    assert_eq!(requests.len(), 1);

    // Without the callback's condition, the instruction shows the object as Python does.
    let script = r#"
replies:
  classify:
    - text: '{"category": "tech", "urgent": false}'
  answer:
    - text: "ok"
"#;
    let out = run(
        &[("root_agent.yaml", PIPELINE), ("script.yaml", script)],
        &["-m", "it crashes", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let si = out.requests()[1]["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        si.starts_with("Route: {'category': 'tech', 'urgent': False}\n\n"),
        "{si}"
    );
}

#[test]
fn a_reply_that_is_not_json_or_breaks_the_schema_is_an_error_event() {
    for (reply, code, says) in [
        (
            "Sure! It is about orders.",
            "OUTPUT_NOT_JSON",
            "the reply is not JSON (expected value at line 1 column 1): `Sure! It is about orders.`",
        ),
        (
            r#"{"category": "shoes", "urgent": true}"#,
            "OUTPUT_SCHEMA_MISMATCH",
            r#"the reply does not match output_schema: at /category: "shoes" is not one of"#,
        ),
        (
            r#"{"category": "orders"}"#,
            "OUTPUT_SCHEMA_MISMATCH",
            r#""urgent" is a required property"#,
        ),
    ] {
        let script = format!(
            "replies:\n  classify:\n    - text: {}\n  answer:\n    - text: never\n",
            serde_json::to_string(reply).unwrap()
        );
        let out = run(
            &[("root_agent.yaml", PIPELINE), ("script.yaml", &script)],
            &["-m", "hi"],
        );
        assert_eq!(out.code, 1, "{reply}: {}", out.stderr);
        assert_eq!(out.events.len(), 1, "{reply}: {:?}", out.lines());
        let e = &out.events[0];
        assert_eq!(e["author"], "classify");
        assert_eq!(e["errorCode"], code, "{reply}");
        let message = e["errorMessage"].as_str().unwrap();
        assert!(message.starts_with("agent `classify`: "), "{message}");
        assert!(message.contains(says), "{reply}: {message}");
        assert_eq!(e["actions"]["stateDelta"], json!({}));
    }
}

#[test]
fn with_tools_a_gemini_like_model_answers_through_set_model_response() {
    let root = r#"
name: billing
model: gemini-2.5-flash
instruction: Answer billing questions.
output_key: answer
output_schema:
  type: object
  properties:
    status: {type: string}
    total: {type: number}
  required: [status, total]
tools: [{name: lookup_order}]
define:
  tools:
    lookup_order:
      description: Look an order up.
      parameters: {type: object, properties: {id: {type: string}}, required: [id]}
      lookup: {key: "{{ id }}", table: {"42": {status: paid, total: 19.9}}}
"#;
    let script = r#"
replies:
  billing:
    - function_call: {name: lookup_order, args: {id: "42"}}
    - function_call: {name: set_model_response, args: {status: paid, total: 19.9}}
"#;
    let out = run(
        &[("root_agent.yaml", root), ("script.yaml", script)],
        &["-m", "order 42?", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            r#"billing: call lookup_order {"id":"42"}"#,
            r#"billing: resp lookup_order {"status":"paid","total":19.9}"#,
            r#"billing: call set_model_response {"status":"paid","total":19.9}"#,
            r#"billing: resp set_model_response {"status":"paid","total":19.9}"#,
            r#"billing: {"status": "paid", "total": 19.9} | state {"answer":{"status":"paid","total":19.9}}"#,
        ]
    );
    let first = &out.requests()[0];
    // No response schema beside tools on Gemini: the tool carries it.
    assert!(first.get("generationConfig").is_none(), "{first}");
    let names: Vec<&str> = first["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["set_model_response", "lookup_order"]);
    assert_eq!(
        first["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"],
        json!({"type": "object", "properties": {"status": {"type": "string"},
               "total": {"type": "number"}}, "required": ["status", "total"]})
    );
    let si = first["systemInstruction"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(
        si,
        "Answer billing questions.\n\nYou are an agent. Your internal name is \"billing\".\n\nIMPORTANT: You have access to other tools, but you must provide your final response using the set_model_response tool with the required structured format. After using any other tools needed to complete the task, always call set_model_response with your final answer in the specified schema format."
    );
}

#[test]
fn a_static_instruction_leads_the_system_instruction_and_moves_the_instruction_to_contents() {
    let root = r#"
name: helper
model: gemini-2.5-flash
static_instruction:
  parts:
    - text: "You help customers of the Example shop."
    - text: "Never share {secrets}."
instruction: "The customer is {name}."
"#;
    let script = "replies:\n  helper:\n    - text: Hello Ann.\n    - text: Bye.\n";
    let out = run(
        &[("root_agent.yaml", root), ("script.yaml", script)],
        &[
            "-m",
            "hi",
            "-m",
            "bye",
            "--state",
            "name=Ann",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = out.requests();
    for r in &requests {
        // Sent as written (no templating), then the identity: the same on every call.
        assert_eq!(
            r["systemInstruction"]["parts"][0]["text"],
            "You help customers of the Example shop.\n\nNever share {secrets}.\n\nYou are an agent. Your internal name is \"helper\"."
        );
    }
    assert_eq!(
        requests[0]["contents"],
        json!([
            {"parts": [{"text": "The customer is Ann."}], "role": "user"},
            {"parts": [{"text": "hi"}], "role": "user"}
        ])
    );
    // Before the closing run of user messages: after the model's reply.
    assert_eq!(
        requests[1]["contents"],
        json!([
            {"parts": [{"text": "hi"}], "role": "user"},
            {"parts": [{"text": "Hello Ann."}], "role": "model"},
            {"parts": [{"text": "The customer is Ann."}], "role": "user"},
            {"parts": [{"text": "bye"}], "role": "user"}
        ])
    );
}

#[test]
fn an_agent_tool_whose_agent_has_a_schema_answers_with_the_parsed_json() {
    let root = r#"
name: desk
model: gemini-2.5-flash
instruction: Ask the checker.
tools:
  - name: AgentTool
    args: {agent: {config_path: checker.yaml}}
"#;
    let checker = r#"
name: checker
model: gemini-2.5-flash
instruction: Check.
output_schema:
  type: object
  properties: {verdict: {type: string, enum: [ok, bad]}}
  required: [verdict]
"#;
    let script = r#"
replies:
  desk:
    - function_call: {name: checker, args: {request: "2+2=4?"}}
    - text: "It checks out."
  checker:
    - text: '{"verdict": "ok"}'
"#;
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("checker.yaml", checker),
            ("script.yaml", script),
        ],
        &["-m", "check"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            r#"desk: call checker {"request":"2+2=4?"}"#,
            r#"desk: resp checker {"verdict":"ok"}"#,
            "desk: It checks out.",
        ]
    );
}

/// `input_schema` written inline (ADK needs a pydantic class): the AgentTool takes the
/// schema's properties as its arguments; a call's arguments are checked against it and
/// reach the agent as pydantic's `model_dump_json(exclude_none=True)` writes them (the
/// schema's order, defaults filled in, nulls and unknown keys dropped); arguments that
/// break it come back to the caller as the tool's error, and the agent never runs.
#[test]
fn an_agent_tool_takes_its_agents_input_schema_as_parameters() {
    let root = r#"
name: desk
model: gemini-2.5-flash
instruction: Ask for the forecast.
tools:
  - name: AgentTool
    args: {agent: {config_path: forecaster.yaml}}
"#;
    let forecaster = r#"
name: forecaster
model: gemini-2.5-flash
description: Forecasts the weather.
instruction: Forecast.
input_schema:
  type: object
  properties:
    city: {type: string}
    days: {type: [integer, "null"]}
    units: {type: string, enum: [metric, imperial], default: metric}
  required: [city]
"#;
    let script = r#"
replies:
  desk:
    - function_call: {name: forecaster, args: {days: null, extra: 1, city: Paris}}
    - function_call: {name: forecaster, args: {days: 3}}
    - text: "Sunny in Paris."
  forecaster:
    - text: "Sunny."
"#;
    let out = run(
        &[
            ("root_agent.yaml", root),
            ("forecaster.yaml", forecaster),
            ("script.yaml", script),
        ],
        &["-m", "weather?", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = out.requests();
    let declaration = &requests[0]["tools"][0]["functionDeclarations"][0];
    assert_eq!(declaration["name"], "forecaster");
    assert_eq!(declaration["description"], "Forecasts the weather.");
    let params = serde_json::to_string(declaration).unwrap();
    assert!(
        params.contains("city") && params.contains("units") && !params.contains("request"),
        "{declaration:#}"
    );
    // The forecaster's request: the checked arguments as JSON.
    assert_eq!(
        requests[1]["contents"][0],
        json!({"parts": [{"text": r#"{"city":"Paris","units":"metric"}"#}], "role": "user"})
    );
    let lines = out.lines();
    assert_eq!(
        lines[1], r#"desk: resp forecaster {"result":"Sunny."}"#,
        "{lines:#?}"
    );
    // The second call misses `city`: an error for the caller, no run of the forecaster.
    assert!(
        lines[3].starts_with("desk: resp forecaster {\"error\":")
            && lines[3].contains("input_schema")
            && lines[3].contains("city"),
        "{lines:#?}"
    );
    assert_eq!(requests.len(), 4, "desk, forecaster, desk, desk");
}
