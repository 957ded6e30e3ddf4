//! The conversation an LLM agent sees: session events filtered by branch, other agents'
//! turns quoted "For context", function responses placed after their calls.

use crate::event::{Content, Event, FunctionCall, FunctionResponse, Part, Role, compact};
use crate::model::RequestContent;
use crate::session::{Prehashed, Session};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

mod quote;
use quote::quote_other_agent;

const INTERNAL_CALLS: &[&str] = &[
    "adk_request_credential",
    "adk_request_confirmation",
    "adk_framework",
];

/// ADK's branch rule: visible when either branch is unset, they are equal, or the event's
/// branch is an ancestor (`a.b` sees `a`, never `a_10`).
fn belongs_to_branch(branch: Option<&str>, event: &Event) -> bool {
    match (branch, event.branch.as_deref()) {
        (None, _) | (_, None) => true,
        (Some(b), Some(e)) => {
            b == e || (b.len() > e.len() && b.starts_with(e) && b.as_bytes()[e.len()] == b'.')
        }
    }
}

fn part_is_visible(p: &Part) -> bool {
    if p.function_call.is_some() || p.function_response.is_some() {
        return true;
    }
    p.thought != Some(true) && p.text.as_deref().is_some_and(|t| !t.is_empty())
}

fn is_internal(event: &Event) -> bool {
    event
        .function_calls()
        .map(|c| c.name.as_str())
        .chain(event.function_responses().map(|r| r.name.as_str()))
        .any(|n| INTERNAL_CALLS.contains(&n))
}

fn keep(branch: Option<&str>, event: &Event) -> bool {
    let visible = event
        .content
        .as_ref()
        .is_some_and(|c| c.role.is_some() && c.parts.iter().any(part_is_visible));
    visible && belongs_to_branch(branch, event) && !is_internal(event)
}

fn is_other_agent_reply(agent: &str, event: &Event) -> bool {
    *event.author != *agent && !event.is_from_user()
}

/// Whether a call id is client-side (`adk-`): ADK's own, which providers never see.
fn is_client_id(id: &Option<String>) -> bool {
    id.as_deref().is_some_and(|id| id.starts_with("adk-"))
}

/// Client-side call ids (`adk-`) are ADK's own; providers never see them.
fn provider_id(id: &Option<String>) -> Option<String> {
    id.as_ref().filter(|_| !is_client_id(id)).cloned()
}

/// Whether the model sees `content` as it is stored: no client-side call id to strip.
fn sent_as_stored(content: &Content) -> bool {
    content.parts.iter().all(|p| {
        p.function_call
            .as_ref()
            .is_none_or(|c| !is_client_id(&c.id))
            && p.function_response
                .as_ref()
                .is_none_or(|r| !is_client_id(&r.id))
    })
}

/// `event`'s content (`content`) as the model sees it: the stored content itself, shared,
/// when the model sees it as stored; otherwise a copy (see [`view_part`]).
fn view_content(event: &Arc<Event>, content: &Content) -> RequestContent {
    if sent_as_stored(content) {
        RequestContent::Event(Arc::clone(event))
    } else {
        RequestContent::Own(view_copy(content))
    }
}

/// The responses of `events` merged into one user message, as the model sees them: the
/// event's own content, shared, when there is one event whose content is that message.
fn merged_responses<'a>(
    mut events: impl ExactSizeIterator<Item = &'a Arc<Event>>,
) -> RequestContent {
    if events.len() == 1
        && let Some(event) = events.next()
    {
        return match &event.content {
            Some(c) if c.role == Some(Role::User) && sent_as_stored(c) => {
                RequestContent::Event(Arc::clone(event))
            }
            Some(c) => Content::new(Role::User, c.parts.iter().map(view_part).collect()).into(),
            None => Content::new(Role::User, Vec::new()).into(),
        };
    }
    let mut merged = Content::new(Role::User, Vec::new());
    for event in events {
        if let Some(c) = &event.content {
            merged.parts.extend(c.parts.iter().map(view_part));
        }
    }
    merged.into()
}

/// A part as the model sees it: without client-side call ids, its JSON compacted (the
/// copy lives in the agent's view for the rest of the session; see
/// [`crate::event::compact`]).
fn view_part(p: &Part) -> Part {
    Part {
        thought: p.thought,
        inline_data: p.inline_data.clone(),
        file_data: p.file_data.clone(),
        thought_signature: p.thought_signature.clone(),
        function_call: p.function_call.as_ref().map(|c| {
            Box::new(FunctionCall {
                id: provider_id(&c.id),
                args: compact(&c.args),
                name: c.name.clone(),
            })
        }),
        function_response: p.function_response.as_ref().map(|r| {
            Box::new(FunctionResponse {
                id: provider_id(&r.id),
                name: r.name.clone(),
                response: compact(&r.response),
            })
        }),
        text: p.text.clone(),
    }
}

/// A content as the model sees it (see [`view_part`]).
fn view_copy(content: &Content) -> Content {
    Content {
        parts: content.parts.iter().map(view_part).collect(),
        role: content.role,
    }
}

/// Builds the request contents of `agent` from the session's events.
pub(crate) fn build(
    events: &[Arc<Event>],
    agent: &str,
    branch: Option<&str>,
    current_turn_only: bool,
    fenced: bool,
) -> Vec<RequestContent> {
    build_seen(events, agent, branch, current_turn_only, fenced, |_| true)
}

/// [`build`] from the events for which `seen` holds (a workflow node sees the user's
/// messages and its own events), read in place rather than copied out first.
fn build_seen(
    events: &[Arc<Event>],
    agent: &str,
    branch: Option<&str>,
    current_turn_only: bool,
    fenced: bool,
    seen: impl Fn(&Event) -> bool,
) -> Vec<RequestContent> {
    let kept_event = |e: &Event| seen(e) && keep(branch, e);
    let start = if current_turn_only {
        match events
            .iter()
            .rposition(|e| kept_event(e) && (e.is_from_user() || is_other_agent_reply(agent, e)))
        {
            Some(i) => i,
            None => return Vec::new(),
        }
    } else {
        0
    };
    let kept: Vec<&Arc<Event>> = events[start..].iter().filter(|e| kept_event(e)).collect();

    // Place every function response right after the event holding its call, as ADK's
    // rearranging does for long-running tools answered in a later message.
    let mut response_of_call: HashMap<&str, usize> = HashMap::new();
    for (i, e) in kept.iter().enumerate() {
        if is_other_agent_reply(agent, e) {
            continue;
        }
        for r in e.function_responses() {
            if let Some(id) = r.id.as_deref() {
                response_of_call.insert(id, i);
            }
        }
    }
    let mut placed = vec![false; kept.len()];
    let mut out = Vec::with_capacity(kept.len());
    for (i, e) in kept.iter().enumerate() {
        if placed[i] {
            continue;
        }
        if is_other_agent_reply(agent, e) {
            out.extend(quote_other_agent(e, fenced).map(RequestContent::Own));
            continue;
        }
        let Some(content) = &e.content else { continue };
        out.push(view_content(e, content));
        placed[i] = true;
        let mut responses: Vec<usize> = e
            .function_calls()
            .filter_map(|c| c.id.as_deref())
            .filter_map(|id| response_of_call.get(id).copied())
            .filter(|&j| j > i && !placed[j])
            .collect();
        responses.sort_unstable();
        responses.dedup();
        if responses.is_empty() {
            continue;
        }
        for &j in &responses {
            placed[j] = true;
        }
        out.push(merged_responses(responses.iter().map(|&j| kept[j])));
    }
    out
}

/// The contents of a single-turn workflow node: its input as a user message, after the
/// history when the node includes it, then what the node did since it started.
pub(crate) fn with_node_input(
    events: &[Arc<Event>],
    agent: &str,
    branch: Option<&str>,
    input_only: bool,
    input: &crate::invocation::NodeInput,
    path: &str,
    fenced: bool,
) -> Vec<RequestContent> {
    let from = input.from.min(events.len());
    // A node's first request comes before any event of its own: nothing to read after
    // the input then, and the contents are allocated once at their final size.
    let after = match &events[from..] {
        [] => Vec::new(),
        since => node_history(since, agent, branch, path, fenced),
    };
    let mut out = if input_only {
        Vec::with_capacity(1 + after.len())
    } else {
        let mut before = node_history(&events[..from], agent, branch, path, fenced);
        before.reserve_exact(1 + after.len());
        before
    };
    out.push(RequestContent::Shared(Arc::clone(&input.content)));
    out.extend(after);
    out
}

/// The contents a workflow node sees of `events`: the user's messages and its own
/// events (ADK 2.13 filters a single-turn node's history by its node path whether it has
/// an input or not; recorded case `empty_text_input`).
pub(crate) fn node_history(
    events: &[Arc<Event>],
    agent: &str,
    branch: Option<&str>,
    path: &str,
    fenced: bool,
) -> Vec<RequestContent> {
    build_seen(events, agent, branch, false, fenced, |e| {
        seen_by_node(e, path)
    })
}

/// Whether the workflow node at `path` sees `event` in its history: a user message (no
/// path) or an event of the node itself (at its path or under it).
fn seen_by_node(event: &Event, path: &str) -> bool {
    match event.node_info.as_ref().map(|i| &*i.path) {
        None | Some("") => true,
        Some(p) => {
            p == path
                || (p.len() > path.len() && p.starts_with(path) && p.as_bytes()[path.len()] == b'/')
        }
    }
}

/// The conversation one agent sees on one branch, kept with the session
/// ([`Session::derived`]) and extended by the events committed since it was built, so a
/// turn costs the same at the 400th message as at the first.
#[derive(Default)]
pub(crate) struct ContentsView {
    /// How many session events it has read.
    seen: usize,
    /// The last event it read: a session whose events were replaced is read again.
    last: Option<Arc<Event>>,
    /// What [`build`] makes of those events. Requests share it; the next turn appends in
    /// place once they are dropped.
    contents: Arc<Vec<RequestContent>>,
    /// The last content's event, when it is the agent's own call event with no response
    /// yet: only a response to its calls, coming next, can be appended as is.
    open_calls: Option<Arc<Event>>,
    /// Every call id of the agent's own events so far (hashed: nothing is allocated per
    /// call), and whether one came twice (then a response goes after the first call with
    /// its id, and only a rebuild finds it). Two ids with one hash count as a repeat, which
    /// only costs a rebuild.
    call_ids: HashSet<u64, BuildHasherDefault<Prehashed>>,
    repeated_call_id: bool,
    /// Whether other agents' turns are quoted in ADK 2.13's fenced form (see
    /// [`build`]); a view read in the other form is rebuilt.
    fenced: bool,
}

impl ContentsView {
    /// Reads one more event the way [`build`] does; `false` when the event changes what
    /// came before (a response placed after an earlier call), so the view must be rebuilt.
    fn push(&mut self, agent: &str, branch: Option<&str>, event: &Arc<Event>) -> bool {
        if !keep(branch, event) {
            return true;
        }
        if is_other_agent_reply(agent, event) {
            self.open_calls = None;
            if let Some(quoted) = quote_other_agent(event, self.fenced) {
                self.append(quoted.into());
            }
            return true;
        }
        let Some(content) = &event.content else {
            return true;
        };
        let mut responses = event.function_responses().peekable();
        if responses.peek().is_none() {
            self.append(view_content(event, content));
            self.note_calls(event);
            return true;
        }
        let answers_last =
            responses.all(|r| r.id.as_deref().is_some_and(|id| self.answers_open_call(id)));
        if !answers_last || self.repeated_call_id {
            return false;
        }
        // A later response to the same calls would be merged with this one: rebuild then.
        self.open_calls = None;
        self.append(merged_responses(std::iter::once(event)));
        true
    }

    /// Appends one content.
    fn append(&mut self, content: RequestContent) {
        Arc::make_mut(&mut self.contents).push(content);
    }

    /// Builds the view from all of `events` at once.
    fn rebuild(&mut self, events: &[Arc<Event>], agent: &str, branch: Option<&str>, fenced: bool) {
        *self = ContentsView {
            fenced,
            ..ContentsView::default()
        };
        self.contents = Arc::new(build(events, agent, branch, false, fenced));
        for e in events {
            if keep(branch, e) && !is_other_agent_reply(agent, e) {
                self.note_calls(e);
            }
        }
        // Calls still waiting for their response at the end of the conversation.
        let last_kept = events.iter().rev().find(|e| keep(branch, e));
        if !last_kept.is_some_and(|e| {
            !is_other_agent_reply(agent, e) && e.function_responses().next().is_none()
        }) {
            self.open_calls = None;
        }
    }

    /// Records the calls of one of the agent's own events, the last one read.
    fn note_calls(&mut self, event: &Arc<Event>) {
        self.open_calls = None;
        for id in event.function_calls().filter_map(|c| c.id.as_deref()) {
            let mut hasher = std::hash::DefaultHasher::new();
            id.hash(&mut hasher);
            self.repeated_call_id |= !self.call_ids.insert(hasher.finish());
            self.open_calls = Some(Arc::clone(event));
        }
    }

    /// Whether `id` is the id of a call of the open call event.
    fn answers_open_call(&self, id: &str) -> bool {
        self.open_calls
            .as_ref()
            .is_some_and(|e| e.function_calls().any(|c| c.id.as_deref() == Some(id)))
    }
}

/// The key of `agent`'s view on the root branch, in [`Session::derived`] (a branch's
/// view adds `@BRANCH`); made once per agent, shared by its sessions' views.
pub(crate) fn view_key(agent: &str) -> Arc<str> {
    Arc::from(format!("contents:{agent}"))
}

/// The request contents of `agent` on `branch` (every event, not only the current
/// turn), shared with the session's view and extended by the events committed since the
/// last call. `root_key` names the agent's view on the root branch ([`view_key`]).
pub(crate) fn build_shared(
    session: &mut Session,
    agent: &str,
    branch: Option<&str>,
    root_key: &Arc<str>,
    fenced: bool,
) -> Arc<Vec<RequestContent>> {
    let branch_key;
    let key = match branch {
        Some(b) => {
            branch_key = Arc::from(format!("{root_key}@{b}"));
            &branch_key
        }
        None => root_key,
    };
    let events = &session.events;
    let Some(view) = session.derived.view::<ContentsView>(key) else {
        return Arc::new(build(events, agent, branch, false, fenced));
    };
    let same_history = view.seen <= events.len()
        && match (view.seen.checked_sub(1), &view.last) {
            (None, _) => true,
            (Some(i), Some(last)) => Arc::ptr_eq(&events[i], last),
            (Some(_), None) => false,
        };
    if view.seen == 0 && view.contents.is_empty() {
        // A new view: at most one content per event, in the room that takes (a session
        // keeps one view per agent, most of them short).
        Arc::make_mut(&mut view.contents).reserve_exact(events.len());
    }
    if !same_history || view.fenced != fenced {
        view.rebuild(events, agent, branch, fenced);
    } else {
        for event in &events[view.seen..] {
            if !view.push(agent, branch, event) {
                view.rebuild(events, agent, branch, fenced);
                break;
            }
        }
    }
    view.seen = events.len();
    view.last = events.last().cloned();
    Arc::clone(&view.contents)
}

/// Where an instruction goes as a user message: before the conversation's closing run of
/// user messages (those without function responses), as ADK's
/// `_add_instructions_to_user_content` places the dynamic instruction when a
/// `static_instruction` holds the system instruction. The request carries it apart
/// ([`crate::model::LlmRequest::instruction_message`]): the shared contents stay as they are.
pub(crate) fn instruction_position(contents: &[RequestContent]) -> usize {
    let mut at = contents.len();
    for (i, c) in contents.iter().enumerate().rev() {
        let answers = c.parts.iter().any(|p| p.function_response.is_some());
        if c.role != Some(Role::User) || answers {
            break;
        }
        at = i;
    }
    at
}

#[cfg(test)]
mod tests;
