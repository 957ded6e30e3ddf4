//! YAML tags, and the plain `=`, as PyYAML's `safe_load` (ADK's loader) reads them.
//!
//! saphyr resolves the core tags its own way: a tag on a quoted scalar is ignored
//! (`!!float '0.5'` stays a string), a tag on a collection is ignored (`!!set`, `!!omap`),
//! and a tag it cannot apply is an unplaced bad value. PyYAML gives `!!float '0.5'` the
//! float 0.5, `!!int 0x1F` 31, `!!bool On` true, `!!null x` null; it reads `!!binary` as
//! bytes, `!!timestamp` as a date, `!!set` as a set, `!!omap` and `!!pairs` as lists of
//! pairs, and refuses the file for a tag it has no constructor for (`!!value`,
//! `!!python/...`, `!mytag`) and for a plain `=` that is no mapping key (YAML 1.1's value
//! key). [`scan`] finds every tagged node and every such `=` with its position; [`read`]
//! says what adk-flow makes of a tagged node: PyYAML's value, or why it is refused.

use super::yaml::Pos;
use serde_json::Value;
use std::collections::HashMap;

/// What kind of node a tag is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    Scalar,
    Sequence,
    Mapping,
}

/// A tagged node: its tag (the full name, `tag:yaml.org,2002:int` for `!!int`) and, for a
/// scalar, its text.
#[derive(Debug, Clone)]
pub(super) struct TaggedNode {
    tag: String,
    text: Option<String>,
}

/// The tagged nodes of a text, by where they start and their kind, and where its plain
/// `=` values are.
#[derive(Debug, Default)]
pub(super) struct Tags {
    nodes: HashMap<(usize, usize, Kind), TaggedNode>,
    /// Plain `=` scalars that are no mapping key.
    pub(super) equals: Vec<Pos>,
}

impl Tags {
    /// The tagged node of `kind` starting at `pos`, if any.
    pub(super) fn at(&self, pos: Pos, kind: Kind) -> Option<&TaggedNode> {
        self.nodes.get(&(pos.line, pos.col, kind))
    }

    /// Why the file is refused, at each tagged node that refuses it (found here rather
    /// than while converting: saphyr loses a mapping key it could not read as its tag
    /// says, `!!binary eA==: x`, and the mapping with it).
    pub(super) fn refusals(&self) -> Vec<(Pos, String)> {
        let mut out: Vec<(Pos, String)> = self
            .nodes
            .iter()
            .filter_map(|(&(line, col, _), node)| match read(node) {
                Some(Err(m)) => Some((Pos { line, col }, m)),
                _ => None,
            })
            .collect();
        out.sort_by_key(|(p, _)| (p.line, p.col));
        out
    }
}

const CORE: &str = "tag:yaml.org,2002:";

/// One pass of the parser over `text` for its tagged nodes and plain `=` values.
pub(super) fn scan(text: &str) -> Tags {
    use saphyr_parser::{Event, Parser, ScalarStyle};
    let mut out = Tags::default();
    if !text.contains('!') && !text.contains('=') {
        return out;
    }
    // For each open collection: whether it is a mapping, and how many nodes it holds so
    // far (a mapping's even ones are keys).
    let mut open: Vec<(bool, usize)> = Vec::new();
    for item in Parser::new_from_str(text) {
        let Ok((event, span)) = item else { break };
        let pos = Pos {
            line: span.start.line(),
            col: span.start.col() + 1,
        };
        let is_key = match &event {
            Event::Scalar(..)
            | Event::SequenceStart(..)
            | Event::MappingStart(..)
            | Event::Alias(_) => open.last_mut().is_some_and(|(mapping, n)| {
                *n += 1;
                *mapping && *n % 2 == 1
            }),
            _ => false,
        };
        let (tag, kind, text) = match event {
            Event::Scalar(v, style, _, tag) => {
                if tag.is_none() && style == ScalarStyle::Plain && v == "=" && !is_key {
                    out.equals.push(pos);
                }
                (tag, Kind::Scalar, Some(v.into_owned()))
            }
            Event::SequenceStart(_, tag) => {
                open.push((false, 0));
                (tag, Kind::Sequence, None)
            }
            Event::MappingStart(_, tag) => {
                open.push((true, 0));
                (tag, Kind::Mapping, None)
            }
            Event::SequenceEnd | Event::MappingEnd => {
                open.pop();
                continue;
            }
            _ => continue,
        };
        if let Some(tag) = tag {
            out.nodes.insert(
                (pos.line, pos.col, kind),
                TaggedNode {
                    tag: format!("{}{}", tag.handle, tag.suffix),
                    text,
                },
            );
        }
    }
    out
}

/// What adk-flow reads for a tagged node: `None` when the tag changes nothing (`!!seq` on a
/// list, `!!map` on a mapping, a tag of one's own, which is reported elsewhere), else
/// PyYAML's value or why the file is refused.
pub(super) fn read(node: &TaggedNode) -> Option<Result<Value, String>> {
    let name = node.tag.strip_prefix(CORE)?;
    let shown = format!("!!{name}");
    let Some(text) = &node.text else {
        return match name {
            "seq" | "map" => None,
            "set" => Some(Err(format!(
                "tag `{shown}`: ADK's loader (PyYAML's safe_load) reads it as a Python set, which no ADK or adk-flow setting takes; write a list"
            ))),
            "omap" | "pairs" => Some(Err(format!(
                "tag `{shown}`: ADK's loader (PyYAML's safe_load) reads it as a list of (key, value) pairs, not as a mapping, which adk-flow does not take; write a plain mapping (its keys keep their order)"
            ))),
            _ => Some(Err(format!(
                "tag `{shown}` on a list or mapping: ADK's loader (PyYAML's safe_load) refuses the file; remove the tag"
            ))),
        };
    };
    Some(match name {
        "str" => Ok(Value::String(text.clone())),
        "null" => Ok(Value::Null),
        "bool" => match text.to_ascii_lowercase().as_str() {
            "yes" | "true" | "on" => Ok(Value::Bool(true)),
            "no" | "false" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!(
                "`{shown} {text}`: ADK's loader (PyYAML's safe_load) fails on it (a boolean is yes/no, true/false or on/off); write true or false"
            )),
        },
        "int" => match super::yaml11::pyyaml_int(text) {
            Some(n) if i64::try_from(n).is_ok() => Ok(Value::from(n as i64)),
            Some(n) => Err(format!(
                "`{shown} {text}`: the integer {n} is beyond the 64-bit integers adk-flow reads"
            )),
            None => Err(format!(
                "`{shown} {text}`: ADK's loader (PyYAML's safe_load) fails on it: `{text}` is no integer; write the integer, or remove the tag"
            )),
        },
        "float" => match pyyaml_float(text) {
            Some(f) if f.is_finite() => {
                Ok(serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number))
            }
            Some(_) => Err(format!(
                "`{shown} {text}`: not a finite number: `.nan`, `.inf` and numbers beyond the range of a 64-bit float are not allowed"
            )),
            None => Err(format!(
                "`{shown} {text}`: ADK's loader (PyYAML's safe_load) fails on it: `{text}` is no number; write the number, or remove the tag"
            )),
        },
        "binary" => {
            use base64::Engine;
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(compact)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .filter(|s| !s.contains('\n') && s.len() <= 80);
            let instead = match decoded {
                Some(s) => format!("write the text itself: `{}`", Value::String(s)),
                None => "write the text itself".to_owned(),
            };
            Err(format!(
                "tag `{shown}`: ADK's loader (PyYAML's safe_load) reads it as bytes (which ADK decodes only where a string belongs), and adk-flow takes no bytes; {instead}"
            ))
        }
        "timestamp" => Err(format!(
            "tag `{shown}`: ADK's loader (PyYAML's safe_load) reads it as a date or date and time (and fails on other text), which ADK refuses where a string belongs; remove the tag and quote the text"
        )),
        "set" | "omap" | "pairs" | "seq" | "map" => Err(format!(
            "tag `{shown}` on a scalar: ADK's loader (PyYAML's safe_load) refuses the file; remove the tag"
        )),
        _ => Err(format!(
            "tag `{shown}`: ADK's loader (PyYAML's safe_load) has no constructor for it and refuses the file; remove it"
        )),
    })
}

/// PyYAML's `construct_yaml_float`: `_` removed, any case, `.inf`, `.nan`, sexagesimal
/// (`1:30.5`), else Python's `float()`.
fn pyyaml_float(text: &str) -> Option<f64> {
    let v = text.replace('_', "").to_ascii_lowercase();
    let v = v.trim();
    let (sign, body) = match v.as_bytes().first() {
        Some(b'-') => (-1.0, &v[1..]),
        Some(b'+') => (1.0, &v[1..]),
        _ => (1.0, v),
    };
    if body == ".inf" {
        return Some(sign * f64::INFINITY);
    }
    if body == ".nan" {
        return Some(f64::NAN);
    }
    if body.contains(':') {
        let mut n = 0.0;
        for part in body.split(':') {
            n = n * 60.0 + part.parse::<f64>().ok()?;
        }
        return Some(sign * n);
    }
    // Python's float() also takes `inf`, `nan`, `1e3`, `.5`, `1.`, as Rust's parse does.
    body.parse::<f64>().ok().map(|f| sign * f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_one(text: &str) -> Option<Result<Value, String>> {
        let tags = scan(text);
        let node = tags.nodes.values().next()?;
        read(node)
    }

    #[test]
    fn core_tags_read_as_pyyaml_reads_them() {
        // As PyYAML 6's safe_load reads them (checked with yaml.safe_load).
        for (text, want) in [
            ("a: !!float '0.5'", serde_json::json!(0.5)),
            ("a: !!float 1", serde_json::json!(1.0)),
            ("a: !!float 1e3", serde_json::json!(1000.0)),
            ("a: !!float 1:30.5", serde_json::json!(90.5)),
            ("a: !!int 0x1F", serde_json::json!(31)),
            ("a: !!int '1_0'", serde_json::json!(10)),
            ("a: !!int 017", serde_json::json!(15)),
            ("a: !!bool On", serde_json::json!(true)),
            ("a: !!bool 'no'", serde_json::json!(false)),
            ("a: !!null foo", Value::Null),
            ("a: !!str 5", serde_json::json!("5")),
            ("a: !<tag:yaml.org,2002:str> x", serde_json::json!("x")),
        ] {
            assert_eq!(read_one(text), Some(Ok(want)), "{text}");
        }
        for (text, says) in [
            ("a: !!binary aGVsbG8=", "write the text itself: `\"hello\"`"),
            ("a: !!timestamp 2024-01-01", "as a date"),
            ("a: !!set {x, y}", "Python set"),
            ("a: !!omap [{x: 1}]", "(key, value) pairs"),
            ("a: !!pairs [{x: 1}]", "(key, value) pairs"),
            ("a: !!int abc", "is no integer"),
            ("a: !!bool maybe", "true or false"),
            ("a: !!str [1]", "on a list or mapping"),
            ("a: !!value x", "no constructor"),
            ("a: !!python/str x", "no constructor"),
        ] {
            let got = read_one(text);
            assert!(
                matches!(&got, Some(Err(m)) if m.contains(says)),
                "{text}: {got:?}"
            );
        }
        assert_eq!(read_one("a: !!seq [1]"), None);
        assert_eq!(read_one("a: !mine x"), None);
    }

    #[test]
    fn a_plain_equals_is_found_unless_a_key() {
        let tags = scan("a: =\n=: 1\nb: [=, '=']\nc: {=: x}\n");
        let at: Vec<(usize, usize)> = tags.equals.iter().map(|p| (p.line, p.col)).collect();
        assert_eq!(at, vec![(1, 4), (3, 5)]);
    }
}
