//! ADK's `load_artifacts` and `get_user_choice`.
//!
//! `load_artifacts` (ADK's `LoadArtifactsTool`): before every model call of its agent it
//! lists the session's artifacts (the user's `user:` ones included) in the system
//! instruction; when the request's last content is its own function response, the
//! artifacts that response names are appended to the request as user contents
//! (`Artifact NAME is:` and the content), in this request only, never in the session.
//! A name not found as written is tried as `user:NAME`; one not found at all is
//! skipped. Images, audio, video and PDF travel as inline data; text-like types as text;
//! other binary content as a one-line description. The call itself answers
//! `{"artifact_names": [...], "status": ...}` as ADK does.
//!
//! `get_user_choice` (ADK's `LongRunningFunctionTool(get_user_choice)`): the model offers
//! `options`; the call has no result, so the turn ends and the client answers it with a
//! function response (`--respond get_user_choice=...`, or a function-response message).

use super::{Tool, ToolContext, ToolError};
use crate::artifact::Artifact;
use crate::event::{Blob, Content, Part, Role};
use crate::model::{FunctionDeclaration, LlmRequest};
use crate::names::{GET_USER_CHOICE, LOAD_ARTIFACTS};
use crate::pyrepr::json_dumps;
use async_trait::async_trait;
use base64::Engine;
use serde_json::{Value, json};

/// `load_artifacts(artifact_names)`.
pub struct LoadArtifacts;

/// What the call answers (ADK's text).
const STATUS: &str = "artifact contents temporarily inserted and removed. to access these artifacts, call load_artifacts tool again.";

#[async_trait]
impl Tool for LoadArtifacts {
    fn trace_type(&self) -> &'static str {
        "LoadArtifactsTool"
    }

    fn name(&self) -> &str {
        LOAD_ARTIFACTS
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: LOAD_ARTIFACTS.into(),
            description: "Loads artifacts into the session for this request.\n\nNOTE: Call when you need access to artifacts (for example, uploads saved by the\nweb UI).".into(),
            parameters: Some(json!({
                "type": "object",
                "properties": {
                    "artifact_names": {"type": "array", "items": {"type": "string"}}
                }
            })),
        }
    }

    fn processes_requests(&self) -> bool {
        true
    }

    async fn process_request(
        &self,
        ctx: &ToolContext,
        request: &mut LlmRequest,
    ) -> Result<(), ToolError> {
        let names = ctx.list_artifacts().await?;
        if names.is_empty() {
            return Ok(());
        }
        request.append_instruction(&format!(
            "You have a list of artifacts:\n  {}\n\n  When the user asks questions about any of the artifacts, you should call the\n  `load_artifacts` function to load the artifact. Always call load_artifacts\n  before answering questions related to the artifacts, regardless of whether the\n  artifacts have been loaded before. Do not depend on prior answers about the\n  artifacts.\n  ",
            ascii(&json_dumps(&names))
        ));
        let requested: Vec<String> = match request
            .last_message()
            .and_then(|c| c.parts.first())
            .and_then(|p| p.function_response.as_ref())
        {
            Some(r) if r.name == LOAD_ARTIFACTS => r
                .response
                .get("artifact_names")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            _ => return Ok(()),
        };
        for name in requested {
            let mut artifact = ctx.load_artifact(&name, None).await?;
            if artifact.is_none() && !name.starts_with("user:") {
                artifact = ctx.load_artifact(&format!("user:{name}"), None).await?;
            }
            let Some(artifact) = artifact else {
                tracing::warn!("artifact `{name}` not found, skipping");
                continue;
            };
            request.push_message(Content::new(
                Role::User,
                vec![
                    Part::text(format!("Artifact {name} is:")),
                    part_for_model(&artifact, &name),
                ],
            ));
        }
        Ok(())
    }

    async fn run(&self, args: Value, _ctx: &mut ToolContext) -> Result<Value, ToolError> {
        let names = args
            .get("artifact_names")
            .cloned()
            .unwrap_or_else(|| json!([]));
        Ok(json!({"artifact_names": names, "status": STATUS}))
    }
}

/// Python's `json.dumps` default `ensure_ascii`: characters past ASCII as `\uXXXX`.
fn ascii(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// An artifact as a part a model takes (ADK's `_as_safe_part_for_llm`).
fn part_for_model(artifact: &Artifact, name: &str) -> Part {
    let mime = artifact
        .mime_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim();
    let inline = ["image/", "audio/", "video/"]
        .iter()
        .any(|p| mime.starts_with(p))
        || mime == "application/pdf";
    if inline {
        return Part {
            inline_data: Some(Box::new(Blob {
                display_name: None,
                data: base64::engine::general_purpose::STANDARD.encode(&artifact.data),
                mime_type: artifact.mime_type.clone(),
            })),
            ..Part::default()
        };
    }
    let mime = if mime.is_empty() {
        "application/octet-stream"
    } else {
        mime
    };
    let text_like = mime.starts_with("text/")
        || matches!(
            mime,
            "application/csv" | "application/json" | "application/xml"
        );
    if text_like {
        return Part::text(String::from_utf8_lossy(&artifact.data).into_owned());
    }
    Part::text(format!(
        "[Binary artifact: {name}, type: {mime}, size: {:.1} KB. Content cannot be displayed inline.]",
        artifact.data.len() as f64 / 1024.0
    ))
}

/// `get_user_choice(options)`: waits for the client's answer.
pub struct GetUserChoice;

#[async_trait]
impl Tool for GetUserChoice {
    fn trace_type(&self) -> &'static str {
        "LongRunningFunctionTool"
    }

    fn name(&self) -> &str {
        GET_USER_CHOICE
    }

    fn declaration(&self) -> FunctionDeclaration {
        FunctionDeclaration {
            name: GET_USER_CHOICE.into(),
            description: "Provides the options to the user and asks them to choose one.\n\nNOTE: This is a long-running operation. Do not call this tool again if it has already returned some intermediate or pending status.".into(),
            parameters: Some(json!({
                "type": "object",
                "properties": {
                    "options": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["options"]
            })),
        }
    }

    fn is_long_running(&self) -> bool {
        true
    }

    async fn run(&self, _args: Value, ctx: &mut ToolContext) -> Result<Value, ToolError> {
        ctx.actions.skip_summarization = Some(true);
        Ok(Value::Null)
    }
}
