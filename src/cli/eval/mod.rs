//! `adk-flow eval WORKFLOW EVALSET[:CASE,...]...`: run ADK eval sets against a workflow,
//! score them as ADK does, report for people and for CI.
//!
//! Exit status: 0 every selected case passed; 1 any case failed or was not evaluated;
//! 2 adk-flow could not do what was asked (invalid workflow, eval set or config, a
//! refused metric, a missing key).

mod report;

use super::ExitStatus;
use crate::app::{App, AppError, AppOptions, Env, ModelOptions, RunnerOptions};
use crate::eval::config::{self as eval_config, EvalConfig};
use crate::eval::engine::{self, CaseOutcome, Target};
use crate::eval::files::{self, LoadedEvalSet, Selection};
use crate::eval::models::{EvalModels, load_script};
use crate::eval::results::{self, EvalSetResult};
use anyhow::Context;
use clap::Args;
use futures::StreamExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Arguments of `adk-flow eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The workflow: an adk-flow workflow file, an ADK `root_agent.yaml`, or an ADK app
    /// folder containing one.
    pub workflow: PathBuf,
    /// Eval sets: files (`*.evalset.json`, `*.test.json`, any of ADK's three forms) or
    /// folders searched for them; `FILE:id1,id2` runs only those cases.
    #[arg(required = true, value_name = "EVALSET[:CASE,...]")]
    pub evalsets: Vec<String>,
    /// Criteria file (ADK's test_config.json); default: test_config.json beside each
    /// eval set, else ADK's defaults.
    #[arg(long, value_name = "FILE", alias = "config_file_path")]
    pub config: Option<PathBuf>,
    /// Run every case N times; report mean and min-max, flag flaky cases.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Offline: agent replies, judge replies and simulated user messages from a script.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Use this model for every agent: `gemini:MODEL` or `openai:MODEL`.
    #[arg(long, value_name = "PROVIDER:MODEL", env = "ADK_FLOW_MODEL")]
    pub model: Option<String>,
    /// Use this judge for every judge metric (`gemini-2.5-flash`, `openai/gpt-4o`,
    /// `openai:smollm2`).
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub judge_model: Option<String>,
    /// Added to every case's initial state; VALUE is JSON when it parses.
    #[arg(long = "state", value_name = "KEY=VALUE")]
    pub state: Vec<String>,
    /// How many cases run at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub parallel: u32,
    /// Print one JSON document (ADK's result format) and nothing else on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Where results are saved (default `.adk-flow/eval_history`).
    #[arg(long, value_name = "DIR", conflicts_with = "no_save")]
    pub results: Option<PathBuf>,
    /// Do not save results.
    #[arg(long)]
    pub no_save: bool,
    /// Show every turn of failing cases: expected and actual calls and text.
    #[arg(long, alias = "print_detailed_results")]
    pub detailed: bool,
    /// Only failures and the summary line.
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also every turn of passing cases, and sessions in the JSON.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Permission switches.
    #[command(flatten)]
    pub permissions: crate::cli::Permissions,
}

/// Something that stops the command before any case runs (exit 2).
fn refuse(message: impl std::fmt::Display) -> anyhow::Result<ExitStatus> {
    eprintln!("error: {message}");
    Ok(ExitStatus::Error)
}

/// The workflow file of WORKFLOW: the file, or `root_agent.yaml` in a folder.
fn workflow_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("root_agent.yaml")
    } else {
        path.to_owned()
    }
}

/// One eval set with its config and results.
pub(crate) struct SetRun {
    pub loaded: LoadedEvalSet,
    pub config: EvalConfig,
    pub outcomes: Vec<CaseOutcome>,
}

/// Runs the command.
pub async fn run(args: EvalArgs) -> anyhow::Result<ExitStatus> {
    let extra_state = super::state::parse_state(&args.state)?;
    let junit_file = match &args.junit {
        Some(path) => Some(super::outfile::OutputFile::open(path, "--junit")?),
        None => None,
    };
    let workflow_path = workflow_file(&args.workflow);
    let selections: Vec<Selection> = args.evalsets.iter().map(|a| Selection::parse(a)).collect();
    let sets = match files::load_all(&selections) {
        Ok(s) => s,
        Err(e) => return refuse(crate::errors::chain(&e)),
    };
    let mut configs = Vec::new();
    for set in &sets {
        match eval_config::discover(args.config.as_deref(), &set.path) {
            Ok(c) => configs.push(c),
            Err(e) => return refuse(crate::errors::chain(&e)),
        }
    }
    for (set, cfg) in sets.iter().zip(&configs) {
        for case in &set.set.eval_cases {
            if case.conversation_scenario.is_some()
                && let Some(m) = cfg.metrics.iter().find(|m| m.kind.needs_expected())
            {
                return refuse(format!(
                    "{}: eval case `{}` is a conversation scenario, which has no expected invocations for `{}` (use reference-free metrics such as rubric_based_* or hallucinations_v1)",
                    set.path.display(),
                    case.eval_id,
                    m.name
                ));
            }
        }
    }
    let script = match &args.script {
        Some(p) => match load_script(p) {
            Ok(s) => Some(s),
            Err(e) => return refuse(e),
        },
        None => None,
    };
    let env: Arc<Env> = Arc::new(|name: &str| std::env::var(name).ok());
    let source = EvalModels {
        script,
        spec: args.model.clone(),
        judge_override: args.judge_model.clone(),
        base_dir: std::env::current_dir().unwrap_or_default(),
        env: Arc::clone(&env),
    };
    if let Err(e) = source.check_judges(configs.iter().flat_map(|c| &c.metrics)) {
        return refuse(e);
    }
    let allow_commands = args.permissions.allow_commands;
    // The app's own runner is never used; each case run gets one from `runner_with`.
    let own_models = match &source.script {
        Some(s) => ModelOptions::fixed(s.agents().map_err(anyhow::Error::msg)?),
        None => source.agent_models(),
    };
    let options = AppOptions {
        env,
        allow_commands,
        files: args.permissions.files.access(),
        name: None,
        runner: RunnerOptions::in_memory(own_models),
    };
    let app = match App::load(&workflow_path, options).await {
        Ok(app) => app,
        Err(AppError::Invalid(diagnostics)) => {
            for d in &diagnostics {
                eprintln!("{d}");
            }
            return refuse(format!(
                "{}: the workflow is invalid",
                workflow_path.display()
            ));
        }
        Err(e) => {
            return refuse(format!(
                "{}: {}",
                workflow_path.display(),
                crate::errors::chain(&e)
            ));
        }
    };
    let mut set_runs = Vec::new();
    for (loaded, config) in sets.into_iter().zip(configs) {
        let target = Target {
            app: &app,
            extra_state: extra_state.clone(),
            session_details: args.verbose,
            user_simulator: config.user_simulator.clone(),
        };
        let jobs: Vec<(u32, usize)> = (1..=args.runs)
            .flat_map(|run| (0..loaded.set.eval_cases.len()).map(move |i| (run, i)))
            .collect();
        let set_id = loaded.set.eval_set_id.clone();
        let outcomes: Vec<CaseOutcome> = futures::stream::iter(jobs)
            .map(|(run, i)| {
                let case = &loaded.set.eval_cases[i];
                engine::run_case(&target, &source, &set_id, case, &config.metrics, run)
            })
            .buffered(args.parallel as usize)
            .collect()
            .await;
        set_runs.push(SetRun {
            loaded,
            config,
            outcomes,
        });
    }
    app.shutdown().await;

    let app_name = app.name().to_owned();
    let results: Vec<EvalSetResult> = set_runs
        .iter()
        .map(|s| {
            EvalSetResult::new(
                &app_name,
                &s.loaded.set.eval_set_id,
                s.outcomes.iter().map(|o| o.result.clone()).collect(),
            )
        })
        .collect();
    if !args.no_save {
        let dir = args
            .results
            .clone()
            .unwrap_or_else(|| PathBuf::from(crate::eval::store::CLI_HISTORY_DIR));
        for r in &results {
            results::save(&dir, r)
                .with_context(|| format!("cannot save results in {}", dir.display()))?;
        }
    }
    let summary = report::Report::new(&set_runs, args.runs);
    if let Some(file) = junit_file {
        file.replace(summary.junit().as_bytes())?;
    }
    if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") {
        summary.github_annotations(args.json)?;
    }
    if args.json {
        summary.print_json(&results)?;
    } else {
        let level = if args.quiet {
            report::Level::Quiet
        } else if args.verbose {
            report::Level::Verbose
        } else if args.detailed {
            report::Level::Detailed
        } else {
            report::Level::Normal
        };
        summary.print_table(level)?;
    }
    Ok(if summary.all_passed() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
