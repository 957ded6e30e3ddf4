//! `adk-flow memory list|search|forget|add`: inspect, search, remove and add memories.

use super::ExitStatus;
use crate::memory::{Forget, MemoryService, SearchRequest};
use crate::session::{SessionService, SqlSessionService};
use crate::time::UtcTime;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use std::io::Write;

/// Arguments of `adk-flow memory`.
#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: MemoryAction,
    /// The session store: `sqlite:PATH` or `postgres://USER@HOST:PORT/DB`.
    #[arg(
        long,
        global = true,
        value_name = "URL",
        env = "ADK_FLOW_DB",
        default_value = super::stores::DEFAULT_DB
    )]
    pub db: String,
    /// The memory store, when it is not the session store.
    #[arg(long, global = true, value_name = "URL", env = "ADK_FLOW_MEMORY")]
    pub memory: Option<String>,
    /// The app (the root agent's name); may be left out when the store holds one app.
    #[arg(long, global = true, value_name = "NAME")]
    pub app: Option<String>,
}

/// A memory subcommand.
#[derive(Debug, Subcommand)]
pub enum MemoryAction {
    /// List stored memories: app, user, session, author, time, text.
    List {
        /// Only this user's.
        #[arg(long, value_name = "ID")]
        user: Option<String>,
        /// One JSON object per memory.
        #[arg(long)]
        json: bool,
    },
    /// Search one user's memories as `load_memory` does (any word of QUERY matches).
    Search {
        /// The query.
        query: String,
        /// The user.
        #[arg(long, default_value = "user", value_name = "ID")]
        user: String,
        /// Print each memory as JSON (the shape `load_memory` returns).
        #[arg(long)]
        json: bool,
    },
    /// Remove one user's memories (of one session with --session).
    Forget {
        /// The user.
        #[arg(long, value_name = "ID")]
        user: String,
        /// Only this session's memories.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
    },
    /// Add a stored session to memory (the `on_demand` way).
    Add {
        /// The session id.
        session: String,
    },
}

/// Runs the command.
pub async fn run(args: MemoryArgs) -> anyhow::Result<ExitStatus> {
    let url = args.memory.as_deref().unwrap_or(&args.db);
    if url == "memory" {
        bail!("an in-memory store keeps nothing between runs; use sqlite:PATH or postgres://...");
    }
    let store = crate::memory::SqlMemoryService::connect(url).await?;
    let status = act(&args, &store).await;
    store.close().await;
    status
}

/// The app the command is about: `--app`, or the only app the store has memories of.
async fn app_of(args: &MemoryArgs, store: &dyn MemoryService) -> anyhow::Result<Option<String>> {
    if let Some(app) = &args.app {
        return Ok(Some(app.clone()));
    }
    let mut apps: Vec<String> = store
        .list(None, None)
        .await?
        .into_iter()
        .map(|m| m.session.app_name)
        .collect();
    apps.sort();
    apps.dedup();
    match apps.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        many => bail!(
            "the store holds memories of several apps ({}); name one with --app",
            many.join(", ")
        ),
    }
}

async fn act(
    args: &MemoryArgs,
    store: &crate::memory::SqlMemoryService,
) -> anyhow::Result<ExitStatus> {
    let stdout = std::io::stdout();
    match &args.action {
        MemoryAction::List { user, json } => {
            let all = store.list(args.app.as_deref(), user.as_deref()).await?;
            let mut out = stdout.lock();
            if all.is_empty() {
                eprintln!("no memories in {}", store.url());
            } else if !json {
                writeln!(
                    out,
                    "{:<20} {:<12} {:<38} {:<14} {:<20}  text",
                    "app", "user", "session", "author", "time"
                )?;
            }
            for m in all {
                if *json {
                    let line = serde_json::json!({
                        "app": m.session.app_name,
                        "user": m.session.user_id,
                        "session": m.session.session_id,
                        "event": m.event_id,
                        "author": m.author,
                        "timestamp": m.timestamp,
                        "text": m.text,
                    });
                    writeln!(out, "{line}")?;
                } else {
                    writeln!(
                        out,
                        "{:<20} {:<12} {:<38} {:<14} {:<20}  {}",
                        m.session.app_name,
                        m.session.user_id,
                        m.session.session_id,
                        m.author,
                        UtcTime::from_unix(m.timestamp).short(),
                        one_line(&m.text, 80)
                    )?;
                }
            }
        }
        MemoryAction::Search { query, user, json } => {
            let Some(app) = app_of(args, store).await? else {
                eprintln!("no memories in {}", store.url());
                return Ok(ExitStatus::Success);
            };
            let found = store
                .search(&SearchRequest {
                    app: &app,
                    user,
                    query,
                    not_before: None,
                })
                .await?;
            if found.is_empty() {
                eprintln!("no memory of user `{user}` in app `{app}` matches");
            }
            let mut out = stdout.lock();
            for m in found {
                if *json {
                    writeln!(out, "{}", serde_json::to_string(&m)?)?;
                } else {
                    writeln!(
                        out,
                        "{}  {}: {}",
                        m.timestamp.as_deref().unwrap_or(""),
                        m.author.as_deref().unwrap_or("?"),
                        one_line(&m.text(), 200)
                    )?;
                }
            }
        }
        MemoryAction::Forget { user, session } => {
            let Some(app) = app_of(args, store).await? else {
                eprintln!("no memories in {}", store.url());
                return Ok(ExitStatus::Success);
            };
            let n = store
                .forget(&Forget {
                    app: &app,
                    user,
                    session: session.as_deref(),
                })
                .await?;
            eprintln!("forgot {n} memories of user `{user}` in app `{app}`");
        }
        MemoryAction::Add { session } => return add(args, store, session).await,
    }
    Ok(ExitStatus::Success)
}

/// Adds a stored session to memory; the session store is `--db`.
async fn add(
    args: &MemoryArgs,
    store: &crate::memory::SqlMemoryService,
    id: &str,
) -> anyhow::Result<ExitStatus> {
    let sessions = SqlSessionService::connect(&args.db)
        .await
        .with_context(|| "cannot open the session store (--db)")?;
    let all = sessions.list_all_sessions().await?;
    let matches: Vec<_> = all
        .iter()
        .filter(|k| k.session_id == id && args.app.as_deref().is_none_or(|a| a == k.app_name))
        .collect();
    let key = match matches.as_slice() {
        [k] => (*k).clone(),
        [] => {
            eprintln!(
                "error: no session `{id}` in {} (see `adk-flow sessions list`)",
                sessions.url()
            );
            sessions.close().await;
            return Ok(ExitStatus::Failure);
        }
        _ => {
            sessions.close().await;
            bail!("session id `{id}` exists for several apps or users; name the app with --app");
        }
    };
    let handle = sessions
        .get_session(&key.app_name, &key.user_id, id)
        .await?
        .with_context(|| format!("session `{id}` disappeared while reading it"))?;
    let session = handle.lock().clone();
    sessions.close().await;
    let added = store.add_session(&session).await?;
    eprintln!(
        "added {added} memories from session {id} (app {}, user {})",
        key.app_name, key.user_id
    );
    Ok(ExitStatus::Success)
}

/// The text on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let mut cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}
