//! Ids that become one path segment (a file or folder name) inside a store's folder:
//! artifact names, eval set ids, eval result ids. One place decides what may leave a
//! request and reach the file system, so that no id can climb out of its folder.
//!
//! Two policies, for two kinds of store:
//! - [`encode`] / [`decode`]: any id becomes a safe segment (the artifact store, whose
//!   names are free text such as `user:notes` or `a/b`);
//! - [`check`]: the id is used as written, or refused (eval sets and results, whose file
//!   names must stay the ones ADK writes, `{id}.evalset.json`).

/// Why an id cannot be a file name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SegmentError {
    /// Empty.
    #[error("{what} must not be empty")]
    Empty {
        /// What the id is (`eval_set_id`...).
        what: &'static str,
    },
    /// `.` or `..`.
    #[error("{what} `{id}` must not be a traversal segment")]
    Traversal {
        /// What the id is.
        what: &'static str,
        /// The id.
        id: String,
    },
    /// `/` or `\`.
    #[error("{what} `{id}` must not contain path separators")]
    Separator {
        /// What the id is.
        what: &'static str,
        /// The id.
        id: String,
    },
    /// NUL or another control character.
    #[error("{what} `{id}` must not contain control characters")]
    Control {
        /// What the id is.
        what: &'static str,
        /// The id (control characters escaped).
        id: String,
    },
    /// Longer than a file name may be.
    #[error("{what} is longer than {MAX_LEN} bytes")]
    TooLong {
        /// What the id is.
        what: &'static str,
    },
}

/// The longest id [`check`] accepts, in bytes: a file name (255 bytes on common file
/// systems) with room for a suffix such as `.evalset_result.json`.
pub const MAX_LEN: usize = 200;

/// Accepts an id that can be used as a file name as written: not empty, not `.` or `..`,
/// no `/`, `\`, NUL or other control character, at most [`MAX_LEN`] bytes. (ADK refuses
/// the same, but for control characters and length, which it lets through.)
///
/// # Errors
/// The first rule the id breaks.
pub fn check(id: &str, what: &'static str) -> Result<(), SegmentError> {
    if id.is_empty() {
        return Err(SegmentError::Empty { what });
    }
    if id.chars().any(char::is_control) {
        return Err(SegmentError::Control {
            what,
            id: id.escape_debug().to_string(),
        });
    }
    if id.contains(['/', '\\']) {
        return Err(SegmentError::Separator {
            what,
            id: id.to_owned(),
        });
    }
    if id == "." || id == ".." {
        return Err(SegmentError::Traversal {
            what,
            id: id.to_owned(),
        });
    }
    if id.len() > MAX_LEN {
        return Err(SegmentError::TooLong { what });
    }
    Ok(())
}

/// One path segment for any id: every byte but ASCII letters, digits, `-`, `_` and `.` is
/// percent-encoded, and so is a leading `.` or `_`, so no segment is `.`, `..`, hidden,
/// or a reserved `_name` folder. The empty id becomes `%`, which no other id produces.
pub fn encode(id: &str) -> String {
    if id.is_empty() {
        return "%".to_owned();
    }
    let mut out = String::with_capacity(id.len());
    for (i, b) in id.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b == b'-' || (i > 0 && matches!(b, b'_' | b'.'));
        if plain {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The id an [`encode`]d segment stands for.
pub fn decode(segment: &str) -> String {
    if segment == "%" {
        return String::new();
    }
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (
                (bytes[i + 1] as char).to_digit(16),
                (bytes[i + 2] as char).to_digit(16),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::{check, decode, encode};

    const HOSTILE: &[&str] = &[
        "",
        ".",
        "..",
        "../x",
        "a/b",
        "a\\b",
        "..\\..\\x",
        "/etc/passwd",
        "a\0b",
        "a\nb",
        "\u{7f}",
        "\u{85}",
    ];

    #[test]
    fn names_round_trip_through_encoded_segments() {
        for name in HOSTILE.iter().chain(&[
            "report.pdf",
            "user:notes",
            "%41",
            "%",
            ".hidden",
            "_user",
            "ünïcode",
        ]) {
            let e = encode(name);
            assert!(!e.contains(['/', '\\', '\0']), "{e}");
            assert!(!e.is_empty() && !e.starts_with(['.', '_']), "{e}");
            assert_eq!(decode(&e), *name);
        }
    }

    #[test]
    fn hostile_ids_are_refused_and_plain_ones_kept() {
        for id in HOSTILE {
            assert!(check(id, "id").is_err(), "{id:?}");
        }
        assert!(check(&"x".repeat(201), "id").is_err());
        for id in [
            "simple",
            "with_underscore",
            "a.b",
            "..a",
            "my set",
            "ünï",
            "_x",
        ] {
            assert_eq!(check(id, "id"), Ok(()), "{id:?}");
        }
        let e = check("a\0b", "eval_set_id").unwrap_err().to_string();
        assert_eq!(e, "eval_set_id `a\\0b` must not contain control characters");
    }
}
