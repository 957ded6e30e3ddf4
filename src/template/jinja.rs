//! Jinja templates (minijinja, strict undefined) for declared tools: URLs, headers, bodies,
//! command arguments and state values are rendered from the call's arguments and state.
//!
//! The context holds every argument at the top level, plus `args` (all arguments) and
//! `state` (session state, prefixes kept: `state['user:lang']`).
//!
//! In a URL ([`render_url`]) every `{{ }}` value is percent-encoded (all but ASCII letters,
//! digits and `-._~`), so a value is one path segment or one query value and can never
//! add a `/`, `?`, `#`, `@` or `&`; `| safe` marks a value the author means as URL syntax.

use minijinja::{Environment, UndefinedBehavior};
use serde_json::{Map, Value};

/// A template that failed to render, worded for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RenderError(pub String);

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env
}

/// Like [`environment`], but every `{{ }}` output not marked `| safe` is
/// percent-encoded.
fn url_environment() -> Environment<'static> {
    let mut env = environment();
    env.set_formatter(|out, _state, value| {
        let text = value.to_string();
        if value.is_safe() {
            out.write_str(&text)?;
        } else {
            out.write_str(&percent_encode(&text))?;
        }
        Ok(())
    });
    env
}

/// Every byte but ASCII letters, digits and `-._~` (RFC 3986's unreserved set) as `%XX`.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The context of a tool call's templates.
pub fn context(args: &Value, state: Map<String, Value>) -> Value {
    let mut ctx = match args {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    ctx.insert("args".into(), args.clone());
    ctx.insert("state".into(), Value::Object(state));
    Value::Object(ctx)
}

/// Renders one template against a context. Plain text without `{{`/`{%` is returned as is.
///
/// # Errors
/// Undefined names and template errors, with the template's own message.
pub fn render(template: &str, ctx: &Value) -> Result<String, RenderError> {
    if !template.contains("{{") && !template.contains("{%") {
        return Ok(template.to_owned());
    }
    let env = environment();
    env.render_str(
        template,
        minijinja::Value::from(minijinja::value::Serde(ctx)),
    )
    .map_err(|e| RenderError(format!("template `{template}`: {e}")))
}

/// Renders a URL template: like [`render`], with every `{{ }}` value percent-encoded
/// unless it is marked `| safe`.
///
/// # Errors
/// Undefined names and template errors, with the template's own message.
pub fn render_url(template: &str, ctx: &Value) -> Result<String, RenderError> {
    if !template.contains("{{") && !template.contains("{%") {
        return Ok(template.to_owned());
    }
    url_environment()
        .render_str(
            template,
            minijinja::Value::from(minijinja::value::Serde(ctx)),
        )
        .map_err(|e| RenderError(format!("template `{template}`: {e}")))
}

/// Renders every string leaf of a JSON value.
///
/// # Errors
/// The first template that fails.
pub fn render_value(value: &Value, ctx: &Value) -> Result<Value, RenderError> {
    Ok(match value {
        Value::String(s) => Value::String(render(s, ctx)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render_value(v, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), render_value(v, ctx)?)))
                .collect::<Result<_, RenderError>>()?,
        ),
        other => other.clone(),
    })
}

/// The syntax error of a template, if it has one.
pub fn syntax_error(template: &str) -> Option<String> {
    if !template.contains("{{") && !template.contains("{%") {
        return None;
    }
    let env = environment();
    env.template_from_str(template)
        .err()
        .map(|e| format!("template syntax error: {e}"))
}

/// The syntax error of an expression (`when:` conditions), if it has one.
pub fn expression_error(expr: &str) -> Option<String> {
    let env = environment();
    env.compile_expression(expr).err().map(|e| e.to_string())
}

/// The environment compiled expressions live in: strict undefined, built once.
fn expression_environment() -> &'static Environment<'static> {
    static ENV: std::sync::OnceLock<Environment<'static>> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = environment();
        env.add_filter("int", super::jinja2::int);
        env.add_filter("last", super::jinja2::last);
        env.add_filter("string", super::jinja2::string);
        env.add_filter(super::pyops::PY_STR, super::pyops::py_str);
        env.add_filter(super::pyops::PY_MOD, super::pyops::py_mod);
        env.add_filter(super::pyops::PY_MOD_TUPLE, super::pyops::py_mod_tuple);
        env
    })
}

/// The variables of expressions, converted once from JSON.
pub struct Context(minijinja::Value);

impl Context {
    /// The context of the keys of anything that serializes as a map.
    pub fn new<T: serde::Serialize>(vars: &T) -> Context {
        Context(minijinja::Value::from(minijinja::value::Serde(vars)))
    }
}

/// Where an expression evaluated natively reads `state.KEY`.
pub trait Lookup {
    /// The key's value; `None`: not set.
    fn get(&self, key: &str) -> Option<&Value>;
}

impl Lookup for Map<String, Value> {
    fn get(&self, key: &str) -> Option<&Value> {
        Map::get(self, key)
    }
}

/// A Jinja expression compiled once (strict undefined), evaluated many times.
pub struct Expression {
    source: String,
    compiled: minijinja::Expression<'static, 'static>,
    /// The variables it reads, as minijinja names them: `input`, `state.attempts`
    /// (an attribute chain), `state` (any other use); sorted.
    reads: Vec<String>,
    /// Its value, when it reads no variable: folded when it is compiled.
    constant: Option<Value>,
    /// Its native form, when it has one ([`super::native`]).
    native: Option<super::native::Expr>,
    /// It may name a Python dict method: its contexts' mappings get them
    /// ([`super::pydict`]).
    python_dicts: bool,
}

/// What some expressions read of one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reads<'a> {
    /// Nothing: the variable can be left out of their context.
    Nothing,
    /// Only these keys, through attribute lookups (`state.attempts`): the variable can
    /// hold these keys only.
    Keys(Vec<&'a str>),
    /// The whole value.
    Whole,
}

/// Whether any of `exprs` reads the variable `var` (what [`reads`] tells, without
/// listing keys).
pub fn reads_any<'a>(exprs: impl IntoIterator<Item = &'a Expression>, var: &str) -> bool {
    exprs.into_iter().any(|expr| {
        expr.reads.iter().any(|path| {
            path.strip_prefix(var)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        })
    })
}

/// What `exprs` read of the variable `var`.
pub fn reads<'a>(exprs: impl IntoIterator<Item = &'a Expression>, var: &str) -> Reads<'a> {
    let mut keys = Vec::new();
    for expr in exprs {
        for path in &expr.reads {
            let Some(rest) = path.strip_prefix(var) else {
                continue;
            };
            if rest.is_empty() {
                return Reads::Whole;
            }
            if let Some(rest) = rest.strip_prefix('.') {
                let key = rest.split('.').next().unwrap_or(rest);
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
    }
    if keys.is_empty() {
        Reads::Nothing
    } else {
        Reads::Keys(keys)
    }
}

impl std::fmt::Debug for Expression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Expression").field(&self.source).finish()
    }
}

impl Expression {
    /// Compiles an expression.
    ///
    /// # Errors
    /// Its syntax error.
    pub fn compile(source: &str) -> Result<Expression, RenderError> {
        let python_dicts = super::pydict::mentions(source);
        let written = super::pydict::rewrite(source);
        // `~` and `%` as jinja2 computes them (see `pyops`); a syntax error is the
        // expression's as written.
        let compiled = match super::pyops::rewrite(&written)
            .and_then(|text| expression_environment().compile_expression_owned(text).ok())
        {
            Some(compiled) => compiled,
            None => expression_environment()
                .compile_expression_owned(written.into_owned())
                .map_err(|e| RenderError(e.to_string()))?,
        };
        let mut reads: Vec<String> = compiled.undeclared_variables(true).into_iter().collect();
        // minijinja does not see the variable a slice is taken of (`input[1:]`).
        for name in super::jinja2::sliced_names(source) {
            if !reads.contains(&name) {
                reads.push(name);
            }
        }
        reads.sort();
        let mut expr = Expression {
            source: source.to_owned(),
            compiled,
            reads,
            constant: None,
            native: if python_dicts {
                None
            } else {
                super::native::parse(source)
            },
            python_dicts,
        };
        if expr.reads.is_empty() {
            // Nothing to read (`none`, `'done'`): its value is the same every time. One
            // that fails is evaluated each time, so that it fails each time.
            // Natively first: it writes floats as Python does (`'f' ~ 0.00001`).
            let empty = Map::new();
            expr.constant = match expr
                .native
                .as_ref()
                .and_then(|n| n.eval(&super::native::Scope::new(&Value::Null, &empty)))
            {
                Some(Ok(value)) => Some(value),
                // jinja2's error (`1 < 'a'`): evaluated natively each time, failing.
                Some(Err(_)) => None,
                None => expr.eval_in(&Context::new(&empty)).ok(),
            };
        }
        Ok(expr)
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates without minijinja when the expression and the values it meets allow it:
    /// `input` is the node's input (`null`: none), `state` looks a state key up. An error
    /// is jinja2's where minijinja would answer (`1 < 'a'`). `None`: evaluate it with
    /// minijinja ([`Expression::eval_in`]), which may fail.
    // Inlined into the Router's evaluation: out of line, its own cost was moving the
    // 80-byte result from one layer's return slot to the next.
    #[inline]
    pub fn eval_native(
        &self,
        input: &Value,
        state: &dyn Lookup,
    ) -> Option<Result<Value, RenderError>> {
        if let Some(value) = &self.constant {
            return Some(Ok(value.clone()));
        }
        self.native
            .as_ref()?
            .eval(&super::native::Scope::new(input, state))
            .map(|r| r.map_err(RenderError))
    }

    /// Evaluates against a JSON context; `none` is `null`.
    ///
    /// # Errors
    /// A missing variable, key or attribute (outside `default` and `defined`), any other
    /// evaluation error, a result that is undefined or has no JSON form.
    pub fn eval(&self, ctx: &Value) -> Result<Value, RenderError> {
        self.eval_in(&Context::new(ctx))
    }

    /// [`Expression::eval`] against a context converted once for several expressions.
    ///
    /// # Errors
    /// As [`Expression::eval`].
    pub fn eval_in(&self, ctx: &Context) -> Result<Value, RenderError> {
        if let Some(value) = &self.constant {
            return Ok(value.clone());
        }
        let vars = if self.python_dicts {
            super::pydict::wrap(ctx.0.clone())
        } else {
            ctx.0.clone()
        };
        let value = self
            .compiled
            .eval(vars)
            .map_err(|e| RenderError(strict_message(&e)))?;
        if value.is_undefined() {
            return Err(RenderError("the result is undefined".into()));
        }
        if let Some(method) = super::pydict::method_in(&value) {
            return Err(RenderError(format!(
                "the result is not a JSON value: it holds the method `{method}` of a Python dict (write x['{method}'] for the key)"
            )));
        }
        // Why a value has no JSON form: an integer past JSON's, or serde's own reason.
        let no_json = |detail: Option<String>| {
            RenderError(match super::jinja2::past_json(&value) {
                Some(int) => super::jinja2::past_json_message(&int),
                None => detail.unwrap_or_else(|| "the result has no JSON form".into()),
            })
        };
        if super::jinja2::has_other_keys(&value) {
            // A mapping with keys that are not text, as a Python dict has them.
            super::jinja2::json_with_python_keys(&value)
                .map_err(RenderError)?
                .ok_or_else(|| no_json(None))
        } else {
            serde_json::to_value(&value).map_err(|e| no_json(Some(e.to_string())))
        }
    }
}

/// A minijinja error's message without its `(in <expression>:1)` suffix.
fn strict_message(e: &minijinja::Error) -> String {
    let mut text = e.kind().to_string();
    if let Some(detail) = e.detail() {
        text.push_str(": ");
        text.push_str(detail);
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn expressions_know_what_they_read() {
        use super::{Expression, Reads, reads};
        let route = Expression::compile("'done' if 'FINAL' in input else 'retry'").unwrap();
        let count = Expression::compile("(state.attempts | default(0)) + 1").unwrap();
        let whole = Expression::compile("state['user:lang']").unwrap();
        let none = Expression::compile("none").unwrap();
        assert_eq!(reads([&route, &count], "input"), Reads::Whole);
        assert_eq!(
            reads([&route, &count], "state"),
            Reads::Keys(vec!["attempts"])
        );
        assert_eq!(reads([&count, &whole], "state"), Reads::Whole);
        assert_eq!(reads([&none], "state"), Reads::Nothing);
        // What is sliced is read too (minijinja's own list leaves it out).
        let sliced = Expression::compile("input[1:] ~ state.s['a:'][:2]").unwrap();
        assert_eq!(reads([&sliced], "input"), Reads::Whole);
        assert_eq!(reads([&sliced], "state"), Reads::Whole);
        assert_eq!(reads([&sliced], "s"), Reads::Nothing);
        for var in ["input", "state", "stat", "states"] {
            for exprs in [vec![&route, &count], vec![&count, &whole], vec![&none]] {
                assert_eq!(
                    super::reads_any(exprs.iter().copied(), var),
                    reads(exprs.iter().copied(), var) != Reads::Nothing
                );
            }
        }
        // Folded at compile; one that fails still fails each time.
        assert_eq!(none.constant, Some(serde_json::Value::Null));
        let cat = Expression::compile("'f' ~ 0.00001 ~ 2.5").unwrap();
        assert_eq!(cat.constant, Some(serde_json::json!("f1e-052.5")));
        let bad = Expression::compile("1 + 'a'").unwrap();
        assert!(bad.constant.is_none());
        assert!(bad.eval(&serde_json::json!({})).is_err());
    }

    #[test]
    fn mappings_with_keys_that_are_not_text_are_python_dicts() {
        use super::Expression;
        let eval = |src: &str| {
            Expression::compile(src)
                .unwrap()
                .eval(&serde_json::json!({"input": "x"}))
        };
        // One key for 1, 1.0 and true (the first's place and spelling, the last value);
        // keys as pydantic writes them in ADK's events.
        let v = eval(
            "{1: 'a', 'k': input, 1.0: 'b', true: 'c', 2.5: 'd', none: 'e', false: 'f', 0: 'g'}",
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"1":"c","k":"x","2.5":"d","None":"e","false":"g"}"#
        );
        let nested = eval("[{'a': {3: [{1e20: none}]}}]").unwrap();
        assert_eq!(nested, serde_json::json!([{"a": {"3": [{"1e+20": null}]}}]));
        // A key Python cannot hash is an error, not a key.
        let bad = eval("{[1]: 2}").unwrap_err();
        assert!(bad.0.contains("dict key"), "{}", bad.0);
    }

    #[test]
    fn compiled_expressions_are_strict() {
        use super::Expression;
        let ctx = serde_json::json!({"input": "a FINAL", "state": {"n": 1}});
        let e = Expression::compile("'done' if 'FINAL' in input else 'again'").unwrap();
        assert_eq!(e.eval(&ctx).unwrap(), "done");
        let e = Expression::compile("(state.attempts | default(0)) + 1").unwrap();
        assert_eq!(e.eval(&ctx).unwrap(), 1);
        assert!(
            Expression::compile("state.missing + 1")
                .unwrap()
                .eval(&ctx)
                .is_err()
        );
        assert!(
            Expression::compile("state.missing")
                .unwrap()
                .eval(&ctx)
                .is_err()
        );
        assert_eq!(
            Expression::compile("none").unwrap().eval(&ctx).unwrap(),
            serde_json::Value::Null
        );
        assert!(Expression::compile("'a' if").is_err());
        // Mappings keep the order they are written in, as Python's dicts do.
        let e = Expression::compile("{'b': 1, 'a': state.n}").unwrap();
        assert_eq!(e.eval(&ctx).unwrap().to_string(), r#"{"b":1,"a":1}"#);
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn renders_args_and_state_strictly() {
        let mut state = Map::new();
        state.insert("user:lang".into(), json!("fr"));
        let ctx = context(&json!({"order_id": "42"}), state);
        assert_eq!(
            render("/orders/{{ order_id }}?l={{ state['user:lang'] }}", &ctx).unwrap(),
            "/orders/42?l=fr"
        );
        assert_eq!(render("{{ args.order_id }}", &ctx).unwrap(), "42");
        let err = render("{{ missing }}", &ctx).unwrap_err();
        assert!(err.0.contains("undefined"), "{err}");
        assert_eq!(render("<b>&</b>", &ctx).unwrap(), "<b>&</b>");
        assert_eq!(
            render_value(&json!({"id": "{{ order_id }}", "n": 1}), &ctx).unwrap(),
            json!({"id": "42", "n": 1})
        );
    }

    #[test]
    fn url_values_are_one_segment_each() {
        let ctx = context(
            &json!({"id": "../admin?x=1#frag", "q": "a b&c=d/é", "n": 7, "base": "/v2/x"}),
            Map::new(),
        );
        assert_eq!(
            render_url("http://h/orders/{{ id }}?q={{ q }}&n={{ n }}", &ctx).unwrap(),
            "http://h/orders/..%2Fadmin%3Fx%3D1%23frag?q=a%20b%26c%3Dd%2F%C3%A9&n=7"
        );
        // The author can mark a value as URL syntax.
        assert_eq!(
            render_url("http://h{{ base | safe }}", &ctx).unwrap(),
            "http://h/v2/x"
        );
        assert_eq!(render_url("http://h/a", &ctx).unwrap(), "http://h/a");
    }
}
