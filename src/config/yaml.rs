//! YAML 1.2 → JSON value, with the source position of every node.
//!
//! saphyr parses the text into a tree whose every node carries a span; this module turns
//! it into a `serde_json::Value` and a [`SpanIndex`] from JSON pointer (`/sub_agents/0/name`)
//! to position, so that any later error about a value can name its file, line and column.

use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};
use serde_json::{Map, Number, Value};

pub use super::span::{Pos, SpanIndex, Yaml11Integer};

/// A YAML text that could not be read as a document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    /// Where the problem is.
    pub pos: Pos,
    /// What it is.
    pub message: String,
}

/// Escapes one JSON-pointer segment.
pub fn escape_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn pos_of(node: &MarkedYamlOwned) -> Pos {
    Pos {
        line: node.span.start.line(),
        col: node.span.start.col() + 1,
    }
}

struct Converter<'a> {
    /// The text being converted.
    text: &'a str,
    index: SpanIndex,
    errors: Vec<YamlError>,
    /// The end of the text: an empty node at the end of a text without a final line
    /// break (`? key` with no value) is placed by saphyr on the line after the last.
    end: Pos,
    /// The tagged nodes, read as PyYAML reads them (`yaml_tags.rs`).
    tags: super::yaml_tags::Tags,
    /// Whether ADK reads the text too: a tag PyYAML refuses makes no value (the file is
    /// refused); otherwise the node is read as YAML 1.2 reads it.
    pyyaml: bool,
}

const MAX_DEPTH: usize = 128;

impl Converter<'_> {
    /// Where `node` starts, on the text.
    fn pos_of(&self, node: &MarkedYamlOwned) -> Pos {
        let pos = pos_of(node);
        if (pos.line, pos.col) > (self.end.line, self.end.col) {
            self.end
        } else {
            pos
        }
    }

    /// What a core tag on `node` makes of it as PyYAML reads it (a tag on a list or a
    /// mapping that changes nothing is `None`, and the collection is read as usual).
    fn tagged(&self, node: &MarkedYamlOwned) -> Option<Result<Value, String>> {
        use super::yaml_tags::Kind;
        let kind = match &node.data {
            YamlDataOwned::Sequence(_) => Kind::Sequence,
            YamlDataOwned::Mapping(_) => Kind::Mapping,
            _ => Kind::Scalar,
        };
        super::yaml_tags::read(self.tags.at(self.pos_of(node), kind)?)
            .filter(|r| self.pyyaml || r.is_ok())
    }

    /// Keeps a float as written.
    fn note_float(&mut self, node: &MarkedYamlOwned) {
        let pos = self.pos_of(node);
        if let Some(written) = written_at(self.text, pos) {
            // A key's token runs on to its `:`.
            let written = written.strip_suffix(':').unwrap_or(&written).to_owned();
            self.index.floats.insert((pos.line, pos.col), written);
        }
    }

    fn convert(&mut self, node: &MarkedYamlOwned, pointer: &str, depth: usize) -> Value {
        self.index
            .values
            .insert(pointer.to_owned(), self.pos_of(node));
        if depth > MAX_DEPTH {
            self.errors.push(YamlError {
                pos: self.pos_of(node),
                message: format!("nesting deeper than {MAX_DEPTH} levels"),
            });
            return Value::Null;
        }
        // A tag that refuses the file was reported by `parse`.
        if let Some(reading) = self.tagged(node) {
            return reading.unwrap_or(Value::Null);
        }
        if let YamlDataOwned::Value(ScalarOwned::FloatingPoint(_)) = &node.data {
            self.note_float(node);
        }
        match &node.data {
            // JSON has no NaN or infinity; turning them into null would silently drop a
            // setting (`temperature: .nan`, `max_iterations: .inf`).
            YamlDataOwned::Value(ScalarOwned::FloatingPoint(f)) if !f.into_inner().is_finite() => {
                self.errors.push(YamlError {
                    pos: self.pos_of(node),
                    message: "not a finite number: `.nan`, `.inf` and numbers beyond the range of a 64-bit float are not allowed".into(),
                });
                Value::Null
            }
            YamlDataOwned::Value(scalar) => scalar_to_json(scalar),
            YamlDataOwned::Representation(s, _, _) => Value::String(s.clone()),
            YamlDataOwned::Sequence(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, c)| self.convert(c, &format!("{pointer}/{i}"), depth + 1))
                    .collect(),
            ),
            YamlDataOwned::Mapping(map) => {
                let mut out = Map::new();
                // `1:` and `"1":` are two keys (a routing map's labels); the typed one
                // gets a NUL after its text so both survive in JSON.
                let string_keys: std::collections::HashSet<&str> = map
                    .keys()
                    .filter_map(|k| match &k.data {
                        YamlDataOwned::Value(ScalarOwned::String(s)) => Some(s.as_str()),
                        _ => None,
                    })
                    .collect();
                for (k, v) in map {
                    let mut typed = None;
                    let key = match (self.tagged(k), &k.data) {
                        (Some(Err(_)), _) => continue,
                        (Some(Ok(Value::String(s))), _) => s,
                        (Some(Ok(v)), _) => {
                            let mut key = value_key(&v);
                            typed = Some(v);
                            if string_keys.contains(key.as_str()) {
                                key.push('\0');
                            }
                            key
                        }
                        (None, YamlDataOwned::Value(ScalarOwned::String(s))) => s.clone(),
                        (None, YamlDataOwned::Value(s)) => {
                            if let ScalarOwned::FloatingPoint(_) = s {
                                self.note_float(k);
                            }
                            typed = Some(scalar_to_json(s));
                            let mut key = scalar_key(s);
                            if string_keys.contains(key.as_str()) {
                                key.push('\0');
                            }
                            key
                        }
                        (None, _) => {
                            self.errors.push(YamlError {
                                pos: self.pos_of(k),
                                message: "a mapping key must be a plain scalar".into(),
                            });
                            continue;
                        }
                    };
                    if key == "<<" {
                        self.errors.push(YamlError {
                            pos: self.pos_of(k),
                            message: "merge keys (`<<`) are YAML 1.1 and are not supported; repeat the keys or use an anchor on the whole value".into(),
                        });
                        continue;
                    }
                    let child = format!("{pointer}/{}", escape_segment(&key));
                    self.index.keys.insert(child.clone(), self.pos_of(k));
                    if let Some(typed) = typed {
                        self.index.typed_keys.insert(child.clone(), typed);
                    }
                    let value = self.convert(v, &child, depth + 1);
                    out.insert(key, value);
                }
                Value::Object(out)
            }
            YamlDataOwned::Tagged(_, inner) => {
                let pos = self.pos_of(node);
                if let Some(tag) = written_at(self.text, pos).filter(|t| t != "!") {
                    self.errors.push(YamlError {
                        pos,
                        message: format!("tag `{tag}`: ADK's loader (PyYAML's safe_load) refuses tags of its own; remove it"),
                    });
                }
                let value = self.convert(inner, pointer, depth + 1);
                // A tag with no value (`name: !`) holds an empty node without a position.
                if inner.span.start.line() == 0 {
                    self.index
                        .values
                        .insert(pointer.to_owned(), self.pos_of(node));
                }
                value
            }
            YamlDataOwned::Alias(_) | YamlDataOwned::BadValue => {
                let pos = self.pos_of(node);
                let message = match written_at(self.text, pos) {
                    Some(tag) if tag.starts_with('!') => format!(
                        "tag `{tag}` is not supported: adk-flow reads plain YAML values (strings, numbers, booleans, lists, mappings); remove it"
                    ),
                    _ => "unresolvable value (unknown alias?)".into(),
                };
                self.errors.push(YamlError { pos, message });
                Value::Null
            }
        }
    }
}

fn scalar_to_json(s: &ScalarOwned) -> Value {
    match s {
        ScalarOwned::Null => Value::Null,
        ScalarOwned::Boolean(b) => Value::Bool(*b),
        ScalarOwned::Integer(i) => Value::from(*i),
        ScalarOwned::FloatingPoint(f) => Number::from_f64(f.into_inner())
            .map(Value::Number)
            .unwrap_or(Value::Null),
        ScalarOwned::String(s) => Value::String(s.clone()),
    }
}

fn scalar_key(s: &ScalarOwned) -> String {
    value_key(&scalar_to_json(s))
}

/// A scalar mapping key as a JSON key.
fn value_key(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// The position just past the end of `text`, counting lines as YAML and editors do: LF,
/// CR and CRLF each end one.
pub fn end_of(text: &str) -> Pos {
    let mut line = 1;
    let mut last_start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\r' && chars.peek().is_some_and(|(_, n)| *n == '\n') {
            continue; // the LF ends this line
        }
        if c == '\n' || c == '\r' {
            line += 1;
            last_start = i + 1;
        }
    }
    Pos {
        line,
        col: text[last_start..].chars().count() + 1,
    }
}

/// `pos`, or the end of `text` when `pos` is past it: saphyr puts an error at the end of a
/// text that has no final line break on the line after the last, which no editor shows.
/// The mapping key written at `pos` (1-based line and column), up to its `:`.
fn key_written_at(text: &str, pos: Pos) -> Option<String> {
    let line = text.lines().nth(pos.line.checked_sub(1)?)?;
    let rest: String = line.chars().skip(pos.col.checked_sub(1)?).collect();
    let key = match rest.chars().next()? {
        q @ ('"' | '\'') => rest[1..].split(q).next()?.to_owned(),
        _ => rest.split(':').next()?.trim().to_owned(),
    };
    (!key.is_empty()).then_some(key)
}

/// The token written at `pos` (1-based line and column), up to a space or a flow
/// indicator: a tag (`!!binary`), an alias (`*node`).
pub(super) fn written_at(text: &str, pos: Pos) -> Option<String> {
    let line = text.lines().nth(pos.line.checked_sub(1)?)?;
    let token: String = line
        .chars()
        .skip(pos.col.checked_sub(1)?)
        .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | ']' | '}'))
        .collect();
    (!token.is_empty()).then_some(token)
}

fn on_text(text: &str, pos: Pos) -> Pos {
    let end = end_of(text);
    if pos.line <= end.line { pos } else { end }
}

/// The words PyYAML (YAML 1.1) reads as booleans that YAML 1.2 reads as strings.
pub const YAML11_BOOLEAN_WORDS: &[&str] = &[
    "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
];

/// Parses one YAML document into JSON and a span index.
///
/// # Errors
/// Syntax errors, duplicate keys, merge keys, alias bombs, non-scalar keys and more than
/// one document, each with its position; what PyYAML's safe_load (ADK's loader) refuses
/// (tags it reads as bytes, dates, sets or pairs, or has no constructor for; a plain `=`).
/// An empty document is `null`, not an error.
pub fn parse(text: &str) -> Result<(Value, SpanIndex), Vec<YamlError>> {
    parse_as(text, true)
}

/// [`parse`] for a file ADK never reads (a script, a test file): what only PyYAML refuses
/// is not refused.
///
/// # Errors
/// As [`parse`], but for PyYAML's refusals.
pub fn parse_own(text: &str) -> Result<(Value, SpanIndex), Vec<YamlError>> {
    parse_as(text, false)
}

fn parse_as(text: &str, pyyaml: bool) -> Result<(Value, SpanIndex), Vec<YamlError>> {
    let docs = MarkedYamlOwned::load_from_str(text).map_err(|e| {
        let pos = on_text(
            text,
            Pos {
                line: e.marker().line(),
                col: e.marker().col() + 1,
            },
        );
        let message = match key_written_at(text, pos) {
            Some(key) if e.info() == "duplicated key in mapping" => format!(
                "duplicated key `{key}` in mapping (PyYAML would keep only the last one); remove one"
            ),
            _ => e.info().to_owned(),
        };
        vec![YamlError { pos, message }]
    })?;
    if docs.len() > 1 {
        return Err(vec![YamlError {
            pos: on_text(text, pos_of(&docs[1])),
            message: "a workflow file holds one YAML document; found more than one".into(),
        }]);
    }
    let Some(doc) = docs.first() else {
        return Ok((Value::Null, SpanIndex::default()));
    };
    let mut conv = Converter {
        text,
        index: SpanIndex::default(),
        errors: Vec::new(),
        end: end_of(text),
        tags: super::yaml_tags::scan(text),
        pyyaml,
    };
    let value = conv.convert(doc, "", 0);
    if !pyyaml {
        conv.tags.equals.clear();
    }
    for (pos, message) in conv.tags.refusals().into_iter().filter(|_| pyyaml) {
        conv.errors.push(YamlError { pos, message });
    }
    for pos in std::mem::take(&mut conv.tags.equals) {
        conv.errors.push(YamlError {
            pos,
            message: "`=` is unquoted: ADK's loader (PyYAML, YAML 1.1) reads a plain `=` as YAML 1.1's value key and refuses the file; quote it (`\"=\"`)".into(),
        });
    }
    conv.errors.sort_by_key(|e| (e.pos.line, e.pos.col));
    (
        conv.index.yaml11_booleans,
        conv.index.yaml11_integers,
        conv.index.aliases,
    ) = super::yaml11::scan(text);
    if conv.errors.is_empty() {
        Ok((value, conv.index))
    } else {
        Err(conv.errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_finite_numbers_are_errors() {
        for v in [".nan", ".NaN", ".inf", "-.Inf", "1e999", "-1e400"] {
            let errs = parse(&format!("a:\n  temperature: {v}\n"))
                .err()
                .unwrap_or_default();
            assert!(
                errs.len() == 1
                    && errs[0].message.contains("not a finite number")
                    && errs[0].pos.line == 2,
                "{v}: {errs:?}"
            );
        }
        assert!(parse("temperature: 1e308\n").is_ok());
    }

    #[test]
    fn converts_with_positions() {
        let (v, idx) = parse("name: a\nsub_agents:\n  - config_path: b.yaml\nflag: yes\n").unwrap();
        assert_eq!(
            v,
            json!({"name": "a", "sub_agents": [{"config_path": "b.yaml"}], "flag": "yes"})
        );
        assert_eq!(
            idx.value("/sub_agents/0/config_path"),
            Pos { line: 3, col: 18 }
        );
        assert_eq!(
            idx.key("/sub_agents/0/config_path"),
            Pos { line: 3, col: 5 }
        );
        assert_eq!(idx.value("/sub_agents/0/missing"), Pos { line: 3, col: 5 });
    }

    #[test]
    fn rejects_duplicate_keys_and_merge_keys() {
        let errs = parse("a: 1\na: 2\n").unwrap_err();
        assert!(errs[0].message.contains("duplicate"), "{errs:?}");
        let errs = parse("a: {x: 1, \"x\": 2}\nb:\n  y: 1\n  y: 2\n").unwrap_err();
        assert!(errs[0].message.contains("`x`"), "{errs:?}");
        let errs = parse("b:\n  y: 1\n  y: 2\n").unwrap_err();
        assert!(errs[0].message.contains("duplicated key `y`"), "{errs:?}");
        let errs = parse("base: &b {x: 1}\nother:\n  <<: *b\n").unwrap_err();
        assert_eq!(errs[0].pos, Pos { line: 3, col: 3 });
        assert!(errs[0].message.contains("merge keys"));
    }

    #[test]
    fn syntax_errors_have_positions() {
        let errs = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(errs[0].pos.line >= 1);
    }

    #[test]
    fn errors_at_the_end_stay_on_the_text() {
        // No final line break: the end is on the last line, whatever ends the lines.
        for text in ["a: [u\n\nosed", "a: [u\r\rosed", "a: [u\r\n\r\nosed"] {
            let errs = parse(text).unwrap_err();
            assert_eq!(errs[0].pos, Pos { line: 3, col: 5 }, "{text:?}");
        }
        let errs = parse("a: [u\n").unwrap_err();
        assert_eq!(errs[0].pos, Pos { line: 2, col: 1 });
    }

    #[test]
    fn a_tag_without_a_value_has_a_position() {
        let (v, idx) = parse("a: 1\nname: !\n").unwrap();
        assert_eq!(v, serde_json::json!({"a": 1, "name": null}));
        assert_eq!(idx.value("/name"), Pos { line: 2, col: 7 });
    }

    #[test]
    fn typed_keys_and_yaml11_booleans() {
        let (v, idx) =
            parse("m:\n  1: a\n  \"2\": b\n  true: c\n  yes: d\n  \"no\": e\nr: On\n").unwrap();
        assert_eq!(v["m"]["1"], "a");
        assert_eq!(idx.typed_key("/m/1"), Some(&serde_json::json!(1)));
        assert_eq!(idx.typed_key("/m/2"), None);
        assert_eq!(idx.typed_key("/m/true"), Some(&serde_json::json!(true)));
        assert!(idx.is_yaml11_boolean(idx.key("/m/yes")));
        assert!(!idx.is_yaml11_boolean(idx.key("/m/no")));
        assert!(idx.is_yaml11_boolean(idx.value("/r")));
        let (v, idx) = parse("m:\n  1: a\n  \"1\": b\n").unwrap();
        assert_eq!(v["m"]["1"], "b");
        assert_eq!(v["m"]["1\0"], "a");
        assert_eq!(idx.typed_key("/m/1\0"), Some(&serde_json::json!(1)));
    }

    #[test]
    fn pyyaml_refusals_only_for_files_adk_reads() {
        let errs = parse("a: =\nb: !!set {x}\n").unwrap_err();
        assert_eq!(errs.len(), 2, "{errs:?}");
        let (v, _) = parse_own("a: =\nb: !!set {x}\n").unwrap();
        assert_eq!(v, serde_json::json!({"a": "=", "b": {"x": null}}));
    }

    #[test]
    fn empty_text_is_null() {
        assert_eq!(parse("").unwrap().0, Value::Null);
        assert_eq!(parse("# only a comment\n").unwrap().0, Value::Null);
    }
}
