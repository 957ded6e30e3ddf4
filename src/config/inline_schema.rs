//! `output_schema` and `input_schema` written inline as JSON Schema, checked against what
//! every provider can take: the subset Gemini's `responseSchema` and function parameters
//! accept (genai's `Schema`: OpenAPI 3.0 with `anyOf`), which OpenAI's `response_format`
//! and tool parameters and llama.cpp's grammars also take. An `input_schema` (an
//! AgentTool's parameters) must describe an object.
//!
//! Accepted keywords: `type` (one name, or a name and `"null"`), `format`, `title`,
//! `description`, `nullable`, `enum` (strings), `const` (a string), `properties`,
//! `required`, `items` (one schema), `anyOf`, `minItems`, `maxItems`, `minLength`,
//! `maxLength`, `minProperties`, `maxProperties`, `minimum`, `maximum`, `pattern`,
//! `default`, `example`, `propertyOrdering`, `$defs` with local `$ref`s
//! (`#/$defs/NAME`, not recursive: genai inlines them), `additionalProperties: false`,
//! and `$schema` (ignored). Anything else is refused where it is written, since Gemini
//! would reject the request.
//!
//! ADK's own form, `output_schema: {name: my_pkg.MyModel}` (or `input_schema`), names a
//! Python class; it is reported as Python code, as callbacks are.

use super::Diagnostic;
use super::agent_config::CodeRef;
use super::load::Loader;
use super::source::Source;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The JSON Schema keywords an inline schema may use.
const KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "const",
    "properties",
    "required",
    "items",
    "anyOf",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "minimum",
    "maximum",
    "pattern",
    "default",
    "example",
    "propertyOrdering",
    "$defs",
    "$ref",
    "additionalProperties",
    "$schema",
];

const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "array", "object", "null",
];

/// Which of an agent's schemas is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SchemaKey {
    /// `input_schema`: an AgentTool's parameters.
    Input,
    /// `output_schema`: the reply.
    Output,
}

impl SchemaKey {
    fn as_str(self) -> &'static str {
        match self {
            SchemaKey::Input => "input_schema",
            SchemaKey::Output => "output_schema",
        }
    }

    /// What Gemini calls the place the schema goes.
    fn gemini_place(self) -> &'static str {
        match self {
            SchemaKey::Input => "function parameters",
            SchemaKey::Output => "responseSchema",
        }
    }
}

/// Where the check of one schema writes its findings.
struct Check<'a> {
    key: SchemaKey,
    src: &'a Source,
    defs: Option<&'a Map<String, Value>>,
    out: Vec<Diagnostic>,
}

/// Checks an inline schema at `pointer`; the diagnostics are empty when every provider
/// can take it.
fn check(key: SchemaKey, src: &Source, pointer: &str, schema: &Value) -> Vec<Diagnostic> {
    let name = key.as_str();
    let mut check = Check {
        key,
        src,
        defs: schema.get("$defs").and_then(Value::as_object),
        out: Vec::new(),
    };
    if !schema.is_object() {
        check.error(
            pointer,
            format!("`{name}` must be a JSON Schema written as a mapping (`type: object`, `properties`...)"),
        );
        return check.out;
    }
    let is_object = schema
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("object"));
    if key == SchemaKey::Input && !is_object {
        check.error(
            pointer,
            "`input_schema` must describe an object (`type: object` with `properties`): its properties are the tool's arguments",
        );
        return check.out;
    }
    check.node(pointer, schema, true);
    if check.out.is_empty() {
        check.cycles(pointer);
    }
    if check.out.is_empty() && !jsonschema::meta::is_valid(schema) {
        check.error(pointer, format!("`{name}` is not a valid JSON Schema"));
    }
    check.out
}

impl Loader<'_> {
    /// An agent's `output_schema` or `input_schema`, when it is an inline schema every
    /// provider can take; problems (and ADK's Python class form) become diagnostics.
    pub(super) fn inline_schema(
        &mut self,
        src: &Source,
        pointer: &str,
        key: SchemaKey,
        schema: Option<Value>,
    ) -> Option<Value> {
        let schema = schema?;
        if let Some(name) = python_class(&schema) {
            let r = CodeRef {
                name: name.to_owned(),
                args: None,
            };
            self.python_refs(src, pointer, key.as_str(), std::slice::from_ref(&r));
            return None;
        }
        let found = check(key, src, &format!("{pointer}/{}", key.as_str()), &schema);
        let ok = found.is_empty();
        self.diagnostics.extend(found);
        ok.then_some(schema)
    }
}

/// Whether a schema value is ADK's reference to a Python class (`{name: ...}`).
fn python_class(schema: &Value) -> Option<&str> {
    let map = schema.as_object()?;
    let name = map.get("name")?.as_str()?;
    map.keys()
        .all(|k| k == "name" || k == "args")
        .then_some(name)
}

impl Check<'_> {
    fn error(&mut self, pointer: &str, message: impl Into<String>) {
        self.out.push(self.src.error(pointer, message));
    }

    fn key_error(&mut self, pointer: &str, message: impl Into<String>) {
        self.out.push(self.src.key_error(pointer, message));
    }

    fn node(&mut self, at: &str, schema: &Value, root: bool) {
        let Some(map) = schema.as_object() else {
            self.error(at, "a schema must be a mapping");
            return;
        };
        for (key, value) in map {
            let here = format!("{at}/{}", escape(key));
            if !KEYWORDS.contains(&key.as_str()) {
                let hint = match key.as_str() {
                    "oneOf" | "allOf" => " (use `anyOf`)",
                    "prefixItems" => " (`items` takes one schema)",
                    _ => "",
                };
                let (place, name) = (self.key.gemini_place(), self.key.as_str());
                self.key_error(
                    &here,
                    format!(
                        "`{key}` cannot be sent to Gemini's {place}{hint}; {name} takes {}",
                        KEYWORDS[..KEYWORDS.len() - 1].join(", ")
                    ),
                );
                continue;
            }
            self.keyword(&here, key, value, map, root);
        }
    }

    fn keyword(
        &mut self,
        here: &str,
        key: &str,
        value: &Value,
        map: &Map<String, Value>,
        root: bool,
    ) {
        match key {
            "type" => self.type_value(here, value),
            "enum" => {
                let ok = value
                    .as_array()
                    .is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_string));
                if !ok {
                    let place = self.key.gemini_place();
                    self.error(
                        here,
                        format!("`enum` must list strings (Gemini takes only string enums in {place})"),
                    );
                }
            }
            "const" if !value.is_string() => {
                self.error(here, "`const` must be a string (Gemini sends it as a one-value enum)")
            }
            "properties" => match value.as_object() {
                Some(props) => {
                    for (name, sub) in props {
                        self.node(&format!("{here}/{}", escape(name)), sub, false);
                    }
                }
                None => self.error(here, "`properties` must map property names to schemas"),
            },
            "required" | "propertyOrdering" => self.names(here, key, value, map),
            "items" => self.node(here, value, false),
            "anyOf" => match value.as_array() {
                Some(list) if !list.is_empty() => {
                    for (i, sub) in list.iter().enumerate() {
                        self.node(&format!("{here}/{i}"), sub, false);
                    }
                }
                _ => self.error(here, "`anyOf` must be a list of schemas"),
            },
            "$defs" if !root => {
                let name = self.key.as_str();
                self.key_error(here, format!("`$defs` belongs at the top of {name}"))
            }
            "$defs" => match value.as_object() {
                Some(defs) => {
                    for (name, sub) in defs {
                        self.node(&format!("{here}/{}", escape(name)), sub, false);
                    }
                }
                None => self.error(here, "`$defs` must map names to schemas"),
            },
            "$ref" => {
                let name = value.as_str().and_then(|r| r.strip_prefix("#/$defs/"));
                let known = name.is_some_and(|n| self.defs.is_some_and(|d| d.contains_key(n)));
                if !known {
                    let name = self.key.as_str();
                    self.error(
                        here,
                        format!("`$ref` must name a schema of this {name}'s `$defs` (`#/$defs/NAME`)"),
                    );
                }
            }
            "additionalProperties" if value != &Value::Bool(false) => self.error(
                here,
                "Gemini's API takes `additionalProperties` only on Vertex AI; only `false` is accepted here",
            ),
            "minItems" | "maxItems" | "minLength" | "maxLength" | "minProperties"
            | "maxProperties"
                if !value.is_u64() =>
            {
                self.error(here, format!("`{key}` must be a whole number"))
            }
            "minimum" | "maximum" if !value.is_number() => {
                self.error(here, format!("`{key}` must be a number"))
            }
            "format" | "title" | "description" | "pattern" | "$schema" if !value.is_string() => {
                self.error(here, format!("`{key}` must be a string"))
            }
            "nullable" if !value.is_boolean() => self.error(here, "`nullable` must be true or false"),
            _ => {}
        }
    }

    fn type_value(&mut self, here: &str, value: &Value) {
        let known = |v: &Value| {
            v.as_str()
                .is_some_and(|t| TYPES.contains(&t.to_ascii_lowercase().as_str()))
        };
        let ok = match value {
            Value::String(_) => known(value),
            Value::Array(list) => {
                list.len() == 2
                    && list.iter().all(known)
                    && list
                        .iter()
                        .filter(|t| t.as_str().is_some_and(|t| t.eq_ignore_ascii_case("null")))
                        .count()
                        == 1
            }
            _ => false,
        };
        if !ok {
            self.error(
                here,
                format!(
                    "`type` must be one of {} (or a list of one of them and \"null\")",
                    TYPES.join(", ")
                ),
            );
        }
    }

    fn names(&mut self, here: &str, key: &str, value: &Value, map: &Map<String, Value>) {
        let Some(list) = value.as_array().filter(|l| l.iter().all(Value::is_string)) else {
            self.error(here, format!("`{key}` must list property names"));
            return;
        };
        let props = map.get("properties").and_then(Value::as_object);
        for (i, name) in list.iter().enumerate() {
            let name = name.as_str().unwrap_or_default();
            if !props.is_some_and(|p| p.contains_key(name)) {
                self.error(
                    &format!("{here}/{i}"),
                    format!("`{key}` names `{name}`, which is not in `properties`"),
                );
            }
        }
    }

    /// Refuses `$defs` that refer to themselves, directly or not: genai inlines every
    /// `$ref`, which a recursive schema cannot survive.
    fn cycles(&mut self, pointer: &str) {
        let Some(defs) = self.defs else { return };
        for name in defs.keys() {
            let mut seen = BTreeSet::new();
            let mut stack = vec![name.as_str()];
            while let Some(current) = stack.pop() {
                let Some(def) = defs.get(current) else {
                    continue;
                };
                let mut refs = Vec::new();
                collect_refs(def, &mut refs);
                for r in refs {
                    if r == name {
                        let place = self.key.gemini_place();
                        self.error(
                            &format!("{pointer}/$defs/{}", escape(name)),
                            format!(
                                "`{name}` refers to itself; Gemini's {place} cannot be recursive"
                            ),
                        );
                        return;
                    }
                    if seen.insert(r) {
                        stack.push(r);
                    }
                }
            }
        }
    }
}

/// The `$defs` names a schema refers to.
fn collect_refs<'a>(schema: &'a Value, out: &mut Vec<&'a str>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "$ref" {
                    if let Some(name) = value.as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
                        out.push(name);
                    }
                } else {
                    collect_refs(value, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// A key as one JSON-pointer segment.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
