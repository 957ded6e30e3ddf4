//! SIGTERM to the real binary during a run: running turns finish within the grace period
//! (or are cancelled after it), SSE clients see the stream end, live sockets stop taking
//! input and close with 1001, nothing committed is lost.

use super::{Serve, frames, run_body};
use futures::StreamExt;
use serde_json::Value;
use std::time::{Duration, Instant};

fn sleeper(seconds: &str, grace: &str) -> Serve {
    Serve::sleeper(
        seconds,
        "sqlite:sessions.db",
        &["--artifacts", "memory", "--grace", grace],
    )
}

/// The stored events of a session, read by another process after the server exited.
fn stored(s: &Serve, id: &str) -> Vec<Value> {
    let out = crate::common::bin()
        .current_dir(s.dir.path())
        .args([
            "sessions",
            "show",
            id,
            "--json",
            "--db",
            "sqlite:sessions.db",
        ])
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
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Starts a `/run_sse` and returns the stream once its first frame (the nap call) came.
async fn start_run(
    s: &Serve,
    id: &str,
) -> (
    String,
    impl futures::Stream<Item = reqwest::Result<axum::body::Bytes>> + use<>,
) {
    let r = s
        .http
        .post(s.url("/run_sse"))
        .json(&run_body("sleeper", id, "rest", false))
        .send()
        .await
        .unwrap();
    let mut chunks = r.bytes_stream();
    let first = chunks.next().await.unwrap().unwrap();
    (String::from_utf8(first.to_vec()).unwrap(), chunks)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_a_running_turn_finish_then_exits() {
    let mut s = sleeper("1", "10");
    let id = s.session("sleeper", None).await;
    let (mut body, mut rest) = start_run(&s, &id).await;
    s.terminate();
    let started = Instant::now();
    while let Some(chunk) = rest.next().await {
        body.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
    }
    // The turn ran to its end and the stream closed.
    let events = frames(&body);
    let last = events.last().unwrap();
    assert_eq!(last["content"]["parts"][0]["text"], "rested", "{events:#?}");
    assert_eq!(s.wait(Duration::from_secs(10)), 0, "{}", s.logs());
    assert!(started.elapsed() < Duration::from_secs(8));
    assert!(s.logs().contains("shutting down"), "{}", s.logs());
    // No new connection is accepted.
    assert!(s.http.get(s.url("/health")).send().await.is_err());
    // Everything the turn committed is in the database.
    let events = stored(&s, &id);
    assert_eq!(events.len(), 4, "{events:#?}");
    assert_eq!(events[3], *last);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_grace_period_a_run_is_cancelled_cleanly() {
    let mut s = sleeper("30", "1");
    let id = s.session("sleeper", None).await;
    let (mut body, mut rest) = start_run(&s, &id).await;
    let started = Instant::now();
    s.terminate();
    while let Some(chunk) = rest.next().await {
        body.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
    }
    let events = frames(&body);
    let error = events.last().unwrap()["error"].as_str().unwrap().to_owned();
    assert!(error.contains("shutting down"), "{error}");
    assert_eq!(s.wait(Duration::from_secs(10)), 0, "{}", s.logs());
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    // What was committed before the cancel stays: the user's message and the call.
    assert_eq!(
        super::lines(&Value::Array(stored(&s, &id))),
        ["user: rest", r#"sleeper: call nap {"seconds":"30"}"#]
    );
}

/// Opens `/run_live` on the sleeper, says "rest" and returns once the nap call came.
async fn start_live(s: &Serve, id: &str) -> (super::live::Ws, Vec<Value>) {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let mut ws = super::live::connect(s, "sleeper", id).await;
    let rest = serde_json::json!({"content": {"role": "user", "parts": [{"text": "rest"}]}});
    ws.send(Message::text(rest.to_string())).await.unwrap();
    let mut seen = Vec::new();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("the nap call")
            .unwrap()
            .unwrap();
        if let Message::Text(t) = frame {
            let event: Value = serde_json::from_str(t.as_str()).unwrap();
            let call = event["content"]["parts"][0].get("functionCall").is_some();
            seen.push(event);
            if call {
                return (ws, seen);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_a_live_turn_finish_then_closes_the_socket_with_1001() {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message;
    let mut s = sleeper("1", "10");
    let id = s.session("sleeper", None).await;
    let (mut ws, mut events) = start_live(&s, &id).await;
    let started = Instant::now();
    s.terminate();
    s.wait_for_log("shutting down").await;
    // The socket takes no more input: this turn is neither answered nor stored.
    let more = serde_json::json!({"content": {"role": "user", "parts": [{"text": "rest again"}]}});
    let _ = ws.send(Message::text(more.to_string())).await;
    let (rest, close) = super::live::until_closed(&mut ws).await;
    events.extend(rest);
    assert_eq!(
        close,
        Some((1001, "the server is shutting down".to_owned())),
        "{events:#?}\n{}",
        s.logs()
    );
    // The turn under way ran to its end: the tool's answer, then the model's reply.
    let nap = r#"sleeper: resp nap {"exit_code":0,"stdout":"","stderr":""}"#;
    let rested = r#"sleeper: rested | state {"rested":"rested"}"#;
    assert_eq!(
        super::lines(&Value::Array(events.clone())),
        [
            r#"sleeper: call nap {"seconds":"1"}"#,
            nap,
            "sleeper: ",
            "sleeper: rested | (partial)",
            rested,
            "sleeper: ",
        ],
        "{events:#?}"
    );
    assert_eq!(events.last().unwrap()["turnComplete"], true);
    assert_eq!(s.wait(Duration::from_secs(10)), 0, "{}", s.logs());
    assert!(started.elapsed() < Duration::from_secs(8));
    // Everything committed is in the database; the input sent after SIGTERM is not.
    let stored = super::lines(&Value::Array(stored(&s, &id)));
    assert_eq!(
        stored,
        [
            "user: rest",
            r#"sleeper: call nap {"seconds":"1"}"#,
            nap,
            "sleeper: ",
            rested,
            "sleeper: ",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_grace_period_a_live_run_is_stopped_and_what_it_committed_stays() {
    let mut s = sleeper("30", "1");
    let id = s.session("sleeper", None).await;
    let (mut ws, _) = start_live(&s, &id).await;
    let started = Instant::now();
    s.terminate();
    let (_, close) = super::live::until_closed(&mut ws).await;
    assert_eq!(
        close,
        Some((1001, "the server is shutting down".to_owned()))
    );
    assert_eq!(s.wait(Duration::from_secs(10)), 0, "{}", s.logs());
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        super::lines(&Value::Array(stored(&s, &id))),
        ["user: rest", r#"sleeper: call nap {"seconds":"30"}"#]
    );
}

/// An eval run is a run for shutdown: SIGTERM lets it run during the grace period, then
/// stops it; the client gets a 503 that says so, nothing is saved, the process exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_an_eval_run_after_the_grace_period_and_saves_nothing() {
    let mut s = sleeper("30", "1");
    let set = serde_json::json!({"eval_set_id": "naps", "eval_cases": [{"eval_id": "c",
        "conversation": [{"invocation_id": "i",
            "user_content": {"parts": [{"text": "rest"}], "role": "user"},
            "final_response": {"parts": [{"text": "rested"}], "role": "model"}}],
        "session_input": {"app_name": "sleeper", "user_id": "u", "state": {}}}]});
    std::fs::create_dir_all(s.path("sleeper")).unwrap();
    std::fs::write(s.path("sleeper/naps.evalset.json"), set.to_string()).unwrap();
    let metric = serde_json::json!({"metricName": "response_match_score", "threshold": 0.5});
    let http = s.http.clone();
    let url = s.url("/apps/sleeper/eval-sets/naps/run");
    let run = tokio::spawn(async move {
        let r = http
            .post(url)
            .json(&serde_json::json!({"evalMetrics": [metric]}))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    });
    // The case naps for 30 s (its sessions are the eval engine's own, so nothing on the
    // server shows it started: give the request time to get there).
    let started = Instant::now();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    s.terminate();
    let (status, body) = run.await.unwrap();
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("eval run was stopped"), "{body}");
    assert_eq!(s.wait(Duration::from_secs(10)), 0, "{}", s.logs());
    assert!(started.elapsed() < Duration::from_secs(15));
    let saved: Vec<_> = std::fs::read_dir(s.path("sleeper"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(saved, ["naps.evalset.json"]);
}
