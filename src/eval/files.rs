//! Reading eval sets in ADK's three file forms, finding them in folders, and selecting
//! cases with `FILE:id1,id2`.
//!
//! - the `EvalSet` object (`*.evalset.json`; keys below the top level in snake_case or
//!   camelCase);
//! - `adk eval`'s older list `[{name, data: [{query, expected_tool_use, reference}],
//!   initial_session}]`, one case per entry;
//! - AgentEvaluator's flat list of turns `[{query, expected_tool_use, reference}]`, one
//!   multi-turn case.
//!
//! Unlike ADK, the eval set id of an older form is the file's name without its
//! extension (never the path as typed, which ADK later fails to save under).

use super::types::{EvalCase, EvalSet, FunctionCall, GenaiContent, Invocation, SessionInput};
use super::types::{GenaiPart, IntermediateData, ToolUses};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The form an eval set file was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileForm {
    /// An `EvalSet` object.
    EvalSet,
    /// `adk eval`'s older list of named cases.
    AdkEvalList,
    /// AgentEvaluator's flat list of turns (one case).
    TurnList,
}

/// An eval set read from a file.
#[derive(Debug, Clone)]
pub struct LoadedEvalSet {
    /// The file.
    pub path: PathBuf,
    /// Its form.
    pub form: FileForm,
    /// The set, in the current model.
    pub set: EvalSet,
}

/// An eval set file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Unreadable (missing, not a regular file, too large, not UTF-8).
    #[error("{path}: cannot read the eval set")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: crate::config::ReadError,
    },
    /// A folder that cannot be listed.
    #[error("{path}: cannot list the folder")]
    List {
        /// The folder.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not JSON, or not of any eval set form.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// 1-based line (0 when unknown).
        line: usize,
        /// 1-based column (0 when unknown).
        column: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// `FILE:ids` names a case the file does not have.
    #[error("{path}: no eval case `{id}` (cases: {known})")]
    UnknownCase {
        /// The file.
        path: String,
        /// The id asked for.
        id: String,
        /// The ids there are.
        known: String,
    },
    /// A folder with no eval set in it.
    #[error("{path}: no *.evalset.json or *.test.json files")]
    Empty {
        /// The folder.
        path: String,
    },
    /// A path that does not exist.
    #[error("{path}: no such file or directory")]
    Missing {
        /// The path.
        path: String,
    },
}

fn invalid(path: &Path, e: &serde_json::Error, message: String) -> FileError {
    FileError::Invalid {
        path: path.display().to_string(),
        line: e.line(),
        column: e.column(),
        message,
    }
}

fn typed<T: for<'de> Deserialize<'de>>(
    path: &Path,
    text: &str,
    what: &str,
) -> Result<T, FileError> {
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let inner = e.into_inner();
        let field = if at == "." || at.is_empty() {
            String::new()
        } else {
            format!(" at `{at}`")
        };
        // serde's message names the key and what was expected; the position is in ours.
        let message = inner.to_string();
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_owned(),
            None => message,
        };
        invalid(path, &inner, format!("{what}{field}: {message}"))
    })
}

/// An old-form turn: `{query, expected_tool_use, expected_intermediate_agent_responses,
/// reference}`.
#[derive(Debug, Deserialize)]
struct OldTurn {
    query: String,
    #[serde(default)]
    expected_tool_use: Vec<OldToolUse>,
    #[serde(default)]
    expected_intermediate_agent_responses: Vec<OldResponse>,
    #[serde(default)]
    reference: String,
}

#[derive(Debug, Deserialize)]
struct OldToolUse {
    tool_name: String,
    tool_input: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
struct OldResponse {
    author: String,
    text: String,
}

#[derive(Debug, Deserialize)]
struct OldCase {
    name: String,
    data: Vec<OldTurn>,
    #[serde(default)]
    initial_session: Option<Map<String, Value>>,
}

fn convert_turn(turn: OldTurn) -> Invocation {
    Invocation {
        invocation_id: uuid::Uuid::new_v4().to_string(),
        user_content: GenaiContent::text("user", turn.query),
        final_response: Some(GenaiContent::text("model", turn.reference)),
        intermediate_data: Some(IntermediateData::ToolUses(ToolUses {
            tool_uses: turn
                .expected_tool_use
                .into_iter()
                .map(|t| FunctionCall {
                    args: Some(Value::Object(t.tool_input)),
                    name: Some(t.tool_name),
                    ..FunctionCall::default()
                })
                .collect(),
            tool_responses: Vec::new(),
            intermediate_responses: turn
                .expected_intermediate_agent_responses
                .into_iter()
                .map(|r| {
                    (
                        r.author,
                        vec![GenaiPart {
                            text: Some(r.text),
                            ..GenaiPart::default()
                        }],
                    )
                })
                .collect(),
        })),
        creation_timestamp: crate::event::now(),
        rubrics: None,
        app_details: None,
    }
}

fn session_input(initial: Option<Map<String, Value>>) -> Option<SessionInput> {
    let initial = initial.filter(|m| !m.is_empty())?;
    let text = |k: &str| {
        initial
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Some(SessionInput {
        app_name: text("app_name"),
        user_id: text("user_id"),
        state: initial
            .get("state")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    })
}

/// The id an older-form file gets: its name without `.test.json`/`.evalset.json`/`.json`.
pub fn id_from_file_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for ext in [".evalset.json", ".test.json", ".json"] {
        if let Some(stem) = name.strip_suffix(ext) {
            return stem.to_owned();
        }
    }
    name
}

/// Parses eval set text of any of the three forms.
///
/// # Errors
/// Text that is not JSON or not of any form, with line, column and the field.
pub fn parse(path: &Path, text: &str) -> Result<LoadedEvalSet, FileError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| invalid(path, &e, format!("not JSON: {e}")))?;
    let now = crate::event::now();
    let (form, set) = match &value {
        Value::Array(items) => {
            let named = items
                .first()
                .and_then(Value::as_object)
                .is_some_and(|o| o.contains_key("data") || o.contains_key("name"));
            if named {
                let cases: Vec<OldCase> = typed(path, text, "an `adk eval` eval list")?;
                let id = id_from_file_name(path);
                let eval_cases = cases
                    .into_iter()
                    .map(|c| EvalCase {
                        eval_id: c.name,
                        conversation: Some(c.data.into_iter().map(convert_turn).collect()),
                        conversation_scenario: None,
                        session_input: session_input(c.initial_session),
                        creation_timestamp: now,
                        rubrics: None,
                        final_session_state: None,
                    })
                    .collect();
                (
                    FileForm::AdkEvalList,
                    EvalSet {
                        name: Some(id.clone()),
                        eval_set_id: id,
                        description: None,
                        eval_cases,
                        creation_timestamp: now,
                    },
                )
            } else {
                let turns: Vec<OldTurn> = typed(path, text, "a list of turns")?;
                let id = id_from_file_name(path);
                let case = EvalCase {
                    eval_id: path.display().to_string(),
                    conversation: Some(turns.into_iter().map(convert_turn).collect()),
                    conversation_scenario: None,
                    session_input: None,
                    creation_timestamp: now,
                    rubrics: None,
                    final_session_state: None,
                };
                (
                    FileForm::TurnList,
                    EvalSet {
                        name: Some(id.clone()),
                        eval_set_id: id,
                        description: None,
                        eval_cases: vec![case],
                        creation_timestamp: now,
                    },
                )
            }
        }
        _ => {
            let set: EvalSet = typed(path, text, "eval set")?;
            (FileForm::EvalSet, set)
        }
    };
    check(path, text, &set)?;
    Ok(LoadedEvalSet {
        path: path.to_owned(),
        form,
        set,
    })
}

/// ADK's model validators: exactly one of `conversation` and `conversation_scenario`.
fn check(path: &Path, text: &str, set: &EvalSet) -> Result<(), FileError> {
    for case in &set.eval_cases {
        if case.conversation.is_some() == case.conversation_scenario.is_some() {
            let (line, column) = locate(text, &format!("\"{}\"", case.eval_id));
            return Err(FileError::Invalid {
                path: path.display().to_string(),
                line,
                column,
                message: format!(
                    "eval case `{}`: give exactly one of `conversation` and `conversation_scenario`",
                    case.eval_id
                ),
            });
        }
    }
    Ok(())
}

/// Line and column of the first occurrence of `needle` (0, 0 when absent).
fn locate(text: &str, needle: &str) -> (usize, usize) {
    let Some(offset) = text.find(needle) else {
        return (0, 0);
    };
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

/// Reads an eval set file.
///
/// # Errors
/// See [`parse`]; unreadable files.
pub fn load(path: &Path) -> Result<LoadedEvalSet, FileError> {
    let text = crate::config::read_text(path).map_err(|source| FileError::Read {
        path: path.display().to_string(),
        source,
    })?;
    parse(path, &text)
}

/// An eval set argument: a file or folder, with the case ids after `:` if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The file or folder.
    pub path: PathBuf,
    /// Selected case ids; empty = all.
    pub cases: Vec<String>,
}

impl Selection {
    /// Splits `FILE:id1,id2`; a path that exists as written is taken whole (so a `:` in
    /// a file name works).
    pub fn parse(arg: &str) -> Selection {
        if !Path::new(arg).exists()
            && let Some((file, ids)) = arg.rsplit_once(':')
            && Path::new(file).exists()
        {
            return Selection {
                path: PathBuf::from(file),
                cases: ids
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            };
        }
        Selection {
            path: PathBuf::from(arg),
            cases: Vec::new(),
        }
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "target" || name == "node_modules" {
            continue;
        }
        if p.is_dir() {
            collect(&p, out)?;
        } else if name.ends_with(".evalset.json") || name.ends_with(".test.json") {
            out.push(p);
        }
    }
    Ok(())
}

/// Loads every selected eval set, in argument order (folders sorted), with only the
/// selected cases kept.
///
/// # Errors
/// The first file that cannot be used.
pub fn load_all(selections: &[Selection]) -> Result<Vec<LoadedEvalSet>, FileError> {
    let mut out = Vec::new();
    for sel in selections {
        if !sel.path.exists() {
            return Err(FileError::Missing {
                path: sel.path.display().to_string(),
            });
        }
        let files = if sel.path.is_dir() {
            let mut files = Vec::new();
            collect(&sel.path, &mut files).map_err(|source| FileError::List {
                path: sel.path.display().to_string(),
                source,
            })?;
            if files.is_empty() {
                return Err(FileError::Empty {
                    path: sel.path.display().to_string(),
                });
            }
            files
        } else {
            vec![sel.path.clone()]
        };
        for file in files {
            let mut loaded = load(&file)?;
            if !sel.cases.is_empty() {
                for id in &sel.cases {
                    if !loaded.set.eval_cases.iter().any(|c| &c.eval_id == id) {
                        return Err(FileError::UnknownCase {
                            path: file.display().to_string(),
                            id: id.clone(),
                            known: loaded
                                .set
                                .eval_cases
                                .iter()
                                .map(|c| c.eval_id.as_str())
                                .collect::<Vec<_>>()
                                .join(", "),
                        });
                    }
                }
                loaded
                    .set
                    .eval_cases
                    .retain(|c| sel.cases.iter().any(|id| id == &c.eval_id));
            }
            out.push(loaded);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_and_snake_case_read_the_same() {
        let snake = r#"{"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [
            {"invocation_id": "i", "user_content": {"parts": [{"text": "hi"}], "role": "user"},
             "final_response": {"parts": [{"text": "hello"}]},
             "intermediate_data": {"tool_uses": [{"name": "t", "args": {"x": 1}}]}}],
            "session_input": {"app_name": "a", "user_id": "u", "state": {"k": 1}}}]}"#;
        let camel = r#"{"evalSetId": "s", "evalCases": [{"evalId": "c", "conversation": [
            {"invocationId": "i", "userContent": {"parts": [{"text": "hi"}], "role": "user"},
             "finalResponse": {"parts": [{"text": "hello"}]},
             "intermediateData": {"toolUses": [{"name": "t", "args": {"x": 1}}]}}],
            "sessionInput": {"appName": "a", "userId": "u", "state": {"k": 1}}}]}"#;
        let a = parse(Path::new("a.evalset.json"), snake).unwrap();
        let b = parse(Path::new("a.evalset.json"), camel).unwrap();
        assert_eq!(a.set, b.set);
        assert_eq!(a.form, FileForm::EvalSet);
    }

    #[test]
    fn unknown_keys_below_the_top_are_errors_with_a_position() {
        let text = "{\"eval_set_id\": \"s\", \"eval_cases\": [\n  {\"eval_id\": \"c\", \"conversaton\": []}]}";
        let err = parse(Path::new("x.evalset.json"), text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.evalset.json:2:"), "{err}");
        assert!(err.contains("conversaton"), "{err}");
    }

    #[test]
    fn the_two_older_forms() {
        let adk = r#"[{"name": "roll", "data": [{"query": "roll", "expected_tool_use":
            [{"tool_name": "roll_die", "tool_input": {"sides": 17}}], "reference": "13"}],
            "initial_session": {"state": {"x": 1}, "app_name": "a", "user_id": "u"}}]"#;
        let set = parse(Path::new("dir/dice.test.json"), adk).unwrap();
        assert_eq!(set.form, FileForm::AdkEvalList);
        assert_eq!(set.set.eval_set_id, "dice");
        let case = &set.set.eval_cases[0];
        assert_eq!(case.eval_id, "roll");
        assert_eq!(case.session_input.as_ref().unwrap().user_id, "u");
        let flat = r#"[{"query": "a", "reference": "b"}, {"query": "c", "expected_tool_use": []}]"#;
        let set = parse(Path::new("t/flat.test.json"), flat).unwrap();
        assert_eq!(set.form, FileForm::TurnList);
        assert_eq!(set.set.eval_cases.len(), 1);
        assert_eq!(
            set.set.eval_cases[0].conversation.as_ref().unwrap().len(),
            2
        );
    }

    #[test]
    fn a_case_needs_exactly_one_conversation_kind() {
        let text = r#"{"eval_set_id": "s", "eval_cases": [{"eval_id": "c"}]}"#;
        let err = parse(Path::new("x.json"), text).unwrap_err().to_string();
        assert!(err.contains("exactly one of `conversation`"), "{err}");
    }
}
