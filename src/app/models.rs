//! Choosing each agent's model: a fixed model (`--script`, workflow tests), then a
//! `PROVIDER:MODEL` for every agent (`--model`), then the workflow's `define.models`, then
//! `scripted:FILE` or `PROVIDER:MODEL` in the agent's `model`, then a plain Gemini model
//! name (ADK's default provider). Keys and base URLs come from the environment the caller
//! passes in; nothing here reads `std::env`.

use super::Env;
use crate::config::agent_config::{ModelConfig, ProviderKind};
use crate::config::{self, Diagnostic, Workflow};
use crate::model::Model;
use crate::model::provider::{self, Provider, ProviderConfig, ProviderError, RetryPolicy, Secret};
use crate::model::scripted::{Script, ScriptError, ScriptedModel};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Decorates every model an app makes (request dumps, recording).
pub type Wrap = Arc<dyn Fn(Arc<dyn Model>) -> Arc<dyn Model> + Send + Sync>;

/// How an app's agents get their models.
#[derive(Clone, Default)]
pub struct ModelOptions {
    /// Every agent answers from this model (`--script`, a workflow test's replies).
    pub fixed: Option<Arc<dyn Model>>,
    /// Every agent calls this `PROVIDER:MODEL` (`--model`).
    pub spec: Option<String>,
    /// Wraps every model made.
    pub wrap: Option<Wrap>,
}

impl ModelOptions {
    /// Every agent answers from `model`.
    pub fn fixed(model: Arc<dyn Model>) -> Self {
        ModelOptions {
            fixed: Some(model),
            ..ModelOptions::default()
        }
    }
}

/// A model that cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum ModelSetupError {
    /// A script file that cannot be read or has errors; each diagnostic is located.
    #[error("{}", .diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Script {
        /// Every problem of the file.
        diagnostics: Vec<Diagnostic>,
    },
    /// A declared model without a field its provider needs.
    #[error("model `{model}` needs `{field}`")]
    MissingField {
        /// The name under `define.models`.
        model: String,
        /// The missing field.
        field: &'static str,
    },
    /// A declared model whose `api_key_env` variable is unset.
    #[error("model `{model}` needs an API key: set {var}")]
    MissingKey {
        /// The name under `define.models`.
        model: String,
        /// The variable named by `api_key_env`.
        var: String,
    },
    /// The provider cannot be built as configured.
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

/// Loads a script file into a scripted model, with located errors.
///
/// # Errors
/// An unreadable file, YAML or type errors, and replies of the wrong shape, each located
/// in the file.
pub fn load_script(path: &Path) -> Result<ScriptedModel, ModelSetupError> {
    let script: Script = config::load_checked_script(path, |s: &Script| {
        s.problems()
            .iter()
            .map(|p| (p.pointer(), p.to_string()))
            .collect()
    })
    .map_err(|diagnostics| ModelSetupError::Script { diagnostics })?;
    ScriptedModel::new(script).map_err(|e: ScriptError| ModelSetupError::Script {
        diagnostics: vec![Diagnostic::error(
            path,
            crate::config::yaml::Pos { line: 1, col: 1 },
            e.to_string(),
        )],
    })
}

/// Resolves and caches the models of one app build.
pub(super) struct Models<'a> {
    workflow: &'a Workflow,
    options: &'a ModelOptions,
    env: &'a Env,
    cache: HashMap<String, Arc<dyn Model>>,
}

impl<'a> Models<'a> {
    pub(super) fn new(workflow: &'a Workflow, options: &'a ModelOptions, env: &'a Env) -> Self {
        Models {
            workflow,
            options,
            env,
            cache: HashMap::new(),
        }
    }

    fn base_dir(&self) -> PathBuf {
        self.workflow
            .path
            .parent()
            .unwrap_or(Path::new("."))
            .to_owned()
    }

    /// The model an agent whose `model:` is `name` calls.
    pub(super) fn resolve(&mut self, name: &str) -> Result<Arc<dyn Model>, ModelSetupError> {
        let key = match (&self.options.fixed, &self.options.spec) {
            (Some(_), _) => "--script".to_owned(),
            (None, Some(spec)) => format!("--model {spec}"),
            (None, None) => name.to_owned(),
        };
        if let Some(m) = self.cache.get(&key) {
            return Ok(Arc::clone(m));
        }
        let env = |var: &str| (self.env)(var);
        let model = if let Some(m) = &self.options.fixed {
            Arc::clone(m)
        } else if let Some(spec) = &self.options.spec {
            provider::build(&provider::resolve(spec, None, &env)?)?
        } else if let Some(m) = self.workflow.models.get(name) {
            declared(name, m, &self.base_dir(), self.env)?
        } else if let Some(script) = name.strip_prefix("scripted:") {
            Arc::new(load_script(&self.base_dir().join(script))?)
        } else {
            provider::build(&provider::resolve(name, None, &env)?)?
        };
        let model = match &self.options.wrap {
            Some(wrap) => wrap(model),
            None => model,
        };
        self.cache.insert(key, Arc::clone(&model));
        Ok(model)
    }
}

/// A model declared under `define.models`.
fn declared(
    name: &str,
    m: &ModelConfig,
    base_dir: &Path,
    env: &Env,
) -> Result<Arc<dyn Model>, ModelSetupError> {
    let missing = |field| ModelSetupError::MissingField {
        model: name.to_owned(),
        field,
    };
    let provider = match m.provider {
        ProviderKind::Scripted => {
            let script = m.script.as_deref().ok_or_else(|| missing("script"))?;
            return Ok(Arc::new(load_script(&base_dir.join(script))?));
        }
        ProviderKind::Gemini => Provider::Gemini,
        ProviderKind::Openai => Provider::OpenAi,
    };
    let model_name = m.model.as_deref().ok_or_else(|| missing("model"))?;
    let spec = format!("{}:{model_name}", provider.name());
    let mut cfg: ProviderConfig = provider::resolve(&spec, m.base_url.clone(), &|v| env(v))?;
    if let Some(var) = &m.api_key_env {
        cfg.api_key = env(var)
            .filter(|v| !v.trim().is_empty())
            .map(|k| Secret::new(k.trim()));
        if cfg.api_key.is_none() && provider == Provider::Gemini {
            return Err(ModelSetupError::MissingKey {
                model: name.to_owned(),
                var: var.clone(),
            });
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
    Ok(provider::build(&cfg)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::agent_config::RetryConfig;

    /// A model without `retries` retries as the documentation says a model's `retries`
    /// defaults do: the same counts whether the policy comes from YAML or not.
    #[test]
    fn default_retries_match_the_documented_ones() {
        let documented = RetryConfig::default();
        let policy = RetryPolicy::default();
        assert_eq!(policy.max_attempts, documented.max_attempts);
        assert_eq!(
            policy.initial_backoff,
            Duration::from_millis(documented.initial_backoff_ms)
        );
        assert_eq!(
            policy.max_backoff,
            Duration::from_millis(documented.max_backoff_ms)
        );
        assert_eq!(
            (
                documented.max_attempts,
                documented.initial_backoff_ms,
                documented.max_backoff_ms
            ),
            (3, 500, 10_000)
        );
    }
}
