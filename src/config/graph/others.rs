//! The nodes of a workflow that are no agents: `adk_flow.Router` (its keys and Jinja
//! expressions, compiled at load) and `JoinNode`.

use super::nodes::NodeDef;
use super::{GraphNodeKind, RouterSpec};
use crate::config::Location;
use crate::config::load::Loader;
use crate::config::source::Source;
use crate::config::yaml::escape_segment;
use serde_json::{Map, Value};

impl Loader<'_> {
    /// Whether a Router's or JoinNode's `description`, if any, is a string (ADK's
    /// pydantic models refuse anything else); reports it when not.
    fn text_description(&mut self, src: &Source, m: &Map<String, Value>, at: &str) -> bool {
        match m.get("description") {
            None | Some(Value::String(_)) => true,
            Some(v) => {
                self.diagnostics.push(src.error(
                    &format!("{at}/description"),
                    format!("`description` must be a string, found `{v}`; quote it"),
                ));
                false
            }
        }
    }

    pub(super) fn join(
        &mut self,
        src: &Source,
        m: &Map<String, Value>,
        at: &str,
    ) -> Option<NodeDef> {
        for key in m.keys() {
            if !["name", "agent_class", "description"].contains(&key.as_str()) {
                self.diagnostics.push(src.key_error(
                    &format!("{at}/{}", escape_segment(key)),
                    format!(
                        "unknown key `{key}` in a JoinNode; it has only `name` (and `description`)"
                    ),
                ));
                return None;
            }
        }
        if !self.text_description(src, m, at) {
            return None;
        }
        let name = self.node_name(src, m, at)?;
        Some(NodeDef::Other {
            location: Location {
                file: src.path.clone(),
                pos: src.index.value(&format!("{at}/name")),
            },
            name,
            kind: GraphNodeKind::Join,
        })
    }

    pub(super) fn router(
        &mut self,
        src: &Source,
        m: &Map<String, Value>,
        at: &str,
    ) -> Option<NodeDef> {
        let mut ok = true;
        for key in m.keys() {
            if ![
                "name",
                "agent_class",
                "description",
                "route",
                "output",
                "state",
            ]
            .contains(&key.as_str())
            {
                self.diagnostics.push(src.key_error(
                    &format!("{at}/{}", escape_segment(key)),
                    format!("unknown key `{key}` in an adk_flow.Router; it has `name`, `route`, `output`, `state` and `description`"),
                ));
                ok = false;
            }
        }
        ok &= self.text_description(src, m, at);
        let name = self.node_name(src, m, at);
        let route = match m.get("route") {
            Some(v) => self.expression(src, v, &format!("{at}/route"), "route"),
            None => {
                self.diagnostics.push(src.error(
                    at,
                    "missing required key `route`: a Jinja expression giving the label, such as `route: \"'done' if 'OK' in input else 'again'\"`",
                ));
                None
            }
        };
        // `output: null` and `state: null` are absent for ADK's Router (optional fields).
        let output = m
            .get("output")
            .filter(|v| !v.is_null())
            .map(|v| self.expression(src, v, &format!("{at}/output"), "output"));
        let mut state = Vec::new();
        match m.get("state") {
            None | Some(Value::Null) => {}
            Some(Value::Object(entries)) => {
                for (k, v) in entries {
                    let key_at = format!("{at}/state/{}", escape_segment(k));
                    // PyYAML reads `yes:` and `2:` as a boolean and an integer, which
                    // ADK's Router refuses as state keys (strings only).
                    let pos = src.index.key(&key_at);
                    if src.index.typed_key(&key_at).is_some()
                        || src.index.is_yaml11_boolean(pos)
                        || src.index.yaml11_integer(pos).is_some()
                    {
                        self.diagnostics.push(src.key_error(
                            &key_at,
                            format!("state key `{k}` is not a string for PyYAML (ADK); quote it: `\"{k}\": ...`"),
                        ));
                        ok = false;
                        continue;
                    }
                    match self.expression(src, v, &key_at, &format!("state.{k}")) {
                        Some(e) => state.push((k.clone(), e)),
                        None => ok = false,
                    }
                }
            }
            Some(_) => {
                self.diagnostics.push(src.error(
                    &format!("{at}/state"),
                    "`state` maps state keys to Jinja expressions, such as `state: {attempts: \"(state.attempts | default(0)) + 1\"}`",
                ));
                ok = false;
            }
        }
        let name = name?;
        let route = route?;
        let output = match output {
            Some(Some(o)) => Some(o),
            Some(None) => return None,
            None => None,
        };
        ok.then(|| NodeDef::Other {
            location: Location {
                file: src.path.clone(),
                pos: src.index.value(&format!("{at}/name")),
            },
            name,
            kind: GraphNodeKind::Router(RouterSpec {
                route,
                output,
                state,
            }),
        })
    }

    /// A Router expression: a YAML string that compiles.
    fn expression(&mut self, src: &Source, v: &Value, at: &str, field: &str) -> Option<String> {
        let Value::String(expr) = v else {
            let shown = v.to_string();
            // The same value as a Jinja expression, quoted as YAML reads it back.
            let instead = match v {
                Value::Null => "\"none\"".to_owned(),
                _ if shown.contains('"') => format!("'{shown}'"),
                _ => format!("\"{shown}\""),
            };
            self.diagnostics.push(src.error(
                at,
                format!("`{field}` must be a Jinja expression written as a string, found `{shown}`; write `{instead}`"),
            ));
            return None;
        };
        // `1:30`, `1_000`, `2024-01-01`: PyYAML gives ADK a number or a date, no string.
        if let Some(trap) = src.index.yaml11_integer(src.index.value(at)) {
            self.diagnostics
                .push(src.error(at, super::labels::yaml11_trap_message(trap)));
            return None;
        }
        if let Some(problem) = super::rules::expression_problem(expr) {
            self.diagnostics
                .push(src.error(at, format!("`{field}`: {problem}")));
            return None;
        }
        Some(expr.clone())
    }
}
