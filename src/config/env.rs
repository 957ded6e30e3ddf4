//! `${VAR}` and `${VAR:-default}` in workflow strings; `$${` writes a literal `${`.
//!
//! Substitution happens before the schema check, on every string value (enum-typed keys
//! such as `agent_class`, `include_contents` or `provider` included), so values are
//! checked as they will be used; a schema error about a substituted string shows the
//! reference as written, never the value read from the environment (possibly a secret).

use serde_json::Value;

/// A reference that cannot be substituted. Messages name the variable, never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvProblem {
    /// JSON pointer of the string holding the reference.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// The variable is merely unset (a warning for `validate`, an error for `run`).
    pub unset: bool,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Substitutes one string; problems are pushed with `pointer`.
pub fn substitute(
    text: &str,
    pointer: &str,
    env: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<EnvProblem>,
) -> String {
    if !text.contains('$') {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("${") {
            out.push_str("${");
            rest = tail;
            continue;
        }
        let Some(body_and_tail) = after.strip_prefix('{') else {
            out.push('$');
            rest = after;
            continue;
        };
        let Some(end) = body_and_tail.find('}') else {
            problems.push(EnvProblem {
                pointer: pointer.to_owned(),
                message: "unclosed `${`; write `$${` for a literal `${`".into(),
                unset: false,
            });
            out.push_str(&rest[i..]);
            return out;
        };
        let body = &body_and_tail[..end];
        let (name, default) = match body.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (body, None),
        };
        if !valid_name(name) {
            problems.push(EnvProblem {
                pointer: pointer.to_owned(),
                message: format!("`${{{body}}}` is not a variable reference: names are letters, digits and `_`; write `$${{` for a literal `${{`"),
                unset: false,
            });
        } else {
            match (env(name), default) {
                (Some(v), _) => out.push_str(&v),
                (None, Some(d)) => out.push_str(d),
                (None, None) => problems.push(EnvProblem {
                    pointer: pointer.to_owned(),
                    message: format!(
                        "environment variable `{name}` is not set (write `${{{name}:-default}}` for a fallback)"
                    ),
                    unset: true,
                }),
            }
        }
        rest = &body_and_tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Substitutes every string value of a JSON tree in place (keys are left alone).
pub fn substitute_all(
    value: &mut Value,
    pointer: &str,
    env: &dyn Fn(&str) -> Option<String>,
    problems: &mut Vec<EnvProblem>,
) {
    match value {
        Value::String(s) if s.contains('$') => {
            *s = substitute(s, pointer, env, problems);
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                substitute_all(v, &format!("{pointer}/{i}"), env, problems);
            }
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let child = format!("{pointer}/{}", super::yaml::escape_segment(k));
                substitute_all(v, &child, env, problems);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOST" => Some("example.org".into()),
            "SECRET" => Some("s3cr3t".into()),
            _ => None,
        }
    }

    fn sub(text: &str) -> (String, Vec<String>) {
        let mut problems = Vec::new();
        let out = substitute(text, "/x", &env, &mut problems);
        (out, problems.into_iter().map(|p| p.message).collect())
    }

    #[test]
    fn substitutes_and_defaults() {
        assert_eq!(sub("http://${HOST}/api").0, "http://example.org/api");
        assert_eq!(sub("${PORT:-8080}").0, "8080");
        assert_eq!(sub("${HOST:-x}").0, "example.org");
        assert_eq!(sub("cost $5, $${HOST}").0, "cost $5, ${HOST}");
        assert_eq!(sub("{state_key} stays").0, "{state_key} stays");
    }

    #[test]
    fn problems_name_the_variable_not_the_value() {
        let (_, p) = sub("${MISSING}");
        assert!(p[0].contains("`MISSING` is not set"));
        let (_, p) = sub("${bad name}");
        assert!(p[0].contains("not a variable reference"));
        let (_, p) = sub("${HOST");
        assert!(p[0].contains("unclosed"));
        let (out, p) = sub("${SECRET}");
        assert_eq!(out, "s3cr3t");
        assert!(p.is_empty());
    }
}
