//! The HTTP tool: a templated request, retried on 429/5xx/timeouts, bounded in time and
//! size, limited to allowed hosts.
//!
//! The fences:
//! - **Every hop is checked.** The client follows no redirect by itself; [`HttpSpec::call`]
//!   follows up to [`MAX_REDIRECTS`], each to a host and port on the allowlist (and never
//!   from `https` down to `http`), so no declared header or body reaches a host that is
//!   not on it.
//! - **Hosts and ports.** An `allow_hosts` entry is `host`, `host:PORT` or `host:*`
//!   (IPv6 as `[::1]:8080`); a bare host allows only the scheme's default port (80, 443).
//!   Hosts are compared after URL normalization (case, IDNA, IPv4 forms).
//! - **Model values stay values.** Every `{{ }}` value in the URL is percent-encoded
//!   ([`jinja::render_url`]), and a path with a `.`/`..` segment is refused.
//! - **Secrets stay out of messages.** Errors name the method, host and path, never the
//!   query or userinfo; header values, userinfo and long literal query values are scrubbed
//!   from anything a server echoes back ([`Scrubber`]).

use super::ToolError;
use crate::hosts::AllowedHosts;
use crate::template::jinja;
use futures::StreamExt;
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Redirects followed at most, per call.
pub const MAX_REDIRECTS: usize = 10;

/// Retry policy.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    /// Attempts in all.
    pub max_attempts: u32,
    /// First backoff.
    pub initial_backoff: Duration,
    /// Longest backoff.
    pub max_backoff: Duration,
}

/// A declared HTTP call.
#[derive(Debug, Clone)]
pub struct HttpSpec {
    /// Method.
    pub method: reqwest::Method,
    /// URL template.
    pub url: String,
    /// Header templates.
    pub headers: Vec<(String, String)>,
    /// Query templates.
    pub query: Vec<(String, String)>,
    /// JSON body template.
    pub body: Option<Value>,
    /// JSON pointer to return.
    pub pick: Option<String>,
    /// Per-attempt timeout.
    pub timeout: Duration,
    /// Retries.
    pub retry: Retry,
    /// Response size limit in bytes.
    pub max_response_bytes: u64,
    /// Hosts (and ports) every request and redirect may go to.
    pub allow_hosts: AllowedHosts,
    /// The client the app's HTTP tools share.
    pub client: SharedClient,
}

/// The client every HTTP tool of an app shares, built on the first call: it follows no
/// redirect ([`HttpSpec::call`] does, checking each hop). Building it loads the system's
/// root certificates, milliseconds that a run calling no HTTP tool (a scripted test, a
/// stubbed tool) does not pay.
#[derive(Debug, Clone, Default)]
pub struct SharedClient(Arc<OnceLock<reqwest::Client>>);

impl SharedClient {
    /// A client not built yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The client, built now if this is the first call.
    ///
    /// # Errors
    /// The TLS backend cannot start.
    pub fn get(&self) -> reqwest::Result<&reqwest::Client> {
        if let Some(client) = self.0.get() {
            return Ok(client);
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("adk-flow/", env!("CARGO_PKG_VERSION")))
            .build()?;
        // Two first calls at once build two clients; one is kept, both work.
        Ok(self.0.get_or_init(|| client))
    }
}

/// `scheme://host:port` of a URL: where a request goes, without path, query or
/// credentials (a redirect's path and query may carry the server's secrets).
fn origin(url: &reqwest::Url) -> String {
    let port = url
        .port_or_known_default()
        .map(|p| format!(":{p}"))
        .unwrap_or_default();
    format!("{}://{}{port}", url.scheme(), url.host_str().unwrap_or(""))
}

/// `scheme://host[:port]/path`: a URL as errors show it.
fn shown_url(url: &reqwest::Url) -> String {
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    format!(
        "{}://{}{port}{}",
        url.scheme(),
        url.host_str().unwrap_or(""),
        url.path()
    )
}

/// Whether a URL's path has a `.` or `..` segment, written plainly or percent-encoded
/// (the URL parser would resolve either, so a value could climb the path).
fn has_dot_segment(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let Some(path_start) = rest.find('/') else {
        return false;
    };
    let path = rest[path_start..].split(['?', '#']).next().unwrap_or("");
    path.split('/').any(|seg| {
        let seg = seg.to_ascii_lowercase().replace("%2e", ".");
        seg == "." || seg == ".."
    })
}

/// Removes the secrets a request carried (header values, userinfo, literal query
/// values) from a text a server may have built from it, then the secrets of any URL.
struct Scrubber(Vec<String>);

impl Scrubber {
    fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for secret in &self.0 {
            out = out.replace(secret.as_str(), crate::redact::REDACTED);
        }
        crate::redact::urls_in(&out).into_owned()
    }
}

/// Query values written in the workflow (after `${VAR}`) this long or longer are treated
/// as credentials; shorter ones (`json`, `v2`) are not worth blanking out of messages.
const MIN_LITERAL_SECRET: usize = 8;

/// What one hop ends with.
enum Answer {
    Done(Value),
    /// A 3xx with a `Location`.
    Redirect(reqwest::StatusCode, String),
}

/// What one attempt ends with.
enum Attempt {
    Answer(Answer),
    Retry(String),
}

/// Where the next hop goes and what it sends.
struct Hop {
    method: reqwest::Method,
    url: reqwest::Url,
    body: Option<Value>,
}

impl HttpSpec {
    /// Makes the call with templates rendered from `ctx`, following allowed redirects.
    ///
    /// # Errors
    /// Template, host, redirect, transport and HTTP failures, worded for the model.
    pub async fn call(&self, ctx: &Value) -> Result<Value, ToolError> {
        let render = |t: &str| jinja::render(t, ctx).map_err(|e| ToolError::new(e.0));
        let url_text = jinja::render_url(&self.url, ctx).map_err(|e| ToolError::new(e.0))?;
        if has_dot_segment(&url_text) {
            return Err(ToolError::new(
                "the URL path has a `.` or `..` segment after templating; values cannot change the path",
            ));
        }
        let mut url = reqwest::Url::parse(&url_text)
            .map_err(|e| ToolError::new(format!("invalid URL after templating: {e}")))?;
        let mut secrets: Vec<String> = Vec::new();
        secrets.extend(
            [url.username(), url.password().unwrap_or("")]
                .into_iter()
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        if !self.url.contains("{{") && !self.url.contains("{%") {
            secrets.extend(
                url.query_pairs()
                    .map(|(_, v)| v.into_owned())
                    .filter(|v| v.len() >= MIN_LITERAL_SECRET),
            );
        }
        if !self.allow_hosts.permits(&url) {
            return Err(ToolError::new(format!(
                "host `{}` is not allowed for this tool (allowed: {})",
                origin(&url),
                self.allow_hosts
            )));
        }
        {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in &self.query {
                let value = render(v)?;
                if !v.contains("{{") && !v.contains("{%") && value.len() >= MIN_LITERAL_SECRET {
                    secrets.push(value.clone());
                }
                pairs.append_pair(k, &value);
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
        let mut headers = reqwest::header::HeaderMap::new();
        for (k, v) in &self.headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| ToolError::new(format!("invalid header name `{k}`")))?;
            let rendered = render(v)?;
            let mut value = reqwest::header::HeaderValue::from_str(&rendered)
                .map_err(|_| ToolError::new(format!("invalid value for header `{k}`")))?;
            value.set_sensitive(true);
            headers.insert(name, value);
            // The whole value and, for `Bearer TOKEN`-style values, the credential alone.
            for part in std::iter::once(rendered.as_str()).chain(rendered.split_whitespace()) {
                if part.len() >= 4 {
                    secrets.push(part.to_owned());
                }
            }
        }
        // Longest first, so a whole value goes before a part of it.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        let scrubber = Scrubber(secrets);
        let body = match &self.body {
            Some(b) => Some(jinja::render_value(b, ctx).map_err(|e| ToolError::new(e.0))?),
            None => None,
        };
        let mut hop = Hop {
            method: self.method.clone(),
            url,
            body,
        };
        let first = format!("{} {}", hop.method, shown_url(&hop.url));
        for _ in 0..=MAX_REDIRECTS {
            let shown = format!("{} {}", hop.method, shown_url(&hop.url));
            let (status, location) =
                match self.with_retries(&hop, &headers, &shown, &scrubber).await? {
                    Answer::Done(v) => return Ok(v),
                    Answer::Redirect(status, location) => (status, location),
                };
            hop = self.next_hop(hop, status, &location, &shown)?;
        }
        Err(ToolError::new(format!(
            "{first}: more than {MAX_REDIRECTS} redirects"
        )))
    }

    /// The request a redirect asks for, if the allowlist admits it: 301/302/303 turn a
    /// request with a body into a GET without one (as browsers do), 307/308 keep both.
    fn next_hop(
        &self,
        hop: Hop,
        status: reqwest::StatusCode,
        location: &str,
        shown: &str,
    ) -> Result<Hop, ToolError> {
        let next = hop.url.join(location).map_err(|_| {
            ToolError::new(format!(
                "{shown}: HTTP {} with an invalid Location",
                status.as_u16()
            ))
        })?;
        if hop.url.scheme() == "https" && next.scheme() == "http" {
            return Err(ToolError::new(format!(
                "{shown}: HTTP {} redirect from https to http refused",
                status.as_u16()
            )));
        }
        if !self.allow_hosts.permits(&next) {
            return Err(ToolError::new(format!(
                "{shown}: HTTP {} redirect to `{}` refused: that host is not allowed for this tool (allowed: {})",
                status.as_u16(),
                origin(&next),
                self.allow_hosts
            )));
        }
        let keep = matches!(status.as_u16(), 307 | 308)
            || hop.method == reqwest::Method::GET
            || hop.method == reqwest::Method::HEAD;
        Ok(if keep {
            Hop { url: next, ..hop }
        } else {
            Hop {
                method: reqwest::Method::GET,
                url: next,
                body: None,
            }
        })
    }

    /// One hop, retried on 429, 5xx, timeouts and connection failures.
    async fn with_retries(
        &self,
        hop: &Hop,
        headers: &reqwest::header::HeaderMap,
        shown: &str,
        scrubber: &Scrubber,
    ) -> Result<Answer, ToolError> {
        let mut backoff = self.retry.initial_backoff;
        let attempts = self.retry.max_attempts.max(1);
        let mut last = String::new();
        for attempt in 1..=attempts {
            let client = self
                .client
                .get()
                .map_err(|e| ToolError::new(format!("cannot start the HTTP client: {e}")))?;
            let mut req = client
                .request(hop.method.clone(), hop.url.clone())
                .headers(headers.clone())
                .timeout(self.timeout);
            if let Some(b) = &hop.body {
                req = req.json(b);
            }
            match self.attempt(req, shown, scrubber).await? {
                Attempt::Retry(why) => last = why,
                Attempt::Answer(answer) => return Ok(answer),
            }
            if attempt < attempts {
                let jitter = Duration::from_millis(
                    u64::from(rand_jitter()) % (backoff.as_millis() as u64 / 2 + 1),
                );
                tokio::time::sleep(backoff + jitter).await;
                backoff = (backoff * 2).min(self.retry.max_backoff);
            }
        }
        Err(ToolError::new(format!(
            "{shown} failed after {attempts} attempts: {last}"
        )))
    }

    async fn attempt(
        &self,
        req: reqwest::RequestBuilder,
        shown: &str,
        scrubber: &Scrubber,
    ) -> Result<Attempt, ToolError> {
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Ok(Attempt::Retry(format!(
                    "timed out after {} s",
                    self.timeout.as_secs_f64()
                )));
            }
            Err(e) if e.is_connect() => return Ok(Attempt::Retry("connection failed".into())),
            Err(_) => return Err(ToolError::new(format!("{shown}: request failed"))),
        };
        let status = resp.status();
        if status.is_redirection()
            && let Some(location) = resp
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
        {
            return Ok(Attempt::Answer(Answer::Redirect(
                status,
                location.to_owned(),
            )));
        }
        if status.as_u16() == 429 || status.is_server_error() {
            return Ok(Attempt::Retry(format!("HTTP {}", status.as_u16())));
        }
        if let Some(len) = resp.content_length()
            && len > self.max_response_bytes
        {
            return Err(ToolError::new(format!(
                "{shown}: response of {len} bytes exceeds the limit of {}",
                self.max_response_bytes
            )));
        }
        let mut bytes = Vec::new();
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) if e.is_timeout() => {
                    return Ok(Attempt::Retry("timed out reading the response".into()));
                }
                Err(_) => return Err(ToolError::new(format!("{shown}: the response broke off"))),
            };
            bytes.extend_from_slice(&chunk);
            if bytes.len() as u64 > self.max_response_bytes {
                return Err(ToolError::new(format!(
                    "{shown}: response exceeds the limit of {} bytes",
                    self.max_response_bytes
                )));
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            let snippet: String = text.chars().take(500).collect();
            return Err(ToolError::new(format!(
                "{shown}: HTTP {}: {}",
                status.as_u16(),
                scrubber.scrub(&snippet)
            )));
        }
        let value: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(_) => {
                return Ok(Attempt::Answer(Answer::Done(
                    json!({ "status": status.as_u16(), "body": text }),
                )));
            }
        };
        match &self.pick {
            None => Ok(Attempt::Answer(Answer::Done(value))),
            Some(p) => value
                .pointer(p)
                .cloned()
                .map(|v| Attempt::Answer(Answer::Done(v)))
                .ok_or_else(|| ToolError::new(format!("{shown}: the response has no `{p}`"))),
        }
    }
}

/// A little randomness for backoff jitter without a dependency.
fn rand_jitter() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0),
    );
    h.finish() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_are_found_in_any_spelling() {
        for u in [
            "http://h/a/../b",
            "http://h/a/%2e%2E/b",
            "http://h/.",
            "http://h/a/.%2e?x",
            "http://h/%2E",
        ] {
            assert!(has_dot_segment(u), "{u}");
        }
        for u in [
            "http://h/a..b/c",
            "http://h/a/b?x=/../",
            "http://h",
            "http://h/...",
            "http://h/a#/../",
        ] {
            assert!(!has_dot_segment(u), "{u}");
        }
    }
}
