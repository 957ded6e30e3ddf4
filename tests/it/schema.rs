//! The committed JSON Schema is current, valid, and accepts every example workflow.

use crate::common;

use serde_json::Value;

fn committed() -> (std::path::PathBuf, String) {
    let path = common::repo().join("schemas/workflow.schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    (path, text)
}

#[test]
fn committed_schema_matches_the_code() {
    let generated = adk_flow::config::schema::generated_schema_text();
    let (path, text) = committed();
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    assert!(
        text == generated,
        "schemas/workflow.schema.json drifted from the config types: run `UPDATE_SCHEMAS=1 cargo test --test it schema::` and commit the result"
    );
}

#[test]
fn schema_command_prints_the_committed_schema() {
    let out = common::bin().arg("schema").output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), committed().1);
}

#[test]
fn examples_and_adk_configs_satisfy_the_schema() {
    let (_, text) = committed();
    let schema: Value = serde_json::from_str(&text).unwrap();
    assert!(jsonschema::meta::is_valid(&schema));
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let repo = common::repo();
    let mut checked = 0;
    for dir in [
        "workflows",
        "tests/golden",
        "tests/validate/valid",
        "tests/data/graphs",
    ] {
        let mut stack = vec![repo.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    // Data files of lookup tools are not workflow files.
                    if !p.ends_with("data") {
                        stack.push(p);
                    }
                    continue;
                }
                let name = p.file_name().unwrap().to_str().unwrap();
                if !name.ends_with(".yaml") || name.contains("script") || name.contains(".test.") {
                    continue;
                }
                let (value, _) =
                    adk_flow::config::yaml::parse(&std::fs::read_to_string(&p).unwrap()).unwrap();
                let errors: Vec<String> = validator
                    .iter_errors(&value)
                    .map(|e| e.to_string())
                    .collect();
                assert!(errors.is_empty(), "{}: {errors:?}", p.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 15, "only {checked} files checked");
}

#[test]
fn schema_describes_every_field_and_rejects_unknown_keys() {
    let schema = adk_flow::config::schema::workflow_schema();
    for (name, def) in schema["$defs"].as_object().unwrap() {
        let Some(props) = def.get("properties").and_then(Value::as_object) else {
            continue;
        };
        assert_eq!(
            def["additionalProperties"],
            Value::Bool(false),
            "{name} accepts unknown keys"
        );
        for (field, s) in props {
            assert!(
                s.get("description").is_some(),
                "{name}.{field} has no description"
            );
        }
    }
}

#[test]
fn the_reference_page_documents_every_key() {
    let reference = std::fs::read_to_string(common::repo().join("docs/reference.md")).unwrap();
    let schema = adk_flow::config::schema::workflow_schema();
    let mut missing = vec![];
    for def in schema["$defs"].as_object().unwrap().values() {
        if let Some(props) = def.get("properties").and_then(Value::as_object) {
            for key in props.keys() {
                if !reference.contains(&format!("`{key}`")) {
                    missing.push(key.clone());
                }
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "docs/reference.md does not mention: {missing:?}"
    );
}
