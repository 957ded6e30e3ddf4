//! Real model providers: which one, where, with what key, and how to build it.
//!
//! A model spec names the provider and the model: `gemini:gemini-2.5-flash`,
//! `openai:gpt-4o-mini`, `openai:smollm2` (any OpenAI-compatible server). A bare name
//! starting with `gemini-` is a Gemini model, as in ADK's registry.
//!
//! [`resolve`] fills a [`ProviderConfig`] from the spec, the workflow's base URL and the
//! environment (passed in as a function; this module never reads `std::env`):
//!
//! | | Gemini | OpenAI-compatible |
//! |---|---|---|
//! | base URL | argument, else `GEMINI_BASE_URL`, else `https://generativelanguage.googleapis.com` | argument, else `OPENAI_BASE_URL`, else `https://api.openai.com/v1` |
//! | API key | `GOOGLE_API_KEY`, else `GEMINI_API_KEY` (genai's precedence) | `OPENAI_API_KEY` |
//! | key required | always | when the base URL is `api.openai.com` |
//!
//! [`build`] turns the config into a [`Model`], checking the URL and the key first. HTTP
//! behaviour (timeouts, retries, error codes) is described in [`RetryPolicy`] and
//! [`ModelError`]'s codes: `HTTP_<status>`, `TIMEOUT`, `CONNECT`, `NETWORK`,
//! `BAD_RESPONSE`, `STREAM_BROKEN`. The HTTP client honours the usual proxy variables
//! (`HTTPS_PROXY`, `NO_PROXY`...).

pub use super::http::{RetryPolicy, Secret};

use super::Model;
#[cfg(doc)]
use super::ModelError;
use super::gemini::GeminiModel;
use super::http::HttpClient;
use super::openai::OpenAiModel;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Google's Gemini API.
    Gemini,
    /// An OpenAI-compatible chat completions API.
    OpenAi,
}

impl Provider {
    /// The spec prefix: `gemini` or `openai`.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Gemini => "gemini",
            Provider::OpenAi => "openai",
        }
    }

    /// The public endpoint used when no base URL is given.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::Gemini => "https://generativelanguage.googleapis.com",
            Provider::OpenAi => "https://api.openai.com/v1",
        }
    }

    /// Environment variables that hold the API key, in order of precedence.
    pub fn key_vars(self) -> &'static [&'static str] {
        match self {
            Provider::Gemini => &["GOOGLE_API_KEY", "GEMINI_API_KEY"],
            Provider::OpenAi => &["OPENAI_API_KEY"],
        }
    }

    /// The environment variable that overrides the base URL.
    pub fn base_url_var(self) -> &'static str {
        match self {
            Provider::Gemini => "GEMINI_BASE_URL",
            Provider::OpenAi => "OPENAI_BASE_URL",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How long one attempt may take unless configured: 120 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Everything needed to build one provider's model.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// The API.
    pub provider: Provider,
    /// The provider's model name (`gemini-2.5-flash`, `gpt-4o-mini`, `smollm2`). It is
    /// the name sent, whatever name the agent's request carries.
    pub model: String,
    /// Where the API lives; the public endpoint when `None`.
    pub base_url: Option<String>,
    /// The API key.
    pub api_key: Option<Secret>,
    /// Bound on one attempt: the whole answer when not streaming; the response headers,
    /// then the silence between two chunks, when streaming.
    pub timeout: Duration,
    /// Retries of failed attempts.
    pub retry: RetryPolicy,
}

impl ProviderConfig {
    /// A config with the public endpoint, no key, [`DEFAULT_TIMEOUT`] and the default
    /// [`RetryPolicy`].
    pub fn new(provider: Provider, model: impl Into<String>) -> Self {
        ProviderConfig {
            provider,
            model: model.into(),
            base_url: None,
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
        }
    }

    /// The base URL in use: the configured one or the public endpoint.
    pub fn effective_base_url(&self) -> &str {
        self.base_url
            .as_deref()
            .unwrap_or(self.provider.default_base_url())
    }
}

/// A provider that cannot be built as configured.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The model spec names no known provider or no model.
    #[error("model `{spec}`: {reason}")]
    BadSpec {
        /// The spec as written.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The provider needs a key and none was given.
    #[error("{provider} model `{model}` needs an API key: set {}", .vars.join(" or "))]
    MissingApiKey {
        /// The provider.
        provider: Provider,
        /// The model.
        model: String,
        /// Where the key is read from.
        vars: &'static [&'static str],
    },
    /// The base URL is not an http(s) URL.
    #[error("base URL `{url}` is not valid: {reason}")]
    BadBaseUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The key cannot be sent in an HTTP header.
    #[error("the {provider} API key contains characters that cannot be sent in an HTTP header")]
    BadApiKey {
        /// The provider.
        provider: Provider,
    },
    /// The HTTP client could not be set up.
    #[error("cannot set up the HTTP client")]
    Client(#[source] reqwest::Error),
}

/// Parses `spec` and applies the base URL and key rules of the module docs.
/// `base_url` comes from the workflow config; `env` looks up an environment variable
/// (empty values count as unset).
///
/// # Errors
/// [`ProviderError::BadSpec`] for a spec without a known provider or a model name.
pub fn resolve(
    spec: &str,
    base_url: Option<String>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderConfig, ProviderError> {
    let bad = |reason: &str| ProviderError::BadSpec {
        spec: spec.to_owned(),
        reason: reason.to_owned(),
    };
    let (provider, model) = match spec.split_once(':') {
        Some(("gemini", model)) => (Provider::Gemini, model),
        Some(("openai", model)) => (Provider::OpenAi, model),
        _ if spec.starts_with("gemini-") => (Provider::Gemini, spec),
        Some((prefix, _)) => {
            return Err(bad(&format!(
                "unknown provider `{prefix}`; use `gemini:MODEL` or `openai:MODEL`"
            )));
        }
        None => {
            return Err(bad(
                "name the provider: `gemini:MODEL` or `openai:MODEL` (any OpenAI-compatible server)",
            ));
        }
    };
    if model.trim().is_empty() {
        return Err(bad("the model name is empty"));
    }
    let lookup = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let mut config = ProviderConfig::new(provider, model.trim());
    config.base_url = base_url
        .filter(|u| !u.trim().is_empty())
        .or_else(|| lookup(provider.base_url_var()));
    config.api_key = provider
        .key_vars()
        .iter()
        .find_map(|var| lookup(var))
        .map(|k| Secret::new(k.trim()));
    Ok(config)
}

/// Builds the model `config` describes.
///
/// # Errors
/// A missing key where one is required (naming the variables to set), a base URL that
/// is not http(s), a key that cannot go in a header, or a client that cannot be built.
pub fn build(config: &ProviderConfig) -> Result<Arc<dyn Model>, ProviderError> {
    let base = config.effective_base_url();
    let url = reqwest::Url::parse(base).map_err(|e| ProviderError::BadBaseUrl {
        url: base.to_owned(),
        reason: e.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ProviderError::BadBaseUrl {
            url: base.to_owned(),
            reason: "the scheme must be http or https".into(),
        });
    }
    let needs_key = match config.provider {
        Provider::Gemini => true,
        Provider::OpenAi => url.host_str() == Some("api.openai.com"),
    };
    let key = config
        .api_key
        .as_ref()
        .filter(|k| !k.expose().trim().is_empty());
    if needs_key && key.is_none() {
        return Err(ProviderError::MissingApiKey {
            provider: config.provider,
            model: config.model.clone(),
            vars: config.provider.key_vars(),
        });
    }
    let http = HttpClient::new(config.timeout, config.retry.clone(), key.cloned())
        .map_err(ProviderError::Client)?;
    let bad_key = |_| ProviderError::BadApiKey {
        provider: config.provider,
    };
    Ok(match (config.provider, key) {
        (Provider::Gemini, Some(key)) => {
            Arc::new(GeminiModel::new(http, base, &config.model, key).map_err(bad_key)?)
        }
        (Provider::Gemini, None) => {
            return Err(ProviderError::MissingApiKey {
                provider: config.provider,
                model: config.model.clone(),
                vars: config.provider.key_vars(),
            });
        }
        (Provider::OpenAi, key) => {
            Arc::new(OpenAiModel::new(http, base, &config.model, key).map_err(bad_key)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn specs_resolve() {
        let c = resolve(
            "gemini:gemini-2.5-flash",
            None,
            &env(&[("GEMINI_API_KEY", "g")]),
        )
        .unwrap();
        assert_eq!(
            (c.provider, c.model.as_str()),
            (Provider::Gemini, "gemini-2.5-flash")
        );
        assert_eq!(c.api_key, Some(Secret::new("g")));
        assert_eq!(
            c.effective_base_url(),
            "https://generativelanguage.googleapis.com"
        );
        let both = env(&[("GEMINI_API_KEY", "g"), ("GOOGLE_API_KEY", "o")]);
        assert_eq!(
            resolve("gemini-2.5-pro", None, &both).unwrap().api_key,
            Some(Secret::new("o"))
        );
        let c = resolve(
            "openai:llama3:8b",
            None,
            &env(&[("OPENAI_BASE_URL", "http://h/v1")]),
        )
        .unwrap();
        assert_eq!(
            (c.model.as_str(), c.effective_base_url()),
            ("llama3:8b", "http://h/v1")
        );
        let c = resolve(
            "openai:x",
            Some("http://cfg/v1".into()),
            &env(&[("OPENAI_BASE_URL", "http://h/v1")]),
        )
        .unwrap();
        assert_eq!(c.base_url.as_deref(), Some("http://cfg/v1"));
        for bad in ["gpt-4o", "claude:x", "openai:", "openai: "] {
            assert!(
                matches!(
                    resolve(bad, None, &env(&[])),
                    Err(ProviderError::BadSpec { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn missing_keys_name_the_variable() {
        let e = build(&ProviderConfig::new(Provider::Gemini, "gemini-2.5-flash"))
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "gemini model `gemini-2.5-flash` needs an API key: set GOOGLE_API_KEY or GEMINI_API_KEY"
        );
        let e = build(&ProviderConfig::new(Provider::OpenAi, "gpt-4o"))
            .err()
            .unwrap();
        assert!(e.to_string().ends_with("set OPENAI_API_KEY"), "{e}");
        let mut local = ProviderConfig::new(Provider::OpenAi, "smollm2");
        local.base_url = Some("http://127.0.0.1:8080/v1".into());
        assert!(build(&local).is_ok());
        local.base_url = Some("ftp://x".into());
        assert!(matches!(
            build(&local),
            Err(ProviderError::BadBaseUrl { .. })
        ));
        local.base_url = Some("http://127.0.0.1:8080/v1".into());
        local.api_key = Some(Secret::new("bad\nkey"));
        assert!(matches!(
            build(&local),
            Err(ProviderError::BadApiKey { .. })
        ));
    }

    #[test]
    fn configs_never_print_keys() {
        let mut c = ProviderConfig::new(Provider::OpenAi, "m");
        c.api_key = Some(Secret::new("sk-123"));
        assert!(!format!("{c:?}").contains("sk-123"));
    }
}
