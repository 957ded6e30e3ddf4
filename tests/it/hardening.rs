//! Hostile input, refused cleanly: secrets in URLs, ids that would be paths, hosts and
//! ports off the allowlist, model values that would rewrite a URL, programs that outlive
//! their tool, files that are not files.

use crate::common;

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn secrets_in_a_provider_url_never_reach_events_logs_or_messages() {
    let dir = common::write_files(&[(
        "root_agent.yaml",
        "name: solo\nmodel: m\ninstruction: Be brief.\ndefine:\n  models:\n    m:\n      provider: openai\n      model: x\n      base_url: ${BASE}\n      retries: {max_attempts: 2, initial_backoff_ms: 10}\n",
    )]);
    let base = format!(
        "http://bob:pw-s3cret@127.0.0.1:{}/v1?key=q-s3cret",
        closed_port()
    );
    let out = common::bin()
        .current_dir(dir.path())
        .env("BASE", &base)
        .env("OPENAI_API_KEY", "sk-not-used-here")
        .env("RUST_LOG", "debug")
        .args([
            "run",
            "root_agent.yaml",
            "-m",
            "hi",
            "--json",
            "--db",
            "memory",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("\"errorCode\":\"CONNECT\""), "{stdout}");
    for text in [&stdout, &stderr] {
        assert!(!text.contains("s3cret"), "a secret leaked: {text}");
        // Still useful: where it failed.
        assert!(text.contains("127.0.0.1"), "{text}");
    }
    // The retry was logged, redacted too.
    assert!(stderr.contains("retrying"), "{stderr}");
}

/// One request a [`Site`] received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    /// Path and query as sent, e.g. `/orders/..%2Fadmin`.
    target: String,
    headers: Vec<(String, String)>,
    body: String,
}

/// A local HTTP site on its own thread: records every request and answers with
/// `respond(path_and_query)` = (status, extra headers, body).
struct Site {
    base: String,
    port: u16,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Seen>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

type Respond = dyn Fn(&str) -> (u16, Vec<(String, String)>, String) + Send + Sync;

impl Site {
    fn start(
        respond: impl Fn(&str) -> (u16, Vec<(String, String)>, String) + Send + Sync + 'static,
    ) -> Site {
        use axum::body::Body;
        use axum::http::{Request, Response};
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = std::sync::Arc::clone(&seen);
        let respond: std::sync::Arc<Respond> = std::sync::Arc::new(respond);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = axum::Router::new().fallback(move |request: Request<Body>| {
                    let log = std::sync::Arc::clone(&log);
                    let respond = std::sync::Arc::clone(&respond);
                    async move {
                        let (parts, body) = request.into_parts();
                        let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
                        let target = parts
                            .uri
                            .path_and_query()
                            .map(|p| p.to_string())
                            .unwrap_or_default();
                        log.lock().unwrap().push(Seen {
                            method: parts.method.to_string(),
                            target: target.clone(),
                            headers: parts
                                .headers
                                .iter()
                                .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
                                .collect(),
                            body: String::from_utf8_lossy(&bytes).into_owned(),
                        });
                        let (status, headers, body) = respond(&target);
                        let mut r = Response::builder().status(status);
                        for (k, v) in headers {
                            r = r.header(k, v);
                        }
                        r.body(Body::from(body)).unwrap()
                    }
                });
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        stopped.await.ok();
                    })
                    .await
                    .unwrap();
            });
        });
        let addr: std::net::SocketAddr = addr_rx.recv().unwrap();
        Site {
            base: format!("http://{addr}"),
            port: addr.port(),
            seen,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
        if let Some(t) = self.thread.take() {
            t.join().ok();
        }
    }
}

fn ok_json(body: serde_json::Value) -> (u16, Vec<(String, String)>, String) {
    (
        200,
        vec![("content-type".into(), "application/json".into())],
        body.to_string(),
    )
}

fn redirect(status: u16, to: &str) -> (u16, Vec<(String, String)>, String) {
    (
        status,
        vec![("location".into(), to.to_owned())],
        String::new(),
    )
}

const HEAD: &str = "name: solo\nmodel: m\ninstruction: Use tools.\n";

/// Runs one workflow whose agent calls `tool` once with `args`, then says done; returns
/// the tool's response and the whole output.
fn call_tool(
    root: &str,
    tool: &str,
    args: &str,
    env: &[(&str, &str)],
) -> (serde_json::Value, String) {
    let script = format!(
        "replies:\n  solo:\n    - function_call: {{name: {tool}, args: {args}}}\n    - text: done\n"
    );
    let dir = common::write_files(&[("root_agent.yaml", root), ("script.yaml", &script)]);
    let mut cmd = common::bin();
    cmd.current_dir(dir.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .args([
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "--json",
            "-m",
            "go",
            "--db",
            "memory",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let first: serde_json::Value = serde_json::from_str(stdout.lines().nth(1).unwrap()).unwrap();
    (
        first["content"]["parts"][0]["functionResponse"]["response"].clone(),
        format!("{stdout}{stderr}"),
    )
}

#[test]
fn a_redirect_off_the_allowlist_is_refused_and_gets_nothing() {
    let elsewhere = Site::start(|_| ok_json(serde_json::json!({"stolen": true})));
    let target = format!("{}/steal?k=1", elsewhere.base);
    // `localhost` is another name for the same machine, but not the listed host.
    let by_name = format!("http://localhost:{}/x", elsewhere.port);
    let (t1, t2) = (target.clone(), by_name.clone());
    let home = Site::start(move |path| match path {
        "/go" => redirect(307, &t1),
        "/name" => redirect(302, &t2),
        "/loop" => redirect(302, "/loop"),
        "/ok" => redirect(308, "/final"),
        "/echo" => (400, vec![], "bad key key-0123456789 for you".into()),
        _ => ok_json(serde_json::json!({"fine": path})),
    });
    let tool = |path: &str, method: &str| {
        format!(
            "{HEAD}tools: [{{name: t}}]\ndefine:\n  tools:\n    t:\n      description: T.\n      http:\n        method: {method}\n        url: \"{}{path}\"\n        headers: {{X-Api-Key: \"${{API_KEY}}\", Authorization: \"Bearer ${{API_KEY}}\"}}\n        body: {{secret: \"${{API_KEY}}\"}}\n        retries: {{max_attempts: 1}}\n",
            home.base
        )
    };
    let env = [("API_KEY", "key-0123456789")];
    let (resp, all) = call_tool(&tool("/go", "POST"), "t", "{}", &env);
    let error = resp["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("redirect") && error.contains("refused"),
        "{resp}"
    );
    assert!(
        error.contains(&format!("127.0.0.1:{}", elsewhere.port)),
        "{error}"
    );
    let (resp, _) = call_tool(&tool("/name", "GET"), "t", "{}", &env);
    assert!(
        resp["error"]
            .as_str()
            .unwrap_or_default()
            .contains("refused"),
        "{resp}"
    );
    assert!(
        elsewhere.seen().is_empty(),
        "the other host got {:?}",
        elsewhere.seen()
    );
    assert!(!all.contains("key-0123456789"), "{all}");

    // An allowed redirect is followed, with the method and body of a 308.
    let (resp, _) = call_tool(&tool("/ok", "POST"), "t", "{}", &env);
    assert_eq!(resp, serde_json::json!({"fine": "/final"}));
    let last = home.seen().pop().unwrap();
    assert_eq!(
        (last.method.as_str(), last.target.as_str()),
        ("POST", "/final")
    );
    assert!(last.body.contains("key-0123456789"));
    assert!(
        last.headers
            .iter()
            .any(|(k, v)| k == "x-api-key" && v == "key-0123456789")
    );

    // A server that echoes the credential back does not get it into the events.
    let (resp, all) = call_tool(&tool("/echo", "GET"), "t", "{}", &env);
    let error = resp["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("HTTP 400: bad key [REDACTED] for you"),
        "{resp}"
    );
    assert!(!all.contains("key-0123456789"), "{all}");

    // A loop ends.
    let (resp, _) = call_tool(&tool("/loop", "GET"), "t", "{}", &env);
    assert!(
        resp["error"]
            .as_str()
            .unwrap_or_default()
            .contains("more than 10 redirects"),
        "{resp}"
    );
}

#[test]
fn a_host_without_a_port_allows_only_the_default_port() {
    let site = Site::start(|p| ok_json(serde_json::json!({"path": p})));
    let root = |allow: &str| {
        format!(
            "{HEAD}tools: [{{name: t}}]\ndefine:\n  tools:\n    t:\n      description: T.\n      http:\n        url: \"http://{{{{ host }}}}/x\"\n        allow_hosts: [{allow}]\n        retries: {{max_attempts: 1}}\n"
        )
    };
    let host = format!("{{host: \"127.0.0.1:{}\"}}", site.port);
    let with_port_in_value = |allow: &str| call_tool(&root(allow), "t", &host, &[]).0;
    // A host value carrying its own port is percent-encoded like any value: one host label.
    assert!(with_port_in_value("127.0.0.1")["error"].is_string());
    let root_safe = |allow: &str| {
        format!(
            "{HEAD}tools: [{{name: t}}]\ndefine:\n  tools:\n    t:\n      description: T.\n      http:\n        url: \"http://{{{{ host | safe }}}}/x\"\n        allow_hosts: [{allow}]\n        retries: {{max_attempts: 1}}\n"
        )
    };
    let (resp, _) = call_tool(&root_safe("127.0.0.1"), "t", &host, &[]);
    assert!(
        resp["error"]
            .as_str()
            .unwrap_or_default()
            .contains("not allowed"),
        "{resp}"
    );
    let (resp, _) = call_tool(
        &root_safe(&format!("\"127.0.0.1:{}\"", site.port)),
        "t",
        &host,
        &[],
    );
    assert_eq!(resp, serde_json::json!({"path": "/x"}));
    let (resp, _) = call_tool(&root_safe("\"127.0.0.1:*\""), "t", &host, &[]);
    assert_eq!(resp, serde_json::json!({"path": "/x"}));
    let (resp, _) = call_tool(&root_safe("\"[::1]:*\""), "t", &host, &[]);
    assert!(
        resp["error"]
            .as_str()
            .unwrap_or_default()
            .contains("not allowed"),
        "{resp}"
    );
    assert_eq!(site.seen().len(), 2);
}

#[test]
fn model_values_cannot_change_an_http_tools_path() {
    let site = Site::start(|p| ok_json(serde_json::json!({"path": p})));
    let root = format!(
        "{HEAD}tools: [{{name: order}}]\ndefine:\n  tools:\n    order:\n      description: An order.\n      http:\n        url: \"{}/orders/{{{{ id }}}}?lang={{{{ lang }}}}\"\n        retries: {{max_attempts: 1}}\n",
        site.base
    );
    let cases = [
        (
            r#"{id: "../admin?x#", lang: "en"}"#,
            Some("/orders/..%2Fadmin%3Fx%23?lang=en"),
        ),
        (
            r#"{id: "42", lang: "en&admin=1#x"}"#,
            Some("/orders/42?lang=en%26admin%3D1%23x"),
        ),
        (
            r#"{id: "%2e%2e", lang: "en"}"#,
            Some("/orders/%252e%252e?lang=en"),
        ),
        (r#"{id: "..", lang: "en"}"#, None),
        (r#"{id: ".", lang: "en"}"#, None),
        (
            r#"{id: "a\\..\\b", lang: "en"}"#,
            Some("/orders/a%5C..%5Cb?lang=en"),
        ),
    ];
    for (args, expected) in cases {
        let (resp, _) = call_tool(&root, "order", args, &[]);
        match expected {
            Some(path) => assert_eq!(resp, serde_json::json!({"path": path}), "{args}"),
            None => assert!(
                resp["error"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("segment"),
                "{args}: {resp}"
            ),
        }
    }
    assert!(
        site.seen().iter().all(|s| s.target.starts_with("/orders/")),
        "{:?}",
        site.seen()
    );
}

/// Processes whose command line contains `marker` (read from /proc).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(marker) {
                found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

fn command_tool(program: &str, args: &[&str], timeout: u64, env: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "{HEAD}tools: [{{name: c}}]\ndefine:\n  tools:\n    c:\n      description: C.\n      command:\n        program: {program}\n        args: [{}]\n        timeout_secs: {timeout}\n        env: {{{env}}}\n",
        args.join(", ")
    )
}

fn call_command(root: &str, env: &[(&str, &str)]) -> (serde_json::Value, std::time::Duration) {
    let script = "replies:\n  solo:\n    - function_call: {name: c, args: {}}\n    - text: done\n";
    let dir = common::write_files(&[("root_agent.yaml", root), ("script.yaml", script)]);
    let mut cmd = common::bin();
    cmd.current_dir(dir.path());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let started = std::time::Instant::now();
    let out = cmd
        .args([
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "--json",
            "-m",
            "go",
            "--db",
            "memory",
            "--allow-commands",
        ])
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first: serde_json::Value = serde_json::from_str(stdout.lines().nth(1).unwrap()).unwrap();
    (
        first["content"]["parts"][0]["functionResponse"]["response"].clone(),
        elapsed,
    )
}

#[test]
fn programs_get_a_clean_environment() {
    let root = command_tool("env", &[], 10, "PASSED: from-yaml");
    let (resp, _) = call_command(
        &root,
        &[
            ("OPENAI_API_KEY", "sk-must-not-leak"),
            ("GEMINI_API_KEY", "g-must-not-leak"),
            ("AWS_SECRET_ACCESS_KEY", "aws-must-not-leak"),
        ],
    );
    let printed = resp["stdout"].as_str().unwrap();
    assert!(!printed.contains("must-not-leak"), "{printed}");
    assert!(printed.contains("PASSED=from-yaml"), "{printed}");
    assert!(printed.lines().any(|l| l.starts_with("PATH=")), "{printed}");
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let marker = "300.0417";
    // The program and its child both ignore SIGTERM.
    let script = format!("trap '' TERM; (trap '' TERM; sleep {marker}) & sleep {marker}; wait");
    let root = command_tool("sh", &["-c", &script], 1, "");
    let (resp, elapsed) = call_command(&root, &[]);
    assert!(
        resp["error"]
            .as_str()
            .unwrap_or_default()
            .contains("timed out"),
        "{resp}"
    );
    assert!(elapsed < std::time::Duration::from_secs(20), "{elapsed:?}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(processes_with(marker), Vec::<String>::new());
}

#[test]
fn a_program_that_exits_with_children_lingering_is_not_a_timeout() {
    let marker = "300.0533";
    let script = format!("sleep {marker} & echo started; exit 3");
    let root = command_tool("sh", &["-c", &script], 30, "");
    let (resp, elapsed) = call_command(&root, &[]);
    assert_eq!(resp["exit_code"], 3, "{resp}");
    assert_eq!(resp["stdout"], "started\n", "{resp}");
    assert!(elapsed < std::time::Duration::from_secs(15), "{elapsed:?}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(processes_with(marker), Vec::<String>::new());
}

/// Runs adk-flow in `dir`, killed after 30 s (a read that blocks would hang forever).
fn adk_flow(dir: &std::path::Path, args: &[&str]) -> (i32, String) {
    let out = common::bin()
        .current_dir(dir)
        .args(args)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn mkfifo(path: &std::path::Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn devices_fifos_and_huge_files_are_refused_without_reading() {
    let dir = common::write_files(&[
        (
            "root_agent.yaml",
            "name: solo\nmodel: m\ninstruction: Hi.\n",
        ),
        ("script.yaml", "replies:\n  solo:\n    - text: hi\n"),
    ]);
    let d = dir.path();
    mkfifo(&d.join("fifo.yaml"));
    // Sparse: 5 GB on paper, nothing on disk.
    let huge = std::fs::File::create(d.join("huge.yaml")).unwrap();
    huge.set_len(5_000_000_000).unwrap();
    for (args, expect) in [
        (
            vec!["validate", "fifo.yaml"],
            "not a regular file but a FIFO",
        ),
        (
            vec!["validate", "/dev/zero"],
            "not a regular file but a character device",
        ),
        (vec!["validate", "huge.yaml"], "larger than the limit"),
        (
            vec!["run", "fifo.yaml", "-m", "hi", "--db", "memory"],
            "FIFO",
        ),
        (
            vec!["run", "/dev/zero", "-m", "hi", "--db", "memory"],
            "character device",
        ),
        (
            vec!["run", "/dev/stdin", "-m", "hi", "--db", "memory"],
            "not a regular file",
        ),
        (
            vec![
                "run",
                "root_agent.yaml",
                "--script",
                "fifo.yaml",
                "-m",
                "hi",
                "--db",
                "memory",
            ],
            "FIFO",
        ),
        (
            vec![
                "run",
                "root_agent.yaml",
                "--script",
                "/dev/zero",
                "-m",
                "hi",
                "--db",
                "memory",
            ],
            "character device",
        ),
        (
            vec![
                "run",
                "root_agent.yaml",
                "--script",
                "huge.yaml",
                "-m",
                "hi",
                "--db",
                "memory",
            ],
            "larger than the limit",
        ),
        (
            vec![
                "run",
                "root_agent.yaml",
                "--script",
                ".",
                "-m",
                "hi",
                "--db",
                "memory",
            ],
            "directory",
        ),
    ] {
        let (code, text) = adk_flow(d, &args);
        assert!(code == 1 || code == 2, "{args:?}: exit {code}: {text}");
        assert!(text.contains(expect), "{args:?}: {text}");
    }
}

#[test]
fn validate_follows_no_symlink_loop_and_says_when_there_is_nothing_to_check() {
    let dir = common::write_files(&[(
        "flows/root_agent.yaml",
        "name: solo\nmodel: m\ninstruction: Hi.\n",
    )]);
    let d = dir.path();
    std::os::unix::fs::symlink(d, d.join("flows/loop")).unwrap();
    std::os::unix::fs::symlink(d.join("flows"), d.join("flows/again")).unwrap();
    let (code, text) = adk_flow(d, &["validate", "."]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("1 file checked"), "{text}");
    std::fs::create_dir(d.join("empty")).unwrap();
    std::fs::write(d.join("empty/notes.txt"), "no workflow here").unwrap();
    let (code, text) = adk_flow(d, &["validate", "empty"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("no workflow files"), "{text}");
}

#[test]
fn workflow_tests_need_permission_to_start_programs_too() {
    let root = command_tool("echo", &["hi"], 10, "");
    let test = "workflow: root_agent.yaml\ntests:\n  - name: echoes\n    replies:\n      solo:\n        - function_call: {name: c, args: {}}\n        - text: done\n    turns:\n      - user: go\n        expect:\n          tool_calls: [{name: c}]\n";
    let dir = common::write_files(&[("root_agent.yaml", &root), ("echo.test.yaml", test)]);
    let run = |env: Option<&str>, args: &[&str]| {
        let mut cmd = common::bin();
        cmd.current_dir(dir.path())
            .env_remove("ADK_FLOW_ALLOW_COMMANDS");
        if let Some(v) = env {
            cmd.env("ADK_FLOW_ALLOW_COMMANDS", v);
        }
        let out = cmd.arg("test").arg(".").args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = run(None, &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("tool `c` starts `echo`") && text.contains("--allow-commands"),
        "{text}"
    );
    let (code, text) = run(Some("0"), &[]);
    assert_eq!(code, Some(1), "{text}");
    for (env, args) in [(Some("1"), vec![]), (None, vec!["--allow-commands"])] {
        let (code, text) = run(env, &args);
        assert_eq!(code, Some(0), "{text}");
        assert!(text.contains("1 passed, 0 failed"), "{text}");
    }
}

const SOLO: &str = "name: solo\nmodel: m\ninstruction: Hi.\n";
const SOLO_SCRIPT: &str = "replies:\n  solo:\n    - text: hello\n";

#[test]
fn output_files_are_checked_before_anything_runs() {
    let dir = common::write_files(&[("root_agent.yaml", SOLO), ("script.yaml", SOLO_SCRIPT)]);
    let d = dir.path();
    mkfifo(&d.join("nobody-reads"));
    let base = [
        "run",
        "root_agent.yaml",
        "--script",
        "script.yaml",
        "-m",
        "hi",
        "--db",
        "memory",
        "--json",
    ];
    for (flag, target, expect) in [
        (
            "--record",
            "missing/dir/rec.yaml",
            "--record missing/dir/rec.yaml: cannot write",
        ),
        ("--record", "nobody-reads", "FIFO with no reader"),
        ("--record", ".", "directory"),
        ("--dump-requests", "nobody-reads", "FIFO with no reader"),
        ("--dump-requests", "missing/req.jsonl", "cannot write"),
    ] {
        let mut args = base.to_vec();
        args.extend([flag, target]);
        let (code, text) = adk_flow(d, &args);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(text.contains(expect), "{args:?}: {text}");
        // Nothing ran: no event was printed.
        assert!(!text.contains("\"author\""), "{args:?}: {text}");
    }
    // A good path still works, and an existing recording is replaced, not appended to.
    std::fs::write(
        d.join("rec.yaml"),
        "old content that is much longer than the new one ".repeat(50),
    )
    .unwrap();
    let mut args = base.to_vec();
    args.extend(["--record", "rec.yaml"]);
    let (code, text) = adk_flow(d, &args);
    assert_eq!(code, 0, "{text}");
    let recorded = std::fs::read_to_string(d.join("rec.yaml")).unwrap();
    assert!(
        recorded.contains("hello") && !recorded.contains("old content"),
        "{recorded}"
    );
}

#[test]
fn big_integers_in_state_stay_exact() {
    let dir = common::write_files(&[
        (
            "root_agent.yaml",
            "name: solo\nmodel: m\ninstruction: \"Order {order} of {cfg}\"\n",
        ),
        ("script.yaml", SOLO_SCRIPT),
    ]);
    let (code, text) = adk_flow(
        dir.path(),
        &[
            "run",
            "root_agent.yaml",
            "--script",
            "script.yaml",
            "-m",
            "hi",
            "--db",
            "memory",
            "--state",
            "order=123456789012345678901234567890",
            "--state",
            "cfg={\"id\": -98765432109876543210987, \"n\": 1}",
            "--dump-requests",
            "req.jsonl",
        ],
    );
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("kept exact"), "{text}");
    let requests = std::fs::read_to_string(dir.path().join("req.jsonl")).unwrap();
    assert!(
        requests.contains("Order 123456789012345678901234567890 of"),
        "{requests}"
    );
    assert!(requests.contains("-98765432109876543210987"), "{requests}");
}

#[test]
fn sessions_delete_refuses_an_ambiguous_id_and_ids_print_escaped() {
    let dir = common::write_files(&[("root_agent.yaml", SOLO), ("script.yaml", SOLO_SCRIPT)]);
    let d = dir.path();
    let db = format!("sqlite:{}", d.join("s.db").display());
    let evil = "a\u{1b}[31mred\u{1b}[0m\rb";
    for (user, session) in [("u1", "shared"), ("u2", "shared"), ("u1", evil), ("u1", "")] {
        let (code, text) = adk_flow(
            d,
            &[
                "run",
                "root_agent.yaml",
                "--script",
                "script.yaml",
                "-m",
                "hi",
                "--db",
                &db,
                "--user",
                user,
                "--session",
                session,
            ],
        );
        assert_eq!(code, 0, "{text}");
    }
    let (code, list) = adk_flow(d, &["sessions", "list", "--db", &db]);
    assert_eq!(code, 0, "{list}");
    assert!(!list.contains('\u{1b}') && !list.contains('\r'), "{list:?}");
    assert!(list.contains(r"a\u{1b}[31mred\u{1b}[0m\rb"), "{list}");
    // The empty id became a generated one: 4 sessions, none with an empty id.
    assert_eq!(
        list.lines().filter(|l| l.starts_with("solo ")).count(),
        4,
        "{list}"
    );

    let (code, text) = adk_flow(d, &["sessions", "delete", "shared", "--db", &db]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("several") && text.contains("--user"),
        "{text}"
    );
    let (code, text) = adk_flow(
        d,
        &["sessions", "delete", "shared", "--user", "u2", "--db", &db],
    );
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("user u2"), "{text}");
    let (_, list) = adk_flow(d, &["sessions", "list", "--db", &db]);
    assert_eq!(list.matches("shared").count(), 1, "{list}");
    assert!(list.contains("u1") && list.contains("shared"), "{list}");
}

#[test]
fn test_files_that_stub_or_script_what_the_workflow_lacks_fail_naming_it() {
    let root = "name: solo\nmodel: m\ninstruction: Hi.\ntools: [{name: lookup}]\ndefine:\n  tools:\n    lookup:\n      description: L.\n      lookup: {key: \"{{ k }}\", table: {a: 1}}\n";
    let case = |extra: &str| {
        format!(
            "workflow: root_agent.yaml\ntests:\n  - name: c\n    replies:\n      solo:\n        - text: hi\n{extra}    turns:\n      - user: go\n        expect: {{final_text: {{equals: hi}}}}\n"
        )
    };
    let dir = common::write_files(&[
        ("root_agent.yaml", root),
        ("ok.test.yaml", &case("")),
        (
            "stub.test.yaml",
            &case("    tools: {lookup: {x: 1}, lokup: {x: 2}}\n"),
        ),
        (
            "agent.test.yaml",
            &case("      soloo:\n        - text: never\n"),
        ),
        (
            "root_agent.script.yaml",
            "replies:\n  solo: [{text: hi}]\n  ghost: [{text: boo}]\n",
        ),
    ]);
    let d = dir.path();
    let (code, text) = adk_flow(d, &["test", "ok.test.yaml"]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = adk_flow(d, &["test", "stub.test.yaml"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("stubbed tool `lokup` not offered") && text.contains("lookup"),
        "{text}"
    );
    let (code, text) = adk_flow(d, &["test", "agent.test.yaml"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("no LLM agent `soloo`"), "{text}");

    // validate warns, at the key, for test files and for `X.script.yaml` beside `X.yaml`.
    let (code, text) = adk_flow(d, &["validate", "."]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("agent.test.yaml:7:7: warning: replies for `soloo`"),
        "{text}"
    );
    assert!(
        text.contains("root_agent.script.yaml:3:3: warning: replies for `ghost`"),
        "{text}"
    );
    // run says so too, and goes on.
    let (code, text) = adk_flow(
        d,
        &[
            "run",
            "root_agent.yaml",
            "--script",
            "root_agent.script.yaml",
            "-m",
            "x",
            "--db",
            "memory",
        ],
    );
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("ghost"), "{text}");
}

#[test]
fn snapshots_stay_in_the_test_files_folder() {
    let dir = common::write_files(&[
        ("t/root_agent.yaml", SOLO),
        (
            "t/out.test.yaml",
            "workflow: root_agent.yaml\ntests:\n  - name: c\n    replies: {solo: [{text: hi}]}\n    snapshot: ../escaped.jsonl\n    turns: [{user: go}]\n",
        ),
        (
            "t/link.test.yaml",
            "workflow: root_agent.yaml\ntests:\n  - name: c\n    replies: {solo: [{text: hi}]}\n    snapshot: snaps/s.jsonl\n    turns: [{user: go}]\n",
        ),
    ]);
    let d = dir.path();
    std::fs::create_dir(d.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(d.join("elsewhere"), d.join("t/snaps")).unwrap();
    std::os::unix::fs::symlink(d.join("t"), d.join("t/loop")).unwrap();
    let (code, text) = adk_flow(d, &["test", "t", "--update-snapshots"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("inside the test file's folder"), "{text}");
    assert!(text.contains("leads outside"), "{text}");
    // Each file once, despite the loop.
    assert_eq!(text.matches("out.test.yaml").count(), 1, "{text}");
    assert!(!d.join("escaped.jsonl").exists());
    assert_eq!(std::fs::read_dir(d.join("elsewhere")).unwrap().count(), 0);
}

#[test]
fn config_path_stays_in_the_root_folder_and_other_files_are_never_quoted() {
    let dir = common::write_files(&[
        (
            "outside/helper.yaml",
            "name: helper\nmodel: m\ninstruction: Help.\n",
        ),
        ("outside/table.yaml", "a: 1\n"),
        (
            "app/secrets.yaml",
            "API_KEY: sk-live-0123456789\nDB_PASSWORD: hunter2\n",
        ),
        ("app/env.txt", "API_KEY=sk-live-0123456789\n"),
    ]);
    let d = dir.path();
    std::os::unix::fs::symlink(d.join("outside/helper.yaml"), d.join("app/linked.yaml")).unwrap();
    let root = |target: &str| {
        format!("name: solo\nmodel: m\ninstruction: Hi.\nsub_agents:\n  - config_path: {target}\n")
    };
    let cases = [
        ("up.yaml", root("../outside/helper.yaml"), "is outside the workflow's folder"),
        ("link.yaml", root("linked.yaml"), "is outside the workflow's folder"),
        ("abs.yaml", root(&d.join("outside/helper.yaml").display().to_string()), "is outside the workflow's folder"),
        ("etc.yaml", root("/etc/passwd"), "is outside the workflow's folder"),
        ("secrets_ref.yaml", root("secrets.yaml"), "not an agent file"),
        ("env_ref.yaml", root("env.txt"), "must be a mapping"),
        (
            "lookup.yaml",
            "name: solo\nmodel: m\ninstruction: Hi.\ntools: [{name: t}]\ndefine:\n  tools:\n    t:\n      description: T.\n      lookup: {key: \"{{ k }}\", file: ../outside/table.yaml}\n".to_owned(),
            "lookup file `../outside/table.yaml` is outside",
        ),
    ];
    for (name, text, expect) in &cases {
        std::fs::write(d.join("app").join(name), text).unwrap();
        let (code, out) = adk_flow(&d.join("app"), &["validate", name]);
        assert_eq!(code, 1, "{name}: {out}");
        assert!(out.contains(expect), "{name}: {out}");
        assert!(
            out.contains("--allow-outside-files") || !expect.contains("outside"),
            "{name}: {out}"
        );
        for secret in ["sk-live", "hunter2", "API_KEY", "DB_PASSWORD", "root:"] {
            assert!(!out.contains(secret), "{name} quoted {secret}: {out}");
        }
    }
    // The flag (or its variable) lets the references out, and the files still are not
    // quoted when they are not agent files.
    let (code, out) = adk_flow(
        &d.join("app"),
        &[
            "validate",
            "up.yaml",
            "link.yaml",
            "lookup.yaml",
            "--allow-outside-files",
        ],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out) = adk_flow(
        &d.join("app"),
        &["validate", "etc.yaml", "--allow-outside-files"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("root:"), "{out}");
    let (code, out) = adk_flow(
        &d.join("app"),
        &["run", "up.yaml", "-m", "hi", "--db", "memory"],
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("is outside the workflow's folder"), "{out}");
}

#[test]
fn env_references_expand_in_enum_typed_keys_and_errors_never_show_their_values() {
    let root = "agent_class: ${CLASS}\nname: flow\nsub_agents:\n  - name: solo\n    model: m\n    instruction: Hi.\n    include_contents: ${MODE}\ndefine:\n  models:\n    m: {provider: \"${PROVIDER}\", script: script.yaml}\n";
    let dir = common::write_files(&[("root_agent.yaml", root), ("script.yaml", SOLO_SCRIPT)]);
    let run = |mode: &str| {
        common::bin()
            .current_dir(dir.path())
            .env("CLASS", "SequentialAgent")
            .env("MODE", mode)
            .env("PROVIDER", "scripted")
            .args([
                "run",
                "root_agent.yaml",
                "-m",
                "hi",
                "--db",
                "memory",
                "--json",
            ])
            .output()
            .unwrap()
    };
    let ok = run("none");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("hello"));
    let bad = run("s3cret-mode");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("`include_contents` must be one of") && stderr.contains("`${MODE}`"),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret"), "{stderr}");
}
