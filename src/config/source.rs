//! Reading workflow files: YAML text to JSON with positions, typed deserialization with
//! located errors, and tidy paths.

use super::Diagnostic;
use super::yaml::{self, Pos, SpanIndex, escape_segment};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Files larger than this are refused before parsing.
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One parsed file: its JSON form and positions.
pub(super) struct Source {
    pub(super) path: PathBuf,
    pub(super) index: SpanIndex,
}

impl Source {
    pub(super) fn error(&self, pointer: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(&self.path, self.index.value(pointer), message)
    }

    pub(super) fn key_error(&self, pointer: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(&self.path, self.index.key(pointer), message)
    }
}

/// Reads and parses a YAML file.
pub(super) fn read_yaml(path: &Path) -> Result<(Value, Source), Vec<Diagnostic>> {
    let at_start = |m: String| vec![Diagnostic::error(path, Pos { line: 1, col: 1 }, m)];
    let meta = std::fs::metadata(path).map_err(|e| at_start(format!("cannot read file: {e}")))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(at_start(format!(
            "file is {} bytes; workflow files are limited to {MAX_FILE_BYTES} bytes",
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| at_start(format!("cannot read file: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let text = String::from_utf8_lossy(valid);
        let line = text.matches('\n').count() + 1;
        let col = text.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        vec![Diagnostic::error(
            path,
            Pos { line, col },
            "file is not valid UTF-8",
        )]
    })?;
    let (value, index) = yaml::parse(&text).map_err(|errs| {
        errs.into_iter()
            .map(|e| Diagnostic::error(path, e.pos, e.message))
            .collect::<Vec<_>>()
    })?;
    Ok((
        value,
        Source {
            path: path.to_owned(),
            index,
        },
    ))
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => out.push_str(&format!("/{}", escape_segment(key))),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    out
}

/// Deserializes the value at `pointer` into `T`, locating any error.
pub(super) fn typed<T: DeserializeOwned>(
    src: &Source,
    value: &Value,
    pointer: &str,
) -> Result<T, Diagnostic> {
    serde_path_to_error::deserialize::<_, T>(value.clone()).map_err(|e| {
        let inner = pointer_of(e.path());
        let message = e.inner().to_string();
        let full = format!("{pointer}{inner}");
        if let Some(field) = message
            .strip_prefix("unknown field `")
            .and_then(|r| r.split('`').next())
        {
            let segment = format!("/{}", escape_segment(field));
            let at = if full.ends_with(&segment) {
                full
            } else {
                format!("{full}{segment}")
            };
            return src.key_error(&at, message);
        }
        src.error(&full, message)
    })
}

/// Loads a YAML file into any deserializable type, with located errors (script files).
///
/// # Errors
/// Unreadable, malformed or mistyped files, as diagnostics.
pub fn load_typed<T: DeserializeOwned>(path: &Path) -> Result<T, Vec<Diagnostic>> {
    load_checked(path, |_: &T| Vec::new())
}

/// Like [`load_typed`], then runs `check`, whose problems (JSON pointer, message) are
/// located in the file.
///
/// # Errors
/// Unreadable, malformed or mistyped files, and every problem `check` reports.
pub fn load_checked<T: DeserializeOwned>(
    path: &Path,
    check: impl FnOnce(&T) -> Vec<(String, String)>,
) -> Result<T, Vec<Diagnostic>> {
    let (value, src) = read_yaml(path)?;
    let parsed: T = typed(&src, &value, "").map_err(|d| vec![d])?;
    let problems: Vec<Diagnostic> = check(&parsed)
        .into_iter()
        .map(|(pointer, message)| src.error(&pointer, message))
        .collect();
    if problems.is_empty() {
        Ok(parsed)
    } else {
        Err(problems)
    }
}

/// Removes `.` components and folds `dir/..`, so reported paths stay readable.
pub fn normalize_path(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
