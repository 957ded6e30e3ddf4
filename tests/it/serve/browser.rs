//! ADK's own dev web UI (from the google-adk 1.39.1 wheel) served by `serve --ui` with a
//! token, driven in headless Chromium by `tests/fixtures/browser/adk_ui.mjs`: log in,
//! pick an app, chat with streaming off and on (an ADK 2 Workflow app too), state, traces, reload, new session,
//! list, switch and delete sessions; and its Evals tab (`adk_ui_evals.mjs`): create an
//! eval set, add the session as a case, run it, see it pass. `scripts/chromium.sh`
//! installs Chromium (Debian's package) and fetches the UI; playwright-core comes from
//! npm, pinned by a lock file.

use super::Serve;
use crate::common::{npm_install, repo};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The ADK 2 Workflow app of the dev UI test: the contract's appendix loop.
const HEADLINE_ROOT: &str = include_str!("../../data/graphs/appendix_loop/root_agent.yaml");
const HEADLINE_WRITER: &str = include_str!("../../data/graphs/appendix_loop/writer.yaml");

/// Replies the driver expects (see adk_ui.mjs).
const SCRIPT: &str = r#"
replies:
  greeter:
    - text: "Hello there!"
    - text: "Hello again."
      chunks: ["Hel", "lo", " again."]
  coordinator:
    - function_call: {name: transfer_to_agent, args: {agent_name: helper}}
  helper:
    - text: "The answer is 42."
  writer:
    - text: draft one
    - text: draft two FINAL
"#;

pub(super) fn chromium_sh(args: &[&str]) -> String {
    let out = Command::new(repo().join("scripts/chromium.sh"))
        .args(args)
        .output()
        .expect("run scripts/chromium.sh");
    assert!(
        out.status.success(),
        "scripts/chromium.sh {} failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

pub(super) fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .to_owned()
}

/// Serves `files` with `--script script.yaml --db memory --ui <ADK's UI> --token`, runs
/// the driver `tests/fixtures/browser/{driver}` against it, and returns the server, its
/// token and the driver's `result:` line.
async fn drive(driver_file: &str, files: &[(&str, &str)]) -> (Serve, String, Value) {
    chromium_sh(&["install"]);
    let chromium = chromium_sh(&["path"]);
    let ui_dir = target_dir().join("adk-ui-1.39.1");
    let ui = chromium_sh(&["adk-ui", ui_dir.to_str().unwrap()]);
    let driver = npm_install("browser", "playwright-core");
    std::fs::copy(
        repo().join("tests/fixtures/browser").join(driver_file),
        driver.join(driver_file),
    )
    .expect("copy the driver");
    let token = format!("t-{}", uuid::Uuid::new_v4().simple());
    let s = Serve::start(
        files,
        &[
            "apps",
            "--script",
            "script.yaml",
            "--db",
            "memory",
            "--ui",
            &ui,
            "--token",
            &token,
        ],
    );
    let link = format!("{}/dev-ui/?token={token}", s.base);
    assert!(s.logs().contains(&link), "{}", s.logs());

    let profile = tempfile::tempdir().unwrap();
    let shots = target_dir().join("browser-test");
    std::fs::create_dir_all(&shots).unwrap();
    let mut child = tokio::process::Command::new("node")
        .current_dir(&driver)
        .arg(driver_file)
        .arg(&chromium)
        .arg(&link)
        .arg(profile.path())
        .arg(&shots)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the browser test needs node on PATH");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let read = async {
        use tokio::io::AsyncReadExt;
        let (mut out, mut err) = (String::new(), String::new());
        let (mut so, mut se) = (stdout, stderr);
        let _ = tokio::join!(so.read_to_string(&mut out), se.read_to_string(&mut err));
        (out, err, child.wait().await)
    };
    let (out, err, status) = tokio::time::timeout(Duration::from_secs(150), read)
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the browser test took over 150 s; server logs:\n{}",
                s.logs()
            )
        });
    let status = status.unwrap();
    assert!(
        status.success(),
        "the dev UI failed against serve:\n{out}\n{err}\nserver logs:\n{}",
        s.logs()
    );
    let result: Value = out
        .lines()
        .find_map(|l| l.strip_prefix("result: "))
        .map(|j| serde_json::from_str(j).unwrap())
        .unwrap_or_else(|| panic!("no result line:\n{out}"));
    (s, token, result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adk_dev_ui_chats_and_manages_sessions_against_serve() {
    let files = [
        ("apps/greeter.yaml", super::GREETER),
        ("apps/team/root_agent.yaml", super::TEAM_ROOT),
        ("apps/team/helper.yaml", super::TEAM_HELPER),
        ("apps/headline_wf/root_agent.yaml", HEADLINE_ROOT),
        ("apps/headline_wf/writer.yaml", HEADLINE_WRITER),
        ("script.yaml", SCRIPT),
    ];
    let (s, token, result) = drive("adk_ui.mjs", &files).await;

    // What the UI did is what the server holds.
    let get = |path: String| {
        let r = s.http.get(s.url(&path)).bearer_auth(&token).send();
        async move { r.await.unwrap().json::<Value>().await.unwrap() }
    };
    let greeter = get("/apps/greeter/users/user/sessions".into()).await;
    let ids: Vec<&str> = greeter
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [result["secondSession"].as_str().unwrap()],
        "the deleted session is gone"
    );
    let team = get(format!(
        "/apps/team/users/user/sessions/{}",
        result["teamSession"].as_str().unwrap()
    ))
    .await;
    assert_eq!(team["state"]["answer"], "The answer is 42.");
    // The workflow app's turn, as the UI sent it: the appendix's loop, ending in the
    // published output (the dev UI shows the writer's drafts; the Routers say no text).
    let workflow = get(format!(
        "/apps/headline_wf/users/user/sessions/{}",
        result["workflowSession"].as_str().unwrap()
    ))
    .await;
    let events = workflow["events"].as_array().unwrap();
    assert_eq!(events.len(), 6, "{workflow}");
    assert_eq!(
        events[5]["output"],
        serde_json::json!({"published": "DRAFT TWO FINAL"})
    );
    assert_eq!(
        team["state"]["__session_metadata__"]["displayName"],
        "what is 40 + 2?"
    );
    let calls: Vec<&str> = result["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for expected in [
        "GET /apps/greeter/eval_sets",
        "GET /apps/greeter/eval_results",
        "GET /dev/build_graph/team",
    ] {
        assert!(
            calls.iter().any(|c| c.ends_with(expected)),
            "{expected} not called: {calls:#?}"
        );
    }
}

/// The app of the Evals tab test: it calls `get_weather`, then answers.
const WEATHER: &str = r#"
name: weather
model: m
instruction: "Answer about {city}."
tools: [{name: get_weather}]
state: {city: Paris}
define:
  tools:
    get_weather:
      description: Gets the weather.
      parameters: {type: object, properties: {city: {type: string}}, required: [city]}
      lookup: {key: "{{ city }}", table: {Paris: {weather: sunny}}}
"#;

const WEATHER_SCRIPT: &str = r#"
replies:
  weather:
    - function_call: {name: get_weather, args: {city: Paris}}
    - text: It is sunny in Paris.
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adk_dev_ui_eval_tab_creates_runs_and_shows_results_against_serve() {
    let files = [
        ("apps/weather.yaml", WEATHER),
        ("script.yaml", WEATHER_SCRIPT),
    ];
    let (s, token, result) = drive("adk_ui_evals.mjs", &files).await;
    let set = result["evalSet"].as_str().unwrap();
    let case = result["evalCase"].as_str().unwrap();
    // The UI's calls: the legacy routes, plus creating the set and the metric picker.
    let calls: Vec<&str> = result["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    for expected in [
        "200 POST /apps/weather/eval-sets".to_owned(),
        format!("200 POST /apps/weather/eval_sets/{set}/add_session"),
        format!("200 GET /apps/weather/eval_sets/{set}/evals"),
        "200 GET /apps/weather/metrics-info".to_owned(),
        format!("200 POST /apps/weather/eval_sets/{set}/run_eval"),
        "200 GET /apps/weather/eval_results".to_owned(),
    ] {
        assert!(calls.contains(&expected.as_str()), "{expected}: {calls:#?}");
    }
    let run = &result["requests"][format!("POST /apps/weather/eval_sets/{set}/run_eval")];
    assert_eq!(run["evalIds"], serde_json::json!([case]));
    assert!(
        result["shown"].as_str().unwrap().contains("1 PASS"),
        "{result}"
    );
    // What the UI made is in ADK's files beside the app.
    let file = s.path(&format!("apps/weather/{set}.evalset.json"));
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(stored["eval_cases"][0]["eval_id"], case);
    let r = s
        .http
        .get(s.url("/apps/weather/eval_results"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    let ids: Value = r.json().await.unwrap();
    assert_eq!(ids.as_array().unwrap().len(), 1, "{ids}");
}
