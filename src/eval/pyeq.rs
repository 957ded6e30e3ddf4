//! Python's `==` on JSON values, the equality ADK's trajectory metric applies to tool
//! arguments: `3 == 3.0` and `True == 1`, but `3 != "3"`; integers and floats compare
//! exactly (`9007199254740993 != 9007199254740992.0`); dicts ignore key order.

use serde_json::{Number, Value};

/// A JSON number (or bool) as Python sees it: an exact integer or a float.
enum Num {
    Int(i128),
    Float(f64),
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Bool(b) => Some(Num::Int(i128::from(*b))),
        Value::Number(n) => Some(number(n)),
        _ => None,
    }
}

fn number(n: &Number) -> Num {
    if let Some(i) = n.as_i64() {
        Num::Int(i128::from(i))
    } else if let Some(u) = n.as_u64() {
        Num::Int(i128::from(u))
    } else {
        Num::Float(n.as_f64().unwrap_or(f64::NAN))
    }
}

fn int_eq_float(i: i128, f: f64) -> bool {
    // Exact, as CPython compares int with float: equal only when the float is integral
    // and has exactly this value.
    f.is_finite() && f.fract() == 0.0 && f.abs() < 1.8e38 && (f as i128) == i && (i as f64) == f
}

/// `a == b` in Python, for values parsed from JSON.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    if let (Some(x), Some(y)) = (num(a), num(b)) {
        return match (x, y) {
            (Num::Int(x), Num::Int(y)) => x == y,
            (Num::Float(x), Num::Float(y)) => x == y,
            (Num::Int(i), Num::Float(f)) | (Num::Float(f), Num::Int(i)) => int_eq_float(i, f),
        };
    }
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::py_eq;
    use serde_json::{Value, json};

    #[test]
    fn matches_python_on_the_reference_table() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/eval/rouge_table.json"
        );
        let table: Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("table")).expect("json");
        let rows = table["python_equality"].as_array().expect("rows");
        assert!(rows.len() > 1000);
        for row in rows {
            let want = row[2].as_bool().expect("bool");
            assert_eq!(py_eq(&row[0], &row[1]), want, "{} == {}", row[0], row[1]);
        }
    }

    #[test]
    fn the_cases_users_hit() {
        assert!(py_eq(&json!({"n": 3}), &json!({"n": 3.0})));
        assert!(!py_eq(&json!({"n": 3}), &json!({"n": "3"})));
        assert!(py_eq(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
    }
}
