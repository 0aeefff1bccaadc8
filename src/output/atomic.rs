//! Writing a file so that a reader sees the old content or the new, never a
//! part: a temporary file `.gcsim-XXXXXX.partial` in the destination's
//! directory, renamed over it once complete.
//!
//! What the destination is decides how: a symbolic link is followed to its
//! final target, which gets the new content (the link stays a link); an
//! existing file keeps its permission mode (a new one gets the mode any new
//! file gets, 0666 less the umask); anything that is not a regular file (a
//! device such as `/dev/null`, a FIFO, a terminal) is opened and written,
//! since renaming over it would replace it with a regular file.

use std::fs::{self, Permissions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::file::{Temp, follow_links, parent};
use super::names;
use super::temps;
use super::transaction::{self, Held};

/// Where the bytes for a path go.
#[derive(Debug)]
enum Target {
    /// A regular file, existing (with its permissions) or not: replaced by
    /// a rename. The path is the final target of any symbolic links.
    Replace { path: PathBuf, mode: Option<Permissions> },
    /// Not a regular file: written in place.
    Direct(PathBuf),
}

impl Target {
    fn of(path: &Path) -> io::Result<Self> {
        let path = follow_links(path)?;
        match fs::metadata(&path) {
            Ok(m) if m.is_file() => Ok(Self::Replace {
                path,
                mode: Some(m.permissions()),
            }),
            Ok(m) if m.is_dir() => Err(io::Error::other("is a directory; give a file name")),
            Ok(_) => Ok(Self::Direct(path)),
            // No file there; a missing directory is the caller's to report.
            Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
                Ok(Self::Replace { path, mode: None })
            }
            Err(e) => Err(e),
        }
    }
}

/// [`check`] for the file `file` that a command writes into the directory
/// `dir` given by `flag`, under a name the command chooses: a directory in
/// its place is named as such, with what the user can do about it.
pub fn check_in(flag: impl std::fmt::Display, dir: &Path, file: impl AsRef<Path>) -> Result<()> {
    let path = dir.join(file.as_ref());
    if path.is_dir() {
        bail!(
            "{flag} {}: {} is a directory where gcsim writes the file {}; remove it or give another {flag}",
            dir.display(),
            path.display(),
            file.as_ref().display()
        );
    }
    check(flag, &path)
}

/// Checks, before any work, that `flag`'s file `path` can be written: a
/// regular file (or a new one) in an existing directory that takes new files,
/// or a writable device or FIFO; an existing file must be writable by this
/// process, as a shell's `>` asks, though it is replaced rather than opened.
/// Records it as the command's output (see [`names`]). Removes stale
/// temporaries from the directory (see [`temps::remove_stale`]). Every
/// error names `flag` and `path`.
pub fn check(flag: impl std::fmt::Display, path: &Path) -> Result<()> {
    let shown = path.display();
    let target = Target::of(path).with_context(|| format!("{flag} {shown}"))?;
    names::output(&flag, path)?;
    match target {
        Target::Direct(p) => writable(&p).with_context(|| format!("{flag} {shown}: cannot write")),
        Target::Replace { path: p, mode } => {
            if mode.is_some() {
                writable(&p).with_context(|| format!("{flag} {shown}: cannot write"))?;
            }
            let dir = parent(&p);
            if dir.exists() && !dir.is_dir() {
                bail!(
                    "{flag} {shown}: {} is not a directory; give a path in an existing directory",
                    dir.display()
                );
            }
            if !dir.is_dir() {
                bail!("{flag} {shown}: the directory {} does not exist", dir.display());
            }
            temps::remove_stale(dir);
            probe(dir).with_context(|| format!("{flag} {shown}"))
        }
    }
}

/// Whether this process may write the existing non-regular file `path`,
/// asked without opening it: opening a FIFO would block, or end its reader.
#[cfg(unix)]
fn writable(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn writable(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// Fails now, not after the work, if no file can be created in `dir`; the
/// probe is removed at once, so an interrupted run leaves nothing behind.
pub fn probe(dir: &Path) -> Result<()> {
    drop(Temp::new(dir, temps::PARTIAL)?);
    Ok(())
}

/// A file being written by a path (a drawing backend): a temporary file
/// until [`commit`](Self::commit).
pub struct AtomicFile {
    tmp: Temp,
    path: PathBuf,
    target: Target,
}

impl AtomicFile {
    /// Opens the temporary file for `path`, in the directory of `path`'s
    /// final target (for a device or FIFO, in the system's temporary
    /// directory, to be copied into it). Its name ends with `path`'s
    /// extension, as a drawing backend chooses its format by it.
    pub fn create(path: &Path) -> Result<Self> {
        let target = Target::of(path).with_context(|| format!("cannot write {}", path.display()))?;
        let suffix = match path.extension() {
            Some(ext) => format!("{}.{}", temps::PARTIAL, ext.to_string_lossy()),
            None => temps::PARTIAL.to_string(),
        };
        let dir = match &target {
            Target::Replace { path, .. } => parent(path).to_path_buf(),
            Target::Direct(_) => std::env::temp_dir(),
        };
        Ok(Self {
            tmp: Temp::new(&dir, &suffix)?,
            path: path.to_path_buf(),
            target,
        })
    }

    /// Where the content goes until the commit.
    pub fn temp_path(&self) -> &Path {
        self.tmp.path()
    }

    /// Syncs the content and renames it into place (a device or FIFO gets a
    /// copy of it instead); inside a `transaction`, at its end.
    pub fn commit(self) -> Result<()> {
        let fail = || format!("cannot write {}", self.path.display());
        let held = match self.target {
            Target::Replace { path, mode } => {
                self.tmp.sync().with_context(fail)?;
                Held::Rename {
                    tmp: self.tmp,
                    path,
                    mode,
                }
            }
            Target::Direct(path) => {
                let bytes = fs::read(self.tmp.path()).with_context(fail)?;
                Held::Direct { path, bytes }
            }
        };
        finish(held)
    }
}

/// Moves `held` into place now, or at the end of the transaction under way.
fn finish(held: Held) -> Result<()> {
    match transaction::hold(held) {
        Some(now) => transaction::commit(vec![now]),
        None => Ok(()),
    }
}

/// Writes `path`: through a temporary file in its (final target's)
/// directory, renamed into place only once complete (inside a
/// `transaction`, once every file of the command is), so that an
/// interrupted or failed command leaves any previous file; a device or FIFO
/// gets the bytes written into it.
pub fn write_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    let fail = || format!("cannot write {}", path.display());
    let target = Target::of(path).with_context(fail)?;
    let (path_final, mode) = match target {
        Target::Direct(p) => {
            let mut bytes = Vec::new();
            write(&mut bytes).with_context(fail)?;
            return finish(Held::Direct { path: p, bytes });
        }
        Target::Replace { path, mode } => (path, mode),
    };
    let mut tmp = Temp::new(parent(&path_final), temps::PARTIAL)?;
    let file = tmp.file_mut();
    let mut out = BufWriter::new(&*file);
    write(&mut out).and_then(|()| out.flush()).with_context(fail)?;
    drop(out);
    file.sync_all().with_context(fail)?;
    finish(Held::Rename {
        tmp,
        path: path_final,
        mode,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the signal thread does to the registry removes a file being
    /// written, and the destination keeps its previous content.
    #[test]
    fn removing_the_registered_files_removes_a_file_being_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.svg");
        fs::write(&path, "previous").unwrap();
        let file = AtomicFile::create(&path).unwrap();
        let tmp = file.temp_path().to_path_buf();
        assert!(tmp.exists());
        assert_eq!(tmp.parent(), Some(dir.path()));
        assert!(temps::live().contains(&tmp));
        {
            // Only this test's files: other tests write files at the same time.
            let mut live = temps::live();
            let mut mine: Vec<_> = live.iter().filter(|p| p.starts_with(dir.path())).cloned().collect();
            live.retain(|p| !p.starts_with(dir.path()));
            temps::remove_all(&mut mine);
        }
        assert!(!tmp.exists());
        assert!(file.commit().is_err());
        assert_eq!(fs::read_to_string(&path).unwrap(), "previous");
        assert!(!temps::live().contains(&tmp));
    }

    /// A committed or abandoned file leaves the registry.
    #[test]
    fn the_registry_holds_only_live_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let file = AtomicFile::create(&path).unwrap();
        let tmp = file.temp_path().to_path_buf();
        file.commit().unwrap();
        assert!(!temps::live().contains(&tmp));
        let file = AtomicFile::create(&path).unwrap();
        let tmp = file.temp_path().to_path_buf();
        drop(file);
        assert!(!tmp.exists());
        assert!(!temps::live().contains(&tmp));
    }
}
