//! MCP over the deprecated HTTP+SSE transport (ADK's `sse_connection_params`), against a
//! real server: `tests/fixtures/mcp-sse/server.cjs`, built on the official TypeScript SDK's
//! `SSEServerTransport` (installed with the filesystem server fixture).

use crate::common;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The SSE server, stopped (by its pid) when dropped.
struct SseServer {
    child: Child,
    port: u16,
}

impl SseServer {
    fn start() -> SseServer {
        let entry = crate::mcp::filesystem_server();
        // .../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
        let modules = entry.ancestors().nth(4).unwrap().to_owned();
        let mut child = Command::new("node")
            .arg(common::repo().join("tests/fixtures/mcp-sse/server.cjs"))
            .arg(&modules)
            .stdout(Stdio::piped())
            .spawn()
            .expect("node runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
        SseServer { child, port }
    }
}

impl Drop for SseServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn adk_sse_connection_params_reach_a_real_sse_server() {
    let server = SseServer::start();
    let root = format!(
        r#"
name: calc
model: gemini-2.5-flash
instruction: Compute.
tools:
  - name: google.adk.tools.mcp_tool.mcp_toolset.McpToolset
    args:
      sse_connection_params:
        url: http://127.0.0.1:{}/sse
        timeout: 10
      tool_filter: [add]
"#,
        server.port
    );
    let script = r#"
replies:
  calc:
    - function_call: {name: add, args: {a: 2, b: 40}}
    - text: "42"
"#;
    let out = common::run(
        &[("root_agent.yaml", &root), ("script.yaml", script)],
        &["-m", "2+40?", "--dump-requests", "requests.jsonl"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.lines(),
        vec![
            r#"calc: call add {"a":2,"b":40}"#,
            r#"calc: resp add {"content":"42"}"#,
            "calc: 42",
        ]
    );
    let declared: Vec<String> = out.requests()[0]["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(declared, ["add"], "tool_filter applies");
}

#[test]
fn a_native_mcp_tool_with_sse_and_an_unreachable_server_are_handled() {
    let server = SseServer::start();
    let root = |url: String| {
        format!(
            "name: calc\nmodel: gemini-2.5-flash\ninstruction: Echo.\ntools: [{{name: remote}}]\ndefine:\n  tools:\n    remote:\n      description: Remote tools.\n      mcp: {{url: \"{url}\", sse: true, timeout_secs: 5}}\n"
        )
    };
    let script = "replies:\n  calc:\n    - function_call: {name: echo, args: {message: hi}}\n    - text: done\n";
    let out = common::run(
        &[
            (
                "root_agent.yaml",
                &root(format!("http://127.0.0.1:{}/sse", server.port)),
            ),
            ("script.yaml", script),
        ],
        &["-m", "echo"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.lines()[1], r#"calc: resp echo {"content":"echo: hi"}"#);
    // A URL that is not an event stream fails the start with a clear error.
    let out = common::run(
        &[
            (
                "root_agent.yaml",
                &root(format!("http://127.0.0.1:{}/nope", server.port)),
            ),
            ("script.yaml", script),
        ],
        &["-m", "echo"],
    );
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("cannot open the event stream"),
        "{}",
        out.stderr
    );
}
