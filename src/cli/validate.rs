//! `adk-flow validate PATH...`: check workflow files without running them.

use super::ExitStatus;
use crate::config::discover::{FileKind, classify};
use crate::config::{self, Diagnostic, LoadOptions, Severity, yaml};
use crate::model::scripted::Script;
use anyhow::bail;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// How problems are printed.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// `path:line:col: error|warning: message`, one per line.
    Text,
    /// One JSON document: diagnostics, counts.
    Json,
    /// GitHub Actions workflow commands (annotations on the pull request).
    Github,
}

/// Arguments of `adk-flow validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Workflow files or directories (searched recursively for *.yaml and *.yml).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Which files the workflow's references may name.
    #[command(flatten)]
    pub files: super::Files,
}

/// Warnings for replies (at JSON pointer `at`, for agent `name`) addressed to agents the
/// workflow at `workflow` does not have: they would never be served. A workflow that does
/// not load gets its own diagnostics elsewhere.
fn unknown_agent_warnings(
    file: &Path,
    workflow: &Path,
    replies: impl Iterator<Item = (String, String)>,
    options: &LoadOptions<'_>,
) -> Vec<Diagnostic> {
    let Some(workflow_spec) = config::load(workflow, options).workflow else {
        return Vec::new();
    };
    let known = workflow_spec.llm_agent_names();
    let index = config::read_text(file)
        .ok()
        .and_then(|text| yaml::parse(&text).ok())
        .map(|(_, index)| index);
    replies
        .filter(|(_, agent)| !known.contains(agent.as_str()))
        .map(|(at, agent)| {
            let pointer = format!("{at}/{}", yaml::escape_segment(&agent));
            let pos = index
                .as_ref()
                .map_or(yaml::Pos { line: 1, col: 1 }, |i| i.key(&pointer));
            Diagnostic::warning(
                file,
                pos,
                format!(
                    "replies for `{agent}`, which is no LLM agent of {} (its LLM agents: {}); they would never be served",
                    workflow.display(),
                    known.iter().copied().collect::<Vec<_>>().join(", ")
                ),
            )
        })
        .collect()
}

/// Checks the given paths and returns every diagnostic, sorted, without duplicates.
fn check_paths(
    paths: &[PathBuf],
    access: config::FileAccess,
) -> anyhow::Result<(Vec<Diagnostic>, usize)> {
    let files = super::walk::find_files(paths, |name| {
        name.ends_with(".yaml") || name.ends_with(".yml")
    })?;
    if files.is_empty() {
        bail!(
            "no workflow files (*.yaml, *.yml) under {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let files: Vec<PathBuf> = files.iter().map(|f| config::normalize_path(f)).collect();
    let mut kinds = Vec::with_capacity(files.len());
    let mut referenced: HashSet<PathBuf> = HashSet::new();
    let mut data_files: HashSet<PathBuf> = HashSet::new();
    for f in &files {
        let kind = classify(f);
        if let FileKind::Agent(refs, data) = &kind {
            referenced.extend(refs.iter().cloned());
            data_files.extend(data.iter().cloned());
        }
        kinds.push(kind);
    }
    let env = |name: &str| std::env::var(name).ok();
    let options = LoadOptions {
        env: &env,
        unset_env_is_error: false,
        files: access,
    };
    let mut diagnostics = Vec::new();
    let mut reached: HashSet<PathBuf> = HashSet::new();
    for (f, kind) in files.iter().zip(&kinds) {
        let canonical = f.canonicalize().unwrap_or_else(|_| f.clone());
        match kind {
            FileKind::Script => {
                match config::load_checked_script(f, |s: &Script| {
                    s.problems()
                        .iter()
                        .map(|p| (p.pointer(), p.to_string()))
                        .collect()
                }) {
                    Err(d) => diagnostics.extend(d),
                    Ok(script) => {
                        // `X.script.yaml` holds the replies of `X.yaml` beside it.
                        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
                        let workflow = ["script.yaml", "script.yml"]
                            .iter()
                            .find_map(|ext| name.strip_suffix(ext))
                            .and_then(|stem| {
                                ["yaml", "yml"]
                                    .iter()
                                    .map(|e| f.with_file_name(format!("{stem}{e}")))
                                    .find(|p| p.is_file())
                            });
                        if let Some(workflow) = workflow {
                            let replies = script
                                .replies
                                .keys()
                                .map(|a| ("/replies".to_owned(), a.clone()));
                            diagnostics
                                .extend(unknown_agent_warnings(f, &workflow, replies, &options));
                        }
                    }
                }
            }
            FileKind::EvalScript => {
                if let Err(d) = config::load_checked(f, crate::eval::script::EvalScript::problems) {
                    diagnostics.extend(d);
                }
            }
            FileKind::Test => {
                let checked =
                    config::load_checked(f, |t: &crate::testing::TestFile| {
                        let mut problems = Vec::new();
                        for (i, case) in t.tests.iter().enumerate() {
                            match case.script() {
                                Ok(script) => problems.extend(script.problems().iter().map(|p| {
                                    (format!("/tests/{i}{}", p.pointer()), p.to_string())
                                })),
                                Err(e) => problems.push((format!("/tests/{i}/replies"), e)),
                            }
                        }
                        problems
                    });
                match checked {
                    Err(d) => diagnostics.extend(d),
                    Ok(t) => {
                        let dir = f.parent().unwrap_or(Path::new("."));
                        let workflow = config::normalize_path(&dir.join(&t.workflow));
                        let replies = t.tests.iter().enumerate().flat_map(|(i, case)| {
                            case.replies
                                .iter()
                                .filter_map(Value::as_object)
                                .flat_map(|m| m.keys())
                                .map(move |a| (format!("/tests/{i}/replies"), a.clone()))
                        });
                        diagnostics.extend(unknown_agent_warnings(f, &workflow, replies, &options));
                    }
                }
            }
            _ if referenced.contains(&canonical) || data_files.contains(&canonical) => {}
            _ => {
                let loaded = config::load(f, &options);
                diagnostics.extend(loaded.diagnostics);
                reached.extend(loaded.files);
                reached.insert(canonical);
            }
        }
    }
    // Files only referenced from files that are never loaded (a config_path cycle with no
    // way in) are checked on their own, so their problems are still reported;
    // root_agent.yaml first, as ADK would enter there.
    let mut rest: Vec<(&PathBuf, &FileKind)> = files.iter().zip(&kinds).collect();
    rest.sort_by_key(|(f, _)| f.file_name().and_then(|n| n.to_str()) != Some("root_agent.yaml"));
    for (f, kind) in rest {
        let canonical = f.canonicalize().unwrap_or_else(|_| f.clone());
        if matches!(kind, FileKind::Agent(..))
            && !reached.contains(&canonical)
            && !data_files.contains(&canonical)
        {
            let loaded = config::load(f, &options);
            diagnostics.extend(loaded.diagnostics);
            reached.extend(loaded.files);
            reached.insert(canonical);
        }
    }
    // In an ADK agent folder, every agent file should be reachable from root_agent.yaml.
    for f in &files {
        if f.file_name().and_then(|n| n.to_str()) != Some("root_agent.yaml") {
            continue;
        }
        let dir = f.parent().unwrap_or(Path::new("."));
        for (g, kind) in files.iter().zip(&kinds) {
            let canonical = g.canonicalize().unwrap_or_else(|_| g.clone());
            if g.parent() == Some(dir)
                && g != f
                && matches!(kind, FileKind::Agent(..))
                && !referenced.contains(&canonical)
                && !data_files.contains(&canonical)
            {
                diagnostics.push(Diagnostic::warning(
                    g,
                    yaml::Pos { line: 1, col: 1 },
                    format!(
                        "agent file is not reachable from {}: no config_path names it",
                        f.display()
                    ),
                ));
            }
        }
    }
    let mut seen = BTreeSet::new();
    diagnostics.retain(|d| seen.insert((d.file.clone(), d.pos.line, d.pos.col, d.message.clone())));
    diagnostics
        .sort_by(|a, b| (&a.file, a.pos.line, a.pos.col).cmp(&(&b.file, b.pos.line, b.pos.col)));
    Ok((diagnostics, files.len()))
}

fn github_escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn github_property(s: &str) -> String {
    github_escape(s).replace(':', "%3A").replace(',', "%2C")
}

/// Runs the command.
pub fn run(args: ValidateArgs) -> anyhow::Result<ExitStatus> {
    let (diagnostics, files) = check_paths(&args.paths, args.files.access())?;
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diagnostics.len() - errors;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Text => {
            for d in &diagnostics {
                writeln!(out, "{d}")?;
            }
            eprintln!(
                "{files} file{} checked: {errors} error{}, {warnings} warning{}",
                if files == 1 { "" } else { "s" },
                if errors == 1 { "" } else { "s" },
                if warnings == 1 { "" } else { "s" },
            );
        }
        Format::Json => {
            let items: Vec<Value> = diagnostics
                .iter()
                .map(|d| {
                    json!({
                        "file": d.file.display().to_string(),
                        "line": d.pos.line,
                        "column": d.pos.col,
                        "severity": d.severity_str(),
                        "message": d.message,
                    })
                })
                .collect();
            let doc = json!({"files": files, "errors": errors, "warnings": warnings, "diagnostics": items});
            writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
        }
        Format::Github => {
            for d in &diagnostics {
                writeln!(
                    out,
                    "::{} file={},line={},col={}::{}",
                    d.severity_str(),
                    github_property(&d.file.display().to_string()),
                    d.pos.line,
                    d.pos.col,
                    github_escape(&d.message)
                )?;
            }
        }
    }
    Ok(if errors > 0 {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}
