//! Plain scalars that PyYAML (YAML 1.1, ADK's loader) reads as another number, or as a
//! string, than YAML 1.2 (adk-flow's) does: `017` (octal 15 against 17), `1_000`, `0b11`,
//! `1:30` (sexagesimal 90), `-0x1F` (integers in YAML 1.1 only), `0o17`, `08` (strings
//! in YAML 1.1 only). A routing label written so would match other routes in ADK. And
//! dates (`2024-01-01`, `2024-01-01 10:00:00`), which PyYAML reads as timestamps where
//! YAML 1.2 reads strings: ADK refuses them wherever it wants a string or a label.

use super::yaml::{Pos, YAML11_BOOLEAN_WORDS, Yaml11Integer, written_at};
use std::collections::HashMap;

/// Where the unquoted scalars of `text` that are [`YAML11_BOOLEAN_WORDS`] start, where
/// those that are YAML 1.1 integer or date traps start, and the aliases (`*name`, where
/// written).
pub(super) type Yaml11 = (
    HashMap<(usize, usize), String>,
    HashMap<(usize, usize), Yaml11Integer>,
    Vec<(Pos, String)>,
);

/// One pass of the parser over `text` for what the YAML 1.2 tree no longer shows: the
/// YAML 1.1 boolean words, integer and date traps, and aliases of mappings and lists, each
/// with its position.
pub(super) fn scan(text: &str) -> Yaml11 {
    use saphyr_parser::{Event, Parser, ScalarStyle};
    let mut out = Yaml11::default();
    let lower = text.to_ascii_lowercase();
    if !["yes", "no", "on", "off"].iter().any(|w| lower.contains(w))
        && !may_hold_integer_trap(text.as_bytes())
        && !text.contains('*')
    {
        return out;
    }
    // Anchors on a mapping or a list (anchor ids start at 1): only their aliases can repeat
    // a node. A scalar's alias is the same value in both readings and is not reported.
    let mut collections = std::collections::HashSet::new();
    for item in Parser::new_from_str(text) {
        let Ok((event, span)) = item else { break };
        if let Event::MappingStart(id, _) | Event::SequenceStart(id, _) = event
            && id > 0
        {
            collections.insert(id);
        }
        if let Event::Alias(id) = event {
            if !collections.contains(&id) {
                continue;
            }
            let pos = Pos {
                line: span.start.line(),
                col: span.start.col() + 1,
            };
            let written = written_at(text, pos).unwrap_or_else(|| "*".into());
            out.2.push((pos, written));
            continue;
        }
        if let Event::Scalar(value, ScalarStyle::Plain, _, None) = event {
            let at = (span.start.line(), span.start.col() + 1);
            if YAML11_BOOLEAN_WORDS.contains(&value.as_ref()) {
                out.0.insert(at, value.to_string());
            } else if let Some((old, new)) = integer_trap(&value)
                .or_else(|| timestamp_trap(&value))
                .or_else(|| float_trap(&value))
            {
                out.1.insert(at, (value.to_string(), old, new));
            }
        }
    }
    out
}

/// Whether `text` may hold a YAML 1.1 integer or date trap: `_` or `:` between digits, a
/// number starting with `0` and more (`017`, `0b1`, `0o7`, `0x1`), or four digits and a
/// dash (`2024-01-01`).
fn may_hold_integer_trap(text: &[u8]) -> bool {
    text.windows(3).enumerate().any(|(i, w)| {
        let between = w[0].is_ascii_digit() && matches!(w[1], b'_' | b':') && w[2].is_ascii_digit();
        let starts = i == 0 || !(text[i - 1].is_ascii_alphanumeric() || text[i - 1] == b'.');
        // A year and a dash: a date (`2024-01-01`).
        let year = starts
            && text.len() >= i + 5
            && text[i..i + 4].iter().all(u8::is_ascii_digit)
            && text[i + 4] == b'-';
        // An exponent (`1e3`, `1.0e3`) or a signed leading dot (`-.5`): a float trap.
        let exponent = w[0].is_ascii_digit() && matches!(w[1], b'e' | b'E');
        let signed_dot = matches!(w[0], b'-' | b'+') && w[1] == b'.' && w[2].is_ascii_digit();
        between
            || year
            || exponent
            || signed_dot
            || (starts
                && w[0] == b'0'
                && (w[1].is_ascii_digit() || matches!(w[1], b'b' | b'o' | b'x' | b'_')))
    })
}

/// How PyYAML and YAML 1.2 read a plain scalar, when they differ on an integer:
/// `(pyyaml, yaml12)`, each "the integer N" or "the string".
pub(crate) fn integer_trap(plain: &str) -> Option<(String, String)> {
    if !plain.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
        return None;
    }
    let (old, new) = (pyyaml_int(plain), yaml12_int(plain));
    if old == new {
        return None;
    }
    let say = |v: Option<i128>| match v {
        Some(n) => format!("the integer {n}"),
        None => "a string".to_owned(),
    };
    Some((say(old), say(new)))
}

/// PyYAML's implicit timestamp: a date, or a date and a time.
static TIMESTAMP: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"^(?:(?<date>[0-9]{4}-[0-9]{2}-[0-9]{2})|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$",
    )
    .expect("a valid regex")
});

/// How PyYAML and YAML 1.2 read a plain scalar that PyYAML reads as a timestamp:
/// `("a date" or "a date and time", "a string")`.
pub(crate) fn timestamp_trap(plain: &str) -> Option<(String, String)> {
    let found = TIMESTAMP.captures(plain)?;
    let old = if found.name("date").is_some() {
        "a date"
    } else {
        "a date and time"
    };
    Some((old.to_owned(), "a string".to_owned()))
}

/// PyYAML's implicit float (YAML 1.1): a dot required, a signed exponent, `_`,
/// sexagesimal, `.inf`, `.nan`.
static PYYAML_FLOAT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
    )
    .expect("a valid regex")
});

/// How PyYAML and YAML 1.2 read a plain scalar when one reads a float and the other a
/// string: `1e3`, `1.0e3`, `-.5` (floats in YAML 1.2 only), `1_000.5`, `1:30.5` (in
/// YAML 1.1 only).
pub(crate) fn float_trap(plain: &str) -> Option<(String, String)> {
    let yaml12 = match saphyr::Scalar::parse_from_cow(plain.into()) {
        saphyr::Scalar::FloatingPoint(f) => Some(f.into_inner()),
        _ => None,
    };
    let pyyaml = PYYAML_FLOAT.is_match(plain);
    let say = |f: f64| format!("the float {f:?}");
    match (pyyaml, yaml12) {
        (false, Some(f)) if pyyaml_int(plain).is_none() => Some(("a string".to_owned(), say(f))),
        (true, None) => {
            let v = plain.replace('_', "");
            let f = match v.split_once(':') {
                Some(_) => v
                    .split(':')
                    .try_fold(0.0, |n, p| {
                        p.trim_start_matches(['-', '+'])
                            .parse::<f64>()
                            .map(|x| n * 60.0 + x)
                    })
                    .ok()
                    .map(|f| if v.starts_with('-') { -f } else { f }),
                None => v.parse::<f64>().ok(),
            };
            Some((
                f.map_or_else(|| "a float".to_owned(), say),
                "a string".to_owned(),
            ))
        }
        _ => None,
    }
}

fn sign(plain: &str) -> (i128, &str) {
    match plain.as_bytes().first() {
        Some(b'-') => (-1, &plain[1..]),
        Some(b'+') => (1, &plain[1..]),
        _ => (1, plain),
    }
}

fn radix(digits: &str, radix: u32) -> Option<i128> {
    if digits.is_empty() {
        return None;
    }
    i128::from_str_radix(digits, radix).ok()
}

fn all(s: &str, ok: impl Fn(char) -> bool) -> bool {
    !s.is_empty() && s.chars().all(ok)
}

/// PyYAML's int resolver and constructor.
pub(super) fn pyyaml_int(plain: &str) -> Option<i128> {
    let (sign, body) = sign(plain);
    let digits = |s: &str| s.replace('_', "");
    let value = if let Some(b) = body.strip_prefix("0b") {
        all(b, |c| matches!(c, '0' | '1' | '_')).then(|| radix(&digits(b), 2))?
    } else if let Some(x) = body.strip_prefix("0x") {
        all(x, |c| c.is_ascii_hexdigit() || c == '_').then(|| radix(&digits(x), 16))?
    } else if body.len() > 1 && body.starts_with('0') {
        all(body, |c| matches!(c, '0'..='7' | '_')).then(|| radix(&digits(body), 8))?
    } else if body.contains(':') {
        let mut parts = body.split(':');
        let head = parts.next()?;
        if !(head.starts_with(|c: char| matches!(c, '1'..='9'))
            && all(head, |c| c.is_ascii_digit() || c == '_'))
        {
            return None;
        }
        let mut n = radix(&digits(head), 10)?;
        for p in parts {
            if !(1..=2).contains(&p.len()) || !all(p, |c| c.is_ascii_digit()) {
                return None;
            }
            if p.len() == 2 && p.as_bytes()[0] > b'5' {
                return None;
            }
            n = n * 60 + radix(p, 10)?;
        }
        Some(n)
    } else if body == "0"
        || (body.starts_with(|c: char| matches!(c, '1'..='9'))
            && all(body, |c| c.is_ascii_digit() || c == '_'))
    {
        radix(&digits(body), 10)
    } else {
        None
    }?;
    Some(sign * value)
}

/// The YAML 1.2 core schema's integers: `[-+]?[0-9]+`, `0o[0-7]+`, `0x[0-9a-fA-F]+`.
fn yaml12_int(plain: &str) -> Option<i128> {
    if let Some(o) = plain.strip_prefix("0o") {
        return radix(o, 8);
    }
    if let Some(x) = plain.strip_prefix("0x") {
        return radix(x, 16).filter(|_| all(x, |c| c.is_ascii_hexdigit()));
    }
    let (sign, body) = sign(plain);
    all(body, |c| c.is_ascii_digit())
        .then(|| radix(body, 10))
        .flatten()
        .map(|n| sign * n)
}

#[cfg(test)]
mod tests {
    use super::{float_trap, integer_trap, timestamp_trap};

    #[test]
    fn pyyaml_timestamps() {
        // As PyYAML 6 reads them (checked with yaml.safe_load).
        for (plain, old) in [
            ("2024-01-01", "a date"),
            ("2024-13-45", "a date"),
            ("2024-01-01 10:00:00", "a date and time"),
            ("2024-1-1T1:00:00Z", "a date and time"),
            ("2024-01-01t10:00:00.5 +01:00", "a date and time"),
        ] {
            let (said, new) = timestamp_trap(plain).unwrap_or_else(|| panic!("{plain}"));
            assert_eq!((said.as_str(), new.as_str()), (old, "a string"), "{plain}");
        }
        for string in [
            "2024-1-1",
            "20240-01-01",
            "2024-01-01x",
            "2024-01-01 10:00",
            "1:30",
        ] {
            assert_eq!(timestamp_trap(string), None, "{string}");
        }
    }

    #[test]
    fn pyyaml_and_yaml12_integers() {
        // As PyYAML 6 reads them (checked with yaml.safe_load).
        for (plain, old) in [
            ("017", Some(15)),
            ("+017", Some(15)),
            ("0_7", Some(7)),
            ("1_000", Some(1000)),
            ("0b11", Some(3)),
            ("1:30", Some(90)),
            ("-1:30", Some(-90)),
            ("-0x1F", Some(-31)),
            ("0o17", None),
            ("08", None),
        ] {
            let (said, _) = integer_trap(plain).unwrap_or_else(|| panic!("{plain}"));
            let want = old.map_or("a string".to_owned(), |n| format!("the integer {n}"));
            assert_eq!(said, want, "{plain}");
        }
        for same in [
            "0", "00", "07", "+5", "-3", "0x1F", "12", "1_0:3_0", "a_b", "1e3", "1.5",
        ] {
            assert_eq!(integer_trap(same), None, "{same}");
        }
    }

    #[test]
    fn pyyaml_and_yaml12_floats() {
        // As PyYAML 6 reads them (checked with yaml.safe_load): 1e3, 1.0e3 and -.5 are
        // strings, 1_000.5 and 1:30.5 floats.
        for (plain, old, new) in [
            ("1e3", "a string", "the float 1000.0"),
            ("1E-3", "a string", "the float 0.001"),
            ("1.0e3", "a string", "the float 1000.0"),
            ("-.5", "a string", "the float -0.5"),
            ("1_000.5", "the float 1000.5", "a string"),
            ("1:30.5", "the float 90.5", "a string"),
        ] {
            let got = float_trap(plain).unwrap_or_else(|| panic!("{plain}"));
            assert_eq!((got.0.as_str(), got.1.as_str()), (old, new), "{plain}");
        }
        for same in [
            "1.5", ".5", "1.", "1.0e+3", "-1.5", ".inf", "12", "1_000", "inf", "x1e3",
        ] {
            assert_eq!(float_trap(same), None, "{same}");
        }
    }
}
