//! Checking a workflow file against the schema and explaining each violation for a
//! person: unknown keys with a "did you mean", wrong types and enum values in words,
//! "exactly one of" for `oneOf`s, agent classes ADK has and adk-flow does not.

use super::workflow_schema;
use crate::config::yaml::escape_segment;
use serde_json::Value;
use std::sync::OnceLock;

/// One schema violation: where (JSON pointer), whether the key rather than the value is
/// at fault, and a message for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer of the offending value (or of the unknown key's value).
    pub pointer: String,
    /// Point at the key rather than the value.
    pub at_key: bool,
    /// What is wrong.
    pub message: String,
}

fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    let mut cur = node;
    for _ in 0..16 {
        match cur.get("$ref").and_then(Value::as_str) {
            Some(r) => match r
                .strip_prefix("#/$defs/")
                .and_then(|d| root["$defs"].get(d))
            {
                Some(next) => cur = next,
                None => break,
            },
            None => break,
        }
    }
    cur
}

/// The schema node a keyword location points into (following `$ref` hops).
fn node_at<'a>(root: &'a Value, schema_path: &str) -> Option<&'a Value> {
    let mut cur = root;
    for seg in schema_path.split('/').filter(|s| !s.is_empty()) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if seg == "$ref" {
            cur = resolve(root, cur);
            continue;
        }
        cur = match cur {
            Value::Object(m) => m.get(&seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Edit distance counting a swap of neighbours as one edit (optimal string alignment).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The closest candidate to `word`, if close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (distance(word, c), c))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn describe_expected(schema_types: &Value) -> String {
    let words = |t: &str| match t {
        "object" => "a mapping",
        "array" => "a list",
        "string" => "a string",
        "integer" => "an integer",
        "number" => "a number",
        "boolean" => "a boolean (true or false)",
        "null" => "null",
        _ => "a value",
    };
    match schema_types {
        Value::String(t) => words(t).to_owned(),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .map(words)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "a different value".into(),
    }
}

/// `` `key` `` for a mapping entry, `` `list[i]` `` for a list item, `the file` for the root.
fn describe_location(pointer: &str) -> String {
    if pointer.is_empty() {
        return "the file".into();
    }
    let last = key_name(pointer);
    if last.chars().all(|c| c.is_ascii_digit()) {
        let parent = &pointer[..pointer.len() - last.len() - 1];
        return format!("`{}[{last}]`", key_name(parent));
    }
    format!("`{last}`")
}

fn key_name(pointer: &str) -> String {
    pointer
        .rsplit('/')
        .next()
        .unwrap_or("")
        .replace("~1", "/")
        .replace("~0", "~")
}

fn enum_violation(pointer: &str, here: &str, value: &Value, options: &Value) -> Violation {
    let opts: Vec<String> = options
        .as_array()
        .map(|a| {
            a.iter()
                .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let found = value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned);
    let hint = did_you_mean(&found, opts.iter().map(String::as_str))
        .map(|s| format!("; did you mean `{s}`?"))
        .unwrap_or_default();
    Violation {
        pointer: pointer.to_owned(),
        at_key: false,
        message: format!(
            "{here} must be one of {}; found `{found}`{hint}",
            opts.join(", ")
        ),
    }
}

/// Checks a workflow file's JSON form against the schema; every violation is returned.
///
/// A valid file (the common case) is recognized by the validator generated at build time
/// ([`super::Validator`]), which compiles nothing. A file with violations is checked again
/// by the runtime validator, compiled on first use, whose errors (their order included)
/// the messages have always been made from.
pub fn check(instance: &Value) -> Vec<Violation> {
    if super::Validator::is_valid(instance) {
        return Vec::new();
    }
    static VALIDATOR: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    let root = workflow_schema();
    let Some(validator) = VALIDATOR
        .get_or_init(|| jsonschema::draft202012::new(root).ok())
        .as_ref()
    else {
        return vec![Violation {
            pointer: String::new(),
            at_key: false,
            message: "internal error: the workflow schema does not compile".into(),
        }];
    };
    let mut out = Vec::new();
    for err in validator.iter_errors(instance) {
        let pointer = err.instance_path().as_str().to_owned();
        let schema_path = err.schema_path().as_str().to_owned();
        let value = instance.pointer(&pointer).unwrap_or(&Value::Null);
        let here = describe_location(&pointer);
        use jsonschema::error::ValidationErrorKind as K;
        let violation = match err.kind() {
            K::AdditionalProperties { unexpected } => {
                let parent_path = schema_path.trim_end_matches("/additionalProperties");
                let allowed: Vec<String> = node_at(root, parent_path)
                    .and_then(|n| n.get("properties"))
                    .and_then(Value::as_object)
                    .map(|p| p.keys().cloned().collect())
                    .unwrap_or_default();
                for key in unexpected {
                    let hint = did_you_mean(key, allowed.iter().map(String::as_str))
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default();
                    out.push(Violation {
                        pointer: format!("{pointer}/{}", escape_segment(key)),
                        at_key: true,
                        message: format!("unknown key `{key}`{hint}"),
                    });
                }
                continue;
            }
            K::Required { property } => Violation {
                pointer: pointer.clone(),
                at_key: false,
                message: format!(
                    "missing required key `{}`",
                    property.as_str().unwrap_or_default()
                ),
            },
            K::Type { .. } => {
                let expected = node_at(root, &schema_path)
                    .map(describe_expected)
                    .unwrap_or_else(|| "a different type".into());
                Violation {
                    pointer: pointer.clone(),
                    at_key: false,
                    message: format!("{here} must be {expected}, found {}", type_name(value)),
                }
            }
            K::Enum { .. } if pointer.ends_with("/agent_class") || pointer == "/agent_class" => {
                Violation {
                    pointer: pointer.clone(),
                    at_key: false,
                    message: format!(
                        "unknown agent_class `{}`; expected LlmAgent, SequentialAgent, ParallelAgent, LoopAgent or Workflow (custom Python agent classes are not supported)",
                        value.as_str().unwrap_or_default()
                    ),
                }
            }
            K::Enum { options } => enum_violation(&pointer, &here, value, options),
            K::OneOfNotValid { .. } | K::OneOfMultipleValid { .. } => {
                let consts: Option<Value> = node_at(root, &schema_path)
                    .and_then(Value::as_array)
                    .and_then(|alts| {
                        alts.iter()
                            .map(|a| a.get("const").cloned())
                            .collect::<Option<Vec<_>>>()
                    })
                    .map(Value::Array);
                match consts {
                    Some(options) => enum_violation(&pointer, &here, value, &options),
                    None => {
                        let keys: Vec<String> = node_at(root, &schema_path)
                            .and_then(Value::as_array)
                            .map(|alts| {
                                alts.iter()
                                    .filter_map(|a| a["required"][0].as_str())
                                    .map(|k| format!("`{k}`"))
                                    .collect()
                            })
                            .unwrap_or_default();
                        Violation {
                            pointer: pointer.clone(),
                            at_key: false,
                            message: format!("{here} needs exactly one of {}", keys.join(", ")),
                        }
                    }
                }
            }
            K::Minimum { limit } => Violation {
                pointer: pointer.clone(),
                at_key: false,
                message: format!("{here} must be at least {limit}"),
            },
            _ => Violation {
                pointer: pointer.clone(),
                at_key: false,
                message: format!("{here}: {}", err.masked()),
            },
        };
        out.push(violation);
    }
    // An agent of an unknown class: its other keys cannot be judged, so only the class is
    // reported.
    let unknown_classes: Vec<String> = out
        .iter()
        .filter(|v| v.message.contains("agent_class") && v.pointer.ends_with("agent_class"))
        .map(|v| v.pointer.trim_end_matches("agent_class").to_owned())
        .collect();
    out.retain(|v| {
        v.pointer.ends_with("agent_class")
            || !unknown_classes.iter().any(|prefix| {
                v.pointer.starts_with(prefix.as_str()) && !v.pointer[prefix.len()..].contains('/')
                    || v.pointer == prefix.trim_end_matches('/')
            })
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(v: Value) -> Vec<String> {
        check(&v)
            .into_iter()
            .map(|v| format!("{} {}", v.pointer, v.message))
            .collect()
    }

    #[test]
    fn schema_is_valid_2020_12() {
        assert!(jsonschema::meta::is_valid(workflow_schema()));
    }

    #[test]
    fn accepts_adk_configs() {
        assert!(messages(json!({"name": "a", "instruction": "hi"})).is_empty());
        assert!(
            messages(
                json!({"agent_class": "LoopAgent", "name": "l", "max_iterations": 3,
            "sub_agents": [{"config_path": "w.yaml"}, {"name": "x", "instruction": "y"}]})
            )
            .is_empty()
        );
        assert!(
            messages(json!({"agent_class": "google.adk.agents.SequentialAgent", "name": "s"}))
                .is_empty()
        );
    }

    #[test]
    fn friendly_messages() {
        assert_eq!(
            messages(json!({"name": "a", "modle": "x"})),
            vec!["/modle unknown key `modle`; did you mean `model`?"]
        );
        assert_eq!(
            messages(json!({"agent_class": "SequentialAgent", "name": "s", "max_iterations": 2})),
            vec!["/max_iterations unknown key `max_iterations`"]
        );
        assert_eq!(
            messages(json!({"name": "a", "include_contents": "some"})),
            vec!["/include_contents `include_contents` must be one of default, none; found `some`"]
        );
        assert_eq!(
            messages(json!({"instruction": "x"})),
            vec![" missing required key `name`"]
        );
        assert_eq!(
            messages(json!({"agent_class": "LoopAgent", "name": "l", "max_iterations": "lots"})),
            vec!["/max_iterations `max_iterations` must be an integer, found a string"]
        );
        assert_eq!(
            messages(
                json!({"name": "a", "sub_agents": [{"name": "b", "tools": [{"nme": "exit_loop"}]}]})
            ),
            vec![
                "/sub_agents/0/tools/0/nme unknown key `nme`; did you mean `name`?",
                "/sub_agents/0/tools/0 missing required key `name`"
            ]
        );
    }
}
