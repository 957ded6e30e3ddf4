//! Event snapshots that do not change from run to run: ids, timestamps and usage dropped,
//! invocation and call ids numbered by first appearance, empty action maps dropped (the
//! rules of the ADK reference normalizer).

use crate::event::Event;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

struct Numbering {
    prefix: &'static str,
    seen: HashMap<String, String>,
}

impl Numbering {
    fn get(&mut self, id: &str) -> String {
        let n = self.seen.len() + 1;
        self.seen
            .entry(id.to_owned())
            .or_insert_with(|| format!("{}:{n}", self.prefix))
            .clone()
    }
}

fn renumber_parts(content: &mut Value, calls: &mut Numbering) {
    let Some(parts) = content.get_mut("parts").and_then(Value::as_array_mut) else {
        return;
    };
    for p in parts {
        for key in ["functionCall", "functionResponse"] {
            if let Some(id) = p.get_mut(key).and_then(|c| c.get_mut("id"))
                && let Some(s) = id.as_str().map(str::to_owned)
            {
                *id = Value::String(calls.get(&s));
            }
        }
    }
}

/// The events as JSON lines in canonical form (sorted keys).
pub fn normalize_events(events: &[Arc<Event>]) -> String {
    let mut inv = Numbering {
        prefix: "inv",
        seen: HashMap::new(),
    };
    let mut calls = Numbering {
        prefix: "call",
        seen: HashMap::new(),
    };
    let mut out = String::new();
    for e in events {
        let Ok(Value::Object(mut m)) = serde_json::to_value(e.as_ref()) else {
            continue;
        };
        for k in ["id", "timestamp", "usageMetadata", "finishReason"] {
            m.remove(k);
        }
        if let Some(Value::String(s)) = m.get("invocationId").cloned() {
            m.insert("invocationId".into(), Value::String(inv.get(&s)));
        }
        if let Some(c) = m.get_mut("content") {
            renumber_parts(c, &mut calls);
        }
        if let Some(Value::Object(actions)) = m.get_mut("actions") {
            actions.retain(|_, v| !matches!(v, Value::Null) && v != &Value::Object(Map::new()));
        }
        if m.get("actions") == Some(&Value::Object(Map::new())) {
            m.remove("actions");
        }
        match m.get_mut("longRunningToolIds") {
            Some(Value::Array(ids)) if ids.is_empty() => {
                m.remove("longRunningToolIds");
            }
            Some(Value::Array(ids)) => {
                for id in ids.iter_mut() {
                    if let Some(s) = id.as_str().map(str::to_owned) {
                        *id = Value::String(calls.get(&s));
                    }
                }
            }
            _ => {}
        }
        let sorted: std::collections::BTreeMap<String, Value> = m.into_iter().collect();
        out.push_str(&serde_json::to_string(&sorted).unwrap_or_default());
        out.push('\n');
    }
    out
}
