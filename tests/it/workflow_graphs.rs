//! ADK 2 Workflow graphs (`agent_class: Workflow`) against ADK 2.13's own runs: every case
//! of `tests/data/graphs/` (recorded by `scripts/adk2-record.py`) run through
//! `adk-flow run --script --json`, its events, stored session and model requests (what
//! each single-turn node saw) compared with ADK's after the same normalization (ids,
//! timestamps and invocation ids dropped, call ids numbered), its exit status and its
//! warnings.

use crate::common::bin;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graphs")
}

/// The normalization of `tests/data/graphs/normalize.py`.
fn normalize(lines: &str) -> Vec<String> {
    let mut calls: HashMap<String, String> = HashMap::new();
    let mut call = |id: &Value| -> Value {
        match id.as_str() {
            Some(s) if !s.is_empty() => {
                let n = calls.len() + 1;
                Value::String(
                    calls
                        .entry(s.to_owned())
                        .or_insert_with(|| format!("call:{n}"))
                        .clone(),
                )
            }
            _ => id.clone(),
        }
    };
    let mut out = Vec::new();
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(Value::Object(mut ev)) = serde_json::from_str::<Value>(line) else {
            out.push(format!("unparsed: {line}"));
            continue;
        };
        for k in ["id", "timestamp", "invocationId"] {
            ev.remove(k);
        }
        if let Some(parts) = ev
            .get_mut("content")
            .and_then(|c| c.get_mut("parts"))
            .and_then(Value::as_array_mut)
        {
            for p in parts {
                for key in ["functionCall", "functionResponse"] {
                    if let Some(id) = p.get_mut(key).and_then(|f| f.get_mut("id")) {
                        *id = call(id);
                    }
                }
            }
        }
        if let Some(Value::Array(ids)) = ev.get_mut("longRunningToolIds") {
            let mut named: Vec<Value> = ids.iter().map(&mut call).collect();
            named.sort_by_key(|v| v.to_string());
            *ids = named;
        }
        out.push(sorted(&Value::Object(ev)).to_string());
    }
    out
}

fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn expected(case: &Path, file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(case.join(file)).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| sorted(&serde_json::from_str::<Value>(l).unwrap()).to_string())
        .collect()
}

/// A RouterError's message reduced to `NODE: FIELD`: the contract leaves the reason's
/// wording free (jinja2's and minijinja's differ).
fn mask_router_errors(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .map(|line| {
            let mut v: Value = serde_json::from_str(&line).unwrap();
            if v["errorCode"] == "RouterError" {
                let message = v["errorMessage"].as_str().unwrap_or("");
                let kept: Vec<&str> = message.split(": ").take(2).collect();
                v["errorMessage"] = Value::from(kept.join(": "));
            }
            sorted(&v).to_string()
        })
        .collect()
}

/// A model request as the cases record it: agent, contents (call ids dropped, a text that
/// is a JSON object re-dumped with sorted keys), system instruction text.
fn request(v: &Value) -> String {
    let mut contents = v["contents"].clone();
    for c in contents.as_array_mut().into_iter().flatten() {
        for p in c["parts"].as_array_mut().into_iter().flatten() {
            for key in ["functionCall", "functionResponse"] {
                if let Some(f) = p.get_mut(key).and_then(Value::as_object_mut) {
                    f.remove("id");
                }
            }
            if let Some(text) = p["text"].as_str()
                && let Ok(obj @ Value::Object(_)) = serde_json::from_str::<Value>(text)
            {
                p["text"] = Value::from(sorted(&obj).to_string());
            }
        }
    }
    let si = match &v["systemInstruction"] {
        Value::String(s) => s.clone(),
        other => other["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["text"].as_str())
            .collect(),
    };
    sorted(&serde_json::json!({"agent": v["agent"], "contents": contents, "systemInstruction": si}))
        .to_string()
}

struct Ran {
    events: Vec<String>,
    requests: Vec<String>,
    session: Vec<String>,
    exit: i32,
    stderr: String,
}

fn run_case(case: &Path) -> Ran {
    let messages = std::fs::read_to_string(case.join("messages.txt")).unwrap();
    let db_dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", db_dir.path().join("s.db").display());
    let mut cmd = bin();
    cmd.current_dir(case).args([
        "run",
        "root_agent.yaml",
        "--script",
        "script.yaml",
        "--json",
        "--session",
        "s1",
        "--db",
        &db,
        "--dump-requests",
    ]);
    let requests_file = db_dir.path().join("requests.jsonl");
    cmd.arg(&requests_file);
    for m in messages.lines() {
        cmd.args(["--message", m]);
    }
    let out = cmd.output().unwrap();
    let show = bin()
        .current_dir(case)
        .args(["sessions", "show", "s1", "--json", "--db", &db])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&show.stdout).into_owned();
    // `sessions show --json` prints the session, then its events, one per line.
    let session_events: String = shown
        .lines()
        .filter(|l| l.contains("\"author\""))
        .map(|l| format!("{l}\n"))
        .collect();
    let requests = std::fs::read_to_string(&requests_file)
        .unwrap_or_default()
        .lines()
        .map(|l| request(&serde_json::from_str(l).unwrap()))
        .collect();
    Ran {
        requests,
        events: normalize(&String::from_utf8_lossy(&out.stdout)),
        session: normalize(&session_events),
        exit: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Every recorded case: the same events, the same stored session, the same exit status.
#[test]
fn adk_2_13_reference_runs() {
    let mut failures = Vec::new();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("expected.events.jsonl").is_file())
        .collect();
    cases.sort();
    assert!(cases.len() >= 22, "{cases:?}");
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let ran = run_case(case);
        let want_exit: i32 = std::fs::read_to_string(case.join("expected.exit"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let want_events = mask_router_errors(expected(case, "expected.events.jsonl"));
        let got_events = mask_router_errors(ran.events.clone());
        if got_events != want_events {
            failures.push(format!(
                "{name}: events differ\n--- ADK 2.13\n{}\n--- adk-flow\n{}\nstderr: {}",
                want_events.join("\n"),
                got_events.join("\n"),
                ran.stderr
            ));
        }
        if ran.exit != want_exit {
            failures.push(format!(
                "{name}: exit {} (ADK: {want_exit}); stderr: {}",
                ran.exit, ran.stderr
            ));
        }
        if case.join("expected.requests.jsonl").is_file() {
            let text = std::fs::read_to_string(case.join("expected.requests.jsonl")).unwrap();
            let want: Vec<String> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| request(&serde_json::from_str(l).unwrap()))
                .collect();
            if ran.requests != want {
                failures.push(format!(
                    "{name}: model requests differ\n--- ADK 2.13\n{}\n--- adk-flow\n{}",
                    want.join("\n"),
                    ran.requests.join("\n")
                ));
            }
        }
        let want_session = mask_router_errors(expected(case, "expected.session.jsonl"));
        if mask_router_errors(ran.session.clone()) != want_session {
            failures.push(format!(
                "{name}: stored session differs\n--- ADK 2.13\n{}\n--- adk-flow\n{}",
                want_session.join("\n"),
                ran.session.join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A route that matches no edge: ADK only logs a warning; adk-flow warns on stderr,
/// naming the node and the route, and the run goes on (exit 0).
#[test]
fn a_route_matching_no_edge_is_a_warning_naming_node_and_label() {
    let ran = run_case(&cases_dir().join("route_no_match"));
    assert_eq!(ran.exit, 0, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("`decide`") && ran.stderr.contains("\"maybe\""),
        "{}",
        ran.stderr
    );
}
