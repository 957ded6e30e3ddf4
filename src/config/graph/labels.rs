//! Route labels as written in a workflow's edges: a routing map's keys and an explicit
//! edge's `route`, with the YAML 1.1 traps (`yes:`, `017`), floats and other values that
//! are no label refused at their key or value, saying what to write instead.

use super::{DEFAULT_ROUTE, EdgeRoute, Label};
use crate::config::load::Loader;
use crate::config::source::Source;
use serde_json::Value;

impl Loader<'_> {
    /// A routing map's key as a label.
    pub(super) fn map_label(&mut self, src: &Source, key: &str, key_at: &str) -> Option<EdgeRoute> {
        let key = key.trim_end_matches('\0');
        let pos = src.index.key(key_at);
        if let Some(trap) = src.index.yaml11_integer(pos) {
            self.diagnostics
                .push(src.key_error(key_at, yaml11_integer_message(trap)));
            return None;
        }
        match src.index.typed_key(key_at) {
            None => {
                if src.index.is_yaml11_boolean(pos) {
                    self.diagnostics
                        .push(src.key_error(key_at, yaml11_message(key)));
                    return None;
                }
                if key == DEFAULT_ROUTE {
                    return Some(EdgeRoute::Default);
                }
                Some(EdgeRoute::Labels(vec![Label::Str(key.to_owned())]))
            }
            Some(Value::Bool(b)) => Some(EdgeRoute::Labels(vec![Label::Bool(*b)])),
            Some(Value::Number(n)) if n.is_i64() => Some(EdgeRoute::Labels(vec![Label::Int(
                n.as_i64().unwrap_or_default(),
            )])),
            Some(other) => {
                self.diagnostics.push(src.key_error(
                    key_at,
                    not_a_label_message(other, src.index.float_written(pos)),
                ));
                None
            }
        }
    }

    /// An explicit edge's `route`: a label or a list of labels.
    pub(super) fn route_labels(&mut self, src: &Source, v: &Value, at: &str) -> Option<EdgeRoute> {
        match v {
            Value::Array(items) if !items.is_empty() => {
                let mut labels = Vec::new();
                for (j, item) in items.iter().enumerate() {
                    let item_at = format!("{at}/{j}");
                    if item.as_str() == Some(DEFAULT_ROUTE) {
                        self.diagnostics.push(src.error(
                            &item_at,
                            "`__DEFAULT__` cannot be combined with other labels in a list; give it an edge of its own",
                        ));
                        return None;
                    }
                    labels.push(self.one_label(src, item, &item_at)?);
                }
                Some(EdgeRoute::Labels(labels))
            }
            Value::Array(_) => {
                self.diagnostics.push(src.error(
                    at,
                    "`route: []` lists no label; write a label, a list of labels, or leave `route` out",
                ));
                None
            }
            Value::String(s) if s == DEFAULT_ROUTE => Some(EdgeRoute::Default),
            other => Some(EdgeRoute::Labels(vec![self.one_label(src, other, at)?])),
        }
    }

    /// One label of an explicit edge's `route`.
    fn one_label(&mut self, src: &Source, v: &Value, at: &str) -> Option<Label> {
        if let Some(trap) = src.index.yaml11_integer(src.index.value(at)) {
            self.diagnostics
                .push(src.error(at, yaml11_integer_message(trap)));
            return None;
        }
        if let Value::String(s) = v
            && src.index.is_yaml11_boolean(src.index.value(at))
        {
            self.diagnostics.push(src.error(at, yaml11_message(s)));
            return None;
        }
        match Label::from_json(v) {
            Some(l) => Some(l),
            None => {
                self.diagnostics.push(src.error(
                    at,
                    not_a_label_message(v, src.index.float_written(src.index.value(at))),
                ));
                None
            }
        }
    }
}

/// Why a value is no label (a float, a list or mapping where one label belongs, null),
/// and what to write instead.
fn not_a_label_message(v: &Value, written: Option<&str>) -> String {
    if let Some(w) = written {
        let digits = w.trim_start_matches(['-', '+']);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
            return format!(
                "label `{w}` is an integer beyond the 64-bit integers adk-flow's labels hold (ADK would take it); quote it for a string (`\"{w}\"`) that a route must equal, or use a smaller integer"
            );
        }
        if !v
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
        {
            return format!(
                "label `{w}` is a float: labels are strings, integers or true/false (ADK refuses it too); quote it for a string (`\"{w}\"`) that a route must equal"
            );
        }
    }
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 && f.abs() < 9.2e18 {
                format!(
                    "label `{v}` is a float: labels are strings, integers or true/false (ADK reads `{v}` as the integer {i}); write `{i}`, or quote it for a string (`\"{v}\"`) that a route must equal",
                    i = f as i64
                )
            } else {
                format!(
                    "label `{v}` is a float: labels are strings, integers or true/false (ADK refuses it too); quote it for a string (`\"{v}\"`) that a route must equal"
                )
            }
        }
        _ => format!(
            "label `{v}` is neither a string, an integer nor true/false; quote it to make it a string"
        ),
    }
}

/// Why an unquoted YAML 1.1 trap used as a label is refused.
fn yaml11_integer_message(trap: &crate::config::yaml::Yaml11Integer) -> String {
    format!("label {}", yaml11_trap_message(trap))
}

/// Why an unquoted YAML 1.1 trap (an integer written `017`, `1_000`, `0o17`; a date) is
/// refused, and what to write instead.
pub(in crate::config) fn yaml11_trap_message(
    (written, old, new): &crate::config::yaml::Yaml11Integer,
) -> String {
    let instead = if old.starts_with("a date") {
        "quote it to make it a string"
    } else if old.contains("float") || new.contains("float") {
        "quote it to make it a string, or write the float with a dot and no `_` (such as `1000.0`, `1.0e+3`)"
    } else {
        "quote it to make it a string, or write the integer in plain decimal"
    };
    format!(
        "`{written}` is unquoted: ADK (PyYAML, YAML 1.1) reads it as {old}, adk-flow (YAML 1.2) as {new}; {instead}"
    )
}

/// Why an unquoted `yes`/`no`/`on`/`off` is refused, and what to write instead.
fn yaml11_message(word: &str) -> String {
    format!(
        "label `{word}` is unquoted: ADK (PyYAML, YAML 1.1) reads it as a boolean, adk-flow (YAML 1.2) as a string; quote it (`\"{word}\"`) or write true/false"
    )
}
