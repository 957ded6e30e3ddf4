//! Rendering an error with its causes. Errors keep their cause in `source()` and never
//! paste it into their own message, so whoever shows an error to a person (an error
//! event, a test report, the CLI) shows the whole chain with [`chain`].

use std::error::Error;

/// An error and its sources, joined by `: ` (a source whose text the message already
/// holds is not repeated), with the secrets of every URL in it redacted
/// ([`crate::redact::urls_in`]).
pub fn chain(error: &dyn Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    crate::redact::urls_in(&out).into_owned()
}

#[cfg(test)]
mod tests {
    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn joins_the_causes() {
        let e = Outer(std::io::Error::other("inner"));
        assert_eq!(super::chain(&e), "outer: inner");
        let e = Outer(std::io::Error::other("cannot reach https://u:pw@h/?key=k"));
        assert_eq!(
            super::chain(&e),
            "outer: cannot reach https://[REDACTED]@h/?key=[REDACTED]"
        );
    }
}
