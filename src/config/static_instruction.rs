//! `static_instruction` (ADK 1.18+): content sent as written, never templated, at the
//! start of the system instruction. Written as genai's `ContentUnion`: a string, a
//! content (`parts: [{text: ...}]`, optional `role`), or a list of strings and text
//! parts. ADK joins the text parts with a blank line (`append_instructions`); adk-flow
//! takes text only (ADK turns other parts into references plus user contents, which a
//! YAML file has no way to write usefully).

use super::Diagnostic;
use super::source::Source;
use serde_json::Value;

/// The text of a `static_instruction` at `pointer`, or why it cannot be read.
pub(super) fn text(src: &Source, pointer: &str, value: &Value) -> Result<String, Diagnostic> {
    let parts: Vec<(String, &Value)> = match value {
        Value::String(s) => return Ok(s.clone()),
        Value::Object(map) => {
            if let Some(bad) = map.keys().find(|k| *k != "parts" && *k != "role") {
                return Err(src.key_error(
                    &format!("{pointer}/{bad}"),
                    format!("`{bad}` is not a key of a content (it takes `parts` and `role`)"),
                ));
            }
            match map.get("parts") {
                Some(Value::Array(list)) => list
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (format!("{pointer}/parts/{i}"), p))
                    .collect(),
                _ => {
                    return Err(src.error(
                        pointer,
                        "a content needs `parts`, a list of text parts (`- text: ...`)",
                    ));
                }
            }
        }
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("{pointer}/{i}"), p))
            .collect(),
        _ => {
            return Err(src.error(
                pointer,
                "`static_instruction` takes text, a content (`parts: [{text: ...}]`) or a list of text parts",
            ));
        }
    };
    let mut texts = Vec::with_capacity(parts.len());
    for (at, part) in parts {
        let text = match part {
            Value::String(s) => Some(s.as_str()),
            Value::Object(p) if p.len() == 1 => p.get("text").and_then(Value::as_str),
            _ => None,
        };
        match text {
            Some(t) if !t.is_empty() => texts.push(t),
            Some(_) => {}
            None => {
                return Err(src.error(
                    &at,
                    "adk-flow takes text parts only in `static_instruction` (`- text: ...`)",
                ));
            }
        }
    }
    Ok(texts.join("\n\n"))
}
