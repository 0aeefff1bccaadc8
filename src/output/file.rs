//! The pieces a file is written with: its path's final target and
//! directory, a registered temporary file beside it, and a direct write
//! into a device or FIFO.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tempfile::NamedTempFile;

use super::temps;

/// How many symbolic links in a row are followed, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// The final target of `path`'s symbolic links (`path` itself if it is not
/// one); a dangling link names the file to create.
pub fn follow_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&path)?;
                path = if to.is_absolute() { to } else { parent(&path).join(to) };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a row"
    )))
}

/// The directory `path` goes in (`.` for a bare file name).
pub fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A registered temporary file: removed when dropped, or by the signal
/// thread (see [`temps`]), unless renamed into place. It holds an exclusive
/// lock on itself while it exists, which tells a later run that it is live
/// (see [`temps::remove_stale`]).
pub(super) struct Temp {
    file: Option<NamedTempFile>,
}

impl Temp {
    /// A new `.gcsim-XXXXXX<suffix>` in `dir`, created with mode 0666 less
    /// the umask, as any new file.
    pub(super) fn new(dir: &Path, suffix: &str) -> Result<Self> {
        let mut live = temps::live();
        let mut builder = tempfile::Builder::new();
        builder.prefix(temps::PREFIX).suffix(suffix);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(Permissions::from_mode(0o666));
        }
        let file = builder
            .tempfile_in(dir)
            .with_context(|| format!("cannot write in {}", dir.display()))?;
        // A file system without locks leaves the file to the age rule.
        let _ = file.as_file().try_lock();
        live.push(file.path().to_path_buf());
        Ok(Self { file: Some(file) })
    }

    fn file(&self) -> &NamedTempFile {
        self.file.as_ref().expect("present until persisted or dropped")
    }

    /// The open file, to write.
    pub(super) fn file_mut(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("present until persisted or dropped")
            .as_file_mut()
    }

    /// Syncs the content to the disk.
    pub(super) fn sync(&self) -> io::Result<()> {
        self.file().as_file().sync_all()
    }

    /// The temporary file's path.
    pub(super) fn path(&self) -> &Path {
        self.file().path()
    }

    /// Renames the file to `path`, giving it `mode` first; `live` is the
    /// registry, locked by the caller.
    pub(super) fn persist_locked(
        mut self,
        live: &mut Vec<PathBuf>,
        path: &Path,
        mode: Option<Permissions>,
    ) -> io::Result<()> {
        let file = self.file.take().expect("present until persisted or dropped");
        let tmp = file.path().to_path_buf();
        let done = set_mode(&tmp, mode.as_ref()).and_then(|()| file.persist(path).map(drop).map_err(|e| e.error));
        // On failure `persist` has dropped, so removed, the file.
        temps::forget(live, &tmp);
        done
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            let mut live = temps::live();
            let tmp = file.path().to_path_buf();
            drop(file);
            temps::forget(&mut live, &tmp);
        }
    }
}

/// Opens the existing non-regular file `path` and writes to it.
pub(super) fn write_direct(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut out = BufWriter::new(OpenOptions::new().write(true).open(path)?);
    write(&mut out)?;
    out.flush()
}

/// Gives the file at `tmp` the permission mode `mode`, if any.
fn set_mode(tmp: &Path, mode: Option<&Permissions>) -> io::Result<()> {
    match mode {
        Some(mode) => fs::set_permissions(tmp, mode.clone()),
        None => Ok(()),
    }
}
