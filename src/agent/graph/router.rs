//! An `adk_flow.Router` node run: its expressions evaluated against the node's input and
//! the state as the node starts, natively when they can be, by minijinja otherwise.

use super::NodeRun;
use super::info::{self, Kind};
use super::node::{Outcome, failure, node_event};
use super::output::{Output, contents_as_text, holds_content};
use crate::event::{Event, StateMap};
use crate::invocation::InvocationContext;
use crate::template::jinja::{Context, Expression, Lookup, Reads, reads, reads_any};
use crate::tree::Router;
use serde_json::Value;
use std::sync::Arc;

/// An `adk_flow.Router` named `name`: one event with its route, output and state.
///
/// The route and the output move into the event (the outcome shares the event for both,
/// see [`Outcome::route`] and [`super::node::Output::Event`]). The event is made in its
/// `Arc` first and the expressions' values go straight into it, rather than being
/// returned up through the evaluation and moved in afterwards.
pub(super) fn router(
    ctx: &InvocationContext,
    router: &Router,
    name: &str,
    run: &mut NodeRun,
) -> (Arc<Event>, Outcome) {
    let mut shared = Arc::new(node_event(ctx, run, Kind::Plain));
    // Just made: not shared, nothing is cloned.
    let event = Arc::make_mut(&mut shared);
    if let Err(message) = evaluate(ctx, router, name, run, event) {
        let event = Arc::new(failure(ctx, run, "RouterError", message));
        let outcome = Outcome::failed(&event);
        return (event, outcome);
    }
    if event.output.is_some() {
        event.node_info = Some(info::of(run, Kind::Output));
    }
    (shared, Outcome::in_event(run))
}

/// The state keys an expression evaluated natively reads.
struct Keys<'a>(Option<&'a crate::session::Session>);

impl Lookup for Keys<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        let s = self.0?;
        small_get(&s.temp_state, key).or_else(|| small_get(&s.state, key))
    }
}

/// `map.get(key)`. The few keys of a workflow's usual state are compared one by one
/// rather than the key hashed: SipHash costs more than comparing eight short keys.
fn small_get<'a>(map: &'a StateMap, key: &str) -> Option<&'a Value> {
    if map.len() > 8 {
        return map.get(key);
    }
    map.iter().find_map(|(k, v)| (k == key).then_some(v))
}

/// A Router's variables, read straight from the session (no copy of its state); those
/// its expressions do not read are left out.
#[derive(serde::Serialize)]
struct Vars<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<StateView<'a>>,
}

/// The state as the node starts: the session's, and the invocation's `temp:` keys; only
/// `keys` when they are given.
struct StateView<'a> {
    session: &'a crate::session::Session,
    keys: Option<&'a [&'a str]>,
}

impl serde::Serialize for StateView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let session = self.session;
        let mut map = s.serialize_map(None)?;
        if let Some(keys) = self.keys {
            for k in keys {
                if let Some(v) = session.temp_state.get(*k).or_else(|| session.state.get(*k)) {
                    map.serialize_entry(k, v)?;
                }
            }
            return map.end();
        }
        for (k, v) in &session.state {
            if !session.temp_state.contains_key(k) {
                map.serialize_entry(k, v)?;
            }
        }
        for (k, v) in &session.temp_state {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Sets `event`'s route, output and state delta to the Router's, or fails with `NODE:
/// FIELD: REASON` (the event is then dropped). Each expression is evaluated natively when
/// it can be ([`Expression::eval_native`]), by minijinja otherwise, its context then
/// converted once for the rest. Without an `output` expression the output is the input,
/// taken from the run once the expressions are done.
fn evaluate(
    ctx: &InvocationContext,
    router: &Router,
    node: &str,
    run: &mut NodeRun,
    event: &mut Event,
) -> Result<(), String> {
    let exprs = || {
        std::iter::once(&router.route)
            .chain(router.output.as_ref())
            .chain(router.state.iter().map(|(_, e)| e))
    };
    let session = router.reads_state().then(|| ctx.session().lock());
    let session = session.as_deref();
    let lookup = Keys(session);
    // A Content (the user's message, alone or in a JoinNode's mapping) reads as its text.
    let converted = match &mut run.input {
        // An LLM node's reply is a text too: moved out of the run, as the output it also is.
        Some(Output::User(text) | Output::Text(text)) => Some(Value::String(std::mem::take(text))),
        Some(output) => output
            .value()
            .filter(|v| holds_content(v))
            .map(contents_as_text),
        None => None,
    };
    let own_input = run.input.as_ref().and_then(Output::value);
    let run_input = converted.as_ref().or(own_input);
    let input = run_input.unwrap_or(&Value::Null);
    let mut vars: Option<Context> = None;
    let mut eval = |expr: &Expression| {
        if let Some(v) = expr.eval_native(input, &lookup) {
            return v;
        }
        let vars = vars.get_or_insert_with(|| {
            let input = reads_any(exprs(), "input").then_some(input);
            let reads_state = reads(exprs(), "state");
            let keys = match &reads_state {
                Reads::Keys(keys) => Some(keys.as_slice()),
                _ => None,
            };
            let state = session.map(|session| StateView { session, keys });
            Context::new(&Vars { input, state })
        });
        expr.eval_in(vars)
    };
    let route = eval(&router.route).map_err(|e| format!("{node}: route: {e}"))?;
    event.actions.route = match route {
        Value::Null => None,
        Value::Array(items) => {
            if let Some(bad) = items.iter().find(|v| !is_label(v)) {
                return Err(format!(
                    "{node}: route: `{bad}` in the list is not a label (a string, an integer or a boolean)"
                ));
            }
            Some(Box::new(Value::Array(items)))
        }
        v if is_label(&v) => Some(Box::new(v)),
        other => {
            return Err(format!(
                "{node}: route: `{other}` is not a label (a string, an integer, a boolean, a list of them, or none)"
            ));
        }
    };
    if let Some(expr) = &router.output {
        match eval(expr).map_err(|e| format!("{node}: output: {e}"))? {
            Value::Null => {}
            v => event.output = Some(Box::new(v)),
        }
    }
    // Into the event's own delta, which keeps one key without a map.
    for (key, expr) in &router.state {
        let v = eval(expr).map_err(|e| format!("{node}: state.{key}: {e}"))?;
        event.actions.state_delta.insert(key.clone(), v);
    }
    if router.output.is_none() {
        let output = match converted {
            Some(converted) => Some(converted),
            None => run.input.take().map(Output::into_value),
        };
        event.output = output.filter(|v| !v.is_null()).map(Box::new);
    }
    Ok(())
}

fn is_label(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Bool(_)) || v.as_i64().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_key_is_found_in_a_small_state_as_in_a_large_one() {
        // Up to 8 keys are compared one by one, more are looked up by hash.
        for n in [0, 1, 2, 8, 9, 20] {
            let state: StateMap = (0..n).map(|i| (format!("k{i}"), Value::from(i))).collect();
            for i in 0..n {
                assert_eq!(small_get(&state, &format!("k{i}")), Some(&Value::from(i)));
            }
            assert_eq!(small_get(&state, "k"), None);
            assert_eq!(small_get(&state, &format!("k{n}")), None);
        }
    }
}
