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

#[derive(Debug, Clone, PartialEq)]
enum Tok<'s> {
    Ident(&'s str),
    Str(&'s str),
    Int(i64),
    Punct(&'static str),
}

const PUNCT: &[&str] = &[
    "==", "!=", "<=", ">=", "<", ">", "+", "-", "~", "|", ".", ",", ":", "(", ")", "[", "]", "{",
    "}",
];

/// The tokens of `src`, or `None` for anything outside the subset (escapes in strings,
/// floats, non-ASCII outside strings, other operators).
fn tokenize(src: &str) -> Option<Vec<Tok<'_>>> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        } else if c == b'\'' || c == b'"' {
            let end = src[i + 1..].find(c as char)? + i + 1;
            let text = &src[i + 1..end];
            if text.contains('\\') {
                return None;
            }
            out.push(Tok::Str(text));
            i = end + 1;
        } else if c.is_ascii_digit() {
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            if j < bytes.len()
                && (bytes[j].is_ascii_alphanumeric() || matches!(bytes[j], b'_' | b'.'))
            {
                return None;
            }
            if j - i > 1 && c == b'0' {
                return None;
            }
            out.push(Tok::Int(src[i..j].parse().ok()?));
            i = j;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if j < bytes.len() && !bytes[j].is_ascii() {
                return None;
            }
            out.push(Tok::Ident(&src[i..j]));
            i = j;
        } else {
            let p = PUNCT.iter().find(|p| src[i..].starts_with(**p))?;
            // `**`, `//`, `=` and the like are other operators.
            let next = bytes.get(i + p.len()).copied();
            if matches!(next, Some(b'=')) && !matches!(*p, "==" | "!=" | "<=" | ">=") {
                return None;
            }
            out.push(Tok::Punct(p));
            i += p.len();
        }
    }
    Some(out)
}

/// Parses `src`; `None` when it is outside the subset.
pub(crate) fn parse(src: &str) -> Option<Expr> {
    let toks = tokenize(src)?;
    let mut p = Parser { toks, at: 0 };
    let e = p.expr(0)?;
    (p.at == p.toks.len()).then_some(e)
}

struct Parser<'s> {
    toks: Vec<Tok<'s>>,
    at: usize,
}

impl<'s> Parser<'s> {
    fn peek(&self) -> Option<&Tok<'s>> {
        self.toks.get(self.at)
    }

    fn eat(&mut self, t: &Tok<'_>) -> bool {
        if self.peek() == Some(t) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self, w: &str) -> bool {
        self.eat(&Tok::Ident(w))
    }

    fn punct(&mut self, p: &'static str) -> bool {
        self.eat(&Tok::Punct(p))
    }

    /// `or ['if' or 'else' expr]`; nested deeper than 64 is left to minijinja.
    fn expr(&mut self, depth: usize) -> Option<Expr> {
        if depth > 64 {
            return None;
        }
        let d = depth + 1;
        let value = self.or(d)?;
        if !self.word("if") {
            return Some(value);
        }
        let cond = self.or(d)?;
        if !self.word("else") {
            return None;
        }
        let other = self.expr(d)?;
        Some(Expr::If(Box::new(cond), Box::new(value), Box::new(other)))
    }

    fn or(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.and(d)?;
        while self.word("or") {
            e = Expr::Or(Box::new(e), Box::new(self.and(d)?));
        }
        Some(e)
    }

    fn and(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.not(d)?;
        while self.word("and") {
            e = Expr::And(Box::new(e), Box::new(self.not(d)?));
        }
        Some(e)
    }

    fn not(&mut self, d: usize) -> Option<Expr> {
        if d > 64 {
            return None;
        }
        if self.word("not") {
            return Some(Expr::Not(Box::new(self.not(d + 1)?)));
        }
        self.compare(d)
    }

    fn compare(&mut self, d: usize) -> Option<Expr> {
        let left = self.math(d)?;
        let op = match self.peek() {
            Some(Tok::Punct("==")) => Some(Cmp::Eq),
            Some(Tok::Punct("!=")) => Some(Cmp::Ne),
            Some(Tok::Punct("<")) => Some(Cmp::Lt),
            Some(Tok::Punct("<=")) => Some(Cmp::Le),
            Some(Tok::Punct(">")) => Some(Cmp::Gt),
            Some(Tok::Punct(">=")) => Some(Cmp::Ge),
            _ => None,
        };
        let e = if let Some(op) = op {
            self.at += 1;
            Expr::Cmp(op, Box::new(left), Box::new(self.math(d)?))
        } else if self.word("in") {
            Expr::In(Box::new(left), Box::new(self.math(d)?))
        } else if self.peek() == Some(&Tok::Ident("not"))
            && self.toks.get(self.at + 1) == Some(&Tok::Ident("in"))
        {
            self.at += 2;
            Expr::Not(Box::new(Expr::In(Box::new(left), Box::new(self.math(d)?))))
        } else {
            return Some(left);
        };
        // Chained comparisons are minijinja's.
        match self.peek() {
            Some(Tok::Punct("==" | "!=" | "<" | "<=" | ">" | ">=")) => None,
            Some(Tok::Ident("in" | "not")) => None,
            _ => Some(e),
        }
    }

    fn math(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.concat(d)?;
        loop {
            if self.punct("+") {
                e = Expr::Add(Box::new(e), Box::new(self.concat(d)?));
            } else if self.punct("-") {
                e = Expr::Sub(Box::new(e), Box::new(self.concat(d)?));
            } else {
                return Some(e);
            }
        }
    }

    fn concat(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.unary(d)?;
        while self.punct("~") {
            e = Expr::Concat(Box::new(e), Box::new(self.unary(d)?));
        }
        Some(e)
    }

    /// A primary, its `.name` and `[...]` lookups, then its filters and tests.
    fn unary(&mut self, d: usize) -> Option<Expr> {
        let mut e = self.primary(d)?;
        loop {
            if self.punct(".") {
                match self.peek()? {
                    Tok::Ident(name) => {
                        e = Expr::Attr(Box::new(e), (*name).to_owned());
                        self.at += 1;
                    }
                    _ => return None,
                }
            } else if self.punct("[") {
                match self.peek()? {
                    Tok::Str(key) => e = Expr::Attr(Box::new(e), (*key).to_owned()),
                    Tok::Int(i) => e = Expr::Index(Box::new(e), usize::try_from(*i).ok()?),
                    _ => return None,
                }
                self.at += 1;
                if !self.punct("]") {
                    return None;
                }
            } else {
                break;
            }
        }
        loop {
            if self.punct("|") {
                let Some(Tok::Ident(name)) = self.peek().cloned() else {
                    return None;
                };
                self.at += 1;
                e = match name {
                    "default" | "d" => {
                        let fallback = if self.punct("(") {
                            let arg = self.expr(d)?;
                            if !self.punct(")") {
                                return None;
                            }
                            arg
                        } else {
                            Expr::Const(Value::String(String::new()))
                        };
                        Expr::Default(Box::new(e), Box::new(fallback))
                    }
                    "upper" => Expr::Upper(Box::new(e)),
                    "lower" => Expr::Lower(Box::new(e)),
                    "length" => Expr::Length(Box::new(e)),
                    _ => return None,
                };
                if name != "default" && name != "d" && self.peek() == Some(&Tok::Punct("(")) {
                    return None;
                }
            } else if self.word("is") {
                let negated = self.word("not");
                let Some(Tok::Ident(name)) = self.peek().cloned() else {
                    return None;
                };
                self.at += 1;
                // minijinja reads an argument after a test name; none here.
                match self.peek() {
                    None | Some(Tok::Punct(")" | "]" | "}" | "," | ":" | "|")) => {}
                    Some(Tok::Ident("and" | "or" | "else" | "is")) => {}
                    _ => return None,
                }
                let test = match name {
                    "defined" => Expr::Defined(Box::new(e)),
                    "undefined" => Expr::Not(Box::new(Expr::Defined(Box::new(e)))),
                    "none" => Expr::IsNone(Box::new(e)),
                    _ => return None,
                };
                e = if negated {
                    Expr::Not(Box::new(test))
                } else {
                    test
                };
            } else {
                return Some(e);
            }
        }
    }

    fn primary(&mut self, d: usize) -> Option<Expr> {
        let tok = self.peek()?.clone();
        self.at += 1;
        Some(match tok {
            Tok::Ident("true" | "True") => Expr::Const(Value::Bool(true)),
            Tok::Ident("false" | "False") => Expr::Const(Value::Bool(false)),
            Tok::Ident("none" | "None") => Expr::Const(Value::Null),
            Tok::Ident("input") => Expr::Input,
            Tok::Ident("state") => Expr::State,
            Tok::Ident(_) => return None,
            // Adjacent strings are joined by minijinja.
            Tok::Str(_) if matches!(self.peek(), Some(Tok::Str(_))) => return None,
            Tok::Str(s) => Expr::Const(Value::String(s.to_owned())),
            Tok::Int(i) => Expr::Const(Value::from(i)),
            Tok::Punct("(") => {
                let e = self.expr(d)?;
                if !self.punct(")") {
                    return None;
                }
                e
            }
            Tok::Punct("[") => {
                let mut items = Vec::new();
                while !self.punct("]") {
                    if !items.is_empty() && !self.punct(",") {
                        return None;
                    }
                    if self.punct("]") {
                        break;
                    }
                    items.push(self.expr(d)?);
                }
                Expr::List(items)
            }
            Tok::Punct("{") => {
                let mut entries: Vec<(String, Expr)> = Vec::new();
                while !self.punct("}") {
                    if !entries.is_empty() && !self.punct(",") {
                        return None;
                    }
                    if self.punct("}") {
                        break;
                    }
                    let Some(Tok::Str(key)) = self.peek().cloned() else {
                        return None;
                    };
                    self.at += 1;
                    if !self.punct(":") {
                        return None;
                    }
                    let value = self.expr(d)?;
                    // A key written twice is minijinja's to resolve.
                    if entries.iter().any(|(k, _)| k == key) {
                        return None;
                    }
                    entries.push((key.to_owned(), value));
                }
                Expr::Map(entries)
            }
            Tok::Punct(_) => return None,
        })
    }
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
                let mut m = Map::new();
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

/// A string, or an integer as decimal text.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
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

#[cfg(test)]
mod tests {
    //! Native answers agree with minijinja's: on the expressions of the Router tests and
    //! the bench, and on thousands of generated ones, over many inputs and states.
    use super::super::jinja::{Expression, Lookup};
    use serde_json::{Map, Value, json};

    struct State(Map<String, Value>);

    impl Lookup for State {
        fn get(&self, key: &str) -> Option<&Value> {
            self.0.get(key)
        }
    }

    fn inputs() -> Vec<Value> {
        vec![
            json!("draft one"),
            json!("draft two FINAL"),
            json!(""),
            json!(null),
            json!(3),
            json!(0),
            json!(true),
            json!(2.5),
            json!("straße ÄÖ"),
            json!({"k": "v", "critic": "long text", "fan": "short", "quick": "q", "slow": 2}),
            json!(["a", "b", "FINAL"]),
            json!([1, 2]),
            json!({"k": 1, "0": "zero"}),
        ]
    }

    fn states() -> Vec<Value> {
        vec![
            json!({}),
            json!({"a": 1, "b": 2, "c": "x", "attempts": 1, "draft": "d", "round": 0}),
            json!({"a": "s", "b": null, "c": [1], "attempts": 0}),
            json!({"a": 9223372036854775807_i64, "b": 1, "c": -1}),
            json!({"a": 1.5, "b": true, "c": {"x": 1}}),
            json!({"a": {"x": "y"}, "b": ["FINAL"], "c": "", "user:lang": "fr"}),
            json!({"a": 18446744073709551615_u64, "b": -9223372036854775808_i64}),
        ]
    }

    /// Checks one expression everywhere; returns (native answers, minijinja successes).
    fn agree(source: &str) -> (usize, usize) {
        let Ok(expr) = Expression::compile(source) else {
            return (0, 0);
        };
        let (mut native, mut ok) = (0, 0);
        for input in inputs() {
            for state in states() {
                let Value::Object(map) = &state else {
                    unreachable!()
                };
                let lookup = State(map.clone());
                let jinja = expr.eval(&json!({"input": input, "state": state}));
                ok += usize::from(jinja.is_ok());
                if let Some(v) = expr.eval_native(&input, &lookup) {
                    native += 1;
                    assert_eq!(
                        jinja.as_ref().ok(),
                        Some(&v),
                        "`{source}` on input {input} and state {state}: minijinja {jinja:?}, native {v}"
                    );
                    // Same JSON text: same number representation, same key order.
                    assert_eq!(jinja.unwrap().to_string(), v.to_string(), "`{source}`");
                }
            }
        }
        (native, ok)
    }

    #[test]
    fn the_common_shapes_agree_with_minijinja() {
        let corpus = [
            "'done' if 'FINAL' in input else 'retry'",
            "(state.attempts | default(0)) + 1",
            "{'published': input | upper}",
            "none",
            "state.draft",
            "{'escalated': true, 'draft': state.draft, 'review': state.review}",
            "'long' if (input.critic | length) > (input.fan | length) else 'short'",
            "input.critic ~ ' | ' ~ input.fan",
            "['both', 'quick'] if 'deep' in input else 'quick'",
            "input.quick ~ ' / ' ~ input.slow",
            "1 if input == 'int' else ('1' if input == 'str' else (false if input == 'bool' else [2, 'two']))",
            "'bare' if input == 'skip' else 'set'",
            "input",
            "'empty' if input is none else 'ok'",
            "{'got': input}",
            "input.missing",
            "'more' if (state.round | default(0)) < 1 else 'stop'",
            "{'rounds': state.round}",
            "'stamped: ' ~ input",
            "state['user:lang']",
            "state.a + state.b",
            "state.a - state.b",
            "state.a | d",
            "state.a | default(state.b)",
            "state.missing | default(state.b + 1)",
            "state.a is defined",
            "state.missing is undefined and input",
            "not state.a or 'x'",
            "state.a is not none",
            "'a' not in input",
            "'k' in input",
            "input[0]",
            "input[5]",
            "state.c.x",
            "state.a.x",
            "input | lower",
            "input | length",
            "state.b in state.c",
            "'FINAL' in state.b",
            "state.a == state.b",
            "state.a != 1",
            "state.c >= 1",
            "state.a ~ state.b",
            "[state.a, input, none, 'x',]",
            "{'a': 1, 'b': state.missing | default(none),}",
        ];
        let mut answered = 0;
        for source in corpus {
            let (native, _) = agree(source);
            answered += native;
        }
        assert!(answered > 1000, "only {answered} native answers");
    }

    /// A small deterministic generator (no dependency).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    fn generate(rng: &mut Rng, depth: usize) -> String {
        const ATOMS: &[&str] = &[
            "input",
            "state.a",
            "state.b",
            "state['c']",
            "state.missing",
            "input.k",
            "input[0]",
            "input[1]",
            "'FINAL'",
            "'x'",
            "''",
            "0",
            "1",
            "42",
            "none",
            "true",
            "False",
            "1.5",
            "[1, 'a']",
            "{'k': 'v'}",
            "state",
            "state.c.x",
            "-1",
            "'a\\'b'",
            "\"dq\"",
            "'s' 'j'",
            "undefined_name",
            "state.attempts",
        ];
        if depth == 0 || rng.below(4) == 0 {
            return rng.pick(ATOMS).to_owned();
        }
        let a = generate(rng, depth - 1);
        match rng.below(9) {
            0 | 1 => {
                let op = rng.pick(&[
                    "+", "-", "~", "==", "!=", "<", ">=", "in", "not in", "and", "or", "*", "<=",
                    ">",
                ]);
                format!("{a} {op} {}", generate(rng, depth - 1))
            }
            2 => format!("not {a}"),
            3 => {
                let f = rng.pick(&[
                    "default(0)",
                    "default(none)",
                    "d",
                    "upper",
                    "lower",
                    "length",
                    "trim",
                    "default(state.b)",
                    "default",
                    "default(1, true)",
                    "length()",
                ]);
                format!("{a} | {f}")
            }
            4 => {
                let t = rng.pick(&["defined", "undefined", "none", "not none", "not defined"]);
                format!("{a} is {t}")
            }
            5 => format!(
                "{a} if {} else {}",
                generate(rng, depth - 1),
                generate(rng, depth - 1)
            ),
            6 => format!("({a})"),
            7 => format!("[{a}, {}]", generate(rng, depth - 1)),
            _ => format!("{{'k': {a}, 'j': {}}}", generate(rng, depth - 1)),
        }
    }

    #[test]
    fn generated_expressions_agree_with_minijinja() {
        let mut rng = Rng(18);
        let (mut native, mut ok) = (0, 0);
        for _ in 0..1500 {
            let source = generate(&mut rng, 3);
            let (n, o) = agree(&source);
            native += n;
            ok += o;
        }
        // Most of what minijinja answers is answered natively.
        assert!(native * 2 > ok, "native {native} of {ok}");
    }
}
