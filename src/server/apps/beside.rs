//! `serve --script-beside`: each app answers from the `X.script.yaml` beside its root file
//! `X.yaml` (the file `validate` checks against it), consumed from its start in each
//! session as `--script` is, so that a folder of examples runs offline, each app with its
//! own replies. An app without such a file keeps its models.

use crate::config::Diagnostic;
use crate::model::scripted::ScriptedModel;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The scripted model of each app, kept while its script file does not change: a reload
/// of the workflow alone keeps each session's place in the script.
#[derive(Default)]
pub struct BesideScripts {
    models: Mutex<HashMap<String, (String, Arc<ScriptedModel>)>>,
}

/// The script file of the app whose root file is `root`: `X.script.yaml` beside `X.yaml`
/// (`.yml` when only that exists); for a folder app (`root_agent.yaml`), the folder's
/// `script.yaml` too, as ADK-style test folders name it, when there is no
/// `root_agent.script.yaml`. The path is given even when no such file exists, so that one
/// written later is watched for.
pub fn script_path(root: &Path) -> PathBuf {
    let stem = root
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut candidates = vec![
        root.with_file_name(format!("{stem}.script.yaml")),
        root.with_file_name(format!("{stem}.script.yml")),
    ];
    if stem == "root_agent" {
        candidates.push(root.with_file_name("script.yaml"));
        candidates.push(root.with_file_name("script.yml"));
    }
    candidates
        .iter()
        .find(|p| p.is_file())
        .unwrap_or(&candidates[0])
        .clone()
}

impl BesideScripts {
    /// App `app`'s scripted model, read from `path`: the one it had when the file has not
    /// changed, else a new one (every session starts the new script from its start).
    /// `Ok(None)` when there is no such file.
    ///
    /// # Errors
    /// The script's diagnostics, located in its file.
    pub fn model(
        &self,
        app: &str,
        path: &Path,
    ) -> Result<Option<Arc<ScriptedModel>>, Vec<Diagnostic>> {
        let Ok(text) = std::fs::read_to_string(path) else {
            self.lock().remove(app);
            return Ok(None);
        };
        if let Some((seen, model)) = self.lock().get(app)
            && *seen == text
        {
            return Ok(Some(Arc::clone(model)));
        }
        let model = match crate::app::load_script(path) {
            Ok(model) => Arc::new(model.per_conversation()),
            Err(crate::app::ModelSetupError::Script { diagnostics }) => return Err(diagnostics),
            Err(e) => {
                return Err(vec![Diagnostic::error(
                    path,
                    crate::config::yaml::Pos { line: 1, col: 1 },
                    e.to_string(),
                )]);
            }
        };
        self.lock()
            .insert(app.to_owned(), (text, Arc::clone(&model)));
        Ok(Some(model))
    }

    /// A session of `app` was deleted: forget its place in the app's script.
    pub fn forget(&self, app: &str, conversation: &str) {
        if let Some((_, model)) = self.lock().get(app) {
            model.forget(conversation);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, Arc<ScriptedModel>)>> {
        self.models.lock().unwrap_or_else(|e| e.into_inner())
    }
}
