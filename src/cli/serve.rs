//! `adk-flow serve DIR|FILE...`: every workflow behind ADK's HTTP API (see
//! [`crate::server`]), until SIGINT or SIGTERM.

use super::ExitStatus;
use crate::app::{Env, ModelOptions};
use crate::eval::models::load_script;
use crate::model::Model;
use crate::model::scripted::{Script, ScriptedModel};
use crate::server::apps::{AppSettings, BesideScripts, Registry, discover};
use crate::server::evals::EvalOptions;
use crate::server::runs::RunLimits;
use crate::server::trace::{NoTraces, StoreTraces, TraceSource};
use crate::server::{ServeOptions, Server};
use anyhow::Context;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `adk-flow serve` (a contract: checks outside the repository use it).
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Workflow files, app folders (holding root_agent.yaml) or folders of apps.
    #[arg(required = true, value_name = "DIR|FILE")]
    pub paths: Vec<PathBuf>,
    /// Address to listen on; anything but loopback makes the server reachable from others.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Every LLM agent answers from this script; each session (and each eval case run)
    /// consumes it from the start; its `judge:` and `user:` replies answer eval runs'
    /// judges and simulated users, as in `adk-flow eval --script`.
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Each app answers from the `X.script.yaml` beside its root file `X.yaml`, when there
    /// is one, consumed from the start by each session (the example workflows, offline).
    #[arg(long, conflicts_with = "script")]
    pub script_beside: bool,
    /// Every LLM agent of every app calls this model: `gemini:MODEL` or `openai:MODEL` (any
    /// OpenAI-compatible server; base URL from OPENAI_BASE_URL), as `run --model`;
    /// `--script` and an app's script beside it (`--script-beside`) come first.
    #[arg(long, value_name = "PROVIDER:MODEL", env = "ADK_FLOW_MODEL")]
    pub model: Option<String>,
    /// The judge of every judge metric in eval runs (`gemini-2.5-flash`, `openai/gpt-4o`,
    /// `openai:smollm2`), instead of each criterion's.
    #[arg(long, value_name = "PROVIDER:MODEL")]
    pub judge_model: Option<String>,
    /// Where sessions, memories and artifacts are kept.
    #[command(flatten)]
    pub stores: super::stores::StoreArgs,
    /// Serve this web UI folder at /dev-ui/ (ADK's: the google/adk/cli/browser folder of
    /// the google-adk package). Without it, `/` serves adk-flow's own web page.
    #[arg(long, value_name = "DIR")]
    pub ui: Option<PathBuf>,
    /// Require this bearer token on every request (the browser logs in once with the
    /// printed URL).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "ADK_FLOW_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Allow cross-origin requests from ORIGIN (`*`, `https://host:port`, or
    /// `regex:PATTERN`); repeatable.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// Permission switches (`--allow-commands`).
    #[command(flatten)]
    pub permissions: super::Permissions,
    /// Stop a run that takes longer than this, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub run_timeout: u64,
    /// The most model calls one run may make (0: no limit).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub max_llm_calls: u32,
    /// The largest request body, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_body: usize,
    /// The most live sessions (`/run_live` websockets) held at once; more get 503.
    #[arg(long, default_value_t = 32, value_name = "N")]
    pub max_live_sessions: usize,
    /// Export every invocation's spans to this OTLP/HTTP collector (base URL;
    /// `/v1/traces` is appended). Default: `OTEL_EXPORTER_OTLP_ENDPOINT`.
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// Keep no spans for `/debug/trace/...` (the dev UI's Trace view). Each kept model
    /// call holds its whole request as JSON, as ADK's do, so a turn's cost grows with the
    /// conversation; without the store and without OTLP, nothing is traced at all.
    #[arg(long)]
    pub no_debug_traces: bool,
    /// On SIGINT/SIGTERM, how long running turns may go on before they are cancelled.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub grace: u64,
}

/// Resolves when SIGINT or SIGTERM arrives.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Runs the command.
pub async fn run(args: ServeArgs) -> anyhow::Result<ExitStatus> {
    let sources = discover(&args.paths)?;
    if sources.is_empty() {
        anyhow::bail!(
            "no workflow found in {} (scripts and test files are not apps)",
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // One script for chat and evals: agents' replies (per session), and the judge's and
    // simulated user's replies of eval runs (per case run), as `adk-flow eval --script`.
    let (script, eval_script) = match &args.script {
        Some(path) => match load_script(path) {
            Ok(eval_script) => {
                let agents = Script {
                    replies: eval_script.replies.clone(),
                };
                match ScriptedModel::new(agents) {
                    Ok(m) => (Some(Arc::new(m.per_conversation())), Some(eval_script)),
                    Err(e) => {
                        eprintln!("{}: {e}", path.display());
                        return Ok(ExitStatus::Failure);
                    }
                }
            }
            Err(e) => {
                eprintln!("{e}");
                return Ok(ExitStatus::Failure);
            }
        },
        None => (None, None),
    };
    let super::stores::Opened {
        sessions,
        memory,
        artifacts,
    } = args.stores.open().await?;
    let allow_commands = args.permissions.allow_commands;
    let env: Arc<Env> = Arc::new(|name: &str| std::env::var(name).ok());
    let telemetry = super::telemetry::start(args.otlp_endpoint.as_deref(), !args.no_debug_traces)?;
    let settings = AppSettings {
        env,
        allow_commands,
        files: args.permissions.files.access(),
        models: ModelOptions {
            fixed: script.clone().map(|m| m as Arc<dyn Model>),
            spec: args.model.clone(),
            ..ModelOptions::default()
        },
        script,
        beside: args.script_beside.then(BesideScripts::default),
        sessions: Arc::clone(&sessions),
        artifacts: Arc::clone(&artifacts),
        memory,
        tracer: telemetry.tracer.clone(),
    };
    let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
    let registry = Registry::new(args.paths.clone(), sources, settings);
    if registry.refresh_all().await == 0 {
        eprintln!("error: no app loads (the diagnostics are above)");
        return Ok(ExitStatus::Failure);
    }

    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
    let addr: SocketAddr = listener.local_addr()?;
    let options = ServeOptions {
        bind: addr.ip(),
        ui: args.ui.clone(),
        token: args.token.clone(),
        allow_origins: args.allow_origins.clone(),
        max_body_bytes: args.max_body,
        limits: RunLimits {
            timeout: Duration::from_secs(args.run_timeout),
            max_llm_calls: args.max_llm_calls,
        },
        grace: Duration::from_secs(args.grace),
        reload_interval: Duration::from_secs(1),
    };
    if let Some(ui) = &args.ui
        && !ui.join("index.html").is_file()
    {
        anyhow::bail!("--ui {}: no index.html in that folder", ui.display());
    }
    let evals = EvalOptions {
        script: eval_script,
        judge_model: args.judge_model.clone(),
        base_dir: std::env::current_dir().unwrap_or_default(),
    };
    let traces: Arc<dyn TraceSource> = match &telemetry.store {
        Some(store) => Arc::new(StoreTraces(Arc::clone(store))),
        None => Arc::new(NoTraces),
    };
    let server = Server::with_sources(registry, sessions, artifacts, options, traces, evals)?
        .with_max_live_sessions(args.max_live_sessions);
    let base = format!("http://{addr}");
    eprintln!("adk-flow serve: {} on {base}", names.join(", "));
    // The one place the token is shown: the link that logs the browser in.
    let login = |path: &str| match &args.token {
        Some(token) => format!("{base}{path}?token={token}"),
        None => format!("{base}{path}"),
    };
    if args.ui.is_some() {
        eprintln!("  dev UI: {}", login("/dev-ui/"));
    } else {
        eprintln!("  web page: {}", login("/"));
    }
    if !addr.ip().is_loopback() {
        eprintln!(
            "  warning: listening on {} reaches beyond this machine{}",
            addr.ip(),
            if args.token.is_none() {
                "; set --token"
            } else {
                ""
            }
        );
    }
    server.serve(listener, shutdown_signal()).await?;
    telemetry.shutdown().await;
    eprintln!("adk-flow serve: stopped");
    Ok(ExitStatus::Success)
}
