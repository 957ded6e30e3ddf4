//! Apps: finding them on the command line's paths, loading each into a runnable version,
//! and hot reload.
//!
//! Each app lives in an [`AppSlot`] that holds its current [`AppVersion`] and the files
//! that version was read from, with their size, time and content hash. Before a run (and
//! once a second in the background) the slot checks those files; when one changed it loads
//! the app again. A load that fails keeps the previous version serving and records the
//! diagnostics for `GET /status`. A run holds an `Arc` of the version it started on, so
//! it finishes on that version whatever happens to the files meanwhile.

mod beside;
mod discover;
mod watch;

pub use discover::{AppSource, DiscoverError, discover};

pub use beside::BesideScripts;
use watch::{Watched, stamp};

use super::error::ApiError;
use crate::app::{App, AppError, AppOptions, Env, ModelOptions, RunnerOptions};
use crate::artifact::ArtifactService;
use crate::config::yaml::Pos;
use crate::config::{self, Diagnostic, LoadOptions, Severity, Workflow};
use crate::memory::MemoryService;
use crate::model::scripted::ScriptedModel;
use crate::session::SessionService;
use crate::telemetry::Tracer;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// How the server builds its apps: the same for every app, and for every reload.
pub struct AppSettings {
    /// Environment variables (`${VAR}`, keys, base URLs).
    pub env: Arc<Env>,
    /// Command tools may run programs.
    pub allow_commands: bool,
    /// Which files the workflows' references may name (`--allow-outside-files`).
    pub files: config::FileAccess,
    /// How agents get their models; with `--script`, a per-conversation scripted model.
    pub models: ModelOptions,
    /// The `--script` model, so that a deleted session's place in the script is forgotten.
    pub script: Option<Arc<ScriptedModel>>,
    /// `--script-beside`: each app's own script, `X.script.yaml` beside `X.yaml`.
    pub beside: Option<BesideScripts>,
    /// Where sessions are kept.
    pub sessions: Arc<dyn SessionService>,
    /// Where artifacts are kept.
    pub artifacts: Arc<dyn ArtifactService>,
    /// Where memories are kept (`load_memory`, `preload_memory`, `add_session`).
    pub memory: Arc<dyn MemoryService>,
    /// Records every invocation's spans (the server's trace store, OTLP export).
    pub tracer: Tracer,
}

/// Why an app could not be loaded, and which files to watch for a fix.
struct LoadFailure {
    diagnostics: Vec<Diagnostic>,
    files: Vec<PathBuf>,
}

impl AppSettings {
    /// Loads, checks and starts an app; on failure, located diagnostics (build errors,
    /// which have no position, point at the root file).
    async fn load(&self, source: &AppSource) -> Result<(App, Vec<PathBuf>), LoadFailure> {
        let loaded = {
            let env = &*self.env;
            let options = LoadOptions {
                env: &|var| env(var),
                unset_env_is_error: true,
                files: self.files,
            };
            config::load(&source.root, &options)
        };
        for warning in loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
        {
            tracing::warn!(app = %source.name, "{warning}");
        }
        let mut files = loaded.files;
        let mut models = self.models.clone();
        if let Some(beside) = &self.beside {
            let path = beside::script_path(&source.root);
            match beside.model(&source.name, &path) {
                Ok(Some(model)) => models.fixed = Some(model as Arc<dyn crate::model::Model>),
                Ok(None) => {}
                Err(diagnostics) => {
                    files.push(path);
                    return Err(LoadFailure { diagnostics, files });
                }
            }
            files.push(path);
        }
        let Some(workflow) = loaded.workflow else {
            return Err(LoadFailure {
                diagnostics: loaded
                    .diagnostics
                    .into_iter()
                    .filter(|d| d.severity == Severity::Error)
                    .collect(),
                files,
            });
        };
        let options = AppOptions {
            env: Arc::clone(&self.env),
            allow_commands: self.allow_commands,
            files: self.files,
            name: Some(source.name.clone()),
            runner: RunnerOptions {
                models,
                tool_stubs: HashMap::new(),
                sessions: Arc::clone(&self.sessions),
                artifacts: Arc::clone(&self.artifacts),
                memory: Arc::clone(&self.memory),
                tracer: self.tracer.clone(),
            },
        };
        match App::start(workflow, options).await {
            Ok(app) => Ok((app, files)),
            Err(AppError::Invalid(diagnostics)) => Err(LoadFailure { diagnostics, files }),
            Err(e) => Err(LoadFailure {
                diagnostics: vec![Diagnostic::error(
                    &source.root,
                    Pos { line: 1, col: 1 },
                    crate::errors::chain(&e),
                )],
                files,
            }),
        }
    }

    /// A session was deleted: forget its place in the script.
    pub fn session_deleted(&self, app: &str, user: &str, session: &str) {
        let conversation = format!("{app}/{user}/{session}");
        if let Some(script) = &self.script {
            script.forget(&conversation);
        }
        if let Some(beside) = &self.beside {
            beside.forget(app, &conversation);
        }
    }
}

/// One loaded version of an app. Runs hold it for as long as they last.
pub struct AppVersion {
    /// 1 for the first successful load, then one more per reload.
    pub generation: u64,
    /// The started app.
    pub app: Arc<App>,
    /// When it was loaded, seconds since the epoch.
    pub loaded_at: f64,
}

impl AppVersion {
    /// The workflow it was built from.
    pub fn workflow(&self) -> &Workflow {
        self.app.workflow()
    }
}

impl Drop for AppVersion {
    fn drop(&mut self) {
        // The last run on a replaced version just ended: close its MCP servers.
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let app = Arc::clone(&self.app);
            rt.spawn(async move { app.shutdown().await });
        }
    }
}

/// A problem of the last load, for `GET /status`.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// `error` or `warning`.
    pub severity: &'static str,
    /// What is wrong.
    pub message: String,
}

impl From<&Diagnostic> for Problem {
    fn from(d: &Diagnostic) -> Self {
        Problem {
            file: d.file.display().to_string(),
            line: d.pos.line,
            column: d.pos.col,
            severity: d.severity_str(),
            message: d.message.clone(),
        }
    }
}

/// One app as `GET /status` reports it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    /// The app name.
    pub name: String,
    /// Its root file.
    pub file: String,
    /// `ok`: the files on disk are what runs; `invalid`: the last edit does not load,
    /// and the previous version (if any) still serves.
    pub status: &'static str,
    /// The generation serving runs, `null` when none ever loaded.
    pub version: Option<u64>,
    /// When that version was loaded, seconds since the epoch.
    pub loaded_at: Option<f64>,
    /// The diagnostics of the last failed load, empty when `ok`.
    pub problems: Vec<Problem>,
}

#[derive(Default)]
struct SlotState {
    version: Option<Arc<AppVersion>>,
    generation: u64,
    /// The files the last load attempt read.
    watched: Arc<Vec<Watched>>,
    /// Errors of the last attempt when it failed.
    problems: Vec<Diagnostic>,
}

/// One app and its versions.
pub struct AppSlot {
    source: AppSource,
    state: Mutex<SlotState>,
    /// One load at a time per app.
    loading: tokio::sync::Mutex<()>,
}

impl AppSlot {
    /// The app's root file.
    pub fn root(&self) -> &std::path::Path {
        &self.source.root
    }

    fn new(source: AppSource) -> Self {
        AppSlot {
            source,
            state: Mutex::new(SlotState::default()),
            loading: tokio::sync::Mutex::new(()),
        }
    }

    fn state(&self) -> MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The app's source.
    pub fn source(&self) -> &AppSource {
        &self.source
    }

    /// The version serving runs, if any (without looking at the files).
    pub fn loaded(&self) -> Option<Arc<AppVersion>> {
        self.state().version.clone()
    }

    fn stale(&self) -> bool {
        let watched = {
            let state = self.state();
            if state.generation == 0 && state.problems.is_empty() {
                return true;
            }
            Arc::clone(&state.watched)
        };
        watched.iter().any(Watched::changed)
    }

    /// Loads the app again if a file it was read from changed (or it never loaded).
    pub async fn refresh(&self, settings: &AppSettings) {
        if !self.stale() {
            return;
        }
        let _one = self.loading.lock().await;
        if !self.stale() {
            return;
        }
        // Stamped before reading, so that an edit made during the load is seen next time.
        let mut before: Vec<Watched> = self
            .state()
            .watched
            .iter()
            .map(|w| stamp(&w.path))
            .collect();
        if !before.iter().any(|w| w.path == self.source.root) {
            before.push(stamp(&self.source.root));
        }
        let result = settings.load(&self.source).await;
        let files = match &result {
            Ok((_, files)) => files,
            Err(failure) => &failure.files,
        };
        let mut watched = before;
        for f in files {
            if !watched.iter().any(|w| &w.path == f) {
                watched.push(stamp(f));
            }
        }
        let mut state = self.state();
        state.watched = Arc::new(watched);
        match result {
            Ok((app, _)) => {
                state.generation += 1;
                state.problems.clear();
                let version = AppVersion {
                    generation: state.generation,
                    app: Arc::new(app),
                    loaded_at: crate::event::now(),
                };
                if state.generation > 1 {
                    tracing::info!(app = %self.source.name, version = state.generation, "reloaded");
                }
                state.version = Some(Arc::new(version));
            }
            Err(mut failure) => {
                if failure.diagnostics.is_empty() {
                    failure.diagnostics.push(Diagnostic::error(
                        &self.source.root,
                        Pos { line: 1, col: 1 },
                        "the app does not load",
                    ));
                }
                let serving = match state.generation {
                    0 => "nothing to serve".to_owned(),
                    n => format!("version {n} keeps serving"),
                };
                tracing::error!(
                    "app `{}` does not load; {serving}:\n{}",
                    self.source.name,
                    failure
                        .diagnostics
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("\n")
                );
                state.problems = failure.diagnostics;
            }
        }
    }

    /// The version to run: refreshed first; a 503 when none loads.
    pub async fn current(&self, settings: &AppSettings) -> Result<Arc<AppVersion>, ApiError> {
        self.refresh(settings).await;
        let state = self.state();
        state.version.clone().ok_or_else(|| {
            let first = state
                .problems
                .first()
                .map_or_else(String::new, |d| format!(": {d}"));
            ApiError::Unavailable(format!(
                "app `{}` does not load{first} (see GET /status)",
                self.source.name
            ))
        })
    }

    /// The app's status.
    pub fn status(&self) -> AppStatus {
        let state = self.state();
        AppStatus {
            name: self.source.name.clone(),
            file: self.source.root.display().to_string(),
            status: if state.problems.is_empty() && state.version.is_some() {
                "ok"
            } else {
                "invalid"
            },
            version: state.version.as_ref().map(|v| v.generation),
            loaded_at: state.version.as_ref().map(|v| v.loaded_at),
            problems: state.problems.iter().map(Problem::from).collect(),
        }
    }
}

/// Every app the server knows, by name.
pub struct Registry {
    paths: Vec<PathBuf>,
    settings: AppSettings,
    apps: RwLock<BTreeMap<String, Arc<AppSlot>>>,
}

impl Registry {
    /// A registry of `sources` (found on `paths`), loaded on first use.
    pub fn new(paths: Vec<PathBuf>, sources: Vec<AppSource>, settings: AppSettings) -> Self {
        let apps = sources
            .into_iter()
            .map(|s| (s.name.clone(), Arc::new(AppSlot::new(s))))
            .collect();
        Registry {
            paths,
            settings,
            apps: RwLock::new(apps),
        }
    }

    /// How apps are built.
    pub fn settings(&self) -> &AppSettings {
        &self.settings
    }

    /// What answers for the LLM agents of the app whose root file is `root` when the
    /// server overrides their models, first to last: `--script FILE`, the script beside it
    /// (`--script-beside`), `--model P:M`; `None` when each agent calls the model its YAML
    /// names.
    pub fn answered_by(&self, root: &std::path::Path) -> Option<String> {
        if self.settings.script.is_some() {
            return Some("--script".to_owned());
        }
        if self.settings.beside.is_some() {
            let script = beside::script_path(root);
            if script.is_file() {
                let name = script.file_name()?.to_string_lossy();
                return Some(format!("--script-beside ({name})"));
            }
        }
        let spec = self.settings.models.spec.as_ref()?;
        Some(format!("--model {spec}"))
    }

    fn slots(&self) -> Vec<Arc<AppSlot>> {
        let apps = self.apps.read().unwrap_or_else(|e| e.into_inner());
        apps.values().cloned().collect()
    }

    /// App names, sorted.
    pub fn names(&self) -> Vec<String> {
        let apps = self.apps.read().unwrap_or_else(|e| e.into_inner());
        apps.keys().cloned().collect()
    }

    /// The app, or a 404.
    pub fn slot(&self, name: &str) -> Result<Arc<AppSlot>, ApiError> {
        let apps = self.apps.read().unwrap_or_else(|e| e.into_inner());
        apps.get(name)
            .cloned()
            .ok_or_else(|| ApiError::NotFound(format!("App not found: {name}")))
    }

    /// The version of `name` to run now (reloaded when its files changed).
    pub async fn version(&self, name: &str) -> Result<Arc<AppVersion>, ApiError> {
        self.slot(name)?.current(&self.settings).await
    }

    /// Looks at the command line's folders again: new workflows become apps; apps whose
    /// file is gone are dropped (runs on them finish).
    pub fn rescan(&self) {
        let Ok(found) = discover(&self.paths) else {
            return;
        };
        let mut apps = self.apps.write().unwrap_or_else(|e| e.into_inner());
        apps.retain(|name, slot| {
            found.iter().any(|s| &s.name == name) || slot.source.root.exists()
        });
        for source in found {
            if !apps.contains_key(&source.name) {
                tracing::info!(app = %source.name, file = %source.root.display(), "new app");
                apps.insert(source.name.clone(), Arc::new(AppSlot::new(source)));
            }
        }
    }

    /// Loads (or reloads) every app whose files changed; returns how many have a version.
    pub async fn refresh_all(&self) -> usize {
        let mut loaded = 0;
        for slot in self.slots() {
            slot.refresh(&self.settings).await;
            loaded += usize::from(slot.loaded().is_some());
        }
        loaded
    }

    /// Every app's status.
    pub fn status(&self) -> Vec<AppStatus> {
        self.slots().iter().map(|s| s.status()).collect()
    }

    /// Closes every app's MCP servers; for shutdown, after the runs.
    pub async fn shutdown(&self) {
        for slot in self.slots() {
            let version = slot.state().version.take();
            if let Some(version) = version {
                version.app.shutdown().await;
            }
        }
    }
}
