//! The run config of live runs: the workflow's `live` block, the command-line flags over
//! it, and its validation.

use crate::common;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;

/// Runs `adk-flow live root.yaml --model gemini:gemini-live-test ARGS` against a local
/// Gemini Live server with empty input; returns the setup message the model received.
fn setup_sent(root: &str, args: &[&str]) -> Value {
    let (mut messages, _) = exchange(root, args, "");
    messages.remove(0)["setup"].clone()
}

/// As [`setup_sent`] with `stdin`: every message the model received, and stdout.
fn exchange(root: &str, args: &[&str], stdin: &str) -> (Vec<Value>, String) {
    let dir = common::write_files(&[("root.yaml", root)]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = rt.spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
        let setup = match ws.next().await {
            Some(Ok(Message::Text(t))) => serde_json::from_str::<Value>(t.as_str()).unwrap(),
            Some(Ok(Message::Binary(b))) => serde_json::from_slice::<Value>(&b).unwrap(),
            other => panic!("no setup: {other:?}"),
        };
        ws.send(Message::text(json!({"setupComplete": {}}).to_string()))
            .await
            .unwrap();
        let mut messages = vec![setup];
        // Everything until the client closes.
        while let Some(Ok(m)) = ws.next().await {
            match m {
                Message::Text(t) => messages.push(serde_json::from_str(t.as_str()).unwrap()),
                Message::Binary(b) => messages.push(serde_json::from_slice(&b).unwrap()),
                Message::Close(_) => break,
                _ => {}
            }
        }
        messages
    });
    let out = common::bin()
        .current_dir(dir.path())
        .env("GEMINI_BASE_URL", format!("http://127.0.0.1:{port}"))
        .env("GEMINI_API_KEY", "test-key")
        .env_remove("GOOGLE_API_KEY")
        .args(["live", "root.yaml", "--model", "gemini:gemini-live-test"])
        .args(["--json", "--db", "memory"])
        .args(args)
        .write_stdin(stdin.to_owned())
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        rt.block_on(server).unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

const CONFIGURED: &str = "name: talker\ninstruction: Talk.\nlive:\n  response_modalities: [AUDIO]\n  input_transcription: false\n  session_resumption: true\n";

#[test]
fn the_workflows_live_block_reaches_the_models_setup() {
    let setup = setup_sent(CONFIGURED, &[]);
    assert_eq!(
        setup["generationConfig"],
        json!({"responseModalities": ["AUDIO"]})
    );
    assert!(setup.get("inputAudioTranscription").is_none(), "{setup}");
    assert_eq!(setup["outputAudioTranscription"], json!({}));
    assert_eq!(setup["sessionResumption"], json!({}));
}

#[test]
fn command_line_flags_override_the_live_block() {
    let setup = setup_sent(
        CONFIGURED,
        &[
            "--modality",
            "text",
            "--input-transcription",
            "--no-output-transcription",
            "--no-session-resumption",
        ],
    );
    assert_eq!(
        setup["generationConfig"],
        json!({"responseModalities": ["TEXT"]})
    );
    assert_eq!(setup["inputAudioTranscription"], json!({}));
    assert!(setup.get("outputAudioTranscription").is_none(), "{setup}");
    assert!(setup.get("sessionResumption").is_none(), "{setup}");
    // Without a live block: text on the command line, both transcriptions, no resumption.
    let setup = setup_sent("name: talker\ninstruction: Talk.\n", &[]);
    assert_eq!(
        setup["generationConfig"],
        json!({"responseModalities": ["TEXT"]})
    );
    assert_eq!(setup["inputAudioTranscription"], json!({}));
    assert_eq!(setup["outputAudioTranscription"], json!({}));
    assert!(setup.get("sessionResumption").is_none(), "{setup}");
}

#[test]
fn max_duration_from_the_live_block_ends_a_run_whose_input_stays_open() {
    let dir = common::write_files(&[
        (
            "root.yaml",
            "name: talker\nmodel: m\ninstruction: Talk.\nlive: {max_duration_secs: 1}\n",
        ),
        ("script.yaml", "replies:\n  talker:\n    - text: \"Hi.\"\n"),
    ]);
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("adk-flow"))
        .current_dir(dir.path())
        .args(["live", "root.yaml", "--script", "script.yaml", "--json"])
        .args(["--db", "memory"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"hello\n").unwrap();
    stdin.flush().unwrap();
    let started = Instant::now();
    // stdin stays open: only the duration limit can end the run.
    let out = loop {
        if let Some(_status) = child.try_wait().unwrap() {
            break child.wait_with_output().unwrap();
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the run did not end at its duration limit"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().expect("events");
    assert_eq!(last["turnComplete"], true, "{lines:?}");
    // The command-line flag wins over the block.
    let started = Instant::now();
    let out = common::bin()
        .current_dir(dir.path())
        .args(["live", "root.yaml", "--script", "script.yaml", "--json"])
        .args(["--db", "memory", "--max-duration", "0.2"])
        .write_stdin("")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_bad_live_block_is_reported_where_it_stands() {
    let dir = common::write_files(&[
        (
            "root.yaml",
            "name: talker\nmodel: m\nlive:\n  response_modalities: [VIDEO]\n  max_duration_secs: 0\n  save_audio: true\nsub_agents:\n  - config_path: helper.yaml\n",
        ),
        ("helper.yaml", "name: helper\nmodel: m\nlive: {}\n"),
    ]);
    let out = common::bin()
        .current_dir(dir.path())
        .args(["live", "root.yaml", "--json", "--db", "memory"])
        .write_stdin("")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "root.yaml:4:25: error:",
        "VIDEO",
        "root.yaml:5:22: error: `max_duration_secs` must be at least 1",
        "root.yaml:6:3: error:",
        "save_audio",
    ] {
        assert!(stderr.contains(expected), "{expected} not in:\n{stderr}");
    }
}

#[test]
fn live_belongs_in_the_root_file() {
    let dir = common::write_files(&[
        (
            "root.yaml",
            "name: talker\nmodel: m\nsub_agents:\n  - config_path: helper.yaml\n",
        ),
        (
            "helper.yaml",
            "name: helper\nmodel: m\nlive: {save_live_blob: true}\n",
        ),
    ]);
    let out = common::bin()
        .current_dir(dir.path())
        .args(["live", "root.yaml", "--json", "--db", "memory"])
        .write_stdin("")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("helper.yaml:3:1: error: `live` belongs in the workflow's root file"),
        "{stderr}"
    );
}

#[test]
fn a_before_model_reply_reaches_gemini_live_as_context_not_as_a_question() {
    let root = r#"
name: desk
instruction: Help.
before_model_callbacks: [{name: closed}]
define:
  callbacks:
    closed:
      reply: "We are closed."
"#;
    let (messages, stdout) = exchange(root, &[], "hi\n");
    // The reply stood in for the model's turn...
    let texts: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    assert_eq!(texts.len(), 3, "{stdout}");
    assert_eq!(texts[1]["content"]["parts"][0]["text"], "We are closed.");
    assert_eq!(texts[2]["turnComplete"], true);
    // ...and the model got the exchange without being asked to answer.
    assert_eq!(
        messages[1],
        json!({"clientContent": {"turns": [
            {"parts": [{"text": "hi"}], "role": "user"},
            {"parts": [{"text": "We are closed."}], "role": "model"}
        ], "turnComplete": false}}),
        "{messages:?}"
    );
    assert_eq!(messages.len(), 2, "{messages:?}");
}
