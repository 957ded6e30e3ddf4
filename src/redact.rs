//! Secrets that travel in URLs, removed from every text we show.
//!
//! A URL may carry a credential in its userinfo (`https://user:token@host`) or in its
//! query (`?key=...`, `?sig=...`), and we cannot tell which query values are secret. So
//! wherever a URL reaches an error, an event, a log line or a message, the value of every
//! query (and fragment) parameter becomes `[REDACTED]`, and so does the userinfo: all of it
//! for web URLs (`http`, `https`, `ws`, `wss`, where a lone user name is often a token),
//! the password for the others (`postgres://bob:[REDACTED]@db`, where the user name helps
//! and is no secret). The scheme, host, port, path and parameter names stay, which is what
//! a reader needs to find the problem. [`urls_in`] applies this to every URL inside a free text (a transport error
//! quoting the URL it failed on, a server echoing the request).

use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

/// What a secret is replaced by.
pub const REDACTED: &str = "[REDACTED]";

/// `url` with its userinfo (see the module docs) and every query and fragment value
/// replaced by `[REDACTED]`. Text without `://` is returned as is.
pub fn url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_owned();
    };
    let (head, rest) = url.split_at(scheme_end + 3);
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let mut out = String::with_capacity(url.len());
    out.push_str(head);
    let web = matches!(
        head.trim_end_matches("://").to_ascii_lowercase().as_str(),
        "http" | "https" | "ws" | "wss"
    );
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            match userinfo.split_once(':') {
                Some((user, _)) if !web => {
                    out.push_str(user);
                    out.push(':');
                }
                None if !web => out.push_str(userinfo),
                _ => {}
            }
            if web || userinfo.contains(':') {
                out.push_str(REDACTED);
            }
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    let (before_fragment, fragment) = match tail.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (tail, None),
    };
    match before_fragment.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            redact_params(query, &mut out);
        }
        None => out.push_str(before_fragment),
    }
    if let Some(fragment) = fragment {
        out.push('#');
        if fragment.contains('=') {
            redact_params(fragment, &mut out);
        } else {
            out.push_str(fragment);
        }
    }
    out
}

/// `k=v&flag` → `k=[REDACTED]&[REDACTED]`: names stay, values go; a bare item may itself
/// be a token.
fn redact_params(params: &str, out: &mut String) {
    for (i, pair) in params.split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((k, _)) => {
                out.push_str(k);
                out.push('=');
                out.push_str(REDACTED);
            }
            None if pair.is_empty() => {}
            None => out.push_str(REDACTED),
        }
    }
}

/// A URL inside free text: a scheme, `://`, and everything up to white space or a quote.
static URL_IN_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>`]+"#).expect("a valid pattern")
});

/// `text` with every URL in it passed through [`url`]. Punctuation that closes the
/// sentence or the parentheses around a URL stays outside it.
pub fn urls_in(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in URL_IN_TEXT.find_iter(text) {
        let found = m.as_str();
        let kept = trim_trailing(found);
        out.push_str(&text[last..m.start()]);
        out.push_str(&url(kept));
        out.push_str(&found[kept.len()..]);
        last = m.end();
    }
    out.push_str(&text[last..]);
    Cow::Owned(out)
}

/// Drops trailing `.,;:!` and unbalanced `)`/`]` from a URL found in text.
fn trim_trailing(found: &str) -> &str {
    let mut s = found;
    loop {
        let Some(c) = s.chars().last() else { return s };
        let unbalanced = |open: char, close: char| {
            c == close && s.matches(open).count() < s.matches(close).count()
        };
        if matches!(c, '.' | ',' | ';' | ':' | '!') || unbalanced('(', ')') || unbalanced('[', ']')
        {
            s = &s[..s.len() - c.len_utf8()];
        } else {
            return s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_and_query_values_are_redacted() {
        assert_eq!(
            url("postgres://bob:s3cret@db:5432/x?sslmode=require&password=p2"),
            "postgres://bob:[REDACTED]@db:5432/x?sslmode=[REDACTED]&password=[REDACTED]"
        );
        assert_eq!(url("postgresql://bob@db/x"), "postgresql://bob@db/x");
        assert_eq!(url("redis://:pw@h"), "redis://:[REDACTED]@h");
        assert_eq!(
            url("HTTPS://TOKEN:x-oauth-basic@github.com/"),
            "HTTPS://[REDACTED]@github.com/"
        );
        assert_eq!(
            url("https://TOKEN@github.com/o/r.git"),
            "https://[REDACTED]@github.com/o/r.git"
        );
        assert_eq!(
            url("https://h/p?key=abc&flag#access_token=t&x=1"),
            "https://h/p?key=[REDACTED]&[REDACTED]#access_token=[REDACTED]&x=[REDACTED]"
        );
        assert_eq!(url("http://h/a#section"), "http://h/a#section");
        assert_eq!(url("http://[::1]:8080/v1"), "http://[::1]:8080/v1");
        assert_eq!(url("sqlite:/tmp/a.db"), "sqlite:/tmp/a.db");
        // A path segment with an `@` is not userinfo.
        assert_eq!(url("http://h/u@x"), "http://h/u@x");
        let once = url("http://u:p@h/?k=v");
        assert_eq!(url(&once), once, "idempotent");
    }

    #[test]
    fn urls_inside_text_are_redacted() {
        let text = "error sending request for url (http://127.0.0.1:9/v1/chat?key=s3cret): \
                    connection refused; see https://u:pw@docs.example.com/x.";
        let shown = urls_in(text);
        assert!(
            !shown.contains("s3cret") && !shown.contains("pw@"),
            "{shown}"
        );
        assert_eq!(
            shown,
            "error sending request for url (http://127.0.0.1:9/v1/chat?key=[REDACTED]): \
             connection refused; see https://[REDACTED]@docs.example.com/x."
        );
        assert!(matches!(urls_in("no links here"), Cow::Borrowed(_)));
        assert_eq!(
            urls_in(r#"{"url":"https://h/?sig=abc"}"#),
            r#"{"url":"https://h/?sig=[REDACTED]"}"#
        );
    }
}
