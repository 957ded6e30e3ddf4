//! Reading workflow files: YAML text to JSON with positions, typed deserialization with
//! located errors, and tidy paths.

use super::Diagnostic;
use super::yaml::{self, Pos, SpanIndex, escape_segment};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The largest file adk-flow reads: workflow, script, test, snapshot and data files.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// It could not be opened or read.
    #[error("cannot read file")]
    Io(#[source] std::io::Error),
    /// A directory, FIFO, device or socket: refused at once, never read.
    #[error("not a regular file but a {0}; only regular files are read")]
    NotAFile(&'static str),
    /// Larger than [`MAX_FILE_BYTES`].
    #[error("file is larger than the limit of {MAX_FILE_BYTES} bytes")]
    TooLarge,
    /// Not UTF-8; `line` and `col` (1-based) locate the first bad byte.
    #[error("file is not valid UTF-8")]
    NotUtf8 {
        /// The line of the first invalid byte.
        line: usize,
        /// Its column, in characters.
        col: usize,
    },
}

impl ReadError {
    /// Where a diagnostic about it points.
    pub fn pos(&self) -> Pos {
        match self {
            ReadError::NotUtf8 { line, col } => Pos {
                line: *line,
                col: *col,
            },
            _ => Pos { line: 1, col: 1 },
        }
    }
}

/// Opens a file for reading without blocking (a FIFO with no writer would block the
/// open itself) and without becoming its controlling terminal.
fn open_for_reading(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use nix::fcntl::OFlag;
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits());
    }
    options.open(path)
}

fn kind_of(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "FIFO";
        }
        if file_type.is_char_device() {
            return "character device";
        }
        if file_type.is_block_device() {
            return "block device";
        }
        if file_type.is_socket() {
            return "socket";
        }
    }
    if file_type.is_dir() {
        "directory"
    } else {
        "special file"
    }
}

/// Reads a whole file, the one way every input file is read: it must be a regular file
/// (checked on the opened file, so it cannot be swapped in between) of at most
/// [`MAX_FILE_BYTES`] (checked while reading too, for files whose size lies, like
/// `/proc`'s).
///
/// # Errors
/// A file that cannot be opened or read, is not a regular file, or is too large.
pub fn read_bounded(path: &Path) -> Result<Vec<u8>, ReadError> {
    use std::io::Read;
    let file = open_for_reading(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile(kind_of(meta.file_type())));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// [`read_bounded`], as UTF-8 text.
///
/// # Errors
/// As [`read_bounded`], and text that is not UTF-8 (located).
pub fn read_text(path: &Path) -> Result<String, ReadError> {
    String::from_utf8(read_bounded(path)?).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        // Valid by construction; lossy only to avoid an unwrap.
        let Pos { line, col } = yaml::end_of(&String::from_utf8_lossy(valid));
        ReadError::NotUtf8 { line, col }
    })
}

/// Which files a workflow's references (`config_path`, `lookup.file`, a scripted model's
/// `script`) may name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FileAccess {
    /// Only files inside the folder of the root workflow file (after following symbolic
    /// links), so a workflow cannot make adk-flow read, and quote in its errors, a file
    /// elsewhere on the machine.
    #[default]
    RootFolder,
    /// Any file (`--allow-outside-files`).
    Anywhere,
}

/// The folder references must stay in, per [`FileAccess`].
pub(super) struct Fence {
    /// Canonical root folder; `None` when anything is allowed.
    root: Option<PathBuf>,
}

impl Fence {
    pub(super) fn new(root_file: &Path, access: FileAccess) -> Fence {
        if access == FileAccess::Anywhere {
            return Fence { root: None };
        }
        let dir = match root_file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        Fence {
            root: Some(dir.canonicalize().unwrap_or_else(|_| normalize_path(dir))),
        }
    }

    /// `None` when the existing file `target` may be read; else why not, naming the
    /// reference (`key` `rel`), the folder and the flag.
    pub(super) fn refusal(&self, key: &str, rel: &str, target: &Path) -> Option<String> {
        let root = self.root.as_ref()?;
        let inside = target.canonicalize().is_ok_and(|t| t.starts_with(root));
        (!inside).then(|| {
            format!(
                "{key} `{rel}` is outside the workflow's folder ({}); pass --allow-outside-files to allow files elsewhere",
                root.display()
            )
        })
    }
}

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

/// Reads and parses a YAML file that ADK reads too (an agent or workflow file).
pub(super) fn read_yaml(path: &Path) -> Result<(Value, Source), Vec<Diagnostic>> {
    read_yaml_as(path, true)
}

/// Reads and parses a YAML file, with PyYAML's refusals (`pyyaml`: ADK reads it too) or
/// without (adk-flow's own files: scripts, test files).
fn read_yaml_as(path: &Path, pyyaml: bool) -> Result<(Value, Source), Vec<Diagnostic>> {
    let text = read_text(path)
        .map_err(|e| vec![Diagnostic::error(path, e.pos(), crate::errors::chain(&e))])?;
    let parsed = if pyyaml {
        yaml::parse(&text)
    } else {
        yaml::parse_own(&text)
    };
    let (value, index) = parsed.map_err(|errs| {
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
    // adk-flow's own formats: ADK never reads them, so PyYAML's refusals do not apply.
    let (value, src) = read_yaml_as(path, false)?;
    checked(&src, &value, check)
}

/// [`load_checked`] for a script of model replies: an unquoted YAML 1.1 boolean word
/// (`yes`, `No`, `on`, `OFF`) inside a function call's `args` is the boolean PyYAML
/// reads, not the string YAML 1.2 reads, as arguments are free JSON and ADK's reference
/// runs of a workflow (`scripts/adk2-run.py`) read the same script with PyYAML
/// (`args: {route: yes}` calls `set_route(route=True)`).
///
/// # Errors
/// As [`load_checked`].
pub fn load_checked_script<T: DeserializeOwned>(
    path: &Path,
    check: impl FnOnce(&T) -> Vec<(String, String)>,
) -> Result<T, Vec<Diagnostic>> {
    let (mut value, src) = read_yaml_as(path, false)?;
    booleans_in_call_args(&src.index, &mut value);
    checked(&src, &value, check)
}

/// Turns the YAML 1.1 boolean words inside each function call's `args` of a script
/// `value` into booleans, as PyYAML reads them. Only the script format's call places
/// count (`function_call`, each of `function_calls`, and a part's `function_call`, in a
/// reply under `replies`), so an agent or argument that merely happens to be named
/// `args` elsewhere keeps YAML 1.2's reading.
fn booleans_in_call_args(index: &SpanIndex, value: &mut Value) {
    let Some(Value::Object(agents)) = value.get_mut("replies") else {
        return;
    };
    for (agent, replies) in agents.iter_mut() {
        let Value::Array(replies) = replies else {
            continue;
        };
        for (i, reply) in replies.iter_mut().enumerate() {
            let at = format!("/replies/{}/{i}", escape_segment(agent));
            for (mut pointer, args) in call_args(reply, &at) {
                booleans_in(index, args, &mut pointer);
            }
        }
    }
}

/// The `args` of every function call one reply (at `at`) writes, with their pointers.
fn call_args<'a>(reply: &'a mut Value, at: &str) -> Vec<(String, &'a mut Value)> {
    let mut found = Vec::new();
    let Value::Object(keys) = reply else {
        return found;
    };
    for (key, v) in keys.iter_mut() {
        let at = format!("{at}/{}", escape_segment(key));
        match (key.as_str(), v) {
            ("function_call", call) => found.extend(args_of(call, at)),
            ("function_calls", Value::Array(calls)) => {
                for (j, call) in calls.iter_mut().enumerate() {
                    found.extend(args_of(call, format!("{at}/{j}")));
                }
            }
            ("parts", Value::Array(parts)) => {
                for (j, part) in parts.iter_mut().enumerate() {
                    if let Some(call) = part.get_mut("function_call") {
                        found.extend(args_of(call, format!("{at}/{j}/function_call")));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

/// A call's `args` (the call at `at`), with its pointer.
fn args_of(call: &mut Value, at: String) -> Option<(String, &mut Value)> {
    call.get_mut("args").map(|args| (at + "/args", args))
}

/// Turns every YAML 1.1 boolean word in `value` (at `pointer`) into a boolean.
fn booleans_in(index: &SpanIndex, value: &mut Value, pointer: &mut String) {
    let len = pointer.len();
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                pointer.push('/');
                pointer.push_str(&escape_segment(key));
                booleans_in(index, v, pointer);
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                pointer.push('/');
                pointer.push_str(&i.to_string());
                booleans_in(index, v, pointer);
                pointer.truncate(len);
            }
        }
        Value::String(word) => {
            if let Some(pos) = index.values.get(pointer.as_str())
                && index.is_yaml11_boolean(*pos)
            {
                let truthy = matches!(word.to_ascii_lowercase().as_str(), "yes" | "on");
                *value = Value::Bool(truthy);
            }
        }
        _ => {}
    }
}

/// Types `value` as `T` and runs `check` on it, with located problems.
fn checked<T: DeserializeOwned>(
    src: &Source,
    value: &Value,
    check: impl FnOnce(&T) -> Vec<(String, String)>,
) -> Result<T, Vec<Diagnostic>> {
    let parsed: T = typed(src, value, "").map_err(|d| vec![d])?;
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

#[cfg(test)]
mod tests {
    #[test]
    fn yaml11_booleans_in_call_args_read_as_pyyaml_does() {
        let text = "replies:\n  a:\n    - function_call: {name: f, args: {x: yes, y: 'no', z: [On, off, maybe]}}\n    - text: yes\n    - function_calls: [{name: f, args: {x: on}}]\n    - parts: [{text: yes}, {function_call: {name: f, args: {x: NO}}}]\n";
        let (mut value, index) = super::yaml::parse_own(text).unwrap();
        super::booleans_in_call_args(&index, &mut value);
        let a = &value["replies"]["a"];
        assert_eq!(
            a[0]["function_call"]["args"],
            serde_json::json!({"x": true, "y": "no", "z": [true, false, "maybe"]})
        );
        assert_eq!(a[2]["function_calls"][0]["args"]["x"], true);
        assert_eq!(a[3]["parts"][1]["function_call"]["args"]["x"], false);
        // Outside a call's `args` the word stays text (a reply's `text` is a string).
        assert_eq!(a[1]["text"], "yes");
        assert_eq!(a[3]["parts"][0]["text"], "yes");
    }

    #[test]
    fn only_a_calls_args_is_read_as_pyyaml_does() {
        // An agent named `args`, and a reply key `args` that is no call's, stay YAML 1.2.
        let text = "replies:\n  args:\n    - text: yes\n  b:\n    - {text: x, args: {y: on}}\n";
        let (mut value, index) = super::yaml::parse_own(text).unwrap();
        super::booleans_in_call_args(&index, &mut value);
        assert_eq!(value["replies"]["args"][0]["text"], "yes");
        assert_eq!(value["replies"]["b"][0]["args"]["y"], "on");
    }
}
