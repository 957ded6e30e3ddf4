//! `adk-flow bench`: the runtime's own cost on the reference scenarios.
//!
//! # Command line (a contract)
//!
//! `adk-flow bench [--scenario a_tool|b_sequential|c_loop|d_transfer|long_session|all]
//! (adk-flow extension: `--scenario w_graph`, the ADK 2 workflow loop; not part of `all`)
//! [--store memory|sqlite] [--stream] [--invocations K] [--json]`
//!
//! Every invocation runs the scripted model (no delay; one invocation's replies, served
//! again for each) in a fresh session of app `anchor`, user `u1`, with the message "what
//! is 40 + 2?"; `long_session` runs `a_tool` turn after turn in one session. Before measuring, one invocation's committed events are compared
//! with ADK's; a difference is a failure (exit 1) and nothing is reported for it.
//!
//! Each scenario reports invocations/s, events/s, p50 and p99 latency of one invocation
//! (session creation included), CPU µs per invocation (the process's user + system time
//! over the measured loop, divided by K) and peak resident memory. `--json` prints one
//! object per scenario with the fields `scenario, store, stream, invocations,
//! events_per_invocation, inv_per_s, events_per_s, p50_us, p99_us, cpu_us_per_inv,
//! peak_rss_kib`, and `cpu_us_per_turn` (turn range → mean CPU µs per turn) for
//! `long_session`.

mod measure;
mod scenarios;
mod workflow;

use super::ExitStatus;
use crate::event::StateMap;
use crate::invocation::RunConfig;
use crate::runner::{Runner, Turn};
use crate::session::{InMemorySessionService, SessionHandle, SessionService, SqlSessionService};
use crate::telemetry::store::{Limits, TraceStore};
use crate::telemetry::{SpanSink, Tracer};
use anyhow::Context;
use clap::{Args, ValueEnum};
use futures::StreamExt;
use scenarios::{APP, MESSAGE, Scenario, USER};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Invocations per scenario when `--invocations` is not given, in memory.
const DEFAULT_INVOCATIONS_MEMORY: usize = 20_000;
/// Invocations per scenario when `--invocations` is not given, on SQLite.
const DEFAULT_INVOCATIONS_SQLITE: usize = 2_000;
/// Turns of `long_session` unless `--scenario long_session --invocations K` says otherwise.
const LONG_SESSION_TURNS: usize = 400;
/// The turn ranges (1-based, inclusive) whose CPU `long_session` reports.
const TURN_BUCKETS: [(usize, usize); 4] = [(1, 10), (100, 110), (200, 210), (390, 400)];

/// Arguments of `adk-flow bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Which scenario to run.
    #[arg(long, value_enum, default_value = "all")]
    scenario: Selection,
    /// Where sessions are kept: in memory, or a SQLite file in a fresh temporary folder
    /// (every event committed before the agent resumes).
    #[arg(long, value_enum, default_value = "memory")]
    store: Store,
    /// Stream the model's replies (partial events before each final one).
    #[arg(long)]
    stream: bool,
    /// Invocations per scenario (default 20000 in memory, 2000 on SQLite); the turns of
    /// `long_session` when it runs alone (default 400).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    invocations: Option<u64>,
    /// Print one JSON object per scenario instead of a table.
    #[arg(long)]
    json: bool,
    /// Record every invocation's spans in the in-memory store `serve` keeps for its
    /// Traces view (what tracing costs when something reads the spans).
    #[arg(long)]
    traces: bool,
}

/// `--scenario`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Selection {
    #[value(name = "a_tool")]
    ATool,
    #[value(name = "b_sequential")]
    BSequential,
    #[value(name = "c_loop")]
    CLoop,
    #[value(name = "d_transfer")]
    DTransfer,
    #[value(name = "long_session")]
    LongSession,
    #[value(name = "w_graph")]
    WGraph,
    All,
}

impl Selection {
    fn scenarios(self) -> Vec<Scenario> {
        match self {
            Selection::ATool => vec![Scenario::ATool],
            Selection::BSequential => vec![Scenario::BSequential],
            Selection::CLoop => vec![Scenario::CLoop],
            Selection::DTransfer => vec![Scenario::DTransfer],
            Selection::LongSession => vec![Scenario::LongSession],
            Selection::WGraph => vec![Scenario::WGraph],
            Selection::All => vec![
                Scenario::ATool,
                Scenario::BSequential,
                Scenario::CLoop,
                Scenario::DTransfer,
                Scenario::LongSession,
            ],
        }
    }
}

/// `--store`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Store {
    Memory,
    Sqlite,
}

impl Store {
    fn name(self) -> &'static str {
        match self {
            Store::Memory => "memory",
            Store::Sqlite => "sqlite",
        }
    }
}

/// One scenario's figures (the JSON form is part of the contract).
#[derive(Debug, Serialize)]
struct Report {
    scenario: &'static str,
    store: &'static str,
    stream: bool,
    invocations: usize,
    events_per_invocation: f64,
    inv_per_s: f64,
    events_per_s: f64,
    p50_us: f64,
    p99_us: f64,
    cpu_us_per_inv: f64,
    peak_rss_kib: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_us_per_turn: Option<BTreeMap<String, f64>>,
}

/// A temporary folder for the SQLite store, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> anyhow::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let dir =
            std::env::temp_dir().join(format!("adk-flow-bench-{}-{nanos:x}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `adk-flow bench`.
pub async fn run(args: BenchArgs) -> anyhow::Result<ExitStatus> {
    let mut out = std::io::stdout().lock();
    if !args.json {
        writeln!(
            out,
            "{:<14} {:<6} {:>7} {:>11} {:>12} {:>9} {:>9} {:>9} {:>10}",
            "scenario", "store", "K", "inv/s", "events/s", "p50 µs", "p99 µs", "CPU µs", "peak KiB"
        )?;
    }
    let mut status = ExitStatus::Success;
    for scenario in args.scenario.scenarios() {
        let k = invocations(&args, scenario);
        let dir = TempDir::new()?;
        let sessions = open_store(args.store, &dir).await?;
        let mut runner =
            Runner::new(Arc::new(scenario.tree()), Arc::clone(&sessions)).with_app_name(APP);
        if args.traces {
            let store = Arc::new(TraceStore::new(Limits::default()));
            runner = runner.with_tracer(Tracer::new(vec![store as Arc<dyn SpanSink>], true));
        }
        let config = RunConfig {
            stream: args.stream,
            ..RunConfig::default()
        };
        if let Err(problem) = check_events(&runner, scenario, config).await? {
            eprintln!(
                "error: {}: the events differ from ADK's; no figures reported\n{problem}",
                scenario.name()
            );
            status = ExitStatus::Failure;
            continue;
        }
        let report = measure(&runner, scenario, config, args.store, k).await?;
        drop(runner);
        drop(sessions);
        print_report(&mut out, &report, args.json)?;
    }
    Ok(status)
}

fn invocations(args: &BenchArgs, scenario: Scenario) -> usize {
    let given = args
        .invocations
        .map(|k| usize::try_from(k).unwrap_or(usize::MAX));
    match (scenario, args.scenario) {
        (Scenario::LongSession, Selection::LongSession) => given.unwrap_or(LONG_SESSION_TURNS),
        (Scenario::LongSession, _) => LONG_SESSION_TURNS,
        _ => given.unwrap_or(match args.store {
            Store::Memory => DEFAULT_INVOCATIONS_MEMORY,
            Store::Sqlite => DEFAULT_INVOCATIONS_SQLITE,
        }),
    }
}

async fn open_store(store: Store, dir: &TempDir) -> anyhow::Result<Arc<dyn SessionService>> {
    Ok(match store {
        Store::Memory => Arc::new(InMemorySessionService::new()),
        Store::Sqlite => {
            let url = format!("sqlite:{}", dir.0.join("sessions.db").display());
            Arc::new(SqlSessionService::connect(&url).await?)
        }
    })
}

/// One invocation in `session`; returns how many events it yielded.
async fn invoke(
    runner: &Runner,
    session: SessionHandle,
    config: RunConfig,
    mut events: Option<&mut Vec<Arc<crate::event::Event>>>,
) -> anyhow::Result<usize> {
    let mut turn = Turn::text(MESSAGE);
    turn.config = config;
    let mut stream = runner.run(session, turn);
    let mut n = 0;
    while let Some(event) = stream.next().await {
        let event = event?;
        n += 1;
        if let Some(events) = events.as_deref_mut() {
            events.push(event);
        }
    }
    Ok(n)
}

async fn fresh_session(runner: &Runner) -> anyhow::Result<SessionHandle> {
    Ok(runner.create_session(USER, None, StateMap::new()).await?)
}

/// Runs one invocation and compares its committed events with ADK's.
async fn check_events(
    runner: &Runner,
    scenario: Scenario,
    config: RunConfig,
) -> anyhow::Result<Result<(), String>> {
    let mut events = Vec::new();
    invoke(
        runner,
        fresh_session(runner).await?,
        config,
        Some(&mut events),
    )
    .await?;
    // Streamed chunks are forwarded, never committed; the final events carry
    // `partial: false` when streaming, which ADK's non-streamed form omits.
    let committed: Vec<_> = events
        .into_iter()
        .filter(|e| !e.is_partial())
        .map(|e| {
            let mut e = crate::event::Event::clone(&e);
            e.partial = None;
            Arc::new(e)
        })
        .collect();
    let got = crate::testing::normalize_events(&committed);
    // Compared as JSON values: key order inside objects does not matter.
    let values = |text: &str| -> Vec<serde_json::Value> {
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or(serde_json::Value::Null))
            .collect()
    };
    Ok(if values(&got) == values(scenario.expected()) {
        Ok(())
    } else {
        Err(format!("expected:\n{}got:\n{got}", scenario.expected()))
    })
}

async fn measure(
    runner: &Runner,
    scenario: Scenario,
    config: RunConfig,
    store: Store,
    k: usize,
) -> anyhow::Result<Report> {
    let long = scenario == Scenario::LongSession;
    let shared = if long {
        Some(fresh_session(runner).await?)
    } else {
        None
    };
    let mut latencies = Vec::with_capacity(k);
    let mut turn_cpu = Vec::with_capacity(if long { k } else { 0 });
    let mut events = 0usize;
    measure::reset_peak_rss();
    let cpu_start = measure::process_cpu();
    let started = Instant::now();
    for _ in 0..k {
        let t0 = Instant::now();
        let c0 = if long {
            measure::process_cpu()
        } else {
            Duration::ZERO
        };
        let session = match &shared {
            Some(s) => s.clone(),
            None => fresh_session(runner).await?,
        };
        events += invoke(runner, session, config, None).await?;
        if long {
            turn_cpu.push(measure::process_cpu().saturating_sub(c0));
        }
        latencies.push(t0.elapsed());
    }
    let wall = started.elapsed().as_secs_f64();
    let cpu = measure::process_cpu().saturating_sub(cpu_start);
    latencies.sort_unstable();
    let per_turn = long.then(|| {
        TURN_BUCKETS
            .iter()
            .filter_map(|&(from, to)| {
                let turns = turn_cpu.get(from - 1..to.min(turn_cpu.len()))?;
                let mean =
                    turns.iter().map(Duration::as_secs_f64).sum::<f64>() / turns.len() as f64;
                Some((format!("{from}-{to}"), round(mean * 1e6)))
            })
            .collect()
    });
    Ok(Report {
        scenario: scenario.name(),
        store: store.name(),
        stream: config.stream,
        invocations: k,
        events_per_invocation: round(events as f64 / k as f64),
        inv_per_s: round(k as f64 / wall),
        events_per_s: round(events as f64 / wall),
        p50_us: round(measure::percentile_us(&latencies, 0.50)),
        p99_us: round(measure::percentile_us(&latencies, 0.99)),
        cpu_us_per_inv: round(cpu.as_secs_f64() * 1e6 / k as f64),
        peak_rss_kib: measure::peak_rss_kib(),
        cpu_us_per_turn: per_turn,
    })
}

/// One decimal is all a noisy machine's figures deserve.
fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn print_report(out: &mut impl Write, r: &Report, json: bool) -> anyhow::Result<()> {
    if json {
        writeln!(out, "{}", serde_json::to_string(r)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<14} {:<6} {:>7} {:>11.0} {:>12.0} {:>9.1} {:>9.1} {:>9.1} {:>10}",
        r.scenario,
        r.store,
        r.invocations,
        r.inv_per_s,
        r.events_per_s,
        r.p50_us,
        r.p99_us,
        r.cpu_us_per_inv,
        r.peak_rss_kib
    )?;
    if let Some(turns) = &r.cpu_us_per_turn {
        let text: Vec<String> = turns
            .iter()
            .map(|(k, v)| format!("turns {k}: {v} µs"))
            .collect();
        writeln!(out, "  CPU per turn: {}", text.join(", "))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn check(built: Scenario, expected_of: Scenario, stream: bool) -> Result<(), String> {
        let runner = Runner::new(
            Arc::new(built.tree()),
            Arc::new(InMemorySessionService::new()),
        )
        .with_app_name(APP);
        let config = RunConfig {
            stream,
            ..RunConfig::default()
        };
        check_events(&runner, expected_of, config).await.unwrap()
    }

    #[tokio::test]
    async fn every_scenario_yields_adks_events_streamed_or_not() {
        for s in Selection::All
            .scenarios()
            .into_iter()
            .chain([Scenario::WGraph])
        {
            for stream in [false, true] {
                assert_eq!(check(s, s, stream).await, Ok(()), "{s:?} stream={stream}");
            }
        }
    }

    #[tokio::test]
    async fn every_invocation_gets_the_round_of_replies_again() {
        for s in [Scenario::CLoop, Scenario::WGraph, Scenario::DTransfer] {
            let sessions = Arc::new(InMemorySessionService::new());
            let runner = Runner::new(Arc::new(s.tree()), sessions).with_app_name(APP);
            for _ in 0..3 {
                let checked = check_events(&runner, s, RunConfig::default()).await;
                assert_eq!(checked.unwrap(), Ok(()), "{s:?}");
            }
        }
    }

    #[tokio::test]
    async fn a_different_stream_is_refused() {
        let err = check(Scenario::BSequential, Scenario::ATool, false)
            .await
            .unwrap_err();
        assert!(err.contains("expected:") && err.contains("step1"), "{err}");
    }
}
