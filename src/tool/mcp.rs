//! MCP toolsets: the tools of a Model Context Protocol server, offered to agents as
//! ordinary [`Tool`]s, through the official Rust SDK (`rmcp`).
//!
//! A toolset starts a server over stdio (a child process in its own process group) or
//! connects to one over streamable HTTP, performs the MCP handshake, and lists the
//! server's tools (every page), optionally filtered. Each tool declares the server's
//! name, description and `inputSchema`; a call is one `tools/call`, bounded by the
//! configured timeout. The child process never outlives the toolset: [`McpToolset::shutdown`]
//! closes the session (stdin EOF, then SIGTERM, then SIGKILL), and dropping the last
//! reference kills the process group.
//!
//! Error messages name the server by its command line or by its URL without query string
//! or credentials; header and environment values are never shown.

mod error;
mod process;
mod result;
mod sse;
mod tool;

pub use error::McpError;

use error::{redact, shown_server, shown_url, url_of};
use tool::McpTool;

use crate::tool::Tool;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, RoleClient, ServiceExt};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How long [`McpToolset::shutdown`] waits for the session to close before killing.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(8);

/// How to reach one MCP server and which of its tools to offer.
#[derive(Debug, Clone)]
pub struct McpConfig {
    /// Where the server is.
    pub transport: McpTransport,
    /// Only these tools (by MCP name); `None` offers all of them.
    pub tool_filter: Option<Vec<String>>,
    /// Bounds the handshake, the tool listing and each tool call.
    pub timeout: Duration,
}

/// How the server is reached. Its `Debug` output shows header and environment names, not
/// their values.
#[derive(Clone)]
pub enum McpTransport {
    /// A local program speaking MCP over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables for the server. Of our own environment it inherits only
        /// what the official MCP SDKs pass on (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`,
        /// `USER` on Unix), so secrets such as API keys must be listed here to reach it.
        env: Vec<(String, String)>,
        /// Its working directory; ours when absent.
        cwd: Option<PathBuf>,
    },
    /// A remote server speaking streamable HTTP, or the deprecated HTTP+SSE transport.
    Http {
        /// The MCP endpoint, e.g. `https://host/mcp` (with `sse`, the event stream's URL,
        /// e.g. `https://host/sse`).
        url: String,
        /// Headers sent with every request (e.g. `Authorization`).
        headers: Vec<(String, String)>,
        /// Speak the deprecated HTTP+SSE transport (ADK's `sse_connection_params`).
        sse: bool,
    },
}

impl std::fmt::Debug for McpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = |pairs: &[(String, String)]| -> Vec<String> {
            pairs.iter().map(|(k, _)| k.clone()).collect()
        };
        match self {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &names(env))
                .field("cwd", cwd)
                .finish(),
            McpTransport::Http { url, headers, sse } => f
                .debug_struct("Http")
                .field("url", &shown_url(url))
                .field("headers", &names(headers))
                .field("sse", sse)
                .finish(),
        }
    }
}

/// The live connection, shared by the toolset and its tools.
struct Session {
    name: String,
    server: String,
    /// The full URL of an HTTP server, removed from error texts.
    url: Option<String>,
    timeout: Duration,
    peer: Peer<RoleClient>,
    running: Mutex<Option<RunningService<RoleClient, ClientConfig>>>,
    /// Declared after `running`, so on drop the session is cancelled first and the
    /// process group killed right after.
    child: Option<crate::tool::process::GroupGuard>,
    /// The last stderr lines of a stdio server, quoted when the connection drops.
    stderr: Option<process::StderrTail>,
}

/// The tools of one MCP server.
pub struct McpToolset {
    session: Arc<Session>,
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for McpToolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolset")
            .field("name", &self.session.name)
            .field("server", &self.session.server)
            .field(
                "tools",
                &self.tools.iter().map(|t| t.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

fn http_headers(
    headers: &[(String, String)],
) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, String> {
    const RESERVED: [&str; 4] = [
        "accept",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
    ];
    let mut map = HashMap::new();
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| format!("invalid header name `{k}`"))?;
        if RESERVED.contains(&name.as_str()) {
            return Err(format!(
                "header `{k}` is set by the MCP client itself and cannot be configured"
            ));
        }
        let mut value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|_| format!("invalid value for header `{k}`"))?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    Ok(map)
}

impl McpToolset {
    /// Starts/connects the server, performs the MCP handshake, lists tools (all pages),
    /// applies the filter.
    ///
    /// # Errors
    /// Bad configuration, a program that cannot start, a failed or timed-out handshake or
    /// listing, and filter entries the server does not offer (naming what it offers).
    pub async fn connect(name: &str, config: McpConfig) -> Result<McpToolset, McpError> {
        let server = shown_server(&config.transport);
        let client = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("adk-flow", env!("CARGO_PKG_VERSION")),
        );
        let timeout = config.timeout;
        let timed_out = |stage: &'static str| McpError::Timeout {
            name: name.to_owned(),
            server: server.clone(),
            stage,
            timeout,
        };
        let handshake_failed = |reason: String| McpError::Handshake {
            name: name.to_owned(),
            server: server.clone(),
            reason: redact(reason, url_of(&config.transport)),
        };
        let (running, child, stderr) = match &config.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let launch = process::Launch {
                    command,
                    args,
                    env,
                    cwd: cwd.as_ref(),
                };
                let (transport, child, stderr) =
                    process::spawn(name, &launch).map_err(|e| McpError::Spawn {
                        name: name.to_owned(),
                        server: server.clone(),
                        reason: e.to_string(),
                    })?;
                match tokio::time::timeout(timeout, client.serve(transport)).await {
                    Ok(Ok(running)) => (running, Some(child), Some(stderr)),
                    Ok(Err(e)) => {
                        // Give the stderr reader a moment to catch the server's last words.
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        return Err(handshake_failed(format!(
                            "{}{}",
                            result::describe_init(&e),
                            stderr.suffix()
                        )));
                    }
                    Err(_) => return Err(timed_out("handshake")),
                }
            }
            McpTransport::Http { url, headers, sse } => {
                let config_error = |reason: String| McpError::Config {
                    name: name.to_owned(),
                    server: server.clone(),
                    reason,
                };
                let parsed = reqwest::Url::parse(url)
                    .map_err(|e| config_error(format!("invalid URL: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(config_error(format!(
                        "the URL scheme must be http or https, not `{}`",
                        parsed.scheme()
                    )));
                }
                let headers = http_headers(headers).map_err(config_error)?;
                let served = if *sse {
                    let header_map = headers.into_iter().collect();
                    tokio::time::timeout(timeout, async {
                        let pair = sse::connect(url, header_map)
                            .await
                            .map_err(|e| handshake_failed(e.to_string()))?;
                        Ok(client.serve(pair).await)
                    })
                    .await
                } else {
                    let transport = StreamableHttpClientTransport::from_config(
                        StreamableHttpClientTransportConfig::with_uri(url.as_str())
                            .custom_headers(headers),
                    );
                    tokio::time::timeout(timeout, async { Ok(client.serve(transport).await) }).await
                };
                let served = match served {
                    Ok(Ok(r)) => Ok(r),
                    Ok(Err(e)) => return Err(e),
                    Err(elapsed) => Err(elapsed),
                };
                match served {
                    Ok(Ok(running)) => (running, None, None),
                    Ok(Err(e)) => return Err(handshake_failed(result::describe_init(&e))),
                    Err(_) => return Err(timed_out("handshake")),
                }
            }
        };
        let session = Arc::new(Session {
            name: name.to_owned(),
            server: server.clone(),
            url: url_of(&config.transport).map(str::to_owned),
            timeout,
            peer: running.peer().clone(),
            running: Mutex::new(Some(running)),
            child,
            stderr,
        });
        let listed = match tokio::time::timeout(timeout, session.peer.list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(e)) => {
                let reason = redact(result::describe_service(&e), url_of(&config.transport));
                close(&session).await;
                return Err(McpError::ListTools {
                    name: name.to_owned(),
                    server,
                    reason,
                });
            }
            Err(_) => {
                close(&session).await;
                return Err(timed_out("tool listing"));
            }
        };
        if let Some(filter) = &config.tool_filter {
            let missing: Vec<String> = filter
                .iter()
                .filter(|f| !listed.iter().any(|t| t.name == f.as_str()))
                .cloned()
                .collect();
            if !missing.is_empty() {
                close(&session).await;
                return Err(McpError::MissingTools {
                    name: name.to_owned(),
                    server,
                    missing,
                    available: listed.iter().map(|t| t.name.to_string()).collect(),
                });
            }
        }
        let tools = listed
            .into_iter()
            .filter(|t| {
                config
                    .tool_filter
                    .as_ref()
                    .is_none_or(|f| f.iter().any(|n| t.name == n.as_str()))
            })
            .map(|t| {
                let tool: Arc<dyn Tool> = Arc::new(McpTool {
                    name: t.name.to_string(),
                    description: t
                        .description
                        .as_deref()
                        .or(t.title.as_deref())
                        .unwrap_or_default()
                        .to_owned(),
                    parameters: Value::Object((*t.input_schema).clone()),
                    session: Arc::clone(&session),
                });
                tool
            })
            .collect();
        Ok(McpToolset { session, tools })
    }

    /// One `Arc<dyn Tool>` per MCP tool: name = the MCP tool name, declaration description
    /// = tool description, parameters = the tool's inputSchema (JSON Schema object).
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.clone()
    }

    /// Closes the session and ends a stdio child process (no orphan processes). Tools
    /// still held elsewhere answer with an error afterwards.
    pub async fn shutdown(self) {
        close(&self.session).await;
    }
}

/// Closes the session (for stdio: stdin EOF, then SIGTERM, then SIGKILL, as the MCP
/// specification describes), then kills whatever is left of the process group.
async fn close(session: &Session) {
    let running = session
        .running
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some(mut running) = running {
        let _ = running.close_with_timeout(CLOSE_TIMEOUT).await;
    }
    if let Some(child) = &session.child {
        child.kill_group();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_and_invalid_headers_are_refused_without_values() {
        let e = http_headers(&[("Accept".into(), "x".into())]).err();
        assert!(e.is_some_and(|e| e.contains("Accept")));
        let e = http_headers(&[("X-Key".into(), "bad\nvalue".into())]).err();
        assert!(e.is_some_and(|e| !e.contains("bad")));
        assert!(http_headers(&[("Authorization".into(), "Bearer t".into())]).is_ok());
    }
}
