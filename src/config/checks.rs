//! Checks across the whole tree, after every file loaded: model references, transfer
//! settings that cannot take effect, loops that may never end, state keys nobody writes.

use super::agent_config::{ProviderKind, ToolKind};
use super::{AgentSpec, AgentSpecKind, Diagnostic, Location, Workflow};
use crate::names::EXIT_LOOP;
use crate::template;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Providers accepted as a `provider:` prefix of a model name.
pub const PROVIDER_PREFIXES: &[&str] = &["gemini", "openai", "scripted"];

/// Every diagnostic of the whole-tree checks.
pub(crate) fn check(w: &Workflow, fence: &super::source::Fence) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    check_models(w, fence, &mut out);
    let writers = state_writers(w);
    let mut tree = Tree {
        writers: &writers,
        dialect: w.template_dialect(),
        texts: HashMap::new(),
    };
    check_agent(&w.root, None, &mut tree, &mut out);
    out.extend(super::graph::uncapped_cycles(&w.root));
    out
}

/// What the checks of each agent share: the state keys something writes, how the app's
/// instructions are templated, and each file's text, read once.
struct Tree<'a> {
    writers: &'a HashSet<String>,
    dialect: template::Dialect,
    texts: HashMap<PathBuf, Option<String>>,
}

fn check_models(w: &Workflow, fence: &super::source::Fence, out: &mut Vec<Diagnostic>) {
    let base = w.path.parent().unwrap_or(std::path::Path::new("."));
    for (name, m) in &w.models {
        let at = &w.root.location;
        match m.provider {
            ProviderKind::Scripted => match &m.script {
                None => out.push(Diagnostic::error(
                    &at.file,
                    at.pos,
                    format!("model `{name}`: a scripted model needs `script: file.yaml`"),
                )),
                Some(s) if !base.join(s).is_file() => out.push(Diagnostic::error(
                    &at.file,
                    at.pos,
                    format!("model `{name}`: script `{s}` not found"),
                )),
                Some(s) => {
                    if let Some(why) = fence.refusal("script", s, &base.join(s)) {
                        out.push(Diagnostic::error(
                            &at.file,
                            at.pos,
                            format!("model `{name}`: {why}"),
                        ));
                    }
                }
            },
            ProviderKind::Gemini | ProviderKind::Openai if m.model.is_none() => {
                out.push(Diagnostic::error(
                    &at.file,
                    at.pos,
                    format!("model `{name}`: `model` (the provider's model name) is required"),
                ));
            }
            _ => {}
        }
    }
    for agent in w.root.walk() {
        let AgentSpecKind::Llm(llm) = &agent.kind else {
            continue;
        };
        let Some(model) = &llm.model else { continue };
        if w.models.contains_key(model) {
            continue;
        }
        if let Some((prefix, _)) = model.split_once(':')
            && !PROVIDER_PREFIXES.contains(&prefix)
        {
            let at = agent.at("model");
            out.push(Diagnostic::error(
                &at.file,
                at.pos,
                format!(
                    "model `{model}`: unknown provider `{prefix}`; use a model declared under `define.models`, `gemini:NAME`, `openai:NAME` or a plain Gemini model name"
                ),
            ));
        }
    }
}

/// State keys something writes: output_keys, initial state, `set_state` tools and
/// callbacks, and agents run as tools (whose state flows back).
fn state_writers(w: &Workflow) -> HashSet<String> {
    let mut keys: HashSet<String> = w.state.keys().cloned().collect();
    let mut trees: Vec<&AgentSpec> = vec![&w.root];
    trees.extend(
        w.tools
            .values()
            .filter_map(|t| t.agent.as_ref().map(|a| &a.agent)),
    );
    for tree in trees {
        for agent in tree.walk() {
            if let AgentSpecKind::Graph(graph) = &agent.kind {
                for node in &graph.nodes {
                    if let super::graph::GraphNodeKind::Router(r) = &node.kind {
                        keys.extend(r.state.iter().map(|(k, _)| k.clone()));
                    }
                }
            }
            if let AgentSpecKind::Llm(llm) = &agent.kind {
                keys.extend(llm.output_key.iter().cloned());
                for t in &llm.tools {
                    if let super::ToolSpec::Agent(a) = t {
                        for sub in a.agent.walk() {
                            if let AgentSpecKind::Llm(l) = &sub.kind {
                                keys.extend(l.output_key.iter().cloned());
                            }
                        }
                    }
                }
            }
        }
    }
    for tool in w.tools.values() {
        if let ToolKind::SetState(m) = &tool.def.kind {
            keys.extend(m.keys().cloned());
        }
    }
    for cb in w.callbacks.values() {
        keys.extend(cb.set_state.iter().flat_map(|m| m.keys().cloned()));
    }
    keys
}

/// Where `needle` first appears in the file at or after `from` (1-based line and column),
/// to point at a `{key}` inside an instruction rather than at the instruction's start.
/// `texts` keeps each file's text, so a file with many findings is read once.
fn locate(
    texts: &mut HashMap<PathBuf, Option<String>>,
    file: &Path,
    from: super::yaml::Pos,
    needle: &str,
) -> Option<super::yaml::Pos> {
    let text = texts
        .entry(file.to_owned())
        .or_insert_with(|| super::source::read_text(file).ok())
        .as_deref()?;
    for (i, line) in text.lines().enumerate().skip(from.line.saturating_sub(1)) {
        let start_char = if i + 1 == from.line {
            from.col.saturating_sub(1)
        } else {
            0
        };
        let start_byte = line
            .char_indices()
            .nth(start_char)
            .map_or(line.len(), |(b, _)| b);
        if let Some(b) = line[start_byte..].find(needle) {
            let col = line[..start_byte + b].chars().count() + 1;
            return Some(super::yaml::Pos { line: i + 1, col });
        }
    }
    None
}

/// ADK's transfer targets exist: sub-agents, or a parent LlmAgent (or its other children)
/// the agent may transfer to.
fn has_targets(agent: &AgentSpec, parent: Option<&AgentSpec>) -> bool {
    let AgentSpecKind::Llm(llm) = &agent.kind else {
        return false;
    };
    if !agent.sub_agents.is_empty() {
        return true;
    }
    match parent {
        Some(p) if matches!(p.kind, AgentSpecKind::Llm(_)) => {
            !llm.disallow_transfer_to_parent
                || (!llm.disallow_transfer_to_peers && p.sub_agents.len() > 1)
        }
        _ => false,
    }
}

fn has_exit_loop(agent: &AgentSpec) -> bool {
    agent.walk().iter().any(|a| match &a.kind {
        AgentSpecKind::Llm(llm) => llm
            .tools
            .iter()
            .any(|t| matches!(t, super::ToolSpec::Builtin(n) if n == EXIT_LOOP)),
        _ => false,
    })
}

fn check_agent(
    agent: &AgentSpec,
    parent: Option<&AgentSpec>,
    tree: &mut Tree<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let parent_is_llm = parent.is_some_and(|p| matches!(p.kind, AgentSpecKind::Llm(_)));
    match &agent.kind {
        AgentSpecKind::Llm(llm) => {
            if llm.lists_transfer && !has_targets(agent, parent) {
                let at = agent.at("tools");
                out.push(Diagnostic::warning(
                    &at.file,
                    at.pos,
                    format!(
                        "`{}` lists transfer_to_agent but has no agent to transfer to: give it sub_agents, or put it under an LlmAgent that allows transfers",
                        agent.name
                    ),
                ));
            }
            for (flag, set) in [
                (
                    "disallow_transfer_to_parent",
                    llm.disallow_transfer_to_parent,
                ),
                ("disallow_transfer_to_peers", llm.disallow_transfer_to_peers),
            ] {
                if set && !parent_is_llm {
                    let at = agent.at(flag);
                    out.push(Diagnostic::warning(
                        &at.file,
                        at.pos,
                        format!(
                            "`{flag}` has no effect: only an agent whose parent is an LlmAgent can transfer to its parent or peers"
                        ),
                    ));
                }
            }
            for key in template::keys_in(tree.dialect, &llm.instruction) {
                if key.optional || key.artifact || tree.writers.contains(&key.name) {
                    continue;
                }
                let at = agent.at("instruction");
                let raw = &llm.instruction[key.span.clone()];
                let pos = locate(&mut tree.texts, &at.file, at.pos, raw).unwrap_or(at.pos);
                out.push(Diagnostic::warning(
                    &at.file,
                    pos,
                    format!(
                        "instruction reads `{{{}}}`, which no output_key, initial `state` or tool writes; the run fails if it is still missing (write `{{{}?}}` if it is optional)",
                        key.name, key.name
                    ),
                ));
            }
        }
        AgentSpecKind::Loop { max_iterations } => {
            if max_iterations.unwrap_or(0) == 0 && !has_exit_loop(agent) {
                let at = agent.at("name");
                out.push(Diagnostic::warning(
                    &at.file,
                    at.pos,
                    format!(
                        "LoopAgent `{}` has no max_iterations and no exit_loop below it: it can only end when a model call fails",
                        agent.name
                    ),
                ));
            }
        }
        AgentSpecKind::Sequential { .. } | AgentSpecKind::Parallel | AgentSpecKind::Graph(_) => {}
    }
    if agent.sub_agents.is_empty()
        && !matches!(agent.kind, AgentSpecKind::Llm(_) | AgentSpecKind::Graph(_))
    {
        let at = agent.at("name");
        out.push(Diagnostic::warning(
            &at.file,
            at.pos,
            format!("`{}` has no sub_agents, so it does nothing", agent.name),
        ));
    }
    for sub in &agent.sub_agents {
        check_agent(sub, Some(agent), tree, out);
    }
}

/// Agent names used twice in the tree (names address agents: transfers, replies, state),
/// each reported where it is used again. A workflow graph's name is left out: ADK 2.13
/// and the workflow contract let a workflow share its name with a node (its node names
/// are checked per workflow when it is loaded, its LLM nodes' names here).
pub(super) fn duplicate_names(root: &AgentSpec) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut seen: HashMap<&str, &Location> = HashMap::new();
    for agent in root.walk() {
        if matches!(agent.kind, super::AgentSpecKind::Graph(_)) {
            continue;
        }
        if let Some(first) = seen.get(agent.name.as_str()) {
            if first.file == agent.location.file && first.pos == agent.location.pos {
                // One file named by two files (e.g. a node file of two workflows): ADK
                // loads it twice, as two agents of one name.
                diagnostics.push(Diagnostic::error(
                    &agent.location.file,
                    agent.location.pos,
                    format!(
                        "the agent `{}` of this file is loaded twice (two files name it), so two agents share its name; agent names are unique across the tree (replies, history, transfers and state address agents by name): give the second its own file with another name",
                        agent.name
                    ),
                ));
                continue;
            }
            diagnostics.push(Diagnostic::error(
                &agent.location.file,
                agent.location.pos,
                format!(
                    "agent name `{}` is used twice; it was first declared at {}:{}:{}",
                    agent.name,
                    first.file.display(),
                    first.pos.line,
                    first.pos.col
                ),
            ));
        } else {
            seen.insert(&agent.name, &agent.location);
        }
    }
    diagnostics
}
