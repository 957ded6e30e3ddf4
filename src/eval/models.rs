//! Where eval runs get their models, for `adk-flow eval` and for `serve`'s eval routes
//! alike: an eval script (agents', judge's and simulated user's replies, restarting for
//! every case run), or real providers, with ADK's `judge_model` strings mapped onto
//! adk-flow's providers.

use super::engine::{CaseModels, ModelSource};
use super::script::EvalScript;
use crate::app::{Env, ModelOptions};
use crate::model::{Model, provider};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A judge model string as an adk-flow provider spec: `gemini-*` → `gemini:`,
/// LiteLLM-style `openai/M` → `openai:M`, adk-flow's `gemini:`/`openai:`/`scripted:` as is.
///
/// # Errors
/// Any other form.
pub fn judge_spec(model: &str) -> Result<String, String> {
    if model.starts_with("gemini:")
        || model.starts_with("openai:")
        || model.starts_with("scripted:")
    {
        return Ok(model.to_owned());
    }
    if model.starts_with("gemini-") {
        return Ok(format!("gemini:{model}"));
    }
    if let Some(m) = model.strip_prefix("openai/") {
        return Ok(format!("openai:{m}"));
    }
    Err(format!(
        "judge model `{model}`: use `gemini-…`, `openai/MODEL` or `openai:MODEL` (any OpenAI-compatible server at OPENAI_BASE_URL)"
    ))
}

/// Reads and checks an eval script file.
///
/// # Errors
/// Every problem, located, one per line.
pub fn load_script(path: &Path) -> Result<EvalScript, String> {
    crate::config::load_checked(path, EvalScript::problems).map_err(|d| {
        d.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The models of eval runs: the script's, or real providers.
pub struct EvalModels {
    /// Replies for agents, judge and user (`--script`).
    pub script: Option<EvalScript>,
    /// `--model`, for every agent.
    pub spec: Option<String>,
    /// `--judge-model`, for every judge metric.
    pub judge_override: Option<String>,
    /// Where `scripted:FILE` judge models are looked up.
    pub base_dir: PathBuf,
    /// Keys and base URLs.
    pub env: Arc<Env>,
}

impl EvalModels {
    /// The agents' models when no script is given.
    pub fn agent_models(&self) -> ModelOptions {
        ModelOptions {
            spec: self.spec.clone(),
            ..ModelOptions::default()
        }
    }

    /// A judge (`role` "judge") or simulated user ("user") from a provider spec.
    ///
    /// # Errors
    /// A script or provider that cannot be set up (a missing key).
    pub fn provider_model(&self, spec: &str, role: &str) -> Result<Arc<dyn Model>, String> {
        if let Some(file) = spec.strip_prefix("scripted:") {
            let script = load_script(&self.base_dir.join(file))?;
            return if role == "user" {
                script.user()
            } else {
                script.judge()
            };
        }
        let env = &*self.env;
        let cfg = provider::resolve(spec, None, &|n| env(n)).map_err(|e| e.to_string())?;
        provider::build(&cfg).map_err(|e| crate::errors::chain(&e))
    }

    /// Checks that every judge `metrics` need can be reached (a key is set), before any
    /// case runs.
    ///
    /// # Errors
    /// The first metric whose judge cannot be set up.
    pub fn check_judges<'a>(
        &self,
        metrics: impl IntoIterator<Item = &'a super::config::Metric>,
    ) -> Result<(), String> {
        if self.script.is_some() {
            return Ok(());
        }
        for m in metrics {
            let Some(j) = m.kind.judge() else { continue };
            let name = self.judge_override.as_deref().unwrap_or(&j.model);
            let spec = judge_spec(name).map_err(|e| format!("metric `{}`: {e}", m.name))?;
            if spec.starts_with("scripted:") {
                continue;
            }
            self.provider_model(&spec, "judge")
                .map_err(|e| format!("metric `{}` needs its judge `{name}`: {e}", m.name))?;
        }
        Ok(())
    }
}

impl ModelSource for EvalModels {
    fn case_models(&self) -> Result<CaseModels<'_>, String> {
        if let Some(script) = &self.script {
            let (agents, judge, user) = (script.agents()?, script.judge()?, script.user()?);
            return Ok(CaseModels {
                agents: ModelOptions::fixed(agents),
                judge: Box::new(move |_| Ok(Arc::clone(&judge))),
                user: Box::new(move |_| Ok(Arc::clone(&user))),
            });
        }
        Ok(CaseModels {
            agents: self.agent_models(),
            judge: Box::new(move |name| {
                let spec = judge_spec(self.judge_override.as_deref().unwrap_or(name))?;
                self.provider_model(&spec, "judge")
            }),
            user: Box::new(move |name| {
                let spec = judge_spec(name)?;
                self.provider_model(&spec, "user")
            }),
        })
    }
}
