//! The validator generated at build time ([`super::Validator`]) tells valid values from
//! invalid ones as the runtime validator compiled from the generated schema does.
//! Compared on every YAML file of the repository, every file of the loader's fuzz corpus,
//! each of their mappings checked alone, and variations of them (unknown keys, missing
//! keys, values of another type, unknown agent classes). (Its errors are not used: they
//! come in another order than the runtime validator's, from which the messages are made.)

use super::{Validator, generated_schema};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Every YAML text under `dir` (build output, dependencies and git left out).
fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !matches!(&*name, "target" | "node_modules" | ".git") {
                yaml_files(&path, out);
            }
        } else if name.ends_with(".yaml") || name.ends_with(".yml") {
            out.push(path);
        }
    }
}

/// The documents compared: the repository's YAML files and the fuzz corpus's files.
fn corpus() -> Vec<Value> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut texts = Vec::new();
    let mut files = Vec::new();
    yaml_files(root, &mut files);
    for file in files {
        if let Ok(text) = std::fs::read_to_string(file) {
            texts.push(text);
        }
    }
    if let Ok(entries) = std::fs::read_dir(root.join("fuzz/corpus/yaml_load")) {
        for entry in entries.flatten() {
            if let Ok(bytes) = std::fs::read(entry.path()) {
                for part in bytes.split(|b| *b == 0) {
                    texts.push(String::from_utf8_lossy(part).into_owned());
                }
            }
        }
    }
    texts
        .iter()
        .filter_map(|t| crate::config::yaml::parse(t).ok())
        .map(|(v, _)| v)
        .filter(Value::is_object)
        .collect()
}

/// Every mapping inside `v` (itself included), as an agent the loader may check alone.
fn mappings<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            out.push(v);
            m.values().for_each(|x| mappings(x, out));
        }
        Value::Array(items) => items.iter().for_each(|x| mappings(x, out)),
        _ => {}
    }
}

/// A value of another type than `v`.
fn other_type(v: &Value) -> Value {
    match v {
        Value::String(_) => json!(42),
        Value::Number(_) => json!("x"),
        Value::Bool(_) => json!("yes"),
        Value::Null => json!(1.5),
        Value::Array(_) => json!({"a": 1}),
        Value::Object(_) => json!(["a"]),
    }
}

/// `v` with one change at each place, up to `limit` changes.
fn variations(v: &Value, limit: usize) -> Vec<Value> {
    fn walk(v: &Value, edit: &mut dyn FnMut(&Value) -> Vec<Value>) -> Vec<Value> {
        let mut out = edit(v);
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    for changed in walk(x, edit) {
                        let mut copy = m.clone();
                        copy.insert(k.clone(), changed);
                        out.push(Value::Object(copy));
                    }
                }
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    for changed in walk(x, edit) {
                        let mut copy = items.clone();
                        copy[i] = changed;
                        out.push(Value::Array(copy));
                    }
                }
            }
            _ => {}
        }
        out
    }
    let mut out = walk(v, &mut |x| {
        let mut here = vec![other_type(x)];
        if let Value::Object(m) = x {
            let mut typo = m.clone();
            typo.insert("modle".into(), json!("m"));
            here.push(Value::Object(typo));
            if let Some(k) = m.keys().next() {
                let mut missing = m.clone();
                missing.shift_remove(k);
                here.push(Value::Object(missing));
            }
            if m.contains_key("agent_class") {
                let mut class = m.clone();
                class.insert("agent_class".into(), json!("CustomAgent"));
                here.push(Value::Object(class));
            }
        }
        here
    });
    out.truncate(limit);
    out
}

#[test]
fn the_generated_validator_answers_as_the_runtime_one_does() {
    let schema = generated_schema();
    let runtime = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    let documents = corpus();
    assert!(documents.len() > 500, "only {} documents", documents.len());
    let (mut valid, mut invalid) = (0, 0);
    for document in &documents {
        let mut checked = Vec::new();
        mappings(document, &mut checked);
        let mut candidates: Vec<Value> = checked.into_iter().take(40).cloned().collect();
        candidates.extend(variations(document, 60));
        for value in &candidates {
            let expected = runtime.is_valid(value);
            assert_eq!(
                Validator::is_valid(value),
                expected,
                "answers differ for {value}"
            );
            if expected {
                valid += 1;
            } else {
                invalid += 1;
            }
        }
    }
    assert!(valid > 1_000, "only {valid} valid values compared");
    assert!(invalid > 5_000, "only {invalid} invalid values compared");
}
