//! Finding the input files under the paths a command is given (`validate`, `test`).
//!
//! Directories are searched recursively, skipping hidden entries and `target`. A
//! symbolic link is followed at most once: every directory and file is visited by its
//! canonical path, so a link back up the tree (a loop) or a second way to one file adds
//! nothing.

use anyhow::bail;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The files under `paths` whose names `wanted` accepts, in a stable order (each
/// directory's entries sorted), each once. A file given by name is taken whatever its
/// name.
///
/// # Errors
/// A path that does not exist, or a directory that cannot be listed.
pub(super) fn find_files(
    paths: &[PathBuf],
    wanted: impl Fn(&str) -> bool,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut walk = Walk {
        wanted: &wanted,
        dirs: HashSet::new(),
        files: HashSet::new(),
        out: Vec::new(),
    };
    for p in paths {
        if std::fs::symlink_metadata(p).is_err() {
            bail!("{}: no such file or directory", p.display());
        }
        if p.is_dir() {
            walk.dir(p)?;
        } else {
            walk.file(p);
        }
    }
    Ok(walk.out)
}

struct Walk<'a> {
    wanted: &'a dyn Fn(&str) -> bool,
    /// Canonical paths of the directories entered.
    dirs: HashSet<PathBuf>,
    /// Canonical paths of the files taken.
    files: HashSet<PathBuf>,
    out: Vec<PathBuf>,
}

impl Walk<'_> {
    fn file(&mut self, path: &Path) {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        if self.files.insert(canonical) {
            self.out.push(path.to_owned());
        }
    }

    fn dir(&mut self, path: &Path) -> std::io::Result<()> {
        let canonical = path.canonicalize()?;
        if !self.dirs.insert(canonical) {
            return Ok(());
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') || name == "target" {
                continue;
            }
            // Follows a link to see what it names; a broken link is skipped.
            let Ok(meta) = std::fs::metadata(&p) else {
                continue;
            };
            if meta.is_dir() {
                self.dir(&p)?;
            } else if (self.wanted)(name) {
                self.file(&p);
            }
        }
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn symlink_loops_and_second_names_are_visited_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/w.yaml"), "name: w\n").unwrap();
        std::fs::write(root.join("a/x.txt"), "").unwrap();
        std::os::unix::fs::symlink(root, root.join("a/b/up")).unwrap();
        std::os::unix::fs::symlink(root.join("a/b/w.yaml"), root.join("a/same.yaml")).unwrap();
        std::os::unix::fs::symlink(root.join("missing"), root.join("a/broken.yaml")).unwrap();
        let found = find_files(&[root.to_owned()], |n| n.ends_with(".yaml")).unwrap();
        assert_eq!(found, vec![root.join("a/b/w.yaml")]);
        let err = find_files(&[root.join("nope")], |_| true).unwrap_err();
        assert!(err.to_string().contains("no such file"), "{err}");
    }
}
