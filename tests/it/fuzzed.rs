//! Inputs the fuzz targets (`fuzz/`, `scripts/fuzz.sh`) found, replayed as regression
//! tests; docs/fuzzing.md tells what each one broke.

use adk_flow::config::{self, LoadOptions};
use adk_flow::model::fuzzing;
use adk_flow::model::{LlmResponse, ModelError};

/// What a provider stream yields for one body.
type Responses = Vec<Result<LlmResponse, ModelError>>;

/// The body cut into `size`-byte chunks.
fn cut(body: &[u8], size: usize) -> Vec<Vec<u8>> {
    body.chunks(size).map(<[u8]>::to_vec).collect()
}

fn comparable(items: &[Result<LlmResponse, ModelError>]) -> Vec<Result<LlmResponse, String>> {
    items
        .iter()
        .map(|i| i.clone().map_err(|e| format!("{}: {e}", e.code())))
        .collect()
}

/// The responses of `body` through `parse`, checked to be the same however it is cut.
fn same_however_cut(
    parse: fn(Vec<Vec<u8>>) -> Responses,
    body: &[u8],
) -> Vec<Result<LlmResponse, String>> {
    let whole = comparable(&parse(vec![body.to_vec()]));
    for size in 1..=8 {
        assert_eq!(
            comparable(&parse(cut(body, size))),
            whole,
            "cut every {size} bytes"
        );
    }
    whole
}

#[test]
fn an_event_before_a_line_sse_does_not_know_is_delivered() {
    // sse crash-66b34e1a: the event before `datn:...` was lost when both came in one
    // chunk, and the unknown field broke the stream; the specification ignores it.
    let body = b"\xEF\xBB\xBFdata: bom\r\rdatn:aopsa2e\n\n";
    for chunks in [vec![body.to_vec()], cut(body, 1)] {
        assert_eq!(fuzzing::sse(chunks), [Ok("bom".to_owned())]);
    }
}

#[test]
fn a_garbled_gemini_stream_breaks_the_same_however_it_is_cut() {
    // gemini_stream crash-fd6895d3: a control byte inside an event; the stream broke on
    // "invalid line" or on bad JSON depending on where the network cut it.
    let body = b"data: {\"promptFeedback\": {\"blockReason\": \"SAFETY\"\x07data: {\"promptFeed\"thoughtSignatu\n\nre\"back\": {\"blockReason\": \"SAFETY\"}}}\r\n\r\n";
    let result = same_however_cut(fuzzing::gemini_stream, body);
    assert_eq!(result.len(), 1);
    let message = result[0].as_ref().unwrap_err();
    assert!(message.starts_with("STREAM_BROKEN: "), "{message}");
    assert!(message.contains("not JSON"), "{message}");
}

#[test]
fn a_stream_with_bytes_that_are_not_utf8_breaks_the_same_however_it_is_cut() {
    // openai_stream crash-f2da4215: a byte that is not UTF-8 in the second event; it
    // was "utf8 parse error" in one piece and a JSON error of the first event when cut.
    let body = b"data: {\"choices\": [{\"index\": 0, \"delta}}]}}]}\r\n\r\ndata: {\"choices\": [{\"index\": 0, \"delta\": {\"tool_calls\": [{\"index\": 0, \"function\": {\"arguments\":1}\"}}, {\"index\": 0, \xddfunction\": {\"name\": \"g\"}}]";
    let result = same_however_cut(fuzzing::openai_stream, body);
    assert_eq!(result.len(), 1);
    let message = result[0].as_ref().unwrap_err();
    assert!(
        message.contains("a chunk is not the expected JSON"),
        "{message}"
    );
}

#[test]
fn a_syntax_error_at_the_end_is_located_on_the_last_line() {
    // yaml_load crash-fc877da6: an error at the end of a file without a final line break
    // was reported on the line after the last (here 53:1); YAML, and editors, count a
    // lone CR as a line break like LF.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("root_agent.yaml");
    for breaks in ["\n", "\r", "\r\n"] {
        let text = format!("name: a\ninstruction: [u{}osed", breaks.repeat(50));
        std::fs::write(&path, text).unwrap();
        let env = |_: &str| None;
        let options = LoadOptions {
            env: &env,
            unset_env_is_error: true,
            files: config::FileAccess::RootFolder,
        };
        let loaded = config::load(&path, &options);
        let d = &loaded.diagnostics[0];
        assert_eq!((d.pos.line, d.pos.col), (52, 5), "{breaks:?}: {d}");
    }
}

#[test]
fn a_tag_without_a_value_is_located_at_the_tag() {
    // yaml_load crash-(name: !): the empty value of a bare tag has no position of its
    // own; the error about it said line 0.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("root_agent.yaml");
    std::fs::write(&path, "agent_class: LlmAgent\nname: !\n").unwrap();
    let env = |_: &str| None;
    let options = LoadOptions {
        env: &env,
        unset_env_is_error: true,
        files: config::FileAccess::RootFolder,
    };
    let loaded = config::load(&path, &options);
    let d = &loaded.diagnostics[0];
    assert_eq!((d.pos.line, d.pos.col), (2, 7), "{d}");
    assert!(d.message.contains("`name` must be a string"), "{d}");
}

#[test]
fn template_keys_are_python_identifiers_stripped_of_python_whitespace() {
    // template seed (written from ADK's inject_session_state): `{a²}` was a key, since
    // `²` is a Rust digit but not in XID_Continue, so ADK leaves it verbatim; `{\x1ca\x1f}`
    // was verbatim, since Python's strip() removes U+001C..U+001F; `·` and `℘` are
    // identifier characters that are neither letters nor digits.
    use adk_flow::template::render;
    use serde_json::json;
    let state = json!({"a": "A", "a\u{b7}": "B", "\u{2118}": "C"});
    let lookup = |k: &str| state.get(k).cloned();
    assert_eq!(render("{a\u{b2}}", lookup).unwrap(), "{a\u{b2}}");
    assert_eq!(render("{\u{2460}}", lookup).unwrap(), "{\u{2460}}");
    assert_eq!(render("{\u{1c}a\u{1f}}", lookup).unwrap(), "A");
    assert_eq!(render("{a\u{b7}} {\u{2118}}", lookup).unwrap(), "B C");
}

#[test]
fn bytes_that_are_not_utf8_are_located_on_the_line_an_editor_shows() {
    // scripted crash-f6344510, yaml_load crash-9204392d: the first invalid byte was
    // located counting LF only, so after a lone CR the line was too small and the column
    // past the end of the line; YAML and editors count CR, LF and CRLF alike.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.yaml");
    std::fs::write(
        &script,
        b"bi- 4ext: \"Paixt:\r\0\0\0\0\xbc\0\0 \"Pai#\noutlin",
    )
    .unwrap();
    let Err(adk_flow::app::ModelSetupError::Script { diagnostics }) =
        adk_flow::app::load_script(&script)
    else {
        panic!("the script loaded");
    };
    assert_eq!((diagnostics[0].pos.line, diagnostics[0].pos.col), (2, 5));
    let root = dir.path().join("root_agent.yaml");
    for breaks in ["\r", "\r\n", "\n"] {
        let text = format!("name: a{breaks}instruction: x\u{e9}").replace('\u{e9}', "\u{1}");
        let mut bytes = text.into_bytes();
        *bytes.last_mut().unwrap() = 0xE9;
        std::fs::write(&root, bytes).unwrap();
        let env = |_: &str| None;
        let options = LoadOptions {
            env: &env,
            unset_env_is_error: true,
            files: config::FileAccess::RootFolder,
        };
        let d = &config::load(&root, &options).diagnostics[0];
        assert_eq!((d.pos.line, d.pos.col), (2, 15), "{breaks:?}: {d}");
        assert!(d.message.contains("not valid UTF-8"), "{d}");
    }
}

#[test]
fn a_key_without_a_value_at_the_end_is_located_on_the_text() {
    // scripted crash-(`? key` last): the empty value of an explicit key that ends a file
    // without a final line break was placed on the line after the last, and errors
    // about it pointed there; every position now stays on the text.
    let (value, index) = config::yaml::parse("a: 1\n? b").unwrap();
    assert_eq!(value, serde_json::json!({"a": 1, "b": null}));
    assert_eq!(index.value("/b"), config::yaml::Pos { line: 2, col: 4 });
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.yaml");
    let text = "replies:\n ? 00043066466688538014152repli11111111111\t";
    std::fs::write(&script, text).unwrap();
    let Err(adk_flow::app::ModelSetupError::Script { diagnostics }) =
        adk_flow::app::load_script(&script)
    else {
        panic!("the script loaded");
    };
    let d = &diagnostics[0];
    let last = text.lines().last().unwrap().chars().count();
    assert_eq!((d.pos.line, d.pos.col), (2, last + 1), "{d}");
}
