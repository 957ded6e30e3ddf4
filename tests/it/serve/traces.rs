//! Spans: `/debug/trace/session/{id}` and `/debug/trace/{event_id}` after a scripted run
//! with a transfer and a tool call (ADK 1.39.1's tree, names and attribute keys), and an
//! AgentTool's run inside its caller's trace. OTLP export: `otlp.rs`.

use super::{Serve, run_body};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// A coordinator that hands over to a helper, which calls a tool, then answers.
pub(super) const SHOP: &str = r#"
name: coordinator
model: m
description: Routes questions.
instruction: Hand every question to helper.
sub_agents:
  - name: helper
    model: m
    description: Answers with tools.
    instruction: Answer.
    generate_content_config: {max_output_tokens: 100, top_p: 0.5}
    tools: [{name: remember}]
define:
  tools:
    remember:
      description: Remember an item.
      parameters: {type: object, properties: {item: {type: string}}, required: [item]}
      set_state: {last: "{{ item }}"}
"#;

pub(super) const SHOP_SCRIPT: &str = r#"
replies:
  coordinator:
    - function_call: {name: transfer_to_agent, args: {agent_name: helper}}
    - function_call: {name: transfer_to_agent, args: {agent_name: helper}}
  helper:
    - function_call: {name: remember, args: {item: apples}}
    - text: "Noted: apples."
    - text: "Again."
"#;

/// One span as `/debug/trace/session/{id}` answers it (ids are JSON integers up to
/// 2^128, so they are read as such, not through `Value`).
#[derive(Debug, Deserialize)]
pub(super) struct DebugSpan {
    pub(super) name: String,
    pub(super) span_id: u64,
    trace_id: u128,
    start_time: u64,
    end_time: u64,
    attributes: Map<String, Value>,
    parent_span_id: Option<u64>,
}

impl DebugSpan {
    fn attr(&self, key: &str) -> &str {
        self.attributes[key]
            .as_str()
            .unwrap_or_else(|| panic!("{}: no string {key}: {:?}", self.name, self.attributes))
    }
}

pub(super) fn files() -> Vec<(&'static str, &'static str)> {
    vec![("shop.yaml", SHOP), ("script.yaml", SHOP_SCRIPT)]
}

/// `name <- parent name` for every span, in the order given.
fn tree(spans: &[DebugSpan]) -> Vec<String> {
    let names: HashMap<u64, &str> = spans.iter().map(|s| (s.span_id, s.name.as_str())).collect();
    spans
        .iter()
        .map(|s| match s.parent_span_id {
            Some(p) => format!("{} <- {}", s.name, names.get(&p).copied().unwrap_or("?")),
            None => s.name.clone(),
        })
        .collect()
}

pub(super) async fn session_spans(s: &Serve, session: &str) -> Vec<DebugSpan> {
    let r = s
        .http
        .get(s.url(&format!("/debug/trace/session/{session}")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let text = r.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn a_run_with_a_transfer_and_a_tool_call_has_adks_span_tree() {
    let s = Serve::start(
        &files(),
        &["shop.yaml", "--script", "script.yaml", "--db", "memory"],
    );
    let sid = s.session("shop", Some("s1")).await;
    let r = s
        .http
        .post(s.url("/run"))
        .json(&run_body("shop", &sid, "I need apples", false))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events: Vec<Value> = r.json().await.unwrap();
    let spans = session_spans(&s, &sid).await;

    // Children end before their parents: the list is in the order spans ended.
    assert_eq!(
        tree(&spans),
        [
            "execute_tool transfer_to_agent <- generate_content m",
            "execute_tool remember <- generate_content m",
            "generate_content m <- call_llm",
            "call_llm <- invoke_agent helper",
            "generate_content m <- call_llm",
            "call_llm <- invoke_agent helper",
            "invoke_agent helper <- generate_content m",
            "generate_content m <- call_llm",
            "call_llm <- invoke_agent coordinator",
            "invoke_agent coordinator <- invocation",
            "invocation",
        ]
    );
    let trace = spans[0].trace_id;
    assert!(
        spans.iter().all(|x| x.trace_id == trace),
        "one trace per invocation"
    );
    assert!(trace > u128::from(u64::MAX) || trace > 0);
    let by_id: HashMap<u64, &DebugSpan> = spans.iter().map(|x| (x.span_id, x)).collect();
    for span in &spans {
        assert!(span.start_time <= span.end_time, "{span:?}");
        if let Some(p) = span.parent_span_id {
            let parent = by_id[&p];
            assert!(
                parent.start_time <= span.start_time && span.end_time <= parent.end_time,
                "{} lies outside {}",
                span.name,
                parent.name
            );
        }
    }
    assert!(spans.windows(2).all(|w| w[0].end_time <= w[1].end_time));

    let root = spans.last().unwrap();
    assert!(
        root.attributes.is_empty(),
        "ADK's invocation span has no attributes"
    );

    let invocation = events[0]["invocationId"].as_str().unwrap();
    let event_ids: Vec<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    let event = |id: &str| {
        events
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("{id} is no event of the run"))
    };
    for span in spans
        .iter()
        .filter(|x| x.name.starts_with("execute_tool") || x.name == "call_llm")
    {
        assert!(
            event_ids.contains(&span.attr("gcp.vertex.agent.event_id")),
            "{span:?}"
        );
    }

    // invoke_agent: trace_agent_invocation.
    let coordinator = &spans[9];
    assert_eq!(
        Value::Object(coordinator.attributes.clone()),
        json!({
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.description": "Routes questions.",
            "gen_ai.agent.name": "coordinator",
            "gen_ai.conversation.id": "s1",
        })
    );

    // call_llm: ids, the request and response as JSON strings.
    let first_call = &spans[8];
    assert_eq!(first_call.attr("gen_ai.system"), "gcp.vertex.agent");
    assert_eq!(first_call.attr("gen_ai.request.model"), "m");
    assert_eq!(
        first_call.attr("gcp.vertex.agent.invocation_id"),
        invocation
    );
    assert_eq!(first_call.attr("gcp.vertex.agent.session_id"), "s1");
    let call_event = event(first_call.attr("gcp.vertex.agent.event_id"));
    assert_eq!(call_event["author"], "coordinator");
    assert!(call_event["content"]["parts"][0]["functionCall"].is_object());
    let request: Value =
        serde_json::from_str(first_call.attr("gcp.vertex.agent.llm_request")).unwrap();
    assert_eq!(request["model"], "m");
    assert_eq!(
        request["config"]["labels"],
        json!({"adk_agent_name": "coordinator"})
    );
    assert!(
        request["config"]["system_instruction"]
            .as_str()
            .unwrap()
            .starts_with("Hand every question to helper.")
    );
    assert_eq!(
        request["config"]["tools"][0]["function_declarations"][0]["name"],
        "transfer_to_agent"
    );
    assert_eq!(
        request["contents"],
        json!([{"parts": [{"text": "I need apples"}], "role": "user"}])
    );
    // json.dumps spacing, as ADK writes it.
    assert!(
        first_call
            .attr("gcp.vertex.agent.llm_request")
            .starts_with(r#"{"model": "m", "config": {"#)
    );
    let response: Value =
        serde_json::from_str(first_call.attr("gcp.vertex.agent.llm_response")).unwrap();
    assert_eq!(
        response["content"]["parts"][0]["function_call"],
        json!({"args": {"agent_name": "helper"}, "name": "transfer_to_agent"})
    );
    assert_eq!(
        first_call.attributes["gen_ai.response.finish_reasons"],
        json!(["stop"])
    );

    // The helper's second call: generation parameters, typed.
    let answer = &spans[5];
    assert_eq!(answer.attributes["gen_ai.request.top_p"], json!(0.5));
    assert_eq!(answer.attributes["gen_ai.request.max_tokens"], json!(100));
    assert_eq!(
        event(answer.attr("gcp.vertex.agent.event_id"))["content"]["parts"][0]["text"],
        "Noted: apples."
    );
    let helper_request: Value =
        serde_json::from_str(answer.attr("gcp.vertex.agent.llm_request")).unwrap();
    let contents = helper_request["contents"].as_array().unwrap();
    assert!(
        contents
            .iter()
            .any(|c| c["parts"][0]["function_response"]["name"] == "remember"),
        "snake_case parts: {contents:?}"
    );

    // generate_content: the GenAI semantic conventions.
    let generate = &spans[4];
    assert_eq!(generate.attr("gen_ai.operation.name"), "generate_content");
    assert_eq!(generate.attr("gen_ai.agent.name"), "helper");
    assert_eq!(generate.attr("gen_ai.conversation.id"), "s1");
    assert_eq!(generate.attr("user.id"), "u");
    assert_eq!(generate.attr("gcp.vertex.agent.invocation_id"), invocation);
    assert_eq!(
        generate.attr("gcp.vertex.agent.event_id"),
        answer.attr("gcp.vertex.agent.event_id")
    );

    // execute_tool: trace_tool_call.
    let transfer = &spans[0];
    assert_eq!(transfer.attr("gen_ai.tool.type"), "TransferToAgentTool");
    assert_eq!(
        transfer.attr("gcp.vertex.agent.tool_call_args"),
        r#"{"agent_name": "helper"}"#
    );
    assert_eq!(
        transfer.attr("gcp.vertex.agent.tool_response"),
        r#"{"result": null}"#
    );
    assert_eq!(transfer.attr("gcp.vertex.agent.llm_request"), "{}");
    assert_eq!(transfer.attr("gcp.vertex.agent.llm_response"), "{}");
    let transfer_event = event(transfer.attr("gcp.vertex.agent.event_id"));
    assert_eq!(transfer_event["actions"]["transferToAgent"], "helper");
    assert_eq!(
        transfer.attr("gen_ai.tool.call.id"),
        transfer_event["content"]["parts"][0]["functionResponse"]["id"]
    );
    let tool = &spans[1];
    assert_eq!(
        Value::Object(tool.attributes.clone()),
        json!({
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.description": "Remember an item.",
            "gen_ai.tool.name": "remember",
            "gen_ai.tool.type": "FunctionTool",
            "gcp.vertex.agent.llm_request": "{}",
            "gcp.vertex.agent.llm_response": "{}",
            "gcp.vertex.agent.tool_call_args": r#"{"item": "apples"}"#,
            "gen_ai.tool.call.id": tool.attr("gen_ai.tool.call.id"),
            "gcp.vertex.agent.event_id": tool.attr("gcp.vertex.agent.event_id"),
            "gcp.vertex.agent.tool_response": r#"{"written": {"last": "apples"}}"#,
        })
    );

    // /debug/trace/{event_id}: the span's attributes plus its ids, as integers.
    let r = s
        .http
        .get(s.url(&format!(
            "/debug/trace/{}",
            answer.attr("gcp.vertex.agent.event_id")
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    #[derive(Deserialize)]
    struct EventTrace {
        trace_id: u128,
        span_id: u64,
        #[serde(flatten)]
        attributes: Map<String, Value>,
    }
    let by_event: EventTrace = r.json().await.unwrap();
    assert_eq!(
        (by_event.trace_id, by_event.span_id),
        (trace, answer.span_id)
    );
    assert_eq!(by_event.attributes, answer.attributes);
    assert_eq!(s.get("/debug/trace/no-such-event").await.0, 404);

    // A second turn is a second trace of the same session; other sessions stay empty.
    s.send("POST", "/run", run_body("shop", &sid, "again", false))
        .await;
    let spans = session_spans(&s, &sid).await;
    let traces: std::collections::BTreeSet<u128> = spans.iter().map(|x| x.trace_id).collect();
    assert_eq!(traces.len(), 2);
    assert_eq!(spans.iter().filter(|x| x.name == "invocation").count(), 2);
    let other = s.session("shop", None).await;
    assert!(session_spans(&s, &other).await.is_empty());
}

#[tokio::test]
async fn an_agent_tools_run_hangs_under_its_execute_tool_span() {
    const BOSS: &str = r#"
name: boss
model: m
instruction: Ask the expert.
tools: [{name: expert}]
define:
  tools:
    expert:
      agent:
        agent:
          name: expert
          model: m
          description: Knows things.
          instruction: Answer.
"#;
    const BOSS_SCRIPT: &str = r#"
replies:
  boss:
    - function_call: {name: expert, args: {request: "what?"}}
    - text: "done"
  expert:
    - text: "42"
"#;
    let s = Serve::start(
        &[("boss.yaml", BOSS), ("script.yaml", BOSS_SCRIPT)],
        &["boss.yaml", "--script", "script.yaml", "--db", "memory"],
    );
    let sid = s.session("boss", Some("outer")).await;
    let (status, _) = s
        .send("POST", "/run", run_body("boss", &sid, "hi", false))
        .await;
    assert_eq!(status, 200);
    let spans = session_spans(&s, &sid).await;
    assert_eq!(
        tree(&spans),
        [
            "generate_content m <- call_llm",
            "call_llm <- invoke_agent expert",
            "invoke_agent expert <- invocation",
            "invocation <- execute_tool expert",
            "execute_tool expert <- generate_content m",
            "generate_content m <- call_llm",
            "call_llm <- invoke_agent boss",
            "generate_content m <- call_llm",
            "call_llm <- invoke_agent boss",
            "invoke_agent boss <- invocation",
            "invocation",
        ]
    );
    assert!(spans.iter().all(|x| x.trace_id == spans[0].trace_id));
    // The inner run's spans name its own (fresh) session, as ADK's do.
    let inner = spans[1].attr("gcp.vertex.agent.session_id");
    assert_ne!(inner, "outer");
    assert_eq!(spans[6].attr("gcp.vertex.agent.session_id"), "outer");
    assert_eq!(spans[4].attr("gen_ai.tool.type"), "AgentTool");
    assert_eq!(
        spans[4].attr("gcp.vertex.agent.tool_response"),
        r#"{"result": "42"}"#
    );
}

#[tokio::test]
async fn without_content_capture_requests_responses_and_tool_data_are_empty() {
    let s = Serve::start_env(
        crate::common::write_files(&files()),
        &["shop.yaml", "--script", "script.yaml", "--db", "memory"],
        &[("ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS", "false")],
    );
    let sid = s.session("shop", None).await;
    s.send(
        "POST",
        "/run",
        run_body("shop", &sid, "I need apples", false),
    )
    .await;
    let spans = session_spans(&s, &sid).await;
    assert_eq!(spans.len(), 11);
    for span in &spans {
        for key in [
            "gcp.vertex.agent.llm_request",
            "gcp.vertex.agent.llm_response",
            "gcp.vertex.agent.tool_call_args",
            "gcp.vertex.agent.tool_response",
        ] {
            if let Some(v) = span.attributes.get(key) {
                assert_eq!(v, "{}", "{} {key}", span.name);
            }
        }
    }
    assert!(
        spans
            .iter()
            .any(|x| x.attributes.contains_key("gcp.vertex.agent.tool_response"))
    );
}

#[tokio::test]
async fn streamed_runs_name_the_stored_events() {
    let s = Serve::start(
        &files(),
        &["shop.yaml", "--script", "script.yaml", "--db", "memory"],
    );
    let sid = s.session("shop", None).await;
    let frames = s.run_sse("shop", &sid, "I need apples", true).await;
    assert!(
        frames.iter().any(|f| f["partial"] == true),
        "the run streamed"
    );
    let (_, session) = s.get(&format!("/apps/shop/users/u/sessions/{sid}")).await;
    let stored: Vec<&str> = session["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    let spans = session_spans(&s, &sid).await;
    assert_eq!(spans.len(), 11);
    for span in &spans {
        if let Some(id) = span.attributes.get("gcp.vertex.agent.event_id") {
            assert!(
                stored.contains(&id.as_str().unwrap()),
                "{} names {id}, not a stored event",
                span.name
            );
        }
    }
}

#[tokio::test]
async fn a_reply_with_two_calls_adds_adks_merged_span() {
    const TWICE: &str = r#"
replies:
  coordinator:
    - function_call: {name: transfer_to_agent, args: {agent_name: helper}}
  helper:
    - function_calls:
        - {name: remember, args: {item: apples}}
        - {name: remember, args: {item: pears}}
    - text: "Noted both."
"#;
    let s = Serve::start(
        &[("shop.yaml", SHOP), ("script.yaml", TWICE)],
        &["shop.yaml", "--script", "script.yaml", "--db", "memory"],
    );
    let sid = s.session("shop", None).await;
    let (status, events) = s
        .send("POST", "/run", run_body("shop", &sid, "two things", false))
        .await;
    assert_eq!(status, 200);
    let spans = session_spans(&s, &sid).await;
    let tools: Vec<&DebugSpan> = spans
        .iter()
        .filter(|x| x.name == "execute_tool remember")
        .collect();
    assert_eq!(tools.len(), 2);
    let merged = spans
        .iter()
        .find(|x| x.name == "execute_tool (merged)")
        .expect("a merged span");
    assert_eq!(merged.parent_span_id, tools[0].parent_span_id);
    let responses = events
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["content"]["parts"][1]["functionResponse"].is_object())
        .expect("the merged response event");
    assert_eq!(merged.attr("gcp.vertex.agent.event_id"), responses["id"]);
    assert_eq!(merged.attr("gen_ai.tool.name"), "(merged tools)");
    assert_eq!(merged.attr("gcp.vertex.agent.tool_call_args"), "N/A");
    // Each call's span names an event of its own, as ADK's (never stored) do.
    for tool in tools {
        assert_ne!(tool.attr("gcp.vertex.agent.event_id"), responses["id"]);
    }
}

#[tokio::test]
async fn no_debug_traces_keeps_no_spans_and_the_run_is_unchanged() {
    let args = ["shop.yaml", "--script", "script.yaml", "--db", "memory"];
    let mut answers = Vec::new();
    for extra in [&[][..], &["--no-debug-traces"][..]] {
        let s = Serve::start(&files(), &[&args[..], extra].concat());
        let sid = s.session("shop", Some("s1")).await;
        let (status, events) = s
            .send(
                "POST",
                "/run",
                run_body("shop", &sid, "I need apples", false),
            )
            .await;
        assert_eq!(status, 200, "{events}");
        let spans = session_spans(&s, &sid).await;
        assert_eq!(
            spans.is_empty(),
            !extra.is_empty(),
            "{extra:?}: {} spans",
            spans.len()
        );
        answers.push(super::lines(&events));
    }
    assert_eq!(answers[0], answers[1]);
}

/// A live run is traced too: one `invocation` span for the whole run, an `invoke_agent`
/// span per agent (the helper's under the coordinator's, as the handover nests it), and
/// the helper's tool call as `execute_tool` under its agent, so the page's timeline and
/// `/debug/trace` show where a live conversation spent its time.
#[tokio::test]
async fn a_live_run_has_an_invocation_span_with_its_agents_and_tools() {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let s = Serve::start(
        &files(),
        &["shop.yaml", "--script", "script.yaml", "--db", "memory"],
    );
    let sid = s.session("shop", Some("live1")).await;
    let mut ws = super::live::connect(&s, "shop", &sid).await;
    let content = json!({"content": {"role": "user", "parts": [{"text": "I need apples"}]}});
    ws.send(Message::text(content.to_string())).await.unwrap();
    let (events, close) = super::live::until_closed_after(&mut ws, "Noted: apples.").await;
    assert_eq!(close.map(|c| c.0), Some(1000), "{events:#?}");
    let spans = session_spans(&s, &sid).await;
    let tree = tree(&spans);
    for expected in [
        "execute_tool transfer_to_agent <- invoke_agent coordinator",
        "execute_tool remember <- invoke_agent helper",
        "invoke_agent helper <- invoke_agent coordinator",
        "invoke_agent coordinator <- invocation",
        "invocation",
    ] {
        assert!(tree.iter().any(|t| t == expected), "{expected}: {tree:#?}");
    }
    // One trace; at the handover the helper's model got the conversation so far as
    // history (ADK's `send_data`, contents as `json.dumps` writes them).
    assert!(spans.iter().all(|x| x.trace_id == spans[0].trace_id));
    let send = spans
        .iter()
        .find(|x| x.name == "send_data")
        .expect("send_data");
    let data: Value = serde_json::from_str(send.attr("gcp.vertex.agent.data")).unwrap();
    assert_eq!(
        data[0],
        json!({"parts": [{"text": "I need apples"}], "role": "user"})
    );
    assert!(
        send.attr("gcp.vertex.agent.data")
            .starts_with(r#"[{"parts": [{"text": "#)
    );
    assert_eq!(
        tree.iter()
            .filter(|t| *t == "send_data <- invoke_agent helper")
            .count(),
        1,
        "{tree:#?}"
    );
    let helper = spans
        .iter()
        .find(|x| x.name == "invoke_agent helper")
        .unwrap();
    assert_eq!(helper.attr("gen_ai.agent.name"), "helper");
    assert_eq!(helper.attr("gen_ai.conversation.id"), sid);
}
