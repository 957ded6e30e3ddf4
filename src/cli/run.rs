//! `adk-flow run`: load a workflow, send turns, print events.

use super::ExitStatus;
use super::outfile::OutputFile;
use super::output::{Printer, Spinner, Verbosity};
use super::state::parse_state;
use crate::app::{App, AppOptions, Env, ModelOptions, RunnerOptions, Wrap, load_script};
use crate::artifact::{ArtifactService, FileArtifactService, InMemoryArtifactService};
use crate::config::{self, Diagnostic};
use crate::errors;
use crate::event::StateMap;
use crate::invocation::RunConfig;
use crate::memory::MemoryService;
use crate::model::Model;
use crate::model::dump::DumpRequests;
use crate::model::record::Recorder;
use crate::runner::{Runner, Turn};
use crate::session::SessionService;
use anyhow::{Context, bail};
use clap::Args;
use futures::StreamExt;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Adds a tip to clap's "a value is required for '--message'" error: the usual cause is
/// a message that starts with `-` (read as a flag unless it is a negative number).
pub fn hint_hyphen_message(mut err: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let at_message = matches!(
        err.get(ContextKind::InvalidArg),
        Some(ContextValue::String(arg)) if arg.starts_with("--message")
    );
    if err.kind() == ErrorKind::InvalidValue && at_message {
        err.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![
                "to send a message that starts with '-', write --message=-TEXT".into(),
            ]),
        );
    }
    err
}

/// Arguments of `adk-flow run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The workflow's root agent file (an ADK `root_agent.yaml` works as is).
    pub workflow: PathBuf,
    /// A user message; repeat for successive turns of one session. Without any, an
    /// interactive prompt reads one turn per line. A negative number (`-m -1`) is a
    /// message; any other text that starts with `-` is written `--message=-TEXT`.
    // Only numbers: a value that merely starts with `-` would swallow the next flag
    // (`-m --model x` sent "--model" as the message).
    #[arg(
        long = "message",
        short = 'm',
        value_name = "TEXT",
        allow_negative_numbers = true
    )]
    pub messages: Vec<String>,
    /// Use this model for every agent: `gemini:MODEL` or `openai:MODEL` (any
    /// OpenAI-compatible server; base URL from OPENAI_BASE_URL).
    #[arg(long, value_name = "PROVIDER:MODEL", env = "ADK_FLOW_MODEL")]
    pub model: Option<String>,
    /// Write the model replies of this run as a script file, to replay with --script.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Serve model replies from a script file instead of calling a provider.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Print events as JSON lines (ADK's event format) instead of a transcript.
    #[arg(long)]
    pub json: bool,
    /// Show only what the agents say.
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also show state values, token usage and finish reasons (and debug logs on stderr).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Stream partial model output as it arrives (default from ADK_FLOW_STREAM=1).
    #[arg(long, env = "ADK_FLOW_STREAM", value_parser = clap::builder::FalseyValueParser::new())]
    pub stream: bool,
    /// The user id.
    #[arg(long, default_value = "user", value_name = "ID")]
    pub user: String,
    /// The session id: an existing session resumes, a new id starts one (default: new).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Initial session state; VALUE is read as JSON when it parses, else as a string.
    #[arg(long = "state", value_name = "KEY=VALUE")]
    pub state: Vec<String>,
    /// Answer a tool call that waits for the client (a `client:` tool): NAME=JSON, sent
    /// as a function response before the messages; resumes the agent that called it.
    #[arg(long = "respond", value_name = "NAME=JSON")]
    pub responses: Vec<String>,
    /// Permission switches.
    #[command(flatten)]
    pub permissions: super::Permissions,
    /// Where sessions, memories and artifacts are kept.
    #[command(flatten)]
    pub stores: super::stores::StoreArgs,
    /// Write every model request as a JSON line to FILE.
    #[arg(long, value_name = "FILE")]
    pub dump_requests: Option<PathBuf>,
    /// Export the run's spans to this OTLP/HTTP collector (base URL; `/v1/traces` is
    /// appended). Default: `OTEL_EXPORTER_OTLP_ENDPOINT`.
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
}

/// Whether `run` sends what its command line says and exits (messages or `--respond`
/// answers given), rather than reading turns from an interactive prompt.
pub(crate) fn is_one_shot(args: &RunArgs) -> bool {
    !(args.messages.is_empty() && args.responses.is_empty())
}

fn print_diagnostics(diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        eprintln!("{d}");
    }
}

/// Runs the command. The recording (`--record`) is written and the MCP servers are closed
/// however the turns end.
pub async fn run(args: RunArgs) -> anyhow::Result<ExitStatus> {
    let cli_state = parse_state(&args.state)?;
    // Output files are opened before anything runs: a bad path fails now, not after.
    let record_file = match &args.record {
        Some(path) => Some(OutputFile::open(path, "--record")?),
        None => None,
    };
    let dump_file = match &args.dump_requests {
        Some(path) => Some(OutputFile::open(path, "--dump-requests")?),
        None => None,
    };
    let early_stores = open_stores_early(&args);
    let env: Arc<Env> = Arc::new(|name: &str| std::env::var(name).ok());
    let workflow =
        match config::load_workflow(&args.workflow, &*env, args.permissions.files.access()) {
            Ok(w) => w,
            Err(diagnostics) => {
                print_diagnostics(&diagnostics);
                return Ok(ExitStatus::Failure);
            }
        };
    // A loop that may never end is said before it starts (`validate` says it too).
    print_diagnostics(&config::graph::uncapped_cycles(&workflow.root));
    let fixed: Option<Arc<dyn Model>> = match &args.script {
        Some(path) => match load_script(path) {
            Ok(m) => {
                let agents: Vec<String> = m.remaining().into_keys().collect();
                if let Some(problem) = crate::testing::unknown_agents(&workflow, &agents) {
                    tracing::warn!(
                        "{}: replies for agents never served: {problem}",
                        path.display()
                    );
                }
                Some(Arc::new(m))
            }
            Err(e) => {
                eprintln!("{e}");
                return Ok(ExitStatus::Failure);
            }
        },
        None => None,
    };
    let dump_sink: Option<Arc<Mutex<Box<dyn Write + Send>>>> = match dump_file {
        Some(out) => {
            let file = out.truncated().context("cannot write --dump-requests")?;
            Some(Arc::new(Mutex::new(Box::new(std::io::BufWriter::new(
                file,
            )))))
        }
        None => None,
    };
    let recorder: Option<Recorder> = args.record.as_ref().map(|_| Recorder::detached());
    let wrap: Option<Wrap> = (dump_sink.is_some() || recorder.is_some()).then(|| {
        let recorder = recorder.clone();
        Arc::new(move |model: Arc<dyn Model>| -> Arc<dyn Model> {
            let model: Arc<dyn Model> = match &dump_sink {
                Some(sink) => Arc::new(DumpRequests::new(model, Arc::clone(sink))),
                None => model,
            };
            match &recorder {
                Some(r) => Arc::new(r.sharing(model)),
                None => model,
            }
        }) as Wrap
    });
    let allow_commands = args.permissions.allow_commands;
    let (sessions, memory) = match early_stores {
        Some(opened) => opened.await.context("opening the stores")??,
        None => open_stores(args.stores.db.clone(), args.stores.memory_url().to_owned()).await?,
    };
    let artifacts = open_artifacts(args.stores.artifacts.as_deref(), &args.stores.db);
    let telemetry = super::telemetry::start(args.otlp_endpoint.as_deref(), false)?;
    let options = AppOptions {
        env,
        allow_commands,
        files: args.permissions.files.access(),
        name: None,
        runner: RunnerOptions {
            models: ModelOptions {
                fixed,
                spec: args.model.clone(),
                wrap,
            },
            tool_stubs: HashMap::new(),
            sessions,
            artifacts,
            memory,
            tracer: telemetry.tracer.clone(),
        },
    };
    let app = match App::start(workflow, options).await {
        Ok(app) => app,
        Err(e) => {
            eprintln!("{}: error: {}", args.workflow.display(), errors::chain(&e));
            return Ok(ExitStatus::Failure);
        }
    };
    let outcome = turns(&app, &args, cli_state).await;
    let recorded = match (record_file, &recorder) {
        (Some(file), Some(recorder)) => file.replace(recorder.script().as_bytes()),
        _ => Ok(()),
    };
    app.shutdown().await;
    telemetry.shutdown().await;
    let status = outcome?;
    recorded?;
    Ok(status)
}

/// Opens or creates the session, answers waiting calls (`--respond`), then sends the
/// messages (or reads them from stdin).
async fn turns(app: &App, args: &RunArgs, cli_state: StateMap) -> anyhow::Result<ExitStatus> {
    let runner = app.runner();
    let session = open_session(app, &args.user, args.session.as_deref(), cli_state).await?;
    let config = RunConfig {
        stream: args.stream,
        ..RunConfig::default()
    };
    let verbosity = if args.quiet {
        Verbosity::Quiet
    } else if args.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    let mut printer = Printer::new(args.json, verbosity);

    for answer in &args.responses {
        let Some((tool, json)) = answer.split_once('=') else {
            bail!("--respond `{answer}`: expected NAME=JSON");
        };
        let response: serde_json::Value = serde_json::from_str(json)
            .with_context(|| format!("--respond {tool}: the answer is not JSON"))?;
        let Some(mut turn) = Turn::answer(&session.lock(), tool, response) else {
            eprintln!(
                "error: --respond {tool}: no call to `{tool}` is waiting for an answer in this session"
            );
            return Ok(ExitStatus::Failure);
        };
        turn.config = config;
        if let ExitStatus::Failure = send(runner, &session, turn, &mut printer).await? {
            return Ok(ExitStatus::Failure);
        }
    }
    let interactive = args.messages.is_empty() && args.responses.is_empty();
    converse(
        runner,
        &session,
        args.messages.clone(),
        interactive,
        config,
        &mut printer,
    )
    .await
}

/// The session `id` of `user` (a new one when `id` is `None` or unknown). Resuming keeps
/// the stored state; `--state` only seeds new sessions.
pub(crate) async fn open_session(
    app: &App,
    user: &str,
    id: Option<&str>,
    cli_state: StateMap,
) -> anyhow::Result<crate::session::SessionHandle> {
    let runner = app.runner();
    if let Some(id) = id
        && let Some(s) = runner.get_session(user, id).await?
    {
        return Ok(s);
    }
    Ok(runner
        .create_session(user, id, app.initial_state(cli_state))
        .await?)
}

/// The session and memory stores.
type Stores = (Arc<dyn SessionService>, Arc<dyn MemoryService>);

/// Opens the session store of `--db` and the memory store. When both name one SQLite
/// file, the memory store shares the session store's connections.
async fn open_stores(db: String, memory: String) -> anyhow::Result<Stores> {
    if memory == db && db.starts_with("sqlite:") {
        let sessions = crate::session::SqlSessionService::connect(&db)
            .await
            .with_context(|| open_sessions_failed(&db))?;
        if let Some(memory) = crate::memory::SqlMemoryService::beside(&sessions).await? {
            return Ok((Arc::new(sessions), Arc::new(memory)));
        }
    }
    Ok((open_sessions(&db).await?, open_memory(&memory).await?))
}

/// What `run` says when the session store of `--db` cannot be opened.
fn open_sessions_failed(db: &str) -> String {
    format!(
        "cannot open the session store `{db}` (use --db memory, --db sqlite:PATH or --db postgres://USER@HOST/DB)"
    )
}

/// When `--db` names a SQLite file that exists, opens the stores on a thread of their own
/// while the workflow loads on this one: opening reads back the WAL the previous run left,
/// and the two overlap on a second core. A plain thread, not a runtime worker: a one-shot
/// `run` has none (`cli::runtime_for`), and the opening is SQLite's synchronous work (its
/// future never waits on the runtime's I/O or timers, so the thread drives it itself). A
/// new file is created only once the workflow has loaded (a workflow that fails to load
/// leaves no database behind).
fn open_stores_early(
    args: &RunArgs,
) -> Option<tokio::sync::oneshot::Receiver<anyhow::Result<Stores>>> {
    let path = crate::session::sqlite_path(&args.stores.db)?;
    if path == ":memory:" || !std::path::Path::new(path).is_file() {
        return None;
    }
    let runtime = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (db, memory) = (args.stores.db.clone(), args.stores.memory_url().to_owned());
    std::thread::Builder::new()
        .name("adk-flow-open".into())
        .spawn(move || {
            let _ = tx.send(runtime.block_on(open_stores(db, memory)));
        })
        .ok()?;
    Some(rx)
}

/// Opens the session store of `--db`, saying what to do when it cannot.
pub(crate) async fn open_sessions(db: &str) -> anyhow::Result<Arc<dyn SessionService>> {
    crate::session::open_session_service(db)
        .await
        .with_context(|| open_sessions_failed(db))
}

/// The artifact store of `--artifacts`: a directory, or `memory`; by default
/// `.adk-flow/artifacts`, or memory when the sessions are kept in memory too.
pub(crate) fn open_artifacts(dir: Option<&std::path::Path>, db: &str) -> Arc<dyn ArtifactService> {
    match dir {
        Some(dir) if dir.as_os_str() == "memory" => Arc::new(InMemoryArtifactService::new()),
        Some(dir) => Arc::new(FileArtifactService::new(dir)),
        None if db == "memory" => Arc::new(InMemoryArtifactService::new()),
        None => Arc::new(FileArtifactService::new(".adk-flow/artifacts")),
    }
}

/// Opens the memory store of `--memory` (default: the session store's URL).
pub(crate) async fn open_memory(url: &str) -> anyhow::Result<Arc<dyn MemoryService>> {
    Ok(crate::memory::open_memory_service(url).await?)
}

/// Sends the turns (given, or read from stdin one per line) and prints what comes back.
async fn converse(
    runner: &Runner,
    session: &crate::session::SessionHandle,
    messages: Vec<String>,
    interactive: bool,
    config: RunConfig,
    printer: &mut Printer,
) -> anyhow::Result<ExitStatus> {
    let mut scripted_turns = messages.into_iter();
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
        if let ExitStatus::Failure = send(runner, session, turn, printer).await? {
            return Ok(ExitStatus::Failure);
        }
    }
    Ok(ExitStatus::Success)
}

/// Runs one turn and prints its events; a run error is reported and fails the command.
async fn send(
    runner: &Runner,
    session: &crate::session::SessionHandle,
    turn: Turn,
    printer: &mut Printer,
) -> anyhow::Result<ExitStatus> {
    let mut events = runner.run(session.clone(), turn);
    loop {
        let next = {
            let _spinner = Spinner::start(printer.wants_spinner());
            events.next().await
        };
        let Some(item) = next else { break };
        match item {
            Ok(event) => printer.event(&event)?,
            Err(err) => {
                printer.finish()?;
                // A workflow's failure says the error event that tells why itself.
                eprintln!("error: {}", errors::chain(&err));
                return Ok(ExitStatus::Failure);
            }
        }
    }
    printer.finish()?;
    Ok(ExitStatus::Success)
}
