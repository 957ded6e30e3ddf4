//! OpenAI-compatible answers (chat completions), streamed (server-sent events) and whole: any body gives responses or
//! a typed error, the same however the network cuts it, never a panic, never the key.
#![no_main]

use adk_flow::model::fuzzing;
use adk_flow_fuzz::{assert_no_secret, comparable, cut, sizes_and_body};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (sizes, body) = sizes_and_body(data);
    let whole = comparable(&fuzzing::openai_stream(vec![body.to_vec()]));
    assert_eq!(
        comparable(&fuzzing::openai_stream(cut(body, sizes))),
        whole,
        "cut by {sizes:?}"
    );
    for (i, r) in whole.iter().enumerate() {
        if let Err(message) = r {
            assert_no_secret(message);
            assert_eq!(i + 1, whole.len(), "an error ends the stream: {whole:?}");
        }
    }
    if let Err(e) = fuzzing::openai_answer(body) {
        assert_no_secret(&e.to_string());
    }
});
