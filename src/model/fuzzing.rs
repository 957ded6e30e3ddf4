//! Entry points for the fuzz targets in `fuzz/`: the provider answer parsers and the
//! server-sent events reader, run exactly as a real call runs them, minus the network.
//! Hidden from the documentation and not an API: they change with the code they reach.
//!
//! Every function takes the bytes a server could send and must return, whatever they
//! are, without panicking, hanging or holding more memory than the answer limit allows.

use super::ProviderCode;
use super::http::{Redactor, Secret};
use super::sse::{self, BodyError};
use super::{LlmResponse, ModelError, gemini, openai};
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;

/// The API key the entry points scrub from every message; a message that contains it is
/// a leak.
pub const SECRET: &str = "sk-fuzz-0123456789";

/// The URL the entry points pretend to have called.
const URL: &str = "http://fuzz.invalid/v1";

fn redactor() -> Redactor {
    Redactor::new(Some(Secret::new(SECRET)))
}

fn body(chunks: Vec<Vec<u8>>) -> BoxStream<'static, Result<String, String>> {
    let chunks = chunks
        .into_iter()
        .map(|c| Ok::<_, BodyError>(Bytes::from(c)));
    sse::sse_payloads(futures::stream::iter(chunks))
}

/// The `data:` payloads of a server-sent event body that arrives in `chunks`, and the
/// error that ended it, if any.
pub fn sse(chunks: Vec<Vec<u8>>) -> Vec<Result<String, String>> {
    futures::executor::block_on(body(chunks).collect())
}

fn stream(
    chunks: Vec<Vec<u8>>,
    parse: fn(
        BoxStream<'static, Result<String, ModelError>>,
        Redactor,
        String,
    ) -> super::ResponseStream,
) -> Vec<Result<LlmResponse, ModelError>> {
    let data = sse::broken_on_error(body(chunks), redactor(), URL.to_owned());
    futures::executor::block_on(parse(data, redactor(), URL.to_owned()).collect())
}

fn whole(
    body: &[u8],
    parse: fn(serde_json::Value) -> Result<LlmResponse, serde_json::Error>,
) -> Result<LlmResponse, ModelError> {
    let value = serde_json::from_slice(body)
        .map_err(|e| redactor().error(ProviderCode::BadResponse, format!("not JSON: {e}")))?;
    parse(value)
        .map_err(|e| redactor().error(ProviderCode::BadResponse, format!("unexpected answer: {e}")))
}

/// The responses of a streamed Gemini answer whose body arrives in `chunks`.
pub fn gemini_stream(chunks: Vec<Vec<u8>>) -> Vec<Result<LlmResponse, ModelError>> {
    stream(chunks, gemini::responses)
}

/// The responses of a streamed OpenAI-compatible answer whose body arrives in `chunks`.
pub fn openai_stream(chunks: Vec<Vec<u8>>) -> Vec<Result<LlmResponse, ModelError>> {
    stream(chunks, openai::responses)
}

/// The response to a whole Gemini answer `body`.
///
/// # Errors
/// A body that is not a Gemini answer (`BAD_RESPONSE`).
pub fn gemini_answer(body: &[u8]) -> Result<LlmResponse, ModelError> {
    whole(body, gemini::answer)
}

/// The response to a whole OpenAI-compatible answer `body`.
///
/// # Errors
/// A body that is not a chat completion (`BAD_RESPONSE`).
pub fn openai_answer(body: &[u8]) -> Result<LlmResponse, ModelError> {
    whole(body, openai::answer)
}
