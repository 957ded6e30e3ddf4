//! Python's `str()` and `repr()` of JSON values, `json.dumps` text, and pydantic's
//! camelCase aliases.
//!
//! ADK renders state values into instructions with `str(value)` and quotes other agents'
//! tool calls with f-strings, so prompts carry Python literals (`{'city': 'Paris'}`, `True`,
//! `None`), not JSON. Matching that keeps prompts byte-identical to ADK's.

use serde_json::Value;
use std::fmt::Write;

mod printable;

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
    push_repr(&mut out, value);
    out
}

/// Appends Python `repr(value)` to `out` ([`py_repr`] without a string of its own).
pub fn push_repr(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                push_float(out, f);
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
                push_repr(out, v);
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
                push_repr(out, v);
            }
            out.push('}');
        }
    }
}

/// Appends Python's `repr(f)` of a float (also its `str()` and what `json.dumps` writes
/// for a finite one): the shortest digits that read back as `f`, in positional notation
/// with at least one decimal (`1.0`, `0.0001`, `1000000000000000.0`) while the decimal
/// point falls within 4 places before and 16 after the first digit, otherwise in
/// scientific notation with a signed exponent of at least two digits (`1e-05`, `1e+16`,
/// `1.5e+301`); `inf`, `-inf`, `nan`.
pub fn push_float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("nan");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "inf" } else { "-inf" });
        return;
    }
    // Rust's `{:e}` writes the shortest round-trip digits: `-1.2345e-7`.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    // The value is 0.DIGITS times 10^point.
    let point = exp + 1;
    out.push_str(sign);
    if -4 < point && point <= 16 {
        let n = digits.len() as i32;
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else if point < n {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        } else {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (point - n) as usize));
            out.push_str(".0");
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
}

/// Python's `repr(f)` of a float (see [`push_float`]).
pub fn float_repr(f: f64) -> String {
    let mut out = String::new();
    push_float(&mut out, f);
    out
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
            c if printable::is_printable(c) => out.push(c),
            // As Python escapes what `str.isprintable()` refuses (controls, format
            // characters such as U+200B, separators such as U+00A0 and U+2028).
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
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

    fn write_f64<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        value: f64,
    ) -> std::io::Result<()> {
        writer.write_all(float_repr(value).as_bytes())
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
        // What Python does not print is escaped: U+200B, U+00A0, U+2028, U+3000, U+E000.
        assert_eq!(
            py_repr(&json!(
                "a\u{200b}\u{a0}\u{2028}\u{3000}\u{7f}é😀\u{e000}\u{f0000}"
            )),
            "'a\\u200b\\xa0\\u2028\\u3000\\x7fé😀\\ue000\\U000f0000'"
        );
        assert_eq!(py_str(&json!("plain")), "plain");
        assert_eq!(py_str(&json!(false)), "False");
    }

    #[test]
    fn floats_are_written_as_python_writes_them() {
        for (f, want) in [
            (1.0, "1.0"),
            (-0.0, "-0.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (0.000123, "0.000123"),
            (1.5e-7, "1.5e-07"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e300 * 10.0, "1.5e+301"),
            (0.1 + 0.2, "0.30000000000000004"),
            (123456789.123, "123456789.123"),
            (2.5, "2.5"),
            (-12.75, "-12.75"),
            (1234567890123456.7, "1234567890123456.8"),
            (12345678901234567.0, "1.2345678901234568e+16"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(float_repr(f), want, "{f:e}");
        }
        assert_eq!(
            json_dumps(&json!({"a": 0.00001, "b": [1e16, 2.0, 3]})),
            r#"{"a": 1e-05, "b": [1e+16, 2.0, 3]}"#
        );
        assert_eq!(py_repr(&json!([1e-5, 1e22])), "[1e-05, 1e+22]");
    }
}
