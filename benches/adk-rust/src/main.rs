//! adk-flow's four reference bench scenarios (issue 13) on zavora-ai/adk-rust.
//!
//! `adk-rust-bench [--scenario a_tool|b_sequential|c_loop|d_transfer|all]
//! [--invocations K] [--warmup W] [--json] [--show] [--sse]`
//!
//! Each invocation runs in a fresh in-memory session (`InMemorySessionService`) of app
//! `anchor`, user `u1`, with the user message "what is 40 + 2?", on adk-rust's `Runner`,
//! with a scripted model of no delay (an `Llm` implemented here: see [`Scripted`]).
//! After W warm-up invocations (default 1,000) and a check of one invocation's events,
//! K invocations (default 20,000) are timed; the figures mirror `adk-flow bench --json`:
//! invocations/s, events/s, p50 and p99 latency of one invocation (session creation
//! included), CPU µs per invocation (the process's user + system CPU time over the
//! measured loop, divided by K) and peak resident memory.
//!
//! The runner's `RunConfig` has `StreamingMode::None` (adk-rust's default is `SSE`), as
//! `adk-flow bench` does not stream unless `--stream`; `--sse` measures adk-rust's default.

use adk_agent::{LlmAgentBuilder, LoopAgent, SequentialAgent};
use adk_core::{
    Agent, Content, Event, Llm, LlmRequest, LlmResponse, LlmResponseStream, Part, RunConfig,
    SessionId, StreamingMode, ToolContext, UserId,
};
use adk_runner::Runner;
use adk_session::{CreateRequest, InMemorySessionService, SessionService};
use adk_tool::{ExitLoopTool, FunctionTool};
use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const MESSAGE: &str = "what is 40 + 2?";
const APP: &str = "anchor";
const USER: &str = "u1";

/// One scripted reply, built anew on every call (as adk-flow's scripted model does).
#[derive(Clone)]
enum Reply {
    Text(&'static str),
    Call(&'static str, fn() -> Value),
}

/// A model that answers one agent's calls with its script, in order and round again:
/// one atomic cursor per agent (adk-flow's scripted model keeps one cursor per agent
/// behind a mutex; adk-rust's `Llm` is not told the calling agent, so each agent has its
/// own `Scripted`). A call builds its reply's `Content` from the script (a `String` for
/// a text, the arguments' JSON for a call) and returns it as a one-item stream, as
/// adk-flow's scripted model does when not streaming.
struct Scripted {
    replies: Vec<Reply>,
    cursor: AtomicUsize,
}

impl Scripted {
    fn new(replies: Vec<Reply>) -> Arc<dyn Llm> {
        Arc::new(Scripted {
            replies,
            cursor: AtomicUsize::new(0),
        })
    }
}

#[async_trait]
impl Llm for Scripted {
    fn name(&self) -> &str {
        "gemini-2.5-flash"
    }

    async fn generate_content(
        &self,
        _req: LlmRequest,
        _stream: bool,
    ) -> adk_core::Result<LlmResponseStream> {
        let n = self.cursor.fetch_add(1, Ordering::Relaxed);
        let part = match &self.replies[n % self.replies.len()] {
            Reply::Text(text) => Part::Text {
                text: (*text).to_owned(),
            },
            Reply::Call(name, args) => Part::FunctionCall {
                name: (*name).to_owned(),
                args: args(),
                id: None,
                thought_signature: None,
            },
        };
        let mut response = LlmResponse::new(Content {
            role: "model".to_owned(),
            parts: vec![part],
        });
        response.finish_reason = Some(adk_core::FinishReason::Stop);
        response.turn_complete = true;
        Ok(Box::pin(futures::stream::once(futures::future::ready(Ok(
            response,
        )))))
    }
}

#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

/// `add(a, b)` returns `{"result": a + b}` (integers stay integers, as in adk-flow).
fn add_tool() -> Arc<FunctionTool> {
    Arc::new(
        FunctionTool::new(
            "add",
            "Adds two numbers.",
            |_ctx: Arc<dyn ToolContext>, args: Value| async move {
                let get = |k: &str| {
                    args.get(k)
                        .cloned()
                        .ok_or_else(|| adk_core::AdkError::tool(format!("missing argument `{k}`")))
                };
                let (a, b) = (get("a")?, get("b")?);
                let sum = match (a.as_i64(), b.as_i64()) {
                    (Some(a), Some(b)) => json!(a + b),
                    _ => json!(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)),
                };
                Ok(json!({ "result": sum }))
            },
        )
        .with_parameters_schema::<AddArgs>(),
    )
}

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    ATool,
    BSequential,
    CLoop,
    DTransfer,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::ATool => "a_tool",
            Scenario::BSequential => "b_sequential",
            Scenario::CLoop => "c_loop",
            Scenario::DTransfer => "d_transfer",
        }
    }

    fn parse(s: &str) -> Option<Vec<Scenario>> {
        Some(match s {
            "a_tool" => vec![Scenario::ATool],
            "b_sequential" => vec![Scenario::BSequential],
            "c_loop" => vec![Scenario::CLoop],
            "d_transfer" => vec![Scenario::DTransfer],
            "all" => vec![
                Scenario::ATool,
                Scenario::BSequential,
                Scenario::CLoop,
                Scenario::DTransfer,
            ],
            _ => return None,
        })
    }

    /// The root agent, as adk-flow's `bench` builds the same scenario.
    fn agent(self) -> adk_core::Result<Arc<dyn Agent>> {
        Ok(match self {
            Scenario::ATool => Arc::new(
                LlmAgentBuilder::new("calc")
                    .description("Adds numbers.")
                    .model(Scripted::new(vec![
                        Reply::Call("add", || json!({"a": 40, "b": 2})),
                        Reply::Text("The answer is 42."),
                    ]))
                    .instruction("Answer arithmetic questions with the add tool.")
                    .tool(add_tool())
                    .output_key("answer")
                    .build()?,
            ),
            Scenario::BSequential => {
                const OUT: [&str; 3] = ["output of step 1", "output of step 2", "output of step 3"];
                let mut steps: Vec<Arc<dyn Agent>> = Vec::new();
                for n in 1..=3 {
                    let instruction = if n == 1 {
                        "Do step 1.".to_owned()
                    } else {
                        format!("Do step {n} using {{out{}}}.", n - 1)
                    };
                    steps.push(Arc::new(
                        LlmAgentBuilder::new(format!("step{n}"))
                            .description(format!("Step {n}."))
                            .model(Scripted::new(vec![Reply::Text(OUT[n - 1])]))
                            .instruction(instruction)
                            .output_key(format!("out{n}"))
                            .build()?,
                    ));
                }
                Arc::new(SequentialAgent::new("pipeline", steps).with_description("Three steps."))
            }
            Scenario::CLoop => {
                let worker = LlmAgentBuilder::new("worker")
                    .description("Improves the answer.")
                    .model(Scripted::new(vec![
                        Reply::Text("iteration 1"),
                        Reply::Text("iteration 2"),
                        Reply::Text("iteration 3"),
                        Reply::Text("iteration 4"),
                        Reply::Call("exit_loop", || json!({})),
                    ]))
                    .instruction("Improve the answer; call exit_loop when it is good.")
                    .tool(Arc::new(ExitLoopTool::new()))
                    .output_key("last_iteration")
                    .build()?;
                Arc::new(
                    LoopAgent::new("loop", vec![Arc::new(worker)])
                        .with_description("Refines an answer.")
                        .with_max_iterations(10),
                )
            }
            Scenario::DTransfer => {
                let helper_a = LlmAgentBuilder::new("helper_a")
                    .description("Answers arithmetic.")
                    .model(Scripted::new(vec![Reply::Text("helper_a says 42")]))
                    .instruction("Answer the question.")
                    .output_key("helper_answer")
                    .build()?;
                let helper_b = LlmAgentBuilder::new("helper_b")
                    .description("Answers everything else.")
                    .model(Scripted::new(vec![Reply::Text("helper_b has nothing")]))
                    .instruction("Answer the question.")
                    .build()?;
                Arc::new(
                    LlmAgentBuilder::new("coordinator")
                        .description("Routes questions.")
                        .model(Scripted::new(vec![Reply::Call(
                            "transfer_to_agent",
                            || json!({"agent_name": "helper_a"}),
                        )]))
                        .instruction("Send the user to the right helper.")
                        .sub_agent(Arc::new(helper_a))
                        .sub_agent(Arc::new(helper_b))
                        .build()?,
                )
            }
        })
    }

    /// What adk-rust's events for the scenario say (author, text or call or response,
    /// state delta, escalate, transfer), one line per event. They are ADK's events except
    /// that adk-rust commits an output_key's state delta as an event of its own after the
    /// text (ADK puts it in the text's event) and its transfer event has no function
    /// response.
    fn expected(self) -> Vec<&'static str> {
        match self {
            Scenario::ATool => vec![
                "calc call add {\"a\":40,\"b\":2}",
                "calc response add {\"result\":42}",
                "calc text The answer is 42.",
                "calc delta {\"answer\":\"The answer is 42.\"}",
            ],
            Scenario::BSequential => vec![
                "step1 text output of step 1",
                "step1 delta {\"out1\":\"output of step 1\"}",
                "step2 text output of step 2",
                "step2 delta {\"out2\":\"output of step 2\"}",
                "step3 text output of step 3",
                "step3 delta {\"out3\":\"output of step 3\"}",
            ],
            Scenario::CLoop => vec![
                "worker text iteration 1",
                "worker delta {\"last_iteration\":\"iteration 1\"}",
                "worker text iteration 2",
                "worker delta {\"last_iteration\":\"iteration 2\"}",
                "worker text iteration 3",
                "worker delta {\"last_iteration\":\"iteration 3\"}",
                "worker text iteration 4",
                "worker delta {\"last_iteration\":\"iteration 4\"}",
                "worker call exit_loop {}",
                "worker response exit_loop {} escalate",
            ],
            Scenario::DTransfer => vec![
                "coordinator call transfer_to_agent {\"agent_name\":\"helper_a\"}",
                "coordinator transfer helper_a",
                "helper_a text helper_a says 42",
                "helper_a delta {\"helper_answer\":\"helper_a says 42\"}",
            ],
        }
    }
}

/// One event in the form [`Scenario::expected`] lists.
fn describe(e: &Event) -> String {
    let mut s = e.author.clone();
    if let Some(content) = &e.llm_response.content {
        for part in &content.parts {
            match part {
                Part::Text { text } => s += &format!(" text {text}"),
                Part::FunctionCall { name, args, .. } => s += &format!(" call {name} {args}"),
                Part::FunctionResponse {
                    function_response, ..
                } => {
                    s += &format!(
                        " response {} {}",
                        function_response.name, function_response.response
                    )
                }
                other => s += &format!(" {other:?}"),
            }
        }
    }
    if !e.actions.state_delta.is_empty() {
        let delta: serde_json::Map<String, Value> = e
            .actions
            .state_delta
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        s += &format!(" delta {}", Value::Object(delta));
    }
    if let Some(to) = &e.actions.transfer_to_agent {
        s += &format!(" transfer {to}");
    }
    if e.actions.escalate {
        s += " escalate";
    }
    s
}

struct Bench {
    runner: Runner,
    sessions: Arc<InMemorySessionService>,
    user: UserId,
}

impl Bench {
    fn new(scenario: Scenario, streaming: StreamingMode) -> adk_core::Result<Self> {
        let sessions = Arc::new(InMemorySessionService::new());
        let run_config = RunConfig {
            streaming_mode: streaming,
            ..RunConfig::default()
        };
        let runner = Runner::builder()
            .app_name(APP)
            .run_config(run_config)
            .agent(scenario.agent()?)
            .session_service(Arc::clone(&sessions) as Arc<dyn SessionService>)
            .build()?;
        Ok(Bench {
            runner,
            sessions,
            user: UserId::try_from(USER)?,
        })
    }

    /// One invocation in a fresh session; returns its events.
    async fn invoke(&self, keep: bool) -> adk_core::Result<(usize, Vec<Event>)> {
        let session = self
            .sessions
            .create(CreateRequest {
                app_name: APP.to_owned(),
                user_id: USER.to_owned(),
                session_id: None,
                state: HashMap::new(),
            })
            .await?;
        let session_id = SessionId::try_from(session.id())?;
        let mut stream = self
            .runner
            .run(
                self.user.clone(),
                session_id,
                Content::new("user").with_text(MESSAGE),
            )
            .await?;
        let mut n = 0;
        let mut kept = Vec::new();
        while let Some(event) = stream.next().await {
            let event = event?;
            n += 1;
            if keep {
                kept.push(event);
            }
        }
        Ok((n, kept))
    }
}

fn process_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn percentile_us(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1].as_secs_f64() * 1e6
}

fn round(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// What the command line asked for.
struct Options {
    k: usize,
    warmup: usize,
    json: bool,
    show: bool,
    streaming: StreamingMode,
}

async fn run(scenario: Scenario, o: &Options) -> Result<bool, Box<dyn std::error::Error>> {
    let (k, warmup, json_out, show) = (o.k, o.warmup, o.json, o.show);
    let bench = Bench::new(scenario, o.streaming)?;
    for _ in 0..warmup {
        bench.invoke(false).await?;
    }
    // The events of one invocation, checked against the scenario's.
    let (_, events) = bench.invoke(true).await?;
    let got: Vec<String> = events.iter().map(describe).collect();
    if show {
        for e in &events {
            eprintln!("{}", serde_json::to_string(e)?);
        }
    }
    let expected = scenario.expected();
    if got != expected {
        eprintln!(
            "error: {}: the events differ\nexpected:\n  {}\ngot:\n  {}",
            scenario.name(),
            expected.join("\n  "),
            got.join("\n  ")
        );
        return Ok(false);
    }
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let mut latencies = Vec::with_capacity(k);
    let mut events = 0usize;
    let cpu0 = process_cpu();
    let started = Instant::now();
    for _ in 0..k {
        let t0 = Instant::now();
        events += bench.invoke(false).await?.0;
        latencies.push(t0.elapsed());
    }
    let wall = started.elapsed().as_secs_f64();
    let cpu = process_cpu().saturating_sub(cpu0);
    latencies.sort_unstable();
    let report = json!({
        "framework": "adk-rust",
        "scenario": scenario.name(),
        "store": "memory",
        "stream": o.streaming != StreamingMode::None,
        "invocations": k,
        "events_per_invocation": round(events as f64 / k as f64),
        "inv_per_s": round(k as f64 / wall),
        "events_per_s": round(events as f64 / wall),
        "p50_us": round(percentile_us(&latencies, 0.50)),
        "p99_us": round(percentile_us(&latencies, 0.99)),
        "cpu_us_per_inv": round(cpu.as_secs_f64() * 1e6 / k as f64),
        "peak_rss_kib": peak_rss_kib(),
    });
    if json_out {
        println!("{report}");
    } else {
        println!(
            "{:<14} {:>7} {:>11.0} {:>9.1} {:>9.1} {:>9.1} {:>10}",
            scenario.name(),
            k,
            report["inv_per_s"].as_f64().unwrap_or(0.0),
            report["p50_us"].as_f64().unwrap_or(0.0),
            report["p99_us"].as_f64().unwrap_or(0.0),
            report["cpu_us_per_inv"].as_f64().unwrap_or(0.0),
            report["peak_rss_kib"]
        );
    }
    Ok(true)
}

fn usage() -> ! {
    eprintln!(
        "usage: adk-rust-bench [--scenario a_tool|b_sequential|c_loop|d_transfer|all] \
         [--invocations K] [--warmup W] [--json] [--show] [--sse]"
    );
    std::process::exit(2)
}

fn main() -> std::process::ExitCode {
    let mut scenarios = Scenario::parse("all").unwrap_or_default();
    let mut o = Options {
        k: 20_000,
        warmup: 1_000,
        json: false,
        show: false,
        streaming: StreamingMode::None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--scenario" => {
                scenarios = args
                    .next()
                    .and_then(|s| Scenario::parse(&s))
                    .unwrap_or_else(|| usage())
            }
            "--invocations" => {
                o.k = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .filter(|&k| k > 0)
                    .unwrap_or_else(|| usage())
            }
            "--warmup" => {
                o.warmup = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            "--json" => o.json = true,
            "--show" => o.show = true,
            "--sse" => o.streaming = StreamingMode::SSE,
            _ => usage(),
        }
    }
    // The same runtime as adk-flow's command line: tokio's multi-threaded one, one
    // worker per core, the bench loop on the main thread (`block_on`).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    if !o.json {
        println!(
            "{:<14} {:>7} {:>11} {:>9} {:>9} {:>9} {:>10}",
            "scenario", "K", "inv/s", "p50 µs", "p99 µs", "CPU µs", "peak KiB"
        );
    }
    let mut ok = true;
    for scenario in scenarios {
        match runtime.block_on(run(scenario, &o)) {
            Ok(true) => {}
            Ok(false) => ok = false,
            Err(e) => {
                eprintln!("error: {}: {e}", scenario.name());
                ok = false;
            }
        }
    }
    if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
