//! `--state KEY=VALUE`: initial session state from the command line.
//!
//! VALUE is read as JSON when it parses, else taken as a string. JSON integers beyond 64
//! bits would come back as the nearest float (`12345678901234567890123` →
//! `1.2345678901234568e22`); they are kept exact instead, as the digits in a string, and a
//! warning says so.

use crate::event::StateMap;
use anyhow::bail;
use serde_json::Value;

/// Parses `--state` pairs.
///
/// # Errors
/// A pair without `=` or with an empty key.
pub(crate) fn parse_state(pairs: &[String]) -> anyhow::Result<StateMap> {
    let mut state = StateMap::new();
    for pair in pairs {
        let Some((k, v)) = pair.split_once('=') else {
            bail!("--state `{pair}`: expected KEY=VALUE");
        };
        if k.is_empty() {
            bail!("--state `{pair}`: the key is empty");
        }
        let (text, quoted) = big_integers_quoted(v);
        let value = match serde_json::from_str(&text) {
            Ok(value) => {
                if quoted {
                    tracing::warn!(
                        "--state {k}: integers beyond 64 bits are kept exact, as strings of digits"
                    );
                }
                value
            }
            Err(_) => Value::String(v.to_owned()),
        };
        state.insert(k.to_owned(), value);
    }
    Ok(state)
}

/// `text` with every integer literal outside JSON strings that fits neither `i64` nor
/// `u64` put in quotes, and whether there was one.
fn big_integers_quoted(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    let mut chars = text.char_indices().peekable();
    let mut in_string = false;
    while let Some((i, c)) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        out.push(escaped);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if c == '"' {
            in_string = true;
            out.push(c);
            continue;
        }
        if c == '-' || c.is_ascii_digit() {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_ascii_digit() || matches!(d, '.' | 'e' | 'E' | '+' | '-') {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let token = &text[i..end];
            let integer = token.trim_start_matches('-');
            let big = !integer.is_empty()
                && integer.bytes().all(|b| b.is_ascii_digit())
                && token.parse::<i64>().is_err()
                && token.parse::<u64>().is_err();
            if big {
                out.push('"');
                out.push_str(token);
                out.push('"');
                quoted = true;
            } else {
                out.push_str(token);
            }
            continue;
        }
        out.push(c);
    }
    (out, quoted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(v: &str) -> Value {
        parse_state(&[format!("k={v}")]).unwrap()["k"].clone()
    }

    #[test]
    fn big_integers_stay_exact() {
        assert_eq!(
            one("123456789012345678901234567890"),
            json!("123456789012345678901234567890")
        );
        assert_eq!(one("-99999999999999999999"), json!("-99999999999999999999"));
        assert_eq!(
            one(r#"{"id": 123456789012345678901, "n": 7, "s": "123456789012345678901"}"#),
            json!({"id": "123456789012345678901", "n": 7, "s": "123456789012345678901"})
        );
        assert_eq!(
            one("[18446744073709551615, -9223372036854775808]"),
            json!([u64::MAX, i64::MIN])
        );
        assert_eq!(one("1.5e300"), json!(1.5e300));
        assert_eq!(
            one(r#""a\"1234567890123456789012""#),
            json!("a\"1234567890123456789012")
        );
        assert_eq!(
            one("not json 123456789012345678901"),
            json!("not json 123456789012345678901")
        );
        assert_eq!(one("42"), json!(42));
    }

    #[test]
    fn malformed_pairs_are_refused() {
        assert!(parse_state(&["novalue".into()]).is_err());
        assert!(parse_state(&["=v".into()]).is_err());
    }
}
