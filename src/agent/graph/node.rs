//! One run of one workflow node: an LLM node (single-turn, its input a user message that
//! is never stored), an `adk_flow.Router`, a `JoinNode`, or a nested workflow. Each yields
//! its events with ADK 2.13's `nodeInfo` and ends with its [`Outcome`]; a failure is one
//! error event authored by the workflow, then a failed outcome.

use super::{Item, ItemStream, NodeRun};
use crate::errors;
use crate::event::{Content, Event, NodeInfo, Role};
use crate::flow::{FlowItem, run_llm_agent};
use crate::invocation::{InvocationContext, NodeInput, RunError};
use crate::pyrepr::{json_dumps, py_repr, py_str};
use crate::template::TemplateError;
use crate::template::jinja::{Context, Reads, reads};
use crate::tree::{AgentId, AgentKind, GraphNodeKind, Router};
use futures::StreamExt;
use serde_json::{Map, Value};
use std::sync::Arc;

/// How a node run ended.
#[derive(Debug, Clone, Default)]
pub(super) struct Outcome {
    /// Its output (`None`: no output).
    pub(super) output: Option<Value>,
    /// The route it emitted.
    pub(super) route: Option<Value>,
    /// The branch it ran on.
    pub(super) branch: Option<String>,
    /// It failed; the failure was reported as an event.
    pub(super) failed: bool,
}

/// Runs one node: its events, then its outcome.
pub(super) fn run(ctx: InvocationContext, run: NodeRun) -> ItemStream {
    let tree_node = &ctx.tree().get(run.workflow).kind;
    let AgentKind::Graph(graph) = tree_node else {
        return Box::pin(futures::stream::empty());
    };
    match &graph.nodes[run.node].kind {
        GraphNodeKind::Agent(id) => {
            let id = *id;
            if matches!(ctx.tree().get(id).kind, AgentKind::Graph(_)) {
                super::run_workflow(
                    ctx,
                    id,
                    run.path.clone(),
                    run.input.clone(),
                    run.output_for.clone(),
                    run.branch.clone(),
                )
            } else {
                llm(ctx, id, run)
            }
        }
        GraphNodeKind::Router(_) => router(ctx, run),
        GraphNodeKind::Join => {
            let mut event = node_event(&ctx, &run);
            event.output = Some(Box::new(run.input.clone().unwrap_or(Value::Null)));
            event.node_info = Some(info(&run, true));
            let outcome = Outcome {
                output: event.output.as_deref().cloned(),
                route: None,
                branch: run.branch.clone(),
                failed: false,
            };
            Box::pin(futures::stream::iter([
                Item::Event(Arc::new(event)),
                Item::Done(outcome),
            ]))
        }
    }
}

/// An event of the node authored by its workflow.
fn node_event(ctx: &InvocationContext, run: &NodeRun) -> Event {
    let mut event = Event::new(ctx.invocation_id(), run.workflow_name.as_str());
    event.branch = run.branch.clone();
    event.node_info = Some(info(run, false));
    event
}

/// The node's `nodeInfo`; `output` when the event carries the node's output.
fn info(run: &NodeRun, output: bool) -> Box<NodeInfo> {
    Box::new(NodeInfo {
        path: run.path.clone(),
        output_for: output.then(|| {
            let mut v = vec![run.path.clone()];
            v.extend(run.output_for.iter().cloned());
            v
        }),
        message_as_output: None,
    })
}

/// The error event of a failed node, as ADK's NodeRunner makes it.
pub(super) fn failure(
    ctx: &InvocationContext,
    run: &NodeRun,
    code: &str,
    message: String,
) -> Event {
    let mut event = node_event(ctx, run);
    event.error_code = Some(code.to_owned());
    event.error_message = Some(message);
    event
}

/// The errorCode and errorMessage ADK 2.13 gives a node failure of this kind.
fn error_fields(err: &RunError) -> (String, String) {
    match err {
        RunError::Template {
            agent,
            source: TemplateError::MissingKey { key },
        } => (
            "KeyError".into(),
            py_repr(&Value::String(format!(
                "Context variable not found: `{key}` in agent '{agent}'."
            ))),
        ),
        RunError::Template {
            agent,
            source: TemplateError::MissingArtifact { name },
        } => (
            "KeyError".into(),
            py_repr(&Value::String(format!(
                "Artifact '{name}' not found in agent '{agent}'."
            ))),
        ),
        RunError::LlmCallsLimit { limit, .. } => (
            "LlmCallsLimitExceededError".into(),
            format!("Max number of llm calls limit of `{limit}` exceeded"),
        ),
        other => (other.code().into_owned(), errors::chain(other)),
    }
}

/// A node input as the text of a user message: strings as they are, mappings and lists
/// as Python's `json.dumps`, numbers and booleans as Python's `str()`.
fn input_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(_) | Value::Array(_) => json_dumps(v),
        other => py_str(other),
    }
}

/// An LLM node: the flow with the input as a user message; its last text is its output.
fn llm(ctx: InvocationContext, id: AgentId, run: NodeRun) -> ItemStream {
    Box::pin(async_stream::stream! {
        let name = ctx.tree().get(id).name.clone();
        let from = ctx.session().lock().events.len();
        let sees_history = ctx
            .tree()
            .get(id)
            .as_llm()
            .is_some_and(|l| l.include_contents == crate::tree::IncludeContents::Default);
        let input = match run.input.as_ref().filter(|v| !v.is_null()) {
            Some(v) => Some(NodeInput {
                content: Content::text(Role::User, input_text(v)),
                from,
                path: run.path.clone(),
            }),
            // No input: a single-turn node sees the turn's user message (one that sees
            // the history has it there already).
            None if !sees_history => ctx
                .user_content()
                .map(|c| NodeInput { content: Content::clone(c), from, path: run.path.clone() }),
            None => None,
        };
        let node_ctx = ctx.for_node(run.branch.clone(), input);
        let mut flow = run_llm_agent(node_ctx, id);
        let mut outcome = Outcome { branch: run.branch.clone(), ..Outcome::default() };
        while let Some(item) = flow.next().await {
            match item {
                Ok(FlowItem::Event(mut event)) => {
                    let mut info = info(&run, false);
                    if !event.is_partial() {
                        if *event.author == *name && let Some(route) = &event.actions.route {
                            outcome.route = Some(Value::clone(route));
                        }
                        if let Some(text) = output_text(&event) {
                            outcome.output = Some(Value::String(text));
                            info = self::info(&run, true);
                            info.message_as_output = Some(true);
                        }
                    }
                    Arc::make_mut(&mut event).node_info = Some(info);
                    yield Item::Event(event);
                }
                // A node has no transfer targets; nothing to run.
                Ok(FlowItem::TransferTo(..)) => {}
                Err(err) => {
                    let (code, message) = error_fields(&err);
                    yield Item::Event(Arc::new(failure(&ctx, &run, &code, message)));
                    yield Item::Done(Outcome { failed: true, ..outcome });
                    return;
                }
            }
        }
        yield Item::Done(outcome);
    })
}

/// The text of a model reply that is a node's output: a model message without function
/// calls (its non-thought text, empty when it has none).
fn output_text(event: &Event) -> Option<String> {
    let content = event.content.as_ref()?;
    if content.role != Some(Role::Model) || event.function_calls().next().is_some() {
        return None;
    }
    Some(event.text().unwrap_or_default())
}

/// An `adk_flow.Router`: one event with its route, output and state.
fn router(ctx: InvocationContext, run: NodeRun) -> ItemStream {
    Box::pin(async_stream::stream! {
        let AgentKind::Graph(graph) = &ctx.tree().get(run.workflow).kind else { return };
        let GraphNodeKind::Router(router) = &graph.nodes[run.node].kind else { return };
        match evaluate(&ctx, router, &run) {
            Ok((route, output, state)) => {
                let mut event = node_event(&ctx, &run);
                event.actions.state_delta = state;
                event.actions.route = route.clone().map(Box::new);
                if output.is_some() {
                    event.output = output.clone().map(Box::new);
                    event.node_info = Some(info(&run, true));
                }
                yield Item::Event(Arc::new(event));
                yield Item::Done(Outcome { output, route, branch: run.branch.clone(), failed: false });
            }
            Err(message) => {
                yield Item::Event(Arc::new(failure(&ctx, &run, "RouterError", message)));
                yield Item::Done(Outcome { failed: true, ..Outcome::default() });
            }
        }
    })
}

type Evaluated = (Option<Value>, Option<Value>, Map<String, Value>);

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

/// The Router's route, output and state delta, or `NODE: FIELD: REASON`.
fn evaluate(ctx: &InvocationContext, router: &Router, run: &NodeRun) -> Result<Evaluated, String> {
    let node = run.name.as_str();
    let exprs = || {
        std::iter::once(&router.route)
            .chain(router.output.as_ref())
            .chain(router.state.iter().map(|(_, e)| e))
    };
    let input = (reads(exprs(), "input") != Reads::Nothing)
        .then(|| run.input.as_ref().unwrap_or(&Value::Null));
    let vars = match reads(exprs(), "state") {
        Reads::Nothing => Context::new(&Vars { input, state: None }),
        state => {
            let keys = match &state {
                Reads::Keys(keys) => Some(keys.as_slice()),
                _ => None,
            };
            let session = ctx.session().lock();
            Context::new(&Vars {
                input,
                state: Some(StateView {
                    session: &session,
                    keys,
                }),
            })
        }
    };
    let route = router
        .route
        .eval_in(&vars)
        .map_err(|e| format!("{node}: route: {e}"))?;
    let route = match route {
        Value::Null => None,
        Value::Array(items) => {
            if let Some(bad) = items.iter().find(|v| !is_label(v)) {
                return Err(format!(
                    "{node}: route: `{bad}` in the list is not a label (a string, an integer or a boolean)"
                ));
            }
            Some(Value::Array(items))
        }
        v if is_label(&v) => Some(v),
        other => {
            return Err(format!(
                "{node}: route: `{other}` is not a label (a string, an integer, a boolean, a list of them, or none)"
            ));
        }
    };
    let output = match &router.output {
        None => run.input.clone().filter(|v| !v.is_null()),
        Some(expr) => match expr
            .eval_in(&vars)
            .map_err(|e| format!("{node}: output: {e}"))?
        {
            Value::Null => None,
            v => Some(v),
        },
    };
    let mut delta = Map::new();
    for (key, expr) in &router.state {
        let v = expr
            .eval_in(&vars)
            .map_err(|e| format!("{node}: state.{key}: {e}"))?;
        delta.insert(key.clone(), v);
    }
    Ok((route, output, delta))
}

fn is_label(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Bool(_)) || v.as_i64().is_some()
}
