//! Finding apps on the command line's paths: a workflow file is an app named by its stem,
//! a folder holding `root_agent.yaml` an ADK app named by the folder, and any other folder
//! is searched for both.

use crate::config::discover::{FileKind, classify};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// A workflow found on the command line: its app name and its root file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppSource {
    /// The app name: the file stem, or the folder of a `root_agent.yaml`.
    pub name: String,
    /// The root agent file.
    pub root: PathBuf,
}

/// A path on the command line that names no app.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// The path does not exist.
    #[error("{}: no such file or directory", .0.display())]
    Missing(PathBuf),
    /// The path is a file but not a YAML file.
    #[error("{}: not a YAML workflow file (.yaml or .yml)", .0.display())]
    NotYaml(PathBuf),
    /// Two workflows would have the same app name.
    #[error("two apps are named `{name}`: {} and {}", first.display(), second.display())]
    Duplicate {
        /// The app name.
        name: String,
        /// The first workflow.
        first: PathBuf,
        /// The second workflow.
        second: PathBuf,
    },
    /// A directory could not be listed.
    #[error("{}: cannot list the directory", path.display())]
    Read {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

const ROOT_AGENT_FILE: &str = "root_agent.yaml";

fn is_yaml(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    )
}

fn file_name(path: &Path) -> String {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The app a workflow file is: named after its stem, or after its folder for
/// `root_agent.yaml`. Scripts and test files are not apps.
fn app_of_file(path: &Path) -> Option<AppSource> {
    if matches!(
        classify(path),
        FileKind::Script | FileKind::EvalScript | FileKind::Test
    ) {
        return None;
    }
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    let name = if stem == "root_agent" {
        file_name(path.parent().unwrap_or(Path::new(".")))
    } else {
        stem
    };
    Some(AppSource {
        name,
        root: path.to_owned(),
    })
}

/// The apps of one folder: the folder itself when it holds `root_agent.yaml`; otherwise
/// its sub-folders holding one and its workflow files, leaving out scripts, test files
/// and agent files another file of the folder names (`config_path`).
fn apps_of_dir(dir: &Path, out: &mut Vec<AppSource>) -> Result<(), DiscoverError> {
    let root = dir.join(ROOT_AGENT_FILE);
    if root.is_file() {
        out.push(AppSource {
            name: file_name(dir),
            root,
        });
        return Ok(());
    }
    let read_err = |source| DiscoverError::Read {
        path: dir.to_owned(),
        source,
    };
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_err)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    let mut files = Vec::new();
    let mut referenced: HashSet<PathBuf> = HashSet::new();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') || name == "__pycache__" {
            continue;
        }
        if path.is_dir() {
            let root = path.join(ROOT_AGENT_FILE);
            if root.is_file() {
                out.push(AppSource { name, root });
            }
            continue;
        }
        if !is_yaml(&path) {
            continue;
        }
        match classify(&path) {
            FileKind::Script | FileKind::EvalScript | FileKind::Test => {}
            FileKind::Agent(refs, _) => {
                referenced.extend(refs);
                files.push(path);
            }
            FileKind::Unknown => files.push(path),
        }
    }
    for path in files {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        if referenced.contains(&canonical) {
            continue;
        }
        out.extend(app_of_file(&path));
    }
    Ok(())
}

/// Finds the apps of the command line's paths (files and folders, see [`AppSource`]).
///
/// # Errors
/// A missing path, a file that is not YAML, an unreadable folder, two apps with one name.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<AppSource>, DiscoverError> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            apps_of_dir(path, &mut found)?;
        } else if path.is_file() {
            if !is_yaml(path) {
                return Err(DiscoverError::NotYaml(path.clone()));
            }
            found.extend(app_of_file(path));
        } else {
            return Err(DiscoverError::Missing(path.clone()));
        }
    }
    let mut by_name: BTreeMap<String, AppSource> = BTreeMap::new();
    for app in found {
        if let Some(first) = by_name.get(&app.name) {
            if same_file(&first.root, &app.root) {
                continue;
            }
            return Err(DiscoverError::Duplicate {
                name: app.name,
                first: first.root.clone(),
                second: app.root,
            });
        }
        by_name.insert(app.name.clone(), app);
    }
    Ok(by_name.into_values().collect())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
