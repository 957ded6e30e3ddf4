//! `adk-flow bench`: the command line and JSON fields other tools read (a contract), on
//! every scenario and both stores. No figure is asserted: speed targets live in the bench
//! itself, never in tests.

use crate::common;
use serde_json::Value;

fn bench(args: &[&str]) -> Vec<Value> {
    let out = common::bin()
        .arg("bench")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const FIELDS: [&str; 11] = [
    "scenario",
    "store",
    "stream",
    "invocations",
    "events_per_invocation",
    "inv_per_s",
    "events_per_s",
    "p50_us",
    "p99_us",
    "cpu_us_per_inv",
    "peak_rss_kib",
];

fn assert_report(r: &Value, scenario: &str, store: &str, k: u64, events: f64) {
    for f in FIELDS {
        assert!(r.get(f).is_some(), "{f} missing in {r}");
    }
    assert_eq!(r["scenario"], scenario);
    assert_eq!(r["store"], store);
    assert_eq!(r["invocations"], k);
    assert_eq!(r["events_per_invocation"], events, "{r}");
    for f in ["inv_per_s", "events_per_s", "p50_us", "cpu_us_per_inv"] {
        assert!(r[f].as_f64().unwrap() > 0.0, "{f} in {r}");
    }
    assert!(r["p99_us"].as_f64() >= r["p50_us"].as_f64());
    assert!(r["peak_rss_kib"].as_u64().unwrap() > 0);
}

#[test]
fn each_reference_scenario_reports_every_field() {
    for (scenario, events) in [
        ("a_tool", 3.0),
        ("b_sequential", 3.0),
        ("c_loop", 6.0),
        ("d_transfer", 3.0),
        ("w_graph", 5.0),
    ] {
        let reports = bench(&["--scenario", scenario, "--invocations", "5"]);
        assert_eq!(reports.len(), 1);
        assert_report(&reports[0], scenario, "memory", 5, events);
        assert_eq!(reports[0]["stream"], false);
        assert!(reports[0].get("cpu_us_per_turn").is_none());
    }
}

#[test]
fn sqlite_store_and_streaming() {
    // Streaming adds one partial event before each of the two model replies.
    let r = bench(&[
        "--scenario",
        "a_tool",
        "--store",
        "sqlite",
        "--stream",
        "--invocations",
        "4",
    ]);
    assert_report(&r[0], "a_tool", "sqlite", 4, 5.0);
    assert_eq!(r[0]["stream"], true);
}

#[test]
fn long_session_reports_cpu_per_turn_of_the_turns_it_ran() {
    let r = bench(&["--scenario", "long_session", "--invocations", "12"]);
    assert_report(&r[0], "long_session", "memory", 12, 3.0);
    let turns = r[0]["cpu_us_per_turn"].as_object().unwrap();
    assert_eq!(turns.keys().collect::<Vec<_>>(), ["1-10"]);
    assert!(turns["1-10"].as_f64().unwrap() > 0.0);
}

#[test]
fn unknown_scenarios_and_zero_invocations_are_usage_errors() {
    for args in [
        &["bench", "--scenario", "e_magic"][..],
        &["bench", "--invocations", "0"],
        &["bench", "--store", "postgres"],
    ] {
        let out = common::bin().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
