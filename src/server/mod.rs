//! `adk-flow serve`: the routes of ADK's `api_server` (1.x), so that ADK's clients and its
//! dev web UI work against adk-flow unchanged.
//!
//! # Routes (a contract)
//!
//! Bodies are JSON: camelCase out, camelCase or snake_case in; unknown keys are ignored.
//! Errors are `{"detail": "..."}` (422: FastAPI's list of problems) with ADK's status codes.
//!
//! | route | answer |
//! |---|---|
//! | `GET /health` | `{"status": "ok"}` |
//! | `GET /version` | `{"version", "language", "language_version"}` |
//! | `GET /list-apps[?detailed=true]` | app names, sorted (a bare array); detailed: `{"apps": [...]}` |
//! | `GET /status` | apps, their serving version, diagnostics of edits that do not load; runs |
//! | `POST /apps/{app}/users/{user}/sessions` | a session; body `{sessionId?, state?, events?}` or none; 409 on a duplicate id |
//! | `GET /apps/{app}/users/{user}/sessions` | the user's sessions (bare array, `events: []`) |
//! | `GET /apps/{app}/users/{user}/sessions/{id}` | the session with every stored event; 404 |
//! | `PATCH /apps/{app}/users/{user}/sessions/{id}` | `{"stateDelta": {...}}` committed as a `p-` event; the session |
//! | `DELETE /apps/{app}/users/{user}/sessions/{id}` | `null` (also for an unknown id) |
//! | `POST /run` | every event of the turn, a JSON array |
//! | `POST /run_sse` | `text/event-stream`, one `data: <event>` frame per event (see the SSE framing below) |
//! | `GET /run_live` (websocket) | a live run: LiveRequest frames in, event frames out (see `live.rs`) |
//! | `GET …/sessions/{id}/artifacts` | artifact names |
//! | `GET …/artifacts/{name}[?version=N]` | a genai Part `{"inlineData": {data, mimeType}}`; 404 |
//! | `GET …/artifacts/{name}/versions` | version numbers |
//! | `GET …/artifacts/{name}/versions/{v}` | one version as a Part; 404 |
//! | `DELETE …/artifacts/{name}` | `null` |
//! | `GET /debug/trace/session/{id}` | the session's spans (see [`trace`]) |
//! | `GET /debug/trace/{event_id}` | one event's span attributes; 404 |
//! | `GET /dev/build_graph/{app}` | ADK's snake_case agent dict |
//! | `GET /dev/build_graph_image/{app}` | `{"root_agent": {"dotSrc": DOT}}` |
//! | `GET /builder/app/{app}` | the root file's YAML (`application/x-yaml`) |
//! | `POST /apps/{app}/eval-sets` | creates an empty eval set; the set (snake_case) |
//! | `POST /apps/{app}/eval_sets/{id}` (legacy) | creates it; `null` |
//! | `GET /apps/{app}/eval-sets`, legacy `/eval_sets` | `{"evalSetIds"}`; legacy: a bare array |
//! | `GET`, `DELETE /apps/{app}/eval_sets/{id}` | the set; deletes it (the UI's; not in 1.39.1) |
//! | `POST …/eval-sets/{id}/add-session`, legacy `…/eval_sets/{id}/add_session` | a stored session becomes a case; `null` |
//! | `GET …/eval_sets/{id}/evals` | the case ids, sorted |
//! | `GET`, `PUT`, `DELETE …/eval-sets/{id}/eval-cases/{case}`, legacy `…/eval_sets/{id}/evals/{case}` | a case; replace; delete |
//! | `POST …/eval-sets/{id}/run`, legacy `…/eval_sets/{id}/run_eval` | the cases run and scored: `{"runEvalResults"}`; legacy: a bare array |
//! | `GET /apps/{app}/eval-results[/{id}]`, legacy `/eval_results[/{id}]` | saved results: `{"evalResultIds"}` (legacy: an array); one `EvalSetResult` |
//! | `GET /apps/{app}/metrics-info` | the metrics the engine computes |
//! | `GET /`, `/dev-ui`, `/dev-ui/…` | with `--ui`: the static UI  |
//!
//! The eval routes are answered by [`crate::eval`] from ADK's files beside each app
//! (`{app folder}/{id}.evalset.json`, `.adk/eval_history/`); see [`evals`].
//!
//! # SSE framing
//!
//! Each event is one frame, `data: <event JSON>\n\n`, written in one piece and flushed;
//! nothing else travels (no `event:`, `id:`, comments or heartbeats), and the stream ends
//! with the run. The user's own event is committed, not sent. An event carrying content
//! and an `artifactDelta` goes out twice with one id (content with an empty delta, then
//! the delta without content), as ADK does for its UI. A run that ends early sends a last
//! frame `data: {"error": "<message>"}`.
//!
//! # Safety and limits
//!
//! Host and Origin checks, `--token`, CORS only for
//! `--allow-origin`, a body size limit; runs are bounded in time and model calls (see
//! [`runs`]).

pub mod apps;
mod dev;
mod error;
pub mod evals;
mod guard;
mod live;
mod page;
pub mod runs;
mod sessions;
pub mod trace;
mod turns;
mod ui;
mod wire;

pub use error::ApiError;
pub use guard::OriginError;

use crate::artifact::ArtifactService;
use crate::session::SessionService;
use apps::Registry;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use evals::EvalOptions;
use guard::Guard;
use runs::{RunLimits, Runs};
use std::future::Future;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use trace::{NoTraces, TraceSource};

/// How the server behaves (the command line's options).
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The address it is bound to (for the Host guard).
    pub bind: IpAddr,
    /// A static web UI folder for `/dev-ui/`.
    pub ui: Option<PathBuf>,
    /// The bearer token every request needs.
    pub token: Option<String>,
    /// Origins allowed cross-origin (`*`, literal origins, `regex:PATTERN`).
    pub allow_origins: Vec<String>,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Per-run limits.
    pub limits: RunLimits,
    /// How long running turns may go on after a shutdown signal.
    pub grace: Duration,
    /// How often the apps' files are checked for edits in the background.
    pub reload_interval: Duration,
}

/// What every handler shares.
pub(crate) struct Shared {
    apps: Registry,
    sessions: Arc<dyn SessionService>,
    artifacts: Arc<dyn ArtifactService>,
    runs: Runs,
    traces: Arc<dyn TraceSource>,
    evals: EvalOptions,
    /// One change of an eval set file at a time (each is read, changed, written).
    eval_writes: std::sync::Mutex<()>,
    ui: Option<PathBuf>,
    guard: Guard,
    live: live::LiveSessions,
    options: ServeOptions,
}

type AppState = Arc<Shared>;

/// The server: apps, services and options, ready to route.
pub struct Server {
    shared: Arc<Shared>,
}

impl Server {
    /// A server for the registry's apps on the given services.
    ///
    /// # Errors
    /// An `--allow-origin` pattern that does not compile.
    pub fn new(
        apps: Registry,
        sessions: Arc<dyn SessionService>,
        artifacts: Arc<dyn ArtifactService>,
        options: ServeOptions,
    ) -> Result<Self, OriginError> {
        Self::with_sources(
            apps,
            sessions,
            artifacts,
            options,
            Arc::new(NoTraces),
            EvalOptions::default(),
        )
    }

    /// The same with a span source for the debug routes and the models of eval runs.
    ///
    /// # Errors
    /// An `--allow-origin` pattern that does not compile.
    pub fn with_sources(
        apps: Registry,
        sessions: Arc<dyn SessionService>,
        artifacts: Arc<dyn ArtifactService>,
        options: ServeOptions,
        traces: Arc<dyn TraceSource>,
        evals: EvalOptions,
    ) -> Result<Self, OriginError> {
        let guard = Guard::new(options.bind, &options.allow_origins, options.token.clone())?;
        Ok(Server {
            shared: Arc::new(Shared {
                apps,
                sessions,
                artifacts,
                runs: Runs::new(options.limits),
                traces,
                evals,
                eval_writes: std::sync::Mutex::new(()),
                ui: options.ui.clone(),
                guard,
                live: live::LiveSessions::new(live::DEFAULT_MAX_LIVE_SESSIONS),
                options,
            }),
        })
    }

    /// The same server holding at most `max` live sessions (`/run_live`) at once.
    pub fn with_max_live_sessions(mut self, max: usize) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.live = live::LiveSessions::new(max);
        }
        self
    }

    /// The same server running evals with these models (`serve --script`'s judge replies).
    pub fn with_evals(mut self, evals: EvalOptions) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.evals = evals;
        }
        self
    }

    /// The router with every route and layer.
    pub fn router(&self) -> Router {
        let s = Arc::clone(&self.shared);
        let session = "/apps/{app}/users/{user}/sessions/{session}";
        let artifact = "/apps/{app}/users/{user}/sessions/{session}/artifacts/{name}";
        let mut router = Router::new()
            .route("/health", get(dev::health))
            .route("/version", get(dev::version))
            .route("/list-apps", get(dev::list_apps))
            .route("/status", get(dev::status))
            .route("/run", post(turns::run))
            .route("/run_sse", post(turns::run_sse))
            .route("/run_live", get(live::run_live))
            .route(
                "/apps/{app}/users/{user}/sessions",
                get(sessions::list).post(sessions::create),
            )
            .route(
                session,
                get(sessions::get)
                    .post(sessions::create_with_id)
                    .patch(sessions::update)
                    .delete(sessions::delete),
            )
            .route(
                &format!("{session}/artifacts"),
                get(sessions::artifact_names),
            )
            .route(
                artifact,
                get(sessions::artifact).delete(sessions::delete_artifact),
            )
            .route(
                &format!("{artifact}/versions"),
                get(sessions::artifact_versions),
            )
            .route(
                &format!("{artifact}/versions/{{version}}"),
                get(sessions::artifact_version),
            )
            .merge(eval_routes())
            .route("/debug/trace/session/{session}", get(dev::session_trace))
            .route("/debug/trace/{event}", get(dev::event_trace))
            .route("/dev/build_graph/{app}", get(dev::build_graph))
            .route("/dev/build_graph_image/{app}", get(dev::build_graph_image))
            .route("/builder/app/{app}", get(dev::builder_app))
            .route("/adk-flow/{file}", get(page::file))
            .route("/adk-flow/apps/{app}", get(page::app))
            .route("/adk-flow/apps/{app}/graph.svg", get(page::graph))
            .route(
                "/adk-flow/apps/{app}/agents/{agent}/instruction",
                get(page::instruction),
            )
            .route("/adk-flow/apps/{app}/tests", post(page::run_tests));
        if s.ui.is_none() {
            router = router.route("/", get(page::index));
        }
        if s.ui.is_some() {
            router = router
                .route("/", get(ui::redirect))
                .route("/dev-ui", get(ui::redirect))
                .route("/dev-ui/", get(ui::file))
                .route("/dev-ui/config", get(ui::ui_config))
                .route(
                    "/dev-ui/assets/config/runtime-config.json",
                    get(ui::runtime_config),
                )
                .route("/dev-ui/{*path}", get(ui::file));
        }
        let mut router = router
            .fallback(|| async { ApiError::NotFound("Not Found".into()) })
            .method_not_allowed_fallback(|| async {
                (
                    axum::http::StatusCode::METHOD_NOT_ALLOWED,
                    axum::Json(serde_json::json!({"detail": "Method Not Allowed"})),
                )
            })
            .layer(DefaultBodyLimit::max(s.options.max_body_bytes))
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(&s),
                guard::check,
            ))
            .with_state(Arc::clone(&s));
        if let Some(cors) = s.guard.cors() {
            router = router.layer(cors);
        }
        router
    }

    /// Serves until `shutdown` completes; then stops accepting, gives running turns the
    /// grace period, cancels what is left, waits for the responses to end and releases
    /// the apps' resources.
    ///
    /// # Errors
    /// The listener fails.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let shared = Arc::clone(&self.shared);
        let stop = CancellationToken::new();
        let watcher = tokio::spawn(watch(Arc::clone(&shared), stop.clone()));
        let stopped = stop.clone();
        // Without TCP_NODELAY, the frames of a stream written one by one wait for the
        // client's delayed ACK (Nagle): 40 ms per /run_sse turn on Linux loopback.
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("cannot set TCP_NODELAY: {e}");
            }
        });
        let server = axum::serve(listener, self.router())
            .with_graceful_shutdown(async move { stopped.cancelled().await });
        let mut server = tokio::spawn(async move { server.await });
        tokio::select! {
            result = &mut server => {
                stop.cancel();
                let _ = watcher.await;
                return result.unwrap_or_else(|e| Err(std::io::Error::other(e)));
            }
            () = shutdown => {}
        }
        shared.runs.begin_shutdown();
        tracing::info!(
            runs = shared.runs.running(),
            "shutting down: no new connections; running turns have {} s",
            shared.options.grace.as_secs()
        );
        stop.cancel();
        shared.runs.shutdown(shared.options.grace).await;
        // The runs are over, so every stream has ended; connections close on their own.
        let result = match tokio::time::timeout(Duration::from_secs(5), &mut server).await {
            Ok(joined) => joined.unwrap_or_else(|e| Err(std::io::Error::other(e))),
            Err(_) => {
                tracing::warn!("connections still open after the runs ended; closing them");
                server.abort();
                Ok(())
            }
        };
        let _ = watcher.await;
        shared.apps.shutdown().await;
        result
    }
}

/// The eval routes, current and legacy spellings (see [`evals`]).
fn eval_routes() -> Router<AppState> {
    let set = "/apps/{app}/eval_sets/{set}";
    let new_set = "/apps/{app}/eval-sets/{set}";
    let case = get(evals::get_case)
        .put(evals::update_case)
        .delete(evals::delete_case);
    Router::new()
        .route(
            "/apps/{app}/eval-sets",
            get(evals::list_sets).post(evals::create_set),
        )
        .route("/apps/{app}/eval_sets", get(evals::list_sets_legacy))
        .route(
            set,
            get(evals::get_set)
                .post(evals::create_set_legacy)
                .delete(evals::delete_set),
        )
        .route(&format!("{new_set}/add-session"), post(evals::add_session))
        .route(&format!("{set}/add_session"), post(evals::add_session))
        .route(&format!("{set}/evals"), get(evals::list_cases))
        .route(&format!("{new_set}/eval-cases/{{case}}"), case.clone())
        .route(&format!("{set}/evals/{{case}}"), case)
        .route(&format!("{new_set}/run"), post(evals::run_eval))
        .route(&format!("{set}/run_eval"), post(evals::run_eval_legacy))
        .route("/apps/{app}/eval-results", get(evals::list_results))
        .route("/apps/{app}/eval_results", get(evals::list_results_legacy))
        .route("/apps/{app}/eval-results/{result}", get(evals::get_result))
        .route("/apps/{app}/eval_results/{result}", get(evals::get_result))
        .route("/apps/{app}/metrics-info", get(evals::metrics_info))
}

/// Checks the apps' files for edits (and the folders for new apps) until `stop`.
async fn watch(shared: Arc<Shared>, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(shared.options.reload_interval) => {}
            () = stop.cancelled() => return,
        }
        shared.apps.rescan();
        shared.apps.refresh_all().await;
    }
}
