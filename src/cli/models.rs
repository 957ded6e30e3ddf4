//! Choosing each agent's model at run time: `--script`, then `--model PROVIDER:MODEL`,
//! then the workflow's `define.models`, then `PROVIDER:MODEL` in the agent's `model`, then
//! a plain Gemini model name (ADK's default provider). Reads the environment (base URLs
//! and keys), so it lives at the CLI edge.

use crate::config::agent_config::{ModelConfig, ProviderKind};
use crate::config::{self, Workflow};
use crate::model::Model;
use crate::model::provider::{self, Provider, ProviderConfig, RetryPolicy, Secret};
use crate::model::scripted::{Script, ScriptedModel};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Decorates every model made (request dumps, recording).
type Wrap<'a> = Box<dyn Fn(Arc<dyn Model>) -> Arc<dyn Model> + 'a>;

/// Resolves and caches the models of one run.
pub struct Models<'a> {
    workflow: &'a Workflow,
    script: Option<Arc<dyn Model>>,
    override_spec: Option<String>,
    wrap: Wrap<'a>,
    cache: Mutex<HashMap<String, Arc<dyn Model>>>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Loads a script file into a model, with located errors.
pub fn scripted(path: &Path) -> Result<Arc<dyn Model>, String> {
    let script: Script = config::load_checked(path, |s: &Script| {
        s.problems()
            .iter()
            .map(|p| (p.pointer(), p.to_string()))
            .collect()
    })
    .map_err(|d| {
        d.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    let model = ScriptedModel::new(script).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Arc::new(model))
}

fn declared(name: &str, m: &ModelConfig, base_dir: &Path) -> Result<Arc<dyn Model>, String> {
    let provider = match m.provider {
        ProviderKind::Scripted => {
            let script = m
                .script
                .as_deref()
                .ok_or_else(|| format!("model `{name}`: a scripted model needs `script`"))?;
            return scripted(&base_dir.join(script));
        }
        ProviderKind::Gemini => Provider::Gemini,
        ProviderKind::Openai => Provider::OpenAi,
    };
    let model_name = m
        .model
        .as_deref()
        .ok_or_else(|| format!("model `{name}` needs `model`"))?;
    let spec = format!("{}:{model_name}", provider.name());
    let mut cfg: ProviderConfig =
        provider::resolve(&spec, m.base_url.clone(), &env).map_err(|e| e.to_string())?;
    if let Some(var) = &m.api_key_env {
        cfg.api_key = env(var)
            .filter(|v| !v.trim().is_empty())
            .map(|k| Secret::new(k.trim()));
        if cfg.api_key.is_none() && provider == Provider::Gemini {
            return Err(format!("model `{name}` needs an API key: set {var}"));
        }
    }
    if let Some(t) = m.timeout_secs {
        cfg.timeout = Duration::from_secs(t);
    }
    if let Some(r) = &m.retries {
        cfg.retry = RetryPolicy {
            max_attempts: r.max_attempts.max(1),
            initial_backoff: Duration::from_millis(r.initial_backoff_ms),
            max_backoff: Duration::from_millis(r.max_backoff_ms),
            ..RetryPolicy::default()
        };
    }
    provider::build(&cfg).map_err(|e| e.to_string())
}

impl<'a> Models<'a> {
    /// A resolver for `workflow`; `wrap` decorates every model made (request dumps,
    /// recording).
    pub fn new(
        workflow: &'a Workflow,
        script: Option<Arc<dyn Model>>,
        override_spec: Option<String>,
        wrap: impl Fn(Arc<dyn Model>) -> Arc<dyn Model> + 'a,
    ) -> Self {
        Models {
            workflow,
            script,
            override_spec,
            wrap: Box::new(wrap),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The model an agent whose `model:` is `name` calls.
    ///
    /// # Errors
    /// An unknown provider, a missing key, an unreadable script: a message for the user.
    pub fn resolve(&self, name: &str) -> Result<Arc<dyn Model>, String> {
        let key = match (&self.script, &self.override_spec) {
            (Some(_), _) => "--script".to_owned(),
            (None, Some(spec)) => format!("--model {spec}"),
            (None, None) => name.to_owned(),
        };
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = cache.get(&key) {
            return Ok(Arc::clone(m));
        }
        let base_dir = self.workflow.path.parent().unwrap_or(Path::new("."));
        let model = if let Some(s) = &self.script {
            Arc::clone(s)
        } else if let Some(spec) = &self.override_spec {
            let cfg = provider::resolve(spec, None, &env).map_err(|e| e.to_string())?;
            provider::build(&cfg).map_err(|e| e.to_string())?
        } else if let Some(m) = self.workflow.models.get(name) {
            declared(name, m, base_dir)?
        } else if let Some(script) = name.strip_prefix("scripted:") {
            scripted(&base_dir.join(script))?
        } else {
            let cfg = provider::resolve(name, None, &env).map_err(|e| e.to_string())?;
            provider::build(&cfg).map_err(|e| e.to_string())?
        };
        let model = (self.wrap)(model);
        cache.insert(key, Arc::clone(&model));
        Ok(model)
    }
}
