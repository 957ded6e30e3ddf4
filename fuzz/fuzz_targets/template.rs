//! The `{key}` template scanner and renderer, against ADK 1.39.1's own rules written out
//! plainly (`inject_session_state`: `re.finditer(r'{+[^{}]*}+')`, `lstrip('{')`,
//! `rstrip('}')`, `strip()`, `isidentifier()`): the same keys at the same places and the
//! same text or error, for any template.
#![no_main]

use adk_flow::template::{self, TemplateError, TemplateKey};
use libfuzzer_sys::fuzz_target;
use regex::Regex;
use serde_json::{Value, json};
use std::sync::LazyLock;

static CANDIDATE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\{+[^{}]*\}+").unwrap());

/// Python's `str.isspace()`: Unicode White_Space plus the separators U+001C..U+001F.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.isidentifier()`.
fn py_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || unicode_ident::is_xid_start(c))
        && chars.all(unicode_ident::is_xid_continue)
}

/// ADK's `_is_valid_state_name`.
fn valid_state_name(name: &str) -> bool {
    let parts: Vec<&str> = name.split(':').collect();
    match parts[..] {
        [one] => py_identifier(one),
        [prefix, rest] => matches!(prefix, "app" | "user" | "temp") && py_identifier(rest),
        _ => false,
    }
}

/// The keys ADK substitutes, in order.
fn reference_keys(template: &str) -> Vec<TemplateKey> {
    let mut out = Vec::new();
    for m in CANDIDATE.find_iter(template) {
        let name = m
            .as_str()
            .trim_start_matches('{')
            .trim_end_matches('}')
            .trim_matches(py_space);
        let (name, optional) = match name.strip_suffix('?') {
            Some(n) => (n, true),
            None => (name, false),
        };
        let key = |name: &str, artifact| TemplateKey {
            name: name.to_owned(),
            optional,
            span: m.range(),
            artifact,
        };
        if let Some(artifact) = name.strip_prefix("artifact.") {
            out.push(key(artifact, true));
        } else if valid_state_name(name) {
            out.push(key(name, false));
        }
    }
    out
}

fn state(key: &str) -> Option<Value> {
    match key {
        "a" | "app:a" => Some(json!("A")),
        "n" => Some(json!(7)),
        "none" => Some(Value::Null),
        "d" => Some(json!({"k": [1, true]})),
        _ => None,
    }
}

fn artifact(name: &str) -> Option<String> {
    (name == "doc").then(|| "DOC".to_owned())
}

/// What ADK renders: each substituted key replaced, the first failure raised.
fn reference_render(template: &str) -> Result<String, TemplateError> {
    let mut out = String::new();
    let mut last = 0;
    for k in reference_keys(template) {
        out.push_str(&template[last..k.span.start]);
        last = k.span.end;
        let value = if k.artifact {
            match artifact(&k.name) {
                Some(text) => text,
                None if k.optional => String::new(),
                None => return Err(TemplateError::MissingArtifact { name: k.name }),
            }
        } else {
            match state(&k.name) {
                Some(Value::Null) => String::new(),
                Some(v) => adk_flow::pyrepr::py_str(&v),
                None if k.optional => String::new(),
                None => return Err(TemplateError::MissingKey { key: k.name }),
            }
        };
        out.push_str(&value);
    }
    out.push_str(&template[last..]);
    Ok(out)
}

fuzz_target!(|data: &[u8]| {
    let template = String::from_utf8_lossy(data);
    let keys = template::keys(&template);
    assert_eq!(keys, reference_keys(&template), "keys of {template:?}");
    assert_eq!(
        template::render_in(template::Dialect::Adk1, &template, state, artifact),
        reference_render(&template),
        "rendering {template:?}"
    );
});
