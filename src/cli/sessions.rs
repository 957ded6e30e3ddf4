//! `adk-flow sessions list|show|delete`: inspect and remove stored conversations.

use super::ExitStatus;
use super::output::{Printer, Verbosity, printable};
use crate::session::{SessionKey, SessionService, SqlSessionService};
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use std::io::Write;

/// Arguments of `adk-flow sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: SessionsAction,
    /// The session store: `sqlite:PATH` or `postgres://USER@HOST:PORT/DB`.
    #[arg(
        long,
        global = true,
        value_name = "URL",
        env = "ADK_FLOW_DB",
        default_value = super::stores::DEFAULT_DB
    )]
    pub db: String,
    /// Only sessions of this app (the root agent's name).
    #[arg(long, global = true, value_name = "APP")]
    pub app: Option<String>,
    /// Only sessions of this user.
    #[arg(long, global = true, value_name = "ID")]
    pub user: Option<String>,
}

/// A sessions subcommand.
#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// List stored sessions: app, user, id, events, last update.
    List,
    /// Print a session's state and events (a transcript, or JSON lines with --json).
    Show {
        /// The session id.
        id: String,
        /// Print the events as JSON lines.
        #[arg(long)]
        json: bool,
    },
    /// Delete a session and its events.
    Delete {
        /// The session id.
        id: String,
    },
}

async fn open(db: &str) -> anyhow::Result<SqlSessionService> {
    if db == "memory" {
        bail!("--db memory keeps nothing between runs; use sqlite:PATH or postgres://...");
    }
    SqlSessionService::connect(db)
        .await
        .with_context(|| format!("cannot open the session store `{db}`"))
}

fn fmt_time(seconds: f64) -> String {
    crate::time::UtcTime::from_unix(seconds).short()
}

/// The one session `id` names among `all` (narrowed by `--app`/`--user`), or why not.
fn pick<'a>(
    all: &'a [SessionKey],
    id: &str,
    args: &SessionsArgs,
    store_url: &str,
) -> Result<&'a SessionKey, String> {
    let matches: Vec<&SessionKey> = all
        .iter()
        .filter(|k| k.session_id == id)
        .filter(|k| args.app.as_deref().is_none_or(|a| a == k.app_name))
        .filter(|k| args.user.as_deref().is_none_or(|u| u == k.user_id))
        .collect();
    match matches.as_slice() {
        [k] => Ok(k),
        [] => Err(format!(
            "no session `{}` in {store_url} (see `adk-flow sessions list`)",
            printable(id)
        )),
        several => Err(format!(
            "session id `{}` exists for several apps or users ({}); pick one with --app and --user",
            printable(id),
            several
                .iter()
                .map(|k| format!(
                    "app {}, user {}",
                    printable(&k.app_name),
                    printable(&k.user_id)
                ))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
}

/// Runs the command.
pub async fn run(args: SessionsArgs) -> anyhow::Result<ExitStatus> {
    let store = open(&args.db).await?;
    let all = store.list_all_sessions().await?;
    let stdout = std::io::stdout();
    match &args.action {
        SessionsAction::List => {
            let mut out = stdout.lock();
            if all.is_empty() {
                eprintln!("no sessions in {}", store.url());
            } else {
                writeln!(
                    out,
                    "{:<20} {:<12} {:<38} {:>6}  updated",
                    "app", "user", "session", "events"
                )?;
            }
            let mut users: Vec<(&str, &str)> = all
                .iter()
                .filter(|k| args.app.as_deref().is_none_or(|a| a == k.app_name))
                .filter(|k| args.user.as_deref().is_none_or(|u| u == k.user_id))
                .map(|k| (k.app_name.as_str(), k.user_id.as_str()))
                .collect();
            users.dedup();
            for (app, user) in users {
                for s in store.list_session_summaries(app, user).await? {
                    writeln!(
                        out,
                        "{:<20} {:<12} {:<38} {:>6}  {}",
                        printable(app),
                        printable(user),
                        printable(&s.id),
                        s.event_count,
                        fmt_time(s.update_time)
                    )?;
                }
            }
        }
        SessionsAction::Show { id, json } => {
            let json = *json;
            let key = match pick(&all, id, &args, store.url()) {
                Ok(k) => k,
                Err(why) => {
                    eprintln!("error: {why}");
                    return Ok(ExitStatus::Failure);
                }
            };
            let Some(handle) = store.get_session(&key.app_name, &key.user_id, id).await? else {
                bail!("session `{id}` disappeared while reading it");
            };
            let session = handle.lock().clone();
            let mut printer = Printer::new(json, Verbosity::Normal);
            if !json {
                let mut out = stdout.lock();
                writeln!(
                    out,
                    "session {} (app {}, user {})",
                    printable(&session.id),
                    printable(&session.app_name),
                    printable(&session.user_id)
                )?;
                writeln!(
                    out,
                    "state: {}",
                    serde_json::Value::Object(session.state.clone())
                )?;
            }
            for event in &session.events {
                if event.is_from_user()
                    && !json
                    && let Some(t) = event.text()
                {
                    printer.user(&t)?;
                    continue;
                }
                printer.event(event)?;
            }
        }
        SessionsAction::Delete { id } => {
            let key = match pick(&all, id, &args, store.url()) {
                Ok(k) => k,
                Err(why) => {
                    eprintln!("error: {why}");
                    return Ok(ExitStatus::Failure);
                }
            };
            store
                .delete_session(&key.app_name, &key.user_id, id)
                .await?;
            eprintln!(
                "deleted session {} (app {}, user {})",
                printable(id),
                printable(&key.app_name),
                printable(&key.user_id)
            );
        }
    }
    store.close().await;
    Ok(ExitStatus::Success)
}
