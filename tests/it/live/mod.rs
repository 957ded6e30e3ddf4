//! Live mode: `adk-flow live` against ADK 1.39.1's own `run_live` (tests/live/), and
//! `Runner::run_live` through the library API, and Gemini Live against a local server
//! speaking its wire protocol.

mod adk;
mod audio;
mod cli;
mod config;
mod gemini;
mod library;
