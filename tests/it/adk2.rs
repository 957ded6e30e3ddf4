//! ADK 2 Workflow graphs both ways (#18 item 6): the reference streams of
//! `tests/data/graphs/`, recorded from google-adk 2.13.0 with the repository's `adk_flow`
//! package (`python/`), and the runs that compare ADK 2.13 with adk-flow live. (adk-flow's
//! own runs against the recorded streams are the graph runtime's tests.)
//!
//! Tests that need ADK 2.13 use the venv of `scripts/adk2.sh` (checked with `--check`,
//! never installed from here: CI needs neither Python nor the network), with this
//! checkout's `adk_flow` (`python/`; `adk2-run.py` and the package's tests put it first).
//! Without it they print why they cannot run (on the terminal, past the harness's
//! capture) and return; with `ADK_FLOW_REQUIRE_ADK2=1` a missing venv
//! fails them instead. Install it with `scripts/adk2.sh`.

use crate::common;

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The case folders of `tests/data/graphs/`, sorted.
fn cases() -> Vec<PathBuf> {
    let root = common::repo().join("tests/data/graphs");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("root_agent.yaml").is_file())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no cases under {}", root.display());
    out
}

fn name(case: &Path) -> String {
    case.file_name().unwrap().to_string_lossy().into_owned()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn messages(case: &Path) -> Vec<String> {
    read(&case.join("messages.txt"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

fn expected_exit(case: &Path) -> i32 {
    read(&case.join("expected.exit")).trim().parse().unwrap()
}

/// `tests/data/graphs/normalize.py`, in Rust: `id`, `timestamp` and `invocationId`
/// dropped, function-call ids numbered `call:N` by first appearance, a RouterError's
/// message cut to its `NODE: FIELD` (the reason's wording is free); with `loose`, empty
/// maps and lists inside `actions` (and an `actions` left empty) dropped too.
fn normalize(jsonl: &str, loose: bool) -> Vec<Value> {
    let mut calls: HashMap<String, String> = HashMap::new();
    let mut call = |v: &mut Value| {
        if let Some(id) = v.as_str().filter(|s| !s.is_empty()) {
            let n = calls.len() + 1;
            let placeholder = calls
                .entry(id.to_owned())
                .or_insert_with(|| format!("call:{n}"));
            *v = Value::String(placeholder.clone());
        }
    };
    let mut out = Vec::new();
    for line in jsonl.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(Value::Object(mut ev)) = serde_json::from_str::<Value>(line) else {
            out.push(serde_json::json!({ "__unparsed__": line }));
            continue;
        };
        for key in ["id", "timestamp", "invocationId"] {
            ev.remove(key);
        }
        // A RouterError's message is `NODE: FIELD: REASON`, the reason's wording free.
        if ev.get("errorCode").and_then(Value::as_str) == Some("RouterError")
            && let Some(Value::String(m)) = ev.get_mut("errorMessage")
        {
            let prefix: Vec<&str> = m.splitn(3, ": ").take(2).collect();
            *m = format!("{}: ...", prefix.join(": "));
        }
        let request = ev.contains_key("contents");
        let contents: Vec<&mut Value> = ev
            .iter_mut()
            .filter_map(|(k, v)| match (k.as_str(), v) {
                ("content", v) => Some(vec![v]),
                ("contents", Value::Array(a)) => Some(a.iter_mut().collect()),
                _ => None,
            })
            .flatten()
            .collect();
        for content in contents {
            let Some(parts) = content.get_mut("parts").and_then(Value::as_array_mut) else {
                continue;
            };
            for part in parts {
                for key in ["functionCall", "functionResponse"] {
                    if let Some(id) = part.get_mut(key).and_then(|p| p.get_mut("id")) {
                        call(id);
                    }
                }
                if let Some(text) = part.get_mut("text").filter(|_| request) {
                    sort_json_text(text);
                }
            }
        }
        if let Some(ids) = ev
            .get_mut("longRunningToolIds")
            .and_then(Value::as_array_mut)
        {
            ids.iter_mut().for_each(&mut call);
            ids.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        }
        if let Some(Value::Object(actions)) = ev.get_mut("actions") {
            for key in ["requestedAuthConfigs", "requestedToolConfirmations"] {
                if let Some(Value::Object(m)) = actions.get_mut(key) {
                    let renamed: Map<String, Value> = std::mem::take(m)
                        .into_iter()
                        .map(|(k, v)| {
                            let mut k = Value::String(k);
                            call(&mut k);
                            (k.as_str().unwrap().to_owned(), v)
                        })
                        .collect();
                    *m = renamed;
                }
            }
            if loose {
                actions.retain(|_, v| !is_empty(v));
            }
        }
        if loose && ev.get("actions").is_some_and(is_empty) {
            ev.remove("actions");
        }
        out.push(Value::Object(ev));
    }
    out
}

/// A model request's text part that is a JSON object, re-dumped with sorted keys: a
/// node's mapping input reaches its model as JSON text, and ADK orders a JoinNode's
/// mapping by Python set iteration, which varies between runs.
fn sort_json_text(text: &mut Value) {
    fn sorted(v: Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut entries: Vec<(String, Value)> = m.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
            }
            Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
            other => other,
        }
    }
    if let Some(Ok(value @ Value::Object(_))) = text.as_str().map(serde_json::from_str::<Value>) {
        *text = Value::String(sorted(value).to_string());
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Asserts two normalized streams are equal, showing the first event that differs.
fn assert_same(what: &str, ours: &[Value], theirs: &[Value]) {
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert_eq!(a, b, "{what}: line {} differs", i + 1);
    }
    assert_eq!(
        ours.len(),
        theirs.len(),
        "{what}: {} events, expected {}\nours: {ours:#?}\nexpected: {theirs:#?}",
        ours.len(),
        theirs.len()
    );
}

/// The venv's python when `scripts/adk2.sh --check` finds google-adk 2.13 and adk_flow
/// installed; otherwise prints why `test` cannot run and returns None (or panics when
/// `ADK_FLOW_REQUIRE_ADK2=1`).
fn adk2_python(test: &str) -> Option<PathBuf> {
    let script = common::repo().join("scripts/adk2.sh");
    let out = Command::new("bash").arg(&script).arg("--check").output();
    let why = match out {
        Ok(out) if out.status.success() => {
            return Some(PathBuf::from(
                String::from_utf8_lossy(&out.stdout).trim().to_owned(),
            ));
        }
        Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        Err(e) => format!("cannot run bash {}: {e}", script.display()),
    };
    let message = format!(
        "{test}: CANNOT RUN, not passed: Python google-adk 2.13.0 with adk_flow is not \
         installed ({why}). Install it with scripts/adk2.sh (needs python3 and PyPI)."
    );
    if std::env::var("ADK_FLOW_REQUIRE_ADK2").as_deref() == Ok("1") {
        panic!("{message} ADK_FLOW_REQUIRE_ADK2=1 requires it.");
    }
    // Straight to the process's stderr: `eprintln!` is captured by the test harness and
    // shown only for failed tests, so a test that could not run would pass silently.
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "\n{message}");
    None
}

/// One run: its raw stdout, the stored session's events and the model requests (when
/// written), the exit code.
struct Run {
    events: String,
    session: Option<String>,
    requests: Option<String>,
    code: i32,
    stderr: String,
}

/// Runs `root` in ADK 2.13 through `scripts/adk2-run.py`.
fn run_adk2(python: &Path, dir: &Path, root: &str, script: &str, messages: &[String]) -> Run {
    let session = tempfile::NamedTempFile::new().unwrap();
    let requests = tempfile::NamedTempFile::new().unwrap();
    let out = Command::new(python)
        .arg(common::repo().join("scripts/adk2-run.py"))
        .current_dir(dir)
        .args([root, "--script", script, "--session-out"])
        .arg(session.path())
        .arg("--dump-requests")
        .arg(requests.path())
        .args(messages.iter().flat_map(|m| ["--message", m.as_str()]))
        .output()
        .unwrap();
    Run {
        events: String::from_utf8(out.stdout).unwrap(),
        session: Some(read(session.path())),
        requests: Some(read(requests.path())),
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs `root` in adk-flow: `run ROOT --script SCRIPT --json --db memory --message ...`,
/// with `--dump-requests`.
fn run_adk_flow(dir: &Path, root: &str, script: &str, messages: &[String]) -> Run {
    let requests = tempfile::NamedTempFile::new().unwrap();
    let out = common::bin()
        .current_dir(dir)
        .args(["run", root, "--script", script, "--json", "--db", "memory"])
        .arg("--dump-requests")
        .arg(requests.path())
        .args(messages.iter().flat_map(|m| ["--message", m.as_str()]))
        .output()
        .unwrap();
    Run {
        events: String::from_utf8(out.stdout).unwrap(),
        session: None,
        requests: Some(read(requests.path())),
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `f` of every item, a few at a time (each ADK run is a Python process that spends
/// most of its 2 s importing ADK), in the items' order.
fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let width = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(width) {
        std::thread::scope(|s| {
            let handles: Vec<_> = chunk.iter().map(|item| s.spawn(|| f(item))).collect();
            out.extend(handles.into_iter().map(|h| h.join().unwrap()));
        });
    }
    out
}

#[test]
fn references_are_complete_and_normalized() {
    for case in cases() {
        let n = name(&case);
        for file in ["script.yaml", "messages.txt", "expected.exit"] {
            assert!(case.join(file).is_file(), "{n}: {file} is missing");
        }
        assert!(!messages(&case).is_empty(), "{n}: no messages");
        assert!([0, 1].contains(&expected_exit(&case)), "{n}: expected.exit");
        for kind in ["events", "session", "requests"] {
            let raw = read(&case.join(format!("adk.{kind}.jsonl")));
            let expected = read(&case.join(format!("expected.{kind}.jsonl")));
            assert_same(
                &format!("{n}: expected.{kind}.jsonl is adk.{kind}.jsonl normalized"),
                &normalize(&expected, false),
                &normalize(&raw, false),
            );
        }
        // The session holds the printed events plus one user message per turn sent.
        let events = normalize(&read(&case.join("expected.events.jsonl")), false);
        let session = normalize(&read(&case.join("expected.session.jsonl")), false);
        // A user message has an empty node path (a workflow named `user` authors its
        // Routers' events `user` too).
        let (users, rest): (Vec<&Value>, Vec<&Value>) = session
            .iter()
            .partition(|e| e["author"] == "user" && e["nodeInfo"]["path"] == "");
        assert_eq!(rest, events.iter().collect::<Vec<_>>(), "{n}: session");
        // A failed turn is the last one sent.
        let sent = messages(&case).len();
        if expected_exit(&case) == 0 {
            assert_eq!(users.len(), sent, "{n}: user messages stored");
        } else {
            assert!(
                (1..=sent).contains(&users.len()),
                "{n}: user messages stored"
            );
        }
    }
}

/// The contract's appendix (shared/reference/adk-workflow.md), which drops the three
/// empty maps of `actions` from every line but the first.
const APPENDIX: &str = r#"{"content":{"parts":[{"text":"draft one"}],"role":"model"},"author":"writer","actions":{"stateDelta":{"draft":"draft one"},"artifactDelta":{},"requestedAuthConfigs":{},"requestedToolConfirmations":{}},"nodeInfo":{"path":"headline_wf@1/writer@1","outputFor":["headline_wf@1/writer@1"],"messageAsOutput":true}}
{"author":"headline_wf","actions":{"stateDelta":{"attempts":1},"route":"retry"},"output":"draft one","nodeInfo":{"path":"headline_wf@1/judge@1","outputFor":["headline_wf@1/judge@1"]}}
{"content":{"parts":[{"text":"draft two FINAL"}],"role":"model"},"author":"writer","actions":{"stateDelta":{"draft":"draft two FINAL"}},"nodeInfo":{"path":"headline_wf@1/writer@2","outputFor":["headline_wf@1/writer@2"],"messageAsOutput":true}}
{"author":"headline_wf","actions":{"stateDelta":{"attempts":2},"route":"done"},"output":"draft two FINAL","nodeInfo":{"path":"headline_wf@1/judge@2","outputFor":["headline_wf@1/judge@2"]}}
{"author":"headline_wf","actions":{"stateDelta":{}},"output":{"published":"DRAFT TWO FINAL"},"nodeInfo":{"path":"headline_wf@1/publish@1","outputFor":["headline_wf@1/publish@1","headline_wf@1"]}}"#;

#[test]
fn appendix_loop_is_the_contracts_appendix() {
    let dir = common::repo().join("tests/data/graphs/appendix_loop");
    let recorded = read(&dir.join("adk.events.jsonl"));
    let first = APPENDIX.lines().next().unwrap();
    assert_eq!(
        normalize(recorded.lines().next().unwrap(), false),
        normalize(first, false),
        "the first line is verbatim"
    );
    assert_same(
        "appendix_loop",
        &normalize(&recorded, true),
        &normalize(APPENDIX, true),
    );
    // The user's message is stored but not printed: 6 events in the session.
    assert_eq!(read(&dir.join("adk.session.jsonl")).lines().count(), 6);
}

#[test]
fn normalize_matches_the_python_normalizer_rules() {
    let raw = r#"{"id":"x","timestamp":1.5,"invocationId":"e-1","author":"a","content":{"parts":[{"functionCall":{"id":"adk-9","name":"f","args":{}}}],"role":"model"},"longRunningToolIds":[],"actions":{"stateDelta":{},"artifactDelta":{}}}
{"author":"a","content":{"parts":[{"functionResponse":{"id":"adk-9","name":"f","response":{}}}],"role":"user"},"actions":{"stateDelta":{"k":1},"artifactDelta":{}}}"#;
    let strict = normalize(raw, false);
    assert_eq!(
        strict[0],
        serde_json::json!({"author":"a","content":{"parts":[{"functionCall":{"id":"call:1","name":"f","args":{}}}],"role":"model"},"longRunningToolIds":[],"actions":{"stateDelta":{},"artifactDelta":{}}})
    );
    assert_eq!(
        strict[1]["content"]["parts"][0]["functionResponse"]["id"],
        "call:1"
    );
    let loose = normalize(raw, true);
    assert!(loose[0].get("actions").is_none());
    assert_eq!(
        loose[1]["actions"],
        serde_json::json!({"stateDelta":{"k":1}})
    );
}

#[test]
fn adk2_reproduces_the_references() {
    let Some(python) = adk2_python("adk2_reproduces_the_references") else {
        return;
    };
    let cases = cases();
    let runs = in_parallel(&cases, |case| {
        run_adk2(
            &python,
            case,
            "root_agent.yaml",
            "script.yaml",
            &messages(case),
        )
    });
    for (case, run) in cases.iter().zip(runs) {
        let n = name(case);
        assert_eq!(run.code, expected_exit(case), "{n}: exit\n{}", run.stderr);
        assert_same(
            &format!("{n}: ADK 2.13 events"),
            &normalize(&run.events, false),
            &normalize(&read(&case.join("expected.events.jsonl")), false),
        );
        assert_same(
            &format!("{n}: ADK 2.13 session"),
            &normalize(run.session.as_deref().unwrap(), false),
            &normalize(&read(&case.join("expected.session.jsonl")), false),
        );
        assert_same(
            &format!("{n}: ADK 2.13 model requests"),
            &normalize(run.requests.as_deref().unwrap(), false),
            &normalize(&read(&case.join("expected.requests.jsonl")), false),
        );
    }
}

#[test]
fn adk_flow_python_package_passes_its_tests() {
    let Some(python) = adk2_python("adk_flow_python_package_passes_its_tests") else {
        return;
    };
    let out = Command::new(python)
        .args(["-m", "unittest", "discover", "-s", "tests"])
        .current_dir(common::repo().join("python"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python/tests failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The example workflows of `workflows/` that are graphs (`agent_class: Workflow`),
/// each with its `NAME.script.yaml` and the messages of its `NAME.messages.txt`.
fn example_graphs() -> Vec<(PathBuf, Vec<String>)> {
    let dir = common::repo().join("workflows");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let is_graph = path.extension().is_some_and(|e| e == "yaml")
            && !path.to_string_lossy().ends_with(".script.yaml")
            && !path.to_string_lossy().ends_with(".test.yaml")
            && read(&path)
                .lines()
                .any(|l| l.trim() == "agent_class: Workflow");
        let messages = path.with_extension("messages.txt");
        if is_graph && messages.is_file() {
            let lines = read(&messages).lines().map(str::to_owned).collect();
            out.push((path, lines));
        }
    }
    out.sort();
    out
}

#[test]
fn examples_run_alike_in_adk2_and_adk_flow() {
    let Some(python) = adk2_python("examples_run_alike_in_adk2_and_adk_flow") else {
        return;
    };
    let examples = example_graphs();
    assert!(
        examples.iter().any(|(p, _)| p.ends_with("helpdesk.yaml")),
        "the helpdesk example graph"
    );
    let all = examples.into_iter().chain(
        cases()
            .into_iter()
            .map(|c| (c.join("root_agent.yaml"), messages(&c))),
    );
    let all: Vec<(PathBuf, Vec<String>)> = all.collect();
    let runs = in_parallel(&all, |(root, messages)| {
        let dir = root.parent().unwrap();
        let file = root.file_name().unwrap().to_str().unwrap();
        let script = if file == "root_agent.yaml" {
            "script.yaml".to_owned()
        } else {
            file.replace(".yaml", ".script.yaml")
        };
        (
            run_adk2(&python, dir, file, &script, messages),
            run_adk_flow(dir, file, &script, messages),
        )
    });
    for ((root, _), (adk, ours)) in all.iter().zip(runs) {
        let what = root.display();
        assert_eq!(
            ours.code, adk.code,
            "{what}: exit\nadk-flow: {}\nADK: {}",
            ours.stderr, adk.stderr
        );
        assert_same(
            &format!("{what}: adk-flow vs ADK 2.13"),
            &normalize(&ours.events, false),
            &normalize(&adk.events, false),
        );
        assert_same(
            &format!("{what}: what each model call saw, adk-flow vs ADK 2.13"),
            &agents_and_contents(ours.requests.as_deref().unwrap()),
            &agents_and_contents(adk.requests.as_deref().unwrap()),
        );
    }
}

/// The agent and the contents of each model request (adk-flow's `--dump-requests` and
/// `adk2-run.py --dump-requests` agree on these two; the rest differs in form).
fn agents_and_contents(jsonl: &str) -> Vec<Value> {
    normalize(jsonl, false)
        .into_iter()
        .map(|r| serde_json::json!({"agent": r["agent"], "contents": r["contents"]}))
        .collect()
}
