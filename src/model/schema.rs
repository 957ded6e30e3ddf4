//! An agent's `output_schema` (a JSON Schema written inline, checked by the loader) in the
//! forms each party needs:
//!
//! - Gemini: `generationConfig.responseSchema`, as genai's `t_schema` turns a dict into a
//!   `Schema`: `$defs` inlined, `{"type": "null"}` in an `anyOf` (or a `[T, "null"]`
//!   type) turned into `nullable: true`, a string `const` into a one-value `enum`, types
//!   upper-cased, `propertyOrdering` added to objects of more than one property (in the
//!   order written), `$schema` and `additionalProperties: false` left out.
//! - OpenAI-compatible servers: `response_format: {type: json_schema, json_schema: {name,
//!   strict: true, schema}}`, as ADK's LiteLLM adapter sends it: `name` is the schema's
//!   `title` (`response` without one; characters OpenAI refuses in names become `_`), and
//!   the schema is made strict (every object `additionalProperties: false` with all its
//!   properties required, `$ref` without siblings), `nullable` written as a type list.
//! - Checking replies: the schema as written, with `nullable` as a type list, compiled
//!   once (draft 2020-12).

use serde_json::{Map, Value, json};

/// A reply's JSON Schema, ready for the providers and for checking replies.
#[derive(Debug)]
pub struct OutputSchema {
    /// The schema as written in the workflow.
    pub written: Value,
    json_schema: Value,
    gemini: Value,
    openai: Value,
    validator: Option<jsonschema::Validator>,
}

/// Why a reply does not fit an agent's `output_schema`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    /// The reply is not JSON.
    #[error("the reply is not JSON ({reason}): {excerpt}")]
    NotJson {
        /// The parser's complaint.
        reason: String,
        /// The start of the reply.
        excerpt: String,
    },
    /// The reply is JSON that breaks the schema.
    #[error("the reply does not match output_schema: {problems}: {excerpt}")]
    Mismatch {
        /// What breaks it, with JSON pointers.
        problems: String,
        /// The start of the reply.
        excerpt: String,
    },
}

impl OutputError {
    /// The errorCode of the event that reports it.
    pub fn code(&self) -> &'static str {
        match self {
            OutputError::NotJson { .. } => "OUTPUT_NOT_JSON",
            OutputError::Mismatch { .. } => "OUTPUT_SCHEMA_MISMATCH",
        }
    }
}

impl OutputSchema {
    /// Prepares a checked schema (see the module docs).
    pub fn new(written: Value) -> OutputSchema {
        let defs = written.get("$defs").and_then(Value::as_object).cloned();
        let gemini = to_gemini(&written, defs.as_ref());
        let json_schema = nullable_as_types(&written);
        let validator = jsonschema::draft202012::new(&json_schema).ok();
        let mut strict = json_schema.clone();
        enforce_strict(&mut strict);
        let name = written
            .get("title")
            .and_then(Value::as_str)
            .map(openai_name)
            .unwrap_or_else(|| "response".to_owned());
        let openai = json!({
            "type": "json_schema",
            "json_schema": {"name": name, "strict": true, "schema": strict},
        });
        OutputSchema {
            written,
            json_schema,
            gemini,
            openai,
            validator,
        }
    }

    /// The schema as JSON Schema (`nullable` as a type list), as replies are checked
    /// against it; `set_model_response` declares it.
    pub fn json_schema(&self) -> &Value {
        &self.json_schema
    }

    /// Gemini's `responseSchema`.
    pub fn gemini(&self) -> &Value {
        &self.gemini
    }

    /// OpenAI's `response_format`.
    pub fn openai_response_format(&self) -> &Value {
        &self.openai
    }

    /// Whether the schema describes an object (the `set_model_response` tool then takes
    /// its properties as arguments; otherwise one `response` argument).
    pub fn is_object(&self) -> bool {
        self.written
            .get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("object"))
    }

    /// Parses and checks a reply's text.
    ///
    /// # Errors
    /// The text is not JSON, or breaks the schema.
    pub fn parse(&self, text: &str) -> Result<Value, OutputError> {
        let value: Value = serde_json::from_str(text).map_err(|e| OutputError::NotJson {
            reason: e.to_string(),
            excerpt: excerpt(text),
        })?;
        self.check(&value)
            .map_err(|problems| OutputError::Mismatch {
                problems,
                excerpt: excerpt(text),
            })?;
        Ok(value)
    }

    /// Checks a value, returning what breaks the schema (at most three problems, each
    /// with its JSON pointer).
    ///
    /// # Errors
    /// What breaks the schema, as one line.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let Some(validator) = &self.validator else {
            return Ok(());
        };
        let problems: Vec<String> = validator
            .iter_errors(value)
            .take(3)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("at {at}: {e}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// The first 200 characters of a reply, for an error message.
fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(200).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    format!("`{out}`")
}

/// An OpenAI schema name: `[A-Za-z0-9_-]`, at most 64 characters.
fn openai_name(title: &str) -> String {
    let name: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        "response".to_owned()
    } else {
        name
    }
}

/// The type names of a `type` value, without `"null"`, and whether `"null"` was there.
fn split_null(ty: &Value) -> (Option<String>, bool) {
    match ty {
        Value::String(t) if t.eq_ignore_ascii_case("null") => (None, true),
        Value::String(t) => (Some(t.clone()), false),
        Value::Array(list) => {
            let null = list
                .iter()
                .any(|t| t.as_str().is_some_and(|t| t.eq_ignore_ascii_case("null")));
            let other = list
                .iter()
                .filter_map(Value::as_str)
                .find(|t| !t.eq_ignore_ascii_case("null"))
                .map(str::to_owned);
            (other, null)
        }
        _ => (None, false),
    }
}

/// genai's `process_schema` for a dict (see the module docs).
fn to_gemini(schema: &Value, defs: Option<&Map<String, Value>>) -> Value {
    let Some(map) = schema.as_object() else {
        return schema.clone();
    };
    if let Some(name) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        let mut resolved = defs
            .and_then(|d| d.get(name))
            .map(|d| to_gemini(d, defs))
            .unwrap_or_else(|| json!({}));
        if let (Some(out), true) = (resolved.as_object_mut(), map.get("nullable").is_some()) {
            out.insert("nullable".into(), map["nullable"].clone());
        }
        return resolved;
    }
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "$schema" | "$defs" | "additionalProperties" => {}
            "type" => {
                let (ty, null) = split_null(value);
                if let Some(t) = ty {
                    out.insert("type".into(), json!(t.to_ascii_uppercase()));
                }
                if null {
                    out.insert("nullable".into(), json!(true));
                }
            }
            "const" => {
                out.insert("enum".into(), json!([value]));
            }
            "properties" => {
                let props: Map<String, Value> = value
                    .as_object()
                    .map(|p| {
                        p.iter()
                            .map(|(k, v)| (k.clone(), to_gemini(v, defs)))
                            .collect()
                    })
                    .unwrap_or_default();
                if props.len() > 1 && !map.contains_key("propertyOrdering") {
                    out.insert(
                        "propertyOrdering".into(),
                        json!(props.keys().collect::<Vec<_>>()),
                    );
                }
                out.insert("properties".into(), Value::Object(props));
            }
            "items" => {
                out.insert("items".into(), to_gemini(value, defs));
            }
            "anyOf" => {
                let list = value.as_array().cloned().unwrap_or_default();
                let is_null = |v: &Value| v.get("type").is_some_and(|t| t == "null");
                let rest: Vec<Value> = list
                    .iter()
                    .filter(|v| !is_null(v))
                    .map(|v| to_gemini(v, defs))
                    .collect();
                if rest.len() < list.len() {
                    out.insert("nullable".into(), json!(true));
                }
                match <[Value; 1]>::try_from(rest) {
                    Ok([only]) => {
                        if let Value::Object(only) = only {
                            out.extend(only);
                        }
                    }
                    Err(rest) => {
                        out.insert("anyOf".into(), Value::Array(rest));
                    }
                }
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// The schema with `nullable: true` written as a `[T, "null"]` type, which JSON Schema
/// validators and OpenAI understand; `propertyOrdering` and `example` left out.
fn nullable_as_types(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = Map::new();
            let nullable = map.get("nullable") == Some(&Value::Bool(true));
            for (key, value) in map {
                match key.as_str() {
                    "nullable" | "propertyOrdering" | "example" | "$schema" => {}
                    "type" if nullable => {
                        let (ty, _) = split_null(value);
                        out.insert(
                            "type".into(),
                            match ty {
                                Some(t) => json!([t.to_ascii_lowercase(), "null"]),
                                None => json!("null"),
                            },
                        );
                    }
                    "type" => {
                        out.insert(
                            "type".into(),
                            match value {
                                Value::String(t) => json!(t.to_ascii_lowercase()),
                                Value::Array(l) => Value::Array(
                                    l.iter()
                                        .map(|t| {
                                            json!(t.as_str().unwrap_or("").to_ascii_lowercase())
                                        })
                                        .collect(),
                                ),
                                other => other.clone(),
                            },
                        );
                    }
                    // Property names and default/enum values are data, not schemas.
                    "properties" | "$defs" => {
                        let inner = value
                            .as_object()
                            .map(|m| {
                                m.iter()
                                    .map(|(k, v)| (k.clone(), nullable_as_types(v)))
                                    .collect()
                            })
                            .unwrap_or_default();
                        out.insert(key.clone(), Value::Object(inner));
                    }
                    "items" => {
                        out.insert(key.clone(), nullable_as_types(value));
                    }
                    "anyOf" => {
                        let list = value
                            .as_array()
                            .map(|l| l.iter().map(nullable_as_types).collect())
                            .unwrap_or_default();
                        out.insert(key.clone(), Value::Array(list));
                    }
                    _ => {
                        out.insert(key.clone(), value.clone());
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// ADK's `_enforce_strict_openai_schema`.
fn enforce_strict(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if map.contains_key("$ref") {
        map.retain(|k, _| k == "$ref");
        return;
    }
    let is_object = map.get("type").is_some_and(|t| {
        t == "object"
            || t.as_array()
                .is_some_and(|l| l.iter().any(|x| x == "object"))
    });
    if is_object && let Some(Value::Object(props)) = map.get("properties") {
        let mut names: Vec<String> = props.keys().cloned().collect();
        names.sort();
        map.insert("additionalProperties".into(), json!(false));
        map.insert("required".into(), json!(names));
    }
    for key in ["$defs", "properties"] {
        if let Some(Value::Object(inner)) = map.get_mut(key) {
            inner.values_mut().for_each(enforce_strict);
        }
    }
    if let Some(Value::Array(list)) = map.get_mut("anyOf") {
        list.iter_mut().for_each(enforce_strict);
    }
    if let Some(items) = map.get_mut("items") {
        enforce_strict(items);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_form_follows_genai() {
        let s = OutputSchema::new(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "title": "Route",
            "additionalProperties": false,
            "properties": {
                "category": {"type": "string", "enum": ["orders", "tech"]},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "tags": {"type": ["array", "null"], "items": {"$ref": "#/$defs/Tag"}},
                "kind": {"type": "string", "const": "route"}
            },
            "required": ["category"],
            "$defs": {"Tag": {"type": "string", "maxLength": 10}}
        }));
        assert_eq!(
            s.gemini(),
            &json!({
                "type": "OBJECT",
                "title": "Route",
                "propertyOrdering": ["category", "note", "tags", "kind"],
                "properties": {
                    "category": {"type": "STRING", "enum": ["orders", "tech"]},
                    "note": {"nullable": true, "type": "STRING"},
                    "tags": {"type": "ARRAY", "nullable": true,
                             "items": {"type": "STRING", "maxLength": 10}},
                    "kind": {"type": "STRING", "enum": ["route"]}
                },
                "required": ["category"]
            })
        );
    }

    #[test]
    fn openai_form_is_strict_as_adk_sends_it() {
        let s = OutputSchema::new(json!({
            "type": "object",
            "title": "Ticket route",
            "properties": {
                "b": {"type": "string", "nullable": true},
                "a": {"type": "object", "properties": {"x": {"type": "integer"}}}
            }
        }));
        assert_eq!(
            s.openai_response_format(),
            &json!({"type": "json_schema", "json_schema": {
                "name": "Ticket_route", "strict": true,
                "schema": {
                    "type": "object", "title": "Ticket route",
                    "properties": {
                        "b": {"type": ["string", "null"]},
                        "a": {"type": "object", "properties": {"x": {"type": "integer"}},
                              "additionalProperties": false, "required": ["x"]}
                    },
                    "additionalProperties": false, "required": ["a", "b"]
                }
            }})
        );
    }

    #[test]
    fn replies_are_parsed_and_checked() {
        let s = OutputSchema::new(json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "nullable": true}},
            "required": ["n"]
        }));
        assert_eq!(s.parse(r#"{"n": 3}"#).unwrap(), json!({"n": 3}));
        assert_eq!(s.parse(r#"{"n": null}"#).unwrap(), json!({"n": null}));
        let e = s.parse("Sure! n is 3").unwrap_err();
        assert_eq!(e.code(), "OUTPUT_NOT_JSON");
        assert!(e.to_string().contains("`Sure! n is 3`"), "{e}");
        let e = s.parse(r#"{"n": "three"}"#).unwrap_err();
        assert_eq!(e.code(), "OUTPUT_SCHEMA_MISMATCH");
        assert!(e.to_string().contains("at /n"), "{e}");
        assert!(s.parse("{}").is_err());
    }
}
