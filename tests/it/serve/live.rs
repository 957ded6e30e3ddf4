//! `/run_live`: a websocket client drives live runs on `serve` (ADK's api_server
//! protocol), including bad frames, a dropped client and the live-session cap.

use super::{Serve, app_files};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

pub(super) type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

fn start(extra: &[&str]) -> Serve {
    let mut args = vec!["apps", "--script", "script.yaml", "--db", "memory"];
    args.extend_from_slice(extra);
    Serve::start(&app_files(), &args)
}

pub(super) async fn connect(s: &Serve, app: &str, session: &str) -> Ws {
    let url = format!(
        "{}/run_live?app_name={app}&user_id=u&session_id={session}&modalities=TEXT",
        s.base.replacen("http://", "ws://", 1)
    );
    tokio_tungstenite::connect_async(url)
        .await
        .expect("websocket")
        .0
}

/// Every event frame until the server closes, and the close code and reason.
pub(super) async fn until_closed(ws: &mut Ws) -> (Vec<Value>, Option<(u16, String)>) {
    let mut events = Vec::new();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("the server answers");
        match frame {
            Some(Ok(Message::Text(t))) => events.push(serde_json::from_str(t.as_str()).unwrap()),
            Some(Ok(Message::Close(frame))) => {
                return (
                    events,
                    frame.map(|f| (u16::from(f.code), f.reason.as_str().to_owned())),
                );
            }
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return (events, None),
        }
    }
}

/// Every event frame until a final event with `text` came, then the client closes the
/// queue; the rest until the server closes, and the close code and reason.
pub(super) async fn until_closed_after(
    ws: &mut Ws,
    text: &str,
) -> (Vec<Value>, Option<(u16, String)>) {
    let mut events: Vec<Value> = Vec::new();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .unwrap_or_else(|_| panic!("no {text:?} in {events:#?}"));
        if let Some(Ok(Message::Text(t))) = frame {
            let event: Value = serde_json::from_str(t.as_str()).unwrap();
            let done = event["partial"] != true && event["content"]["parts"][0]["text"] == text;
            events.push(event);
            if done {
                break;
            }
        }
    }
    ws.send(Message::text(r#"{"close": true}"#)).await.unwrap();
    let (rest, close) = until_closed(ws).await;
    events.extend(rest);
    (events, close)
}

fn short(events: &[Value]) -> Vec<String> {
    events.iter().map(crate::common::simplify).collect()
}

#[tokio::test]
async fn a_transfer_streams_over_the_websocket_and_is_stored() {
    let s = start(&[]);
    let id = s.session("team", None).await;
    let mut ws = connect(&s, "team", &id).await;
    let content = json!({"content": {"role": "user", "parts": [{"text": "what is it?"}]}});
    ws.send(Message::text(content.to_string())).await.unwrap();
    ws.send(Message::text(r#"{"close": true}"#)).await.unwrap();
    let (events, close) = until_closed(&mut ws).await;
    assert_eq!(close.map(|c| c.0), Some(1000));
    let ids: std::collections::HashSet<&str> = events
        .iter()
        .map(|e| e["invocationId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 1, "one invocation id");
    assert!(
        events.iter().all(|e| e["author"] != "user"),
        "the client's content is not echoed"
    );
    let texts: Vec<(String, Option<bool>)> = events
        .iter()
        .map(|e| (crate::common::simplify(e), e["partial"].as_bool()))
        .collect();
    assert_eq!(texts.len(), 5, "{texts:?}");
    assert_eq!(
        texts[2].1,
        Some(true),
        "the helper's chunk streams first: {texts:?}"
    );
    assert_eq!(texts[3].1, Some(false), "then its merged text: {texts:?}");
    assert_eq!(events[4]["turnComplete"], true);
    let stored = s.stored_lines("team", &id).await;
    assert_eq!(stored.len(), 5, "{stored:?}");
    assert!(stored[0].starts_with("user: "), "{stored:?}");
    assert_eq!(&stored[1..3], &short(&events[..2])[..]);
    assert_eq!(stored[3], short(&events)[3]);
}

#[tokio::test]
async fn an_unknown_session_closes_1002() {
    let s = start(&[]);
    let mut ws = connect(&s, "greeter", "nope").await;
    let (events, close) = until_closed(&mut ws).await;
    assert!(events.is_empty());
    assert_eq!(close, Some((1002, "Session not found".into())));
}

#[tokio::test]
async fn bad_frames_close_with_a_reason() {
    let s = start(&[]);
    let id = s.session("greeter", None).await;
    let mut ws = connect(&s, "greeter", &id).await;
    ws.send(Message::text("{not json")).await.unwrap();
    let (_, close) = until_closed(&mut ws).await;
    let (code, reason) = close.unwrap();
    assert_eq!(code, u16::from(CloseCode::Invalid), "{reason}");
    assert!(
        reason.starts_with("not a LiveRequest: not JSON"),
        "{reason}"
    );

    let mut ws = connect(&s, "greeter", &id).await;
    ws.send(Message::text(r#"{"unknown": 1}"#)).await.unwrap();
    let (_, close) = until_closed(&mut ws).await;
    assert_eq!(close.unwrap().0, 1007);

    let mut ws = connect(&s, "greeter", &id).await;
    ws.send(Message::binary(vec![0u8, 1, 2])).await.unwrap();
    let (_, close) = until_closed(&mut ws).await;
    assert_eq!(close.unwrap().0, 1003);

    let mut ws = connect(&s, "greeter", &id).await;
    let huge = format!(
        r#"{{"content": {{"parts": [{{"text": "{}"}}]}}}}"#,
        "a".repeat(2 << 20)
    );
    let _ = ws.send(Message::text(huge)).await;
    let (_, close) = until_closed(&mut ws).await;
    assert_eq!(close.map(|c| c.0), Some(1009));
}

#[tokio::test]
async fn camel_case_requests_are_understood() {
    let s = start(&[]);
    let id = s.session("greeter", None).await;
    let mut ws = connect(&s, "greeter", &id).await;
    for frame in [
        json!({"activityStart": {}}),
        json!({"content": {"parts": [{"text": "hi"}]}}),
        json!({"audioStreamEnd": true}),
        json!({"close": true}),
    ] {
        ws.send(Message::text(frame.to_string())).await.unwrap();
    }
    let (events, close) = until_closed(&mut ws).await;
    assert_eq!(close.map(|c| c.0), Some(1000));
    assert_eq!(
        short(&events),
        [
            "greeter: Hel | (partial)",
            "greeter: lo  | (partial)",
            "greeter: there! | (partial)",
            "greeter: Hello there! | state {\"greeting\":\"Hello there!\"}",
            "greeter: ",
        ]
    );
    assert_eq!(events.last().unwrap()["turnComplete"], true);
    // The content was stored with role user (it had none).
    let (_, session) = s.get(&format!("/apps/greeter/users/u/sessions/{id}")).await;
    assert_eq!(session["events"][0]["content"]["role"], "user");
}

#[tokio::test]
async fn a_dropped_client_ends_the_run_and_keeps_what_it_committed() {
    let s = start(&[]);
    let id = s.session("greeter", None).await;
    let mut ws = connect(&s, "greeter", &id).await;
    let content = json!({"content": {"role": "user", "parts": [{"text": "hi"}]}});
    ws.send(Message::text(content.to_string())).await.unwrap();
    drop(ws);
    // The turn under way settles and is stored; then the run ends.
    let started = std::time::Instant::now();
    loop {
        let stored = s.stored_lines("greeter", &id).await;
        if stored.len() == 3 {
            assert!(stored[0].starts_with("user: "), "{stored:?}");
            assert!(stored[1].starts_with("greeter: Hello there!"), "{stored:?}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{stored:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The session is free again: a plain run on it goes through.
    let events = s.run_sse("greeter", &id, "again", false).await;
    assert!(!events.is_empty());
}

#[tokio::test]
async fn the_live_session_cap_answers_503_before_the_upgrade() {
    let s = start(&["--max-live-sessions", "1"]);
    let a = s.session("greeter", None).await;
    let b = s.session("greeter", None).await;
    let _first = connect(&s, "greeter", &a).await;
    let url = format!(
        "{}/run_live?app_name=greeter&user_id=u&session_id={b}",
        s.base.replacen("http://", "ws://", 1)
    );
    match tokio_tungstenite::connect_async(url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 503);
        }
        other => panic!("expected 503, got {:?}", other.map(|_| ())),
    }
}

#[tokio::test]
async fn the_workflows_live_block_applies_to_run_live() {
    // `max_duration_secs` from the workflow ends a run whose client stays silent.
    let mut files = app_files();
    let timed = format!(
        "{}live: {{max_duration_secs: 1}}\n",
        super::GREETER.trim_start()
    );
    files.push(("apps/timed.yaml", &timed));
    let s = Serve::start(
        &files,
        &["apps", "--script", "script.yaml", "--db", "memory"],
    );
    let id = s.session("timed", None).await;
    let started = std::time::Instant::now();
    let mut ws = connect(&s, "timed", &id).await;
    let (events, close) = until_closed(&mut ws).await;
    assert!(events.is_empty(), "{events:?}");
    assert_eq!(close.map(|c| c.0), Some(1000));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(10),
        "{took:?}"
    );
}
