//! Declared tools end to end: lookup, state, command, HTTP (against a local server),
//! agents as tools, argument checking, and failures the model can read.

use crate::common;

use common::run;
use serde_json::json;

const HEAD: &str = "name: solo\nmodel: m\ninstruction: Use tools.\n";

fn response_of(out: &common::Outcome, i: usize) -> serde_json::Value {
    out.events[i]["content"]["parts"][0]["functionResponse"]["response"].clone()
}

#[test]
fn lookup_tool_reads_a_table_and_checks_arguments() {
    let root = format!(
        "{HEAD}tools: [{{name: lookup_order}}]\ndefine:\n  tools:\n    lookup_order:\n      description: Find an order.\n      parameters: {{type: object, properties: {{order_id: {{type: string}}}}, required: [order_id]}}\n      lookup:\n        key: \"{{{{ order_id }}}}\"\n        table: {{\"42\": {{status: paid}}}}\n"
    );
    let script = r#"
replies:
  solo:
    - function_call: {name: lookup_order, args: {order_id: "42"}}
    - function_call: {name: lookup_order, args: {order_id: "7"}}
    - function_call: {name: lookup_order, args: {id: 42}}
    - text: done
"#;
    let out = run(
        &[("root_agent.yaml", &root), ("script.yaml", script)],
        &["-m", "go", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(response_of(&out, 1), json!({"status": "paid"}));
    assert_eq!(response_of(&out, 3), json!({"error": "no entry for `7`"}));
    let invalid = response_of(&out, 5)["error"].as_str().unwrap().to_owned();
    assert!(
        invalid.contains("invalid arguments for `lookup_order`") && invalid.contains("order_id"),
        "{invalid}"
    );
    let decl = &out.requests()[0]["tools"][0]["functionDeclarations"][0];
    assert_eq!(decl["name"], "lookup_order");
    assert_eq!(
        decl["parametersJsonSchema"]["required"],
        json!(["order_id"])
    );
}

#[test]
fn state_tools_write_and_read_state() {
    let root = format!(
        "{HEAD}tools: [{{name: remember}}, {{name: recall}}]\ndefine:\n  tools:\n    remember:\n      description: Remember a note.\n      set_state: {{\"user:note\": \"{{{{ note }}}}\"}}\n    recall:\n      description: Recall notes.\n      get_state: [\"user:note\", missing]\n"
    );
    let script = r#"
replies:
  solo:
    - function_call: {name: remember, args: {note: "likes tea"}}
    - function_call: {name: recall, args: {}}
    - text: done
"#;
    let out = run(
        &[("root_agent.yaml", &root), ("script.yaml", script)],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.events[1]["actions"]["stateDelta"],
        json!({"user:note": "likes tea"})
    );
    assert_eq!(
        response_of(&out, 3),
        json!({"user:note": "likes tea", "missing": null})
    );
}

#[test]
fn command_tools_need_permission_and_never_use_a_shell() {
    let root = format!(
        "{HEAD}tools: [{{name: echo}}]\ndefine:\n  tools:\n    echo:\n      description: Echo.\n      command:\n        program: echo\n        args: [\"{{{{ text }}}}\"]\n        timeout_secs: 5\n"
    );
    let script = "replies:\n  solo:\n    - function_call: {name: echo, args: {text: \"a; rm -rf / $(whoami)\"}}\n    - text: done\n";
    let files = [("root_agent.yaml", root.as_str()), ("script.yaml", script)];
    let denied = run(&files, &["-m", "go"]);
    assert_eq!(denied.code, 1);
    assert!(
        denied.stderr.contains("--allow-commands"),
        "{}",
        denied.stderr
    );
    let out = run(&files, &["-m", "go", "--allow-commands"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        response_of(&out, 1),
        json!({"exit_code": 0, "stdout": "a; rm -rf / $(whoami)\n", "stderr": ""})
    );
}

#[test]
fn a_command_that_hangs_is_killed_at_its_timeout() {
    let root = format!(
        "{HEAD}tools: [{{name: nap}}]\ndefine:\n  tools:\n    nap:\n      description: Sleep.\n      command: {{program: sleep, args: [\"30\"], timeout_secs: 1}}\n"
    );
    let script =
        "replies:\n  solo:\n    - function_call: {name: nap, args: {}}\n    - text: done\n";
    let started = std::time::Instant::now();
    let out = run(
        &[("root_agent.yaml", &root), ("script.yaml", script)],
        &["-m", "go", "--allow-commands"],
    );
    assert!(started.elapsed().as_secs() < 20);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        response_of(&out, 1)["error"]
            .as_str()
            .unwrap()
            .contains("timed out")
    );
}

#[test]
fn agents_as_tools_return_their_answer_and_state() {
    let root = format!(
        "{HEAD}tools:\n  - name: AgentTool\n    args:\n      agent: {{config_path: helper.yaml}}\n      skip_summarization: false\n"
    );
    let helper = "name: helper\nmodel: m\ndescription: Answers sub-questions.\ninstruction: \"Help with {topic?}\"\noutput_key: helper_out\n";
    let script = r#"
replies:
  solo:
    - function_call: {name: helper, args: {request: "what is 2+2?"}}
    - text: "It is 4."
  helper:
    - text: "4"
"#;
    let out = run(
        &[
            ("root_agent.yaml", &root),
            ("helper.yaml", helper),
            ("script.yaml", script),
        ],
        &[
            "-m",
            "go",
            "--state",
            "topic=math",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(response_of(&out, 1), json!({"result": "4"}));
    assert_eq!(
        out.events[1]["actions"]["stateDelta"],
        json!({"helper_out": "4"})
    );
    let helper_req = out
        .requests()
        .into_iter()
        .find(|r| r["agent"] == "helper")
        .unwrap();
    assert!(
        helper_req["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Help with math")
    );
    assert_eq!(out.lines().last().unwrap(), "solo: It is 4.");
}

/// A local HTTP service speaking JSON, for the HTTP tool.
fn serve_orders() -> (
    String,
    std::thread::JoinHandle<()>,
    tokio::sync::oneshot::Sender<()>,
) {
    use axum::{Json, Router, extract::Path, http::HeaderMap, routing::get};
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let app = Router::new()
                .route(
                    "/orders/{id}",
                    get(|Path(id): Path<String>, headers: HeaderMap| async move {
                        let auth = headers
                            .get("authorization")
                            .map(|v| v.to_str().unwrap().to_owned());
                        if auth.as_deref() != Some("Bearer sekret") {
                            return (
                                axum::http::StatusCode::UNAUTHORIZED,
                                Json(json!({"error": "no"})),
                            );
                        }
                        if id == "42" {
                            (
                                axum::http::StatusCode::OK,
                                Json(json!({"data": {"id": id, "status": "shipped"}})),
                            )
                        } else {
                            (
                                axum::http::StatusCode::NOT_FOUND,
                                Json(json!({"error": "unknown order"})),
                            )
                        }
                    }),
                )
                .route("/big", get(|| async { "x".repeat(5000) }));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    rx.await.ok();
                })
                .await
                .unwrap();
        });
    });
    let addr = addr_rx.recv().unwrap();
    (format!("http://{addr}"), handle, tx)
}

#[test]
fn http_tools_call_a_real_service_and_report_failures_without_secrets() {
    let (base, handle, stop) = serve_orders();
    let root = format!(
        "{HEAD}tools: [{{name: order_status}}, {{name: big}}]\ndefine:\n  tools:\n    order_status:\n      description: Order status.\n      parameters: {{type: object, properties: {{id: {{type: string}}}}, required: [id]}}\n      http:\n        url: \"${{ORDERS_URL}}/orders/{{{{ id }}}}\"\n        headers: {{Authorization: \"Bearer ${{ORDERS_TOKEN}}\"}}\n        pick: /data/status\n        timeout_secs: 5\n    big:\n      description: Too big.\n      http: {{url: \"${{ORDERS_URL}}/big\", max_response_bytes: 1000}}\n"
    );
    let script = r#"
replies:
  solo:
    - function_call: {name: order_status, args: {id: "42"}}
    - function_call: {name: order_status, args: {id: "9"}}
    - function_call: {name: big, args: {}}
    - text: done
"#;
    let dir = common::write_files(&[("root_agent.yaml", &root), ("script.yaml", script)]);
    let out = common::bin()
        .current_dir(dir.path())
        .env("ORDERS_URL", &base)
        .env("ORDERS_TOKEN", "sekret")
        .args([
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "--json",
            "-m",
            "go",
        ])
        .output()
        .unwrap();
    stop.send(()).ok();
    handle.join().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let resp = |i: usize| events[i]["content"]["parts"][0]["functionResponse"]["response"].clone();
    assert_eq!(resp(1), json!({"result": "shipped"}));
    let not_found = resp(3)["error"].as_str().unwrap().to_owned();
    assert!(
        not_found.contains("HTTP 404") && not_found.contains("unknown order"),
        "{not_found}"
    );
    assert!(
        resp(5)["error"]
            .as_str()
            .unwrap()
            .contains("exceeds the limit")
    );
    assert!(
        !stdout.contains("sekret"),
        "the token must never reach the events"
    );
}

#[test]
fn http_tools_refuse_hosts_they_were_not_declared_for() {
    let root = format!(
        "{HEAD}tools: [{{name: fetch}}]\ndefine:\n  tools:\n    fetch:\n      description: Fetch.\n      http: {{url: \"http://{{{{ host }}}}/x\", allow_hosts: [127.0.0.1]}}\n"
    );
    let script = "replies:\n  solo:\n    - function_call: {name: fetch, args: {host: \"169.254.169.254\"}}\n    - text: done\n";
    let out = run(
        &[("root_agent.yaml", &root), ("script.yaml", script)],
        &["-m", "go"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        response_of(&out, 1)["error"]
            .as_str()
            .unwrap()
            .contains("not allowed")
    );
}

#[test]
fn artifacts_are_saved_with_versions_and_read_by_tools_and_instructions() {
    let root = r#"
agent_class: SequentialAgent
name: flow
sub_agents:
  - name: writer
    model: m
    instruction: Write.
    tools: [{name: save_report}, {name: read_report}]
  - name: reader
    model: m
    instruction: "Summarize: {artifact.report.md}"
define:
  tools:
    save_report:
      description: Save the report.
      parameters: {type: object, properties: {text: {type: string}}, required: [text]}
      save_artifact: {name: report.md, content: "{{ text }}", mime_type: text/markdown}
    read_report:
      description: Read the report.
      load_artifact: {name: report.md, version: "0"}
"#;
    let script = r#"
replies:
  writer:
    - function_call: {name: save_report, args: {text: "first draft"}}
    - function_call: {name: save_report, args: {text: "second draft"}}
    - function_call: {name: read_report, args: {}}
    - text: saved
  reader:
    - text: summary
"#;
    let out = run(
        &[("root_agent.yaml", root), ("script.yaml", script)],
        &[
            "-m",
            "go",
            "--artifacts",
            "store",
            "--dump-requests",
            "requests.jsonl",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.events[1]["actions"]["artifactDelta"],
        json!({"report.md": 0})
    );
    assert_eq!(
        out.events[3]["actions"]["artifactDelta"],
        json!({"report.md": 1})
    );
    assert_eq!(
        response_of(&out, 3),
        json!({"name": "report.md", "version": 1})
    );
    assert_eq!(
        response_of(&out, 5),
        json!({"name": "report.md", "mime_type": "text/markdown", "text": "first draft"})
    );
    let reader = out
        .requests()
        .into_iter()
        .find(|r| r["agent"] == "reader")
        .unwrap();
    assert!(
        reader["systemInstruction"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Summarize: second draft")
    );
    // Versions live on disk.
    assert!(out.dir.path().join("store").exists());
}
