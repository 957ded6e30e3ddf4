//! `adk-flow eval`'s engine: ADK's eval sets (all three file forms), scored the way ADK
//! 1.39.1 scores them.
//!
//! - [`files`] and [`types`]: eval set files (snake_case or camelCase), case selection;
//! - [`config`]: `test_config.json`, its discovery, and refusals (unknown, Vertex-only,
//!   Python metrics; rubric metrics without rubrics);
//! - [`engine`] and [`inference`]: a fresh session per case and run with its `session_input`, user turns
//!   (or an LLM user simulator, [`simulator`]), events cut into invocations
//!   ([`invocations`]), every metric in config order;
//! - [`metrics`] (trajectory, ROUGE-1 via [`rouge`] and [`porter`], final state) and
//!   [`judge`] (LLM-as-a-judge metrics with ADK's sampling, parsing and votes);
//! - [`results`]: ADK's result/eval-history format; [`runs`]: `--runs N` verdicts;
//! - [`script`]: the `--script` file with scripted `judge` and `user` replies;
//!   [`models`]: where case runs get their models (that script, or providers);
//! - [`store`]: an app's eval sets and results where ADK keeps them, for `serve`;
//!   [`wire`]: ADK's file and API JSON forms of the eval data.
//!
//! `serve` answers ADK's eval routes with the same pieces: [`store`] (eval sets read by
//! [`files::load`]), [`engine::run_case`] to run, [`invocations::from_events`] to turn a
//! stored session into a case.

pub mod config;
pub mod engine;
pub mod files;
pub mod inference;
pub mod invocations;
pub mod judge;
pub mod metrics;
pub mod models;
pub mod porter;
pub mod pyeq;
pub mod results;
pub mod rouge;
pub mod runs;
pub mod script;
pub mod simulator;
pub mod store;
pub mod types;
pub mod wire;
