//! MCP toolsets against real servers: the npm package
//! `@modelcontextprotocol/server-filesystem` over stdio (installed by the tests on first
//! run, pinned by `tests/fixtures/mcp-filesystem/package-lock.json`), and a small
//! streamable-HTTP server written here with axum.

use adk_flow::session::{Session, SessionHandle};
use adk_flow::tool::mcp::{McpConfig, McpError, McpToolset, McpTransport};
use adk_flow::tool::{Tool, ToolContext};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

const FS_VERSION: &str = "2026.8.31";

fn ctx() -> ToolContext {
    ToolContext::new(SessionHandle::new(Session::default()), "agent", "call-1")
}

async fn call(tool: &Arc<dyn Tool>, args: Value) -> Result<Value, String> {
    tool.run(args, &mut ctx()).await.map_err(|e| e.message)
}

fn find<'a>(tools: &'a [Arc<dyn Tool>], name: &str) -> &'a Arc<dyn Tool> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no tool `{name}`"))
}

/// The filesystem server's entry point, installed under `target/` once (see
/// [`crate::common::npm_install`]).
pub(crate) fn filesystem_server() -> &'static Path {
    static ENTRY: OnceLock<PathBuf> = OnceLock::new();
    ENTRY.get_or_init(|| {
        let dir = crate::common::npm_install(
            "mcp-filesystem",
            &format!("@modelcontextprotocol/server-filesystem@{FS_VERSION}"),
        );
        let entry = dir.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
        assert!(
            entry.is_file(),
            "{} is missing after npm ci",
            entry.display()
        );
        entry
    })
}

fn filesystem_config(root: &Path, filter: Option<&[&str]>) -> McpConfig {
    McpConfig {
        transport: McpTransport::Stdio {
            command: "node".into(),
            args: vec![
                filesystem_server().display().to_string(),
                root.display().to_string(),
            ],
            env: vec![],
            cwd: Some(root.to_path_buf()),
        },
        tool_filter: filter.map(|f| f.iter().map(|s| s.to_string()).collect()),
        timeout: Duration::from_secs(30),
    }
}

/// `(pid, state)` of every process in a process group, from `/proc/*/stat`.
fn group_members(pgid: u32) -> Vec<(u32, char)> {
    let mut found = vec![];
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let state = fields.first().and_then(|s| s.chars().next()).unwrap_or('?');
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) {
            found.push((pid, state));
        }
    }
    found
}

/// The pid of our child whose command line contains `marker` (the server leads its own
/// process group, so this is also the group id).
fn server_pid(marker: &str) -> u32 {
    let me = std::process::id().to_string();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1).map(str::to_owned));
        if cmdline.contains(marker) && ppid.as_deref() == Some(me.as_str()) {
            return pid;
        }
    }
    panic!("no child process with `{marker}` in its command line");
}

/// Waits until the server process is reaped and nothing alive is left in its group.
async fn assert_gone(pid: u32, when: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let alive: Vec<(u32, char)> = group_members(pid)
            .into_iter()
            .filter(|(_, s)| *s != 'Z')
            .collect();
        let reaped = !Path::new(&format!("/proc/{pid}")).exists();
        if alive.is_empty() && reaped {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{when}: server {pid} still there (reaped: {reaped}, live group members: {alive:?})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// ---------------------------------------------------------------------------------------
// stdio: @modelcontextprotocol/server-filesystem
// ---------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_server_lists_calls_and_shuts_down() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();
    std::fs::write(
        root_path.join("hello.txt"),
        "hello from adk-flow\nsecond line\n",
    )
    .unwrap();
    std::fs::create_dir(root_path.join("sub")).unwrap();

    let toolset = McpToolset::connect("files", filesystem_config(&root_path, None))
        .await
        .unwrap();
    let tools = toolset.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    for expected in ["read_text_file", "list_directory", "write_file"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }

    let read = find(&tools, "read_text_file");
    let decl = read.declaration();
    assert_eq!(decl.name, "read_text_file");
    assert!(!decl.description.is_empty());
    let params = decl.parameters.unwrap();
    assert_eq!(params["type"], "object");
    assert!(params["properties"]["path"].is_object(), "{params}");

    // list_directory: the server sends structuredContent, which is what the model gets.
    let listing = call(
        find(&tools, "list_directory"),
        json!({"path": root_path.display().to_string()}),
    )
    .await
    .unwrap();
    let text = listing.to_string();
    assert!(
        text.contains("[FILE] hello.txt") && text.contains("[DIR] sub"),
        "{listing}"
    );

    let content = call(
        read,
        json!({"path": root_path.join("hello.txt").display().to_string()}),
    )
    .await
    .unwrap();
    assert_eq!(content["content"], "hello from adk-flow\nsecond line\n");

    // isError results become tool errors with the server's text.
    let missing = call(
        read,
        json!({"path": root_path.join("missing.txt").display().to_string()}),
    )
    .await
    .unwrap_err();
    assert!(
        missing.contains("missing.txt") || missing.contains("ENOENT"),
        "{missing}"
    );
    let denied = call(read, json!({"path": "/etc/hostname"}))
        .await
        .unwrap_err();
    assert!(denied.to_lowercase().contains("denied"), "{denied}");
    // Arguments that are not an object never reach the server.
    let bad = call(read, json!(["x"])).await.unwrap_err();
    assert!(bad.contains("must be an object"), "{bad}");

    let pid = server_pid(&root_path.display().to_string());
    let kept = Arc::clone(read);
    drop(tools);
    toolset.shutdown().await;
    assert_gone(pid, "after shutdown").await;

    // A tool that outlives its toolset answers with an error, not a hang.
    let after = call(
        &kept,
        json!({"path": root_path.join("hello.txt").display().to_string()}),
    )
    .await
    .unwrap_err();
    assert!(after.contains("read_text_file"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_server_tool_filter() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();

    let toolset = McpToolset::connect(
        "files",
        filesystem_config(&root_path, Some(&["list_directory", "read_text_file"])),
    )
    .await
    .unwrap();
    let mut names: Vec<String> = toolset
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["list_directory", "read_text_file"]);
    toolset.shutdown().await;

    let err = McpToolset::connect(
        "files",
        filesystem_config(&root_path, Some(&["list_directory", "no_such_tool"])),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, McpError::MissingTools { .. }), "{err:?}");
    assert!(
        text.contains("`files`")
            && text.contains("no_such_tool")
            && text.contains("offers:")
            && text.contains("read_text_file"),
        "{text}"
    );
    // The failed connect left no server behind.
    let deadline = Instant::now() + Duration::from_secs(10);
    let root_text = root_path.display().to_string();
    while std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&cmd).contains(&root_text)
    }) {
        assert!(
            Instant::now() < deadline,
            "a server for {root_text} survived"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_toolset_and_its_tools_kills_the_server() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();
    std::fs::write(root_path.join("a.txt"), "A").unwrap();

    let toolset = McpToolset::connect("files", filesystem_config(&root_path, None))
        .await
        .unwrap();
    let pid = server_pid(&root_path.display().to_string());
    let read = Arc::clone(find(&toolset.tools(), "read_text_file"));
    drop(toolset);
    // A tool keeps the session alive.
    let a = call(
        &read,
        json!({"path": root_path.join("a.txt").display().to_string()}),
    )
    .await
    .unwrap();
    assert_eq!(a["content"], "A");
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    drop(read);
    assert_gone(pid, "after drop").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_turns_calls_into_errors() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap();
    let toolset = McpToolset::connect("files", filesystem_config(&root_path, None))
        .await
        .unwrap();
    let pid = server_pid(&root_path.display().to_string());
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let tools = toolset.tools();
    let started = Instant::now();
    let err = call(
        find(&tools, "list_directory"),
        json!({"path": root_path.display().to_string()}),
    )
    .await
    .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        err.contains("list_directory") && err.contains("closed"),
        "{err}"
    );
    // The server's stderr (its startup banner) is quoted to help find out why.
    assert!(err.contains("server stderr:"), "{err}");
    drop(tools);
    toolset.shutdown().await;
    assert_gone(pid, "after a crash").await;
}

// ---------------------------------------------------------------------------------------
// stdio: failures
// ---------------------------------------------------------------------------------------

fn stdio(command: &str, args: &[&str], timeout: Duration) -> McpConfig {
    McpConfig {
        transport: McpTransport::Stdio {
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: vec![("MCP_TEST_SECRET".into(), "env-secret-value".into())],
            cwd: None,
        },
        tool_filter: None,
        timeout,
    }
}

#[tokio::test]
async fn stdio_failures_are_clear_errors() {
    let err = McpToolset::connect(
        "ghost",
        stdio(
            "/nonexistent/mcp-server",
            &["--flag"],
            Duration::from_secs(5),
        ),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::Spawn { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("`ghost`") && text.contains("/nonexistent/mcp-server --flag"),
        "{text}"
    );

    // A server that dies before the handshake: its stderr is quoted, env values are not.
    let err = McpToolset::connect(
        "crashy",
        stdio(
            "sh",
            &["-c", "echo 'fatal: no config' >&2; exit 3"],
            Duration::from_secs(10),
        ),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, McpError::Handshake { .. }), "{err:?}");
    assert!(
        text.contains("`crashy`") && text.contains("fatal: no config"),
        "{text}"
    );
    assert!(!text.contains("env-secret-value"), "{text}");
}

#[tokio::test]
async fn stdio_servers_get_a_minimal_environment() {
    // Like the official SDKs: HOME, LOGNAME, PATH, SHELL, TERM, USER and the configured
    // variables; nothing else of ours (API keys...) reaches the server.
    let ours = std::env::vars()
        .map(|(k, _)| k)
        .find(|k| {
            !["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"].contains(&k.as_str())
                && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !k.starts_with(|c: char| c.is_ascii_digit())
        })
        .expect("the test process has some environment variable");
    let script = format!(
        "echo \"configured=$MCP_TEST_SECRET ours=${{{ours}:-absent}} path=${{PATH:+present}}\" >&2; exit 1"
    );
    let err = McpToolset::connect(
        "env",
        stdio("sh", &["-c", &script], Duration::from_secs(10)),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("configured=env-secret-value ours=absent path=present"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_handshake_timeout_kills_the_whole_process_group() {
    // A "server" that never speaks and has a child of its own.
    let marker = format!("mcp-silent-{}", std::process::id());
    let started = Instant::now();
    let connect = McpToolset::connect(
        "silent",
        stdio(
            "sh",
            &["-c", "sleep 300 & wait", &marker],
            Duration::from_secs(3),
        ),
    );
    let (err, pid) = tokio::join!(connect, async {
        // While the handshake waits: sh and its sleep share the server's process group.
        let deadline = Instant::now() + Duration::from_millis(2500);
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let pid = server_pid(&marker);
            let members = group_members(pid);
            if members.len() >= 2 {
                return pid;
            }
            assert!(
                Instant::now() < deadline,
                "expected sh and sleep in the group: {members:?}"
            );
        }
    });
    let err = err.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        matches!(
            err,
            McpError::Timeout {
                stage: "handshake",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("within 3 s"), "{err}");
    assert_gone(pid, "after a handshake timeout").await;
}

// ---------------------------------------------------------------------------------------
// streamable HTTP: a minimal MCP server written with axum
// ---------------------------------------------------------------------------------------

mod http_server {
    use axum::Json;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::{IntoResponse, Response};
    use axum::routing::post;
    use serde_json::{Value, json};
    use std::sync::{Arc, Mutex};

    /// What the server saw.
    #[derive(Default)]
    pub struct Seen {
        /// `(method, authorization header, x-team header)` per POST.
        pub posts: Vec<(String, Option<String>, Option<String>)>,
        /// Cancelled request ids.
        pub cancelled: Vec<Value>,
    }

    pub type Shared = Arc<Mutex<Seen>>;

    fn header(h: &HeaderMap, name: &str) -> Option<String> {
        h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    fn tools_page(cursor: Option<&str>) -> Value {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
        match cursor {
            None => json!({
                "tools": [
                    {"name": "echo", "description": "Echoes the text.", "inputSchema": schema},
                    {"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}}
                ],
                "nextCursor": "page-2"
            }),
            Some(_) => json!({
                "tools": [
                    {"name": "measure", "title": "Measure", "inputSchema": schema},
                    {"name": "hang", "description": "Never answers.", "inputSchema": {"type": "object"}}
                ]
            }),
        }
    }

    async fn mcp(
        State(seen): State<Shared>,
        headers: HeaderMap,
        Json(msg): Json<Value>,
    ) -> Response {
        let method = msg["method"].as_str().unwrap_or("").to_owned();
        {
            let mut s = seen.lock().unwrap();
            s.posts.push((
                method.clone(),
                header(&headers, "authorization"),
                header(&headers, "x-team"),
            ));
            if method == "notifications/cancelled" {
                s.cancelled.push(msg["params"]["requestId"].clone());
            }
        }
        let Some(id) = msg.get("id").cloned() else {
            // Notifications and responses.
            return StatusCode::ACCEPTED.into_response();
        };
        if method == "hang" || (method == "tools/call" && msg["params"]["name"] == "hang") {
            std::future::pending::<()>().await;
        }
        let result = match method.as_str() {
            "initialize" => json!({
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "axum-test-server", "version": "0.0.1"}
            }),
            "ping" => json!({}),
            "tools/list" => tools_page(msg["params"]["cursor"].as_str()),
            "tools/call" => {
                let args = &msg["params"]["arguments"];
                match msg["params"]["name"].as_str() {
                    Some("echo") => json!({"content": [
                        {"type": "text", "text": format!("echo: {}", args["text"].as_str().unwrap_or(""))},
                        {"type": "image", "data": "AAAA", "mimeType": "image/png"}
                    ]}),
                    Some("measure") => json!({
                        "content": [{"type": "text", "text": "{\"length\": 5}"}],
                        "structuredContent": {"length": args["text"].as_str().map_or(0, str::len)}
                    }),
                    Some("fail") => json!({
                        "content": [{"type": "text", "text": "the widget is broken"}],
                        "isError": true
                    }),
                    _ => {
                        return Json(json!({"jsonrpc": "2.0", "id": id,
                            "error": {"code": -32602, "message": "unknown tool"}}))
                        .into_response();
                    }
                }
            }
            _ => {
                return Json(json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": "method not found"}}))
                .into_response();
            }
        };
        (
            [("mcp-session-id", "session-1")],
            Json(json!({"jsonrpc": "2.0", "id": id, "result": result})),
        )
            .into_response()
    }

    /// Serves on 127.0.0.1; `/mcp` answers, `/silent` never does. Returns the base URL.
    pub async fn start() -> (String, Shared) {
        let seen = Shared::default();
        let app = axum::Router::new()
            .route(
                "/mcp",
                post(mcp)
                    .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
                    .delete(|| async { StatusCode::OK }),
            )
            .route(
                "/silent",
                post(|| async {
                    std::future::pending::<()>().await;
                    StatusCode::OK
                }),
            )
            .with_state(seen.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        (format!("http://{addr}"), seen)
    }
}

fn http(url: String, timeout: Duration) -> McpConfig {
    McpConfig {
        transport: McpTransport::Http {
            url,
            headers: vec![
                ("Authorization".into(), "Bearer test-token-123".into()),
                ("X-Team".into(), "blue".into()),
            ],
            sse: false,
        },
        tool_filter: None,
        timeout,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_server_tools_errors_and_timeouts() {
    let (base, seen) = http_server::start().await;
    let toolset = McpToolset::connect(
        "remote",
        http(format!("{base}/mcp"), Duration::from_secs(2)),
    )
    .await
    .unwrap();
    let tools = toolset.tools();
    // Both pages of tools/list.
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["echo", "fail", "measure", "hang"]);
    let echo = find(&tools, "echo");
    let decl = echo.declaration();
    assert_eq!(decl.description, "Echoes the text.");
    assert_eq!(decl.parameters.unwrap()["required"], json!(["text"]));
    // The title stands in for a missing description.
    assert_eq!(find(&tools, "measure").declaration().description, "Measure");

    assert_eq!(
        call(echo, json!({"text": "hi"})).await.unwrap(),
        json!({"content": "echo: hi\n[image image/png]"})
    );
    assert_eq!(
        call(find(&tools, "measure"), json!({"text": "hello"}))
            .await
            .unwrap(),
        json!({"length": 5})
    );
    assert_eq!(
        call(find(&tools, "fail"), json!({})).await.unwrap_err(),
        "the widget is broken"
    );

    // A call the server never answers ends at the configured timeout.
    let started = Instant::now();
    let err = call(find(&tools, "hang"), json!({})).await.unwrap_err();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(6),
        "{waited:?}"
    );
    assert!(
        err.contains("hang") && err.contains("no answer within 2 s"),
        "{err}"
    );
    // The session still works afterwards.
    assert!(call(echo, json!({"text": "again"})).await.is_ok());
    // The timed-out call is cancelled (the notification goes out in the background).
    let deadline = Instant::now() + Duration::from_secs(5);
    while seen.lock().unwrap().cancelled.is_empty() {
        assert!(Instant::now() < deadline, "no notifications/cancelled");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    toolset.shutdown().await;

    let seen = seen.lock().unwrap();
    let methods: Vec<&str> = seen.posts.iter().map(|p| p.0.as_str()).collect();
    for m in [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
    ] {
        assert!(methods.contains(&m), "{m} not in {methods:?}");
    }
    // Every request carried the configured headers.
    for (method, auth, team) in &seen.posts {
        assert_eq!(auth.as_deref(), Some("Bearer test-token-123"), "{method}");
        assert_eq!(team.as_deref(), Some("blue"), "{method}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_failures_are_clear_and_keep_secrets() {
    let (base, _seen) = http_server::start().await;

    let err = McpToolset::connect(
        "remote",
        McpConfig {
            tool_filter: Some(vec!["echo".into(), "nope".into()]),
            ..http(format!("{base}/mcp"), Duration::from_secs(5))
        },
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("has no tool nope; it offers: echo, fail, measure, hang"),
        "{err}"
    );

    // A server that never answers the handshake.
    let started = Instant::now();
    let err = McpToolset::connect(
        "remote",
        http(
            format!("{base}/silent?token=query-secret"),
            Duration::from_secs(1),
        ),
    )
    .await
    .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        matches!(
            err,
            McpError::Timeout {
                stage: "handshake",
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains(&format!("{base}/silent")), "{text}");
    assert!(
        !text.contains("query-secret") && !text.contains("test-token-123"),
        "{text}"
    );

    // Nothing listens on this port.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let err = McpToolset::connect(
        "remote",
        http(
            format!("http://{closed}/mcp?token=query-secret"),
            Duration::from_secs(10),
        ),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(text.contains(&format!("http://{closed}/mcp")), "{text}");
    assert!(
        !text.contains("query-secret") && !text.contains("test-token-123"),
        "{text}"
    );

    // Bad configuration is refused before any request, naming the header but not its value.
    let err = McpToolset::connect(
        "remote",
        McpConfig {
            transport: McpTransport::Http {
                url: format!("{base}/mcp"),
                headers: vec![("X-Key".into(), "line\nbreak-secret".into())],
                sse: false,
            },
            tool_filter: None,
            timeout: Duration::from_secs(5),
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(err, McpError::Config { .. }), "{err:?}");
    assert!(
        err.to_string().contains("X-Key") && !err.to_string().contains("break-secret"),
        "{err}"
    );
    let err = McpToolset::connect(
        "remote",
        http("ftp://127.0.0.1/mcp".into(), Duration::from_secs(5)),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("http or https"), "{err}");
}

/// A workflow that uses the filesystem server twice: declared under `define.tools`
/// (native) and written as ADK's `McpToolset` (ADK Agent Config), through the CLI.
#[test]
fn workflows_use_mcp_servers_declared_natively_and_in_adk_syntax() {
    let server = filesystem_server();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("notes.txt"), "remember the milk").unwrap();
    let root = format!(
        r#"
agent_class: SequentialAgent
name: flow
sub_agents:
  - name: native
    model: m
    instruction: Read.
    tools: [{{name: files}}]
  - name: adk
    model: m
    instruction: Read.
    tools:
      - name: McpToolset
        args:
          stdio_connection_params:
            server_params: {{command: node, args: ["{server}", "{data}"]}}
            timeout: 30
          tool_filter: [list_directory]
define:
  tools:
    files:
      mcp: {{command: node, args: ["{server}", "{data}"], tool_filter: [read_text_file]}}
"#,
        server = server.display(),
        data = data.path().display()
    );
    let script = format!(
        r#"
replies:
  native:
    - function_call: {{name: read_text_file, args: {{path: "{notes}"}}}}
    - text: done
  adk:
    - function_call: {{name: list_directory, args: {{path: "{dir}"}}}}
    - text: done
"#,
        notes = data.path().join("notes.txt").display(),
        dir = data.path().display()
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("root_agent.yaml"), root).unwrap();
    std::fs::write(dir.path().join("script.yaml"), script).unwrap();
    let run = |allow: &[&str]| {
        assert_cmd::Command::cargo_bin("adk-flow")
            .unwrap()
            .current_dir(dir.path())
            .env_remove("ADK_FLOW_ALLOW_COMMANDS")
            .args([
                "run",
                "root_agent.yaml",
                "--script",
                "script.yaml",
                "--json",
                "--db",
                "memory",
            ])
            .args(["-m", "read", "--dump-requests", "req.jsonl"])
            .args(allow)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap()
    };
    // Both servers start programs: without permission nothing starts and the error names
    // each of them and the flag.
    let denied = run(&[]);
    let stderr = String::from_utf8_lossy(&denied.stderr);
    assert_eq!(denied.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("MCP server `files` starts `node`")
            && stderr.contains("sub_agents/1/tools/0")
            && stderr.contains("--allow-commands"),
        "{stderr}"
    );
    assert!(denied.stdout.is_empty());
    let out = run(&["--allow-commands"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let response =
        |i: usize| events[i]["content"]["parts"][0]["functionResponse"]["response"].to_string();
    assert!(response(1).contains("remember the milk"), "{}", response(1));
    assert!(response(4).contains("notes.txt"), "{}", response(4));
    let requests = std::fs::read_to_string(dir.path().join("req.jsonl")).unwrap();
    let first: Value = serde_json::from_str(requests.lines().next().unwrap()).unwrap();
    let names: Vec<&str> = first["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec!["read_text_file"],
        "the filter limits what the model sees"
    );
}

/// The support example against live services: an orders API (HTTP tool) and an MCP server
/// (the checker's documentation tools), configured only through the environment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_support_workflow_uses_a_live_orders_api_and_mcp_server() {
    let (mcp_base, _seen) = http_server::start().await;
    let orders = axum::Router::new().route(
        "/orders/{id}",
        axum::routing::get(
            |axum::extract::Path(id): axum::extract::Path<String>| async move {
                axum::Json(json!({"id": id, "status": "shipped", "carrier": "DHL"}))
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let orders_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, orders).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.yaml");
    std::fs::write(
        &script,
        r#"
replies:
  support_router:
    - function_call: {name: transfer_to_agent, args: {agent_name: orders}}
    - function_call: {name: transfer_to_agent, args: {agent_name: app_support}}
  order_desk:
    - function_call: {name: order_status, args: {order_id: "1001"}}
  drafter:
    - text: '{"reply": "Please reinstall the app, then sign in again."}'
  checker:
    - function_call: {name: echo, args: {text: "crash on start"}}
    - function_call: {name: exit_loop, args: {}}
"#,
    )
    .unwrap();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = tokio::task::spawn_blocking(move || {
        assert_cmd::Command::cargo_bin("adk-flow")
            .unwrap()
            .current_dir(&repo)
            .env("SUPPORT_ORDERS_TOOL", "order_status")
            .env("SUPPORT_ORDERS_URL", &orders_url)
            .env("SUPPORT_MCP_URL", format!("{mcp_base}/mcp"))
            .args(["run", "workflows/support.yaml", "--script"])
            .arg(&script)
            .args([
                "--json",
                "--db",
                "memory",
                "-m",
                "Where is order 1001?",
                "-m",
                "The app crashes.",
            ])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let response = |name: &str| {
        events
            .iter()
            .find_map(|e| {
                let r = &e["content"]["parts"][0]["functionResponse"];
                (r["name"] == name).then(|| r["response"].clone())
            })
            .unwrap_or_else(|| panic!("no response from {name}: {events:?}"))
    };
    assert_eq!(
        response("order_status"),
        json!({"id": "1001", "status": "shipped", "carrier": "DHL"})
    );
    // The reply is written from the API's record.
    assert!(
        events.iter().any(|e| e["author"] == "order_desk"
            && e["content"]["parts"][0]["text"] == "Order 1001: shipped with DHL."),
        "{events:?}"
    );
    assert!(
        response("echo")
            .to_string()
            .contains("echo: crash on start")
    );
}
