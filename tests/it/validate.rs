//! `adk-flow validate` against a corpus: each invalid case states the diagnostics it must
//! produce in `# expect: SEVERITY [FILE:]LINE:COL TEXT` comments, and produces no others.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};

struct Expect {
    severity: String,
    file: String,
    line: u64,
    col: u64,
    text: String,
}

fn expectations(case: &Path) -> Vec<Expect> {
    let mut files = vec![];
    if case.is_dir() {
        let mut stack = vec![case.to_owned()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p)
                } else {
                    files.push(p)
                }
            }
        }
    } else {
        files.push(case.to_owned());
    }
    let mut out = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("# expect: ") else {
                continue;
            };
            let (severity, rest) = rest.split_once(' ').unwrap();
            let (loc, text) = rest.split_once(' ').unwrap();
            let parts: Vec<&str> = loc.rsplitn(3, ':').collect();
            let (file, line, col) = match parts.as_slice() {
                [col, line, file] => (file.to_string(), line, col),
                [col, line] => (
                    f.file_name().unwrap().to_str().unwrap().to_string(),
                    line,
                    col,
                ),
                _ => panic!("bad expectation {loc}"),
            };
            out.push(Expect {
                severity: severity.into(),
                file,
                line: line.parse().unwrap(),
                col: col.parse().unwrap(),
                text: text.into(),
            });
        }
    }
    out
}

fn validate(paths: &[&Path], format: &str) -> (Option<i32>, String) {
    let out = common::bin()
        .arg("validate")
        .args(paths)
        .args(["--format", format])
        .env_remove("ADK_FLOW_TEST_SURELY_UNSET")
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn every_invalid_case_reports_exactly_its_expected_diagnostics() {
    let root = common::repo().join("tests/validate/invalid");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    // One `validate` process per case, all at once; each case is judged on its own below.
    let outputs: Vec<(Option<i32>, String)> = std::thread::scope(|scope| {
        let running: Vec<_> = cases
            .iter()
            .map(|case| scope.spawn(move || validate(&[case], "json")))
            .collect();
        running.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut failures = vec![];
    for (case, (code, stdout)) in cases.iter().zip(outputs) {
        let expected = expectations(case);
        assert!(
            !expected.is_empty(),
            "{} states no expectation",
            case.display()
        );
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        let diags = doc["diagnostics"].as_array().unwrap();
        let wants_error = expected.iter().any(|e| e.severity == "error");
        if code != Some(if wants_error { 1 } else { 0 }) {
            failures.push(format!("{}: exit {code:?}", case.display()));
        }
        for e in &expected {
            let hit = diags.iter().any(|d| {
                d["severity"] == e.severity.as_str()
                    && d["file"].as_str().unwrap().ends_with(&e.file)
                    && d["line"] == e.line
                    && d["column"] == e.col
                    && d["message"].as_str().unwrap().contains(&e.text)
            });
            if !hit {
                failures.push(format!(
                    "{}: missing {} {}:{}:{} {}\n  got: {}",
                    case.display(),
                    e.severity,
                    e.file,
                    e.line,
                    e.col,
                    e.text,
                    serde_json::to_string_pretty(diags).unwrap()
                ));
            }
        }
        if diags.len() != expected.len() {
            failures.push(format!(
                "{}: {} diagnostics, {} expected: {}",
                case.display(),
                diags.len(),
                expected.len(),
                serde_json::to_string_pretty(diags).unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn valid_files_and_examples_have_no_errors() {
    let repo = common::repo();
    for dir in ["tests/validate/valid", "workflows", "tests/golden"] {
        let (code, stdout) = validate(&[&repo.join(dir)], "text");
        assert_eq!(code, Some(0), "{dir}:\n{stdout}");
        assert!(stdout.is_empty(), "{dir}:\n{stdout}");
    }
    // ADK's reference graphs fail at run time on purpose (a missing state key, a
    // RouterError...): warnings that say so are right; errors are not.
    let (code, stdout) = validate(&[&repo.join("tests/data/graphs")], "text");
    assert_eq!(code, Some(0), "tests/data/graphs:\n{stdout}");
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        lines.iter().all(|l| l.contains(": warning: ")),
        "tests/data/graphs:\n{stdout}"
    );
}

#[test]
fn text_and_github_formats() {
    let case = common::repo().join("tests/validate/invalid/unknown_key.yaml");
    let (code, text) = validate(&[&case], "text");
    assert_eq!(code, Some(1));
    assert!(
        text.ends_with(
            "unknown_key.yaml:4:1: error: unknown key `instructoin`; did you mean `instruction`?\n"
        ),
        "{text}"
    );
    let (_, gh) = validate(&[&case], "github");
    assert!(gh.starts_with("::error file="), "{gh}");
    assert!(gh.contains(",line=4,col=1::unknown key"), "{gh}");
}

#[test]
fn usage_errors_exit_2() {
    let out = common::bin()
        .args(["validate", "does/not/exist.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = common::bin().args(["validate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn hostile_input_fails_fast_and_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    // Alias bomb: each level doubles the previous one.
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..30 {
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{}, *a{}, *a{}, *a{}, *a{}, *a{}, *a{}, *a{}, *a{}, *a{}]\n",
            i - 1,
            i - 1,
            i - 1,
            i - 1,
            i - 1,
            i - 1,
            i - 1,
            i - 1,
            i - 1,
            i - 1
        ));
    }
    std::fs::write(p("bomb.yaml"), bomb).unwrap();
    std::fs::write(
        p("deep.yaml"),
        format!(
            "name: a\ninstruction: {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
    )
    .unwrap();
    std::fs::write(
        p("huge.yaml"),
        format!(
            "name: a\ninstruction: \"{}\"\n",
            "x".repeat(6 * 1024 * 1024)
        ),
    )
    .unwrap();
    std::fs::write(p("binary.yaml"), b"name: a\ninstruction: \xff\xfe\n").unwrap();
    let started = std::time::Instant::now();
    for f in ["bomb.yaml", "deep.yaml", "huge.yaml", "binary.yaml"] {
        let (code, text) = validate(&[&p(f)], "text");
        assert_eq!(code, Some(1), "{f}: {text}");
        assert!(text.contains(&format!("{f}:")), "{f}: {text}");
    }
    assert!(
        started.elapsed().as_secs() < 30,
        "hostile files must not hang"
    );
}

/// A tree of files each referring to the next, deeper than the loader recurses: refused
/// at the reference past the limit, for a Workflow's node files and for `config_path`
/// (3,000 files deep overflowed the stack).
#[test]
fn deep_file_trees_are_refused_not_overflowed() {
    let dir = tempfile::tempdir().unwrap();
    let n = 3000;
    let graph = dir.path().join("graph");
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(&graph).unwrap();
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(
        graph.join("root_agent.yaml"),
        "name: wf\nagent_class: Workflow\nedges:\n  - [START, w1.yaml]\n",
    )
    .unwrap();
    std::fs::write(
        tree.join("root_agent.yaml"),
        "name: root\ninstruction: x\nsub_agents: [{config_path: a1.yaml}]\n",
    )
    .unwrap();
    for i in 1..=n {
        std::fs::write(
            graph.join(format!("w{i}.yaml")),
            format!(
                "name: w{i}\nagent_class: Workflow\nedges:\n  - [START, w{}.yaml]\n",
                i + 1
            ),
        )
        .unwrap();
        std::fs::write(
            tree.join(format!("a{i}.yaml")),
            format!(
                "name: a{i}\ninstruction: x\nsub_agents: [{{config_path: a{}.yaml}}]\n",
                i + 1
            ),
        )
        .unwrap();
    }
    let (code, text) = validate(&[&graph.join("root_agent.yaml")], "text");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("w255.yaml:4:13: error: node file `w256.yaml` is more than 256 files deep"),
        "{text}"
    );
    let (code, text) = validate(&[&tree.join("root_agent.yaml")], "text");
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("a255.yaml:3:28: error: config_path `a256.yaml` is more than 256 files deep"),
        "{text}"
    );
}

/// `validate` on several workflow apps at once (folders of apps whose node files are
/// searched too, and root files named one by one) reports every error of each, once,
/// and exits 1 when any has one, 0 when none has.
#[test]
fn several_apps_and_files_at_once_report_every_error() {
    let invalid = common::repo().join("tests/validate/invalid");
    let apps = [
        invalid.join("graph_refusals_two_deep"),
        invalid.join("graph_workflow_keys_two_deep"),
        invalid.join("graph_rules_inline_nested"),
    ];
    let errors = |paths: &[&Path]| {
        let (code, stdout) = validate(paths, "json");
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        (code, doc["errors"].as_u64().unwrap())
    };
    let alone: Vec<u64> = apps
        .iter()
        .map(|a| {
            let (code, n) = errors(&[&a.join("root_agent.yaml")]);
            assert_eq!(code, Some(1), "{}", a.display());
            assert!(n > 0, "{}", a.display());
            n
        })
        .collect();
    let total: u64 = alone.iter().sum();
    let folders: Vec<&Path> = apps.iter().map(PathBuf::as_path).collect();
    assert_eq!(errors(&folders), (Some(1), total));
    let roots: Vec<PathBuf> = apps.iter().map(|a| a.join("root_agent.yaml")).collect();
    let roots: Vec<&Path> = roots.iter().map(PathBuf::as_path).collect();
    assert_eq!(errors(&roots), (Some(1), total));
    let valid = common::repo().join("tests/validate/valid");
    let (code, n) = errors(&[&valid, &apps[1]]);
    assert_eq!((code, n), (Some(1), alone[1]));
    assert_eq!(
        errors(&[&valid, &common::repo().join("workflows")]),
        (Some(0), 0)
    );
}
