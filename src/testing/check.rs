//! The checks of one turn.

use super::{Expect, ExpectedCall, TextCheck};
use crate::event::Event;
use crate::pyrepr::{json_dumps, py_str};
use crate::session::SessionHandle;
use serde_json::Value;
use std::sync::Arc;

fn text_ok(check: &TextCheck, text: &str) -> Result<(), String> {
    match check {
        TextCheck::Equals(want) if text == want => Ok(()),
        TextCheck::Equals(want) => Err(format!("final text: expected {want:?}, got {text:?}")),
        TextCheck::Contains(want) if text.contains(want.as_str()) => Ok(()),
        TextCheck::Contains(want) => Err(format!(
            "final text: expected it to contain {want:?}, got {text:?}"
        )),
        TextCheck::Regex(re) => match regex::Regex::new(re) {
            Ok(r) if r.is_match(text) => Ok(()),
            Ok(_) => Err(format!(
                "final text: expected a match for /{re}/, got {text:?}"
            )),
            Err(e) => Err(format!("final text: invalid regex /{re}/: {e}")),
        },
    }
}

/// What an event said, for `final_text`: its text, or, for a workflow node with an
/// `output` and no text (a Router, a JoinNode), that output as the next LLM node would
/// read it: a string as it is, a mapping or list as Python's `json.dumps`, a number or
/// boolean as Python's `str()`.
fn said(e: &Event) -> Option<String> {
    if let Some(t) = e.text().filter(|t| !t.is_empty()) {
        return Some(t);
    }
    match e.output.as_deref()? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        v @ (Value::Object(_) | Value::Array(_)) => Some(json_dumps(v)),
        v => Some(py_str(v)),
    }
}

fn args_match(want: &ExpectedCall, got: &crate::event::FunctionCall) -> bool {
    want.name == got.name
        && want
            .args
            .iter()
            .flatten()
            .all(|(k, v)| got.args.get(k) == Some(v))
}

/// Every failed expectation of a turn, worded for the report.
pub(crate) fn check_turn(
    expect: &Expect,
    events: &[Arc<Event>],
    session: &SessionHandle,
) -> Vec<String> {
    let mut failures = Vec::new();
    if let Some(check) = &expect.final_text {
        let text = events
            .iter()
            .rev()
            .filter(|e| !e.is_partial() && !e.is_from_user())
            .find_map(|e| said(e));
        match text {
            Some(t) => {
                if let Err(f) = text_ok(check, &t) {
                    failures.push(f);
                }
            }
            None => failures.push("final text: no agent or workflow node said anything".into()),
        }
    }
    if let Some(state) = &expect.state {
        for (k, want) in state {
            let got = session.get_state(k);
            let ok = match (want, &got) {
                (Value::Null, None) => true,
                (w, Some(g)) => w == g,
                _ => false,
            };
            if !ok {
                let got = got.map_or_else(|| "absent".to_owned(), |g| g.to_string());
                failures.push(format!("state `{k}`: expected {want}, got {got}"));
            }
        }
    }
    if let Some(want) = &expect.authors {
        let mut got: Vec<&str> = Vec::new();
        for e in events.iter().filter(|e| !e.is_partial()) {
            if got.last() != Some(&&*e.author) {
                got.push(&e.author);
            }
        }
        if got != want.iter().map(String::as_str).collect::<Vec<_>>() {
            failures.push(format!("authors: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = &expect.tool_calls {
        let got: Vec<&crate::event::FunctionCall> = events
            .iter()
            .filter(|e| !e.is_partial())
            .flat_map(|e| e.function_calls())
            .collect();
        let matches =
            got.len() == want.len() && want.iter().zip(&got).all(|(w, g)| args_match(w, g));
        if !matches {
            let got: Vec<String> = got
                .iter()
                .map(|c| format!("{}({})", c.name, c.args))
                .collect();
            let want: Vec<String> = want
                .iter()
                .map(|c| match &c.args {
                    Some(a) => format!("{}({})", c.name, Value::Object(a.clone())),
                    None => c.name.clone(),
                })
                .collect();
            failures.push(format!("tool calls: expected {want:?}, got {got:?}"));
        }
    }
    let error = events
        .iter()
        .rev()
        .find_map(|e| e.error_code().map(Box::<str>::from));
    match (&expect.error, &error) {
        (Some(want), Some(got)) if **want == **got => {}
        (Some(want), got) => failures.push(format!(
            "error: expected {want}, got {}",
            got.as_deref().unwrap_or("none")
        )),
        (None, _) => {}
    }
    failures
}
