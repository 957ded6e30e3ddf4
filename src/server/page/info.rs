//! What the page shows about an app that ADK's routes do not say: each agent as written
//! (its YAML and where it is), as configured (kind, model, tools), its instruction
//! rendered against a session, and the app's test files and their results.

use crate::config::graph::GraphNodeKind;
use crate::config::{AgentSpec, AgentSpecKind, ToolSpec, Workflow};
use crate::testing::FileResult;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The app: its name, root file, every agent of its diagram, in the diagram's order, and
/// the nodes of its workflow graphs that are no agents (Routers, JoinNodes).
pub fn app_info(name: &str, root_file: &Path, workflow: &Workflow) -> Value {
    let base = root_file.parent().unwrap_or(Path::new("."));
    let mut agents = Vec::new();
    let mut nodes = Vec::new();
    for tree in crate::graph::trees(&workflow.root) {
        describe(tree, None, base, &mut agents);
        for agent in tree.walk() {
            describe_nodes(agent, base, &mut nodes);
        }
    }
    let files = test_files(root_file);
    let tests: Vec<Value> = files
        .iter()
        .map(|f| Value::String(shown(f, base)))
        .collect();
    json!({
        "name": name,
        "file": root_file.file_name().map(|f| f.to_string_lossy().into_owned()),
        "root": workflow.root.name,
        "agents": agents,
        "nodes": nodes,
        "tests": tests,
        "examples": examples(root_file, &files),
    })
}

/// Messages to start with (at most four, each once), so that a new user sees what the
/// workflow is made to answer: the lines of `NAME.messages.txt` beside `NAME.yaml` when
/// there is one (the turns its `NAME.script.yaml` answers, in order), else the first user
/// message of each test case.
fn examples(root_file: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Ok(text) = std::fs::read_to_string(root_file.with_extension("messages.txt")) {
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if !out.iter().any(|o| o == line) && out.len() < 4 {
                out.push(line.to_owned());
            }
        }
        if !out.is_empty() {
            return out;
        }
    }
    for file in files {
        let Ok(tests) = crate::config::load_typed::<crate::testing::TestFile>(file) else {
            continue;
        };
        for case in &tests.tests {
            let first = case.turns.first().and_then(|t| t.input.user());
            if let Some(text) = first
                && !out.iter().any(|o| o == text)
                && out.len() < 4
            {
                out.push(text.to_owned());
            }
        }
    }
    out
}

/// The Routers and JoinNodes of `workflow`'s graph (none when it is no workflow graph):
/// the id the diagram gives each, its name, kind, expressions and YAML as written.
fn describe_nodes(workflow: &AgentSpec, base: &Path, out: &mut Vec<Value>) {
    let AgentSpecKind::Graph(graph) = &workflow.kind else {
        return;
    };
    for node in &graph.nodes {
        let mut entry = Map::new();
        match &node.kind {
            GraphNodeKind::Agent(_) => continue,
            GraphNodeKind::Router(r) => {
                entry.insert("kind".into(), "adk_flow.Router".into());
                entry.insert("route".into(), r.route.clone().into());
                entry.insert("output".into(), r.output.clone().into());
                let state: Map<String, Value> = r
                    .state
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect();
                entry.insert("state".into(), state.into());
            }
            GraphNodeKind::Join => {
                entry.insert("kind".into(), "JoinNode".into());
            }
        }
        entry.insert(
            "id".into(),
            crate::graph::workflow::extra_id(&workflow.name, &node.name).into(),
        );
        entry.insert("name".into(), node.name.clone().into());
        entry.insert("workflow".into(), workflow.name.clone().into());
        let file = &node.location.file;
        entry.insert("file".into(), shown(file, base).into());
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let (line, yaml) = yaml_block(&text, node.location.pos.line);
        entry.insert("line".into(), line.into());
        entry.insert("yaml".into(), yaml.into());
        out.push(Value::Object(entry));
    }
}

/// A path as the page shows it: relative to the app's folder when inside it.
fn shown(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

fn describe(agent: &AgentSpec, inherited: Option<&str>, base: &Path, out: &mut Vec<Value>) {
    let mut entry = Map::new();
    entry.insert("name".into(), agent.name.clone().into());
    entry.insert("kind".into(), crate::graph::kind_name(agent).into());
    entry.insert("description".into(), agent.description.clone().into());
    let file = &agent.location.file;
    entry.insert("file".into(), shown(file, base).into());
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let (line, yaml) = yaml_block(&text, agent.location.pos.line);
    entry.insert("line".into(), line.into());
    entry.insert("yaml".into(), yaml.into());
    entry.insert(
        "subAgents".into(),
        agent
            .sub_agents
            .iter()
            .map(|s| Value::String(s.name.clone()))
            .collect(),
    );
    let mut model_here = inherited.map(str::to_owned);
    if let AgentSpecKind::Llm(llm) = &agent.kind {
        let (model, from) = match (&llm.model, inherited) {
            (Some(m), _) => (Some(m.clone()), None),
            (None, Some(m)) => (Some(m.to_owned()), Some("an ancestor")),
            (None, None) => (None, None),
        };
        entry.insert("model".into(), model.clone().into());
        if let Some(from) = from {
            entry.insert("modelFrom".into(), from.into());
        }
        model_here = model;
        entry.insert("instruction".into(), llm.instruction.clone().into());
        entry.insert("outputKey".into(), llm.output_key.clone().into());
        entry.insert("outputSchema".into(), llm.output_schema.clone().into());
        let mut tools = crate::graph::tool_names(agent);
        tools.extend(llm.tools.iter().filter_map(|t| match t {
            ToolSpec::Agent(a) => Some(format!("{} (AgentTool)", a.agent.name)),
            _ => None,
        }));
        entry.insert("tools".into(), tools.into());
    }
    out.push(Value::Object(entry));
    for sub in &agent.sub_agents {
        describe(sub, model_here.as_deref(), base, out);
    }
}

/// The lines of the YAML mapping that holds the key on line `name_line` (1-based): the
/// first line of the mapping and its text. An agent at the top of its file is the file.
pub fn yaml_block(text: &str, name_line: usize) -> (usize, String) {
    let lines: Vec<&str> = text.lines().collect();
    let Some(name) = name_line.checked_sub(1).and_then(|i| lines.get(i)) else {
        return (1, text.to_owned());
    };
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '-']).len();
    let blank = |l: &str| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#')
    };
    let key_col = indent(name);
    if key_col == 0 {
        return (1, text.to_owned());
    }
    let own = |l: &str| l.len() - l.trim_start().len();
    // Upwards: lines of the same mapping are indented at least to its keys' column and
    // do not start a list item at or left of it; the item's `- ` line is the first.
    let mut first = name_line - 1;
    if !name.trim_start().starts_with("- ") {
        while first > 0 {
            let l = lines[first - 1];
            if blank(l) {
                first -= 1;
                continue;
            }
            if own(l) >= key_col {
                first -= 1;
                continue;
            }
            if l.trim_start().starts_with("- ") && indent(l) == key_col {
                first -= 1;
            }
            break;
        }
    }
    // Downwards: until a line left of the keys' column (or the next item of the list).
    let mut last = name_line - 1;
    for (i, l) in lines.iter().enumerate().skip(name_line) {
        if blank(l) {
            continue;
        }
        if own(l) < key_col {
            break;
        }
        last = i;
    }
    // Comments and blank lines before the first line belong to what precedes.
    while first < name_line - 1 && blank(lines[first]) {
        first += 1;
    }
    (first + 1, lines[first..=last].join("\n"))
}

/// An agent's instruction, and, given a session's state, rendered against it as the
/// model would see it (`{key}`, `{key?}`, `{app:key}`, by the app's `dialect`; artifacts
/// are not loaded).
pub fn rendered_instruction(
    agent: &AgentSpec,
    dialect: crate::template::Dialect,
    state: Option<&crate::event::StateMap>,
) -> Value {
    let AgentSpecKind::Llm(llm) = &agent.kind else {
        return json!({"agent": agent.name, "template": null, "rendered": null});
    };
    let Some(state) = state else {
        return json!({"agent": agent.name, "template": llm.instruction, "rendered": null});
    };
    let lookup = |k: &str| state.get(k).cloned();
    match crate::template::render_in(dialect, &llm.instruction, lookup, |_| None) {
        Ok(text) => json!({"agent": agent.name, "template": llm.instruction, "rendered": text}),
        Err(e) => json!({
            "agent": agent.name,
            "template": llm.instruction,
            "rendered": null,
            "error": e.to_string(),
        }),
    }
}

/// The `*.test.yaml` files beside `root` whose `workflow` is `root`, by name.
pub fn test_files(root: &Path) -> Vec<PathBuf> {
    let dir = root.parent().unwrap_or(Path::new("."));
    let root = crate::config::normalize_path(root);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".test.yaml") || n.ends_with(".test.yml"))
        })
        .filter(|p| {
            crate::config::load_typed::<crate::testing::TestFile>(p)
                .is_ok_and(|t| crate::config::normalize_path(&dir.join(&t.workflow)) == root)
        })
        .collect();
    out.sort();
    out
}

/// One test file's outcome as the page shows it.
pub fn test_result(result: &FileResult) -> Value {
    json!({
        "file": result.path.file_name().map(|f| f.to_string_lossy().into_owned()),
        "errors": result.errors,
        "cases": result.cases.iter().map(|c| json!({
            "name": c.name,
            "passed": c.failures.is_empty(),
            "failures": c.failures,
            "ms": c.elapsed.as_secs_f64() * 1000.0,
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::yaml_block;

    const YAML: &str = "name: root\nsub_agents:\n  - name: billing\n    instruction: |\n      Answer.\n    tools:\n      - name: t\n  # a comment\n  - agent_class: LoopAgent\n    name: tech\n    sub_agents:\n      - name: drafter\n        output_key: d\n";

    #[test]
    fn blocks_are_the_agents_mappings() {
        assert_eq!(yaml_block(YAML, 1).0, 1);
        assert_eq!(
            yaml_block(YAML, 3),
            (
                3,
                "  - name: billing\n    instruction: |\n      Answer.\n    tools:\n      - name: t"
                    .to_owned()
            )
        );
        assert_eq!(
            yaml_block(YAML, 10),
            (
                9,
                "  - agent_class: LoopAgent\n    name: tech\n    sub_agents:\n      - name: drafter\n        output_key: d".to_owned()
            )
        );
        assert_eq!(
            yaml_block(YAML, 12),
            (
                12,
                "      - name: drafter\n        output_key: d".to_owned()
            )
        );
    }
}
