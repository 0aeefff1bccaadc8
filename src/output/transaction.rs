//! One command's files as one transaction: while [`transaction`] runs a
//! command, every file it writes (through [`super::write_atomically`] or
//! [`super::AtomicFile`]) is completed in a temporary file and held here;
//! only when the command has finished, and every file is complete, are they
//! moved into place, one after the other. A command that fails on its last
//! file (a full disk, an unwritable directory) therefore leaves every
//! earlier destination as it was, and its temporary files are removed.
//!
//! Devices and FIFOs (`/dev/full`, a pipe), which cannot be renamed over,
//! are written first at the commit, from the held bytes: a failure there
//! still leaves every regular file untouched. The renames follow under the
//! temporary-file registry's lock, so that SIGINT or SIGTERM finds either
//! all of them done or none (see [`super::temps`]).
//!
//! The notes printed after the first file is held (`wrote ...`) are held
//! with it (see [`crate::notes::hold`]): printed once the files are in
//! place, dropped if the command fails.
//!
//! The state is the thread's own: a command is validated and executed on
//! one thread, and the Python module runs each command on a thread of its
//! own.

use std::cell::RefCell;
use std::fs::Permissions;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::file::{Temp, write_direct};
use super::temps;
use crate::notes;

/// A complete file waiting to be moved into place.
pub(super) enum Held {
    /// A temporary file to rename over `path` (given `mode` first).
    Rename {
        tmp: Temp,
        path: PathBuf,
        mode: Option<Permissions>,
    },
    /// Bytes for a device or FIFO, written into it at the commit.
    Direct { path: PathBuf, bytes: Vec<u8> },
}

impl Held {
    fn path(&self) -> &Path {
        match self {
            Held::Rename { path, .. } | Held::Direct { path, .. } => path,
        }
    }
}

thread_local! {
    /// The files held by the transaction under way, if one is.
    static OPEN: RefCell<Option<Vec<Held>>> = const { RefCell::new(None) };
    /// What must live until the files are in place (a directory's lock).
    static KEPT: RefCell<Vec<Box<dyn std::any::Any>>> = const { RefCell::new(Vec::new()) };
}

/// Keeps `value` (a lock) alive until the transaction under way has moved
/// its files into place or given up; dropped now if none is open.
pub fn keep(value: Box<dyn std::any::Any>) {
    if OPEN.with(|o| o.borrow().is_some()) {
        KEPT.with(|k| k.borrow_mut().push(value));
    }
}

/// Runs `work` (a command) with its files held until it has finished, then
/// moves them all into place; if `work` fails, or a file cannot be moved,
/// the files not yet in place are removed and the error returned. Inside a
/// transaction already open, `work` joins it.
pub fn transaction<T>(work: impl FnOnce() -> Result<T>) -> Result<T> {
    if OPEN.with(|o| o.borrow().is_some()) {
        return work();
    }
    OPEN.with(|o| *o.borrow_mut() = Some(Vec::new()));
    let result = work();
    let held = OPEN.with(|o| o.borrow_mut().take()).unwrap_or_default();
    let result = result.and_then(|value| commit(held).map(|()| value));
    notes::release(result.is_ok());
    KEPT.with(|k| k.borrow_mut().clear());
    result
}

/// Holds `file` until the transaction's end, if one is open (a later file
/// for the same path replaces it); otherwise gives it back, to be moved into
/// place now.
pub(super) fn hold(file: Held) -> Option<Held> {
    OPEN.with(|o| match o.borrow_mut().as_mut() {
        Some(held) => {
            held.retain(|h| h.path() != file.path());
            held.push(file);
            notes::hold();
            None
        }
        None => Some(file),
    })
}

/// Where the content that `path` will have is now: a held temporary file,
/// or `path` itself. For a command that reads a file it wrote (a report page
/// that embeds its figures).
pub fn current(path: &Path) -> PathBuf {
    OPEN.with(|o| {
        o.borrow()
            .iter()
            .flatten()
            .find_map(|h| match h {
                Held::Rename { tmp, path: p, .. } if p == path => Some(tmp.path().to_path_buf()),
                _ => None,
            })
            .unwrap_or_else(|| path.to_path_buf())
    })
}

/// Moves held files into place: devices and FIFOs first (they can fail, and
/// nothing else is touched yet), then every rename under the registry's lock.
pub(super) fn commit(held: Vec<Held>) -> Result<()> {
    let (direct, renames): (Vec<Held>, Vec<Held>) = held.into_iter().partition(|h| matches!(h, Held::Direct { .. }));
    for file in direct {
        if let Held::Direct { path, bytes } = file {
            write_direct(&path, |out| out.write_all(&bytes))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    let mut live = temps::live();
    for file in renames {
        if let Held::Rename { tmp, path, mode } = file {
            tmp.persist_locked(&mut live, &path, mode)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    Ok(())
}
