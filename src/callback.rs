//! Declarative callbacks: before/after agent, model and tool hooks written in YAML.
//!
//! A callback has an optional condition (a Jinja expression) and actions. The callbacks of
//! one hook run in list order; state writes accumulate and are visible to the callbacks
//! after them; the first callback that answers (`reply`, `block`, `result`) ends the list,
//! as the first non-None return does in ADK. `rewrite_args` and `redact` change what flows
//! through and let the list go on.

use crate::event::StateMap;
use crate::template::jinja;
use minijinja::{Environment, UndefinedBehavior};
use regex::Regex;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A callback that could not be evaluated.
#[derive(Debug, Clone, thiserror::Error)]
#[error("callback `{callback}`: {message}")]
pub struct CallbackError {
    /// The callback's name.
    pub callback: String,
    /// What failed.
    pub message: String,
}

/// One declared callback, ready to run.
#[derive(Debug)]
pub struct Callback {
    /// Its name under `define.callbacks`.
    pub name: String,
    /// Condition expression.
    pub when: Option<String>,
    /// State writes: key → value template.
    pub set_state: Vec<(String, String)>,
    /// Answer text template.
    pub reply: Option<String>,
    /// Tool block message template.
    pub block: Option<String>,
    /// Tool result (string leaves are templates).
    pub result: Option<Value>,
    /// Argument replacements (string leaves are templates).
    pub rewrite_args: Option<Map<String, Value>>,
    /// Text replacements.
    pub redact: Vec<(Regex, String)>,
}

/// What a hook decided.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Answer with this text (skip the agent or the model, or replace the reply).
    Reply(String),
    /// Do not call the tool; the model receives this error.
    Block(String),
    /// Use this tool result.
    Result(Value),
}

/// The outcome of running one hook's callbacks.
#[derive(Debug, Default)]
pub struct HookOutcome {
    /// State written by the callbacks that ran.
    pub state_delta: StateMap,
    /// The first answer, if any callback gave one.
    pub answer: Option<Answer>,
    /// Arguments after `rewrite_args` (before_tool), when any callback rewrote them.
    pub args: Option<Value>,
    /// Callbacks whose redactions apply to the reply or result, in order.
    pub redactors: Vec<Arc<Callback>>,
}

impl HookOutcome {
    /// Applies every redaction to a text.
    pub fn redact_text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for r in &self.redactors {
            out = r.redact_text(&out);
        }
        out
    }

    /// Applies every redaction to the strings of a JSON value.
    pub fn redact_value(&self, value: &Value) -> Value {
        let mut out = value.clone();
        for r in &self.redactors {
            out = r.redact_value(&out);
        }
        out
    }
}

/// The callbacks of each hook of one agent.
#[derive(Default, Clone)]
pub struct Hooks {
    /// before_agent_callbacks.
    pub before_agent: Vec<Arc<Callback>>,
    /// after_agent_callbacks.
    pub after_agent: Vec<Arc<Callback>>,
    /// before_model_callbacks.
    pub before_model: Vec<Arc<Callback>>,
    /// after_model_callbacks.
    pub after_model: Vec<Arc<Callback>>,
    /// before_tool_callbacks.
    pub before_tool: Vec<Arc<Callback>>,
    /// after_tool_callbacks.
    pub after_tool: Vec<Arc<Callback>>,
}

/// The facts a hook's expressions and templates can read.
#[derive(Debug, Clone, Default)]
pub struct HookContext {
    /// Session state (`temp:` included).
    pub state: StateMap,
    /// The agent's name.
    pub agent: String,
    /// The text of the message that started the invocation (ADK's
    /// `callback_context.user_content`, its text parts joined).
    pub message: Option<String>,
    /// after_model: the reply's text.
    pub text: Option<String>,
    /// Tool hooks: the tool's name.
    pub tool: Option<String>,
    /// Tool hooks: the call's arguments.
    pub args: Option<Value>,
    /// after_tool: the result.
    pub result: Option<Value>,
}

impl HookContext {
    /// The context of an agent or model hook: the agent and the state it sees.
    pub fn new(agent: &str, state: StateMap) -> Self {
        HookContext {
            state,
            agent: agent.to_owned(),
            ..HookContext::default()
        }
    }

    /// The same context with the text of the message that started the invocation.
    pub fn with_message(mut self, message: Option<String>) -> Self {
        self.message = message;
        self
    }

    /// The same context with the model's reply text (after_model).
    pub fn with_text(mut self, text: Option<String>) -> Self {
        self.text = text;
        self
    }

    /// The same context for a call of `tool` with `args` and, after the call, its
    /// `result` (tool hooks).
    pub fn with_call(mut self, tool: &str, args: &Value, result: Option<Value>) -> Self {
        self.tool = Some(tool.to_owned());
        self.args = Some(args.clone());
        self.result = result;
        self
    }

    fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("state".into(), Value::Object(self.state.clone()));
        m.insert("agent".into(), Value::String(self.agent.clone()));
        m.insert(
            "message".into(),
            Value::String(self.message.clone().unwrap_or_default()),
        );
        if let Some(t) = &self.text {
            m.insert("text".into(), Value::String(t.clone()));
        }
        if let Some(t) = &self.tool {
            m.insert("tool".into(), Value::String(t.clone()));
        }
        if let Some(a) = &self.args {
            m.insert("args".into(), a.clone());
        }
        if let Some(r) = &self.result {
            m.insert("result".into(), r.clone());
        }
        Value::Object(m)
    }
}

impl Callback {
    fn err(&self, message: impl Into<String>) -> CallbackError {
        CallbackError {
            callback: self.name.clone(),
            message: message.into(),
        }
    }

    fn holds(&self, ctx: &Value) -> Result<bool, CallbackError> {
        let Some(expr) = &self.when else {
            return Ok(true);
        };
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Chainable);
        let compiled = env
            .compile_expression(expr)
            .map_err(|e| self.err(format!("`when: {expr}`: {e}")))?;
        let value = compiled
            .eval(minijinja::Value::from(minijinja::value::Serde(ctx)))
            .map_err(|e| self.err(format!("`when: {expr}`: {e}")))?;
        Ok(value.is_true())
    }

    fn render(&self, template: &str, ctx: &Value) -> Result<String, CallbackError> {
        jinja::render(template, ctx).map_err(|e| self.err(e.0))
    }

    /// Applies the callback's redactions to a text.
    pub fn redact_text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (re, with) in &self.redact {
            out = re.replace_all(&out, with.as_str()).into_owned();
        }
        out
    }

    /// Applies the callback's redactions to every string of a JSON value.
    pub fn redact_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.redact_text(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.redact_value(v)).collect())
            }
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), self.redact_value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Runs one hook's callbacks in order against `ctx`.
///
/// # Errors
/// A condition or template that cannot be evaluated.
pub fn run_hook(
    callbacks: &[Arc<Callback>],
    mut ctx: HookContext,
) -> Result<HookOutcome, CallbackError> {
    let mut out = HookOutcome::default();
    for cb in callbacks {
        let value = ctx.to_value();
        if !cb.holds(&value)? {
            continue;
        }
        for (k, t) in &cb.set_state {
            let v = Value::String(cb.render(t, &value)?);
            ctx.state.insert(k.clone(), v.clone());
            out.state_delta.insert(k.clone(), v);
        }
        let value = ctx.to_value();
        if let Some(rewrites) = &cb.rewrite_args {
            let mut args = match ctx.args.take() {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            for (k, t) in rewrites {
                let v = jinja::render_value(t, &value).map_err(|e| cb.err(e.0))?;
                args.insert(k.clone(), v);
            }
            ctx.args = Some(Value::Object(args));
            out.args = ctx.args.clone();
        }
        if !cb.redact.is_empty() {
            ctx.text = ctx.text.as_deref().map(|t| cb.redact_text(t));
            ctx.result = ctx.result.as_ref().map(|r| cb.redact_value(r));
            out.redactors.push(Arc::clone(cb));
        }
        let value = ctx.to_value();
        if let Some(t) = &cb.reply {
            out.answer = Some(Answer::Reply(cb.render(t, &value)?));
            return Ok(out);
        }
        if let Some(t) = &cb.block {
            out.answer = Some(Answer::Block(cb.render(t, &value)?));
            return Ok(out);
        }
        if let Some(r) = &cb.result {
            let v = jinja::render_value(r, &value).map_err(|e| cb.err(e.0))?;
            out.answer = Some(Answer::Result(v));
            return Ok(out);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cb(name: &str, when: Option<&str>) -> Callback {
        Callback {
            name: name.into(),
            when: when.map(str::to_owned),
            set_state: vec![],
            reply: None,
            block: None,
            result: None,
            rewrite_args: None,
            redact: vec![],
        }
    }

    fn state(v: Value) -> StateMap {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn first_answer_wins_and_state_flows_forward() {
        let mut a = cb("a", None);
        a.set_state = vec![("seen".into(), "yes".into())];
        let mut b = cb("b", Some("state.seen == 'yes'"));
        b.reply = Some("hello {{ agent }}".into());
        let mut c = cb("c", None);
        c.reply = Some("never".into());
        let out = run_hook(
            &[Arc::new(a), Arc::new(b), Arc::new(c)],
            HookContext {
                agent: "desk".into(),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(out.answer, Some(Answer::Reply("hello desk".into())));
        assert_eq!(Value::Object(out.state_delta), json!({"seen": "yes"}));
    }

    #[test]
    fn conditions_read_tool_args_and_missing_state_is_falsy() {
        let mut block = cb(
            "big_refunds",
            Some("tool == 'refund' and args.amount > 100"),
        );
        block.block = Some("refunds over 100 need a human (asked {{ args.amount }})".into());
        let hooks = [Arc::new(block)];
        let ctx = |amount| HookContext {
            tool: Some("refund".into()),
            args: Some(json!({ "amount": amount })),
            state: state(json!({})),
            ..Default::default()
        };
        assert_eq!(run_hook(&hooks, ctx(50)).unwrap().answer, None);
        assert_eq!(
            run_hook(&hooks, ctx(500)).unwrap().answer,
            Some(Answer::Block(
                "refunds over 100 need a human (asked 500)".into()
            ))
        );
        let mut gold = cb("gold", Some("state['user:tier'] == 'gold'"));
        gold.reply = Some("vip".into());
        assert_eq!(
            run_hook(&[Arc::new(gold)], HookContext::default())
                .unwrap()
                .answer,
            None
        );
    }

    #[test]
    fn rewrites_and_redactions_pass_through() {
        let mut rw = cb("cap", None);
        rw.rewrite_args = Some(json!({"amount": 100}).as_object().cloned().unwrap());
        let out = run_hook(
            &[Arc::new(rw)],
            HookContext {
                args: Some(json!({"amount": 500, "id": "x"})),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(out.args, Some(json!({"amount": 100, "id": "x"})));
        assert_eq!(out.answer, None);
        let mut red = cb("cards", None);
        red.redact = vec![(
            Regex::new(r"\b\d{4} \d{4} \d{4} \d{4}\b").unwrap(),
            "[card]".into(),
        )];
        let out = run_hook(
            &[Arc::new(red)],
            HookContext {
                text: Some("card 1234 5678 9012 3456 ok".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(out.answer, None);
        assert_eq!(
            out.redact_text("card 1234 5678 9012 3456 ok"),
            "card [card] ok"
        );
    }

    #[test]
    fn a_broken_condition_is_an_error_naming_the_callback() {
        let bad = cb("oops", Some("state.x =="));
        let err = run_hook(&[Arc::new(bad)], HookContext::default()).unwrap_err();
        assert_eq!(err.callback, "oops");
    }
}
