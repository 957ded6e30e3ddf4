//! Watching an app's files for hot reload: a stamp (size, time, content hash) per file,
//! compared before a run and once a second.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What a file looked like when it was read: size, time, and a hash of its content.
#[derive(Debug, Clone, PartialEq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    hash: u64,
}

/// A file and its stamp (`None`: it did not exist).
#[derive(Debug, Clone)]
pub(super) struct Watched {
    /// The file.
    pub(super) path: PathBuf,
    stamp: Option<Stamp>,
    taken: SystemTime,
}

/// File times are coarse (a clock tick); a file written this recently after its stamp was
/// taken may have changed without its time or size changing, so its content is compared.
const RACY: Duration = Duration::from_secs(2);

fn hash_of(path: &Path) -> Option<u64> {
    let bytes = std::fs::read(path).ok()?;
    let mut h = DefaultHasher::new();
    h.write(&bytes);
    Some(h.finish())
}

pub(super) fn stamp(path: &Path) -> Watched {
    let taken = SystemTime::now();
    let stamp = std::fs::metadata(path).ok().and_then(|m| {
        Some(Stamp {
            len: m.len(),
            modified: m.modified().ok(),
            hash: hash_of(path)?,
        })
    });
    Watched {
        path: path.to_owned(),
        stamp,
        taken,
    }
}

impl Watched {
    /// The file changed (or appeared, or went) since its stamp was taken.
    pub(super) fn changed(&self) -> bool {
        let meta = std::fs::metadata(&self.path).ok();
        match (&self.stamp, meta) {
            (None, None) => false,
            (None, Some(_)) | (Some(_), None) => true,
            (Some(old), Some(meta)) => {
                if meta.len() != old.len || meta.modified().ok() != old.modified {
                    return true;
                }
                let racy = old.modified.is_none_or(|m| {
                    self.taken
                        .duration_since(m)
                        .map_or(true, |since| since < RACY)
                });
                racy && hash_of(&self.path) != Some(old.hash)
            }
        }
    }
}
