//! An app's eval sets and results on disk, where ADK's `LocalEvalSetsManager` and
//! `LocalEvalSetResultsManager` keep them: `DIR/{eval_set_id}.evalset.json` and
//! `DIR/.adk/eval_history/{result_id}.evalset_result.json`, DIR being the app's folder.
//! Results that `adk-flow eval` saved in its own folder ([`CLI_HISTORY_DIR`]) are read too,
//! when the store is told where that folder is ([`EvalStore::with_cli_history`]).
//! Eval sets are read by [`files::load`] (all three forms, as `adk-flow eval` reads
//! them) and written in ADK's form (snake_case, unset fields left out).
//!
//! Ids from requests become file names, so each is checked by [`crate::segment::check`]
//! first: none can leave the folder. New eval set ids must also match ADK's
//! `^[a-zA-Z0-9_]+$`.

use super::files::{self, FileError};
use super::results::EvalSetResult;
use super::types::{EvalCase, EvalSet};
use super::wire;
use crate::segment::{self, SegmentError};
use std::path::{Path, PathBuf};

/// The suffix of eval set files.
pub const EVAL_SET_SUFFIX: &str = ".evalset.json";
/// The suffix of result files.
pub const RESULT_SUFFIX: &str = ".evalset_result.json";
/// Where results are kept, below the app's folder (ADK's place).
pub const HISTORY_DIR: &str = ".adk/eval_history";
/// Where `adk-flow eval` saves results by default, below the folder it runs in; results of
/// every app share it, each named `<app>_<evalset>_<time>`.
pub const CLI_HISTORY_DIR: &str = ".adk-flow/eval_history";

/// Why a store operation failed; each maps to one of ADK's answers.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An id that cannot be a file name.
    #[error(transparent)]
    Id(#[from] SegmentError),
    /// A new eval set id outside ADK's alphabet.
    #[error("Invalid Eval Set ID. Eval Set ID should have the `^[a-zA-Z0-9_]+$` format")]
    BadSetId,
    /// The eval set exists already.
    #[error("EvalSet {set} already exists for app {app}.")]
    SetExists {
        /// The eval set.
        set: String,
        /// The app.
        app: String,
    },
    /// No such eval set.
    #[error("Eval set `{0}` not found.")]
    SetNotFound(String),
    /// The case id is taken.
    #[error("Eval id `{case}` already exists in `{set}` eval set.")]
    CaseExists {
        /// The eval set.
        set: String,
        /// The case.
        case: String,
    },
    /// No such case.
    #[error("Eval case `{case}` not found in eval set `{set}`.")]
    CaseNotFound {
        /// The eval set.
        set: String,
        /// The case.
        case: String,
    },
    /// No such result.
    #[error("Eval set result `{0}` not found.")]
    ResultNotFound(String),
    /// An eval set file that cannot be read.
    #[error(transparent)]
    File(#[from] FileError),
    /// A result file that is not a result.
    #[error("{path}: not an eval set result: {message}")]
    BadResult {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The file system refused.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// One app's eval sets and results.
#[derive(Debug, Clone)]
pub struct EvalStore {
    app: String,
    dir: PathBuf,
    /// The `adk-flow eval` results folder, read for this app's results.
    cli_history: Option<PathBuf>,
}

/// ADK's rule for new eval set ids.
fn adk_set_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl EvalStore {
    /// The store of `app` whose root workflow file is `root`: the folder of an ADK
    /// `root_agent.yaml`, else the folder named after the app beside the file (so
    /// `apps/greeter.yaml` keeps its sets in `apps/greeter/`, as `adk web apps` would).
    pub fn for_app(app: &str, root: &Path) -> Self {
        let parent = root.parent().unwrap_or(Path::new("."));
        let dir = if root.file_name().is_some_and(|n| n == "root_agent.yaml") {
            parent.to_owned()
        } else {
            parent.join(app)
        };
        EvalStore {
            app: app.to_owned(),
            dir,
            cli_history: None,
        }
    }

    /// The same store, also reading the app's results from `dir`, the folder where
    /// `adk-flow eval` saves them ([`CLI_HISTORY_DIR`] below where it ran). Results are
    /// still saved in the app's own folder.
    pub fn with_cli_history(mut self, dir: PathBuf) -> Self {
        self.cli_history = Some(dir);
        self
    }

    /// The app's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where results are saved and read.
    pub fn history_dir(&self) -> PathBuf {
        self.dir.join(HISTORY_DIR)
    }

    fn set_path(&self, id: &str) -> Result<PathBuf, StoreError> {
        segment::check(id, "eval_set_id")?;
        Ok(self.dir.join(format!("{id}{EVAL_SET_SUFFIX}")))
    }

    /// The ids of the eval sets, sorted (none when the folder does not exist).
    ///
    /// # Errors
    /// The folder cannot be listed.
    pub fn set_ids(&self) -> Result<Vec<String>, StoreError> {
        ids_in(&self.dir, EVAL_SET_SUFFIX)
    }

    /// An eval set, `None` when there is no such file.
    ///
    /// # Errors
    /// A hostile id; a file that cannot be read or is not an eval set.
    pub fn set(&self, id: &str) -> Result<Option<EvalSet>, StoreError> {
        let path = self.set_path(id)?;
        if !path.exists() {
            return Ok(None);
        }
        Ok(Some(files::load(&path)?.set))
    }

    fn existing(&self, id: &str) -> Result<EvalSet, StoreError> {
        self.set(id)?
            .ok_or_else(|| StoreError::SetNotFound(id.to_owned()))
    }

    fn write(&self, id: &str, set: &EvalSet) -> Result<(), StoreError> {
        let path = self.set_path(id)?;
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let value = serde_json::to_value(set).map_err(|e| io(&path)(std::io::Error::other(e)))?;
        let text = serde_json::to_string_pretty(&wire::file_json(value))
            .map_err(|e| io(&path)(std::io::Error::other(e)))?;
        // Written aside, then renamed: a reader never sees half a file.
        let aside = self.dir.join(format!(".{id}{EVAL_SET_SUFFIX}.tmp"));
        std::fs::write(&aside, text).map_err(io(&aside))?;
        std::fs::rename(&aside, &path).map_err(io(&path))
    }

    /// Creates an empty eval set (named after its id), as ADK does.
    ///
    /// # Errors
    /// An id outside `^[a-zA-Z0-9_]+$`; an eval set of that id exists.
    pub fn create_set(&self, id: &str) -> Result<EvalSet, StoreError> {
        if !adk_set_id(id) {
            return Err(StoreError::BadSetId);
        }
        if self.set_path(id)?.exists() {
            return Err(StoreError::SetExists {
                set: id.to_owned(),
                app: self.app.clone(),
            });
        }
        let set = EvalSet {
            eval_set_id: id.to_owned(),
            name: Some(id.to_owned()),
            description: None,
            eval_cases: Vec::new(),
            creation_timestamp: crate::event::now(),
        };
        self.write(id, &set)?;
        Ok(set)
    }

    /// Deletes an eval set file (the dev UI asks; ADK 1.39.1 has no such route).
    ///
    /// # Errors
    /// A hostile id; no such eval set.
    pub fn delete_set(&self, id: &str) -> Result<(), StoreError> {
        let path = self.set_path(id)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(StoreError::SetNotFound(id.to_owned()))
            }
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Appends a case.
    ///
    /// # Errors
    /// No such eval set; the case id is taken.
    pub fn add_case(&self, set_id: &str, case: EvalCase) -> Result<(), StoreError> {
        let mut set = self.existing(set_id)?;
        if set.eval_cases.iter().any(|c| c.eval_id == case.eval_id) {
            return Err(StoreError::CaseExists {
                set: set.eval_set_id,
                case: case.eval_id,
            });
        }
        set.eval_cases.push(case);
        self.write(set_id, &set)
    }

    /// Replaces a case (moved to the end, as ADK does).
    ///
    /// # Errors
    /// No such eval set or case.
    pub fn update_case(&self, set_id: &str, case: EvalCase) -> Result<(), StoreError> {
        let mut set = self.existing(set_id)?;
        let Some(i) = set
            .eval_cases
            .iter()
            .position(|c| c.eval_id == case.eval_id)
        else {
            return Err(StoreError::CaseNotFound {
                set: set.eval_set_id,
                case: case.eval_id,
            });
        };
        set.eval_cases.remove(i);
        set.eval_cases.push(case);
        self.write(set_id, &set)
    }

    /// Removes a case.
    ///
    /// # Errors
    /// No such eval set or case.
    pub fn delete_case(&self, set_id: &str, case_id: &str) -> Result<(), StoreError> {
        let mut set = self.existing(set_id)?;
        let Some(i) = set.eval_cases.iter().position(|c| c.eval_id == case_id) else {
            return Err(StoreError::CaseNotFound {
                set: set.eval_set_id,
                case: case_id.to_owned(),
            });
        };
        set.eval_cases.remove(i);
        self.write(set_id, &set)
    }

    /// The ids of the saved results: the app's own folder first, then this app's results
    /// in the `adk-flow eval` folder, each sorted by name.
    ///
    /// # Errors
    /// A folder cannot be listed.
    pub fn result_ids(&self) -> Result<Vec<String>, StoreError> {
        let mut ids = ids_in(&self.history_dir(), RESULT_SUFFIX)?;
        if let Some(shared) = &self.cli_history {
            let prefix = format!("{}_", self.app);
            for id in ids_in(shared, RESULT_SUFFIX)? {
                // Names are `<app>_<evalset>_<time>`: the prefix finds the candidates, the
                // file's own ids decide (app `a` must not list app `a_b`'s results).
                if id.starts_with(&prefix)
                    && !ids.contains(&id)
                    && self
                        .read_result(&shared.join(format!("{id}{RESULT_SUFFIX}")))
                        .is_ok()
                {
                    ids.push(id);
                }
            }
        }
        Ok(ids)
    }

    /// A saved result, from the app's folder or, failing that, the `adk-flow eval` folder.
    ///
    /// # Errors
    /// A hostile id; no such result of this app; a file that is not a result.
    pub fn result(&self, id: &str) -> Result<EvalSetResult, StoreError> {
        segment::check(id, "eval_set_result_id")?;
        let file = format!("{id}{RESULT_SUFFIX}");
        let own = self.history_dir().join(&file);
        if own.is_file() {
            return self.read_file(&own);
        }
        match &self.cli_history {
            Some(shared) if shared.join(&file).is_file() => self
                .read_result(&shared.join(&file))
                .map_err(|_| StoreError::ResultNotFound(id.to_owned())),
            _ => Err(StoreError::ResultNotFound(id.to_owned())),
        }
    }

    /// A result file of the shared folder, if it is one of this app's.
    fn read_result(&self, path: &Path) -> Result<EvalSetResult, StoreError> {
        let result = self.read_file(path)?;
        // ADK's result ids are `<app>_<evalset>_<time>`; a file of this app has exactly
        // this app's name before its own eval set id.
        let time = result
            .eval_set_result_id
            .strip_prefix(self.app.as_str())
            .and_then(|rest| rest.strip_prefix('_'))
            .and_then(|rest| rest.strip_prefix(result.eval_set_id.as_str()))
            .and_then(|rest| rest.strip_prefix('_'));
        if time.is_some_and(|t| t.parse::<f64>().is_ok()) {
            Ok(result)
        } else {
            Err(StoreError::ResultNotFound(path.display().to_string()))
        }
    }

    fn read_file(&self, path: &Path) -> Result<EvalSetResult, StoreError> {
        let text = crate::config::read_text(path).map_err(|e| StoreError::BadResult {
            path: path.display().to_string(),
            message: crate::errors::chain(&e),
        })?;
        serde_json::from_str(&text).map_err(|e| StoreError::BadResult {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// Saves a result under its name (ADK's file name and format).
    ///
    /// # Errors
    /// A name that cannot be a file name; the file system refused.
    pub fn save_result(&self, result: &EvalSetResult) -> Result<PathBuf, StoreError> {
        let dir = self.history_dir();
        super::results::save(&dir, result).map_err(io(&dir))
    }
}

/// The file names in `dir` ending with `suffix`, without it, sorted.
fn ids_in(dir: &Path, suffix: &str) -> Result<Vec<String>, StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(suffix))
                .map(str::to_owned)
        })
        .filter(|id| !id.is_empty())
        .collect();
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, EvalStore) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("apps/greeter.yaml");
        (dir, EvalStore::for_app("greeter", &root))
    }

    #[test]
    fn folders_of_file_apps_and_adk_apps() {
        let s = EvalStore::for_app("team", Path::new("/x/apps/team/root_agent.yaml"));
        assert_eq!(s.dir(), Path::new("/x/apps/team"));
        let s = EvalStore::for_app("greeter", Path::new("/x/apps/greeter.yaml"));
        assert_eq!(s.dir(), Path::new("/x/apps/greeter"));
        assert_eq!(
            s.history_dir(),
            Path::new("/x/apps/greeter/.adk/eval_history")
        );
    }

    #[test]
    fn sets_are_created_listed_and_refused_as_adk_does() {
        let (_d, s) = store();
        assert_eq!(s.set_ids().unwrap(), Vec::<String>::new());
        let set = s.create_set("smoke").unwrap();
        assert_eq!(set.name.as_deref(), Some("smoke"));
        assert!(matches!(
            s.create_set("smoke"),
            Err(StoreError::SetExists { .. })
        ));
        assert!(matches!(s.create_set("a-b"), Err(StoreError::BadSetId)));
        assert_eq!(s.set_ids().unwrap(), vec!["smoke"]);
        assert_eq!(s.set("smoke").unwrap().unwrap().eval_cases, vec![]);
        assert!(s.set("nope").unwrap().is_none());
        for hostile in ["..", "../x", "a\\b", "a\0b", "a\nb", ""] {
            assert!(
                matches!(s.set(hostile), Err(StoreError::Id(_))),
                "{hostile:?}"
            );
            assert!(matches!(s.result(hostile), Err(StoreError::Id(_))));
        }
    }
}
