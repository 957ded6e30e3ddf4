//! The common shapes of Router expressions evaluated without minijinja: literals,
//! `input`, `state.KEY`, `x['key']`, `default`/`d`, `upper`, `lower`, `length`, the
//! `defined`/`undefined`/`none` tests, `==` `!=` `<` `<=` `>` `>=`, `in`/`not in`, `+`,
//! `-`, `~`, `not`/`and`/`or`, `a if c else b`, lists and mappings with string keys.
//!
//! It only ever answers what minijinja (strict undefined) answers: an expression it does
//! not parse has no native form, and an evaluation that meets anything unusual (an
//! undefined value outside `default` and `defined`, a float in arithmetic, mixed types in
//! a comparison, an overflow, ...) gives up, and minijinja evaluates the expression, error
//! messages included. The tests of this module compare both on many expressions and
//! values.

mod parse;
#[cfg(test)]
mod tests;

pub(crate) use parse::parse;
use serde_json::{Map, Value};

/// A parsed expression.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    Const(Value),
    Input,
    State,
    Attr(Box<Expr>, String),
    Index(Box<Expr>, usize),
    Default(Box<Expr>, Box<Expr>),
    Upper(Box<Expr>),
    Lower(Box<Expr>),
    Length(Box<Expr>),
    Defined(Box<Expr>),
    IsNone(Box<Expr>),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Cmp(Cmp, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Box<Expr>),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    List(Vec<Expr>),
    Map(Vec<(String, Expr)>),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A value met while evaluating.
enum Val<'a> {
    Undefined,
    Ref(&'a Value),
    Owned(Value),
}

impl<'a> Val<'a> {
    fn get(&self) -> Option<&Value> {
        match self {
            Val::Undefined => None,
            Val::Ref(v) => Some(v),
            Val::Owned(v) => Some(v),
        }
    }

    fn into_value(self) -> Option<Value> {
        match self {
            Val::Undefined => None,
            Val::Ref(v) => Some(v.clone()),
            Val::Owned(v) => Some(v),
        }
    }
}

/// Python's (and minijinja's) truth of a value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// What the expression reads.
pub(crate) struct Scope<'a> {
    /// `input` (`null` when the node has none).
    pub(crate) input: &'a Value,
    /// The state's keys.
    pub(crate) state: &'a dyn super::jinja::Lookup,
}

impl Expr {
    /// The expression's value, or `None` when minijinja must evaluate it.
    pub(crate) fn eval<'a>(&'a self, scope: &Scope<'a>) -> Option<Value> {
        self.value(scope)?.into_value()
    }

    /// A defined value, or `None`.
    fn defined<'a>(&'a self, scope: &Scope<'a>) -> Option<Val<'a>> {
        self.value(scope).filter(|v| !matches!(v, Val::Undefined))
    }

    fn value<'a>(&'a self, scope: &Scope<'a>) -> Option<Val<'a>> {
        Some(match self {
            Expr::Const(v) => Val::Ref(v),
            Expr::Input => Val::Ref(scope.input),
            // The whole state is minijinja's.
            Expr::State => return None,
            Expr::Attr(base, key) => {
                if matches!(**base, Expr::State) {
                    return Some(scope.state.get(key).map_or(Val::Undefined, Val::Ref));
                }
                match base.defined(scope)? {
                    Val::Ref(Value::Object(m)) => m.get(key).map_or(Val::Undefined, Val::Ref),
                    Val::Owned(Value::Object(mut m)) => {
                        m.remove(key).map_or(Val::Undefined, Val::Owned)
                    }
                    _ => return None,
                }
            }
            Expr::Index(base, i) => match base.defined(scope)? {
                Val::Ref(Value::Array(a)) => Val::Ref(a.get(*i)?),
                Val::Owned(Value::Array(mut a)) if *i < a.len() => Val::Owned(a.swap_remove(*i)),
                _ => return None,
            },
            Expr::Default(v, fallback) => {
                // minijinja evaluates the filter's argument first.
                let fallback = fallback.defined(scope)?;
                match v.value(scope)? {
                    Val::Undefined => fallback,
                    v => v,
                }
            }
            Expr::Upper(v) => match v.defined(scope)?.get()? {
                Value::String(s) => Val::Owned(Value::String(s.to_uppercase())),
                _ => return None,
            },
            Expr::Lower(v) => match v.defined(scope)?.get()? {
                Value::String(s) => Val::Owned(Value::String(s.to_lowercase())),
                _ => return None,
            },
            Expr::Length(v) => Val::Owned(Value::from(match v.defined(scope)?.get()? {
                Value::String(s) => s.chars().count(),
                Value::Array(a) => a.len(),
                Value::Object(m) => m.len(),
                _ => return None,
            })),
            Expr::Defined(v) => Val::Owned(Value::Bool(!matches!(v.value(scope)?, Val::Undefined))),
            Expr::IsNone(v) => Val::Owned(Value::Bool(v.defined(scope)?.get()?.is_null())),
            Expr::Not(v) => Val::Owned(Value::Bool(!truthy(v.defined(scope)?.get()?))),
            Expr::And(a, b) => {
                let a = a.defined(scope)?;
                if truthy(a.get()?) {
                    b.defined(scope)?
                } else {
                    a
                }
            }
            Expr::Or(a, b) => {
                let a = a.defined(scope)?;
                if truthy(a.get()?) {
                    a
                } else {
                    b.defined(scope)?
                }
            }
            Expr::If(cond, then, other) => {
                if truthy(cond.defined(scope)?.get()?) {
                    then.defined(scope)?
                } else {
                    other.defined(scope)?
                }
            }
            Expr::Cmp(op, a, b) => {
                let (a, b) = (a.defined(scope)?, b.defined(scope)?);
                Val::Owned(Value::Bool(compare(*op, a.get()?, b.get()?)?))
            }
            Expr::In(needle, container) => {
                let (needle, container) = (needle.defined(scope)?, container.defined(scope)?);
                let Value::String(needle) = needle.get()? else {
                    return None;
                };
                Val::Owned(Value::Bool(match container.get()? {
                    Value::String(s) => s.contains(needle.as_str()),
                    Value::Object(m) => m.contains_key(needle),
                    Value::Array(items) => {
                        let mut found = false;
                        for item in items {
                            match item {
                                Value::String(s) if s == needle => found = true,
                                Value::String(_) => {}
                                _ => return None,
                            }
                        }
                        found
                    }
                    _ => return None,
                }))
            }
            Expr::Add(a, b) => {
                let (a, b) = (a.defined(scope)?, b.defined(scope)?);
                match (a.get()?, b.get()?) {
                    (Value::String(x), Value::String(y)) => {
                        Val::Owned(Value::String(format!("{x}{y}")))
                    }
                    (x, y) => Val::Owned(Value::from(int(x)?.checked_add(int(y)?)?)),
                }
            }
            Expr::Sub(a, b) => {
                let (a, b) = (a.defined(scope)?, b.defined(scope)?);
                Val::Owned(Value::from(int(a.get()?)?.checked_sub(int(b.get()?)?)?))
            }
            Expr::Concat(a, b) => {
                let (a, b) = (a.defined(scope)?, b.defined(scope)?);
                let mut s = text(a.get()?)?;
                s.push_str(&text(b.get()?)?);
                Val::Owned(Value::String(s))
            }
            Expr::List(items) => Val::Owned(Value::Array(
                items
                    .iter()
                    .map(|e| e.defined(scope)?.into_value())
                    .collect::<Option<_>>()?,
            )),
            Expr::Map(entries) => {
                // Exactly its size: an event may keep it.
                let mut m = Map::with_capacity(entries.len());
                for (k, e) in entries {
                    m.insert(k.clone(), e.defined(scope)?.into_value()?);
                }
                Val::Owned(Value::Object(m))
            }
        })
    }
}

/// An integer that fits `i64` (not a boolean, not a float).
fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

/// A string, an integer as decimal text, or a float as Python's `str()` writes it
/// (`1e-05`, where minijinja would write `0.00001`).
fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) if n.is_f64() => n.as_f64().map(crate::pyrepr::float_repr),
        _ => int(v).map(|i| i.to_string()),
    }
}

/// Comparisons of two strings, two integers, two booleans or two nones.
fn compare(op: Cmp, a: &Value, b: &Value) -> Option<bool> {
    let ord = match (a, b) {
        (Value::String(x), Value::String(y)) => {
            if !matches!(op, Cmp::Eq | Cmp::Ne) {
                return None;
            }
            x.cmp(y)
        }
        (Value::Bool(x), Value::Bool(y)) if matches!(op, Cmp::Eq | Cmp::Ne) => x.cmp(y),
        (Value::Null, Value::Null) if matches!(op, Cmp::Eq | Cmp::Ne) => std::cmp::Ordering::Equal,
        _ => int(a)?.cmp(&int(b)?),
    };
    Some(match op {
        Cmp::Eq => ord.is_eq(),
        Cmp::Ne => ord.is_ne(),
        Cmp::Lt => ord.is_lt(),
        Cmp::Le => ord.is_le(),
        Cmp::Gt => ord.is_gt(),
        Cmp::Ge => ord.is_ge(),
    })
}
