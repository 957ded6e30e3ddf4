//! Gemini's `generateContent` and `streamGenerateContent` wire format.

use super::server::{End, Server, json, sse};
use super::{KEY, call, calls, conversation, failure, model, question, text};
use adk_flow::model::provider::Provider;
use serde_json::json;

#[tokio::test]
async fn sends_adk_shaped_request_and_reads_text() {
    let server = Server::start(|_| {
        json(200, json!({
            "candidates": [{"content": {"parts": [{"text": "A-2 is on its way."}], "role": "model"},
                            "finishReason": "STOP", "safetyRatings": []}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15,
                              "thoughtsTokenCount": 0},
            "modelVersion": "gemini-2.5-flash"
        }))
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let request = conversation();
    let (responses, error) = call(m.as_ref(), &request, false).await;
    assert!(error.is_none(), "{error:?}");

    let sent = server.received();
    assert_eq!(sent.len(), 1);
    let sent = &sent[0];
    assert_eq!(sent.uri, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(sent.headers["x-goog-api-key"], KEY);
    assert!(sent.headers.get("authorization").is_none());
    assert_eq!(
        sent.body["systemInstruction"],
        json!({"parts": [{"text": "You answer order questions."}], "role": "user"})
    );
    assert_eq!(sent.body["contents"], json!(request.contents));
    assert_eq!(
        sent.body["contents"][1]["parts"][1]["functionCall"],
        json!({"args": {"order_id": "A-1"}, "name": "lookup_order"})
    );
    assert_eq!(
        sent.body["contents"][2]["parts"][0]["functionResponse"],
        json!({"name": "lookup_order", "response": {"status": "shipped"}})
    );
    assert_eq!(
        sent.body["tools"],
        json!([{"functionDeclarations": [
            {"name": "lookup_order", "description": "Looks up an order.",
             "parametersJsonSchema": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                      "required": ["order_id"]}},
            {"name": "list_orders", "description": "Lists orders."}
        ]}])
    );
    assert_eq!(
        sent.body["generationConfig"],
        json!({"temperature": 0.0, "maxOutputTokens": 64, "topP": 0.9,
               "stopSequences": ["END"], "seed": 7})
    );

    assert_eq!(responses.len(), 1);
    let r = &responses[0];
    assert_eq!(text(r), "A-2 is on its way.");
    assert_eq!(
        r.content.as_ref().unwrap().role,
        Some(adk_flow::event::Role::Model)
    );
    assert_eq!(
        (
            r.partial,
            r.finish_reason.as_deref(),
            r.error_code.as_deref()
        ),
        (None, Some("STOP"), None)
    );
    let usage = r.usage_metadata.as_ref().unwrap();
    assert_eq!(
        (
            usage.prompt_token_count,
            usage.candidates_token_count,
            usage.total_token_count
        ),
        (Some(10), Some(5), Some(15))
    );
}

#[tokio::test]
async fn reads_function_calls() {
    let server = Server::start(|_| {
        json(
            200,
            json!({"candidates": [{"content": {"role": "model", "parts": [
            {"functionCall": {"id": "fc-1", "name": "lookup_order", "args": {"order_id": "A-2"}},
             "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "list_orders", "args": {}}}
        ]}, "finishReason": "STOP"}]}),
        )
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let (responses, error) = call(m.as_ref(), &question("A-2?"), false).await;
    assert!(error.is_none());
    let got = calls(&responses[0]);
    assert_eq!(got.len(), 2);
    assert_eq!(
        (got[0].id.as_deref(), got[0].name.as_str()),
        (Some("fc-1"), "lookup_order")
    );
    assert_eq!(got[0].args, json!({"order_id": "A-2"}));
    assert_eq!(
        (got[1].id.as_deref(), got[1].args.clone()),
        (None, json!({}))
    );
    // The signature goes back to the model with the call.
    let parts = &responses[0].content.as_ref().unwrap().parts;
    assert_eq!(
        parts[0].thought_signature.as_deref().map(String::as_str),
        Some("c2ln")
    );
}

#[tokio::test]
async fn streams_partials_then_the_aggregate() {
    let server = Server::start(|_| {
        sse(&[
            r#"{"candidates": [{"content": {"parts": [{"text": "Hel"}], "role": "model"}}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"text": "lo "}], "role": "model"}}]}"#,
            r#"{"candidates": [{"content": {"parts": [{"text": "world"}, {"functionCall": {"name": "f", "args": {"a": 1}}}], "role": "model"}, "finishReason": "STOP"}], "usageMetadata": {"totalTokenCount": 42}}"#,
        ], End::Clean)
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let (responses, error) = call(m.as_ref(), &question("hi"), true).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(
        server.received()[0].uri,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );

    assert_eq!(responses.len(), 4);
    let partials: Vec<String> = responses[..3].iter().map(text).collect();
    assert_eq!(partials, ["Hel", "lo ", "world"]);
    assert!(responses[..3].iter().all(|r| r.partial == Some(true)));
    let last = &responses[3];
    assert_eq!(last.partial, Some(false));
    assert_eq!(text(last), "Hello world");
    assert_eq!(calls(last)[0].args, json!({"a": 1}));
    assert_eq!(last.content.as_ref().unwrap().parts.len(), 2);
    assert_eq!(
        (last.finish_reason.as_deref(), last.error_code.as_deref()),
        (Some("STOP"), None)
    );
    assert_eq!(
        last.usage_metadata.as_ref().unwrap().total_token_count,
        Some(42)
    );
}

#[tokio::test]
async fn safety_blocks_are_replies_not_failures() {
    let server = Server::start(|n| match n {
        0 => json(200, json!({"candidates": [{"finishReason": "SAFETY", "finishMessage": "Blocked for safety.",
                                              "safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH"}]}]})),
        _ => json(200, json!({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT",
                                                 "blockReasonMessage": "The prompt was blocked."}})),
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let (responses, error) = call(m.as_ref(), &question("something bad"), false).await;
    assert!(error.is_none());
    let r = &responses[0];
    assert_eq!(
        (r.error_code.as_deref(), r.error_message.as_deref()),
        (Some("SAFETY"), Some("Blocked for safety."))
    );
    assert_eq!(
        (r.finish_reason.as_deref(), r.content.as_ref()),
        (Some("SAFETY"), None)
    );

    let (responses, error) = call(m.as_ref(), &question("something worse"), false).await;
    assert!(error.is_none());
    assert_eq!(
        responses[0].error_code.as_deref(),
        Some("PROHIBITED_CONTENT")
    );
    assert_eq!(
        responses[0].error_message.as_deref(),
        Some("The prompt was blocked.")
    );
}

#[tokio::test]
async fn streamed_safety_stop_sets_the_error_code_of_the_aggregate() {
    let server = Server::start(|_| {
        sse(&[
            r#"{"candidates": [{"content": {"parts": [{"text": "Once upon"}], "role": "model"}}]}"#,
            r#"{"candidates": [{"finishReason": "SAFETY"}]}"#,
        ], End::Clean)
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let (responses, error) = call(m.as_ref(), &question("tell me"), true).await;
    assert!(error.is_none());
    let last = responses.last().unwrap();
    assert_eq!(
        (last.partial, last.error_code.as_deref()),
        (Some(false), Some("SAFETY"))
    );
    assert_eq!(text(last), "Once upon");
}

#[tokio::test]
async fn error_bodies_surface_without_the_key_and_without_retry() {
    let server = Server::start(|_| {
        json(
            400,
            json!({"error": {"code": 400, "status": "INVALID_ARGUMENT",
            "message": format!("API key not valid: {KEY}. Please pass a valid API key.")}}),
        )
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let (_, error) = call(m.as_ref(), &question("hi"), false).await;
    let (code, message) = failure(error);
    assert_eq!(code, "HTTP_400");
    assert!(
        message.contains("INVALID_ARGUMENT: API key not valid"),
        "{message}"
    );
    assert!(!message.contains(KEY), "{message}");
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_dropped_stream_is_broken() {
    let server = Server::start(|_| {
        sse(
            &[r#"{"candidates": [{"content": {"parts": [{"text": "Hel"}], "role": "model"}}]}"#],
            End::Drop,
        )
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let (responses, error) = call(m.as_ref(), &question("hi"), true).await;
    assert_eq!(responses.len(), 1);
    assert_eq!(failure(error).0, "STREAM_BROKEN");
}

#[tokio::test]
async fn a_stream_that_ends_unfinished_or_garbled_is_broken() {
    let server = Server::start(|n| match n {
        0 => sse(
            &[r#"{"candidates": [{"content": {"parts": [{"text": "Hel"}], "role": "model"}}]}"#],
            End::Clean,
        ),
        _ => sse(&[r#"{"candidates": [{"content": "#], End::Clean),
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let (_, error) = call(m.as_ref(), &question("hi"), true).await;
    let (code, message) = failure(error);
    assert_eq!(code, "STREAM_BROKEN");
    assert!(message.contains("before the model finished"), "{message}");
    let (responses, error) = call(m.as_ref(), &question("hi"), true).await;
    assert!(responses.is_empty());
    let (code, message) = failure(error);
    assert_eq!(code, "STREAM_BROKEN");
    assert!(message.contains("not JSON"), "{message}");
}

#[tokio::test]
async fn built_in_tools_are_sent_beside_the_function_declarations() {
    let server = Server::start(|_| {
        json(
            200,
            json!({"candidates": [{"content": {"parts": [{"text": "Found."}], "role": "model"},
                                          "finishReason": "STOP"}]}),
        )
    })
    .await;
    let m = model(Provider::Gemini, &server.base, Some(KEY));
    let mut request = conversation();
    request.provider_tools = vec!["googleSearch".into(), "urlContext".into()];
    let (_, error) = call(m.as_ref(), &request, false).await;
    assert!(error.is_none(), "{error:?}");
    let tools = &server.received()[0].body["tools"];
    assert_eq!(tools.as_array().unwrap().len(), 3);
    assert!(tools[0].get("functionDeclarations").is_some());
    assert_eq!(tools[1], json!({"googleSearch": {}}));
    assert_eq!(tools[2], json!({"urlContext": {}}));
}
