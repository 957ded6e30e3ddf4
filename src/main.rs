//! The `adk-flow` binary: everything lives in [`adk_flow::cli`].

fn main() -> std::process::ExitCode {
    adk_flow::cli::main()
}
