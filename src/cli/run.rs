//! `adk-flow run`: load a workflow, send turns, print events.

use super::ExitStatus;
use super::output::Printer;
use crate::agent::RunConfig;
use crate::app::{BuildOptions, build_tree};
use crate::config::{self, Diagnostic};
use crate::event::StateMap;
use crate::model::Model;
use crate::model::dump::DumpRequests;
use crate::model::scripted::{Script, ScriptedModel};
use crate::runner::{Runner, Turn};
use crate::session::{InMemorySessionService, SessionService};
use anyhow::{Context, bail};
use clap::Args;
use futures::StreamExt;
use serde_json::Value;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Arguments of `adk-flow run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The workflow's root agent file (an ADK `root_agent.yaml` works as is).
    pub workflow: PathBuf,
    /// A user message; repeat for successive turns of one session. Without any, an
    /// interactive prompt reads one turn per line.
    #[arg(long = "message", short = 'm', value_name = "TEXT")]
    pub messages: Vec<String>,
    /// Serve model replies from a script file instead of calling a provider.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Print events as JSON lines (ADK's event format) instead of a transcript.
    #[arg(long)]
    pub json: bool,
    /// Stream partial model output as it arrives.
    #[arg(long)]
    pub stream: bool,
    /// The user id.
    #[arg(long, default_value = "user", value_name = "ID")]
    pub user: String,
    /// The session id (a new one when absent).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Initial session state; VALUE is read as JSON when it parses, else as a string.
    #[arg(long = "state", value_name = "KEY=VALUE")]
    pub state: Vec<String>,
    /// Allow command tools (declared `command:` tools) to run programs.
    #[arg(long)]
    pub allow_commands: bool,
    /// Write every model request as a JSON line to FILE.
    #[arg(long, value_name = "FILE")]
    pub dump_requests: Option<PathBuf>,
}

fn parse_state(pairs: &[String]) -> anyhow::Result<StateMap> {
    let mut state = StateMap::new();
    for pair in pairs {
        let Some((k, v)) = pair.split_once('=') else {
            bail!("--state `{pair}`: expected KEY=VALUE");
        };
        if k.is_empty() {
            bail!("--state `{pair}`: the key is empty");
        }
        let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.to_owned()));
        state.insert(k.to_owned(), value);
    }
    Ok(state)
}

fn print_diagnostics(diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        eprintln!("{d}");
    }
}

/// Runs the command.
pub async fn run(args: RunArgs) -> anyhow::Result<ExitStatus> {
    let cli_state = parse_state(&args.state)?;
    let env = |name: &str| std::env::var(name).ok();
    let workflow = match config::load_workflow(&args.workflow, &env) {
        Ok(w) => w,
        Err(diagnostics) => {
            print_diagnostics(&diagnostics);
            return Ok(ExitStatus::Failure);
        }
    };
    let model: Arc<dyn Model> = match &args.script {
        Some(path) => {
            let script: Script = match config::load_checked(path, |s: &Script| {
                s.problems()
                    .iter()
                    .map(|p| (p.pointer(), format!("{p}")))
                    .collect()
            }) {
                Ok(s) => s,
                Err(diagnostics) => {
                    print_diagnostics(&diagnostics);
                    return Ok(ExitStatus::Failure);
                }
            };
            let scripted = ScriptedModel::new(script)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            Arc::new(scripted)
        }
        None => bail!(
            "no model to call: pass --script FILE to serve scripted replies (provider support comes next)"
        ),
    };
    let model: Arc<dyn Model> = match &args.dump_requests {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let sink: Box<dyn Write + Send> = Box::new(std::io::BufWriter::new(file));
            Arc::new(DumpRequests::new(model, Arc::new(Mutex::new(sink))))
        }
        None => model,
    };
    let factory = |_name: &str| -> Result<Arc<dyn Model>, String> { Ok(Arc::clone(&model)) };
    let allow_commands = args.allow_commands
        || std::env::var("ADK_FLOW_ALLOW_COMMANDS").is_ok_and(|v| v == "1" || v == "true");
    let options = BuildOptions {
        models: &factory,
        allow_commands,
    };
    let tree = match build_tree(&workflow, &options) {
        Ok(tree) => tree,
        Err(e) => {
            eprintln!("{}: error: {e}", args.workflow.display());
            return Ok(ExitStatus::Failure);
        }
    };
    let app_name = workflow.root.name.clone();
    let mut initial_state = workflow.state.clone();
    initial_state.extend(cli_state);
    let sessions: Arc<dyn SessionService> = Arc::new(InMemorySessionService::new());
    let session = sessions
        .create_session(
            &app_name,
            &args.user,
            args.session.as_deref(),
            initial_state,
        )
        .await?;
    let runner = Runner::new(Arc::new(tree), sessions);
    let config = RunConfig {
        stream: args.stream,
        ..RunConfig::default()
    };
    let mut printer = Printer::new(args.json);

    let interactive = args.messages.is_empty();
    let mut scripted_turns = args.messages.into_iter();
    let stdin = std::io::stdin();
    loop {
        let message = if interactive {
            eprint!("you> ");
            let mut line = String::new();
            if stdin.lock().read_line(&mut line)? == 0 {
                break;
            }
            let line = line.trim_end_matches(['\n', '\r']).to_owned();
            if line.trim().is_empty() {
                continue;
            }
            line
        } else {
            match scripted_turns.next() {
                Some(m) => m,
                None => break,
            }
        };
        if !interactive {
            printer.user(&message)?;
        }
        let mut turn = Turn::text(message);
        turn.config = config;
        let mut events = runner.run(session.clone(), turn);
        while let Some(item) = events.next().await {
            match item {
                Ok(event) => printer.event(&event)?,
                Err(err) => {
                    printer.finish()?;
                    tracing::debug!("run ended: {err}");
                    eprintln!("error: {err}");
                    return Ok(ExitStatus::Failure);
                }
            }
        }
        printer.finish()?;
    }
    Ok(ExitStatus::Success)
}
