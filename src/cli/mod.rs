//! The command line: argument parsing, exit codes and everything printed.
//!
//! Exit codes: 0 success, 1 the workflow failed (invalid files, a run that ended in an
//! error event), 2 adk-flow itself could not do what was asked (usage, I/O).

mod graph;
mod models;
mod output;
mod run;
mod test;
mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Declarative agent workflows with ADK semantics.
#[derive(Debug, Parser)]
#[command(name = "adk-flow", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a workflow: send messages and print the events it yields.
    ///
    /// Example: adk-flow run workflows/support.yaml --script workflows/support.script.yaml --message "Where is order 42?"
    Run(run::RunArgs),
    /// Check workflow files without running them: exit 0 when valid, 1 on any error.
    ///
    /// Example: adk-flow validate workflows/ --format github
    Validate(validate::ValidateArgs),
    /// Print the JSON Schema of workflow files.
    ///
    /// Example: adk-flow schema > schemas/workflow.schema.json
    Schema,
    /// Draw the agent tree, its transfer edges and loops (Mermaid, or DOT with --format dot).
    ///
    /// Example: adk-flow graph workflows/support.yaml --format dot | dot -Tsvg > support.svg
    Graph(graph::GraphArgs),
    /// Run workflow test files (*.test.yaml): scripted replies, stubbed tools, checks.
    ///
    /// Example: adk-flow test workflows/
    Test(test::TestArgs),
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything worked.
    Success = 0,
    /// The workflow is invalid or its run failed.
    Failure = 1,
    /// adk-flow could not do what was asked.
    Error = 2,
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> Self {
        ExitCode::from(s as u8)
    }
}

/// Parses the command line, runs the command and returns its exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitStatus::Error.into();
        }
    };
    let status = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run::run(args).await,
            Command::Validate(args) => validate::run(args),
            Command::Schema => print_schema(),
            Command::Graph(args) => graph::run(args),
            Command::Test(args) => test::run(args).await,
        }
    });
    match status {
        Ok(s) => s.into(),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitStatus::Success.into();
            }
            eprintln!("error: {e:#}");
            ExitStatus::Error.into()
        }
    }
}

fn print_schema() -> anyhow::Result<ExitStatus> {
    use std::io::Write;
    let text = crate::config::schema::schema_text();
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitStatus::Success)
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Logs go to stderr, quiet unless `RUST_LOG` asks for more.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
