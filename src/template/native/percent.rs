//! Python's `%` formatting of a string (`'%s of %d' % (a, b)`), which jinja2 (ADK's engine
//! for Router expressions) does and minijinja does not: the conversions `s`, `r`, `a`,
//! `d`, `i`, `u`, `x`, `X`, `o`, `f`, `F`, `e`, `E`, `g`, `G` and `%%`, with `%(key)s`
//! mapping keys, the flags `-`, `+`, space, `0` and `#` (the alternate form: `0x`/`0o`
//! prefixes, a decimal point always, `%g`'s trailing zeros kept), a width and a
//! precision. Other conversions (`c`, `*` widths, ...) have no native form.

use crate::pyrepr::{float_repr, py_repr, py_str};
use serde_json::Value;

/// `format % args` as Python computes it: `Some(Ok(text))`, `Some(Err(message))` for
/// Python's error (too few or too many arguments, `%d` of text, ...), `None` for what
/// this module does not do. `tuple`: `args` are a tuple's items; otherwise `args` holds
/// the one value written after `%`.
pub(in crate::template) fn format(
    format: &str,
    args: &[Value],
    tuple: bool,
) -> Option<Result<String, String>> {
    let mapping = match args {
        [Value::Object(m)] if !tuple => Some(m),
        _ => None,
    };
    let mut out = String::with_capacity(format.len());
    let mut next = 0;
    let mut rest = format;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        let mut key = None;
        if let Some(after) = rest.strip_prefix('(') {
            // Python allows nested parentheses in a key.
            let mut depth = 1;
            let end = after.char_indices().find_map(|(i, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            });
            let Some(end) = end else {
                return Some(Err("incomplete format key".into()));
            };
            key = Some(&after[..end]);
            rest = &after[end + 1..];
        }
        let mut spec = Spec::default();
        let flags = rest.len() - rest.trim_start_matches(['-', '+', ' ', '0', '#']).len();
        for f in rest[..flags].chars() {
            match f {
                '-' => spec.left = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '0' => spec.zero = true,
                _ => spec.alternate = true,
            }
        }
        rest = &rest[flags..];
        (spec.width, rest) = digits(rest);
        if let Some(after) = rest.strip_prefix('.') {
            let (precision, after) = digits(after);
            spec.precision = Some(precision.unwrap_or(0));
            rest = after;
        }
        if spec.width.is_some_and(|w| w > MAX_FIELD)
            || spec.precision.is_some_and(|p| p > MAX_FIELD)
        {
            return Some(Err(format!(
                "a width or precision past {MAX_FIELD} (adk-flow's limit for a Router's formatting)"
            )));
        }
        rest = rest.trim_start_matches(['h', 'l', 'L']);
        let Some(conversion) = rest.chars().next() else {
            return Some(Err("incomplete format".into()));
        };
        rest = &rest[conversion.len_utf8()..];
        if conversion == '%' && key.is_none() {
            out.push('%');
            continue;
        }
        let value = match key {
            Some(name) => {
                let Some(m) = mapping else {
                    return Some(Err("format requires a mapping".into()));
                };
                match m.get(name) {
                    Some(v) => v,
                    None => return Some(Err(format!("'{name}'"))),
                }
            }
            None => {
                let Some(v) = args.get(next) else {
                    return Some(Err("not enough arguments for format string".into()));
                };
                next += 1;
                v
            }
        };
        let text = match conversion {
            's' => cut(py_str(value), spec.precision),
            'r' | 'a' => cut(py_repr(value), spec.precision),
            'd' | 'i' | 'u' | 'x' | 'X' | 'o' => {
                // `%x` and `%o` take only ints (a float is Python's TypeError); `%d`
                // truncates a float.
                let whole = matches!(conversion, 'x' | 'X' | 'o');
                let taken = if whole && !is_int(value) {
                    None
                } else {
                    wide_integer(value)
                };
                match taken {
                    Some(i) => {
                        let n = i.unsigned_abs();
                        let mut digits = match conversion {
                            'x' => format!("{n:x}"),
                            'X' => format!("{n:X}"),
                            'o' => format!("{n:o}"),
                            _ => n.to_string(),
                        };
                        // A precision is the least number of digits, as in C.
                        if let Some(p) = spec.precision.filter(|&p| p > digits.len()) {
                            digits.insert_str(0, &"0".repeat(p - digits.len()));
                        }
                        if spec.alternate
                            && conversion != 'd'
                            && conversion != 'i'
                            && conversion != 'u'
                        {
                            // Python's `0x`, `0X`, `0o`, between the sign and the digits.
                            digits.insert(0, conversion);
                            digits.insert(0, '0');
                        }
                        sign(&spec, i < 0, digits)
                    }
                    None if !whole && matches!(value, Value::Number(_)) => return None,
                    None if whole
                        && matches!(value, Value::Number(n) if n.is_i64() || n.is_u64()) =>
                    {
                        return None;
                    }
                    None if whole => {
                        return Some(Err(format!(
                            "%{conversion} format: an integer is required, not {}",
                            super::py_type(value)
                        )));
                    }
                    None => {
                        return Some(Err(format!(
                            "%{conversion} format: a real number is required, not {}",
                            super::py_type(value)
                        )));
                    }
                }
            }
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' => match number(value) {
                Some(f) if f.is_finite() => {
                    let precision = spec.precision.unwrap_or(6);
                    let digits = match conversion {
                        'f' | 'F' => fixed(f.abs(), precision, spec.alternate),
                        'e' | 'E' => exponent(f.abs(), precision, spec.alternate),
                        _ => general(f.abs(), precision, spec.alternate),
                    };
                    let digits = if conversion.is_ascii_uppercase() {
                        digits.to_ascii_uppercase()
                    } else {
                        digits
                    };
                    sign(&spec, f.is_sign_negative(), digits)
                }
                Some(f) => {
                    let text = float_repr(f.abs());
                    let text = if conversion.is_ascii_uppercase() {
                        text.to_ascii_uppercase()
                    } else {
                        text
                    };
                    sign(&spec, f < 0.0, text)
                }
                None => {
                    return Some(Err(format!(
                        "must be real number, not {}",
                        super::py_type(value)
                    )));
                }
            },
            _ => return None,
        };
        pad(
            &mut out,
            &spec,
            &text,
            conversion != 's' && conversion != 'r' && conversion != 'a',
        );
    }
    out.push_str(rest);
    // A mapping argument need not be used; extra positional ones are an error.
    Some(if next == args.len() || mapping.is_some() {
        Ok(out)
    } else {
        Err("not all arguments converted during string formatting".into())
    })
}

/// The flags, width and precision of one conversion.
#[derive(Default)]
struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    zero: bool,
    alternate: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

/// A decimal number at the start of `text`, and the text after it.
fn digits(text: &str) -> (Option<usize>, &str) {
    let end = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    // Digits past usize read as too large, never as absent.
    let n = (end > 0).then(|| text[..end].parse().unwrap_or(usize::MAX));
    (n, &text[end..])
}

/// The widest field and the longest precision a conversion may ask for: Rust's
/// formatting panics past 65535, and a field of billions of characters would exhaust
/// memory; Python has no such limit, so a Router asking for more gets an error.
const MAX_FIELD: usize = 10_000;

/// Whether `v` is a Python int (`True` and `False` included), as `%x` and `%o` require.
fn is_int(v: &Value) -> bool {
    matches!(v, Value::Bool(_)) || matches!(v, Value::Number(n) if n.is_i64() || n.is_u64())
}

/// The integer `%d` and `%x` make, past `i64` too: an int (a u64 included), a float
/// truncated (exactly, as Python's `int()`), a boolean as 1 or 0.
fn wide_integer(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) if n.is_u64() => n.as_u64().map(i128::from),
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .filter(|f| f.is_finite() && f.abs() < 1.7e38)
            .map(|f| f.trunc() as i128),
        _ => super::integer(v).map(i128::from),
    }
}

/// The number `%f` writes: a number, a boolean as 1.0 or 0.0.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// `%f` of a finite `f >= 0`: `precision` decimals; with `alternate`, a decimal point
/// even with none.
fn fixed(f: f64, precision: usize, alternate: bool) -> String {
    let mut text = format!("{f:.precision$}");
    if alternate && precision == 0 {
        text.push('.');
    }
    text
}

/// `%e` of a finite `f >= 0`: one digit, `precision` decimals, `e`, the exponent's sign
/// and at least two digits (`1.500000e+00`); with `alternate`, a decimal point even with
/// no decimals.
fn exponent(f: f64, precision: usize, alternate: bool) -> String {
    // Rust writes `1.5e0` (correctly rounded, as Python's dtoa is).
    let rust = format!("{f:.precision$e}");
    let (mantissa, exp) = rust.split_once('e').unwrap_or((&rust, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let point = if alternate && precision == 0 { "." } else { "" };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{point}e{sign}{:02}", exp.unsigned_abs())
}

/// `%g` of a finite `f >= 0`, as C and Python write it: `precision` significant digits
/// (0 counts as 1); `%e`'s form when the exponent is below -4 or not below the
/// precision, `%f`'s otherwise; trailing zeros and a trailing point dropped unless
/// `alternate`.
fn general(f: f64, precision: usize, alternate: bool) -> String {
    let p = precision.max(1);
    // The exponent after rounding to `p` digits (9.9999995 is 1.00000e+01).
    let rounded = format!("{f:.prec$e}", prec = p - 1);
    let exp: i64 = rounded
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let mut text = if exp < -4 || exp >= p as i64 {
        exponent(f, p - 1, alternate)
    } else {
        let decimals = usize::try_from(p as i64 - 1 - exp).unwrap_or(0);
        fixed(f, decimals, alternate)
    };
    if !alternate {
        let (number, exp) = match text.find('e') {
            Some(at) => text.split_at(at),
            None => (text.as_str(), ""),
        };
        if number.contains('.') {
            let number = number.trim_end_matches('0').trim_end_matches('.');
            text = format!("{number}{exp}");
        }
    }
    text
}

/// `text` cut to `precision` characters.
fn cut(text: String, precision: Option<usize>) -> String {
    match precision {
        Some(p) if text.chars().count() > p => text.chars().take(p).collect(),
        _ => text,
    }
}

/// Digits with their sign: `-`, or `+` / space as the flags ask.
fn sign(spec: &Spec, negative: bool, digits: String) -> String {
    let sign = if negative {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    format!("{sign}{digits}")
}

/// Appends `text` padded to the width: left-justified with `-`, zero-filled after the
/// sign with `0` for numbers, right-justified with spaces otherwise.
fn pad(out: &mut String, spec: &Spec, text: &str, numeric: bool) {
    let len = text.chars().count();
    let fill = spec.width.unwrap_or(0).saturating_sub(len);
    if fill == 0 {
        out.push_str(text);
    } else if spec.left {
        out.push_str(text);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if spec.zero && numeric {
        let (sign, digits) = match text.chars().next() {
            Some(c @ ('-' | '+' | ' ')) => (Some(c), &text[1..]),
            _ => (None, text),
        };
        out.extend(sign);
        // The zeros go after an alternate form's `0x`, `0X` or `0o` too.
        let digits = match digits.get(..2) {
            Some(prefix @ ("0x" | "0X" | "0o")) => {
                out.push_str(prefix);
                &digits[2..]
            }
            _ => digits,
        };
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(digits);
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(text);
    }
}
