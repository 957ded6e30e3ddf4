//! Who may talk to the server: the DNS-rebinding guard (Host), the cross-origin guard
//! (Origin), bearer-token authentication with a cookie for the browser, and CORS.
//!
//! - **Host.** Bound to a loopback address, the server refuses a request whose `Host` is
//!   not loopback (or the host of an `--allow-origin`): such a request reached us through
//!   a name that was rebound to 127.0.0.1. `403 Forbidden: host not allowed`.
//! - **Origin.** A request with an `Origin` header passes when the origin is listed in
//!   `--allow-origin` (`*`, a literal origin, or `regex:PATTERN`), or when it is this
//!   server's own origin (`http://<Host>`); on a loopback bind with no `--allow-origin`
//!   the origin must also be loopback. `403 Forbidden: origin not allowed`.
//! - **Token.** With `--token`, every route but `/health` needs `Authorization: Bearer
//!   TOKEN` or the session cookie. The browser gets the cookie by opening any UI page with
//!   `?token=TOKEN` once: the server answers with an HttpOnly, SameSite=Strict cookie and
//!   a redirect to the same page without the token. The cookie holds a random value made
//!   at start, not the token. Comparisons take constant time. `401 {"detail": "Not
//!   authenticated"}`.
//! - **CORS** headers are sent only to origins listed in `--allow-origin`.

use super::AppState;
use super::error::ApiError;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use std::collections::HashSet;
use std::net::IpAddr;
use subtle::ConstantTimeEq;
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};

/// The cookie that authenticates the browser.
const COOKIE: &str = "adk_flow_session";

/// The guard's settings, made once at start.
pub struct Guard {
    loopback_bind: bool,
    any_origin: bool,
    origins: Vec<String>,
    origin_pattern: Option<regex::Regex>,
    /// Hosts the rebinding guard accepts besides loopback: those of `--allow-origin`.
    hosts: HashSet<String>,
    auth: Option<Auth>,
}

struct Auth {
    token: String,
    cookie: String,
}

/// An `--allow-origin` that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("--allow-origin {origin}: invalid pattern")]
pub struct OriginError {
    origin: String,
    #[source]
    source: regex::Error,
}

impl Guard {
    /// The guard for a server bound to `bind`.
    ///
    /// # Errors
    /// A `regex:` origin that does not compile.
    pub fn new(
        bind: IpAddr,
        allow_origins: &[String],
        token: Option<String>,
    ) -> Result<Self, OriginError> {
        let mut origins = Vec::new();
        let mut patterns = Vec::new();
        for o in allow_origins {
            match o.strip_prefix("regex:") {
                Some(p) if !p.is_empty() => {
                    regex::Regex::new(p).map_err(|source| OriginError {
                        origin: o.clone(),
                        source,
                    })?;
                    patterns.push(format!("(?:{p})"));
                }
                Some(_) => {}
                None => origins.push(o.trim_end_matches('/').to_owned()),
            }
        }
        let origin_pattern = if patterns.is_empty() {
            None
        } else {
            let joined = format!("^(?:{})$", patterns.join("|"));
            Some(regex::Regex::new(&joined).map_err(|source| OriginError {
                origin: joined.clone(),
                source,
            })?)
        };
        let hosts = origins
            .iter()
            .filter_map(|o| origin_host(o))
            .map(|h| h.to_ascii_lowercase())
            .collect();
        let auth = token.map(|token| Auth {
            token,
            cookie: format!(
                "{}{}",
                uuid::Uuid::new_v4().simple(),
                uuid::Uuid::new_v4().simple()
            ),
        });
        Ok(Guard {
            loopback_bind: bind.is_loopback(),
            any_origin: origins.iter().any(|o| o == "*"),
            origins,
            origin_pattern,
            hosts,
            auth,
        })
    }

    fn configured(&self) -> bool {
        !self.origins.is_empty() || self.origin_pattern.is_some()
    }

    /// Whether `--allow-origin` lists the origin.
    fn listed(&self, origin: &str) -> bool {
        self.any_origin
            || self.origins.iter().any(|o| o == origin)
            || self
                .origin_pattern
                .as_ref()
                .is_some_and(|p| p.is_match(origin))
    }

    /// The CORS layer, when `--allow-origin` was given.
    pub fn cors(&self) -> Option<CorsLayer> {
        if !self.configured() {
            return None;
        }
        let any = self.any_origin;
        let origins = self.origins.clone();
        let pattern = self.origin_pattern.clone();
        let allow = AllowOrigin::predicate(move |origin: &HeaderValue, _| {
            let Ok(origin) = origin.to_str() else {
                return false;
            };
            any || origins.iter().any(|o| o == origin)
                || pattern.as_ref().is_some_and(|p| p.is_match(origin))
        });
        Some(
            CorsLayer::new()
                .allow_origin(allow)
                .allow_methods(AllowMethods::mirror_request())
                .allow_headers(AllowHeaders::mirror_request())
                .allow_credentials(true),
        )
    }

    fn check_host(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        if !self.loopback_bind || self.any_origin {
            return Ok(());
        }
        let mut hosts = headers.get_all(header::HOST).iter();
        let Some(host) = hosts.next() else {
            return Ok(());
        };
        let Ok(host) = host.to_str() else {
            return Err(ApiError::Forbidden("host not allowed"));
        };
        // Host is a single value; several are smuggling, not a client.
        if hosts.next().is_some() || host.contains(',') {
            return Err(ApiError::Forbidden("host not allowed"));
        }
        let bare = normalize_host(host);
        if is_loopback(&bare) || self.hosts.contains(&bare) {
            Ok(())
        } else {
            Err(ApiError::Forbidden("host not allowed"))
        }
    }

    fn check_origin(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(());
        };
        let refuse = ApiError::Forbidden("origin not allowed");
        let Ok(origin) = origin.to_str() else {
            return Err(refuse);
        };
        if self.configured() && self.listed(origin) {
            return Ok(());
        }
        if self.loopback_bind
            && !self.configured()
            && !origin_host(origin).is_some_and(|h| is_loopback(&h))
        {
            return Err(refuse);
        }
        let own = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(|h| format!("http://{h}"));
        if own.as_deref() == Some(origin) {
            Ok(())
        } else {
            Err(refuse)
        }
    }

    fn bearer_ok(&self, auth: &Auth, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .any(|t| same(t.trim(), &auth.token))
    }

    fn cookie_ok(&self, auth: &Auth, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().split_once('='))
            .any(|(k, v)| k == COOKIE && same(v, &auth.cookie))
    }
}

fn same(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// `host[:port]` → lowercase host without port, brackets or a trailing dot.
fn normalize_host(host: &str) -> String {
    let host = host.trim();
    // A malformed authority stays whole, so that `127.0.0.1:80.evil.com` is never loopback.
    let port_ok = |p: &str| p.is_empty() || p.chars().all(|c| c.is_ascii_digit());
    let bare = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((addr, tail))
                if tail.is_empty() || tail.strip_prefix(':').is_some_and(port_ok) =>
            {
                addr
            }
            _ => host,
        }
    } else {
        match host.split_once(':') {
            Some((name, port)) if !port.contains(':') && port_ok(port) => name,
            _ => host,
        }
    };
    bare.trim_end_matches('.').to_ascii_lowercase()
}

fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The host of an origin (`scheme://host[:port]`).
fn origin_host(origin: &str) -> Option<String> {
    let (_, rest) = origin.split_once("://")?;
    let authority = rest.split('/').next()?;
    let authority = authority.rsplit('@').next()?;
    Some(normalize_host(authority))
}

/// The `token` query parameter, and the query without it.
fn split_token(query: &str) -> (Option<String>, String) {
    let mut token = None;
    let mut rest = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("token", v)) => {
                token = Some(percent_decode(v));
            }
            _ => rest.push(pair),
        }
    }
    (token, rest.join("&"))
}

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = match bytes[i] {
            b'%' if i + 2 < bytes.len() => hex(bytes[i + 1]).zip(hex(bytes[i + 2])),
            _ => None,
        };
        match (decoded, bytes[i]) {
            (Some((hi, lo)), _) => {
                // INVARIANT: two hex digits make a value below 256.
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'?'));
                i += 3;
            }
            (None, b'+') => {
                out.push(b' ');
                i += 1;
            }
            (None, b) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The middleware: host, origin, then authentication.
pub async fn check(State(s): State<AppState>, req: Request, next: Next) -> Response {
    let guard = &s.guard;
    if let Err(e) = guard
        .check_host(req.headers())
        .and_then(|()| guard.check_origin(req.headers()))
    {
        return e.into_response();
    }
    let Some(auth) = &guard.auth else {
        return next.run(req).await;
    };
    if req.uri().path() == "/health" {
        return next.run(req).await;
    }
    // The UI's login: `?token=` on a page, answered with the cookie and a clean URL.
    if req.method() == Method::GET
        && let Some(query) = req.uri().query()
        && let (Some(token), rest) = split_token(query)
    {
        if !same(&token, &auth.token) {
            return ApiError::Unauthorized.into_response();
        }
        let path = req.uri().path();
        let target = if rest.is_empty() {
            path.to_owned()
        } else {
            format!("{path}?{rest}")
        };
        let mut response = Redirect::temporary(&target).into_response();
        let cookie = format!(
            "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
            auth.cookie
        );
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, v);
        }
        return response;
    }
    if guard.bearer_ok(auth, req.headers()) || guard.cookie_ok(auth, req.headers()) {
        next.run(req).await
    } else {
        ApiError::Unauthorized.into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        assert_eq!(normalize_host("LOCALHOST.:8000"), "localhost");
        assert_eq!(normalize_host("[::1]:80"), "::1");
        assert_eq!(
            normalize_host("127.0.0.1:8000.evil.com"),
            "127.0.0.1:8000.evil.com"
        );
        assert!(is_loopback("127.0.0.2"));
        assert!(!is_loopback("127.0.0.1:8000.evil.com"));
        assert_eq!(
            origin_host("http://evil.com:80").as_deref(),
            Some("evil.com")
        );
        assert_eq!(origin_host("null"), None);
    }

    #[test]
    fn token_is_taken_out_of_the_query() {
        assert_eq!(
            split_token("app=a&token=s%3Dx+y&session=b"),
            (Some("s=x y".into()), "app=a&session=b".into())
        );
        assert_eq!(split_token("app=a"), (None, "app=a".into()));
    }
}
