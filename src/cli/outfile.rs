//! Files a command writes (`--record`, `--dump-requests`, `--junit`): opened before any
//! work starts, so a path that cannot be written fails the command at once instead of
//! after a whole run, and never blocks (a FIFO nobody reads is refused, not waited on).

use anyhow::{Context, bail};
use std::fs::File;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

/// An output file, open for writing.
pub(super) struct OutputFile {
    path: PathBuf,
    file: File,
}

impl OutputFile {
    /// Opens (creating it if needed, keeping what it holds until [`OutputFile::replace`])
    /// the file `flag` names.
    ///
    /// # Errors
    /// A directory, a FIFO with no reader, a missing folder, no permission.
    pub(super) fn open(path: &Path, flag: &str) -> anyhow::Result<OutputFile> {
        let shown = || format!("{flag} {}", path.display());
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true);
        #[cfg(unix)]
        {
            use nix::fcntl::OFlag;
            use std::os::unix::fs::OpenOptionsExt;
            // Opening a FIFO for writing waits for a reader; without one this fails now.
            options.custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits());
        }
        let file = match options.open(path) {
            Ok(f) => f,
            #[cfg(unix)]
            Err(e) if e.raw_os_error() == Some(nix::errno::Errno::ENXIO as i32) => {
                bail!("{}: a FIFO with no reader; start the reader first", shown())
            }
            Err(e) => return Err(e).with_context(|| format!("{}: cannot write", shown())),
        };
        let meta = file
            .metadata()
            .with_context(|| format!("{}: cannot write", shown()))?;
        if meta.is_dir() {
            bail!("{}: a directory, not a file", shown());
        }
        #[cfg(unix)]
        {
            // Writes block again, as they would on any file.
            use nix::fcntl::{FcntlArg, OFlag, fcntl};
            let flags = fcntl(&file, FcntlArg::F_GETFL)
                .map(OFlag::from_bits_truncate)
                .with_context(|| format!("{}: cannot write", shown()))?;
            fcntl(&file, FcntlArg::F_SETFL(flags - OFlag::O_NONBLOCK))
                .with_context(|| format!("{}: cannot write", shown()))?;
        }
        Ok(OutputFile {
            path: path.to_owned(),
            file,
        })
    }

    /// The file, emptied, for writing as the work goes (`--dump-requests`).
    pub(super) fn truncated(self) -> std::io::Result<File> {
        if self.file.metadata()?.is_file() {
            self.file.set_len(0)?;
        }
        Ok(self.file)
    }

    /// Replaces what the file holds with `bytes` (for output written at the end).
    ///
    /// # Errors
    /// The write fails; the message names the file.
    pub(super) fn replace(self, bytes: &[u8]) -> anyhow::Result<()> {
        let path = self.path.clone();
        let mut file = self
            .truncated()
            .with_context(|| format!("cannot write {}", path.display()))?;
        if file.metadata().is_ok_and(|m| m.is_file()) {
            file.rewind()
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        file.write_all(bytes)
            .and_then(|()| file.flush())
            .with_context(|| format!("cannot write {}", path.display()))
    }
}
