//! The App: one workflow made runnable, built once and shared.
//!
//! An [`App`] goes the whole way: workflow files → checked [`Workflow`] → agent tree with
//! models, tools and callbacks → [`Runner`] with session and artifact services. It starts
//! the workflow's MCP servers once, when it starts, and closes them once, in
//! [`App::shutdown`]. `adk-flow run` and `adk-flow test` both go through it, and it is
//! meant to be shared (`Arc<App>`) by any number of concurrent runs.
//!
//! - `build.rs`: lowering the workflow into an [`AgentTree`](crate::tree::AgentTree);
//! - `models.rs`: which model each agent calls;
//! - `tools.rs`: the tool factory (declared tools, built-ins, AgentTool, MCP, stubs);
//! - `callbacks.rs`: compiling declared callbacks;
//! - `mcp.rs`: starting and closing MCP servers;
//! - `programs.rs`: the gate on starting programs (`--allow-commands`).

mod build;
mod callbacks;
mod graph;
mod mcp;
mod models;
pub mod programs;
mod tools;

pub use build::{BuildError, DEFAULT_MODEL};
pub use mcp::McpStartError;
pub use models::{ModelOptions, ModelSetupError, Wrap, load_script};

use crate::artifact::{ArtifactService, InMemoryArtifactService};
use crate::config::{self, Diagnostic, Workflow};
use crate::event::StateMap;
use crate::memory::{AddSession, InMemoryMemoryService, Memory, MemoryPolicy, MemoryService};
use crate::model::live::{LiveRunConfig, Modality};
use crate::runner::Runner;
use crate::session::{InMemorySessionService, SessionService};
use crate::telemetry::Tracer;
use build::{Builder, Shared};
use mcp::McpServers;
use models::Models;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Looks up an environment variable. The caller decides where values come from; the
/// library never reads the process environment itself.
pub type Env = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Why an app could not start.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The workflow files have errors; each diagnostic names file, line and column.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<Diagnostic>),
    /// The workflow starts programs (command tools, stdio MCP servers) and may not.
    #[error(transparent)]
    Programs(#[from] programs::ProgramsNotAllowed),
    /// An MCP server could not be started.
    #[error(transparent)]
    Mcp(#[from] McpStartError),
    /// Something in the workflow cannot be made runnable.
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// What a [`Runner`] of the app is made of besides the workflow: models, stubs, services.
pub struct RunnerOptions {
    /// How agents get their models.
    pub models: ModelOptions,
    /// Tools replaced by canned results (workflow tests): name → result, or
    /// `{results: [..]}` served in order.
    pub tool_stubs: HashMap<String, Value>,
    /// Where sessions are kept.
    pub sessions: Arc<dyn SessionService>,
    /// Where artifacts are kept.
    pub artifacts: Arc<dyn ArtifactService>,
    /// Where memories are kept; the workflow's `memory` settings say when sessions are
    /// added and how long memories last.
    pub memory: Arc<dyn MemoryService>,
    /// Records each invocation's spans (off: nothing recorded).
    pub tracer: Tracer,
}

impl RunnerOptions {
    /// `models`, no stubs, and fresh in-memory session, artifact and memory services.
    pub fn in_memory(models: ModelOptions) -> Self {
        RunnerOptions {
            models,
            tool_stubs: HashMap::new(),
            sessions: Arc::new(InMemorySessionService::new()),
            artifacts: Arc::new(InMemoryArtifactService::new()),
            memory: Arc::new(InMemoryMemoryService::new()),
            tracer: Tracer::off(),
        }
    }
}

/// How to start an app.
pub struct AppOptions {
    /// Environment variables: `${VAR}` in workflow files, API keys and base URLs.
    pub env: Arc<Env>,
    /// The workflow may start programs: command tools and stdio MCP servers
    /// (`--allow-commands`). Without it, [`App::start`] refuses a workflow that would.
    pub allow_commands: bool,
    /// Which files the workflow's references may name ([`App::load`]).
    pub files: config::FileAccess,
    /// The app's name, under which sessions are stored; default: the root agent's name.
    pub name: Option<String>,
    /// The app's own runner.
    pub runner: RunnerOptions,
}

/// A workflow made runnable: its agent tree, its Runner and its started MCP servers.
pub struct App {
    name: String,
    workflow: Workflow,
    env: Arc<Env>,
    shared: Shared,
    runner: Runner,
    /// Taken by the first [`App::shutdown`].
    mcp: Mutex<Option<McpServers>>,
}

impl App {
    /// Loads the workflow at `path` and starts it.
    ///
    /// # Errors
    /// [`AppError::Invalid`] with every error of the files; else as [`App::start`].
    pub async fn load(path: &Path, options: AppOptions) -> Result<App, AppError> {
        let workflow = config::load_workflow(path, &|var| (options.env)(var), options.files)
            .map_err(AppError::Invalid)?;
        App::start(workflow, options).await
    }

    /// Starts the workflow's MCP servers and builds the app's runner.
    ///
    /// # Errors
    /// Programs to start without `allow_commands` (before anything starts), a server that
    /// cannot be started, or a part of the workflow that cannot be built (the servers
    /// already started are shut down).
    pub async fn start(workflow: Workflow, options: AppOptions) -> Result<App, AppError> {
        programs::check(&workflow, options.allow_commands)?;
        let mcp = McpServers::start(&workflow).await?;
        let shared = Shared::new(options.allow_commands, mcp.tools.clone());
        let name = options.name.unwrap_or_else(|| workflow.root.name.clone());
        let runner = match build_runner(&workflow, &shared, &*options.env, &name, options.runner) {
            Ok(r) => r,
            Err(e) => {
                mcp.shutdown().await;
                return Err(e.into());
            }
        };
        Ok(App {
            name,
            workflow,
            env: options.env,
            shared,
            runner,
            mcp: Mutex::new(Some(mcp)),
        })
    }

    /// The app's name: sessions are stored under it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The checked workflow.
    pub fn workflow(&self) -> &Workflow {
        &self.workflow
    }

    /// The app's runner.
    pub fn runner(&self) -> &Runner {
        &self.runner
    }

    /// The run config of a live run: the workflow's `live` settings over ADK's defaults,
    /// with `default_modality` when the workflow names no response modality. The caller
    /// applies its own overrides (command-line flags, the `/run_live` query) on top.
    pub fn live_run_config(&self, default_modality: Modality) -> LiveRunConfig {
        use config::agent_config::LiveModality;
        let live = &self.workflow.live;
        let defaults = LiveRunConfig::default();
        LiveRunConfig {
            response_modalities: match &live.response_modalities {
                Some(m) => m
                    .iter()
                    .map(|m| match m {
                        LiveModality::Text => Modality::Text,
                        LiveModality::Audio => Modality::Audio,
                    })
                    .collect(),
                None => vec![default_modality],
            },
            input_transcription: live
                .input_transcription
                .unwrap_or(defaults.input_transcription),
            output_transcription: live
                .output_transcription
                .unwrap_or(defaults.output_transcription),
            save_live_blob: live.save_live_blob.unwrap_or(defaults.save_live_blob),
            max_duration: live.max_duration_secs.map(std::time::Duration::from_secs),
            session_resumption: live
                .session_resumption
                .unwrap_or(defaults.session_resumption),
            ..defaults
        }
    }

    /// Another runner of the same started app, with other models, stubs or services (a
    /// workflow test runs each case this way).
    ///
    /// # Errors
    /// A part of the workflow that cannot be built with these options.
    pub fn runner_with(&self, options: RunnerOptions) -> Result<Runner, BuildError> {
        build_runner(
            &self.workflow,
            &self.shared,
            &*self.env,
            &self.name,
            options,
        )
    }

    /// The state a new session starts with: the workflow's `state`, then `extra`.
    pub fn initial_state(&self, extra: StateMap) -> StateMap {
        let mut state = self.workflow.state.clone();
        state.extend(extra);
        state
    }

    /// Closes the MCP servers (ending their processes). Only the first call does
    /// anything; runs still going lose their MCP tools.
    pub async fn shutdown(&self) {
        let mcp = self.mcp.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mcp) = mcp {
            mcp.shutdown().await;
        }
    }
}

fn build_runner(
    workflow: &Workflow,
    shared: &Shared,
    env: &Env,
    name: &str,
    options: RunnerOptions,
) -> Result<Runner, BuildError> {
    let models = Models::new(workflow, &options.models, env);
    let mut builder = Builder::new(workflow, shared, models, &options.tool_stubs);
    let tree = builder.tree(&workflow.root)?;
    builder.check_stubs()?;
    Ok(Runner::new(Arc::new(tree), options.sessions)
        .with_app_name(name)
        .with_artifacts(options.artifacts)
        .with_memory(Memory::new(options.memory, memory_policy(&workflow.memory)))
        .with_tracer(options.tracer))
}

/// The runtime form of the workflow's `memory` settings.
fn memory_policy(config: &config::agent_config::MemoryConfig) -> MemoryPolicy {
    use config::agent_config::AddSessionConfig;
    MemoryPolicy {
        add_session: match config.add_session {
            AddSessionConfig::AfterInvocation => AddSession::AfterInvocation,
            AddSessionConfig::OnDemand => AddSession::OnDemand,
            AddSessionConfig::Never => AddSession::Never,
        },
        retention: config
            .retention_days
            .map(|d| std::time::Duration::from_secs(u64::from(d) * 86_400)),
    }
}
