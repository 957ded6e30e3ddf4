//! `adk-flow graph`: the tree, transfer edges and loops, in Mermaid and DOT.

use crate::common;

fn graph(args: &[&str]) -> String {
    let out = common::bin()
        .current_dir(common::repo())
        .arg("graph")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn mermaid_shows_transfers_steps_and_loops() {
    let m = graph(&["workflows/support.yaml"]);
    assert!(m.starts_with("flowchart TD\n"));
    assert!(m.contains("support_router -.->|transfer| billing"), "{m}");
    assert!(
        m.contains("support_router -.->|transfer| tech_support"),
        "{m}"
    );
    // billing sets both disallow flags: no way back to the router or over to its peer.
    assert!(!m.contains("billing -.->"), "{m}");
    assert!(m.contains("tech_support -->|body 1| drafter"), "{m}");
    assert!(
        m.contains("checker -->|repeat until exit_loop| tech_support"),
        "{m}"
    );
    assert!(m.contains("LoopAgent, at most 3"), "{m}");
    // Children of a LoopAgent cannot transfer to their parent or peers.
    assert!(!m.contains("drafter -.->"), "{m}");
}

#[test]
fn dot_output_and_parallel_branches() {
    let d = graph(&["workflows/parallel.yaml", "--format", "dot"]);
    assert!(d.starts_with("digraph \"research\" {"), "{d}");
    assert!(
        d.contains("\"fan_out\" -> \"pros\" [label=\"branch\"];"),
        "{d}"
    );
    assert!(
        d.contains("\"research\" -> \"synthesizer\" [label=\"step 2\"];"),
        "{d}"
    );
    assert!(d.trim_end().ends_with('}'));
}

#[test]
fn an_invalid_workflow_is_reported_not_drawn() {
    let dir = common::write_files(&[("root_agent.yaml", "name: a\nmodle: x\n")]);
    let out = common::bin()
        .current_dir(dir.path())
        .args(["graph", "root_agent.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("root_agent.yaml:2:1: error: unknown key `modle`")
    );
}
