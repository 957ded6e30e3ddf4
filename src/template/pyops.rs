//! `~` and `%` as jinja2 (ADK's engine for Router expressions) computes them, for the
//! expressions minijinja evaluates (those [`super::native`] does not answer): the
//! expression is rewritten once, when it is compiled, so that each operand of `~` goes
//! through `__py_str` (Python's `str()`: `1e-05`, `True`, `None`, `['a', 1.0]`, where
//! minijinja writes `0.00001`, `true`, `none`, `["a", 1.0]`) and each `a % b` becomes
//! `(a) | __py_mod(b)` (`__py_mod_tuple` when `b` is a tuple literal, whose items are the
//! arguments): Python's `%` formatting of a string ([`super::native::percent`]) and
//! Python's modulo of numbers (the divisor's sign), where minijinja refuses `%` on text.
//!
//! The rewrite follows minijinja's own parse (its `unstable_machinery`), so precedence and
//! parentheses are minijinja's, which here are jinja2's: `~` binds looser than `*` `/`
//! `%` and tighter than `+` `-`. An expression without `~` or `%`, or one the parse
//! does not take, is compiled as written.

use minijinja::machinery::ast::{BinOpKind, CallArg, Expr};
use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, Value};

/// The filter every operand of `~` goes through.
pub(super) const PY_STR: &str = "__py_str";
/// The filter `a % b` becomes.
pub(super) const PY_MOD: &str = "__py_mod";
/// The filter `a % (b, c)` becomes.
pub(super) const PY_MOD_TUPLE: &str = "__py_mod_tuple";

/// `source` with `~` and `%` rewritten (see the module's documentation); `None` when it
/// has neither, or minijinja does not parse it (its compile error is then the original's).
pub(super) fn rewrite(source: &str) -> Option<String> {
    if !source.contains('~') && !source.contains('%') {
        return None;
    }
    let expr = minijinja::machinery::parse_expr(source).ok()?;
    let mut out = String::with_capacity(source.len() + 32);
    let mut changed = false;
    let end = emit(source, &expr, &mut out, &mut changed)?;
    out.push_str(source.get(end..)?);
    // What precedes the expression's own span (blanks) was not copied.
    let start = extent(&expr).0;
    let mut whole = source.get(..start)?.to_owned();
    whole.push_str(&out);
    changed.then_some(whole)
}

/// Appends the rewritten text of `expr` (its span of `source`, children rewritten) to
/// `out`; returns where its span ends. `None`: a span that does not nest as expected.
fn emit(source: &str, expr: &Expr<'_>, out: &mut String, changed: &mut bool) -> Option<usize> {
    let (start, end) = extent(expr);
    if let Expr::BinOp(op) = expr
        && matches!(op.op, BinOpKind::Concat | BinOpKind::Rem)
    {
        *changed = true;
        let concat = matches!(op.op, BinOpKind::Concat);
        let (l_start, l_end) = extent(&op.left);
        let (r_start, r_end) = extent(&op.right);
        if !(start <= l_start && l_end <= r_start) {
            return None;
        }
        let gap = source.get(l_end..r_start)?;
        let operator = if concat { '~' } else { '%' };
        let at = gap.find(operator)?;
        out.push('(');
        out.push_str(source.get(start..l_start)?);
        if concat {
            out.push('(');
            emit(source, &op.left, out, changed)?;
            out.push_str(")|");
            out.push_str(PY_STR);
            out.push_str(&gap[..at]);
            out.push('~');
            out.push_str(&gap[at + 1..]);
            out.push('(');
            emit(source, &op.right, out, changed)?;
            out.push_str(")|");
            out.push_str(PY_STR);
        } else {
            out.push('(');
            emit(source, &op.left, out, changed)?;
            out.push_str(&gap[..at]);
            out.push_str(")|");
            out.push_str(if matches!(op.right, Expr::Tuple(_)) {
                PY_MOD_TUPLE
            } else {
                PY_MOD
            });
            out.push('(');
            out.push_str(&gap[at + 1..]);
            emit(source, &op.right, out, changed)?;
            out.push(')');
        }
        let end = end.max(r_end);
        out.push_str(source.get(r_end..end)?);
        out.push(')');
        return Some(end);
    }
    let mut at = start;
    let mut child = |e: &Expr<'_>, out: &mut String| -> Option<()> {
        let (s, _) = extent(e);
        if s < at {
            return None;
        }
        out.push_str(source.get(at..s)?);
        at = emit(source, e, out, changed)?;
        Some(())
    };
    for c in children(expr) {
        child(c, out)?;
    }
    // A child may end past its parent's recorded span (a closing parenthesis).
    let end = end.max(at);
    out.push_str(source.get(at..end)?);
    Some(end)
}

/// The sub-expressions of `expr`, in source order.
fn children<'e, 'a>(expr: &'e Expr<'a>) -> Vec<&'e Expr<'a>> {
    match expr {
        Expr::Var(_) | Expr::Const(_) => Vec::new(),
        Expr::Slice(s) => std::iter::once(&s.expr)
            .chain(s.start.iter())
            .chain(s.stop.iter())
            .chain(s.step.iter())
            .collect(),
        Expr::UnaryOp(u) => vec![&u.expr],
        Expr::BinOp(b) => vec![&b.left, &b.right],
        Expr::Compare(c) => std::iter::once(&c.expr)
            .chain(c.ops.iter().map(|o| &o.expr))
            .collect(),
        // `A if C else B`.
        Expr::IfExpr(i) => std::iter::once(&i.true_expr)
            .chain(std::iter::once(&i.test_expr))
            .chain(i.false_expr.iter())
            .collect(),
        Expr::Filter(f) => f.expr.iter().chain(args(&f.args)).collect(),
        Expr::Test(t) => std::iter::once(&t.expr).chain(args(&t.args)).collect(),
        Expr::GetAttr(g) => vec![&g.expr],
        Expr::GetItem(g) => vec![&g.expr, &g.subscript_expr],
        Expr::Call(c) => std::iter::once(&c.expr).chain(args(&c.args)).collect(),
        Expr::List(l) => l.items.iter().collect(),
        Expr::Tuple(t) => t.items.iter().collect(),
        Expr::Map(m) => m
            .keys
            .iter()
            .zip(&m.values)
            .flat_map(|(k, v)| [k, v])
            .collect(),
    }
}

/// The byte range of an expression in its source, its sub-expressions included (a
/// filter's span is its name alone).
fn extent(expr: &Expr<'_>) -> (usize, usize) {
    let s = expr.span();
    children(expr).into_iter().map(extent).fold(
        (s.start_offset as usize, s.end_offset as usize),
        |(a, b), (c, d)| (a.min(c), b.max(d)),
    )
}

/// The expressions of call or filter arguments.
fn args<'e, 'a>(args: &'e [CallArg<'a>]) -> Vec<&'e Expr<'a>> {
    args.iter()
        .map(|a| match a {
            CallArg::Pos(e)
            | CallArg::Kwarg(_, e)
            | CallArg::PosSplat(e)
            | CallArg::KwargSplat(e) => e,
        })
        .collect()
}

/// `__py_str`: Python's `str()` of one operand of `~`.
///
/// # Errors
/// An undefined operand (strict undefined, as minijinja's `~`).
pub(super) fn py_str(value: &Value) -> Result<Value, Error> {
    match value.kind() {
        ValueKind::Undefined => Err(Error::from(ErrorKind::UndefinedError)),
        ValueKind::String => Ok(value.clone()),
        ValueKind::Number if value.is_integer() => Ok(value.clone()),
        _ => Ok(match serde_json::to_value(value) {
            Ok(json) => Value::from(crate::pyrepr::py_str(&json)),
            // What has no JSON form (an integer past u64, a Python dict's method):
            // minijinja's text.
            Err(_) => value.clone(),
        }),
    }
}

/// `__py_mod`: `a % b` as Python computes it, `b` one value.
///
/// # Errors
/// Python's TypeError, ValueError or ZeroDivisionError, in words.
pub(super) fn py_mod(a: &Value, b: &Value) -> Result<Value, Error> {
    modulo(a, b, false)
}

/// `__py_mod_tuple`: `a % (b, c, ...)`, the tuple's items the arguments.
///
/// # Errors
/// As [`py_mod`].
pub(super) fn py_mod_tuple(a: &Value, b: &Value) -> Result<Value, Error> {
    modulo(a, b, true)
}

fn modulo(a: &Value, b: &Value, tuple: bool) -> Result<Value, Error> {
    if a.is_undefined() || b.is_undefined() {
        return Err(Error::from(ErrorKind::UndefinedError));
    }
    let invalid = |message: String| Error::new(ErrorKind::InvalidOperation, message);
    if let Some(format) = a.as_str() {
        let args = serde_json::to_value(b).map_err(|e| {
            invalid(match super::jinja2::past_json(b) {
                Some(int) => super::jinja2::past_json_message(&int),
                None => e.to_string(),
            })
        })?;
        let args = match args {
            serde_json::Value::Array(items) if tuple => items,
            other => vec![other],
        };
        return match super::native::percent::format(format, &args, tuple) {
            Some(Ok(text)) => Ok(Value::from(text)),
            Some(Err(message)) => Err(invalid(message)),
            None => Err(invalid(format!(
                "adk-flow does not do this `%` formatting (`{format}`): it does `s r a d i u x X o f F e E g G` with flags, a width and a precision"
            ))),
        };
    }
    let number = |v: &Value| -> Option<Result<i128, f64>> {
        match v.kind() {
            ValueKind::Bool => Some(Ok(i128::from(v.is_true()))),
            ValueKind::Number if v.is_integer() => i128::try_from(v.clone()).ok().map(Ok),
            ValueKind::Number => f64::try_from(v.clone()).ok().map(Err),
            _ => None,
        }
    };
    let (Some(x), Some(y)) = (number(a), number(b)) else {
        return Err(invalid(format!(
            "unsupported operand type(s) for %: '{}' and '{}'",
            a.kind(),
            b.kind()
        )));
    };
    match (x, y) {
        (Ok(_), Ok(0)) => Err(invalid("integer modulo by zero".into())),
        (Ok(x), Ok(y)) => {
            // `i128::MIN % -1` overflows in Rust; in Python it is 0, as any x % -1.
            let r = x.checked_rem_euclid(y).unwrap_or(0);
            Ok(Value::from(if y < 0 && r != 0 { r + y } else { r }))
        }
        (x, y) => {
            let (x, y) = (float(x), float(y));
            if y == 0.0 {
                return Err(invalid("float modulo".into()));
            }
            let mut r = x % y;
            if r != 0.0 && (r < 0.0) != (y < 0.0) {
                r += y;
            } else if r == 0.0 {
                r = 0.0_f64.copysign(y);
            }
            Ok(Value::from(r))
        }
    }
}

/// An integer (`Ok`) or a float (`Err`) as a float.
fn float(n: Result<i128, f64>) -> f64 {
    match n {
        Ok(i) => i as f64,
        Err(f) => f,
    }
}

#[cfg(test)]
mod tests {
    use crate::template::jinja::Expression;
    use serde_json::json;

    #[test]
    fn tilde_and_percent_are_jinja2s_where_minijinja_evaluates() {
        // Each answer is what jinja2 3.1 gave (`trim` and float `-` keep these from the
        // native evaluator).
        let ctx =
            json!({"input": " go ", "state": {"f": 0.5, "n": -7, "l": [1.0, null], "t": true}});
        for (src, want) in [
            (
                "(input | trim) ~ state.f ~ state.t ~ none",
                json!("go0.5TrueNone"),
            ),
            (
                "(input | trim) ~ (state.l | string) ~ (true | string) ~ (none | string)",
                json!("go[1.0, None]TrueNone"),
            ),
            ("((input | trim) ~ 1e16) | upper", json!("GO1E+16")),
            (
                "'%s|%5.1f|%(x)s' % ((input | trim), state.f) if false else '%s-%s' % (input | trim, state.l)",
                json!("go-[1.0, None]"),
            ),
            (
                "'%(a)s=%(b).2e' % {'a': input | trim, 'b': state.f * 3}",
                json!("go=1.50e+00"),
            ),
            (
                "[state.n % 3, 7 % (0 - 3), (0.5 - 2) % 1, 5.5 % (0 - 2), (input | length) % 3, true % 2]",
                json!([2, -2, 0.5, -0.5, 1, 1]),
            ),
            (
                "'%s' % [1, 2] ~ ('%d%%' % (state.f * 100))",
                json!("[1, 2]50%"),
            ),
            (
                "(input | trim)[0:1] ~ state.l[0] ~ (state.n > 0) ~ ('x' if state.t else 'y')",
                json!("g1.0Falsex"),
            ),
            ("{'k': (input | trim) ~ 0.1}", json!({"k": "go0.1"})),
            ("'a' ~ 'b' | upper ~ 'c'", json!("aBc")),
            // The smallest i128 modulo -1 (overflows in Rust's `rem_euclid`).
            ("((0 - 2**126) * 2) % (0 - 1)", json!(0)),
        ] {
            let expr = Expression::compile(src).unwrap();
            assert_eq!(expr.eval(&ctx).unwrap(), want, "{src}");
        }
        // Strict undefined and Python's errors still hold.
        for src in [
            "(input | trim) ~ state.missing",
            "'%s %s' % (input | trim,)",
            "(input | trim) % 2 ~ ''",
            "state.n % 0",
            "[1] % (input | length)",
        ] {
            assert!(
                Expression::compile(src).unwrap().eval(&ctx).is_err(),
                "{src}"
            );
        }
        // A syntax error is the expression's as written.
        let err = Expression::compile("'a' ~ ~").unwrap_err().0;
        assert!(!err.contains("__py"), "{err}");
    }
}
