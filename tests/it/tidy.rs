//! The house rules that the compiler does not check: every `crate::` path of a module is
//! allowed by the dependency rules of ARCHITECTURE.md (the ```deps block), and modules
//! kept free of the runtime name none of its crates.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module → what it may use, and external crates it must not name.
struct Rules {
    allowed: BTreeMap<String, BTreeSet<String>>,
    forbidden_crates: BTreeMap<String, Vec<String>>,
}

fn rules() -> Rules {
    let text = std::fs::read_to_string(super::common::repo().join("ARCHITECTURE.md")).unwrap();
    let block = text
        .split("```deps\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("ARCHITECTURE.md has a ```deps block");
    let mut everyone = BTreeSet::new();
    let mut allowed = BTreeMap::new();
    let mut forbidden_crates = BTreeMap::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let (module, deps) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("deps line without `:`: {line}"));
        let (crates, modules): (Vec<&str>, Vec<&str>) =
            deps.split_whitespace().partition(|d| d.starts_with('!'));
        let modules: BTreeSet<String> = modules.into_iter().map(str::to_owned).collect();
        if module == "*" {
            everyone = modules;
            continue;
        }
        forbidden_crates.insert(
            module.to_owned(),
            crates.iter().map(|c| c[1..].to_owned()).collect(),
        );
        allowed.insert(module.to_owned(), modules);
    }
    for (module, deps) in &mut allowed {
        if !everyone.contains(module) {
            deps.extend(everyone.iter().cloned());
        }
    }
    Rules {
        allowed,
        forbidden_crates,
    }
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments (doc links are not dependencies).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a file's `crate::` paths name, grouped imports included
/// (`crate::{a::x, b}`).
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && c == ',') {
                    out.extend(leading_ident(item.trim()));
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else {
                    item.push(c);
                }
            }
        } else {
            out.extend(leading_ident(rest));
        }
    }
    out
}

fn leading_ident(s: &str) -> Option<String> {
    let ident: String = s
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!ident.is_empty() && ident != "self").then_some(ident)
}

fn names_crate(code: &str, krate: &str) -> bool {
    let path = format!("{krate}::");
    code.match_indices(&path).any(|(i, _)| {
        !code[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
    })
}

#[test]
fn dependencies_follow_the_architecture() {
    let rules = rules();
    let src = super::common::repo().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut problems = Vec::new();
    let mut modules = BTreeSet::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_str()
            .unwrap();
        if first == "lib.rs" || first == "main.rs" {
            continue;
        }
        let module = first.trim_end_matches(".rs").to_owned();
        modules.insert(module.clone());
        let Some(allowed) = rules.allowed.get(&module) else {
            continue;
        };
        let code = code(&std::fs::read_to_string(&file).unwrap());
        for dep in crate_paths(&code) {
            if dep != module && !allowed.contains(&dep) {
                problems.push(format!(
                    "src/{}: `{module}` uses `{dep}`, which ARCHITECTURE.md does not allow",
                    rel.display()
                ));
            }
        }
        for krate in &rules.forbidden_crates[&module] {
            if names_crate(&code, krate) {
                problems.push(format!(
                    "src/{}: `{module}` must not use the `{krate}` crate",
                    rel.display()
                ));
            }
        }
    }
    for module in &modules {
        if !rules.allowed.contains_key(module) {
            problems.push(format!(
                "module `{module}` is missing from ARCHITECTURE.md's dependency rules"
            ));
        }
    }
    for module in rules.allowed.keys() {
        if !modules.contains(module) {
            problems.push(format!(
                "ARCHITECTURE.md's dependency rules name `{module}`, which is not a module"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn paths_are_read_from_plain_and_grouped_imports() {
    let found = crate_paths(
        "use crate::a::X;\nuse crate::{b::{c, d}, e, self};\nfn f() { crate::g::h(); }\n\
         macro_rules! m { () => { $crate::z } }",
    );
    let want: BTreeSet<String> = ["a", "b", "e", "g"].map(str::to_owned).into();
    assert_eq!(found, want);
    assert!(names_crate("use tokio::sync::Mutex;", "tokio"));
    assert!(!names_crate("use my_tokio::x; a::tokio::b", "tokio"));
}
