//! Which hosts and ports an HTTP tool may reach: `allow_hosts` entries (`host`,
//! `host:PORT`, `host:*`; IPv6 as `[::1]:8080`) and, for a tool that lists none, the
//! authority its URL names as written. A bare host allows only the scheme's default port
//! (80, 443); hosts are compared after URL normalization (case, IDNA, IPv4 forms). The
//! loader checks the entries with the same parser the tool uses to enforce them.

/// The authority of a URL as written, `host` or `host:port` (`None` when it is templated
/// or missing): the default allowlist of a tool whose URL names its host.
pub fn literal_host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    if authority.contains("{{") || authority.contains("{%") || authority.is_empty() {
        return None;
    }
    let host_port = authority.rsplit('@').next()?;
    (!host_port.is_empty()).then(|| host_port.to_ascii_lowercase())
}

/// Which ports an allowlist entry admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortRule {
    /// No port written: the scheme's default only.
    SchemeDefault,
    /// `host:PORT`.
    Exact(u16),
    /// `host:*`.
    Any,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct HostRule {
    /// The host as URL parsing normalizes it (`[::1]` for IPv6).
    host: String,
    port: PortRule,
}

/// The hosts and ports an HTTP tool may reach (see the module docs for the entry syntax).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHosts {
    rules: Vec<HostRule>,
    /// The entries as written, for messages.
    shown: Vec<String>,
}

impl AllowedHosts {
    /// Parses `host`, `host:PORT` and `host:*` entries.
    ///
    /// # Errors
    /// The first entry that is not one of those, with why.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<AllowedHosts, BadHostEntry> {
        let rules = entries
            .iter()
            .map(|e| parse_entry(e.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(AllowedHosts {
            rules,
            shown: entries.iter().map(|e| e.as_ref().to_owned()).collect(),
        })
    }

    /// Whether a request may go to `url`: `http` or `https`, to a listed host, on a port
    /// its entry admits.
    pub fn permits(&self, url: &reqwest::Url) -> bool {
        if !matches!(url.scheme(), "http" | "https") {
            return false;
        }
        let Some(host) = url.host_str() else {
            return false;
        };
        let port = url.port_or_known_default();
        self.rules.iter().any(|r| {
            r.host == host
                && match r.port {
                    // The URL parser drops a port equal to the scheme's default.
                    PortRule::SchemeDefault => url.port().is_none(),
                    PortRule::Exact(p) => port == Some(p),
                    PortRule::Any => true,
                }
        })
    }
}

impl std::fmt::Display for AllowedHosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown.join(", "))
    }
}

/// An `allow_hosts` entry that is not `host`, `host:PORT` or `host:*`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("allow_hosts entry `{entry}`: {why}")]
pub struct BadHostEntry {
    /// The entry as written.
    pub entry: String,
    /// What is wrong with it.
    pub why: &'static str,
}

fn parse_entry(entry: &str) -> Result<HostRule, BadHostEntry> {
    let bad = |why: &'static str| BadHostEntry {
        entry: entry.to_owned(),
        why,
    };
    if entry.is_empty()
        || entry.contains(['/', '?', '#', '@', '\\'])
        || entry.contains(char::is_whitespace)
    {
        return Err(bad("expected host, host:PORT or host:*"));
    }
    let (host, port) = if let Some(rest) = entry.strip_prefix('[') {
        let (inside, after) = rest.split_once(']').ok_or_else(|| bad("unclosed `[`"))?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(bad("expected `:PORT` after `]`")),
        };
        (format!("[{inside}]"), port)
    } else if entry.matches(':').count() > 1 {
        // A bare IPv6 address: no port can be written without brackets.
        (format!("[{entry}]"), None)
    } else {
        match entry.split_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p)),
            None => (entry.to_owned(), None),
        }
    };
    let port = match port {
        None => PortRule::SchemeDefault,
        Some("*") => PortRule::Any,
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 && p.bytes().all(|b| b.is_ascii_digit()) => PortRule::Exact(n),
            _ => return Err(bad("the port must be a number from 1 to 65535, or `*`")),
        },
    };
    let parsed = reqwest::Url::parse(&format!("http://{host}/"))
        .map_err(|_| bad("not a host name or IP address"))?;
    let host = parsed
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| bad("not a host name or IP address"))?
        .to_owned();
    Ok(HostRule { host, port })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(u: &str) -> reqwest::Url {
        reqwest::Url::parse(u).unwrap()
    }

    #[test]
    fn hosts_as_written() {
        assert_eq!(
            literal_host("http://127.0.0.1:8765/orders/{{ id }}").as_deref(),
            Some("127.0.0.1:8765")
        );
        assert_eq!(
            literal_host("https://API.example.com?x=1").as_deref(),
            Some("api.example.com")
        );
        assert_eq!(
            literal_host("http://[::1]:80/").as_deref(),
            Some("[::1]:80")
        );
        assert_eq!(literal_host("http://u:p@h/").as_deref(), Some("h"));
        assert_eq!(literal_host("http://{{ host }}/x"), None);
        assert_eq!(literal_host("http://h:{{ port }}/x"), None);
        assert_eq!(literal_host("not a url"), None);
    }

    #[test]
    fn a_bare_host_allows_only_the_default_port() {
        let a =
            AllowedHosts::parse(&["API.example.com", "127.0.0.1:8080", "[::1]:*", "::2"]).unwrap();
        assert!(a.permits(&url("https://api.example.com/x")));
        assert!(a.permits(&url("http://API.EXAMPLE.COM:80/x")));
        assert!(a.permits(&url("https://api.example.com:443/")));
        assert!(!a.permits(&url("https://api.example.com:8443/")));
        assert!(!a.permits(&url("http://api.example.com:443/")));
        assert!(!a.permits(&url("https://api.example.com.evil.net/")));
        assert!(!a.permits(&url("https://evil.net/api.example.com")));
        assert!(a.permits(&url("http://127.0.0.1:8080/")));
        assert!(!a.permits(&url("http://127.0.0.1/")));
        assert!(!a.permits(&url("http://127.0.0.1:8081/")));
        // Other spellings of 127.0.0.1 normalize to it, and get the same answer.
        assert!(a.permits(&url("http://2130706433:8080/")));
        assert!(!a.permits(&url("http://0x7f.1:9/")));
        assert!(a.permits(&url("http://[::1]:9/")));
        assert!(a.permits(&url("http://[0:0::1]:1234/")));
        assert!(a.permits(&url("http://[::2]/")));
        assert!(!a.permits(&url("http://[::2]:81/")));
        assert!(!a.permits(&url("ftp://api.example.com/")));
        assert!(!a.permits(&url("file:///etc/passwd")));
    }

    #[test]
    fn bad_entries_are_refused() {
        for bad in [
            "", "h:0", "h:99999", "h:x", "h/p", "u@h", "[::1", "h:8080:1", " h",
        ] {
            assert!(AllowedHosts::parse(&[bad]).is_err(), "{bad}");
        }
    }
}
