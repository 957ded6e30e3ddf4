//! The workflow loader and validator (`config::load`: YAML, `${VAR}`, schema, references,
//! whole-tree checks) on any files: it never panics or hangs, and every diagnostic points
//! at a real line and column of a real file.
//!
//! The input is up to four files separated by NUL bytes: `root_agent.yaml`, then `a.yaml`,
//! `b.yaml` and `c.yaml`, which the root may name in `config_path`, `lookup.file` and the
//! like (the seeds do).
#![no_main]

use adk_flow::config::{self, FileAccess, LoadOptions, Severity};
use adk_flow_fuzz::{Scratch, check_diagnostics};
use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;

static SCRATCH: LazyLock<Scratch> = LazyLock::new(Scratch::new);

const NAMES: [&str; 4] = ["root_agent.yaml", "a.yaml", "b.yaml", "c.yaml"];

/// Some variables are set, some to text YAML would read otherwise, the rest are unset.
fn env(name: &str) -> Option<String> {
    match name {
        "MODEL" => Some("gemini-2.5-flash".into()),
        "EMPTY" => Some(String::new()),
        "TRICKY" => Some("x: [1, {\n- ${MODEL}".into()),
        "NUMBER" => Some("3".into()),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    let files: Vec<(&str, &[u8])> = NAMES
        .iter()
        .copied()
        .zip(data.splitn(4, |b| *b == 0))
        .collect();
    let root = SCRATCH.write(&files);
    for unset_env_is_error in [false, true] {
        let options = LoadOptions {
            env: &env,
            unset_env_is_error,
            files: FileAccess::RootFolder,
        };
        let loaded = config::load(&root, &options);
        check_diagnostics(&loaded.diagnostics);
        let errors = loaded
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error);
        assert_eq!(
            loaded.workflow.is_some(),
            !errors,
            "{:?}",
            loaded.diagnostics
        );
        if let Some(w) = &loaded.workflow {
            // What validate and run do next with a loaded tree.
            let _ = w.llm_agent_names();
            let _ = adk_flow::graph::mermaid(&w.root);
            let _ = adk_flow::graph::dot(&w.root, false);
        }
    }
});
