//! Where a command that runs workflows keeps sessions, memories and artifacts: the flags
//! `run`, `live` and `serve` share, so each reads the same flag and variable the same way.

use crate::artifact::ArtifactService;
use crate::memory::MemoryService;
use crate::session::SessionService;
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

/// The session store when `--db` and `ADK_FLOW_DB` are unset (every command that opens
/// the store: `run`, `live`, `serve`, `sessions`, `memory`).
pub const DEFAULT_DB: &str = "sqlite:.adk-flow/sessions.db";

/// `--db`, `--memory` and `--artifacts`.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// Where sessions are kept: `sqlite:PATH`, `postgres://USER@HOST:PORT/DB`, or `memory`.
    #[arg(long, value_name = "URL", env = "ADK_FLOW_DB", default_value = DEFAULT_DB)]
    pub db: String,
    /// Where memories are kept (`load_memory`, `preload_memory`, `memory:
    /// {add_session}`): `sqlite:PATH`, `postgres://...` or `memory`; default: the
    /// session store.
    #[arg(long, value_name = "URL", env = "ADK_FLOW_MEMORY")]
    pub memory: Option<String>,
    /// Where artifacts are kept (a live run's audio among them): a directory (default
    /// `.adk-flow/artifacts`, memory with `--db memory`), or `memory`.
    #[arg(long, value_name = "DIR|memory")]
    pub artifacts: Option<PathBuf>,
}

/// The three stores a workflow's runner is given.
pub struct Opened {
    /// The session store (`--db`).
    pub sessions: Arc<dyn SessionService>,
    /// The memory store (`--memory`, or the session store's URL).
    pub memory: Arc<dyn MemoryService>,
    /// The artifact store (`--artifacts`).
    pub artifacts: Arc<dyn ArtifactService>,
}

impl StoreArgs {
    /// Opens the three stores each on its own (`run` opens sessions and memory together,
    /// early, see `run::open_stores`).
    pub async fn open(&self) -> anyhow::Result<Opened> {
        Ok(Opened {
            sessions: super::run::open_sessions(&self.db).await?,
            memory: super::run::open_memory(self.memory_url()).await?,
            artifacts: super::run::open_artifacts(self.artifacts.as_deref(), &self.db),
        })
    }

    /// The memory store's URL: `--memory`, or the session store's.
    pub fn memory_url(&self) -> &str {
        self.memory.as_deref().unwrap_or(&self.db)
    }
}
