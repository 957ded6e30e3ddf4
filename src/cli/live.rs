//! `adk-flow live`: a live run over standard input. Each line read is one user turn, put
//! into the live queue as soon as it is read; the end of input closes the queue.

use super::ExitStatus;
use super::output::{Printer, Verbosity};
use super::run::open_session;
use super::state::parse_state;
use crate::app::{App, AppOptions, Env, ModelOptions, RunnerOptions, load_script};
use crate::config;
use crate::errors;
use crate::event::{Content, Role};
use crate::live::{LiveRequestQueue, LiveRunConfig, Modality};
use crate::model::Model;
use clap::{Args, ValueEnum};
use futures::StreamExt;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How the model answers (`--modality`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModalityArg {
    /// Text.
    Text,
    /// Spoken audio (inline PCM in the events).
    Audio,
}

/// Arguments of `adk-flow live`.
#[derive(Debug, Args)]
pub struct LiveArgs {
    /// The workflow's root agent file.
    pub workflow: PathBuf,
    /// Serve model replies from a script file: each reply is one model turn.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Use this model for every agent: `gemini:MODEL` (Gemini Live for live models),
    /// `openai:MODEL` (text live mode over streaming calls).
    #[arg(long, value_name = "PROVIDER:MODEL", env = "ADK_FLOW_MODEL")]
    pub model: Option<String>,
    /// Print every event as one JSON line (ADK's format) and nothing else on stdout.
    #[arg(long)]
    pub json: bool,
    /// The session id: an existing session resumes, a new id creates it (default: new).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// The user id.
    #[arg(long, default_value = "user", value_name = "ID")]
    pub user: String,
    /// Where sessions, memories and artifacts are kept.
    #[command(flatten)]
    pub stores: super::stores::StoreArgs,
    /// Initial session state; VALUE is read as JSON when it parses, else as a string.
    #[arg(long = "state", value_name = "KEY=VALUE")]
    pub state: Vec<String>,
    /// How the model answers (repeat for both); default: the workflow's
    /// `live.response_modalities`, else text.
    #[arg(long = "modality", value_enum, value_name = "MODALITY")]
    pub modalities: Vec<ModalityArg>,
    /// Ask the model to transcribe what the user says (the default).
    #[arg(long, overrides_with = "no_input_transcription")]
    pub input_transcription: bool,
    /// Do not ask the model to transcribe what the user says.
    #[arg(long, overrides_with = "input_transcription")]
    pub no_input_transcription: bool,
    /// Ask the model to transcribe what it says aloud (the default).
    #[arg(long, overrides_with = "no_output_transcription")]
    pub output_transcription: bool,
    /// Do not ask the model to transcribe what it says aloud.
    #[arg(long, overrides_with = "output_transcription")]
    pub no_output_transcription: bool,
    /// Save the audio of each turn as artifacts, with file references in the session.
    #[arg(long, overrides_with = "no_save_live_blob")]
    pub save_live_blob: bool,
    /// Do not save audio.
    #[arg(long, overrides_with = "save_live_blob")]
    pub no_save_live_blob: bool,
    /// End the run after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub max_duration: Option<f64>,
    /// Ask the model for session-resumption handles and reconnect with them.
    #[arg(long, overrides_with = "no_session_resumption")]
    pub session_resumption: bool,
    /// Do not ask for session-resumption handles.
    #[arg(long, overrides_with = "session_resumption")]
    pub no_session_resumption: bool,
    /// Permission switches.
    #[command(flatten)]
    pub permissions: super::Permissions,
}

/// A `--X` / `--no-X` pair: `Some` when either was given (the last one wins).
fn switch(yes: bool, no: bool) -> Option<bool> {
    match (yes, no) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    }
}

impl LiveArgs {
    /// The flags given, over `config` (the workflow's `live` settings).
    fn run_config(&self, mut config: LiveRunConfig) -> anyhow::Result<LiveRunConfig> {
        if !self.modalities.is_empty() {
            config.response_modalities = self
                .modalities
                .iter()
                .map(|m| match m {
                    ModalityArg::Text => Modality::Text,
                    ModalityArg::Audio => Modality::Audio,
                })
                .collect();
        }
        match self.max_duration {
            None => {}
            Some(s) if s.is_finite() && s > 0.0 => {
                config.max_duration = Some(Duration::from_secs_f64(s));
            }
            Some(s) => anyhow::bail!("--max-duration {s}: expected a positive number of seconds"),
        }
        let switches = [
            (
                switch(self.input_transcription, self.no_input_transcription),
                &mut config.input_transcription,
            ),
            (
                switch(self.output_transcription, self.no_output_transcription),
                &mut config.output_transcription,
            ),
            (
                switch(self.save_live_blob, self.no_save_live_blob),
                &mut config.save_live_blob,
            ),
            (
                switch(self.session_resumption, self.no_session_resumption),
                &mut config.session_resumption,
            ),
        ];
        for (given, slot) in switches {
            if let Some(on) = given {
                *slot = on;
            }
        }
        Ok(config)
    }
}

/// Runs the command: exit 0 when the run ends normally, 1 when it ends in an error.
pub async fn run(args: LiveArgs) -> anyhow::Result<ExitStatus> {
    let cli_state = parse_state(&args.state)?;
    // Flags are checked before anything loads; they apply over the workflow's settings.
    args.run_config(LiveRunConfig::default())?;
    let env: Arc<Env> = Arc::new(|name: &str| std::env::var(name).ok());
    let workflow =
        match config::load_workflow(&args.workflow, &*env, args.permissions.files.access()) {
            Ok(w) => w,
            Err(diagnostics) => {
                for d in diagnostics {
                    eprintln!("{d}");
                }
                return Ok(ExitStatus::Failure);
            }
        };
    let fixed: Option<Arc<dyn Model>> = match &args.script {
        Some(path) => match load_script(path) {
            Ok(m) => Some(Arc::new(m)),
            Err(e) => {
                eprintln!("{e}");
                return Ok(ExitStatus::Failure);
            }
        },
        None => None,
    };
    let super::stores::Opened {
        sessions,
        memory,
        artifacts,
    } = args.stores.open().await?;
    let options = AppOptions {
        env,
        allow_commands: args.permissions.allow_commands,
        files: args.permissions.files.access(),
        name: None,
        runner: RunnerOptions {
            models: ModelOptions {
                fixed,
                spec: args.model.clone(),
                wrap: None,
            },
            tool_stubs: HashMap::new(),
            sessions,
            artifacts,
            memory,
            tracer: Default::default(),
        },
    };
    let app = match App::start(workflow, options).await {
        Ok(app) => app,
        Err(e) => {
            eprintln!("{}: error: {}", args.workflow.display(), errors::chain(&e));
            return Ok(ExitStatus::Failure);
        }
    };
    if let Err(e) = crate::live::check(app.runner().tree()) {
        eprintln!("{}: error: {e}", args.workflow.display());
        app.shutdown().await;
        return Ok(ExitStatus::Failure);
    }
    let live_config = args.run_config(app.live_run_config(Modality::Text))?;
    let outcome = converse(&app, &args, cli_state, live_config).await;
    app.shutdown().await;
    outcome
}

/// Opens or creates the session, feeds stdin into the queue and prints the events.
async fn converse(
    app: &App,
    args: &LiveArgs,
    cli_state: crate::event::StateMap,
    config: LiveRunConfig,
) -> anyhow::Result<ExitStatus> {
    let runner = app.runner();
    let session = open_session(app, &args.user, args.session.as_deref(), cli_state).await?;
    let queue = LiveRequestQueue::new();
    let mut events = runner.run_live(session, &queue, config);
    // A thread of its own: a blocking read of a terminal must not hold the runtime when
    // the run ends before input does (the last task_completed).
    std::thread::spawn(move || feed_stdin(&queue));
    let mut printer = Printer::new(args.json, Verbosity::Normal);
    let mut status = ExitStatus::Success;
    while let Some(item) = events.next().await {
        match item {
            Ok(event) => printer.event(&event)?,
            Err(err) => {
                printer.finish()?;
                eprintln!("error: {}", errors::chain(&err));
                status = ExitStatus::Failure;
            }
        }
    }
    printer.finish()?;
    Ok(status)
}

/// Sends each line of standard input as one user turn; closes the queue at the end.
fn feed_stdin(queue: &LiveRequestQueue) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim_end_matches('\r').to_owned();
        if !queue.send_content(Content::text(Role::User, line)) {
            return;
        }
    }
    queue.close();
}
