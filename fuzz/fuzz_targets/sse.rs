//! The server-sent events reader: any body, cut anywhere, gives the events a plain
//! reading of the WHATWG specification gives, and never panics.
#![no_main]

use adk_flow::model::fuzzing;
use adk_flow_fuzz::{cut, sizes_and_body};
use libfuzzer_sys::fuzz_target;

/// The `data` of every event of `body`, read the simplest way the specification allows:
/// decode it all, drop one byte-order mark, split lines, then read fields.
fn reference(body: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(body);
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let mut lines: Vec<&str> = Vec::new();
    let mut rest = text;
    // Only lines that end count; what follows the last line break is an unfinished line.
    while let Some(i) = rest.find(['\r', '\n']) {
        lines.push(&rest[..i]);
        rest = if rest[i..].starts_with("\r\n") {
            &rest[i + 2..]
        } else {
            &rest[i + 1..]
        };
    }
    let mut out = Vec::new();
    let mut data = String::new();
    for line in lines {
        if line.is_empty() {
            if !data.is_empty() {
                data.pop();
                out.push(std::mem::take(&mut data));
            }
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            data.push_str(value);
            data.push('\n');
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let (sizes, body) = sizes_and_body(data);
    let whole = fuzzing::sse(vec![body.to_vec()]);
    let want: Vec<Result<String, String>> = reference(body).into_iter().map(Ok).collect();
    assert_eq!(whole, want, "whole body");
    assert_eq!(fuzzing::sse(cut(body, sizes)), want, "cut by {sizes:?}");
    assert_eq!(fuzzing::sse(cut(body, &[1])), want, "byte by byte");
});
