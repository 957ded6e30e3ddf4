//! Problems found in configuration files.

use super::yaml::Pos;
use std::fmt;
use std::path::{Path, PathBuf};

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The workflow cannot run.
    Error,
    /// Probably a mistake; the workflow can still run.
    Warning,
}

/// One problem at one place in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file.
    pub file: PathBuf,
    /// 1-based line and column.
    pub pos: Pos,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong and, where possible, what to do.
    pub message: String,
}

impl Diagnostic {
    /// An error at a position.
    pub fn error(file: &Path, pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.to_owned(),
            pos,
            severity: Severity::Error,
            message: message.into(),
        }
    }
}

impl Diagnostic {
    /// A warning at a position.
    pub fn warning(file: &Path, pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(file, pos, message)
        }
    }

    /// `error` or `warning`.
    pub fn severity_str(&self) -> &'static str {
        match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Diagnostic {
    /// `path:line:col: error: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = self.severity_str();
        write!(
            f,
            "{}:{}:{}: {sev}: {}",
            self.file.display(),
            self.pos.line,
            self.pos.col,
            self.message
        )
    }
}
