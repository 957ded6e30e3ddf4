//! Tools declared in YAML: a description, a JSON Schema for the arguments (checked before
//! every call), and one behaviour: a table lookup, state reads or writes, a program, or an
//! HTTP call.

use super::command::CommandSpec;
use super::http::HttpSpec;
use super::{Tool, ToolContext, ToolError};
use crate::model::FunctionDeclaration;
use crate::template::jinja;
use async_trait::async_trait;
use serde_json::{Map, Value, json};
use std::sync::OnceLock;

/// What a declared tool does when called.
pub enum Behavior {
    /// Renders `key` and returns the table's entry.
    Lookup {
        /// Key template.
        key: String,
        /// Entries.
        table: Map<String, Value>,
    },
    /// Writes state keys from value templates; returns what it wrote.
    SetState(Vec<(String, String)>),
    /// Returns the values of state keys.
    GetState(Vec<String>),
    /// Runs a program.
    Command(CommandSpec),
    /// Calls an HTTP endpoint.
    Http(Box<HttpSpec>),
    /// Answered later by the client: returns nothing, so the turn ends.
    Client,
    /// Saves an artifact from templates.
    SaveArtifact {
        /// Name template.
        name: String,
        /// Content template.
        content: String,
        /// MIME type.
        mime_type: String,
    },
    /// Loads an artifact.
    LoadArtifact {
        /// Name template.
        name: String,
        /// Version template.
        version: Option<String>,
    },
}

/// A tool declared under `define.tools`.
pub struct DeclaredTool {
    name: String,
    description: String,
    parameters: Option<Value>,
    /// Compiled on the tool's first call: a one-shot run pays nothing for the tools it never
    /// calls (compiling a schema with `pattern`s costs a fair share of a short process).
    validator: OnceLock<Option<jsonschema::Validator>>,
    long_running: bool,
    behavior: Behavior,
}

impl DeclaredTool {
    /// A tool; `parameters` must be a valid JSON Schema (the loader checked it).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Option<Value>,
        long_running: bool,
        behavior: Behavior,
    ) -> Self {
        DeclaredTool {
            name: name.into(),
            description: description.into(),
            parameters,
            validator: OnceLock::new(),
            long_running,
            behavior,
        }
    }

    fn check_args(&self, args: &Value) -> Result<(), ToolError> {
        let validator = self.validator.get_or_init(|| {
            self.parameters
                .as_ref()
                .and_then(|p| jsonschema::validator_for(p).ok())
        });
        let Some(v) = validator else {
            return Ok(());
        };
        let problems: Vec<String> = v
            .iter_errors(args)
            .map(|e| {
                let at = e.instance_path().as_str().to_owned();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(ToolError::new(format!(
                "invalid arguments for `{}`: {}",
                self.name,
                problems.join("; ")
            )))
        }
    }
}

#[async_trait]
impl Tool for DeclaredTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn declaration(&self) -> FunctionDeclaration {
        let mut description = self.description.clone();
        if self.is_long_running() {
            // ADK appends this to every LongRunningFunctionTool.
            description.push_str("\n\nNOTE: This is a long-running operation. Do not call this tool again if it has already returned some intermediate or pending status.");
        }
        FunctionDeclaration {
            name: self.name.clone(),
            description,
            parameters: self.parameters.clone(),
        }
    }

    fn is_long_running(&self) -> bool {
        self.long_running || matches!(self.behavior, Behavior::Client)
    }

    async fn run(&self, args: Value, ctx: &mut ToolContext) -> Result<Value, ToolError> {
        self.check_args(&args)?;
        let render_ctx = || jinja::context(&args, ctx.visible_state());
        match &self.behavior {
            Behavior::Lookup { key, table } => {
                let key = jinja::render(key, &render_ctx()).map_err(|e| ToolError::new(e.0))?;
                match table.get(&key) {
                    Some(v) => Ok(v.clone()),
                    None => Err(ToolError::new(format!("no entry for `{key}`"))),
                }
            }
            Behavior::SetState(pairs) => {
                let rc = render_ctx();
                let mut written = Map::new();
                for (k, t) in pairs {
                    let v = jinja::render(t, &rc).map_err(|e| ToolError::new(e.0))?;
                    written.insert(k.clone(), Value::String(v));
                }
                for (k, v) in &written {
                    ctx.set_state(k.clone(), v.clone());
                }
                Ok(json!({ "written": written }))
            }
            Behavior::GetState(keys) => {
                let values: Map<String, Value> = keys
                    .iter()
                    .map(|k| (k.clone(), ctx.state(k).unwrap_or(Value::Null)))
                    .collect();
                Ok(Value::Object(values))
            }
            Behavior::Command(spec) => spec.run(&render_ctx()).await,
            Behavior::Http(spec) => spec.call(&render_ctx()).await,
            Behavior::Client => Ok(Value::Null),
            Behavior::SaveArtifact {
                name,
                content,
                mime_type,
            } => {
                let rc = render_ctx();
                let name = jinja::render(name, &rc).map_err(|e| ToolError::new(e.0))?;
                let content = jinja::render(content, &rc).map_err(|e| ToolError::new(e.0))?;
                let version = ctx
                    .save_artifact(
                        &name,
                        crate::artifact::Artifact::text(mime_type.clone(), content),
                    )
                    .await?;
                Ok(json!({ "name": name, "version": version }))
            }
            Behavior::LoadArtifact { name, version } => {
                let rc = render_ctx();
                let name = jinja::render(name, &rc).map_err(|e| ToolError::new(e.0))?;
                let version = match version {
                    Some(t) => {
                        let v = jinja::render(t, &rc).map_err(|e| ToolError::new(e.0))?;
                        Some(v.trim().parse::<u64>().map_err(|_| {
                            ToolError::new(format!("artifact version `{v}` is not a number"))
                        })?)
                    }
                    None => None,
                };
                match ctx.load_artifact(&name, version).await? {
                    Some(a) => Ok(json!({
                        "name": name,
                        "mime_type": a.mime_type,
                        "text": a.as_text().map_or_else(|| format!("[{} bytes of {}]", a.data.len(), a.mime_type), str::to_owned),
                    })),
                    None => Err(ToolError::new(format!("no artifact named `{name}`"))),
                }
            }
        }
    }
}

/// A tool replaced by canned results (workflow tests): the real tool's declaration, a
/// fixed result for every call, or `{results: [..]}` served in order (the last repeats).
pub struct StubTool {
    inner: std::sync::Arc<dyn Tool>,
    results: Vec<Value>,
    next: std::sync::atomic::AtomicUsize,
}

impl StubTool {
    /// Stubs `inner` with `stub`.
    pub fn new(inner: std::sync::Arc<dyn Tool>, stub: Value) -> Self {
        let results = match stub {
            Value::Object(mut m)
                if m.len() == 1 && m.get("results").is_some_and(Value::is_array) =>
            {
                match m.remove("results") {
                    Some(Value::Array(items)) => items,
                    _ => Vec::new(),
                }
            }
            other => vec![other],
        };
        StubTool {
            inner,
            results,
            next: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

#[async_trait]
impl Tool for StubTool {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn declaration(&self) -> FunctionDeclaration {
        self.inner.declaration()
    }

    fn is_long_running(&self) -> bool {
        self.inner.is_long_running()
    }

    async fn run(&self, _args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.results
            .get(i.min(self.results.len().saturating_sub(1)))
            .cloned()
            .ok_or_else(|| ToolError::new(format!("the stub of `{}` has no result", self.name())))
    }
}
