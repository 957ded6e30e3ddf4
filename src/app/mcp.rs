//! The MCP servers of an app: started (or connected to) once, when the app starts, and
//! closed once, when it shuts down.

use crate::config::Workflow;
use crate::tool::Tool;
use crate::tool::mcp::{McpConfig, McpError, McpToolset, McpTransport};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// An MCP server that could not be started.
#[derive(Debug, thiserror::Error)]
pub enum McpStartError {
    /// The server has neither `command` nor `url`.
    #[error("MCP server `{server}` needs `command` or `url`")]
    NoTransport {
        /// The server's key.
        server: String,
    },
    /// Starting or connecting failed.
    #[error("MCP server `{server}`")]
    Connect {
        /// The server's key.
        server: String,
        /// Why.
        #[source]
        source: McpError,
    },
}

/// The connected MCP servers of an app.
#[derive(Default)]
pub(super) struct McpServers {
    toolsets: Vec<McpToolset>,
    /// Their tools, by server key (see [`Workflow::mcp_servers`]).
    pub(super) tools: HashMap<String, Vec<Arc<dyn Tool>>>,
}

impl McpServers {
    /// Starts (or connects to) every MCP server the workflow uses. An optional server that
    /// is not configured or not reachable is left out with a warning.
    ///
    /// # Errors
    /// A server that cannot be started; the servers already started are shut down.
    pub(super) async fn start(workflow: &Workflow) -> Result<McpServers, McpStartError> {
        let mut servers = McpServers::default();
        for (key, (cfg, base_dir)) in &workflow.mcp_servers {
            let configured =
                |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
            if cfg.optional && !configured(&cfg.command) && !configured(&cfg.url) {
                tracing::warn!("MCP server `{key}` is not configured; its tools are left out");
                servers.tools.insert(key.clone(), Vec::new());
                continue;
            }
            let transport = match (&cfg.command, &cfg.url) {
                (Some(command), _) => McpTransport::Stdio {
                    command: command.clone(),
                    args: cfg.args.clone(),
                    env: cfg
                        .env
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                    cwd: Some(base_dir.join(cfg.cwd.as_deref().unwrap_or("."))),
                },
                (None, Some(url)) => McpTransport::Http {
                    sse: cfg.sse,
                    url: url.clone(),
                    headers: cfg
                        .headers
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                },
                (None, None) => {
                    servers.shutdown().await;
                    return Err(McpStartError::NoTransport {
                        server: key.clone(),
                    });
                }
            };
            let config = McpConfig {
                transport,
                tool_filter: cfg.tool_filter.clone(),
                timeout: Duration::from_secs(cfg.timeout_secs.unwrap_or(30)),
            };
            match McpToolset::connect(key, config).await {
                Ok(set) => {
                    servers.tools.insert(key.clone(), set.tools());
                    servers.toolsets.push(set);
                }
                Err(e) if cfg.optional => {
                    tracing::warn!(
                        "MCP server `{key}` is unavailable, its tools are left out: {e}"
                    );
                    servers.tools.insert(key.clone(), Vec::new());
                }
                Err(source) => {
                    servers.shutdown().await;
                    return Err(McpStartError::Connect {
                        server: key.clone(),
                        source,
                    });
                }
            }
        }
        Ok(servers)
    }

    /// Closes every server (and ends their processes).
    pub(super) async fn shutdown(self) {
        for t in self.toolsets {
            t.shutdown().await;
        }
    }
}
