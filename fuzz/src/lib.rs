//! What the fuzz targets share: a scratch folder for targets that read files, the checks
//! every diagnostic must pass, and the comparison of streamed answers cut differently.

use adk_flow::config::Diagnostic;
use adk_flow::model::fuzzing::SECRET;
use adk_flow::model::{LlmResponse, ModelError};
use std::path::{Path, PathBuf};

/// A folder of this process's own, on a RAM disk when there is one, emptied for each
/// input by [`Scratch::write`].
pub struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    /// Creates the folder (`/dev/shm/adk-flow-fuzz-PID`, else in the temp folder).
    pub fn new() -> Scratch {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("adk-flow-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch folder");
        Scratch { dir }
    }

    /// Empties the folder and writes `files` (name, content) into it; returns the path of
    /// the first.
    pub fn write(&self, files: &[(&str, &[u8])]) -> PathBuf {
        for entry in std::fs::read_dir(&self.dir)
            .expect("scratch folder")
            .flatten()
        {
            let _ = std::fs::remove_file(entry.path());
        }
        for (name, content) in files {
            std::fs::write(self.dir.join(name), content).expect("scratch file");
        }
        self.dir.join(files[0].0)
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch::new()
    }
}

/// The lines of `text` as YAML and editors count them: LF, CR and CRLF each end one.
fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&text[start..]);
    out
}

/// Panics unless every diagnostic points at a real place: line and column from 1, a line
/// the file has, a column at most one past the end of that line, and a non-empty message
/// without the provider secret.
pub fn check_diagnostics(diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        assert!(!d.message.trim().is_empty(), "empty message: {d:?}");
        assert!(
            d.pos.line >= 1 && d.pos.col >= 1,
            "position before the text: {d}"
        );
        let Ok(bytes) = std::fs::read(&d.file) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines = lines(&text);
        assert!(
            d.pos.line <= lines.len(),
            "line {} of a file of {} lines: {d}",
            d.pos.line,
            lines.len()
        );
        let width = lines[d.pos.line - 1].chars().count();
        assert!(
            d.pos.col <= width + 1,
            "column {} of a line of {width} characters: {d}",
            d.pos.col
        );
    }
}

/// A provider result, comparable across runs (errors as `CODE: message`).
pub fn comparable(items: &[Result<LlmResponse, ModelError>]) -> Vec<Result<LlmResponse, String>> {
    items
        .iter()
        .map(|i| i.clone().map_err(|e| format!("{}: {e}", e.code())))
        .collect()
}

/// `body` cut into pieces whose sizes come from `sizes` (cycled; 0 reads as 1).
pub fn cut(body: &[u8], sizes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let size = sizes
            .get(i % sizes.len().max(1))
            .map_or(1, |s| usize::from(*s).max(1));
        let (head, tail) = rest.split_at(size.min(rest.len()));
        out.push(head.to_vec());
        rest = tail;
        i += 1;
    }
    out
}

/// Splits a fuzz input into the cut sizes (its first bytes, up to the first 0xFF) and the
/// body (the rest); an input without 0xFF is all body, cut into 1-byte pieces.
pub fn sizes_and_body(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == 0xFF) {
        Some(i) if i <= 8 => (&data[..i], &data[i + 1..]),
        _ => (&[], data),
    }
}

/// Panics if the secret the provider entry points use shows in `text`.
pub fn assert_no_secret(text: &str) {
    assert!(!text.contains(SECRET), "the API key leaked: {text}");
}
