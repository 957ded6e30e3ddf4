//! The command line: argument parsing, exit codes and everything printed.
//!
//! Exit codes: 0 success, 1 the workflow failed (invalid files, a run that ended in an
//! error event), 2 adk-flow itself could not do what was asked (usage, I/O).

mod bench;
mod eval;
mod graph;
mod live;
mod memory;
mod outfile;
mod output;
mod run;
mod serve;
mod sessions;
mod state;
mod stores;
mod telemetry;
mod test;
mod validate;
mod walk;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Declarative agent workflows with ADK semantics.
#[derive(Debug, Parser)]
#[command(
    name = "adk-flow",
    version,
    about,
    long_about = None,
    after_help = "Examples:
  adk-flow run workflows/support.yaml --model openai:smollm2 --message \"My app crashes\"
  adk-flow run workflows/support.yaml --script workflows/support.script.yaml -m \"Was order 42 paid?\"
  adk-flow validate workflows/ --format github
  adk-flow test workflows/
  adk-flow eval workflows/support.yaml workflows/evals/ --script workflows/support.eval.script.yaml
  adk-flow graph workflows/support.yaml --format dot
  adk-flow serve workflows/ --ui path/to/google/adk/cli/browser
  adk-flow schema > workflow.schema.json"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a workflow: send messages and print the events it yields.
    #[command(after_help = "Examples:
  adk-flow run workflows/support.yaml --model openai:smollm2 -m \"My app crashes\"
  adk-flow run workflows/support.yaml --script workflows/support.script.yaml -m \"Was order 42 paid?\" --json
  adk-flow run root_agent.yaml --model gemini:gemini-2.5-flash --stream --record replies.yaml
  adk-flow run workflows/support.yaml --session s1 --respond approve='{\"approved\": true}'")]
    Run(Box<run::RunArgs>),
    /// Run a workflow live: each line of standard input is one user turn of one long
    /// invocation; events stream back as they happen (exit 1 when it ends in an error).
    #[command(after_help = "Examples:
  printf 'hello\\nbye\\n' | adk-flow live pipeline.yaml --script pipeline.script.yaml --json
  adk-flow live root_agent.yaml --model gemini:gemini-live-2.5-flash-preview")]
    Live(Box<live::LiveArgs>),
    /// Check workflow files without running them: exit 0 when valid, 1 on any error.
    #[command(after_help = "Examples:
  adk-flow validate workflows/
  adk-flow validate root_agent.yaml --format json
  adk-flow validate workflows/ --format github   # annotations in GitHub Actions")]
    Validate(validate::ValidateArgs),
    /// Print the JSON Schema of workflow files.
    #[command(after_help = "Example:
  adk-flow schema > workflow.schema.json
  # then, first line of a workflow: # yaml-language-server: $schema=workflow.schema.json")]
    Schema,
    /// Draw the agent tree, its transfer edges and loops, and a Workflow graph's START,
    /// Routers, JoinNodes, labelled edges and back edges (Mermaid, DOT or SVG).
    #[command(after_help = "Examples:
  adk-flow graph workflows/support.yaml
  adk-flow graph workflows/helpdesk.yaml --format svg > helpdesk.svg
  adk-flow graph workflows/support.yaml --format dot | dot -Tsvg > support.svg")]
    Graph(graph::GraphArgs),
    /// Run workflow test files (*.test.yaml): scripted replies, stubbed tools, checks.
    #[command(after_help = "Examples:
  adk-flow test workflows/
  adk-flow test workflows/support.test.yaml --update-snapshots")]
    Test(test::TestArgs),
    /// Run ADK eval sets against a workflow and score them as ADK does (exit 1 on any
    /// failing case).
    #[command(after_help = "Examples:
  adk-flow eval workflows/support.yaml workflows/evals/ --script workflows/support.eval.script.yaml
  adk-flow eval my_app/ my_app/weather.evalset.json:sunny,rainy --config test_config.json --runs 3
  adk-flow eval root_agent.yaml tests/ --json --junit eval.xml")]
    Eval(Box<eval::EvalArgs>),
    /// Serve workflows over ADK's HTTP API (and its dev web UI with --ui).
    #[command(after_help = "Examples:
  adk-flow serve workflows/ --script-beside --db memory
  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 adk-flow serve workflows/ --model openai:smollm2
  adk-flow serve workflows/support.yaml --port 8080 --ui .venv/lib/python3.12/site-packages/google/adk/cli/browser
  adk-flow serve agents/ --host 0.0.0.0 --token \"$TOKEN\" --allow-origin https://app.example.com")]
    Serve(Box<serve::ServeArgs>),
    /// List, show or delete stored sessions.
    #[command(after_help = "Examples:
  adk-flow sessions list
  adk-flow sessions show 6f1c… --json
  adk-flow sessions delete 6f1c… --db postgres://postgres@127.0.0.1:5432/adkflow")]
    Sessions(sessions::SessionsArgs),
    /// List, search, forget or add memories (what load_memory and preload_memory read).
    #[command(after_help = "Examples:
  adk-flow memory list
  adk-flow memory search \"order 42\" --user alice
  adk-flow memory add 6f1c…            # a stored session, on demand
  adk-flow memory forget --user alice --session 6f1c…")]
    Memory(memory::MemoryArgs),
    /// Measure the runtime's own cost on the reference scenarios (scripted model, no
    /// delay): invocations/s, latency, CPU per invocation, peak memory.
    #[command(after_help = "Examples:
  adk-flow bench
  adk-flow bench --scenario a_tool --store sqlite --invocations 2000
  adk-flow bench --scenario long_session --json")]
    Bench(bench::BenchArgs),
}

/// What a workflow may do on this machine: the switches every command that runs a
/// workflow shares (`run`, `test`, `eval`, `serve`), so each gets the same flag and variable.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Permissions {
    /// Let the workflow start programs: `command` tools and stdio MCP servers (`mcp:
    /// {command}`, ADK McpToolset stdio params). Without it, such a workflow does not start.
    #[arg(
        long,
        env = "ADK_FLOW_ALLOW_COMMANDS",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    pub allow_commands: bool,
    /// Which files the workflow's references may name.
    #[command(flatten)]
    pub files: Files,
}

/// Which files a workflow's references may name: the switch of every command that loads
/// workflows (`run`, `test`, `eval`, `validate`, `graph`).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Files {
    /// Let `config_path`, `lookup.file` and a scripted model's `script` name files outside
    /// the root workflow's folder (refused by default).
    #[arg(
        long,
        env = "ADK_FLOW_ALLOW_OUTSIDE_FILES",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    pub allow_outside_files: bool,
}

impl Files {
    /// The access the switch grants.
    pub fn access(self) -> crate::config::FileAccess {
        if self.allow_outside_files {
            crate::config::FileAccess::Anywhere
        } else {
            crate::config::FileAccess::RootFolder
        }
    }
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
    let cli = Cli::try_parse().unwrap_or_else(|e| run::hint_hyphen_message(e).exit());
    let default_filter = match &cli.command {
        Command::Run(args) if args.verbose => "adk_flow=debug,warn",
        Command::Serve(_) => "adk_flow=info,warn",
        _ => "warn",
    };
    init_logging(default_filter);
    let runtime = match runtime_for(&cli.command).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitStatus::Error.into();
        }
    };
    let status = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => run::run(*args).await,
            Command::Live(args) => live::run(*args).await,
            Command::Validate(args) => validate::run(args),
            Command::Schema => print_schema(),
            Command::Graph(args) => graph::run(args),
            Command::Test(args) => test::run(args).await,
            Command::Eval(args) => eval::run(*args).await,
            Command::Sessions(args) => sessions::run(args).await,
            Command::Memory(args) => memory::run(args).await,
            Command::Serve(args) => serve::run(*args).await,
            Command::Bench(args) => bench::run(args).await,
        }
    });
    match status {
        Ok(s) => s.into(),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitStatus::Success.into();
            }
            // The whole chain, each cause once, URL secrets redacted.
            eprintln!("error: {}", crate::errors::chain(e.as_ref()));
            ExitStatus::Error.into()
        }
    }
}

/// The async runtime a command runs on. Commands that serve or converse get worker
/// threads; a one-shot `run` (its messages on the command line), `validate`, `schema` and
/// `graph` run on this thread alone: a one-shot process would spend more starting and
/// joining workers (and waking them for each await) than it gains from them
/// (docs/performance.md, "One-shot process").
fn runtime_for(command: &Command) -> tokio::runtime::Builder {
    let one_thread = match command {
        Command::Run(args) => run::is_one_shot(args),
        Command::Validate(_) | Command::Schema | Command::Graph(_) => true,
        _ => false,
    };
    if one_thread {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
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

/// Stderr for log lines, with the secrets of every URL in them removed
/// ([`crate::redact::urls_in`]). The formatter hands over one whole line per write.
struct RedactingStderr;

impl std::io::Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(crate::redact::urls_in(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// Logs go to stderr: warnings only (`serve`: its own info too), unless `RUST_LOG` or
/// `--verbose` asks for more.
fn init_logging(default: &str) {
    let verbose = default.contains("debug");
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| RedactingStderr)
        .without_time()
        .with_target(verbose)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
