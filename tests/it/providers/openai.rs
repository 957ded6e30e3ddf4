//! The OpenAI chat completions wire format.

use super::server::{End, Server, json, sse};
use super::{KEY, call, calls, conversation, failure, model, question, text};
use adk_flow::model::provider::Provider;
use serde_json::{Value, json};

fn completion(message: Value, finish: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "smollm2",
           "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}})
}

#[tokio::test]
async fn sends_messages_tools_and_config_and_reads_text() {
    let server = Server::start(|_| {
        json(
            200,
            completion(
                json!({"role": "assistant", "content": "A-2 ships today."}),
                "stop",
            ),
        )
    })
    .await;
    let m = model(Provider::OpenAi, &format!("{}/v1/", server.base), Some(KEY));
    let (responses, error) = call(m.as_ref(), &conversation(), false).await;
    assert!(error.is_none(), "{error:?}");

    let sent = &server.received()[0];
    assert_eq!(sent.uri, "/v1/chat/completions");
    assert_eq!(
        sent.headers["authorization"],
        format!("Bearer {KEY}").as_str()
    );
    assert_eq!(sent.body["model"], "smollm2");
    assert_eq!(
        sent.body["messages"],
        json!([
            {"role": "system", "content": "You answer order questions."},
            {"role": "user", "content": "Where is order A-1?"},
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"id": "call_0", "type": "function",
                 "function": {"name": "lookup_order", "arguments": "{\"order_id\":\"A-1\"}"}}]},
            {"role": "tool", "tool_call_id": "call_0", "content": "{\"status\":\"shipped\"}"},
            {"role": "assistant", "content": "It has shipped."},
            {"role": "user", "content": "Thanks! And A-2?"}
        ])
    );
    assert_eq!(
        sent.body["tools"],
        json!([
            {"type": "function", "function": {"name": "lookup_order", "description": "Looks up an order.",
             "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}},
            {"type": "function", "function": {"name": "list_orders", "description": "Lists orders.",
             "parameters": {"type": "object", "properties": {}}}}
        ])
    );
    for (key, value) in [
        ("temperature", json!(0.0)),
        ("max_tokens", json!(64)),
        ("top_p", json!(0.9)),
        ("stop", json!(["END"])),
        ("seed", json!(7)),
    ] {
        assert_eq!(sent.body[key], value, "{key}");
    }
    assert!(sent.body.get("stream").is_none());

    let r = &responses[0];
    assert_eq!(text(r), "A-2 ships today.");
    assert_eq!(
        (
            r.finish_reason.as_deref(),
            r.error_code.as_deref(),
            r.partial
        ),
        (Some("STOP"), None, None)
    );
    assert_eq!(
        r.usage_metadata.as_ref().unwrap().total_token_count,
        Some(15)
    );
}

#[tokio::test]
async fn no_key_no_authorization_header() {
    let server = Server::start(|_| {
        json(
            200,
            completion(json!({"role": "assistant", "content": "hi"}), "stop"),
        )
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, None);
    let (_, error) = call(m.as_ref(), &question("hi"), false).await;
    assert!(error.is_none());
    assert!(server.received()[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn reads_tool_calls_with_parsed_arguments() {
    let server = Server::start(|_| {
        json(200, completion(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_abc", "type": "function", "function": {"name": "lookup_order", "arguments": "{\"order_id\": \"A-2\"}"}},
            {"id": "call_def", "type": "function", "function": {"name": "list_orders", "arguments": ""}}
        ]}), "tool_calls"))
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, Some(KEY));
    let (responses, error) = call(m.as_ref(), &question("A-2?"), false).await;
    assert!(error.is_none());
    let r = &responses[0];
    let got = calls(r);
    assert_eq!(
        (got[0].id.as_deref(), got[0].name.as_str()),
        (Some("call_abc"), "lookup_order")
    );
    assert_eq!(got[0].args, json!({"order_id": "A-2"}));
    assert_eq!(
        (got[1].id.as_deref(), got[1].args.clone()),
        (Some("call_def"), json!({}))
    );
    assert_eq!(text(r), "");
    assert_eq!(r.finish_reason.as_deref(), Some("STOP"));
}

#[tokio::test]
async fn content_filter_is_a_safety_reply() {
    let server = Server::start(|_| {
        json(
            200,
            completion(
                json!({"role": "assistant", "content": null}),
                "content_filter",
            ),
        )
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, Some(KEY));
    let (responses, error) = call(m.as_ref(), &question("bad"), false).await;
    assert!(error.is_none());
    assert_eq!(responses[0].error_code.as_deref(), Some("SAFETY"));
    assert_eq!(responses[0].finish_reason.as_deref(), Some("SAFETY"));
}

fn delta(delta: Value, finish: Option<&str>) -> String {
    json!({"id": "c", "object": "chat.completion.chunk",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    .to_string()
}

#[tokio::test]
async fn streams_text_partials_then_the_aggregate() {
    let chunks = [
        delta(json!({"role": "assistant", "content": ""}), None),
        delta(json!({"content": "Hel"}), None),
        delta(json!({"content": "lo"}), None),
        delta(json!({}), Some("stop")),
        json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}}).to_string(),
        "[DONE]".to_owned(),
    ];
    let server = Server::start(move |_| {
        sse(
            &chunks.iter().map(String::as_str).collect::<Vec<_>>(),
            End::Clean,
        )
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, Some(KEY));
    let (responses, error) = call(m.as_ref(), &question("hi"), true).await;
    assert!(error.is_none(), "{error:?}");
    let sent = &server.received()[0];
    assert_eq!(
        (
            sent.body["stream"].clone(),
            sent.body["stream_options"].clone()
        ),
        (json!(true), json!({"include_usage": true}))
    );

    assert_eq!(responses.len(), 3);
    assert_eq!(
        (text(&responses[0]), responses[0].partial),
        ("Hel".to_owned(), Some(true))
    );
    assert_eq!(
        (text(&responses[1]), responses[1].partial),
        ("lo".to_owned(), Some(true))
    );
    let last = &responses[2];
    assert_eq!(
        (text(last), last.partial, last.finish_reason.as_deref()),
        ("Hello".to_owned(), Some(false), Some("STOP"))
    );
    assert_eq!(
        last.usage_metadata.as_ref().unwrap().total_token_count,
        Some(6)
    );
}

#[tokio::test]
async fn streamed_tool_call_fragments_are_joined_per_index() {
    let chunks = [
        delta(
            json!({"role": "assistant", "content": null, "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": "lookup_order", "arguments": ""}}]}),
            None,
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"order"}}]}),
            None,
        ),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": {"name": "list_orders", "arguments": "{}"}}]}),
            None,
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "_id\": \"A"}}]}),
            None,
        ),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "-2\"}"}}]}),
            None,
        ),
        delta(json!({}), Some("tool_calls")),
        "[DONE]".to_owned(),
    ];
    let server = Server::start(move |_| {
        sse(
            &chunks.iter().map(String::as_str).collect::<Vec<_>>(),
            End::Clean,
        )
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, Some(KEY));
    let (responses, error) = call(m.as_ref(), &question("A-2?"), true).await;
    assert!(error.is_none(), "{error:?}");
    // Fragments are not shown: only the aggregate carries the calls.
    assert_eq!(responses.len(), 1);
    let last = &responses[0];
    assert_eq!(last.partial, Some(false));
    let got = calls(last);
    assert_eq!(got.len(), 2);
    assert_eq!(
        (
            got[0].id.as_deref(),
            got[0].name.as_str(),
            got[0].args.clone()
        ),
        (Some("call_1"), "lookup_order", json!({"order_id": "A-2"}))
    );
    assert_eq!(
        (
            got[1].id.as_deref(),
            got[1].name.as_str(),
            got[1].args.clone()
        ),
        (Some("call_2"), "list_orders", json!({}))
    );
}

#[tokio::test]
async fn broken_streams_say_so() {
    let text_chunk = delta(json!({"content": "Hel"}), None);
    let server = Server::start(move |n| match n {
        0 => sse(&[&text_chunk], End::Drop),
        1 => sse(&[&text_chunk], End::Clean), // no [DONE]
        2 => sse(&[&text_chunk, "{not json"], End::Clean),
        _ => sse(&[r#"{"error": {"message": "model crashed"}}"#], End::Clean),
    })
    .await;
    let m = model(Provider::OpenAi, &server.base, Some(KEY));
    for expected in [
        "",
        "without [DONE]",
        "not the expected JSON",
        "model crashed",
    ] {
        let (responses, error) = call(m.as_ref(), &question("hi"), true).await;
        assert!(responses.len() <= 1);
        let (code, message) = failure(error);
        assert_eq!(code, "STREAM_BROKEN", "{message}");
        assert!(message.contains(expected), "{message}");
    }
    // A stream that has started is never retried.
    assert_eq!(server.received().len(), 4);
}
