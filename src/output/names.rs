//! The files one command reads and writes, so that no two of its outputs
//! are one file (`--out s.svg --plot s.svg`: the figure would replace the
//! table) and no output is one of its inputs (`fit t.csv --out t.csv`: the
//! trace would be replaced by its own fit).
//!
//! While a command's flags are validated ([`Registry::open`], from
//! `Config::try_from`), every output checked by [`super::check`] and every
//! input named to [`input`] is recorded with its flag; one that is the same
//! file as an earlier one is refused with both flags named. Two paths are
//! the same file when they resolve to one path (symbolic links followed,
//! `.` and `..` removed) or, for files that exist, to one inode (hard
//! links). Devices and FIFOs (`/dev/null`, `/dev/stdin`) take any number of
//! readers and writers and are not recorded.

use std::cell::RefCell;
use std::fmt::Display;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::file::{follow_links, parent};

/// How a file is known: where it resolves, and its inode if it exists.
#[derive(Debug, Clone, PartialEq)]
struct Identity {
    resolved: PathBuf,
    inode: Option<(u64, u64)>,
}

impl Identity {
    /// The identity of `path`, or `None` for a device or FIFO, or a path
    /// that does not resolve (whose own check reports it).
    fn of(path: &Path) -> Option<Self> {
        let target = follow_links(path).ok()?;
        let meta = fs::metadata(&target).ok();
        if meta.as_ref().is_some_and(|m| !m.is_file()) {
            return None;
        }
        let dir = fs::canonicalize(parent(&target)).ok()?;
        let resolved = match target.file_name() {
            Some(name) => dir.join(name),
            None => fs::canonicalize(&target).ok()?,
        };
        Some(Self {
            resolved,
            inode: meta.as_ref().and_then(inode),
        })
    }

    fn same(&self, other: &Self) -> bool {
        self.resolved == other.resolved || (self.inode.is_some() && self.inode == other.inode)
    }
}

#[cfg(unix)]
fn inode(meta: &fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn inode(_meta: &fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// A recorded file: the flag that names it, as given, and whether it is written.
struct Named {
    flag: String,
    identity: Identity,
    output: bool,
}

thread_local! {
    /// The files of the command being validated, if one is.
    static NAMES: RefCell<Option<Vec<Named>>> = const { RefCell::new(None) };
}

/// The record of one command's files, kept while it lives.
pub struct Registry(());

impl Registry {
    /// Starts recording this thread's command's files (forgetting any
    /// earlier command's).
    pub fn open() -> Self {
        NAMES.with(|n| *n.borrow_mut() = Some(Vec::new()));
        Self(())
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        NAMES.with(|n| *n.borrow_mut() = None);
    }
}

/// Records `flag`'s input `path`; refuses it if the command writes it.
pub fn input(flag: impl Display, path: &Path) -> Result<()> {
    record(&flag.to_string(), path, false)
}

/// Records `flag`'s output `path`; refuses it if another output or an input
/// of the command is the same file. (One flag's outputs are not compared
/// with each other: a flag may be checked twice, and the files of one
/// `--out-dir` are named by the command itself.)
pub fn output(flag: impl Display, path: &Path) -> Result<()> {
    record(&flag.to_string(), path, true)
}

fn record(flag: &str, path: &Path, output: bool) -> Result<()> {
    if NAMES.with(|n| n.borrow().is_none()) {
        return Ok(());
    }
    let Some(identity) = Identity::of(path) else {
        return Ok(());
    };
    let clash = NAMES.with(|n| {
        n.borrow()
            .iter()
            .flatten()
            .filter(|named| !(named.flag == flag && named.output == output))
            .find(|named| (output || named.output) && named.identity.same(&identity))
            .map(|named| (named.flag.clone(), named.output))
    });
    let shown = path.display();
    match clash {
        Some((other, true)) if output => {
            bail!("{other} and {flag} both name {shown}; give each its own file")
        }
        Some((other, true)) => {
            bail!("{flag} {shown}: is also the output {other}; give {other} another file")
        }
        Some((other, false)) => {
            bail!("{flag} {shown}: is also the input {other}; give {flag} another file")
        }
        None => {}
    }
    NAMES.with(|n| {
        if let Some(names) = n.borrow_mut().as_mut() {
            names.push(Named {
                flag: flag.to_string(),
                identity,
                output,
            });
        }
    });
    Ok(())
}
