//! ADK's rule for cutting a run's events into invocations (evaluation_generator.py's
//! `convert_events_to_eval_invocations`): events are grouped by invocation id in order;
//! the user's event gives `user_content`; the final response is the content of the
//! **last** non-user event that is a final response; every other non-user event with a
//! call, a response or text is intermediate. So `transfer_to_agent` calls count as tool
//! calls, a SequentialAgent's earlier texts are intermediate, and the calls of a final
//! event (a long-running or skip-summarization call) vanish from the trajectory, as in ADK.

use super::types::{GenaiContent, IntermediateData, Invocation, InvocationEvent, InvocationEvents};
use crate::event::Event;
use serde_json::Value;
use std::collections::HashMap;

/// Converts events (the user's included) into invocations; `app_details` per invocation
/// id is attached when given.
pub fn from_events(events: &[&Event], app_details: &HashMap<String, Value>) -> Vec<Invocation> {
    let mut order: Vec<&str> = Vec::new();
    let mut groups: HashMap<&str, Vec<&Event>> = HashMap::new();
    for e in events {
        let id: &str = &e.invocation_id;
        groups
            .entry(id)
            .or_insert_with(|| {
                order.push(id);
                Vec::new()
            })
            .push(e);
    }
    order
        .into_iter()
        .map(|id| {
            let group = &groups[id];
            let mut user_content = GenaiContent {
                parts: Some(Vec::new()),
                role: None,
            };
            let mut timestamp = 0.0;
            let mut final_index = None;
            let mut intermediate: Vec<usize> = Vec::new();
            for (i, e) in group.iter().enumerate() {
                if e.author.eq_ignore_ascii_case(crate::names::USER) {
                    if let Some(c) = &e.content {
                        user_content = GenaiContent::from_runtime(c);
                    }
                    timestamp = e.timestamp;
                    continue;
                }
                let Some(content) = e.content.as_ref().filter(|c| !c.parts.is_empty()) else {
                    continue;
                };
                if e.is_final_response() {
                    final_index = Some(i);
                }
                if content.parts.iter().any(|p| {
                    p.function_call.is_some()
                        || p.function_response.is_some()
                        || p.text.as_deref().is_some_and(|t| !t.is_empty())
                }) {
                    intermediate.push(i);
                }
            }
            let invocation_events = intermediate
                .into_iter()
                .filter(|i| Some(*i) != final_index)
                .map(|i| InvocationEvent {
                    author: group[i].author.to_string(),
                    content: group[i].content.as_ref().map(GenaiContent::from_runtime),
                })
                .collect();
            Invocation {
                invocation_id: id.to_owned(),
                user_content,
                final_response: final_index
                    .and_then(|i| group[i].content.as_ref())
                    .map(GenaiContent::from_runtime),
                intermediate_data: Some(IntermediateData::Events(InvocationEvents {
                    invocation_events,
                })),
                creation_timestamp: timestamp,
                rubrics: None,
                app_details: app_details.get(id).cloned(),
            }
        })
        .collect()
}

/// An eval case made from a stored session (what ADK's `add_session` route does): its
/// invocations by the rule above, expecting what the session did; `state` becomes the
/// case's initial state (ADK puts `""` under every `{key}` the agents' instructions
/// read; the caller chooses).
pub fn case_from_session(
    eval_id: &str,
    session: &crate::session::Session,
    state: serde_json::Map<String, Value>,
) -> super::types::EvalCase {
    let events: Vec<&Event> = session.events.iter().map(|e| &**e).collect();
    let conversation = from_events(&events, &HashMap::new())
        .into_iter()
        .map(|mut inv| {
            inv.app_details = None;
            inv
        })
        .collect();
    super::types::EvalCase {
        eval_id: eval_id.to_owned(),
        conversation: Some(conversation),
        conversation_scenario: None,
        session_input: Some(super::types::SessionInput {
            app_name: session.app_name.clone(),
            user_id: session.user_id.clone(),
            state,
        }),
        creation_timestamp: crate::event::now(),
        rubrics: None,
        final_session_state: Some(session.state.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Content, FunctionCall, FunctionResponse, Part, Role};
    use serde_json::json;

    fn ev(inv: &str, author: &str, parts: Vec<Part>) -> Event {
        Event::new(inv, author).with_content(Content::new(Role::Model, parts))
    }

    #[test]
    fn transfers_are_calls_and_only_the_last_final_text_is_final() {
        let call = |name: &str| {
            Part::function_call(FunctionCall {
                id: Some("c".into()),
                args: json!({"agent_name": "b"}),
                name: name.into(),
            })
        };
        let response = Part::function_response(FunctionResponse {
            id: Some("c".into()),
            name: "transfer_to_agent".into(),
            response: json!({"result": null}),
        });
        let events = [
            ev("i1", "user", vec![Part::text("hi")]),
            ev("i1", "router", vec![call("transfer_to_agent")]),
            ev("i1", "router", vec![response]),
            ev("i1", "a", vec![Part::text("step one")]),
            ev("i1", "b", vec![Part::text("final")]),
            ev("i2", "user", vec![Part::text("again")]),
        ];
        let refs: Vec<&Event> = events.iter().collect();
        let inv = from_events(&refs, &HashMap::new());
        assert_eq!(inv.len(), 2);
        assert_eq!(
            GenaiContent::joined_text(inv[0].final_response.as_ref()).unwrap(),
            "final"
        );
        let calls = IntermediateData::tool_calls(inv[0].intermediate_data.as_ref());
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name.as_deref(), Some("transfer_to_agent"));
        let IntermediateData::Events(e) = inv[0].intermediate_data.as_ref().unwrap() else {
            panic!("events form");
        };
        // the call, its response, and the earlier agent's text
        assert_eq!(e.invocation_events.len(), 3);
        assert_eq!(inv[1].final_response, None);
    }

    #[test]
    fn a_stored_session_becomes_a_case_that_expects_what_it_did() {
        let mut session = crate::session::Session {
            app_name: "app".into(),
            user_id: "u".into(),
            ..Default::default()
        };
        session.state.insert("answer".into(), json!("42"));
        for e in [
            ev("i1", "user", vec![Part::text("question")]),
            ev("i1", "agent", vec![Part::text("42")]),
        ] {
            session.events.push(std::sync::Arc::new(e));
        }
        let case = case_from_session("from_session", &session, serde_json::Map::new());
        let conversation = case.conversation.unwrap();
        assert_eq!(conversation.len(), 1);
        assert_eq!(
            GenaiContent::joined_text(Some(&conversation[0].user_content)).unwrap(),
            "question"
        );
        assert_eq!(
            GenaiContent::joined_text(conversation[0].final_response.as_ref()).unwrap(),
            "42"
        );
        assert_eq!(case.session_input.unwrap().user_id, "u");
        assert_eq!(case.final_session_state.unwrap()["answer"], "42");
    }
}
