//! Python's `str()` and `repr()` of JSON values, `json.dumps` text, and pydantic's
//! camelCase aliases.
//!
//! ADK renders state values into instructions with `str(value)` and quotes other agents'
//! tool calls with f-strings, so prompts carry Python literals (`{'city': 'Paris'}`, `True`,
//! `None`), not JSON. Matching that keeps prompts byte-identical to ADK's.

use serde_json::Value;
use std::fmt::Write;

/// Python `str(value)`: strings bare, everything else as `repr`.
pub fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python `repr(value)` of the value as Python would hold it after `json.loads`.
pub fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, value);
    out
}

/// Appends Python `repr(value)` to `out` ([`py_repr`] without a string of its own).
pub fn push_repr(out: &mut String, value: &Value) {
    write_repr(out, value);
}

fn write_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                write_float(out, f);
            } else {
                let _ = write!(out, "{n}");
            }
        }
        Value::String(s) => write_str_repr(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, v);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str_repr(out, k);
                out.push_str(": ");
                write_repr(out, v);
            }
            out.push('}');
        }
    }
}

fn write_float(out: &mut String, f: f64) {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 {
        let _ = write!(out, "{f:.1}");
    } else if f.is_nan() {
        out.push_str("nan");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "inf" } else { "-inf" });
    } else {
        let _ = write!(out, "{f}");
    }
}

fn write_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `json.dumps(value, ensure_ascii=False)`: JSON with `", "` and `": "`
/// between items (ADK writes span attributes this way).
pub fn json_dumps<T: serde::Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PyFormatter);
    // Writing a `Value` to memory cannot fail.
    let _ = serde::Serialize::serialize(value, &mut ser);
    String::from_utf8(out).unwrap_or_default()
}

struct PyFormatter;

impl serde_json::ser::Formatter for PyFormatter {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// pydantic's `to_camel` for snake_case keys (`eval_set_id` → `evalSetId`,
/// `max_output_tokens` → `maxOutputTokens`); camelCase keys stay as they are.
pub fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for (i, c) in key.chars().enumerate() {
        if c == '_' && i > 0 {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// snake_case of a camelCase key (`evalSetId` → `eval_set_id`).
pub fn snake(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_dumps_spaces_items_as_python_does() {
        let v = serde_json::json!({"a": [1, "é\n", null], "b": {"c": true}});
        assert_eq!(
            super::json_dumps(&v),
            r#"{"a": [1, "é\n", null], "b": {"c": true}}"#
        );
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn renders_python_literals() {
        assert_eq!(
            py_repr(
                &json!({"city": "Paris", "n": 2, "ok": true, "x": null, "f": 1.5, "g": 2.0, "l": [1, "a"]})
            ),
            "{'city': 'Paris', 'n': 2, 'ok': True, 'x': None, 'f': 1.5, 'g': 2.0, 'l': [1, 'a']}"
        );
        assert_eq!(py_repr(&json!("it's")), "\"it's\"");
        assert_eq!(py_repr(&json!("a'b\"c")), "'a\\'b\"c'");
        assert_eq!(py_repr(&json!("line\nnext")), "'line\\nnext'");
        assert_eq!(py_str(&json!("plain")), "plain");
        assert_eq!(py_str(&json!(false)), "False");
    }
}
