//! The HTTP tool: a templated request, retried on 429/5xx/timeouts, bounded in time and
//! size, limited to allowed hosts. Errors name the method and URL path but never headers
//! or query strings, which may carry secrets.

use super::ToolError;
use crate::template::jinja;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

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
    /// Hosts the rendered URL may point at.
    pub allow_hosts: Vec<String>,
    /// Shared client.
    pub client: reqwest::Client,
}

/// The host of a URL as written (`None` when it is templated or missing).
pub fn literal_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.contains("{{") || authority.contains("{%") || authority.is_empty() {
        return None;
    }
    let host_port = authority.rsplit('@').next()?;
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?.to_owned(),
        None => host_port.split(':').next()?.to_owned(),
    };
    Some(host.to_ascii_lowercase())
}

enum Attempt {
    Done(Value),
    Retry(String),
}

impl HttpSpec {
    fn safe_url(url: &reqwest::Url) -> String {
        format!(
            "{}://{}{}",
            url.scheme(),
            url.host_str().unwrap_or(""),
            url.path()
        )
    }

    /// Makes the call with templates rendered from `ctx`.
    ///
    /// # Errors
    /// Template, host, transport and HTTP failures, worded for the model.
    pub async fn call(&self, ctx: &Value) -> Result<Value, ToolError> {
        let render = |t: &str| jinja::render(t, ctx).map_err(|e| ToolError::new(e.0));
        let url_text = render(&self.url)?;
        let mut url = reqwest::Url::parse(&url_text)
            .map_err(|e| ToolError::new(format!("invalid URL after templating: {e}")))?;
        let host = url
            .host_str()
            .unwrap_or("")
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if !self
            .allow_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(&host))
        {
            return Err(ToolError::new(format!(
                "host `{host}` is not allowed for this tool (allowed: {})",
                self.allow_hosts.join(", ")
            )));
        }
        {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in &self.query {
                pairs.append_pair(k, &render(v)?);
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
        let mut headers = reqwest::header::HeaderMap::new();
        for (k, v) in &self.headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| ToolError::new(format!("invalid header name `{k}`")))?;
            let value = reqwest::header::HeaderValue::from_str(&render(v)?)
                .map_err(|_| ToolError::new(format!("invalid value for header `{k}`")))?;
            headers.insert(name, value);
        }
        let body = match &self.body {
            Some(b) => Some(jinja::render_value(b, ctx).map_err(|e| ToolError::new(e.0))?),
            None => None,
        };
        let shown = format!("{} {}", self.method, Self::safe_url(&url));
        let mut backoff = self.retry.initial_backoff;
        let attempts = self.retry.max_attempts.max(1);
        let mut last = String::new();
        for attempt in 1..=attempts {
            let mut req = self
                .client
                .request(self.method.clone(), url.clone())
                .headers(headers.clone())
                .timeout(self.timeout);
            if let Some(b) = &body {
                req = req.json(b);
            }
            match self.attempt(req, &shown).await? {
                Attempt::Done(v) => return Ok(v),
                Attempt::Retry(why) => last = why,
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
                "{shown}: HTTP {}: {snippet}",
                status.as_u16()
            )));
        }
        let value: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(_) => {
                return Ok(Attempt::Done(
                    json!({ "status": status.as_u16(), "body": text }),
                ));
            }
        };
        match &self.pick {
            None => Ok(Attempt::Done(value)),
            Some(p) => value
                .pointer(p)
                .cloned()
                .map(Attempt::Done)
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
    use super::literal_host;

    #[test]
    fn hosts_as_written() {
        assert_eq!(
            literal_host("http://127.0.0.1:8765/orders/{{ id }}").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            literal_host("https://API.example.com?x=1").as_deref(),
            Some("api.example.com")
        );
        assert_eq!(literal_host("http://[::1]:80/").as_deref(), Some("::1"));
        assert_eq!(literal_host("http://{{ host }}/x"), None);
        assert_eq!(literal_host("not a url"), None);
    }
}
