//! `adk-flow serve`: the real binary on 127.0.0.1:0, spoken to over real HTTP.
//!
//! - `routes`: every route, its shapes, status codes and error bodies;
//! - `sse`: `/run_sse` framing, streaming, the artifact split, errors mid-run;
//! - `reload`: hot reload of edited workflow files;
//! - `concurrency`: many sessions, one turn at a time per session, disconnects;
//! - `safety`: host and origin guards, the token, CORS, body and run limits;
//! - `replicas`: two servers on one PostgreSQL take turns on a session;
//! - `shutdown`: SIGTERM during a run;
//! - `live`: `/run_live` over a websocket: transfers, bad frames, a dropped client, the cap;
//! - `evals`: the eval routes as the dev UI drives them, against ADK's recorded answers;
//! - `browser`: ADK's own dev web UI in headless Chromium;
//! - `page`: adk-flow's own web page: its routes, then the page in headless Chromium;
//! - `traces`: `/debug/trace/...` on a run with a transfer and a tool call, an AgentTool;
//! - `otlp`: the same spans at an OTLP/HTTP collector of our own; the run's log fields.

mod browser;
mod concurrency;
mod evals;
mod graphs;
mod live;
mod otlp;
mod page;
mod page_apps;
mod reload;
mod replicas;
mod routes;
mod safety;
mod scripts;
mod shutdown;
mod sse;
mod traces;

use crate::common::write_files;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A workflow with one agent that remembers its answer.
pub const GREETER: &str = r#"
name: greeter
model: m
description: Says hello.
instruction: Greet the user.
output_key: greeting
"#;

/// An ADK app folder: a coordinator that hands over to a helper in another file.
pub const TEAM_ROOT: &str = r#"
name: coordinator
model: m
description: Routes questions.
instruction: Hand every question to helper.
sub_agents:
  - config_path: helper.yaml
"#;

/// The helper of [`TEAM_ROOT`].
pub const TEAM_HELPER: &str = r#"
name: helper
model: m
description: Answers.
instruction: Answer.
output_key: answer
"#;

/// Replies for every agent above.
pub const SCRIPT: &str = r#"
replies:
  greeter:
    - text: "Hello there!"
      chunks: ["Hel", "lo ", "there!"]
    - text: "Hello again."
  coordinator:
    - function_call: {name: transfer_to_agent, args: {agent_name: helper}}
  helper:
    - text: "The answer is 42."
"#;

/// A workflow that saves an artifact twice.
pub const WRITER: &str = r#"
name: writer
model: m
instruction: Write.
tools: [{name: save_report}]
define:
  tools:
    save_report:
      description: Save the report.
      parameters: {type: object, properties: {text: {type: string}}, required: [text]}
      save_artifact: {name: report.md, content: "{{ text }}", mime_type: text/markdown}
"#;

/// Replies for [`WRITER`].
pub const WRITER_SCRIPT: &str = r#"
replies:
  writer:
    - function_call: {name: save_report, args: {text: "what?>>? ~~"}}
    - function_call: {name: save_report, args: {text: "second"}}
    - text: saved twice
"#;

/// A workflow whose agent runs `sleep SECONDS` before it answers (needs
/// `--allow-commands`): a run that takes a while.
pub const SLEEPER: &str = r#"
name: sleeper
model: m
instruction: Rest, then answer.
output_key: rested
tools: [{name: nap}]
define:
  tools:
    nap:
      description: Sleep.
      parameters: {type: object, properties: {seconds: {type: string}}, required: [seconds]}
      command: {program: sleep, args: ["{{ seconds }}"], timeout_secs: 60}
"#;

/// Replies for [`SLEEPER`], two turns of: a nap of `seconds`, then "rested".
pub fn sleeper_script(seconds: &str) -> String {
    let turn = format!(
        "    - function_call: {{name: nap, args: {{seconds: \"{seconds}\"}}}}\n    - text: rested\n"
    );
    format!("replies:\n  sleeper:\n{turn}{turn}")
}

/// The usual files: `greeter.yaml`, `team/` (an ADK app folder), the script, and a test
/// file that must not become an app.
pub fn app_files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("apps/greeter.yaml", GREETER),
        ("apps/team/root_agent.yaml", TEAM_ROOT),
        ("apps/team/helper.yaml", TEAM_HELPER),
        (
            "apps/greeter.test.yaml",
            "workflow: greeter.yaml\ntests:\n  - name: t\n    turns: []\n",
        ),
        ("script.yaml", SCRIPT),
    ]
}

/// A running `adk-flow serve`, killed when dropped.
pub struct Serve {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Everything it wrote to stderr so far.
    logs: Arc<Mutex<String>>,
    /// The directory it runs in.
    pub dir: tempfile::TempDir,
    /// An HTTP client.
    pub http: reqwest::Client,
}

impl Serve {
    /// Writes `files`, then runs `adk-flow serve ARGS --port 0 --db memory` in that
    /// directory and waits until it listens.
    pub fn start(files: &[(&str, &str)], args: &[&str]) -> Serve {
        Self::start_in(write_files(files), args)
    }

    /// The [`SLEEPER`] app, its script napping `seconds`, sessions in `db`, command tools
    /// allowed, plus `extra` arguments.
    pub fn sleeper(seconds: &str, db: &str, extra: &[&str]) -> Serve {
        let script = sleeper_script(seconds);
        let mut args = vec!["sleeper.yaml", "--script", "script.yaml", "--db", db];
        args.push("--allow-commands");
        args.extend_from_slice(extra);
        Self::start(
            &[("sleeper.yaml", SLEEPER), ("script.yaml", &script)],
            &args,
        )
    }

    /// As [`Serve::start`], in an existing directory.
    pub fn start_in(dir: tempfile::TempDir, args: &[&str]) -> Serve {
        Self::start_env(dir, args, &[])
    }

    /// As [`Serve::start_in`], with these environment variables set (`RUST_LOG` among
    /// them replaces the default).
    pub fn start_env(dir: tempfile::TempDir, args: &[&str], env: &[(&str, &str)]) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_adk-flow"))
            .current_dir(dir.path())
            .arg("serve")
            .args(args)
            .args(["--port", "0"])
            .env_remove("ADK_FLOW_DB")
            .env_remove("ADK_FLOW_TOKEN")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env("RUST_LOG", "adk_flow=info,warn")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start adk-flow serve");
        let stderr = child.stderr.take().expect("stderr");
        let logs = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = Arc::clone(&logs);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line
                    .split(" on ")
                    .nth(1)
                    .filter(|u| u.starts_with("http://"))
                {
                    let _ = tx.send(url.trim().to_owned());
                }
                let mut logs = sink.lock().unwrap();
                logs.push_str(&line);
                logs.push('\n');
            }
        });
        let base = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(base) => base,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                std::thread::sleep(Duration::from_millis(100));
                panic!("serve did not start:\n{}", logs.lock().unwrap());
            }
        };
        Serve {
            child: Some(child),
            base,
            logs,
            dir,
            http: reqwest::Client::new(),
        }
    }

    /// What the server logged so far.
    pub fn logs(&self) -> String {
        self.logs.lock().unwrap().clone()
    }

    /// Waits until the logs contain `needle`.
    pub async fn wait_for_log(&self, needle: &str) -> String {
        let started = Instant::now();
        loop {
            let logs = self.logs();
            if logs.contains(needle) {
                return logs;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "`{needle}` never appeared in the logs:\n{logs}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The URL of a path.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A path of the directory the server runs in.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// GET: status and body (JSON when it parses, else a string).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).send().await.expect("GET");
        status_and_body(r).await
    }

    /// A request with a JSON body: status and body.
    pub async fn send(&self, method: &str, path: &str, body: Value) -> (u16, Value) {
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let r = self
            .http
            .request(method, self.url(path))
            .json(&body)
            .send()
            .await
            .expect("request");
        status_and_body(r).await
    }

    /// Creates a session (`sessionId` when given) and returns its id.
    pub async fn session(&self, app: &str, id: Option<&str>) -> String {
        let body = match id {
            Some(id) => json!({ "sessionId": id }),
            None => json!({}),
        };
        let (status, s) = self
            .send("POST", &format!("/apps/{app}/users/u/sessions"), body)
            .await;
        assert_eq!(status, 200, "{s}");
        s["id"].as_str().unwrap().to_owned()
    }

    /// `POST /run_sse`: the raw body.
    pub async fn run_sse_raw(
        &self,
        app: &str,
        session: &str,
        text: &str,
        streaming: bool,
    ) -> String {
        let r = self
            .http
            .post(self.url("/run_sse"))
            .json(&run_body(app, session, text, streaming))
            .send()
            .await
            .expect("run_sse");
        assert_eq!(r.status(), 200);
        r.text().await.unwrap()
    }

    /// `POST /run_sse`: the frames, parsed.
    pub async fn run_sse(
        &self,
        app: &str,
        session: &str,
        text: &str,
        streaming: bool,
    ) -> Vec<Value> {
        frames(&self.run_sse_raw(app, session, text, streaming).await)
    }

    /// Starts `POST /run` in the background; the handle answers the events.
    pub fn spawn_run(
        &self,
        app: &str,
        session: &str,
        text: &str,
    ) -> tokio::task::JoinHandle<Value> {
        let request = self
            .http
            .post(self.url("/run"))
            .json(&run_body(app, session, text, false));
        tokio::spawn(async move { request.send().await.unwrap().json::<Value>().await.unwrap() })
    }

    /// The stored events of a session, as short lines (see [`lines`]).
    pub async fn stored_lines(&self, app: &str, session: &str) -> Vec<String> {
        let (status, s) = self
            .get(&format!("/apps/{app}/users/u/sessions/{session}"))
            .await;
        assert_eq!(status, 200, "{s}");
        lines(&s["events"])
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let pid = self.child.as_ref().expect("running").id();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap()),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("SIGTERM");
    }

    /// Waits for the process to exit; its exit code.
    pub fn wait(&mut self, limit: Duration) -> i32 {
        let mut child = self.child.take().expect("running");
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!("serve did not exit within {limit:?}:\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The body of a run request, as the UI sends it.
pub fn run_body(app: &str, session: &str, text: &str, streaming: bool) -> Value {
    json!({
        "appName": app,
        "userId": "u",
        "sessionId": session,
        "newMessage": {"role": "user", "parts": [{"text": text}]},
        "streaming": streaming,
        "stateDelta": null,
    })
}

/// A JSON array of events as `author: what` lines ([`crate::common::simplify`]).
pub fn lines(events: &Value) -> Vec<String> {
    events
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {events}"))
        .iter()
        .map(crate::common::simplify)
        .collect()
}

/// Status and body of a response.
pub async fn status_and_body(r: reqwest::Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

/// Parses an SSE body, checking the framing: only `data: <JSON>` frames, each followed
/// by one blank line.
pub fn frames(body: &str) -> Vec<Value> {
    assert!(
        body.is_empty() || body.ends_with("\n\n"),
        "the stream does not end with a whole frame: {body:?}"
    );
    body.split_terminator("\n\n")
        .map(|frame| {
            let json = frame
                .strip_prefix("data: ")
                .unwrap_or_else(|| panic!("not a data frame: {frame:?}"));
            assert!(!json.contains('\n'), "a frame spans lines: {frame:?}");
            serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"))
        })
        .collect()
}

/// The directory of the repository's workflows.
pub fn workflows() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("workflows")
}
