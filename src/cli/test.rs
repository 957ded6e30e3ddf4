//! `adk-flow test PATH...`: run workflow test files and report like a test runner.

use super::ExitStatus;
use crate::testing::{RunOptions, run_file};
use anyhow::bail;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `adk-flow test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Test files (`*.test.yaml`) or directories searched recursively for them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Write event snapshots instead of comparing with them.
    #[arg(long)]
    pub update_snapshots: bool,
    /// Permission switches.
    #[command(flatten)]
    pub permissions: super::Permissions,
}

/// Runs the command.
pub async fn run(args: TestArgs) -> anyhow::Result<ExitStatus> {
    let files = super::walk::find_files(&args.paths, |name| {
        name.ends_with(".test.yaml") || name.ends_with(".test.yml")
    })?;
    if files.is_empty() {
        bail!(
            "no test files (*.test.yaml) under {}",
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let options = RunOptions {
        update_snapshots: args.update_snapshots,
        allow_commands: args.permissions.allow_commands,
        files: args.permissions.files.access(),
        env: std::sync::Arc::new(|name: &str| std::env::var(name).ok()),
    };
    let stdout = std::io::stdout();
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &files {
        let result = run_file(file, &options).await;
        let mut out = stdout.lock();
        writeln!(out, "{}", file.display())?;
        for e in &result.errors {
            writeln!(out, "  error: {e}")?;
            failed += 1;
        }
        for case in &result.cases {
            let ms = case.elapsed.as_millis();
            if case.failures.is_empty() {
                passed += 1;
                writeln!(out, "  ok     {} ({ms} ms)", case.name)?;
            } else {
                failed += 1;
                writeln!(out, "  FAILED {} ({ms} ms)", case.name)?;
                for f in &case.failures {
                    writeln!(out, "      {f}")?;
                }
            }
        }
        out.flush()?;
    }
    writeln!(stdout.lock(), "\n{passed} passed, {failed} failed")?;
    Ok(if failed == 0 {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
