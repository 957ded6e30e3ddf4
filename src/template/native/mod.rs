//! The common shapes of Router expressions evaluated without minijinja: literals,
//! `input`, `state.KEY`, `x['key']`, `default`/`d`, `upper`, `lower`, `length`, the
//! `defined`/`undefined`/`none` tests, `==` `!=` `<` `<=` `>` `>=`, `in`/`not in`, `+`,
//! `-`, `~`, `not`/`and`/`or`, `a if c else b`, lists and mappings with string keys, and
//! Python's `%` formatting of a string (`percent.rs`).
//!
//! It only ever answers what minijinja (strict undefined) answers: an expression it does
//! not parse has no native form, and an evaluation that meets anything unusual (an
//! undefined value outside `default` and `defined`, a float in arithmetic, mixed types in
//! a comparison, an overflow, ...) gives up, and minijinja evaluates the expression, error
//! messages included. Where jinja2 (ADK's engine) differs from minijinja, it answers as
//! jinja2: Python's TypeError ordering values of unorderable types (`1 < 'a'`), `%`
//! formatting, floats written as Python writes them. The tests of this module compare it
//! with minijinja on many expressions and values.

mod parse;
pub(super) mod percent;
#[cfg(test)]
mod tests;

pub(crate) use parse::parse;
use serde_json::{Map, Value};
use std::borrow::Cow;

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
    /// `x | int` (no arguments), as jinja2 reads it.
    Int(Box<Expr>),
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
    /// `a % b`: Python's `%` formatting when `a` is a string (numbers are minijinja's).
    Mod(Box<Expr>, Box<Expr>),
    /// `a * b`, `a / b`, `a // b`.
    Arith(Arith, Box<Expr>, Box<Expr>),
    /// `(a, b)`: only as the arguments of `%`.
    Tuple(Vec<Expr>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    List(Vec<Expr>),
    Map(Vec<(String, Expr)>),
}

/// `*`, `/` or `//`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arith {
    Mul,
    Div,
    FloorDiv,
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

/// A value met while evaluating. Kept to two words: every operand passes through it, and
/// a `Value` inline (80 bytes) made each step move and drop a large value. The common
/// results (a test's boolean, a count or a sum) are plain variants; the rest is boxed, and
/// the containers and texts an expression gives as its result are built straight into
/// their `Value` ([`Expr::json`]).
enum Val<'a> {
    Undefined,
    Ref(&'a Value),
    Bool(bool),
    Int(i64),
    Owned(Box<Value>),
}

impl<'a> Val<'a> {
    /// The value, borrowed where it can be.
    fn get(&self) -> Option<Cow<'_, Value>> {
        Some(match self {
            Val::Undefined => return None,
            Val::Ref(v) => Cow::Borrowed(*v),
            Val::Bool(b) => Cow::Owned(Value::Bool(*b)),
            Val::Int(i) => Cow::Owned(Value::from(*i)),
            Val::Owned(v) => Cow::Borrowed(&**v),
        })
    }

    /// Its truth; `None` when undefined.
    fn truth(&self) -> Option<bool> {
        match self {
            Val::Bool(b) => Some(*b),
            Val::Int(i) => Some(*i != 0),
            v => v.get().map(|v| truthy(&v)),
        }
    }

    /// An integer that fits `i64` (see [`int`]).
    fn int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Bool(_) | Val::Undefined => None,
            Val::Ref(v) => int(v),
            Val::Owned(v) => int(v),
        }
    }

    fn into_value(self) -> Option<Value> {
        match self {
            Val::Undefined => None,
            Val::Ref(v) => Some(v.clone()),
            Val::Bool(b) => Some(Value::Bool(b)),
            Val::Int(i) => Some(Value::from(i)),
            Val::Owned(v) => Some(*v),
        }
    }
}

/// A value made while evaluating, boxed (see [`Val`]).
fn owned<'a>(v: Value) -> Val<'a> {
    Val::Owned(Box::new(v))
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

/// Whether `needle` is in `haystack`, as `str::contains` answers: a short haystack (a
/// Router's `'FINAL' in input`) is scanned directly, which costs less than setting up
/// the general searcher.
fn contains(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = n.split_first() else {
        return true;
    };
    if h.len() > 64 {
        return haystack.contains(needle);
    }
    h.len() >= n.len()
        && h[..=h.len() - n.len()]
            .iter()
            .enumerate()
            .any(|(i, &b)| b == first && &h[i + 1..i + n.len()] == rest)
}

/// `s.to_uppercase()`; ASCII text (a Router's usual input) is upper-cased in place in
/// a copy: `str::to_uppercase` looks each character of a text shorter than 16 bytes up
/// in the Unicode tables (~280 instructions for `draft two FINAL`).
fn upper(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_uppercase()
    } else {
        s.to_uppercase()
    }
}

/// `s.to_lowercase()`, ASCII text in place in a copy (see [`upper`]).
fn lower(s: &str) -> String {
    if s.is_ascii() {
        s.to_ascii_lowercase()
    } else {
        s.to_lowercase()
    }
}

/// What the expression reads.
pub(crate) struct Scope<'a> {
    /// `input` (`null` when the node has none).
    pub(crate) input: &'a Value,
    /// The state's keys.
    pub(crate) state: &'a dyn super::jinja::Lookup,
    /// An error jinja2 raises where minijinja answers (`1 < 'a'`), set when it is met.
    pub(crate) error: std::cell::Cell<Option<String>>,
}

impl<'a> Scope<'a> {
    /// A scope reading `input` and `state`.
    pub(crate) fn new(input: &'a Value, state: &'a dyn super::jinja::Lookup) -> Scope<'a> {
        Scope {
            input,
            state,
            error: std::cell::Cell::new(None),
        }
    }

    /// Stops the evaluation with jinja2's error.
    fn fail<T>(&self, message: String) -> Option<T> {
        self.error.set(Some(message));
        None
    }
}

impl Expr {
    /// The expression's value, or jinja2's error where minijinja would answer; `None`
    /// when minijinja must evaluate it.
    #[inline]
    pub(crate) fn eval<'a>(&'a self, scope: &Scope<'a>) -> Option<Result<Value, String>> {
        let value = self.json(scope);
        if let Some(error) = scope.error.take() {
            return Some(Err(error));
        }
        value.map(Ok)
    }

    /// The expression's defined value as a `Value`. A mapping, a list or a text is built
    /// straight into it rather than boxed in a [`Val`] first.
    fn json<'a>(&'a self, scope: &Scope<'a>) -> Option<Value> {
        match self {
            Expr::Map(entries) => {
                // Exactly its size: an event may keep it.
                let mut m = Map::with_capacity(entries.len());
                for (k, e) in entries {
                    m.insert(k.clone(), e.json(scope)?);
                }
                Some(Value::Object(m))
            }
            Expr::List(items) => Some(Value::Array(
                items.iter().map(|e| e.json(scope)).collect::<Option<_>>()?,
            )),
            Expr::Upper(v) | Expr::Lower(v) => {
                let upper = matches!(self, Expr::Upper(_));
                v.cased(scope, upper).map(Value::String)
            }
            _ => self.value(scope)?.into_value(),
        }
    }

    /// `self | upper` (or `lower`) of a string.
    fn cased<'a>(&'a self, scope: &Scope<'a>, to_upper: bool) -> Option<String> {
        match &*self.defined(scope)?.get()? {
            Value::String(s) if to_upper => Some(upper(s)),
            Value::String(s) => Some(lower(s)),
            _ => None,
        }
    }

    /// A defined value, or `None`.
    #[inline]
    fn defined<'a>(&'a self, scope: &Scope<'a>) -> Option<Val<'a>> {
        self.value(scope).filter(|v| !matches!(v, Val::Undefined))
    }

    /// Its value: the leaves (a constant, `input`, `state.KEY`), most of the operands,
    /// here, the rest in [`Expr::compound`]. Inlined so that a leaf costs a few
    /// instructions rather than a call of `compound`, whose frame is large.
    #[inline]
    fn value<'a>(&'a self, scope: &Scope<'a>) -> Option<Val<'a>> {
        match self {
            Expr::Const(v) => Some(Val::Ref(v)),
            Expr::Input => Some(Val::Ref(scope.input)),
            Expr::Attr(base, key) if matches!(**base, Expr::State) => {
                Some(scope.state.get(key).map_or(Val::Undefined, Val::Ref))
            }
            _ => self.compound(scope),
        }
    }

    /// The value of an expression that is not a leaf (see [`Expr::value`]).
    fn compound<'a>(&'a self, scope: &Scope<'a>) -> Option<Val<'a>> {
        Some(match self {
            // The leaves are `value`'s, which answers them before calling this: kept so
            // that the match stays exhaustive.
            Expr::Const(_) | Expr::Input => return self.value(scope),
            // The whole state is minijinja's.
            Expr::State => return None,
            Expr::Attr(base, key) => {
                if matches!(**base, Expr::State) {
                    return self.value(scope);
                }
                match base.defined(scope)? {
                    Val::Ref(Value::Object(m)) => m.get(key).map_or(Val::Undefined, Val::Ref),
                    Val::Owned(v) => match *v {
                        Value::Object(mut m) => m.remove(key).map_or(Val::Undefined, owned),
                        _ => return None,
                    },
                    _ => return None,
                }
            }
            Expr::Index(base, i) => match base.defined(scope)? {
                Val::Ref(Value::Array(a)) => Val::Ref(a.get(*i)?),
                Val::Owned(v) => match *v {
                    Value::Array(mut a) if *i < a.len() => owned(a.swap_remove(*i)),
                    _ => return None,
                },
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
            Expr::Upper(v) => owned(Value::String(v.cased(scope, true)?)),
            Expr::Lower(v) => owned(Value::String(v.cased(scope, false)?)),
            Expr::Length(v) => {
                let n = match &*v.defined(scope)?.get()? {
                    Value::String(s) => s.chars().count(),
                    Value::Array(a) => a.len(),
                    Value::Object(m) => m.len(),
                    _ => return None,
                };
                Val::Int(i64::try_from(n).ok()?)
            }
            Expr::Int(v) => Val::Int(match &*v.defined(scope)?.get()? {
                Value::String(s) => match super::jinja2::py_int(s) {
                    super::jinja2::TextInt::Int(i) => i64::try_from(i).ok()?,
                    super::jinja2::TextInt::NotANumber => 0,
                    // Past i64: minijinja's i128, or its error.
                    super::jinja2::TextInt::Past => return None,
                },
                x @ (Value::Number(_) | Value::Bool(_)) => integer(x)?,
                // int(None), int([]) and int({}) fail, and so does float(): the default.
                Value::Null | Value::Array(_) | Value::Object(_) => 0,
            }),
            Expr::Defined(v) => Val::Bool(!matches!(v.value(scope)?, Val::Undefined)),
            Expr::IsNone(v) => Val::Bool(v.defined(scope)?.get()?.is_null()),
            Expr::Not(v) => Val::Bool(!v.defined(scope)?.truth()?),
            Expr::And(a, b) => {
                let a = a.defined(scope)?;
                if a.truth()? { b.defined(scope)? } else { a }
            }
            Expr::Or(a, b) => {
                let a = a.defined(scope)?;
                if a.truth()? { a } else { b.defined(scope)? }
            }
            Expr::If(cond, then, other) => {
                if cond.defined(scope)?.truth()? {
                    then.defined(scope)?
                } else {
                    other.defined(scope)?
                }
            }
            Expr::Cmp(op, a, b) => {
                let (a, b) = (a.defined(scope)?, b.defined(scope)?);
                let (a, b) = (a.get()?, b.get()?);
                if let Some(error) = unorderable(*op, &a, &b) {
                    return scope.fail(error);
                }
                Val::Bool(compare(*op, &a, &b)?)
            }
            Expr::In(needle, container) => {
                let (needle, container) = (needle.defined(scope)?, container.defined(scope)?);
                let needle = needle.get()?;
                let Value::String(needle) = &*needle else {
                    // Python's `in` of text takes only text (`1 in 'a1'` is a TypeError,
                    // where minijinja answers).
                    if container.get()?.is_string() {
                        return scope.fail(format!(
                            "'in <string>' requires string as left operand, not {}",
                            py_type(&needle)
                        ));
                    }
                    return None;
                };
                Val::Bool(match &*container.get()? {
                    Value::String(s) => contains(s, needle),
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
                })
            }
            Expr::Add(a, b) => {
                let (a, b) = (a.defined(scope)?, b.defined(scope)?);
                // Two integers (a count in the state) first: they need no `Value`.
                if let (Some(x), Some(y)) = (a.int(), b.int()) {
                    return Some(Val::Int(x.checked_add(y)?));
                }
                match (&*a.get()?, &*b.get()?) {
                    (Value::String(x), Value::String(y)) => owned(Value::String(format!("{x}{y}"))),
                    _ => return None,
                }
            }
            Expr::Sub(a, b) => {
                let (a, b) = (a.defined(scope)?, b.defined(scope)?);
                Val::Int(a.int()?.checked_sub(b.int()?)?)
            }
            Expr::Concat(a, b) => {
                let (a, b) = (a.defined(scope)?, b.defined(scope)?);
                let mut s = text(&*a.get()?)?;
                s.push_str(&text(&*b.get()?)?);
                owned(Value::String(s))
            }
            Expr::Arith(op, a, b) => {
                let (a, b) = (a.defined(scope)?, b.defined(scope)?);
                owned(arith(*op, &*a.get()?, &*b.get()?)?)
            }
            Expr::Mod(a, b) => {
                let a = a.defined(scope)?;
                let a = a.get()?;
                let Value::String(format) = &*a else {
                    // Numbers: Python's modulo of integers (the divisor's sign).
                    let (x, y) = (int(&a)?, b.defined(scope)?.int()?);
                    let r = x.checked_rem_euclid(y)?;
                    return Some(Val::Int(if y < 0 && r != 0 { r + y } else { r }));
                };
                let (args, tuple) = match &**b {
                    Expr::Tuple(items) => (
                        items
                            .iter()
                            .map(|e| e.defined(scope)?.into_value())
                            .collect::<Option<Vec<Value>>>()?,
                        true,
                    ),
                    b => (vec![b.defined(scope)?.into_value()?], false),
                };
                match percent::format(format, &args, tuple)? {
                    Ok(text) => owned(Value::String(text)),
                    Err(error) => return scope.fail(error),
                }
            }
            Expr::Tuple(_) => return None,
            Expr::List(_) | Expr::Map(_) => owned(self.json(scope)?),
        })
    }
}

/// The integer `int` and `%d` make: an int, a float truncated, a boolean as 1 or 0; `None` for
/// anything else (an integer past `i64` included).
pub(super) fn integer(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && f.abs() < 9.2e18)
                .map(|f| f.trunc() as i64)
        }),
        _ => None,
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

/// `*`, `/` and `//` as Python computes them: integers (booleans count as 0 and 1) stay
/// integers but for `/`; a float makes a float; text or a list times an integer repeats
/// it. `None` for the rest (division by zero, an overflow, a float `//`): minijinja's.
fn arith(op: Arith, a: &Value, b: &Value) -> Option<Value> {
    let num = |v: &Value| match v {
        Value::Bool(b) => Some((Some(i64::from(*b)), f64::from(u8::from(*b)))),
        // An int past i64 (a u64) is left to minijinja rather than read as a float.
        Value::Number(n) if n.is_u64() && n.as_i64().is_none() => None,
        Value::Number(n) => Some((n.as_i64().filter(|_| !n.is_f64()), n.as_f64()?)),
        _ => None,
    };
    if op == Arith::Mul {
        let repeat = |times: &Value| int(times).or_else(|| times.as_bool().map(i64::from));
        match (a, b) {
            (Value::String(s), n) | (n, Value::String(s)) if !n.is_string() => {
                let times = usize::try_from(repeat(n)?.max(0)).ok()?;
                return (s.len().checked_mul(times)? <= 1 << 20)
                    .then(|| Value::String(s.repeat(times)));
            }
            (Value::Array(_), _) | (_, Value::Array(_)) => return None,
            _ => {}
        }
    }
    let ((ai, af), (bi, bf)) = (num(a)?, num(b)?);
    let float = |f: f64| f.is_finite().then(|| Value::from(f));
    match (op, ai, bi) {
        (Arith::Mul, Some(x), Some(y)) => x.checked_mul(y).map(Value::from),
        (Arith::Mul, _, _) => float(af * bf),
        (Arith::Div, _, _) if bf != 0.0 => float(af / bf),
        (Arith::FloorDiv, Some(x), Some(y)) if y != 0 => {
            let (q, r) = (x.checked_div(y)?, x.checked_rem(y)?);
            Some(Value::from(if r != 0 && ((x < 0) != (y < 0)) {
                q - 1
            } else {
                q
            }))
        }
        _ => None,
    }
}

/// Python's name of a value's type.
fn py_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The TypeError Python raises ordering `a` and `b` (`1 < 'a'`, `none < 1`, two dicts),
/// where minijinja orders them by type; `None` when Python orders them (numbers and
/// booleans, two strings, two lists) or the operator is `==` / `!=`.
fn unorderable(op: Cmp, a: &Value, b: &Value) -> Option<String> {
    let symbol = match op {
        Cmp::Eq | Cmp::Ne => return None,
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ge => ">=",
    };
    let number = |v: &Value| matches!(v, Value::Number(_) | Value::Bool(_));
    let orderable = (number(a) && number(b))
        || matches!(
            (a, b),
            (Value::String(_), Value::String(_)) | (Value::Array(_), Value::Array(_))
        );
    (!orderable).then(|| {
        format!(
            "'{symbol}' not supported between instances of '{}' and '{}'",
            py_type(a),
            py_type(b)
        )
    })
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
