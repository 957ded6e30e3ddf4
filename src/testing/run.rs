//! Running a test file: one fresh in-memory session per test case.

use super::check::check_turn;
use super::{TestCase, TestFile, TurnInput, normalize_events};
use crate::app::{App, AppOptions, Env, ModelOptions, RunnerOptions};
use crate::config;
use crate::errors;
use crate::event::Event;
use crate::invocation::{RunConfig, RunError, error_event_note};
use crate::model::Model;
use crate::model::scripted::ScriptedModel;
use crate::runner::Turn;
use futures::StreamExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How to run tests.
#[derive(Clone)]
pub struct RunOptions {
    /// Write snapshot files instead of comparing with them.
    pub update_snapshots: bool,
    /// Let command tools run.
    pub allow_commands: bool,
    /// Environment variables, for `${VAR}` in workflow files.
    pub env: Arc<Env>,
    /// Which files the workflow's references may name.
    pub files: config::FileAccess,
}

/// The outcome of one test case.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case's name.
    pub name: String,
    /// What failed; empty when it passed.
    pub failures: Vec<String>,
    /// How long it took.
    pub elapsed: Duration,
}

/// The outcome of one test file.
#[derive(Debug, Clone)]
pub struct FileResult {
    /// The file.
    pub path: PathBuf,
    /// Problems that stopped the whole file (unreadable, invalid workflow).
    pub errors: Vec<String>,
    /// The cases, in order.
    pub cases: Vec<CaseResult>,
}

async fn run_case(app: &App, case: &TestCase, dir: &Path, options: &RunOptions) -> Vec<String> {
    let script = match case.script() {
        Ok(s) => s,
        Err(e) => return vec![e],
    };
    if let Some(problem) = unknown_agents(app.workflow(), script.replies.keys()) {
        return vec![format!("replies: {problem}")];
    }
    let model: Arc<dyn Model> = match ScriptedModel::new(script) {
        Ok(m) => Arc::new(m),
        Err(e) => return vec![format!("replies: {e}")],
    };
    let mut parts = RunnerOptions::in_memory(ModelOptions::fixed(model));
    parts.tool_stubs = case.tools.clone().into_iter().collect();
    let runner = match app.runner_with(parts) {
        Ok(r) => r,
        Err(e) => return vec![errors::chain(&e)],
    };
    let state = app.initial_state(case.state.clone());
    let session = match runner.create_session("test", None, state).await {
        Ok(s) => s,
        Err(e) => return vec![errors::chain(&e)],
    };
    let mut failures = Vec::new();
    let mut all_events: Vec<Arc<Event>> = Vec::new();
    for (i, turn) in case.turns.iter().enumerate() {
        let label = match &turn.input {
            TurnInput::User(u) => format!("{u:?}"),
            TurnInput::Respond(r) => format!("answer to {}", r.tool),
        };
        let mut t = match &turn.input {
            TurnInput::User(u) => Turn::text(u.clone()),
            TurnInput::Respond(r) => {
                match Turn::answer(&session.lock(), &r.tool, r.response.clone()) {
                    Some(t) => t,
                    None => {
                        failures.push(format!(
                            "turn {} ({label}): no call to `{}` is waiting",
                            i + 1,
                            r.tool
                        ));
                        break;
                    }
                }
            }
        };
        t.config = RunConfig::default();
        let mut stream = runner.run(session.clone(), t);
        let mut events = Vec::new();
        let mut run_error = None;
        while let Some(item) = stream.next().await {
            match item {
                Ok(e) => events.push(e),
                Err(e) => run_error = Some(e),
            }
        }
        for f in check_turn(&turn.expect, &events, &session) {
            failures.push(format!("turn {} ({label}): {f}", i + 1));
        }
        if let Some(err) = run_error {
            if turn.expect.error.is_none() {
                failures.push(format!(
                    "turn {} ({label}): the run failed: {}{}",
                    i + 1,
                    errors::chain(&err),
                    last_error(&err, &events)
                ));
            }
            all_events.extend(events);
            break;
        }
        all_events.extend(events);
    }
    if let Some(snapshot) = &case.snapshot {
        let path = match snapshot_path(dir, snapshot) {
            Ok(p) => p,
            Err(e) => {
                failures.push(e);
                return failures;
            }
        };
        let actual = normalize_events(&all_events);
        if options.update_snapshots {
            if let Err(e) = write_snapshot(dir, &path, &actual) {
                failures.push(format!("cannot write snapshot {snapshot}: {e}"));
            }
        } else {
            match config::read_text(&path) {
                Ok(expected) if expected == actual => {}
                Ok(expected) => {
                    let first = expected
                        .lines()
                        .zip(actual.lines())
                        .position(|(a, b)| a != b)
                        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
                    failures.push(format!(
                        "snapshot {} differs at event {}:\n      expected: {}\n      actual:   {}\n      (run with --update-snapshots to accept)",
                        snapshot,
                        first + 1,
                        expected.lines().nth(first).unwrap_or("<none>"),
                        actual.lines().nth(first).unwrap_or("<none>")
                    ));
                }
                Err(config::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                    failures.push(format!(
                        "snapshot {snapshot} does not exist yet (run with --update-snapshots to write it)"
                    ));
                }
                Err(e) => failures.push(format!("snapshot {snapshot}: {}", errors::chain(&e))),
            }
        }
    }
    failures
}

/// Where a case's snapshot lives: a relative path that stays inside the test file's folder.
fn snapshot_path(dir: &Path, snapshot: &str) -> Result<PathBuf, String> {
    use std::path::Component;
    let rel = Path::new(snapshot);
    let inside = rel
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if snapshot.is_empty() || !inside {
        return Err(format!(
            "snapshot `{snapshot}`: must be a relative path inside the test file's folder (no `..`)"
        ));
    }
    Ok(dir.join(rel))
}

/// Writes a snapshot: only as a regular file inside `dir` (no symbolic link, FIFO or
/// device is written through, and no folder link leads out).
fn write_snapshot(dir: &Path, path: &Path, text: &str) -> std::io::Result<()> {
    let refuse = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, why.to_owned());
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
        if !parent.canonicalize()?.starts_with(dir.canonicalize()?) {
            return Err(refuse("its folder leads outside the test file's folder"));
        }
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => {
            return Err(refuse("it exists and is not a regular file"));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::fs::write(path, text)
}

/// The last error event of a failed turn, said after the failure, or nothing (see
/// [`error_event_note`]); a workflow's failure says its own error event itself.
fn last_error(err: &RunError, events: &[Arc<Event>]) -> String {
    if matches!(err, RunError::WorkflowFailed { .. }) {
        return String::new();
    }
    let last = events.iter().rev().find(|e| e.error_code().is_some());
    last.map(|e| error_event_note(e)).unwrap_or_default()
}

/// Names among `agents` that are no LLM agent of the workflow, said as a problem: replies
/// for them would never be served, and the test would pass for the wrong reason.
pub fn unknown_agents<'a>(
    workflow: &crate::config::Workflow,
    agents: impl IntoIterator<Item = &'a String>,
) -> Option<String> {
    let known = workflow.llm_agent_names();
    let mut unknown: Vec<&str> = agents
        .into_iter()
        .map(String::as_str)
        .filter(|a| !known.contains(a))
        .collect();
    if unknown.is_empty() {
        return None;
    }
    unknown.sort_unstable();
    Some(format!(
        "the workflow has no LLM agent {} (its LLM agents: {})",
        unknown
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(", "),
        known.into_iter().collect::<Vec<_>>().join(", ")
    ))
}

/// Runs every case of a test file.
pub async fn run_file(path: &Path, options: &RunOptions) -> FileResult {
    let mut result = FileResult {
        path: path.to_owned(),
        errors: Vec::new(),
        cases: Vec::new(),
    };
    let file: TestFile = match config::load_typed(path) {
        Ok(f) => f,
        Err(d) => {
            result.errors = d.iter().map(ToString::to_string).collect();
            return result;
        }
    };
    let dir = path.parent().unwrap_or(Path::new(".")).to_owned();
    let workflow_path = config::normalize_path(&dir.join(&file.workflow));
    let workflow = match config::load_workflow(&workflow_path, &*options.env, options.files) {
        Ok(w) => w,
        Err(d) => {
            result.errors = d.iter().map(ToString::to_string).collect();
            return result;
        }
    };
    // Every case answers from its own replies; the app's own runner is never used.
    let placeholder: Arc<dyn Model> = Arc::new(ScriptedModel::default());
    let app_options = AppOptions {
        env: Arc::clone(&options.env),
        allow_commands: options.allow_commands,
        files: options.files,
        name: None,
        runner: RunnerOptions::in_memory(ModelOptions::fixed(placeholder)),
    };
    let app = match App::start(workflow, app_options).await {
        Ok(app) => app,
        Err(e) => {
            result.errors.push(errors::chain(&e));
            return result;
        }
    };
    for case in &file.tests {
        let started = Instant::now();
        let failures = run_case(&app, case, &dir, options).await;
        result.cases.push(CaseResult {
            name: case.name.clone(),
            failures,
            elapsed: started.elapsed(),
        });
    }
    app.shutdown().await;
    result
}
