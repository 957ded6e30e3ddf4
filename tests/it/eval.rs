//! `adk-flow eval`: eval set forms, scores, reports, refusals and exit codes, offline
//! with scripted agents, judges and users.

use crate::common;
use serde_json::Value;
use std::path::Path;

const WEATHER: &str = r#"
name: weather_agent
model: gemini-2.5-flash
instruction: "Answer weather questions. Last city: {user:city?}."
output_key: "user:city"
define:
  tools:
    get_weather:
      description: The weather in a city.
      parameters:
        type: object
        properties:
          city: {type: string}
          days: {type: number}
      lookup:
        key: "{{ city }}"
        table:
          Paris: {sky: sunny, celsius: 25}
tools:
  - name: get_weather
"#;

const SCRIPT: &str = r#"
replies:
  weather_agent:
    - function_call: {name: get_weather, args: {city: Paris, days: 3}}
    - text: "It is sunny in Paris, 25 degrees."
"#;

fn case(id: &str, expected_args: &str, reference: &str) -> String {
    format!(
        r#"{{"eval_id": "{id}", "conversation": [{{
            "invocation_id": "t1",
            "user_content": {{"parts": [{{"text": "Weather in Paris?"}}], "role": "user"}},
            "final_response": {{"parts": [{{"text": "{reference}"}}], "role": "model"}},
            "intermediate_data": {{"tool_uses": [{{"name": "get_weather", "args": {expected_args}}}]}}}}]}}"#
    )
}

fn evalset(cases: &[String]) -> String {
    format!(
        r#"{{"eval_set_id": "weather", "eval_cases": [{}]}}"#,
        cases.join(",")
    )
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn eval(dir: &Path, args: &[&str]) -> Out {
    let out = common::bin()
        .current_dir(dir)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("ADK_FLOW_MODEL")
        .arg("eval")
        .args(args)
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

fn json(out: &Out) -> Value {
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", out.stdout, out.stderr))
}

#[test]
fn every_example_eval_set_passes_offline() {
    let repo = common::repo();
    for (workflow, evals, script) in [
        (
            "workflows/support.yaml",
            "workflows/evals/support",
            "workflows/evals/support/support.script.yaml",
        ),
        (
            "workflows/pipeline.yaml",
            "workflows/evals/pipeline",
            "workflows/pipeline.script.yaml",
        ),
    ] {
        let out = eval(&repo, &[workflow, evals, "--script", script, "--no-save"]);
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        assert!(
            out.stdout.trim_end().ends_with("1 passed, 0 failed"),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn python_equality_on_arguments_and_rouge_scores_in_adks_json_shape() {
    let dir = common::write_files(&[
        ("root_agent.yaml", WEATHER),
        ("script.yaml", SCRIPT),
        (
            "weather.evalset.json",
            &evalset(&[
                // 3 == 3.0 in Python: the call matches
                case(
                    "float_days",
                    r#"{"city": "Paris", "days": 3.0}"#,
                    "It is sunny in Paris, 25 degrees.",
                ),
                // 3 != "3": it does not
                case(
                    "string_days",
                    r#"{"city": "Paris", "days": "3"}"#,
                    "Sunny in Paris today.",
                ),
            ]),
        ),
    ]);
    let out = eval(
        dir.path(),
        &[
            "root_agent.yaml",
            "weather.evalset.json",
            "--script",
            "script.yaml",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    let doc = json(&out);
    assert_eq!(
        doc["summary"],
        serde_json::json!({"passed": 1, "failed": 1, "not_evaluated": 0})
    );
    let cases = doc["eval_set_results"][0]["eval_case_results"]
        .as_array()
        .unwrap();
    assert_eq!(cases[0]["eval_id"], "float_days");
    assert_eq!(cases[0]["final_eval_status"], 1);
    assert_eq!(cases[1]["final_eval_status"], 2);
    let metrics = &cases[1]["overall_eval_metric_results"];
    assert_eq!(metrics[0]["metric_name"], "tool_trajectory_avg_score");
    assert_eq!(metrics[0]["score"], 0.0);
    assert_eq!(metrics[0]["eval_status"], 2);
    // rouge-score: "sunny in paris" of 7 candidate and 4 reference tokens
    let rouge = metrics[1]["score"].as_f64().unwrap();
    assert_eq!(
        rouge,
        2.0 * (3.0 / 7.0) * (3.0 / 4.0) / (3.0 / 7.0 + 3.0 / 4.0)
    );
    assert!(cases[0].get("session_details").unwrap().is_null());
    let actual = &cases[0]["eval_metric_result_per_invocation"][0]["actual_invocation"];
    assert_eq!(
        actual["intermediate_data"]["invocation_events"][0]["content"]["parts"][0]["function_call"]
            ["name"],
        "get_weather"
    );
}

#[test]
fn the_table_ends_like_adk_flow_test_and_the_exit_status_follows_it() {
    let dir = common::write_files(&[
        ("root_agent.yaml", WEATHER),
        ("script.yaml", SCRIPT),
        (
            "w.evalset.json",
            &evalset(&[case(
                "ok",
                r#"{"city": "Paris", "days": 3}"#,
                "It is sunny in Paris, 25 degrees.",
            )]),
        ),
        (
            "bad.evalset.json",
            &evalset(&[case(
                "wrong_city",
                r#"{"city": "Rome", "days": 3}"#,
                "Rome is rainy.",
            )]),
        ),
    ]);
    let ok = eval(
        dir.path(),
        &[
            "root_agent.yaml",
            "w.evalset.json",
            "--script",
            "script.yaml",
            "--no-save",
        ],
    );
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
    assert!(
        ok.stdout.contains(
            "PASS ok  tool_trajectory_avg_score 1.00/1.00  response_match_score 1.00/0.80"
        ),
        "{}",
        ok.stdout
    );
    assert!(ok.stdout.trim_end().ends_with("1 passed, 0 failed"));
    let bad = eval(
        dir.path(),
        &[
            "root_agent.yaml",
            "bad.evalset.json",
            "--script",
            "script.yaml",
            "--no-save",
            "--detailed",
        ],
    );
    assert_eq!(bad.code, 1);
    assert!(bad.stdout.contains("FAIL wrong_city"), "{}", bad.stdout);
    assert!(
        bad.stdout
            .contains(r#"expected calls: get_weather({"city":"Rome","days":3})"#),
        "{}",
        bad.stdout
    );
    assert!(
        bad.stdout
            .contains(r#"actual calls:   get_weather({"city":"Paris","days":3})"#),
        "{}",
        bad.stdout
    );
    assert!(bad.stdout.trim_end().ends_with("0 passed, 1 failed"));
}

#[test]
fn refusals_exit_2_before_any_case_runs() {
    let dir = common::write_files(&[
        ("root_agent.yaml", WEATHER),
        ("script.yaml", SCRIPT),
        ("w.evalset.json", &evalset(&[case("c", "{}", "x")])),
        ("vertex.json", r#"{"criteria": {"safety_v1": 0.8}}"#),
        (
            "typo.json",
            r#"{"criteria": {"tool_trajectory_avg_scor": 1.0}}"#,
        ),
        (
            "rubrics.json",
            r#"{"criteria": {"rubric_based_final_response_quality_v1": {"threshold": 0.5}}}"#,
        ),
        (
            "judge.json",
            r#"{"criteria": {"final_response_match_v2": 0.5}}"#,
        ),
        (
            "python.json",
            r#"{"criteria": {"m": 0.5}, "custom_metrics": {"m": {"code_config": {"name": "a.b"}}}}"#,
        ),
        (
            "broken.evalset.json",
            "{\"eval_set_id\": \"b\",\n \"eval_cases\": [{\"eval_id\": \"c\", \"conversation\": [], \"extra\": 1}]}",
        ),
    ]);
    let refused = |args: &[&str], needle: &str| {
        let mut all = vec!["root_agent.yaml"];
        all.extend_from_slice(args);
        let out = common::bin()
            .current_dir(dir.path())
            .env_remove("GEMINI_API_KEY")
            .env_remove("GOOGLE_API_KEY")
            .arg("eval")
            .args(&all)
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    };
    refused(&["w.evalset.json", "--config", "vertex.json"], "Vertex AI");
    refused(
        &["w.evalset.json", "--config", "typo.json"],
        "unknown metric",
    );
    refused(
        &["w.evalset.json", "--config", "rubrics.json"],
        "needs `rubrics`",
    );
    refused(&["w.evalset.json", "--config", "python.json"], "Python");
    refused(
        &["w.evalset.json", "--config", "judge.json"],
        "GEMINI_API_KEY",
    );
    refused(&["w.evalset.json:nope"], "no eval case `nope`");
    refused(&["broken.evalset.json"], "broken.evalset.json:2:");
    refused(&["missing.evalset.json"], "no such file");
}

#[test]
fn older_forms_camel_case_and_case_selection() {
    let camel = r#"{"evalSetId": "camel", "evalCases": [
        {"evalId": "a", "conversation": [{"userContent": {"parts": [{"text": "Weather in Paris?"}]},
          "finalResponse": {"parts": [{"text": "It is sunny in Paris, 25 degrees."}]},
          "intermediateData": {"toolUses": [{"name": "get_weather", "args": {"city": "Paris", "days": 3}}]}}]},
        {"evalId": "b", "conversation": [{"userContent": {"parts": [{"text": "Again?"}]}}]}]}"#;
    let flat = r#"[{"query": "Weather in Paris?", "expected_tool_use": [{"tool_name": "get_weather",
        "tool_input": {"city": "Paris", "days": 3}}], "reference": "It is sunny in Paris, 25 degrees."}]"#;
    let dir = common::write_files(&[
        ("root_agent.yaml", WEATHER),
        ("script.yaml", SCRIPT),
        ("sets/camel.evalset.json", camel),
        ("sets/flat.test.json", flat),
    ]);
    let out = eval(
        dir.path(),
        &[
            "root_agent.yaml",
            "sets/camel.evalset.json:a",
            "sets/flat.test.json",
            "--script",
            "script.yaml",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = json(&out);
    let sets = doc["eval_set_results"].as_array().unwrap();
    assert_eq!(sets.len(), 2);
    assert_eq!(sets[0]["eval_set_id"], "camel");
    assert_eq!(sets[0]["eval_case_results"].as_array().unwrap().len(), 1);
    assert_eq!(sets[1]["eval_set_id"], "flat");
    assert_eq!(
        sets[1]["eval_case_results"][0]["eval_id"],
        "sets/flat.test.json"
    );
    // a folder finds both
    let out = eval(
        dir.path(),
        &[
            "root_agent.yaml",
            "sets",
            "--script",
            "script.yaml",
            "--no-save",
        ],
    );
    assert!(
        out.stdout.contains("sets/camel.evalset.json")
            && out.stdout.contains("sets/flat.test.json"),
        "{}",
        out.stdout
    );
}

#[test]
fn user_state_does_not_leak_from_one_case_into_the_next() {
    let dir = common::write_files(&[
        ("root_agent.yaml", WEATHER),
        ("script.yaml", SCRIPT),
        (
            "w.evalset.json",
            &evalset(&[
                case("first", r#"{"city": "Paris", "days": 3}"#, "x"),
                case("second", r#"{"city": "Paris", "days": 3}"#, "x"),
            ]),
        ),
    ]);
    let out = eval(
        dir.path(),
        &[
            "root_agent.yaml",
            "w.evalset.json",
            "--script",
            "script.yaml",
            "--json",
            "--no-save",
            "--parallel",
            "1",
        ],
    );
    let doc = json(&out);
    for case in doc["eval_set_results"][0]["eval_case_results"]
        .as_array()
        .unwrap()
    {
        let details =
            &case["eval_metric_result_per_invocation"][0]["actual_invocation"]["app_details"];
        let instructions = details["agent_details"]["weather_agent"]["instructions"]
            .as_str()
            .unwrap();
        assert!(
            instructions.contains("Last city: ."),
            "{}: {instructions}",
            case["eval_id"]
        );
    }
}

#[test]
fn runs_junit_results_and_github_annotations() {
    let dir = common::write_files(&[
        ("root_agent.yaml", WEATHER),
        ("script.yaml", SCRIPT),
        (
            "w.evalset.json",
            &evalset(&[
                case(
                    "good",
                    r#"{"city": "Paris", "days": 3}"#,
                    "It is sunny in Paris, 25 degrees.",
                ),
                case("bad <one>", r#"{"city": "Rome"}"#, "Rome"),
            ]),
        ),
    ]);
    let out = common::bin()
        .current_dir(dir.path())
        .env("GITHUB_ACTIONS", "true")
        .args([
            "eval",
            "root_agent.yaml",
            "w.evalset.json",
            "--script",
            "script.yaml",
            "--runs",
            "2",
        ])
        .args(["--junit", "junit.xml", "--results", "history"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout.contains("tool_trajectory_avg_score 1.00/1.00 (1.00-1.00)"),
        "{stdout}"
    );
    assert!(stdout.contains("::error file=w.evalset.json,line=5,title=eval case bad <one>::tool_trajectory_avg_score 0.00 < 1"), "{stdout}");
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains(r#"<testsuite name="weather" tests="2" failures="1""#),
        "{junit}"
    );
    assert!(
        junit.contains(r#"<testcase classname="weather" name="good"/>"#),
        "{junit}"
    );
    assert!(
        junit.contains(r#"<testcase classname="weather" name="bad &lt;one&gt;">"#),
        "{junit}"
    );
    assert!(
        junit.contains(
            "tool_trajectory_avg_score: score 0.00 below threshold 1 (per turn: 0.00, 0.00)"
        ),
        "{junit}"
    );
    let saved: Vec<_> = std::fs::read_dir(dir.path().join("history"))
        .unwrap()
        .collect();
    assert_eq!(saved.len(), 1);
    let path = saved[0].as_ref().unwrap().path();
    assert!(path.to_string_lossy().ends_with(".evalset_result.json"));
    assert!(
        path.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("weather_agent_weather_")
    );
    let result: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = result["eval_case_results"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    assert!(cases[0].get("run").is_none());
    assert_eq!(cases[2]["run"], 2);
}

#[test]
fn scripted_judges_vote_like_adk() {
    let config = r#"{"criteria": {
        "final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"num_samples": 3}},
        "rubric_based_final_response_quality_v1": {"threshold": 0.6, "judge_model_options": {"num_samples": 2},
          "rubrics": [{"rubric_id": "temp", "rubric_content": {"text_property": "States the temperature."}},
                      {"rubric_id": "brief", "rubric_content": {"text_property": "Is one sentence."}}]}}}"#;
    let script = format!(
        "{SCRIPT}judge:\n{}",
        [
            // v2: valid, invalid, valid → valid
            r#"{"is_the_agent_response_valid": "valid"}"#,
            r#"{"is_the_agent_response_valid": "invalid"}"#,
            r#"{"is_the_agent_response_valid": "valid"}"#,
            // rubrics, sample 1 and 2: temp yes/yes, brief yes/no (tie → no)
            "Property: States the temperature.\nRationale: 25 degrees\nVerdict: yes\nProperty: Is one sentence.\nRationale: one\nVerdict: yes",
            "Property: states the temperature. \nRationale: ok\nVerdict: Yes.\nProperty: Is one sentence.\nRationale: unsure\nVerdict: unknown",
        ]
        .iter()
        .map(|r| format!("  - {}\n", serde_json::to_string(r).unwrap()))
        .collect::<String>()
    );
    let dir = common::write_files(&[
        ("root_agent.yaml", WEATHER),
        ("script.yaml", &script),
        ("test_config.json", config),
        (
            "w.evalset.json",
            &evalset(&[case("c", "{}", "Sunny, 25 degrees in Paris.")]),
        ),
    ]);
    let out = eval(
        dir.path(),
        &[
            "root_agent.yaml",
            "w.evalset.json",
            "--script",
            "script.yaml",
            "--json",
            "--no-save",
        ],
    );
    let doc = json(&out);
    let metrics =
        &doc["eval_set_results"][0]["eval_case_results"][0]["overall_eval_metric_results"];
    assert_eq!(metrics[0]["score"], 1.0);
    assert_eq!(metrics[1]["score"], 0.5);
    assert_eq!(metrics[1]["eval_status"], 2);
    let rubrics = &metrics[1]["details"]["rubric_scores"];
    assert_eq!(rubrics[0]["rubric_id"], "temp");
    assert_eq!(rubrics[0]["score"], 1.0);
    assert_eq!(rubrics[1]["score"], 0.0);
    assert_eq!(out.code, 1);
}

#[test]
fn a_conversation_scenario_with_a_scripted_user() {
    let scenario = r#"{"eval_set_id": "sim", "eval_cases": [{"eval_id": "chat",
        "conversation_scenario": {"starting_prompt": "Weather in Paris?", "conversation_plan": "Ask about Paris, then stop."}}]}"#;
    let config = r#"{"criteria": {"per_turn_user_simulator_quality_v1": {"threshold": 0.5, "judge_model_options": {"num_samples": 1}}},
        "user_simulator_config": {"model": "gemini-2.5-flash", "max_allowed_invocations": 5}}"#;
    let script = r#"
replies:
  weather_agent:
    - function_call: {name: get_weather, args: {city: Paris}}
    - text: "Sunny, 25 degrees."
    - text: "You're welcome."
user:
  - "Thanks!"
  - "</finished>"
judge:
  - '{"is_valid": "valid"}'
  - '{"is_valid": "valid"}'
"#;
    let dir = common::write_files(&[
        ("root_agent.yaml", WEATHER),
        ("script.yaml", script),
        ("test_config.json", config),
        ("sim.evalset.json", scenario),
    ]);
    let out = eval(
        dir.path(),
        &[
            "root_agent.yaml",
            "sim.evalset.json",
            "--script",
            "script.yaml",
            "--json",
            "--no-save",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let doc = json(&out);
    let case = &doc["eval_set_results"][0]["eval_case_results"][0];
    let turns = case["eval_metric_result_per_invocation"]
        .as_array()
        .unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(
        turns[1]["actual_invocation"]["user_content"]["parts"][0]["text"],
        "Thanks!"
    );
    assert_eq!(case["overall_eval_metric_results"][0]["score"], 1.0);
}

/// The scores ADK 1.39.1's own evaluation code gives these eval sets
/// (`scripts/eval-adk-reference.py` → `tests/fixtures/eval/adk/expected.json`), score by
/// score: trajectories (EXACT, IN_ORDER, ANY_ORDER) with transfers and a loop's exit_loop,
/// ROUGE-1, v2 votes, rubric votes and means (criterion, case and invocation rubrics),
/// hallucinations with intermediate texts, a conversation scenario with a simulated user
/// and the simulator's quality, case statuses.
#[test]
fn scores_match_adks_own_evaluation_code() {
    let dir = common::repo().join("tests/fixtures/eval/adk");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let mut compared = 0;
    for (set, cases) in expected["sets"].as_object().unwrap() {
        // A set's own script, else the shared one (as the reference script does).
        let own = Path::new(set).parent().unwrap().join("script.yaml");
        let script = if dir.join(&own).exists() {
            own.to_str().unwrap().to_owned()
        } else {
            "script.yaml".to_owned()
        };
        let out = eval(
            &dir,
            &[
                "root_agent.yaml",
                set,
                "--script",
                &script,
                "--json",
                "--no-save",
            ],
        );
        let doc = json(&out);
        let results = doc["eval_set_results"][0]["eval_case_results"]
            .as_array()
            .unwrap();
        assert_eq!(results.len(), cases.as_object().unwrap().len(), "{set}");
        for r in results {
            let id = r["eval_id"].as_str().unwrap();
            let want = &cases[id];
            assert_eq!(
                r["final_eval_status"], want["final_eval_status"],
                "{set} {id}"
            );
            let metrics = r["overall_eval_metric_results"].as_array().unwrap();
            for (i, w) in want["metrics"].as_array().unwrap().iter().enumerate() {
                let got = &metrics[i];
                let what = format!("{set} {id} {}", w["metric_name"]);
                assert_eq!(got["metric_name"], w["metric_name"], "{what}");
                assert_eq!(got["score"], w["score"], "{what}");
                assert_eq!(got["eval_status"], w["eval_status"], "{what}");
                let per: Vec<Value> = r["eval_metric_result_per_invocation"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p["eval_metric_results"][i]["score"].clone())
                    .collect();
                assert_eq!(Value::Array(per), w["per_invocation"], "{what}");
                let rubrics: Vec<Value> = got["details"]["rubric_scores"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|x| serde_json::json!([x["rubric_id"], x["score"]]))
                            .collect()
                    })
                    .unwrap_or_default();
                assert_eq!(Value::Array(rubrics), w["rubric_scores"], "{what}");
                compared += 1;
            }
        }
    }
    assert!(compared >= 30, "{compared}");
}
