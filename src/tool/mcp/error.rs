//! Why a toolset could not be set up, and how servers are named in messages: by command
//! line, or by URL without credentials, query or fragment.

use super::McpTransport;
use std::time::Duration;

/// Why a toolset could not be set up. Messages name the toolset and the server (command
/// line, or URL without query or credentials), never header or environment values.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The configuration cannot work (bad URL, header name or value).
    #[error("MCP toolset `{name}` ({server}): {reason}")]
    Config {
        /// Toolset name.
        name: String,
        /// The server, as shown.
        server: String,
        /// What is wrong.
        reason: String,
    },
    /// The server program could not be started.
    #[error("MCP toolset `{name}`: could not start {server}: {reason}")]
    Spawn {
        /// Toolset name.
        name: String,
        /// The command line.
        server: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The MCP handshake failed (the server exited, refused, or spoke something else).
    #[error("MCP toolset `{name}`: handshake with {server} failed: {reason}")]
    Handshake {
        /// Toolset name.
        name: String,
        /// The server, as shown.
        server: String,
        /// What went wrong, with the server's last stderr lines when it has any.
        reason: String,
    },
    /// `tools/list` failed.
    #[error("MCP toolset `{name}`: listing the tools of {server} failed: {reason}")]
    ListTools {
        /// Toolset name.
        name: String,
        /// The server, as shown.
        server: String,
        /// What went wrong.
        reason: String,
    },
    /// The server did not answer in time.
    #[error(
        "MCP toolset `{name}`: {server} did not answer the {stage} within {} s",
        .timeout.as_secs_f64()
    )]
    Timeout {
        /// Toolset name.
        name: String,
        /// The server, as shown.
        server: String,
        /// `handshake` or `tool listing`.
        stage: &'static str,
        /// The configured timeout.
        timeout: Duration,
    },
    /// `tool_filter` names tools the server does not offer.
    #[error(
        "MCP toolset `{name}`: {server} has no tool {}; it offers: {}",
        .missing.join(", "),
        if .available.is_empty() { "none".to_owned() } else { .available.join(", ") }
    )]
    MissingTools {
        /// Toolset name.
        name: String,
        /// The server, as shown.
        server: String,
        /// Filter entries the server does not offer.
        missing: Vec<String>,
        /// What it does offer.
        available: Vec<String>,
    },
}

/// A URL as it may appear in messages: no credentials, query or fragment.
pub(super) fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(u) => {
            let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!(
                "{}://{}{port}{}",
                u.scheme(),
                u.host_str().unwrap_or(""),
                u.path()
            )
        }
        Err(_) => url
            .split(['?', '#'])
            .next()
            .unwrap_or_default()
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .to_owned(),
    }
}

pub(super) fn shown_server(transport: &McpTransport) -> String {
    match transport {
        McpTransport::Stdio { command, args, .. } => {
            let mut line = command.clone();
            for a in args {
                line.push(' ');
                line.push_str(a);
            }
            format!("`{line}`")
        }
        McpTransport::Http { url, .. } => format!("`{}`", shown_url(url)),
    }
}

/// Removes the full URL (which may carry a query token) from an error text, and the
/// secrets of any other URL in it ([`crate::redact::urls_in`]).
pub(super) fn redact(text: String, url: Option<&str>) -> String {
    let Some(url) = url else {
        return crate::redact::urls_in(&text).into_owned();
    };
    let shown = shown_url(url);
    let mut text = text.replace(url, &shown);
    if let Ok(parsed) = reqwest::Url::parse(url) {
        text = text.replace(parsed.as_str(), &shown);
    }
    crate::redact::urls_in(&text).into_owned()
}

/// The URL of an HTTP transport, for [`redact`].
pub(super) fn url_of(transport: &McpTransport) -> Option<&str> {
    match transport {
        McpTransport::Http { url, .. } => Some(url),
        McpTransport::Stdio { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_secrets() {
        assert_eq!(
            shown_url("https://user:pw@example.com:8443/mcp?token=abc#x"),
            "https://example.com:8443/mcp"
        );
        let t = McpTransport::Http {
            url: "http://127.0.0.1:9/mcp?key=s3cret".into(),
            headers: vec![],
            sse: false,
        };
        let text = redact(
            "error sending request for url (http://127.0.0.1:9/mcp?key=s3cret)".into(),
            url_of(&t),
        );
        assert!(!text.contains("s3cret"), "{text}");
    }
}
