//! The CLI contract of #18 as its checkers call it: `adk-flow run WORKFLOW --script SCRIPT
//! --json --message M1 --message M2 ...`, from another folder, with the default session
//! store: nothing but events on stdout (warnings and errors on stderr), a failed run
//! exits 1 and says why, and a file that cannot be read or is refused is named with its
//! line and column, nothing on stdout.

use crate::common::{bin, repo, write_files};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The recorded cases of `tests/data/graphs/`, sorted.
fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/data/graphs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected.events.jsonl").is_file())
        .collect();
    cases.sort();
    cases
}

/// `run ROOT --script SCRIPT --json --message ...` from `cwd`, with absolute paths.
fn run(cwd: &Path, root: &Path, script: &Path, messages: &[&str]) -> (String, i32, String) {
    let out = bin()
        .current_dir(cwd)
        .arg("run")
        .arg(root)
        .arg("--script")
        .arg(script)
        .arg("--json")
        .args(messages.iter().flat_map(|m| ["--message", m]))
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Every recorded case run as the checkers run it: each stdout line is one event (a
/// JSON object with an author), as many as ADK printed; the exit status is ADK's; a
/// failed run's last stderr line says which workflow failed at which node, and every
/// other stderr line is a warning.
#[test]
fn every_recorded_case_prints_only_events_and_exits_as_adk() {
    let cases = cases();
    assert!(cases.len() >= 100, "{}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let messages = std::fs::read_to_string(case.join("messages.txt")).unwrap();
        let messages: Vec<&str> = messages.lines().collect();
        let cwd = tempfile::tempdir().unwrap();
        let (stdout, code, stderr) = run(
            cwd.path(),
            &case.join("root_agent.yaml"),
            &case.join("script.yaml"),
            &messages,
        );
        let want_exit: i32 = std::fs::read_to_string(case.join("expected.exit"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let want_events = std::fs::read_to_string(case.join("expected.events.jsonl"))
            .unwrap()
            .lines()
            .count();
        let lines: Vec<&str> = stdout.split_terminator('\n').collect();
        let events = lines
            .iter()
            .filter(|l| {
                serde_json::from_str::<Value>(l)
                    .is_ok_and(|v| v.get("author").is_some_and(Value::is_string))
            })
            .count();
        if events != lines.len() || events != want_events {
            failures.push(format!(
                "{name}: {} stdout lines, {events} events, ADK printed {want_events}",
                lines.len()
            ));
        }
        if code != want_exit {
            failures.push(format!("{name}: exit {code}, ADK {want_exit}: {stderr}"));
        }
        let said: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let (last, warnings) = match (code, said.split_last()) {
            (1, Some((last, rest))) => (Some(*last), rest),
            _ => (None, said.as_slice()),
        };
        if code == 1 && !last.is_some_and(|l| l.starts_with("error: workflow `")) {
            failures.push(format!("{name}: a failed run does not say why: {stderr}"));
        }
        if let Some(l) = warnings
            .iter()
            .find(|l| !l.contains("WARN ") && !l.contains(": warning: "))
        {
            failures.push(format!("{name}: not a warning on stderr: {l}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A script that cannot be read, is no YAML or has a misspelt key, and a workflow whose
/// node file is missing: one `FILE:LINE:COL: error: ...` naming the file, nothing on
/// stdout, exit 1 (README's exit status: the workflow or its files are invalid).
#[test]
fn bad_scripts_and_missing_node_files_are_named_with_their_position() {
    let case = repo().join("tests/data/graphs/appendix_loop");
    let read = |f: &str| std::fs::read_to_string(case.join(f)).unwrap();
    let (root, writer) = (read("root_agent.yaml"), read("writer.yaml"));
    let dir = write_files(&[
        ("root_agent.yaml", &root),
        ("writer.yaml", &writer),
        ("broken.yaml", "replies: [\n"),
        ("typo.yaml", "replies:\n  writer: [{txt: x}]\n"),
        (
            "lone.yaml",
            "name: wf\nagent_class: Workflow\nedges:\n  - [START, gone.yaml]\n",
        ),
    ]);
    let at = |f: &str| dir.path().join(f);
    let cases = [
        ("root_agent.yaml", "broken.yaml", "broken.yaml:2:1: error: "),
        (
            "root_agent.yaml",
            "typo.yaml",
            "typo.yaml:2:13: error: unknown field `txt`",
        ),
        (
            "root_agent.yaml",
            "absent.yaml",
            "absent.yaml:1:1: error: cannot read file",
        ),
        (
            "lone.yaml",
            "typo.yaml",
            "lone.yaml:4:13: error: node file `gone.yaml` not found",
        ),
    ];
    for (root, script, said) in cases {
        let (stdout, code, stderr) = run(dir.path(), &at(root), &at(script), &["hi"]);
        assert_eq!(code, 1, "{root} {script}: {stderr}");
        assert!(stdout.is_empty(), "{root} {script}: {stdout}");
        let line = stderr.lines().next().unwrap_or_default();
        assert!(
            line.contains(said) && line.starts_with(dir.path().to_str().unwrap()),
            "{root} {script}: {stderr}"
        );
    }
}
