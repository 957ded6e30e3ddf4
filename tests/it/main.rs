//! adk-flow's integration tests, as one test binary (one link of sqlx, reqwest and rmcp
//! instead of one per file). Each module tests one area; `common` holds the shared helpers.

mod adk2;
mod adk_forms;
mod bench;
mod callbacks;
mod cli_models;
mod cli_sessions;
mod common;
mod config_errors;
mod eval;
mod examples;
mod fuzzed;
mod golden;
mod graph;
mod hardening;
mod live;
mod mcp;
mod mcp_sse;
mod memory;
mod providers;
mod real_model;
mod record;
mod runner;
mod scenarios;
mod schema;
mod serve;
mod sessions_deltas;
mod sessions_sql;
mod sessions_sqlite;
mod structured;
mod tidy;
mod tools;
mod validate;
mod workflow_graphs;
mod workflow_graphs_cli;
mod workflow_graphs_contract;
