//! Telling workflow files from the other YAML files beside them (scripts, test files),
//! and finding the files an agent file names. Used by `validate` and by `serve`'s app
//! discovery. Reads files; never fails: what cannot be read is [`FileKind::Unknown`].

use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a YAML file is.
pub enum FileKind {
    /// A scripted-model reply file.
    Script,
    /// An `adk-flow eval` script: replies plus `judge`/`user` replies.
    EvalScript,
    /// A workflow test file.
    Test,
    /// An agent or workflow file; the agent files and data files it references.
    Agent(Vec<PathBuf>, Vec<PathBuf>),
    /// Unparsable; the loader will report it.
    Unknown,
}

fn canonical(base: &Path, rel: &str) -> PathBuf {
    let p = super::normalize_path(&base.join(rel));
    p.canonicalize().unwrap_or(p)
}

/// Files an agent file names: agents (`config_path` of sub-agents and agent tools) and
/// data (`lookup.file` of declared tools).
fn references(value: &Value, base: &Path, out: &mut Vec<PathBuf>, data: &mut Vec<PathBuf>) {
    let agent_ref = |v: &Value, out: &mut Vec<PathBuf>, data: &mut Vec<PathBuf>| match v
        .get("config_path")
        .and_then(Value::as_str)
    {
        Some(p) => out.push(canonical(base, p)),
        None => references(v, base, out, data),
    };
    for sub in value
        .get("sub_agents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        agent_ref(sub, out, data);
    }
    for tool in value
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(agent) = tool.pointer("/args/agent") {
            agent_ref(agent, out, data);
        }
    }
    if let Some(edges) = value.get("edges") {
        graph_references(edges, base, out, data);
    }
    let defs = value.pointer("/define/tools").and_then(Value::as_object);
    for def in defs.into_iter().flat_map(|d| d.values()) {
        if let Some(agent) = def.pointer("/agent/agent") {
            agent_ref(agent, out, data);
        }
        if let Some(file) = def.pointer("/lookup/file").and_then(Value::as_str) {
            data.push(canonical(base, file));
        }
    }
}

/// The node files a workflow's `edges` name (`writer.yaml`, `config_path: ...`), and what
/// its inline nodes refer to.
fn graph_references(v: &Value, base: &Path, out: &mut Vec<PathBuf>, data: &mut Vec<PathBuf>) {
    match v {
        Value::String(s) if s.ends_with(".yaml") || s.ends_with(".yml") => {
            out.push(canonical(base, s));
        }
        Value::Array(items) => items
            .iter()
            .for_each(|i| graph_references(i, base, out, data)),
        Value::Object(m) if m.contains_key("name") || m.contains_key("config_path") => {
            if let Some(p) = m.get("config_path").and_then(Value::as_str) {
                out.push(canonical(base, p));
            }
            references(v, base, out, data);
        }
        Value::Object(m) => m
            .values()
            .for_each(|i| graph_references(i, base, out, data)),
        _ => {}
    }
}

/// Reads a YAML file and tells what it is: an eval script (`judge:` or `user:`), a script
/// (`replies:`), a test file (`tests:` and `workflow:`) — none of them with a `name:` — or
/// an agent file with the files it references.
pub fn classify(path: &Path) -> FileKind {
    // Files that cannot be read (too large, not regular files) are left to the loader,
    // which says why.
    let Ok(text) = super::read_text(path) else {
        return FileKind::Unknown;
    };
    // Scripts and test files are adk-flow's own: read without PyYAML's refusals.
    let Ok((value, _)) = super::yaml::parse_own(&text) else {
        return FileKind::Unknown;
    };
    if value.get("name").is_none() && (value.get("judge").is_some() || value.get("user").is_some())
    {
        return FileKind::EvalScript;
    }
    if value.get("replies").is_some() && value.get("name").is_none() {
        return FileKind::Script;
    }
    if value.get("tests").is_some()
        && value.get("workflow").is_some()
        && value.get("name").is_none()
    {
        return FileKind::Test;
    }
    let (mut refs, mut data) = (Vec::new(), Vec::new());
    references(
        &value,
        path.parent().unwrap_or(Path::new(".")),
        &mut refs,
        &mut data,
    );
    FileKind::Agent(refs, data)
}
