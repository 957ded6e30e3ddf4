//! Where a command that runs workflows keeps sessions, memories and artifacts: the flags
//! `run`, `live` and `serve` share, so each reads the same flag and variable the same way.

use clap::Args;
use std::path::PathBuf;

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

impl StoreArgs {
    /// The memory store's URL: `--memory`, or the session store's.
    pub fn memory_url(&self) -> &str {
        self.memory.as_deref().unwrap_or(&self.db)
    }
}
