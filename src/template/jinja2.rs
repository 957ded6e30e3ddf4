//! What jinja2 (ADK's engine for Router expressions) does that minijinja does not, for
//! compiled expressions: the `int`, `last` and `string` filters as jinja2 has them, and the
//! variables a slice reads.

/// jinja2's `int` filter: text is read as Python's `int()` and then `float()` read it
/// (blanks around it, `_` between digits, `1e3`), and a value that is no number (`'ten' |
/// int`, `'inf' | int`) gives the default (0), where minijinja's fails; a missing value
/// still fails (strict undefined). Python's ints are unbounded; here an integer is exact
/// up to ±2**127 (`'99999999999999999999' | int` and `1e30 | int` are Python's), and one
/// past that is an error naming it, where minijinja would saturate.
pub(super) fn int(
    state: &minijinja::State,
    value: &minijinja::Value,
    default: Option<minijinja::Value>,
    base: Option<u32>,
    kwargs: minijinja::value::Kwargs,
) -> Result<minijinja::Value, minijinja::Error> {
    let fallback = match &default {
        Some(d) => Some(d.clone()),
        None => kwargs.get::<Option<minijinja::Value>>("default")?,
    };
    let base = match base {
        Some(b) => Some(b),
        None => kwargs.get::<Option<u32>>("base")?,
    };
    if let (Some(text), None | Some(10)) = (value.as_str(), base) {
        kwargs.assert_all_used()?;
        return match py_int(text) {
            TextInt::Int(i) => Ok(minijinja::Value::from(i)),
            TextInt::NotANumber => Ok(fallback.unwrap_or_else(|| minijinja::Value::from(0))),
            TextInt::Past => Err(past_i128(&format!("'{text}' | int"))),
        };
    }
    if value.kind() == minijinja::value::ValueKind::Number
        && !value.is_integer()
        && let Ok(f) = f64::try_from(value.clone())
        && f.is_finite()
    {
        kwargs.assert_all_used()?;
        // Python's int() of a float is exact; minijinja's `as i128` saturates.
        return if f.abs() < I128_BOUND {
            Ok(minijinja::Value::from(f.trunc() as i128))
        } else {
            Err(past_i128(&format!(
                "{} | int",
                crate::pyrepr::float_repr(f)
            )))
        };
    }
    match minijinja::filters::int(state, value, default, base, kwargs) {
        Err(e) if e.kind() == minijinja::ErrorKind::InvalidOperation && !value.is_undefined() => {
            Ok(fallback.unwrap_or_else(|| minijinja::Value::from(0)))
        }
        other => other,
    }
}

/// 2**127: the integers adk-flow computes with are below it in size (minijinja's i128).
const I128_BOUND: f64 = 1.7014118346046923e38;

/// What jinja2's `int` makes of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TextInt {
    /// Python's `int(text)`, else `int(float(text))`.
    Int(i128),
    /// Neither reads it, or the number is not finite: the filter's default.
    NotANumber,
    /// A number past ±2**127 (Python's ints are unbounded; adk-flow's are not).
    Past,
}

/// Text as jinja2's `int` reads it.
pub(super) fn py_int(text: &str) -> TextInt {
    let text = text.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c));
    let text = ascii_digits(text);
    let Some(plain) = python_digits(&text) else {
        return TextInt::NotANumber;
    };
    if let Ok(i) = plain.parse::<i128>() {
        return TextInt::Int(i);
    }
    let digits = plain.strip_prefix(['+', '-']).unwrap_or(&plain);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return TextInt::Past;
    }
    // Rust reads `infinity` and `nan` as Python does; their int() is no number.
    match plain.parse::<f64>() {
        Ok(f) if f.is_finite() && f.abs() < I128_BOUND => TextInt::Int(f.trunc() as i128),
        Ok(f) if f.is_finite() => TextInt::Past,
        _ => TextInt::NotANumber,
    }
}

/// The first code point of each run of ten Unicode decimal digits (category Nd, 0 to 9
/// in order), as Python 3.11's `unicodedata` (Unicode 14.0) lists them.
const DECIMAL_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// `text` with every Unicode decimal digit as its ASCII digit, as Python's `int()` and
/// `float()` read text (`'١٢٣'` and `'１２'` are 123 and 12 there).
fn ascii_digits(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    let digit = |c: char| {
        let i = DECIMAL_ZEROS.partition_point(|&zero| zero <= u32::from(c));
        let value = u32::from(c) - DECIMAL_ZEROS[i.checked_sub(1)?];
        (value < 10).then(|| char::from(b'0' + value as u8))
    };
    text.chars().map(|c| digit(c).unwrap_or(c)).collect()
}

/// An integer in `value` (itself, or in a list or mapping) that JSON as adk-flow carries
/// it cannot hold (past -2**63 to 2**64-1), as text.
pub(super) fn past_json(value: &minijinja::Value) -> Option<String> {
    use minijinja::value::ValueKind;
    match value.kind() {
        ValueKind::Number if value.is_integer() => (i64::try_from(value.clone()).is_err()
            && u64::try_from(value.clone()).is_err())
        .then(|| value.to_string()),
        ValueKind::Seq => value.try_iter().ok()?.find_map(|v| past_json(&v)),
        ValueKind::Map => value
            .try_iter()
            .ok()?
            .find_map(|k| value.get_item(&k).ok().and_then(|v| past_json(&v))),
        _ => None,
    }
}

/// The error of an integer JSON as adk-flow carries it cannot hold.
pub(super) fn past_json_message(int: &str) -> String {
    format!(
        "the integer {int} is past -2**63 to 2**64-1, the integers adk-flow's values hold (Python's are unbounded)"
    )
}

/// The error of an integer past ±2**127, naming what made it.
fn past_i128(what: &str) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        format!(
            "`{what}` is an integer past ±2**127: Python's are unbounded, adk-flow's are not (and a result must lie within -2**63 and 2**64-1)"
        ),
    )
}

/// `text` without the `_` Python allows between two digits; `None` when one is elsewhere.
fn python_digits(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !text.contains('_') {
        return Some(std::borrow::Cow::Borrowed(text));
    }
    let b = text.as_bytes();
    for (i, c) in b.iter().enumerate() {
        if *c == b'_'
            && !(i > 0 && b[i - 1].is_ascii_digit() && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            return None;
        }
    }
    Some(std::borrow::Cow::Owned(text.replace('_', "")))
}

/// jinja2's `string` filter (Python's `str()`): floats, booleans, `None`, lists and
/// mappings as Python writes them (`1e-05`, `True`, `None`, `['a', 1.0]`), the same
/// text `~` makes of them (`pyops::py_str`); an undefined value is minijinja's.
pub(super) fn string(
    state: &minijinja::State,
    value: &minijinja::Value,
) -> Result<minijinja::Value, minijinja::Error> {
    if value.is_undefined() {
        return minijinja::filters::string(state, value);
    }
    super::pyops::py_str(value)
}

/// jinja2's `last` filter: a mapping's last key (Python's `reversed(dict)`), otherwise
/// minijinja's.
pub(super) fn last(value: minijinja::Value) -> Result<minijinja::Value, minijinja::Error> {
    if value.kind() == minijinja::value::ValueKind::Map {
        let keys: Vec<minijinja::Value> = value.try_iter()?.collect();
        return Ok(keys.last().cloned().unwrap_or(minijinja::Value::UNDEFINED));
    }
    minijinja::filters::last(value)
}

/// The byte offset where a name that starts with `first` at `start` ends, the rest of its
/// characters taken from `chars` (the Router expressions' scanners share it).
pub(super) fn identifier_end(
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    start: usize,
    first: char,
) -> usize {
    let mut end = start + first.len_utf8();
    while let Some(&(j, d)) = chars.peek() {
        if !(d.is_alphanumeric() || d == '_') {
            break;
        }
        end = j + d.len_utf8();
        chars.next();
    }
    end
}

/// When `source` takes a slice (`x[a:b]`), every name in it that is not an attribute:
/// what it may read (minijinja's `undeclared_variables` leaves out what is sliced).
pub(super) fn sliced_names(source: &str) -> Vec<String> {
    let mut brackets = Vec::new();
    let mut names = Vec::new();
    let mut slices = false;
    let mut chars = source.char_indices().peekable();
    let mut prev = ' ';
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                let mut escaped = false;
                for (_, d) in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if d == '\\' {
                        escaped = true;
                    } else if d == c {
                        break;
                    }
                }
            }
            '[' | '(' | '{' => brackets.push(c),
            ']' | ')' | '}' => {
                brackets.pop();
            }
            ':' if brackets.last() == Some(&'[') => slices = true,
            c if c.is_alphabetic() || c == '_' => {
                let end = identifier_end(&mut chars, i, c);
                if prev != '.' {
                    names.push(source[i..end].to_owned());
                }
            }
            _ => {}
        }
        if !c.is_whitespace() {
            prev = c;
        }
    }
    if slices { names } else { Vec::new() }
}

/// Whether a mapping in `value` (itself, or in a list or mapping) has a key that is not text.
pub(super) fn has_other_keys(value: &minijinja::Value) -> bool {
    use minijinja::value::ValueKind;
    let Ok(items) = value.try_iter() else {
        return false;
    };
    match value.kind() {
        ValueKind::Seq => items.into_iter().any(|v| has_other_keys(&v)),
        ValueKind::Map => items.into_iter().any(|k| {
            k.kind() != ValueKind::String || value.get_item(&k).is_ok_and(|v| has_other_keys(&v))
        }),
        _ => false,
    }
}

/// `value` as JSON when a mapping in it has keys that are not text (`{1: 'a', none: 'b'}`),
/// which a Python dict allows and ADK's event `output` (pydantic) writes as text: an
/// integer in decimal, a float as Python's `repr`, `true`/`false`, `None`. Keys Python
/// holds equal (`1`, `1.0` and `true`) are one key, in the first one's place and spelling,
/// with the last one's value, as in a Python dict literal. `Err`: a key Python cannot hash
/// (a list or a mapping). `Ok(None)`: something else has no JSON form.
pub(super) fn json_with_python_keys(
    value: &minijinja::Value,
) -> Result<Option<serde_json::Value>, String> {
    use minijinja::value::ValueKind;
    match value.kind() {
        ValueKind::Seq => {
            let mut out = Vec::new();
            for item in value.try_iter().map_err(|e| e.to_string())? {
                let Some(json) = json_with_python_keys(&item)? else {
                    return Ok(None);
                };
                out.push(json);
            }
            Ok(Some(serde_json::Value::Array(out)))
        }
        ValueKind::Map => {
            // (Python's equality class of the key, its text, its value), in first-seen order.
            let mut entries: Vec<(String, String, serde_json::Value)> = Vec::new();
            for key in value.try_iter().map_err(|e| e.to_string())? {
                let item = value.get_item(&key).map_err(|e| e.to_string())?;
                let Some(json) = json_with_python_keys(&item)? else {
                    return Ok(None);
                };
                let (class, text) = python_key(&key)?;
                match entries.iter_mut().find(|(c, _, _)| *c == class) {
                    Some(entry) => entry.2 = json,
                    None => entries.push((class, text, json)),
                }
            }
            Ok(Some(serde_json::Value::Object(
                entries.into_iter().map(|(_, k, v)| (k, v)).collect(),
            )))
        }
        _ => Ok(serde_json::to_value(value).ok()),
    }
}

/// A dict key's equality class in Python (`1`, `1.0` and `True` are one key) and the text
/// pydantic writes for it.
fn python_key(key: &minijinja::Value) -> Result<(String, String), String> {
    use minijinja::value::ValueKind;
    Ok(match key.kind() {
        ValueKind::String => (format!("s{key}"), key.to_string()),
        ValueKind::None => ("n".into(), "None".into()),
        ValueKind::Bool => {
            let b = key.is_true();
            (format!("i{}", i64::from(b)), b.to_string())
        }
        ValueKind::Number if key.is_integer() => (format!("i{key}"), key.to_string()),
        ValueKind::Number => {
            let f = f64::try_from(key.clone()).map_err(|e| e.to_string())?;
            let class = if f.fract() == 0.0 && f.abs() < 1e38 {
                format!("i{}", f as i128)
            } else {
                format!("f{}", crate::pyrepr::float_repr(f))
            };
            (class, crate::pyrepr::float_repr(f))
        }
        other => return Err(format!("unhashable type as a dict key: {other}")),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_int_filter_is_jinja2s() {
        use super::super::jinja::Expression;
        let ctx = serde_json::json!({"input": "ten", "state": {}});
        for (expr, want) in [
            ("input | int", serde_json::json!(0)),
            ("input | int(7)", serde_json::json!(7)),
            ("'42' | int", serde_json::json!(42)),
            ("'3.9' | int", serde_json::json!(3)),
            ("none | int", serde_json::json!(0)),
            ("[1] | int", serde_json::json!(0)),
            ("' 12\n' | int", serde_json::json!(12)),
            ("'1_000' | int", serde_json::json!(1000)),
            ("'1__0' | int", serde_json::json!(0)),
            ("'_1' | int", serde_json::json!(0)),
            ("'-2.5e1' | int", serde_json::json!(-25)),
            ("'inf' | int", serde_json::json!(0)),
            ("'nan' | int(4)", serde_json::json!(4)),
            ("'+7' | int", serde_json::json!(7)),
            ("'1_0.5' | int", serde_json::json!(10)),
            ("'١٢٣' | int", serde_json::json!(123)),
            ("'\u{3000}１２\u{a0}' | int", serde_json::json!(12)),
            ("'１.５e１' | int", serde_json::json!(15)),
            ("'𝟗' | int", serde_json::json!(9)),
            ("'½' | int", serde_json::json!(0)),
            ("{'a': 1, 'b': 2} | last", serde_json::json!("b")),
            ("[1, 2] | last", serde_json::json!(2)),
            ("'ab' | last", serde_json::json!("b")),
            ("'12' | int(base=16)", serde_json::json!(18)),
            ("'12' | int(0, 8)", serde_json::json!(10)),
            ("0.00001 | string", serde_json::json!("1e-05")),
            ("(10 / 4) | string", serde_json::json!("2.5")),
            (
                "[1e16, 'a', 2] | string",
                serde_json::json!("[1e+16, 'a', 2]"),
            ),
            ("{'x': 1.0} | string", serde_json::json!("{'x': 1.0}")),
            ("[1, 'a'] | string", serde_json::json!("[1, 'a']")),
        ] {
            assert_eq!(
                Expression::compile(expr).unwrap().eval(&ctx).unwrap(),
                want,
                "{expr}"
            );
        }
        // Python's ints are unbounded: exact within -2**63 and 2**64-1 (and past that in
        // between, up to ±2**127), an error naming the integer past it.
        for (expr, want) in [
            (
                "'18446744073709551615' | int",
                serde_json::json!(18446744073709551615_u64),
            ),
            (
                "'9223372036854775808' | int",
                serde_json::json!(9223372036854775808_u64),
            ),
            ("'-9223372036854775808' | int", serde_json::json!(i64::MIN)),
            (
                "('99999999999999999999' | int) // 1000",
                serde_json::json!(99999999999999999_u64),
            ),
            (
                "('99999999999999999999' | int) - 99999999999999999000",
                serde_json::json!(999),
            ),
            (
                "(1e30 | int) // 100000000000000000000",
                serde_json::json!(10000000000_u64),
            ),
            ("'1e19' | int", serde_json::json!(10000000000000000000_u64)),
            (
                "'%d|%d|%x' % ('18446744073709551615' | int, 1e19, '18446744073709551615' | int)",
                serde_json::json!("18446744073709551615|10000000000000000000|ffffffffffffffff"),
            ),
        ] {
            assert_eq!(
                Expression::compile(expr).unwrap().eval(&ctx).unwrap(),
                want,
                "{expr}"
            );
        }
        for (expr, names) in [
            ("'99999999999999999999' | int", "99999999999999999999"),
            ("1e30 | int", "1000000000000000019884624838656"),
            (
                "['a', {'k': '-9223372036854775809' | int}]",
                "-9223372036854775809",
            ),
            ("'1e300' | int", "'1e300' | int"),
            ("'123456789012345678901234567890123456789012' | int", "int"),
        ] {
            let err = Expression::compile(expr).unwrap().eval(&ctx).unwrap_err().0;
            assert!(err.contains(names) && err.contains("2**"), "{expr}: {err}");
        }
        // Strict undefined still holds.
        assert!(
            Expression::compile("state.missing | int")
                .unwrap()
                .eval(&ctx)
                .is_err()
        );
    }
}
