//! adk-flow: declarative agent workflows with the event semantics of Google's Agent
//! Development Kit.
//!
//! Data flow: YAML ([`config`]) → [`app::App`] → agent tree ([`tree`], run by [`agent`]) →
//! [`runner::Runner`] → a stream of [`event::Event`]s, each committed to a [`session`]
//! before the agent resumes.

pub mod agent;
pub mod app;
pub mod artifact;
pub mod callback;
pub mod cli;
pub mod config;
pub mod errors;
pub mod eval;
pub mod event;
pub mod flow;
pub mod graph;
pub mod hosts;
pub mod invocation;
pub mod live;
pub mod memory;
pub mod model;
pub mod names;
pub mod pyrepr;
pub mod redact;
pub mod routes;
pub mod runner;
pub mod segment;
pub mod server;
pub mod session;
pub mod telemetry;
pub mod template;
pub mod testing;
pub mod time;
pub mod tool;
pub mod tree;
