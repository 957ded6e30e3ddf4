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
/// Compares in place: the route is not turned into a [`Label`] first.
pub fn label_matches(label: &Label, route: &Value) -> bool {
    match (label, route) {
        (Label::Str(a), Value::String(b)) => a == b,
        (Label::Str(_), _) | (_, Value::String(_)) => false,
        (_, Value::Bool(b)) => label.as_int() == Some(i64::from(*b)),
        (_, Value::Number(n)) => label.as_int().is_some_and(|i| number_equals(n, i)),
        _ => false,
    }
}

/// Python's `==` between a JSON number (a route `set_route` was called with) and an
/// integer label: `1.0 == 1`, `1.5 != 1`, exact for floats past 2**53.
fn number_equals(n: &serde_json::Number, i: i64) -> bool {
    if let Some(n) = n.as_i64() {
        return n == i;
    }
    // 2**63 as f64; an integral float below it converts to i64 exactly.
    const I64_END: f64 = 9_223_372_036_854_775_808.0;
    n.as_f64()
        .is_some_and(|f| f.fract() == 0.0 && (-I64_END..I64_END).contains(&f) && f as i64 == i)
}

/// The Python type a route cannot be matched as, if any: ADK 2.13 matches a route
/// against a labelled edge through a set, so a mapping, or a list of routes holding a
/// list or a mapping, raises `TypeError: unhashable type: 'dict'` (or `'list'`, the
/// first such element's type).
pub fn unhashable(route: &Value) -> Option<&'static str> {
    let kind = |v: &Value| match v {
        Value::Array(_) => Some("list"),
        Value::Object(_) => Some("dict"),
        _ => None,
    };
    match route {
        Value::Array(routes) => routes.iter().find_map(kind),
        other => kind(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unhashable_routes_name_their_python_type() {
        use serde_json::json;
        assert_eq!(unhashable(&json!({"k": 1})), Some("dict"));
        assert_eq!(unhashable(&json!(["a", [1], {"k": 1}])), Some("list"));
        assert_eq!(unhashable(&json!(["a", {"k": 1}])), Some("dict"));
        assert_eq!(unhashable(&json!(["a", 1, true, null])), None);
        assert_eq!(unhashable(&json!("a")), None);
    }

    #[test]
    fn labels_compare_as_python() {
        assert!(Label::Bool(true).same(&Label::Int(1)));
        assert!(Label::Bool(false).same(&Label::Int(0)));
        assert!(!Label::Str("1".into()).same(&Label::Int(1)));
        assert!(Label::Str("a".into()).same(&Label::Str("a".into())));
        assert_eq!(Label::Str("it's".into()).python(), "\"it's\"");
    }

    #[test]
    fn integral_float_routes_match_integer_labels_as_in_python() {
        use serde_json::json;
        assert!(label_matches(&Label::Int(1), &json!(1.0)));
        assert!(label_matches(&Label::Bool(true), &json!(1.0)));
        assert!(label_matches(&Label::Bool(false), &json!(-0.0)));
        assert!(!label_matches(&Label::Int(1), &json!(1.5)));
        assert!(!label_matches(&Label::Str("1".into()), &json!(1.0)));
        // 2**63 - 1 is no f64; the nearest float, 2**63, is past every i64.
        assert!(!label_matches(
            &Label::Int(i64::MAX),
            &json!(9.223372036854776e18)
        ));
        assert!(label_matches(
            &Label::Int(i64::MIN),
            &json!(-9.223372036854776e18)
        ));
    }

    #[test]
    fn labels_match_routes_as_their_labels_would() {
        let routes = [
            serde_json::json!("a"),
            serde_json::json!("1"),
            serde_json::json!(1),
            serde_json::json!(0),
            serde_json::json!(true),
            serde_json::json!(false),
            serde_json::json!(1.5),
            serde_json::json!(null),
            serde_json::json!([1]),
        ];
        let labels = [
            Label::Str("a".into()),
            Label::Str("1".into()),
            Label::Int(1),
            Label::Int(0),
            Label::Bool(true),
            Label::Bool(false),
        ];
        for l in &labels {
            for r in &routes {
                let expected = Label::from_json(r).is_some_and(|r| l.same(&r));
                assert_eq!(label_matches(l, r), expected, "{l:?} {r}");
            }
        }
    }
}
