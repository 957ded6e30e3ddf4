//! ADK instruction templating: `{key}`, `{key?}`, `{app:key}`, `{user:key}`, `{temp:key}`.
//!
//! The rules are ADK 1.x's `inject_session_state`: every match of `{+[^{}]*}+` is a
//! candidate; its name is the text with all surrounding braces and blanks (Python's
//! whitespace, U+001C..U+001F included) stripped, so `{{x}}` reads like `{x}`. A
//! trailing `?` makes the key optional (missing renders empty). A name that is not a
//! Python identifier ([`is_identifier`]), optionally behind one `app:`/`user:`/`temp:`
//! prefix, is not a key: the text stays verbatim, so JSON examples in prompts survive.
//! Values render as Python `str(value)`; `null` renders empty.
//!
//! ADK 2.13 (the LLM nodes of a Workflow graph, [`Dialect::Adk2`]) adds a lookbehind to
//! the pattern, `(?<![${\\]){+[^{}]*}+`: a brace run right after `$` or `\\` is no
//! candidate, so `\\{key}` stays verbatim.

pub mod jinja;
mod jinja2;
mod native;
mod pydict;
mod pyops;

use crate::names::is_identifier;
use crate::pyrepr::py_str;
use serde_json::Value;
use std::ops::Range;

/// A state key referenced by a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateKey {
    /// The key, prefix included (`app:x`).
    pub name: String,
    /// Written `{name?}`: missing renders empty.
    pub optional: bool,
    /// Byte range of the whole `{...}` in the template.
    pub span: Range<usize>,
    /// `{artifact.name}`: refers to an artifact, not a state key.
    pub artifact: bool,
}

/// A template that cannot be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A required key is not in state.
    #[error("context variable not found: `{key}`")]
    MissingKey {
        /// The key.
        key: String,
    },
    /// A required artifact could not be loaded.
    #[error("artifact `{name}` not found")]
    MissingArtifact {
        /// The artifact name.
        name: String,
    },
}

/// Which ADK's `inject_session_state` a template follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// ADK 1.x: every match of `{+[^{}]*}+`.
    #[default]
    Adk1,
    /// ADK 2.13: `(?<![${\\]){+[^{}]*}+`, no match right after `$`, `{` or `\\`.
    Adk2,
}

enum Item<'a> {
    Literal(&'a str),
    Key(TemplateKey),
}

fn is_state_name(name: &str) -> bool {
    match name.split_once(':') {
        None => is_identifier(name),
        Some((prefix, rest)) => {
            matches!(prefix, "app" | "user" | "temp") && !rest.contains(':') && is_identifier(rest)
        }
    }
}

/// Python's `str.isspace()`, which `strip()` uses: Unicode's White_Space and the
/// separators U+001C..U+001F.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Splits a template into literals and keys, in order.
fn scan(template: &str, dialect: Dialect) -> Vec<Item<'_>> {
    let bytes = template.as_bytes();
    let mut items = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i;
        while j < bytes.len() && bytes[j] == b'{' {
            j += 1;
        }
        // `i` starts a run of braces (a `{` before it would have started it), so in ADK
        // 2.13 a `$` or `\\` before it rules out every match starting in the run.
        if dialect == Dialect::Adk2 && i > 0 && matches!(bytes[i - 1], b'$' | b'\\') {
            i = j;
            continue;
        }
        let inner_start = j;
        while j < bytes.len() && bytes[j] != b'{' && bytes[j] != b'}' {
            j += 1;
        }
        if j >= bytes.len() || bytes[j] != b'}' {
            // No match can start inside this run of braces.
            i = j.max(i + 1);
            continue;
        }
        let inner_end = j;
        while j < bytes.len() && bytes[j] == b'}' {
            j += 1;
        }
        let raw = template[inner_start..inner_end].trim_matches(is_python_space);
        let (name, optional) = match raw.strip_suffix('?') {
            Some(n) => (n, true),
            None => (raw, false),
        };
        let key = if let Some(artifact) = name.strip_prefix("artifact.") {
            Some(TemplateKey {
                name: artifact.to_owned(),
                optional,
                span: start..j,
                artifact: true,
            })
        } else if is_state_name(name) {
            Some(TemplateKey {
                name: name.to_owned(),
                optional,
                span: start..j,
                artifact: false,
            })
        } else {
            None
        };
        if let Some(key) = key {
            items.push(Item::Literal(&template[literal_start..start]));
            items.push(Item::Key(key));
            literal_start = j;
        }
        i = j;
    }
    items.push(Item::Literal(&template[literal_start..]));
    items
}

/// The keys a template references, in order (ADK 1.x's rules).
pub fn keys(template: &str) -> Vec<TemplateKey> {
    keys_in(Dialect::Adk1, template)
}

/// The keys a template references under `dialect`'s rules, in order.
pub fn keys_in(dialect: Dialect, template: &str) -> Vec<TemplateKey> {
    scan(template, dialect)
        .into_iter()
        .filter_map(|i| match i {
            Item::Key(k) => Some(k),
            Item::Literal(_) => None,
        })
        .collect()
}

/// Renders a template against state.
///
/// # Errors
/// A required key missing from state, or any required artifact reference (artifacts are
/// not loaded by this renderer).
pub fn render(
    template: &str,
    lookup: impl Fn(&str) -> Option<Value>,
) -> Result<String, TemplateError> {
    render_in(Dialect::Adk1, template, lookup, |_| None)
}

/// Renders a template against state and artifacts under `dialect`'s rules: `{artifact.NAME}`
/// inserts the text of the artifact's latest version, as `artifacts(NAME)` gives it.
///
/// # Errors
/// A required key or artifact that is missing.
pub fn render_in(
    dialect: Dialect,
    template: &str,
    lookup: impl Fn(&str) -> Option<Value>,
    artifacts: impl Fn(&str) -> Option<String>,
) -> Result<String, TemplateError> {
    if !template.contains('{') {
        return Ok(template.to_owned());
    }
    let mut out = String::with_capacity(template.len());
    for item in scan(template, dialect) {
        match item {
            Item::Literal(s) => out.push_str(s),
            Item::Key(k) if k.artifact => match artifacts(&k.name) {
                Some(text) => out.push_str(&text),
                None if k.optional => {}
                None => return Err(TemplateError::MissingArtifact { name: k.name }),
            },
            Item::Key(k) => match lookup(&k.name) {
                Some(Value::Null) => {}
                Some(v) => out.push_str(&py_str(&v)),
                None if k.optional => {}
                None => return Err(TemplateError::MissingKey { key: k.name }),
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(template: &str, state: Value, expect: Result<&str, TemplateError>) {
        let state = state.as_object().cloned().unwrap();
        let got = render(template, |k| state.get(k).cloned());
        assert_eq!(got.as_deref().map_err(Clone::clone), expect, "{template}");
    }

    #[test]
    fn substitutes_keys_like_adk() {
        check("Hi {name}.", json!({"name": "Ann"}), Ok("Hi Ann."));
        check("Hi {{name}}!", json!({"name": "Ann"}), Ok("Hi Ann!"));
        check("Hi { name }", json!({"name": "Ann"}), Ok("Hi Ann"));
        check("[{n}]", json!({"n": 3}), Ok("[3]"));
        check("{flag}", json!({"flag": true}), Ok("True"));
        check("{d}", json!({"d": {"a": 1}}), Ok("{'a': 1}"));
        check("<{x}>", json!({"x": null}), Ok("<>"));
        check(
            "{app:tier}/{user:lang}",
            json!({"app:tier": "gold", "user:lang": "en"}),
            Ok("gold/en"),
        );
        check("{temp:t}", json!({"temp:t": "x"}), Ok("x"));
    }

    #[test]
    fn optional_keys_render_empty() {
        check("a{missing?}b", json!({}), Ok("ab"));
        check("a{present?}b", json!({"present": 1}), Ok("a1b"));
    }

    #[test]
    fn missing_key_is_an_error() {
        check(
            "x {nope} y",
            json!({}),
            Err(TemplateError::MissingKey { key: "nope".into() }),
        );
    }

    #[test]
    fn non_keys_stay_verbatim() {
        check(
            r#"Reply as {"a": 1}."#,
            json!({}),
            Ok(r#"Reply as {"a": 1}."#),
        );
        check(
            "{a.b} {x:y} {1abc} {}",
            json!({}),
            Ok("{a.b} {x:y} {1abc} {}"),
        );
        check("{ {a}", json!({"a": "A"}), Ok("{ A"));
        check("unclosed {a", json!({}), Ok("unclosed {a"));
        check("emoji {é}", json!({"é": "ok"}), Ok("emoji ok"));
    }

    #[test]
    fn adk2_skips_runs_after_dollar_or_backslash() {
        let state = json!({"a": "A"});
        let state = state.as_object().unwrap();
        let adk2 = |t: &str| render_in(Dialect::Adk2, t, |k| state.get(k).cloned(), |_| None);
        assert_eq!(
            adk2(r"\{a} \{missing} ${b} $${c}").as_deref(),
            Ok(r"\{a} \{missing} ${b} $${c}")
        );
        assert_eq!(
            adk2("{{a}} {{{a}}} { a } $x{a} {{missing?}}").as_deref(),
            Ok("A A A $xA ")
        );
        assert_eq!(adk2("{b$}{a} {a\\{a}").as_deref(), Ok("{b$}A {a\\{a}"));
        assert_eq!(
            render(r"\{a}", |k| state.get(k).cloned()).as_deref(),
            Ok(r"\A")
        );
    }

    #[test]
    fn lists_keys_with_spans() {
        let ks = keys("Use {out1} and {opt?} and {app:x}");
        let names: Vec<_> = ks.iter().map(|k| (k.name.as_str(), k.optional)).collect();
        assert_eq!(
            names,
            vec![("out1", false), ("opt", true), ("app:x", false)]
        );
        assert_eq!(ks[0].span, 4..10);
    }
}
