//! `save_live_blob`: the audio of each turn saved as artifacts, with file references in
//! the session and never the bytes (ADK's audio cache manager).

use super::gemini::{accept, handshake, model, next, send, tree};
use adk_flow::artifact::{ArtifactKey, ArtifactService, InMemoryArtifactService};
use adk_flow::event::{Blob, Event};
use adk_flow::live::{LiveRequestQueue, LiveRunConfig, Modality};
use adk_flow::runner::Runner;
use adk_flow::session::InMemorySessionService;
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

fn short(e: &Event) -> String {
    let mut s = format!("{}:", e.author);
    for p in e.content.iter().flat_map(|c| c.parts.iter()) {
        if let Some(b) = &p.inline_data {
            s.push_str(&format!(" inline {} {}", b.mime_type, b.data));
        }
        if let Some(f) = &p.file_data {
            // The name ends in the first chunk's time: keep what is fixed.
            let (head, tail) = f.file_uri.split_at(f.file_uri.rfind('_').unwrap());
            let version = tail.rsplit('#').next().unwrap();
            let ext = tail.split('.').nth(1).unwrap().split('#').next().unwrap();
            s.push_str(&format!(
                " file {head}_MS.{ext}#{version} {} role={:?}",
                f.mime_type,
                e.content.as_ref().unwrap().role.unwrap()
            ));
        }
    }
    if e.interrupted == Some(true) {
        s.push_str(" interrupted");
    }
    if e.turn_complete == Some(true) {
        s.push_str(" turnComplete");
    }
    s
}

async fn audio_run(
    save: bool,
) -> (
    Vec<String>,
    Vec<String>,
    Vec<Event>,
    Arc<InMemoryArtifactService>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let mut ws = accept(&listener).await;
        handshake(&mut ws).await;
        // The user's two audio chunks go out as realtime input.
        for _ in 0..2 {
            let m = next(&mut ws).await.unwrap();
            assert!(m.get("realtimeInput").is_some(), "{m}");
        }
        for data in ["BQY=", "Bwg="] {
            send(&mut ws, json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": data}}]}}})).await;
        }
        send(&mut ws, json!({"serverContent": {"turnComplete": true}})).await;
        send(&mut ws, json!({"serverContent": {"modelTurn": {"parts": [{"inlineData": {"mimeType": "audio/pcm;rate=24000", "data": "CQo="}}]}}})).await;
        send(&mut ws, json!({"serverContent": {"interrupted": true}})).await;
        while next(&mut ws).await.is_some() {}
    });
    let artifacts = Arc::new(InMemoryArtifactService::new());
    let model = model(port);
    let runner = Runner::new(
        Arc::new(tree(&model, vec![])),
        Arc::new(InMemorySessionService::new()),
    )
    .with_artifacts(artifacts.clone());
    let session = runner
        .create_session("u", Some("s"), Default::default())
        .await
        .unwrap();
    let queue = LiveRequestQueue::new();
    let config = LiveRunConfig {
        response_modalities: vec![Modality::Audio],
        save_live_blob: save,
        ..LiveRunConfig::default()
    };
    let mut events = runner.run_live(session.clone(), &queue, config);
    for data in ["AQI=", "AwQ="] {
        queue.send_realtime(Blob {
            display_name: None,
            data: data.into(),
            mime_type: "audio/pcm;rate=16000".into(),
        });
    }
    let mut out = Vec::new();
    while let Some(item) = tokio::time::timeout(Duration::from_secs(20), events.next())
        .await
        .expect("the live run ends")
    {
        let e = item.unwrap();
        out.push(short(&e));
        if e.interrupted == Some(true) {
            // Whatever the interruption flushes comes right after it; then the client goes.
            let q = queue.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                q.close();
            });
        }
    }
    server.await.unwrap();
    let stored: Vec<Event> = session
        .lock()
        .events
        .iter()
        .map(|e| (**e).clone())
        .collect();
    let stored_short = stored.iter().map(short).collect();
    (out, stored_short, stored, artifacts)
}

const USER_FILE: &str = "user: file artifact://talker/u/s/_adk_live/adk_live_audio_storage_input_audio_MS.pcm;rate=16000#0 audio/pcm;rate=16000 role=User";
const MODEL_FILE: &str = "talker: file artifact://talker/u/s/_adk_live/adk_live_audio_storage_output_audio_MS.pcm;rate=24000#0 audio/pcm;rate=24000 role=Model";

#[tokio::test]
async fn each_turns_audio_is_saved_as_artifacts_and_referenced_in_the_session() {
    let (events, stored_short, stored, artifacts) = audio_run(true).await;
    assert_eq!(
        events,
        [
            "talker: inline audio/pcm;rate=24000 BQY=",
            "talker: inline audio/pcm;rate=24000 Bwg=",
            USER_FILE,
            MODEL_FILE,
            "talker: turnComplete",
            "talker: inline audio/pcm;rate=24000 CQo=",
            "talker: interrupted",
            MODEL_FILE,
        ]
    );
    // The bytes are never stored in the session: only the references and the markers.
    assert_eq!(
        stored_short,
        [
            USER_FILE,
            MODEL_FILE,
            "talker: turnComplete",
            "talker: interrupted",
            MODEL_FILE
        ]
    );
    // Each reference names a saved artifact holding the chunks of its turn, in order.
    let mut found = Vec::new();
    for e in &stored {
        let Some(f) = e
            .content
            .as_ref()
            .and_then(|c| c.parts[0].file_data.clone())
        else {
            continue;
        };
        let (path, version) = f.file_uri.rsplit_once('#').unwrap();
        let name = path.rsplit('/').next().unwrap();
        let key = ArtifactKey {
            app: "talker".into(),
            user: "u".into(),
            session: "s".into(),
            name: name.into(),
        };
        let a = artifacts
            .load(&key, Some(version.parse().unwrap()))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("no artifact {name}"));
        assert_eq!(a.mime_type, f.mime_type);
        // ADK's name: the first chunk's time in milliseconds, close to the event's.
        let ms: i64 = name
            .rsplit('_')
            .next()
            .unwrap()
            .split('.')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(ms, (e.timestamp * 1000.0) as i64, "{name}");
        found.push(a.data);
    }
    assert_eq!(found, [vec![1, 2, 3, 4], vec![5, 6, 7, 8], vec![9, 10]]);
}

#[tokio::test]
async fn without_save_live_blob_audio_is_yielded_and_not_kept() {
    let (events, stored, _, artifacts) = audio_run(false).await;
    assert!(!events.iter().any(|l| l.contains(" file ")), "{events:?}");
    assert_eq!(stored, ["talker: turnComplete", "talker: interrupted"]);
    assert!(artifacts.list("talker", "u", "s").await.unwrap().is_empty());
}
