//! Route labels of ADK 2 workflow graphs, shared by the loader and the runtime: what a
//! label is, when an edge fires, and Python's equality between labels and routes.

use serde_json::Value;

/// An edge label: what a route is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Label {
    /// A string (quoted YAML 1.1 booleans included).
    Str(String),
    /// An integer.
    Int(i64),
    /// `true` or `false`.
    Bool(bool),
}

impl Label {
    /// The label as Python holds it: `true` is `1`, `false` is `0`.
    fn as_int(&self) -> Option<i64> {
        match self {
            Label::Int(i) => Some(*i),
            Label::Bool(b) => Some(i64::from(*b)),
            Label::Str(_) => None,
        }
    }

    /// Python equality of two labels: `"1" != 1`, `true == 1`.
    pub fn same(&self, other: &Label) -> bool {
        match (self, other) {
            (Label::Str(a), Label::Str(b)) => a == b,
            (Label::Str(_), _) | (_, Label::Str(_)) => false,
            _ => self.as_int() == other.as_int(),
        }
    }

    /// A route value (a JSON scalar) as a label, if it can be one.
    pub fn from_json(value: &Value) -> Option<Label> {
        match value {
            Value::String(s) => Some(Label::Str(s.clone())),
            Value::Bool(b) => Some(Label::Bool(*b)),
            Value::Number(n) => n.as_i64().map(Label::Int),
            _ => None,
        }
    }

    /// The label as written in messages (`'retry'`, `1`, `True`), as Python prints it.
    pub fn python(&self) -> String {
        match self {
            Label::Str(s) => crate::pyrepr::py_repr(&Value::String(s.clone())),
            Label::Int(i) => i.to_string(),
            Label::Bool(true) => "True".into(),
            Label::Bool(false) => "False".into(),
        }
    }
}

/// A label as written in YAML: `retry`, `1`, `true`.
impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::Str(s) => f.write_str(s),
            Label::Int(i) => write!(f, "{i}"),
            Label::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// When an edge fires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EdgeRoute {
    /// Always (no label).
    Always,
    /// When the node's route equals one of these labels.
    Labels(Vec<Label>),
    /// When no other label of the node matched (`__DEFAULT__`).
    Default,
}

/// Python equality between a label and one route value (`true == 1`, `"1" != 1`).
pub fn label_matches(label: &Label, route: &Value) -> bool {
    Label::from_json(route).is_some_and(|r| label.same(&r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_compare_as_python() {
        assert!(Label::Bool(true).same(&Label::Int(1)));
        assert!(Label::Bool(false).same(&Label::Int(0)));
        assert!(!Label::Str("1".into()).same(&Label::Int(1)));
        assert!(Label::Str("a".into()).same(&Label::Str("a".into())));
        assert_eq!(Label::Str("it's".into()).python(), "\"it's\"");
    }
}
