use super::*;
use serde_json::json;

fn event_with(parts: Vec<Part>) -> Event {
    let mut e = Event::new("e-1", "a");
    e.content = Some(Content::new(Role::Model, parts));
    e
}

#[test]
fn serializes_like_adk_with_empty_action_maps_and_no_nulls() {
    let mut e = event_with(vec![Part::text("hi")]);
    e.id = "x".into();
    e.timestamp = 1.5;
    e.finish_reason = Some("STOP".into());
    let got = serde_json::to_string(&e).unwrap();
    assert_eq!(
        got,
        r#"{"content":{"parts":[{"text":"hi"}],"role":"model"},"finishReason":"STOP","invocationId":"e-1","author":"a","actions":{"stateDelta":{},"artifactDelta":{},"requestedAuthConfigs":{},"requestedToolConfirmations":{}},"id":"x","timestamp":1.5}"#
    );
}

#[test]
fn function_call_keys_follow_adk_order() {
    let e = event_with(vec![Part::function_call(FunctionCall {
        id: Some("adk-1".into()),
        args: json!({"a": 1}),
        name: "f".into(),
    })]);
    let got = serde_json::to_value(&e).unwrap();
    assert_eq!(
        serde_json::to_string(&got["content"]["parts"][0]).unwrap(),
        r#"{"functionCall":{"id":"adk-1","args":{"a":1},"name":"f"}}"#
    );
}

#[test]
fn final_response_rules() {
    let text = event_with(vec![Part::text("x")]);
    assert!(text.is_final_response());
    let call = event_with(vec![Part::function_call(FunctionCall {
        id: None,
        args: json!({}),
        name: "f".into(),
    })]);
    assert!(!call.is_final_response());
    let mut partial = text.clone();
    partial.partial = Some(true);
    assert!(!partial.is_final_response());
    let mut skip = event_with(vec![Part::function_response(FunctionResponse {
        id: None,
        name: "exit_loop".into(),
        response: json!({"result": null}),
    })]);
    assert!(!skip.is_final_response());
    skip.actions.skip_summarization = Some(true);
    assert!(skip.is_final_response());
    let mut long_running = call.clone();
    long_running.long_running_tool_ids = Some(vec!["c1".into()].into());
    assert!(long_running.is_final_response());
    let empty_ids = Event {
        long_running_tool_ids: Some(Box::default()),
        ..call
    };
    assert!(!empty_ids.is_final_response());
}

#[test]
fn text_skips_thoughts() {
    let thought = Part {
        thought: Some(true),
        ..Part::text("hmm")
    };
    let e = event_with(vec![thought, Part::text("a"), Part::text("b")]);
    assert_eq!(e.text().as_deref(), Some("ab"));
    assert_eq!(event_with(vec![]).text(), None);
    // A thought alone has no text; an empty text part is text.
    let thought = Part {
        thought: Some(true),
        ..Part::text("hmm")
    };
    assert_eq!(event_with(vec![thought]).text(), None);
    assert_eq!(event_with(vec![Part::text("")]).text().as_deref(), Some(""));
    // Made at its size (no spare capacity kept by an output_key's delta).
    let text = event_with(vec![Part::text("draft"), Part::text(" two")]).text();
    assert_eq!(text.as_ref().map(String::capacity), Some("draft two".len()));
}

#[test]
fn round_trips_through_json() {
    let mut e = event_with(vec![Part::text("x")]);
    e.actions.state_delta.insert("k".into(), json!(1));
    e.actions.transfer_to_agent = Some("b".into());
    let back: Event = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
    assert_eq!(back, e);
}

#[test]
fn an_event_stays_small() {
    // Every stored event, and each agent's view, pays for the inline size: fields most
    // events leave unset are boxed (docs/performance.md, memory per stored event).
    let size = std::mem::size_of::<Event>();
    eprintln!(
        "Event: {size} bytes, EventActions: {} bytes",
        std::mem::size_of::<EventActions>()
    );
    let part = std::mem::size_of::<crate::event::Part>();
    assert!(
        part <= 72,
        "Part is {part} bytes (88 before thought_signature was boxed)"
    );
    assert!(
        size <= 288,
        "Event is {size} bytes (784 before the boxing, 464 before `stateDelta` was sparse, 400 before three rare fields were boxed, 376 before the id, branch and error were `Box<str>`, 344 before the error and the metadata were one box each)"
    );
}

#[test]
fn the_boxed_groups_are_flat_keys_in_adks_order() {
    let mut e = Event::new("e-1", "a");
    e.partial = Some(false);
    e.turn_complete = Some(true);
    e.finish_reason = Some("STOP".into());
    e.set_error(Some("SAFETY".into()), Some("blocked".into()));
    e.interrupted = Some(true);
    let meta = e.meta_mut();
    meta.custom_metadata = Some(serde_json::Map::from_iter([("k".to_owned(), 1.into())]));
    meta.usage_metadata = Some(crate::event::UsageMetadata {
        total_token_count: Some(3),
        ..Default::default()
    });
    meta.live_session_resumption_update = Some(serde_json::json!({"newHandle": "h"}));
    meta.input_transcription = Some(crate::event::Transcription {
        text: Some("hi".into()),
        finished: None,
    });
    meta.output_transcription = Some(crate::event::Transcription::default());
    let text = serde_json::to_string(&e).unwrap();
    let keys: Vec<String> =
        serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
            .unwrap()
            .keys()
            .cloned()
            .collect();
    assert_eq!(
        keys,
        [
            "partial",
            "turnComplete",
            "finishReason",
            "errorCode",
            "errorMessage",
            "interrupted",
            "customMetadata",
            "usageMetadata",
            "liveSessionResumptionUpdate",
            "inputTranscription",
            "outputTranscription",
            "invocationId",
            "author",
            "actions",
            "id",
            "timestamp"
        ]
    );
    let back: Event = serde_json::from_str(&text).unwrap();
    assert_eq!(back, e);
    assert_eq!(
        (back.error_code(), back.error_message()),
        (Some("SAFETY"), Some("blocked"))
    );
    // Without them, nothing is allocated and nothing is written.
    let plain = Event::new("e-1", "a");
    let back: Event = serde_json::from_str(&serde_json::to_string(&plain).unwrap()).unwrap();
    assert!(back.error.is_none() && back.meta.is_none());
    assert_eq!(back.meta(), &crate::event::EventMeta::default());
    let mut only_message = Event::new("e-1", "a");
    only_message.set_error(None, Some("why".into()));
    let json = serde_json::to_value(&only_message).unwrap();
    assert_eq!(json["errorMessage"], "why");
    assert!(json.get("errorCode").is_none());
}

#[test]
fn the_events_of_an_invocation_share_their_ids_and_authors() {
    let invocation: std::sync::Arc<str> = "e-1".into();
    let a = Event::new(std::sync::Arc::clone(&invocation), super::user_author());
    let b = Event::new(std::sync::Arc::clone(&invocation), super::user_author());
    assert!(std::sync::Arc::ptr_eq(&a.invocation_id, &b.invocation_id));
    assert!(std::sync::Arc::ptr_eq(&a.author, &b.author));
    assert!(a.is_from_user());
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["author"], "user");
    assert_eq!(json["invocationId"], "e-1");
}
