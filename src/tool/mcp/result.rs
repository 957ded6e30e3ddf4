//! What the model reads back from an MCP `tools/call`, and error texts.

use crate::tool::ToolError;
use rmcp::ServiceError;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde_json::{Value, json};

/// Maps a `tools/call` result to the function response.
///
/// `structuredContent` wins when present; otherwise the text parts are joined with
/// newlines (other parts summarized) as `{"content": ...}`. `isError` results become a
/// [`ToolError`] with the same text.
pub(super) fn to_json(result: CallToolResult) -> Result<Value, ToolError> {
    let text = content_text(&result.content);
    if result.is_error == Some(true) {
        let message = if !text.is_empty() {
            text
        } else if let Some(structured) = &result.structured_content {
            structured.to_string()
        } else {
            "the tool reported an error without a message".to_owned()
        };
        return Err(ToolError::new(message));
    }
    match result.structured_content {
        Some(structured) => Ok(structured),
        None => Ok(json!({ "content": text })),
    }
}

/// The text of the content parts, one per line; non-text parts summarized.
fn content_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(|part| match part {
            ContentBlock::Text(t) => t.text.clone(),
            ContentBlock::Image(i) => format!("[image {}]", i.mime_type),
            ContentBlock::Audio(a) => format!("[audio {}]", a.mime_type),
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { text, .. } => text.clone(),
                ResourceContents::BlobResourceContents { uri, mime_type, .. } => match mime_type {
                    Some(m) => format!("[resource {uri} ({m})]"),
                    None => format!("[resource {uri}]"),
                },
                _ => "[resource]".to_owned(),
            },
            ContentBlock::ResourceLink(link) => format!("[resource link {}]", link.uri),
            _ => "[unsupported content]".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A failed handshake, with the transport's own causes (rmcp does not chain them).
pub(super) fn describe_init(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, context } => {
            format!("{context}: {}", describe_transport(error.error.as_ref()))
        }
        other => describe(other),
    }
}

/// Whether a failed request means the server is gone. A server that died is noticed either
/// by the reader (the transport closes) or by the next write (a broken pipe, a reset), which
/// of the two first depends on timing; both are the same fact for the user.
pub(super) fn server_gone(error: &ServiceError) -> bool {
    match error {
        ServiceError::TransportClosed => true,
        ServiceError::TransportSend(e) => {
            let mut level: Option<&(dyn std::error::Error + 'static)> = Some(e.error.as_ref());
            while let Some(e) = level {
                if let Some(io) = e.downcast_ref::<std::io::Error>()
                    && matches!(
                        io.kind(),
                        std::io::ErrorKind::BrokenPipe
                            | std::io::ErrorKind::ConnectionReset
                            | std::io::ErrorKind::UnexpectedEof
                    )
                {
                    return true;
                }
                level = e.source();
            }
            false
        }
        _ => false,
    }
}

/// A failed request, worded without rmcp's type names.
pub(super) fn describe_service(error: &ServiceError) -> String {
    if server_gone(error) {
        return "the connection to the server is closed".to_owned();
    }
    match error {
        ServiceError::TransportSend(e) => describe_transport(e.error.as_ref()),
        ServiceError::McpError(e) => {
            format!("the server answered with error {}: {}", e.code.0, e.message)
        }
        other => describe(other),
    }
}

/// A transport error; the HTTP client's causes (connection refused...) are not chained by
/// rmcp, so they are looked up.
fn describe_transport(error: &(dyn std::error::Error + 'static)) -> String {
    let mut level = Some(error);
    while let Some(e) = level {
        if let Some(StreamableHttpError::Client(inner)) =
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return describe(inner);
        }
        level = e.source();
    }
    describe(error)
}

/// An error and its sources, without repeating a source its parent already quotes.
pub(super) fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !part.is_empty() && !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::EmbeddedResource;

    fn send_error(kind: std::io::ErrorKind) -> ServiceError {
        ServiceError::TransportSend(rmcp::transport::DynamicTransportError::from_parts(
            "child-process",
            std::any::TypeId::of::<()>(),
            Box::new(std::io::Error::from(kind)),
        ))
    }

    #[test]
    fn a_dead_server_reads_the_same_whichever_side_notices_first() {
        let closed = describe_service(&ServiceError::TransportClosed);
        assert_eq!(
            describe_service(&send_error(std::io::ErrorKind::BrokenPipe)),
            closed
        );
        assert_eq!(
            describe_service(&send_error(std::io::ErrorKind::ConnectionReset)),
            closed
        );
        assert!(server_gone(&send_error(std::io::ErrorKind::BrokenPipe)));
        assert!(!server_gone(&send_error(
            std::io::ErrorKind::PermissionDenied
        )));
        assert_ne!(
            describe_service(&send_error(std::io::ErrorKind::PermissionDenied)),
            closed
        );
    }

    #[test]
    fn structured_content_wins() {
        let mut r = CallToolResult::success(vec![ContentBlock::text("ignored")]);
        r.structured_content = Some(json!({"n": 1}));
        assert_eq!(to_json(r).ok(), Some(json!({"n": 1})));
    }

    #[test]
    fn text_parts_are_joined_and_others_summarized() {
        let r = CallToolResult::success(vec![
            ContentBlock::text("a"),
            ContentBlock::image("AAAA", "image/png"),
            ContentBlock::Resource(EmbeddedResource::new(
                ResourceContents::TextResourceContents {
                    uri: "file:///x".into(),
                    mime_type: None,
                    text: "b".into(),
                    meta: None,
                },
            )),
        ]);
        assert_eq!(
            to_json(r).ok(),
            Some(json!({"content": "a\n[image image/png]\nb"}))
        );
    }

    #[test]
    fn is_error_becomes_a_tool_error() {
        let r = CallToolResult::error(vec![ContentBlock::text("no such file")]);
        assert_eq!(
            to_json(r).err().map(|e| e.message),
            Some("no such file".into())
        );
        let r = CallToolResult::error(vec![]);
        assert!(to_json(r).is_err());
    }
}
