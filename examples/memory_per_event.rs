//! Memory per stored event in the in-memory session store (docs/performance.md).
//!
//! Creates `SESSIONS` sessions and commits `EVENTS` events to each, the four events of an
//! `a_tool` turn in turn (the user's question, the model's call to `add`, the tool's
//! response, the model's answer with its `output_key` delta), then reports the growth of
//! the process's resident memory (`VmRSS`) per event, and per session. As in the runtime,
//! the events of a turn share its invocation id, and an agent's events their author, and
//! JSON values are sized as the runtime sizes them: a scripted call's arguments copied by
//! `compact_map`, a tool's result passed through `compacted` and `FunctionResponse::body`,
//! the output key's delta inserted into an empty `stateDelta`, the model's finish reason
//! `STOP` on its two events.
//! Run it on a release
//! build: `cargo run --release --example memory_per_event [SESSIONS] [EVENTS]`
//! (default 1000 × 100).

use adk_flow::event::{
    Content, Event, FunctionCall, FunctionResponse, Part, Role, StateMap, compact_map, compacted,
    finish_reason, user_author,
};
use adk_flow::session::{InMemorySessionService, SessionHandle, SessionService};
use serde_json::{Value, json};
use std::sync::Arc;

/// The process's resident memory, KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Event `i` of an `a_tool` turn (a fresh id and timestamp each), by `agent` or the user.
fn event(invocation: &Arc<str>, agent: &Arc<str>, i: usize) -> Event {
    let invocation = Arc::clone(invocation);
    match i % 4 {
        0 => {
            let mut e = Event::new(invocation, user_author());
            e.content = Some(Content::text(Role::User, "what is 40 + 2?"));
            e
        }
        1 => {
            let mut e = Event::new(invocation, Arc::clone(agent));
            let call = FunctionCall {
                id: Some(format!("adk-{}", uuid::Uuid::new_v4())),
                args: Value::Object(compact_map(
                    json!({"a": 40, "b": 2}).as_object().expect("an object"),
                )),
                name: "add".to_owned(),
            };
            e.content = Some(Content::new(Role::Model, vec![Part::function_call(call)]));
            e.long_running_tool_ids = Some(Box::default());
            e.finish_reason = Some(finish_reason("STOP".to_owned()));
            e
        }
        2 => {
            let mut e = Event::new(invocation, Arc::clone(agent));
            let response = FunctionResponse {
                id: Some(format!("adk-{}", uuid::Uuid::new_v4())),
                name: "add".to_owned(),
                response: FunctionResponse::body(compacted(json!({"result": 42}))),
            };
            e.content = Some(Content::new(
                Role::User,
                vec![Part::function_response(response)],
            ));
            e
        }
        _ => {
            let mut e = Event::new(invocation, Arc::clone(agent));
            e.content = Some(Content::text(Role::Model, "The answer is 42."));
            e.finish_reason = Some(finish_reason("STOP".to_owned()));
            e.actions
                .state_delta
                .insert("answer".to_owned(), json!("The answer is 42."));
            e
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let sessions: usize = args.next().map_or(Ok(1000), |a| a.parse())?;
    let events: usize = args.next().map_or(Ok(100), |a| a.parse())?;
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    rt.block_on(async {
        let store = InMemorySessionService::new();
        let before = rss_kib();
        let mut handles: Vec<SessionHandle> = Vec::with_capacity(sessions);
        for _ in 0..sessions {
            handles.push(
                store
                    .create_session("anchor", "u1", None, StateMap::new())
                    .await?,
            );
        }
        let created = rss_kib();
        let agent: Arc<str> = Arc::from("calc");
        for h in &handles {
            let mut invocation: Arc<str> = Arc::from("");
            for i in 0..events {
                if i % 4 == 0 {
                    invocation = Arc::from(format!("e-{}", uuid::Uuid::new_v4()));
                }
                store.append_event(h, event(&invocation, &agent, i)).await?;
            }
        }
        let after = rss_kib();
        let n = (sessions * events) as f64;
        println!(
            "{sessions} sessions x {events} events: {:.0} B per session (empty), \
             {:.0} B = {:.2} KiB per stored event (VmRSS {before} -> {created} -> {after} KiB)",
            (created - before) as f64 * 1024.0 / sessions as f64,
            (after - created) as f64 * 1024.0 / n,
            (after - created) as f64 / n,
        );
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
